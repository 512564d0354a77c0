from __future__ import annotations

from kb.signature import signature_from_text

SWIFT_ROLLOUT = """\
[WARNING:swift] max_model_len(2048) - num_tokens(5221) < max_tokens(1024). Setting max_tokens: -3173
[ERROR:swift] Method execution failed: async_infer
Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/vllm/sampling_params.py", line 397, in _verify_args
    raise ValueError(
ValueError: max_tokens must be at least 1, got -3173.
ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/workspace/ms-swift/swift/llm/infer/rollout.py", line 386, in infer
    all_outputs = list(chain.from_iterable(all_outputs))
TypeError: 'NoneType' object is not iterable
[rank0]: Traceback (most recent call last):
[rank0]:   File "/workspace/ms-swift/swift/trainers/rlhf_trainer/vllm_client.py", line 171, in infer
[rank0]:     raise RuntimeError(f'Multiple errors: {all_errors}')
[rank0]: RuntimeError: Multiple errors: [Exception('Server 0 failed: 500, Internal Server Error')]
"""


def test_root_is_the_first_cause_not_its_consequences():
    sig, choice = signature_from_text(SWIFT_ROLLOUT)
    assert sig.exc_type == "ValueError"
    assert sig.message == "max_tokens must be at least 1, got <NUM>."
    assert any("consequences" in n for n in choice.notes)
    assert any("Multiple errors" in c for c in sig.context)


def test_only_a_symptom_says_so():
    sig, choice = signature_from_text(
        "RuntimeError: Multiple errors: [Exception('Server 0 failed: 500, Internal Server Error')]"
    )
    assert sig.exc_type == "RuntimeError"
    assert any("symptom" in n for n in choice.notes)


def test_repeated_rank_output_is_one_error():
    block = (
        "[rank{r}]: Traceback (most recent call last):\n"
        '[rank{r}]:   File "/opt/conda/lib/python3.11/site-packages/accelerate/accelerator.py", line 1472, in prepare\n'
        "[rank{r}]:     raise ValueError(\n"
        "[rank{r}]: ValueError: You can't train a model that has been loaded with `device_map='auto'`\n"
    )
    sig, choice = signature_from_text(block.format(r=0) + block.format(r=1) + block.format(r=2))
    assert sig.frames == ("accelerate.accelerator:prepare",)
    assert choice.secondary == ()


def test_torchrun_summary_points_at_the_kill_not_the_wrapper():
    log = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
        "Root Cause (first observed failure):\n"
        "  exitcode  : -9 (pid: 1234)\n"
        "  traceback : Signal 9 (SIGKILL) received by PID 1234\n"
    )
    sig, _ = signature_from_text(log)
    assert sig.pattern == "killed_by_signal"


def test_a_terse_error_is_not_called_a_symptom():
    sig, choice = signature_from_text("KeyError: 'foo'")
    assert sig.exc_type == "KeyError"
    assert not any("symptom" in n for n in choice.notes)


def test_the_consequences_note_names_a_later_error_in_words_not_by_the_parsers_name():
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        'INFO:     127.0.0.1:50312 - "POST /infer/ HTTP/1.1" 500 Internal Server Error\n'
    )

    notes = " ".join(signature_from_text(log)[1].notes)

    assert "consequences" in notes and "_" not in notes.split("consequences")[0]
