from __future__ import annotations

from kb.signature import (
    compact_text,
    exception_relation,
    mask_message,
    module_of,
    signature_from_text,
    tokenize,
)

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


def test_masking_removes_what_differs_between_users():
    msg = "CUDA out of memory. Tried to allocate 4.64 GiB at /root/a/b.py pid=7773 addr 0x7f97c234c290 vllm 0.11.0"
    assert (
        mask_message(msg) == "CUDA out of memory. Tried to allocate <NUM> GiB at <PATH> pid=<PID> addr <HEX> vllm <VER>"
    )


def test_masking_drops_library_boilerplate():
    masked = mask_message(
        "CUDA error: no kernel image is available CUDA kernel errors might be asynchronously reported at some "
        "other API call, so the stacktrace below might be incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    )
    assert masked == "CUDA error: no kernel image is available"


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


def test_frames_are_module_and_function_with_site_packages_stripped():
    assert (
        module_of("/usr/local/lib/python3.11/site-packages/vllm/v1/core/kv_cache_utils.py")
        == "vllm.v1.core.kv_cache_utils"
    )
    assert module_of("/home/u/TTRL/verl/verl/trainer/main_ppo.py") == "verl.trainer.main_ppo"
    assert (
        module_of("C:\\Py\\site-packages\\transformers\\tokenization_utils_fast.py")
        == "transformers.tokenization_utils_fast"
    )


def test_framework_is_guessed_from_frames():
    sig, _ = signature_from_text(
        'Traceback (most recent call last):\n  File "/x/site-packages/trl/trainer/grpo_trainer.py", line 1, in f\n'
        "  File \"/x/site-packages/torch/nn/modules/module.py\", line 2, in g\nKeyError: 'solution'"
    )
    assert sig.framework == "trl"


def test_exception_hierarchy_relates_parents_and_children():
    assert exception_relation("OutOfMemoryError", "OutOfMemoryError") == 1.0
    assert exception_relation("OutOfMemoryError", "RuntimeError") == 0.6
    assert exception_relation("ModuleNotFoundError", "ImportError") == 0.6
    assert exception_relation("ValueError", "KeyError") == 0.0


def test_tokens_split_identifiers_and_chinese():
    tokens = tokenize("max_num_batched_tokens LLMEngine 训练卡住")
    assert {"max_num_batched_token", "batch", "llmengine", "engine", "训练", "卡住"} <= set(tokens)


def test_compact_text_stays_short_for_long_tracebacks():
    frames = "".join(f'  File "/x/site-packages/verl/m{i}.py", line {i}, in f{i}\n    call()\n' for i in range(40))
    sig, _ = signature_from_text("Traceback (most recent call last):\n" + frames + "RuntimeError: boom happened here")
    text = compact_text(sig)
    assert "RuntimeError: boom happened here" in text
    assert len(text.split()) < 60
