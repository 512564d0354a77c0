from __future__ import annotations

import json

import pytest

from ingest.parsers import ParseError, decode_document, detect_format, parse_document
from ingest.parsers.reports import title_for
from tests.conftest import NOTES_SAMPLE, SHARED, SM120_SAMPLE, shared_sample
from tests.golden import GOLDEN_INPUTS, golden_path, parse_for_golden


@pytest.mark.parametrize("path", GOLDEN_INPUTS, ids=lambda p: p.name)
def test_samples_parse_to_their_golden_entries(path):
    expected = json.loads(golden_path(path).read_text())
    assert parse_for_golden(path) == expected


def test_specstory_transcript_pairs_error_turns_with_answers():
    text = decode_document(shared_sample(SM120_SAMPLE).read_bytes())
    fmt, cands = parse_document(text)
    assert fmt == "specstory"
    titles = [c.title for c in cands]
    # Turns that ask how to start or read parquet make no entry; the five failures do.
    assert any("no kernel image" in t for t in titles)
    assert any("Timed out waiting for response" in t for t in titles)
    assert sum("CUDA out of memory" in t for t in titles) == 3
    assert any("command not found" in t for t in titles)
    assert any("Error while serializing" in t for t in titles)
    assert len(cands) == 7
    sm120 = next(c for c in cands if "no kernel image" in c.title)
    assert (sm120.line_start, sm120.problem_start) == (373, 375)
    assert "PyTorch" in sm120.remedy_markdown and "sm_120" in sm120.remedy_markdown
    lines = text.splitlines()
    assert lines[sm120.line_start - 1] == "_**User**_"
    assert "RuntimeError: CUDA error: no kernel image" in "\n".join(lines[sm120.problem_start - 1 : sm120.problem_end])


def test_a_transcript_turn_that_names_its_error_in_bold_prose_is_an_entry():
    # A user's turn from a transformers issue: no traceback, the error in bold inside a sentence.
    text = (
        "_**User**_\n\n"
        "The problem arises when i try to use a tokenizer on multiple thread pools with an Autotokenizer, the "
        "error **RuntimeError: Already borrowed** get raised\n\n"
        "What is wrong here and how do I fix it?\n\n---\n\n"
        "_**Assistant**_\n\n"
        "A fast tokenizer is not safe to call from several threads at once: give every worker its own copy.\n\n---\n"
    )
    fmt, cands = parse_document(text)
    assert fmt == "specstory"
    assert [c.title for c in cands] == ["RuntimeError: Already borrowed"]
    assert "own copy" in cands[0].remedy_markdown


def parse_one_turn(user: str, answer: str) -> list:
    """The entries of a SpecStory transcript of one user turn and its answer."""
    fmt, cands = parse_document(f"_**User**_\n\n{user}\n\n---\n\n_**Assistant**_\n\n{answer}\n\n---\n")
    assert fmt == "specstory"
    return cands


WINDOWS_SDPA_TURN = (
    # A diffusers user's paste (a public issue): tqdm drew its bar and the warning on one line.
    "Loading pipeline components...: 100%|██████████| 7/7 [00:02<00:00,  2.48it/s]\n"
    "  0%|          | 0/50 [00:00<?, ?it/s]D:\\ProgramData\\envs\\pytorch\\Lib\\site-packages\\diffusers\\models"
    "\\attention_processor.py:1279: UserWarning: 1Torch was not compiled with flash attention. (Triggered "
    "internally at C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\transformers\\cuda\\sdp_utils.cpp:455.)\n"
    "  hidden_states = F.scaled_dot_product_attention(\n"
    "100%|██████████| 50/50 [00:05<00:00,  8.44it/s]\n\n"
)


@pytest.mark.parametrize(
    ("question", "entries"),
    [
        ("What is wrong here and how do I fix it?", 1),
        ("这是什么问题？怎么解决？", 1),
        ("怎么修？", 1),
        # A question that is not about the warning: the run is fine, the user asks what to do next.
        ("It seems to be running now; how do I watch the training?", 0),
        ("", 0),
    ],
)
def test_a_warning_pasted_with_a_question_about_it_is_an_entry(question, entries):
    cands = parse_one_turn(
        f"{WINDOWS_SDPA_TURN}{question}",
        "Windows builds of PyTorch ship SDPA without the flash kernel; the warning is harmless.",
    )
    assert len(cands) == entries
    if entries:
        assert cands[0].title.startswith("UserWarning: 1Torch was not compiled with flash attention")


# A verl user's paste (a public issue): a notice the runtime prints over and over, with no error word.
ANTLR_NOTICE = "(main_task pid=2902493) ANTLR runtime and generated code versions disagree: 4.9.3!=4.7.2\n"


@pytest.mark.parametrize(
    ("pasted", "question", "entries"),
    [
        (ANTLR_NOTICE * 3, "训练挂了，怎么回事？", 1),
        (ANTLR_NOTICE * 3, "What does this mean?", 1),
        # Without the launcher's stamp, the one line printed again and again is the program's output.
        (ANTLR_NOTICE.split(") ", 1)[1] * 3, "What does this mean?", 1),
        # Output with no question about it is not a report; neither is a question about one config line.
        (ANTLR_NOTICE * 3, "", 0),
        ("```yaml\nlr: 1e-5\n```\n", "Why is it so slow?", 0),
    ],
)
def test_output_that_names_no_error_pasted_with_a_question_about_it_is_an_entry(pasted, question, entries):
    cands = parse_one_turn(
        f"when training,verl always alert \n{pasted}{question}",
        "latex2sympy2's parser was generated by ANTLR 4.7.2; the notice is harmless.",
    )
    assert len(cands) == entries
    if entries:
        assert "ANTLR runtime and generated code versions disagree" in cands[0].problem_text


# A neuralbody issue: pip's box around a build step that failed, the output under it naming no error
# (pip's "subprocess-exited-with-error" is never the root error), pasted in a fence the paste cut.
PIP_BOX = (
    "```\n"
    "Collecting sklearn\n"
    "  Downloading sklearn-0.0.post5.tar.gz (3.7 kB)\n"
    "  Preparing metadata (setup.py) ... error\n"
    "  error: subprocess-exited-with-error\n"
    "  \n"
    "  × python setup.py egg_info did not run successfully.\n"
    "  │ exit code: 1\n"
    "  ╰─> [18 lines of output]\n"
    "      The 'sklearn' PyPI package is deprecated, use 'scikit-learn'\n"
    "      rather than 'sklearn' for pip commands.\n"
    "      [end of output]\n"
    "  \n"
    "  note: This error originates from a subprocess, an\n"
)


@pytest.mark.parametrize("question", ["", "What is wrong here and how do I fix it?"])
def test_a_pasted_pip_box_whose_output_names_no_error_is_an_entry(question):
    cands = parse_one_turn(f"{PIP_BOX}\n{question}", "Install scikit-learn, not the placeholder sklearn.")
    assert len(cands) == 1
    assert "The 'sklearn' PyPI package is deprecated" in cands[0].problem_text
    assert cands[0].title == "Collecting sklearn"  # the fence's own line is no title


def test_notes_headings_are_remedies_and_a_heading_without_log_is_still_an_entry():
    text = decode_document(shared_sample(NOTES_SAMPLE).read_bytes())
    fmt, cands = parse_document(text)
    assert fmt == "notes"
    assert len(cands) == 4
    first, hang, maxlen, data = cands
    assert first.remedy_markdown.startswith("报错，可以这样， export CUDA_VISIBLE_DEVICES=1")
    assert (first.line_start, first.line_end) == (1, 58)
    assert hang.problem_text == hang.remedy_markdown and "卡住" in hang.problem_text
    assert (hang.line_start, hang.line_end) == (62, 62)
    assert maxlen.title == "ValueError: max_tokens must be at least 1, got -3173."
    assert data.remedy_markdown.startswith("训练数据问题")


def test_raw_log_entries_need_a_fix_and_ranks_collapse():
    cands = parse_document((GOLDEN_INPUTS[0].parent / "raw_train.log").read_text())[1]
    assert cands and all(c.needs_fix for c in cands)
    assert sum("NCCL error" in c.title for c in cands) == 1


def test_dev_corpus_blocks_line_up_with_the_benchmark_spans():
    spans = json.loads((SHARED / "bench" / "dev" / "spans.json").read_text()) if SHARED.exists() else None
    if spans is None:
        pytest.skip("the dev benchmark is not beside the project")
    for name, cases in spans.items():
        cands = parse_document((SHARED / "bench" / "dev" / "corpus" / name).read_text())[1]
        for start, end, case in cases:
            inside = [c for c in cands if c.line_start <= end and start <= c.line_end]
            assert len(inside) == 1, (name, case)
            assert start <= inside[0].line_start and inside[0].line_end <= end, (name, case)


def test_format_detection():
    assert detect_format("_**User**_\n\nhi\n\n---\n\n_**Assistant**_\n\nhello\n") == "specstory"
    assert detect_format("# fix it like this\nValueError: x\n") == "notes"
    assert detect_format("2025-01-01 INFO start\nValueError: x\n") == "log"


def test_binary_and_empty_files_are_refused_with_a_reason():
    with pytest.raises(ParseError, match="binary"):
        decode_document(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 100)
    with pytest.raises(ParseError, match="empty"):
        decode_document(b"  \n ")


def test_gbk_and_latin1_logs_decode():
    assert "显存不足" in decode_document("# 显存不足\nRuntimeError: x\n".encode("gbk"))
    assert decode_document("caf\xe9 RuntimeError".encode("latin-1")).startswith("caf")


def test_a_title_leaves_out_a_wide_progress_bar_and_the_loggers_header():
    # A real paste (public thread, LoRA + gradient checkpointing): a 260-column terminal drew the
    # bar, and transformers' logger printed its warning on the bar's line.
    bar = "  0%|" + " " * 260 + "| 0/1540 [00:00<?, ?it/s]"
    line = "[WARNING|logging.py:305] 2023-10-19 09:44:55,318 >> `use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`..."
    warning = "/usr/local/lib/python3.10/site-packages/torch/utils/checkpoint.py:31: UserWarning: None of the inputs have requires_grad=True. Gradients will be None"

    assert title_for(f"{bar}{line}\n{warning}\n") == (
        "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`..."
    )


def test_a_drivers_copy_of_a_workers_failure_is_not_an_entry_of_its_own():
    from ingest.parsers.rawlog import parse_rawlog

    log = (
        "(WorkerDict pid=1234) Traceback (most recent call last):\n"
        '(WorkerDict pid=1234)   File "/opt/verl/verl/workers/fsdp_workers.py", line 400, in update_actor\n'
        "(WorkerDict pid=1234)     metrics = self.actor.update_policy(data=data)\n"
        "(WorkerDict pid=1234) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.27 GiB.\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/ray/_private/worker.py", line 861, in get_objects\n'
        "    raise value.as_instanceof_cause()\n"
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_update_actor() "
        "(pid=1234, ip=10.0.0.1, actor_id=abc)\n"
    )

    assert [c.title for c in parse_rawlog(log)] == ["OutOfMemoryError: CUDA out of memory. Tried to allocate 9.27 GiB."]


def test_a_title_leaves_out_glogs_header():
    line = (
        "[E914 16:41:52.386201954 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out."
    )

    assert title_for(line).startswith("[Rank 1] Watchdog caught collective operation timeout")
