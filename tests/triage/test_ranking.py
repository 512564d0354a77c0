from __future__ import annotations

import pytest

from ingest.services import document_process, document_submit_path
from tests.conftest import ROOT
from triage.services import triage_log


@pytest.fixture
def samples_kb(db):  # type: ignore[no-untyped-def]
    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)


def test_another_users_sm120_error_finds_the_transcript_fix(samples_kb):
    result = triage_log(
        "(WorkerDict pid=99) RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    assert result.verdict == "match"
    assert "no kernel image" in result.matches[0].title
    assert result.matches[0].sources[0].filename == "verl_ppo_chat.md"


def test_expected_grpo_zero_loss_is_explained_not_matched(samples_kb):
    result = triage_log(
        "{'loss': 0.0, 'grad_norm': 0.31, 'reward': 0.4, 'reward_std': 0.35, 'frac_reward_zero_std': 0.1}"
    )
    assert result.verdict == "no_match"
    assert any("expected" in n for n in result.notes)


def test_no_learning_signal_metrics_match_the_notes_entry(samples_kb):
    result = triage_log(
        "{'loss': 0.0, 'grad_norm': 0.0, 'reward': 1.0, 'reward_std': 0.0, 'frac_reward_zero_std': 1.0, 'epoch': 0.1}"
    )
    assert result.verdict == "match"
    assert result.matches[0].title.startswith("No learning signal")


def test_hang_described_in_words_finds_the_heading_only_entry(samples_kb):
    result = triage_log("swift rollout 用了 multi_turn_scheduler 之后一直卡住，没有任何报错")
    assert "multi_turn_scheduler" in result.matches[0].title


def test_match_explains_itself_and_shows_the_users_numbers(samples_kb):
    log = (
        "[WARNING:swift] max_model_len(4096) - num_tokens(6001) < max_tokens(1024). Setting max_tokens: -2929\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/site-packages/vllm/sampling_params.py", line 397, in _verify_args\n'
        "    raise ValueError(\n"
        "ValueError: max_tokens must be at least 1, got -2929.\n"
    )
    result = triage_log(log)
    top = result.matches[0]
    assert result.verdict == "match" and "max_tokens must be at least 1" in top.title
    assert any("Same exception: ValueError" in r for r in top.explanation.reasons)
    assert 5 in top.explanation.highlight_lines
    assert any("6001 tokens" in n and "4096" in n for n in top.explanation.numbers)


@pytest.mark.parametrize(
    "log",
    [
        "RuntimeError: CUDA error: device-side assert triggered",
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ],
)
def test_cuda_errors_of_the_same_family_are_not_merged(samples_kb, log):
    result = triage_log(
        log + "\nCUDA kernel errors might be asynchronously reported at some other API call.", min_score=0.0
    )
    assert result.verdict != "match"
    kernel = [m for m in result.matches if "no kernel image" in m.title]
    assert kernel and kernel[0].features.get("family_conflict") == 1.0
    assert "different failure" in kernel[0].explanation.reasons[0]


def test_family_conflict_needs_different_words_after_the_family_name():
    from triage.ranking import family_conflict

    same = ("nccl", frozenset({"internal"}))
    assert not family_conflict(same, ("nccl", frozenset({"internal", "check"})))
    assert family_conflict(("nccl", frozenset({"remote", "network"})), ("nccl", frozenset({"unhandled", "system"})))
    assert not family_conflict(("cuda", frozenset({"assert"})), None)


def test_your_numbers_skip_the_library_hint_text(samples_kb):
    result = triage_log(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    )
    assert result.matches and not any("CUDA_LAUNCH_BLOCKING" in n for n in result.matches[0].explanation.numbers)


def test_slot_agreement_tells_another_name_in_the_same_wording():
    from triage.ranking import slot_agreement

    other_name = slot_agreement(("datacollatorforcompletiononlylm", "trl"), ("grpoconfig", "trl"))
    assert other_name == {"slot_conflict": 1.0}
    assert slot_agreement(("-lcuda",), ("-lcuda",)) == {"slot_conflict": 0.0}
    # More named on one side only is not a conflict; a side that names nothing is no evidence.
    assert slot_agreement(("max_seq_length", "sfttrainer.__init__"), ("max_seq_length",)) == {"slot_conflict": 0.0}
    assert slot_agreement((), ("grpoconfig",)) == {"slot_conflict": 0.0}


def test_two_modules_of_one_package_are_no_slot_conflict():
    from triage.ranking import slot_agreement

    # timm 0.9 moved timm.models.layers: whichever submodule the code imports is missing (fresh37).
    siblings = slot_agreement(("timm.models.layers.helpers",), ("timm.models.layers.drop",))
    assert siblings == {"slot_conflict": 0.0}
    assert slot_agreement(("timm.models.layers.helpers",), ("timm.layers",)) == {"slot_conflict": 1.0}
    # Two-part names are no module path to compare by parent: a file's stem is no package.
    assert slot_agreement(("model.safetensors",), ("model.bin",)) == {"slot_conflict": 1.0}


def test_one_wording_with_another_word_inside_is_a_slot_conflict():
    from kb.normalize import tokenize
    from triage.ranking import word_substitution

    def swapped(a: str, b: str) -> float:
        return word_substitution(tokenize(a), tokenize(b))

    # Real messages (public issues): a PEFT config's set against a Trainer state's grad-norm tensor.
    json_error = "Object of type {} is not JSON serializable"
    assert swapped(json_error.format("set"), json_error.format("Tensor")) == 1.0
    # The same wording, or a word swapped at an end (a cut paste, another device), is no conflict.
    assert swapped(json_error.format("Tensor"), json_error.format("Tensor")) == 0.0
    device_error = "Expected all tensors to be on the same device, but found at least two devices, {}!"
    assert swapped(device_error.format("cuda:0 and cpu"), device_error.format("cuda:1 and cuda:0")) == 0.0
    # Two different wordings are not one wording with a word swapped.
    assert swapped("peer mapping resources exhausted", "Invalid config blocking attribute value") == 0.0


def test_a_candidates_margin_is_over_the_best_entry_of_another_fingerprint():
    from types import SimpleNamespace

    from triage.ranking import add_margins

    covers = [("a", 0.9), ("a", 0.7), ("b", 0.5), ("c", 0.5), ("b", 0.2), ("", 0.1), ("", 0.0)]
    cands = [(SimpleNamespace(id=i, fingerprint=fp), {"raw_cover": v}) for i, (fp, v) in enumerate(covers)]
    add_margins(cands)
    for doc, feats in cands:
        others = [f["raw_cover"] for d, f in cands if d.fingerprint != doc.fingerprint]
        assert feats["raw_cover_margin"] == pytest.approx(feats["raw_cover"] - max(others))
    # Entries of one fingerprint are one error seen twice: alone, a candidate is ahead by its own cover.
    alone = [(SimpleNamespace(id=i, fingerprint="a"), {"raw_cover": v}) for i, v in enumerate((0.4, 0.3))]
    add_margins(alone)
    assert [f["raw_cover_margin"] for _, f in alone] == [0.4, 0.3]


def test_excluded_entries_are_never_candidates(samples_kb):
    log = "(WorkerDict pid=99) RuntimeError: CUDA error: no kernel image is available for execution on the device"
    first = triage_log(log).matches[0].entry_id
    again = triage_log(log, exclude={first})
    assert all(m.entry_id != first for m in again.matches)


def test_a_paste_that_names_no_failure_is_never_the_confident_answer(samples_kb):
    # A user test pasted these; each had come back as a "Known issue" with a full remedy.
    for text in ("Traceback (most recent call last):", "CUDA error", "NCCL error"):
        result = triage_log(text)
        assert result.verdict != "match" and result.too_little, (text, [m.title for m in result.matches])


def test_a_job_logs_last_lines_do_not_dilute_the_coverage_of_its_own_error():
    # fresh5-long's pattern: a weak root (an error phrase, no exception) pasted inside a job log.
    # The log's last telling lines are added to the query words, since they may be the report;
    # the entry that names the pasted error must not lose coverage because they are not.
    from kb.signature import signature_from_text
    from triage.corpus import Corpus
    from triage.entry_table import Doc, TableBuilder
    from triage.ranking import coverage, features, query_from_signature

    def doc(pk: int, words: tuple[str, ...]) -> Doc:
        return Doc(pk, "", "", "error_line", f"{pk:016x}", "", (), words, (), words, None, "team", True)

    builder = TableBuilder()
    builder.add(doc(1, ("cannot", "import", "name", "patch_compiled_autograd", "unsloth_zoo")), [])
    builder.add(doc(2, ("offload", "persistent", "parameters", "statistics", "tokenizer", "pad")), [])
    builder.add(doc(3, ("cuda", "out", "of", "memory")), [])
    corpus = Corpus([builder.build()])
    sig, _ = signature_from_text("cannot import name 'patch_compiled_autograd' from 'unsloth_zoo.patching_utils'")
    tail = "Parameter Offload - Persistent parameters statistics: param_count = 365\nThe tokenizer has new PAD tokens"
    alone, in_log = query_from_signature(sig), query_from_signature(sig, extra_text=tail)
    entry = corpus.docs[1]
    diluted = coverage(in_log.text_tokens, entry, corpus)
    assert diluted < coverage(alone.text_tokens, entry, corpus)
    assert features(in_log, entry, corpus, 0.0)["coverage"] == features(alone, entry, corpus, 0.0)["coverage"]
    # The tail's words still count for an entry they name.
    assert (
        features(in_log, corpus.docs[2], corpus, 0.0)["coverage"]
        > features(alone, corpus.docs[2], corpus, 0.0)["coverage"]
    )


def test_an_errors_neighbours_in_a_job_log_do_not_dilute_its_raw_cover(samples_kb):
    # The error region reads an error's neighbours, which in a job log are the job's own lines;
    # the entry's share of the root error's own words is what the region's share may not go under.
    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    noise = [
        "Parameter Offload - Persistent parameters statistics: param_count = 365, numel = 2129920",
        "wrap_policy: functools.partial(<function transformer_auto_wrap_policy at 0x7fbebc833240>)",
        "Total steps: 19200, num_warmup_steps: 0, Actor use_remove_padding=False",
    ]
    alone, in_log = triage_log(error), triage_log("\n".join([*noise, error]))
    assert alone.matches[0].entry_id == in_log.matches[0].entry_id
    assert in_log.matches[0].features["raw_cover"] == pytest.approx(alone.matches[0].features["raw_cover"])


# fresh7-long's pattern: a report with no error word (TensorRT's "engine plan file is not compatible")
# as the last line of a job log whose only warning is a start-up deprecation notice. From
# fresh5-long's real query (a public issue's report inside train-long's job-log noise).
JOB_LOG_ENDING_IN_A_REPORT = """\
(WorkerDict pid=4123) Qwen2ForCausalLM contains 494.03M parameters
(WorkerDict pid=4123) Total steps: 19200, num_warmup_steps: 0
(WorkerDict pid=4123) Actor use_remove_padding=False
(WorkerDict pid=4123) local rank 0
(WorkerDict pid=4123) no hf weight loader need to be updated
(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict()
[INFO:swift] use_reentrant: True
The tokenizer has new PAD/BOS/EOS tokens that differ from the model config and generation config. The model config and generation config were aligned accordingly, being updated with the tokenizer's values.
WARNING:accelerate.accelerator:Gradient accumulation steps mismatch: GradientAccumulationPlugin has 1, DeepSpeed config has 8. Using DeepSpeed's value.
Parameter Offload - Persistent parameters statistics: param_count = 365, numel = 2129920
Before building vllm rollout, memory allocated (GB): 4.602750778198242, memory reserved (GB): 5.2734375
Running tokenizer on dataset: 100%|██████████| 7473/7473 [00:02<00:00, 3101.52 examples/s]
wrap_policy: functools.partial(<function transformer_auto_wrap_policy at 0x7fbebc833240>)
Loading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.31s/it]
The engine plan file is not compatible with this version of TensorRT, expecting library version 9.2.0.4 got 9.2.0.5, please rebuild
"""


def test_a_job_logs_last_lines_are_also_read_on_their_own():
    from kb.signature import signature_from_text, telling_lines
    from triage.corpus import Corpus
    from triage.entry_table import Doc, TableBuilder
    from triage.lexical import TAIL_LINES
    from triage.ranking import features, query_from_signature

    def doc(pk: int, words: tuple[str, ...]) -> Doc:
        return Doc(pk, "", "", "error_line", f"{pk:016x}", "", (), words, (), words, None, "team", True)

    builder = TableBuilder()
    builder.add(doc(1, ("engine", "plan", "file", "not", "compatible", "version", "tensorrt", "rebuild")), [])
    builder.add(doc(2, ("fsdp", "state_dict_type", "deprecated", "get_state_dict")), [])
    builder.add(doc(3, ("cuda", "out", "of", "memory")), [])
    corpus = Corpus([builder.build()])
    # A start-up notice no launcher tagged stays the (weak) root: the paste's last lines count besides it.
    log = JOB_LOG_ENDING_IN_A_REPORT.replace("(WorkerDict pid=4123) /root", "/root")
    sig, _ = signature_from_text(log)
    assert sig.exc_type == "FutureWarning"
    telling = telling_lines(log)
    tail = "\n".join(telling[-TAIL_LINES:])
    assert "engine plan file" in tail and "FutureWarning" not in tail
    without = query_from_signature(sig, extra_text="\n".join(telling))
    with_tail = query_from_signature(sig, extra_text="\n".join(telling), tail_text=tail)
    entry = corpus.docs[1]
    assert features(with_tail, entry, corpus, 0.0)["coverage"] > 2 * features(without, entry, corpus, 0.0)["coverage"]
    # Only ever more evidence: the warning's own entry keeps what the whole paste gave it.
    warning_entry = corpus.docs[2]
    assert (
        features(with_tail, warning_entry, corpus, 0.0)["coverage"]
        == features(without, warning_entry, corpus, 0.0)["coverage"]
    )


def test_a_report_at_the_end_of_a_job_log_finds_its_entry(db):
    from ingest.services import document_submit

    notes = (
        "# Rebuild the TensorRT-LLM engine with the TensorRT version installed at run time\n"
        "The engine plan file is not compatible with this version of TensorRT, expecting library version 9.2.0.4"
        " got 9.2.0.3, please rebuild\n\n"
        "# Align the tokenizer's special tokens with the model config before saving\n"
        "ValueError: The tokenizer has new PAD tokens; the model config and generation config differ\n\n"
        "# Set gradient_accumulation_steps in the DeepSpeed config to the Trainer's value\n"
        "ValueError: Gradient accumulation steps mismatch: GradientAccumulationPlugin has 1, DeepSpeed config has 8\n\n"
        "# Give ZeRO-3 more persistent parameters (stage3_param_persistence_threshold) when offload is slow\n"
        "RuntimeError: Parameter Offload - Persistent parameters statistics: param_count = 0, numel = 0\n\n"
        "# Free GPU memory before building the vLLM rollout (lower gpu_memory_utilization)\n"
        "RuntimeError: Before building vllm rollout, memory allocated (GB): 70.1, memory reserved (GB): 75.3\n\n"
        "# Lower the batch size or enable gradient checkpointing\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    document_process(document_submit("notes.txt", [notes.encode()]).document.pk)
    result = triage_log(JOB_LOG_ENDING_IN_A_REPORT)
    # Read only as one line in fifteen, the report was "possibly related" at best.
    assert result.verdict == "match", [(m.title, m.score) for m in result.matches]
    assert "TensorRT" in result.matches[0].title


# Two look-alike entries every job-log test below has beside the one it is about.
LOOK_ALIKES = (
    "# Rebuild the TensorRT-LLM engine with the TensorRT version installed at run time\n"
    "The engine plan file is not compatible with this version of TensorRT, expecting library version 9.2.0.4"
    " got 9.2.0.3, please rebuild\n\n"
    "# Lower the batch size or enable gradient checkpointing\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)


def triage_against_notes(notes: str, log: str):  # type: ignore[no-untyped-def]
    """Triage `log` against a knowledge base of these notes and the look-alikes."""
    from ingest.services import document_submit

    document_process(document_submit("notes.txt", [(notes + LOOK_ALIKES).encode()]).document.pk)
    return triage_log(log)


def test_a_loggers_warning_that_ends_a_job_log_is_read_as_its_last_line(db):
    # fresh7-long's pattern: the user asks about a warning (transformers' logger, LLaMA-Factory's
    # format) that ends the job log. An informational line everywhere else, it is read with the
    # paste's last lines; the real report from a public issue, inside train-long's job-log noise.
    from kb.signature import telling_lines
    from triage.lexical import TAIL_LINES

    warning = (
        "[WARNING|logging.py:328] 2025-02-26 14:54:51,387 >> You are attempting to use Flash Attention 2.0 with a "
        "model not initialized on GPU. Make sure to move the model to GPU after initializing it on CPU with "
        "`model.to('cuda')`."
    )
    log = JOB_LOG_ENDING_IN_A_REPORT.rsplit("\n", 2)[0] + "\n" + warning + "\n"
    assert "Flash Attention" not in " ".join(telling_lines(log))
    assert "Flash Attention" in telling_lines(log, TAIL_LINES, with_warnings=True)[-1]
    notes = (
        "# Harmless: move the model to the GPU after loading it, or load it with device_map\n"
        "You are attempting to use Flash Attention 2.0 with a model not initialized on GPU. Make sure to move the "
        "model to GPU after initializing it on CPU with `model.to('cuda')`.\n\n"
        "# Set gradient_accumulation_steps in the DeepSpeed config to the Trainer's value\n"
        "ValueError: Gradient accumulation steps mismatch: GradientAccumulationPlugin has 1, DeepSpeed config has 8\n\n"
    )
    result = triage_against_notes(notes, log)
    assert result.matches and result.matches[0].title.startswith("Harmless: move the model"), result.matches


def test_a_warning_above_a_report_that_ends_the_log_is_not_its_answer(db):
    # fresh40-long's pattern: a report in prose (grpc/grpc#29718) ends a verl job log whose last line
    # before it is the workers' FSDP FutureWarning. The lines above a weak root that ends the paste are
    # its surroundings, not what the job printed as it died: the warning's own entry is no answer.
    log = (
        "(WorkerDict pid=4123) local rank 0\n"
        "(WorkerDict pid=4123) no hf weight loader need to be updated\n"
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() "
        "are being deprecated. Please use APIs, get_state_dict() and set_state_dict(), which can support different "
        "parallelisms, FSDP1, FSDP2, DDP.\n"
        "But on company server (connect should be performed through gateway), the client could not connect to "
        "server and error message is `failed to connect to all addresses`. And the proxy environment variable is "
        "also set. And after I unset them by `export http_proxy=` the code works.\n"
    )
    notes = (
        "# Harmless: FSDP's state_dict_type deprecation, printed by every worker\n"
        "FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use "
        "APIs, get_state_dict() and set_state_dict(), which can support different parallelisms, FSDP1, FSDP2, DDP.\n\n"
        "# Exclude the server's host from http_proxy (no_proxy) when a gRPC client goes through a proxy\n"
        "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n"
        "        status = StatusCode.UNAVAILABLE\n"
        '        details = "failed to connect to all addresses"\n\n'
    )
    result = triage_against_notes(notes, log)
    assert not result.matches or not result.matches[0].title.startswith("Harmless: FSDP"), [
        (m.title, m.score) for m in result.matches
    ]


def test_an_entry_the_last_lines_match_is_not_held_against_the_weak_roots_type(db):
    # fresh7-long's pattern: a report with no exception type (PyTorch on a Mac) ends a job log whose
    # only Python warning is a worker's start-up FutureWarning. That warning had been the root, and its
    # type and called names (`FSDP.state_dict_type()`) had counted against the entry the report names.

    report = (
        "The operator 'aten::isin.Tensor_Tensor_out' is not currently implemented for the MPS device. If you want "
        "this op to be added in priority during the prototype phase of this feature, please comment on "
        "https://github.com/pytorch/pytorch/issues/77764. As a temporary fix, you can set the environment "
        "variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op."
    )
    log = JOB_LOG_ENDING_IN_A_REPORT.rsplit("\n", 2)[0] + "\n" + report + "\n"
    notes = (
        "# Upgrade torch to 2.4 or later on Apple silicon, or set PYTORCH_ENABLE_MPS_FALLBACK=1\n"
        "NotImplementedError: The operator 'aten::isin.Tensor_Tensor_out' is not currently implemented for the MPS "
        "device. As a temporary fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1`.\n\n"
    )
    result = triage_against_notes(notes, log)
    assert result.signature.exc_type == "" and "aten::isin" in result.signature.raw_message
    top = result.matches[0]
    assert "aten::isin" in top.title, result.matches
    assert top.features["type_conflict"] == 0.0 and top.features["slot_conflict"] == 0.0
    assert result.verdict == "match"


def test_the_weak_roots_conflicts_still_count_against_an_entry_the_last_lines_do_not_match_best():
    from kb.signature import signature_from_text
    from triage.corpus import Corpus
    from triage.entry_table import Doc, TableBuilder
    from triage.ranking import features, query_from_signature

    def doc(pk: int, exc: str, words: tuple[str, ...], slots: tuple[str, ...]) -> Doc:
        return Doc(pk, exc, "", "exception_line", f"{pk:016x}", "", (), words, (), words, None, "team", True, slots)

    builder = TableBuilder()
    builder.add(doc(1, "RuntimeError", ("fsdp", "state_dict_type", "deprecated", "removed"), ("other_call()",)), [])
    builder.add(doc(2, "NotImplementedError", ("operator", "aten", "isin", "mps", "device"), ("aten::isin",)), [])
    corpus = Corpus([builder.build()])
    sig, _ = signature_from_text("FutureWarning: FSDP.state_dict_type() is being deprecated\n")
    assert sig.exc_type == "FutureWarning" and query_from_signature(sig).slots
    query = query_from_signature(
        sig, extra_text="operator aten isin mps device", tail_text="operator aten isin mps device"
    )
    matched_by_tail, matched_by_root = (features(query, corpus.docs[k], corpus, 0.0) for k in (2, 1))
    assert matched_by_tail["type_conflict"] == 0.0 and matched_by_tail["slot_conflict"] == 0.0
    assert matched_by_root["type_conflict"] == 1.0 and matched_by_root["slot_conflict"] == 1.0


def test_the_last_lines_read_on_their_own_leave_out_the_weak_roots_own_lines(db):
    # fresh5-long's pattern: the report (a verl assertion quoted with no exception type) is printed
    # right under a worker's start-up FutureWarning. Among the last three lines, that long warning had
    # drowned the report; the notice is no longer the root, and the report is read on its own.

    fsdp = next(line for line in JOB_LOG_ENDING_IN_A_REPORT.splitlines() if "FutureWarning" in line)
    noise = [line for line in JOB_LOG_ENDING_IN_A_REPORT.splitlines()[:5] if "FutureWarning" not in line]
    log = "\n".join(
        [
            *noise,
            fsdp,
            "Training Script: assert config.data.train_batch_size >= config.actor_rollout_ref.actor.ppo_mini_batch_size",
        ]
    )
    notes = (
        "# Make data.train_batch_size at least actor.ppo_mini_batch_size (after multiplying by rollout.n)\n"
        "AssertionError: assert config.data.train_batch_size >= config.actor_rollout_ref.actor.ppo_mini_batch_size\n\n"
    )
    result = triage_against_notes(notes, log)
    assert result.signature.exc_type == "" and "train_batch_size" in result.signature.raw_message
    assert result.matches and "train_batch_size" in result.matches[0].title, result.matches
    assert result.matches[0].features["coverage"] > 0.4  # 0.17 with the warning among the three lines


def test_an_entry_from_a_job_log_is_matched_by_its_error_region_not_the_jobs_start_up_lines(db):
    # fresh5-long's pattern: the team's knowledge base holds an entry whose problem is a whole job
    # log of the same pipeline (the samples' verl run). A new job log prints the same start-up lines
    # and ends in another failure; those lines had made the old entry the match.
    from triage.lexical import ENTRY_REGION_MIN_LINES, entry_raw_text

    start_up = [line for line in JOB_LOG_ENDING_IN_A_REPORT.splitlines()[:-1] if "FutureWarning" not in line]
    job_log = "\n".join(
        [
            *(start_up * 4)[: ENTRY_REGION_MIN_LINES + 5],
            "(WorkerDict pid=4123) Traceback (most recent call last):",
            '(WorkerDict pid=4123)   File "/verl/workers/fsdp_workers.py", line 318, in init_model',
            "(WorkerDict pid=4123)     self._sync_params()",
            "(WorkerDict pid=4123) RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ]
    )
    region = entry_raw_text(job_log)
    assert "no kernel image" in region and "Qwen2ForCausalLM contains" not in region
    short = "\n".join(job_log.splitlines()[-6:])
    assert entry_raw_text(short) == short  # a short report is read whole
    notes = (
        "# Build for the GPU's compute capability (TORCH_CUDA_ARCH_LIST) or install a wheel that has it\n"
        + job_log
        + "\n\n# Make data.train_batch_size at least actor.ppo_mini_batch_size\n"
        "AssertionError: assert config.data.train_batch_size >= config.actor_rollout_ref.actor.ppo_mini_batch_size\n\n"
    )
    fsdp = next(line for line in JOB_LOG_ENDING_IN_A_REPORT.splitlines() if "FutureWarning" in line)
    paste = "\n".join(
        [
            *start_up,
            fsdp,
            "Training Script: assert config.data.train_batch_size >= config.actor_rollout_ref.actor.ppo_mini_batch_size",
        ]
    )
    result = triage_against_notes(notes, paste)
    assert "train_batch_size" in result.matches[0].title, result.matches
    kernel = [m for m in result.matches if "kernel image" in m.title]
    assert not kernel or kernel[0].features["raw_cover"] < 0.2, kernel
