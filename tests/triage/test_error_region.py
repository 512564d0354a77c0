"""The paste's error region: the lines raw-text retrieval reads (triage.lexical.error_region)."""

from __future__ import annotations

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


def test_a_warning_alone_does_not_hide_how_the_log_ends():
    _, choice = signature_from_text(LOG)
    assert choice.root is not None and choice.root.kind == "warning"
    region = error_region(LOG, (choice.root,), telling_lines(LOG))
    assert "FSDP.state_dict_type()" in region and "waiting on the weight sync barrier" in region


def test_a_real_error_keeps_the_region_to_its_own_lines():
    log = LOG + "RuntimeError: Error(s) in loading state_dict for BertModel:\n"
    _, choice = signature_from_text(log)
    assert choice.root is not None and choice.root.exc_type == "RuntimeError"
    region = error_region(log, (choice.root,), telling_lines(log))
    assert "loading state_dict" in region and "FSDP" not in region
