from __future__ import annotations

import pytest

from ingest.parsers import decode_document, parse_document
from tests.conftest import DATA

DOCS = DATA / "docs"


@pytest.mark.parametrize(
    ("name", "fmt", "title_part", "remedy_part"),
    [
        ("chatgpt_conversations.json", "chatgpt", "CUDA out of memory", "use_dynamic_bsz"),
        ("claude_export.json", "claude", "NCCL error", "--shm-size"),
        ("plain_chat_zh.txt", "chat", "must divide the global batch size", "num_generations"),
        (
            "github_issue.json",
            "github",
            "Cannot re-initialize CUDA in forked subprocess",
            "VLLM_WORKER_MULTIPROC_METHOD",
        ),
        # The linker's diagnostic, not the wrapper's "Error building extension", names the failure.
        ("github_issue.md", "issue", "cannot find -lcurand", "CUDA_HOME"),
        ("gbk_notes.txt", "notes", "超过 max_length", "max_length 调大"),
        ("train_eaddrinuse.log.gz", "log", "failed to listen on any local network address", ""),
    ],
)
def test_each_format_is_detected_and_yields_its_problem_and_fix(name, fmt, title_part, remedy_part):
    detected, cands = parse_document(decode_document((DOCS / name).read_bytes()))
    assert detected == fmt
    assert len(cands) == 1
    cand = cands[0]
    assert title_part in cand.title
    assert remedy_part in cand.remedy_markdown
    assert cand.needs_fix == (remedy_part == "")
    assert 1 <= cand.line_start <= cand.line_end


def test_chat_turns_without_errors_make_no_entries():
    _, cands = parse_document(decode_document((DOCS / "chatgpt_conversations.json").read_bytes()))
    assert all("launch verl" not in c.problem_text for c in cands)
    _, zh = parse_document(decode_document((DOCS / "plain_chat_zh.txt").read_bytes()))
    assert all("tensorboard" not in c.problem_text for c in zh)


def test_json_spans_point_at_the_message_lines():
    text = decode_document((DOCS / "chatgpt_conversations.json").read_bytes())
    cand = parse_document(text)[1][0]
    assert "OutOfMemoryError" in text.splitlines()[cand.line_start - 1]


def test_github_fix_is_the_maintainers_comment_not_me_too():
    _, cands = parse_document(decode_document((DOCS / "github_issue.json").read_bytes()))
    assert "same here" not in cands[0].remedy_markdown
    _, md = parse_document(decode_document((DOCS / "github_issue.md").read_bytes()))
    assert md[0].remedy_markdown.startswith("The CUDA toolkit libraries are missing")


def test_gzip_log_line_numbers_are_those_of_the_uncompressed_file():
    cand = parse_document(decode_document((DOCS / "train_eaddrinuse.log.gz").read_bytes()))[1][0]
    assert cand.line_end == 2003


def test_progress_bars_and_ansi_codes_do_not_hide_errors():
    log = (
        "\x1b[32mINFO\x1b[0m start\n"
        "  3%|▎         | 3/100 [00:03<01:40,  1.03s/it]\r  4%|▍         | 4/100 [00:04<01:39,  1.03s/it]\r"
        "\x1b[31mRuntimeError: CUDA error: an illegal memory access was encountered\x1b[0m\n"
    )
    cands = parse_document(log, "log")[1]
    assert [c.title for c in cands] == ["RuntimeError: CUDA error: an illegal memory access was encountered"]


def test_the_same_traceback_from_eight_ranks_is_one_entry():
    block = (
        "[rank{r}]: Traceback (most recent call last):\n"
        '[rank{r}]:   File "/opt/site-packages/torch/distributed/c10d_logger.py", line 81, in wrapper\n'
        "[rank{r}]:     return func(*args, **kwargs)\n"
        "[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
    )
    cands = parse_document("".join(block.format(r=r) for r in range(8)), "log")[1]
    assert len(cands) == 1


def test_a_hang_described_in_words_is_a_problem_even_without_an_error():
    chat = (
        "User: my GRPO run hangs right after the vLLM engine starts, GPU util 0%, no error at all\n"
        "Assistant: Set NCCL_P2P_DISABLE=1 on these PCIe machines and restart the Ray cluster.\n"
        "User: how do I plot the reward curve?\n"
        "Assistant: Use tensorboard.\n"
    )
    fmt, cands = parse_document(chat)
    assert fmt == "chat"
    assert len(cands) == 1
    assert "hangs right after the vLLM engine starts" in cands[0].title
    assert "NCCL_P2P_DISABLE" in cands[0].remedy_markdown


def test_streaming_scan_handles_a_file_without_newlines(tmp_path):
    from ingest.parsers.stream import iter_windows

    path = tmp_path / "one-line.log"
    path.write_bytes(b"x" * (3 << 20) + b" RuntimeError: boom at the end\n")
    with open(path, "rb") as fh:
        windows = list(iter_windows(fh, chunk_bytes=1 << 18))
    assert any("RuntimeError: boom" in w.text for w in windows)
