"""Extraction from pastes as users really make them (examples from public issue threads)."""

from __future__ import annotations

from kb.signature import signature_from_text


def root_of(text: str) -> tuple[str, str, str]:
    sig, _ = signature_from_text(text)
    return sig.exc_type, sig.pattern, sig.raw_message


def test_traceback_cut_before_its_exception_line_is_named_by_its_raise_statement():
    text = (
        '  File "/root/miniconda3/envs/dschat/lib/python3.9/site-packages/deepspeed/runtime/zero/'
        'partitioned_param_coordinator.py", line 186, in reset_step\n'
        '    raise RuntimeError(f"still have inflight params "\n'
    )
    exc, _, message = root_of(text)
    assert exc == "RuntimeError" and message.startswith("still have inflight params")


def test_debugger_exception_report_takes_its_message_from_the_next_line():
    text = (
        "发生异常: ValueError\n"
        "You are attempting to perform batched generation with padding_side='right' this may lead to unexpected "
        "behaviour for Flash Attention version of Qwen2VL.\n"
        '  File "/root/src/open_r1/trainer/grpo_trainer.py", line 366, in _get_per_token_logps\n'
        "    logits = model(input_ids).logits\n"
    )
    exc, _, message = root_of(text)
    assert exc == "ValueError" and "padding_side='right'" in message


def test_error_quoted_in_prose_with_backticks():
    text = (
        "I am getting this issue with `torch-2.5.1+cu121`\n"
        "`ImportError: /dev/shm/pip-build-env/overlay/lib/python3.12/site-packages/torch/lib/../../nvidia/cusparse/"
        "lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12`\n"
    )
    exc, _, message = root_of(text)
    assert exc == "ImportError" and message.endswith("libnvJitLink.so.12")


def test_error_inside_a_fenced_block():
    text = (
        "```\n"
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: "
        "49152. Reducing block sizes or `num_stages` may help.\n"
        "```\n"
    )
    exc, _, message = root_of(text)
    assert exc == "OutOfResources" and "```" not in message


def test_unknown_bracketed_and_multiplexer_prefixes():
    assert root_of("[rankx]: RuntimeError: torch.cat(): expected a non-empty list of Tensors")[0] == "RuntimeError"
    assert root_of("[default3]:ValueError: too many values to unpack")[0] == "ValueError"
    assert root_of("worker-3  | KeyError: 'problem'")[0] == "KeyError"


def test_compiler_error_is_a_specific_failure_ahead_of_the_traceback_it_causes():
    text = (
        "/tmp/tmpltteoigt/main.c:5:10: fatal error: Python.h: No such file or directory\n"
        "    5 | #include <Python.h>\n"
        "      |          ^~~~~~~~~~\n"
        "compilation terminated.\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
        "    return _run_code(code, main_globals, None,\n"
    )
    _, pattern, message = root_of(text)
    assert pattern == "compiler_error" and "Python.h: No such file or directory" in message


def test_the_same_error_from_several_ranks_is_one_root_with_no_copies_in_its_context():
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    sig, choice = signature_from_text("\n".join(f"[rank{r}]: {line}" for r in range(8)))
    assert sig.exc_type == "RuntimeError" and not choice.secondary


def test_github_actions_timestamps_are_not_part_of_the_message():
    text = "2026-07-30T10:35:18.6494363Z ModuleNotFoundError: No module named 'flash_attn'"
    exc, _, message = root_of(text)
    assert exc == "ModuleNotFoundError" and message == "No module named 'flash_attn'"
