"""The paste's error region: the lines raw-text retrieval reads (triage.lexical.error_region)."""

from __future__ import annotations

from kb.logscan import ErrorBlock
from kb.signature import signature_from_text, telling_lines
from triage.lexical import error_region

# A job log whose only recognised problem is a deprecation warning printed at start-up; the job
# then stops with lines that say what happened in no error's words.
LOG = """\
/opt/venv/lib/python3.10/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:690: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated.
  warnings.warn(
step 1 loss 0.93
        checkpoint shard 3 of 8 written to /ckpt/actor/global_step_100
        rollout workers gone quiet, trainer waiting on the weight sync barrier
"""


def root_and_region(log: str) -> tuple[ErrorBlock, str]:
    """The paste's root error and the region retrieval reads around it."""
    _, choice = signature_from_text(log)
    assert choice.root is not None
    return choice.root, error_region(log, (choice.root,), telling_lines(log))


def test_a_warning_alone_does_not_hide_how_the_log_ends():
    root, region = root_and_region(LOG)
    assert root.kind == "warning"
    assert "FSDP.state_dict_type()" in region and "waiting on the weight sync barrier" in region


def test_a_real_error_keeps_the_region_to_its_own_lines():
    log = LOG + "RuntimeError: Error(s) in loading state_dict for BertModel:\n"
    root, region = root_and_region(log)
    assert root.exc_type == "RuntimeError"
    assert "loading state_dict" in region and "FSDP" not in region


def test_the_lines_another_process_printed_beside_an_error_are_not_its_region():
    # fresh11-long: a user's report pasted at the end of a verl job log, right under a Ray worker's
    # start-up FutureWarning (github.com/unslothai/unsloth, "… not supported yet!").
    log = (
        "(WorkerDict pid=4123) Actor use_remove_padding=False\n"
        "(WorkerDict pid=4123) no hf weight loader need to be updated\n"
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and "
        "FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict().\n"
        "`NotImplementedError: Unsloth: Writer/palmyra-med-20b not supported yet!`\n"
    )
    root, region = root_and_region(log)
    assert root.exc_type == "NotImplementedError"
    assert "palmyra-med-20b" in region and "FSDP" not in region and "hf weight loader" not in region


def test_the_same_process_lines_around_an_error_stay_in_its_region():
    log = (
        "[rank0]: loading shard 3 of 8 from /ckpt/actor\n"
        "(WorkerDict pid=77) heartbeat ok\n"
        "[rank0]: RuntimeError: Error(s) in loading state_dict for Qwen2ForCausalLM:\n"
    )
    root, region = root_and_region(log)
    assert root.exc_type == "RuntimeError"
    assert "loading shard 3 of 8" in region and "heartbeat" not in region
