from __future__ import annotations

from kb.logclean import clean_line, process_tag
from kb.logpatterns import metric_anomaly
from kb.logscan import scan_log

RAY_WRAPPED = """\
Error executing job with overrides: ['trainer.n_gpus_per_node=1']
Traceback (most recent call last):
  File "/root/TinyZero/verl/trainer/main_ppo.py", line 103, in main
    ray.get(main_task.remote(config))
  File "/root/miniconda3/lib/python3.12/site-packages/ray/_private/worker.py", line 919, in get_objects
    raise value.as_instanceof_cause()
ray.exceptions.RayTaskError(RuntimeError): ray::main_task() (pid=7773, ip=172.17.0.2)
  File "/root/TinyZero/verl/trainer/main_ppo.py", line 188, in main_task
    trainer.init_workers()
ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.critic_init_model() (pid=8238, ip=172.17.0.2)
  File "/root/miniconda3/lib/python3.12/site-packages/torch/distributed/utils.py", line 326, in _sync_params_and_buffers
    dist._broadcast_coalesced(
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.

Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.
"""

CHAINED = """\
Traceback (most recent call last):
  File "/x/asyncio/locks.py", line 212, in wait
    await fut
asyncio.exceptions.CancelledError

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/x/site-packages/wandb/sdk/mailbox/handles.py", line 150, in wait_async
    raise TimeoutError(
TimeoutError: Timed out waiting for response on sjiuf09ofo8t

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/x/site-packages/wandb/sdk/wandb_init.py", line 959, in init
    raise CommError(
wandb.errors.errors.CommError: Run initialization has timed out after 90.0 sec.
"""

RANK_PREFIXED = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/usr/local/lib/python3.11/site-packages/swift/llm/argument/rlhf_args.py", line 299, in _check_grpo
[rank0]:     raise ValueError('GRPO with vLLM is not compatible with `device_map`. '
[rank0]: ValueError: GRPO with vLLM is not compatible with `device_map`.
[rank1]: Traceback (most recent call last):
[rank1]:   File "/usr/local/lib/python3.11/site-packages/swift/llm/argument/rlhf_args.py", line 299, in _check_grpo
[rank1]:     raise ValueError('GRPO with vLLM is not compatible with `device_map`. '
[rank1]: ValueError: GRPO with vLLM is not compatible with `device_map`.
"""


def test_ray_wrapped_traceback_yields_the_inner_exception_with_its_frames():
    blocks = [b for b in scan_log(RAY_WRAPPED) if b.kind == "traceback"]
    assert len(blocks) == 1
    block = blocks[0]
    assert block.exc_type == "RuntimeError"
    assert block.message.startswith("CUDA error: no kernel image is available")
    assert block.wrappers == ("RayTaskError", "RayTaskError")
    assert [f.function for f in block.frames][-1] == "_sync_params_and_buffers"
    assert (block.line_start, block.line_end) == (2, 14)


def test_hydra_line_is_a_symptom_not_the_error():
    hydra = [b for b in scan_log(RAY_WRAPPED) if b.kind == "error_line"]
    assert hydra and hydra[0].symptom


def test_chained_tracebacks_are_linked_cause_then_during_handling():
    blocks = [b for b in scan_log(CHAINED) if b.kind == "traceback"]
    assert [b.short_type for b in blocks] == ["CancelledError", "TimeoutError", "CommError"]
    assert blocks[1].chain_relation == "cause" and blocks[1].chain_prev == 0
    assert blocks[2].chain_relation == "during_handling" and blocks[2].chain_prev == 1


def test_rank_prefixes_are_stripped_and_each_rank_still_reports_its_block():
    blocks = scan_log(RANK_PREFIXED)
    assert [b.short_type for b in blocks] == ["ValueError", "ValueError"]
    assert blocks[0].prefix == "[rank0]:"
    assert blocks[0].frames[0].path.endswith("swift/llm/argument/rlhf_args.py")


def test_clean_line_removes_ansi_progress_bars_and_launcher_prefixes():
    assert clean_line("\x1b[36m(main_task pid=3523385)\x1b[0m ValueError: boom").text == "ValueError: boom"
    assert clean_line("(WorkerDict pid=8238) hello").prefix == "(WorkerDict pid=8238)"
    assert clean_line("vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: x").text == "ValueError: x"
    assert clean_line("50%|#####     | 5/10 [00:01<00:01, 3.2it/s]\rRuntimeError: late").text == "RuntimeError: late"


def test_a_colour_code_between_a_worker_tag_and_a_logger_header_leaves_both_prefixes():
    # A vLLM user's paste (a public issue): the colour code's escape character was lost on the way.
    pasted = (
        "> (VllmWorker rank=0 pid=281) [0;0m WARNING 05-15 11:07:08 [fused_moe.py:659] Using default MoE config. "
        "Performance might be sub-optimal! Config file not found at /opt/vllm/configs/E=16,N=1024.json"
    )
    for line in (pasted, pasted.replace("[0;0m", "\x1b[0;0m")):
        cleaned = clean_line(line)
        assert cleaned.text.startswith("Using default MoE config.")
        assert cleaned.level == "WARNING"
        assert process_tag(cleaned.prefix) == "(VllmWorker rank=0 pid=281)"
    # Indentation after a tag is kept: a frame line stays a frame line.
    assert clean_line('[rank0]: \x1b[31m  File "a.py", line 1, in f').text == '  File "a.py", line 1, in f'


def test_docker_buildkit_step_and_time_are_a_prefix():
    # A user's `docker build` output (a public issue): BuildKit puts the step and its seconds in front.
    log = (
        "#0 7.771 Collecting torch>=1.6.0 (from sentence-transformers==2.2.1->-r requirements.txt (line 1))\n"
        "#0 11.07 ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated "
        "the package versions, please update the hashes.\n"
    )
    [block] = scan_log(log)
    assert (block.kind, block.line_start) == ("error_line", 2)
    assert block.message.startswith("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES")
    # A markdown heading or a numbered comment is no BuildKit line.
    assert clean_line("#1 priority: fix the loader").text == "#1 priority: fix the loader"


def test_error_lines_without_tracebacks_are_found_and_named():
    log = (
        "./train.sh: line 6: data.val_batch_size=1312: command not found\n"
        "gpu617:22841:22841 [0] bootstrap.cc:37 NCCL WARN Bootstrap : no socket interface found\n"
        "OSError: [Errno 28] No space left on device\n"
    )
    kinds = [(b.kind, b.pattern) for b in scan_log(log)]
    assert kinds == [("error_line", "command_not_found"), ("error_line", "nccl_warn"), ("exception_line", "")]


def test_code_and_informational_lines_are_not_errors():
    log = (
        'raise ValueError("Invalid characters in equation.")\n'
        "    except Exception as e:\n"
        "(WorkerDict pid=4123) WARNING 08-10 21:22:23 config.py:380] async output processor cannot be used\n"
        "INFO 05-19 17:20:56 __init__.py:190] Automatically detected platform cuda.\n"
    )
    assert [b for b in scan_log(log) if b.kind != "warning"] == []


def test_metrics_lines_name_the_training_failure():
    assert metric_anomaly({"reward_std": 0.0, "frac_reward_zero_std": 1.0, "loss": 0.0, "grad_norm": 0.0}) == (
        "no_learning_signal"
    )
    assert metric_anomaly({"completions/clipped_ratio": 1.0, "reward_std": 0.3}) == "completions_clipped"
    assert metric_anomaly({"loss": 0.0, "reward_std": 0.35, "grad_norm": 0.1}) == "grpo_zero_loss_expected"
    assert metric_anomaly({"loss": 0.2, "reward_std": 0.35}) == ""


def test_squashed_frames_on_one_line_are_split():
    log = 'Traceback (most recent call last):  File "/a/main.py", line 10, in <module>\n    from x import y\nImportError: nope'
    block = scan_log(log)[0]
    assert block.exc_type == "ImportError" and block.frames[0].function == "<module>"


def test_megabyte_lines_do_not_stall_the_scanner():
    # Each of these shapes once made a pattern backtrack quadratically over the line.
    shapes = [
        "x" * 200_000,
        "a:" * 100_000,
        "/a" * 100_000,
        "{" * 100_000,
        " " * 200_000 + "x",
        "a" * 5000 + ".py:1: UserWarning: w",
    ]
    log = "\n".join(shapes) + "\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    blocks = [b for b in scan_log(log) if b.kind != "warning"]
    assert blocks[-1].message.startswith("CUDA error: an illegal memory access")


def test_a_markdown_fence_on_the_error_line_is_not_part_of_the_message():
    from kb.signature import signature_from_text

    pasted = '```\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\nValueError: bad value```\n'
    assert signature_from_text(pasted)[0].headline == "ValueError: bad value"
    assert signature_from_text("RuntimeError: oops ```python\n")[0].headline == "RuntimeError: oops"


def test_exception_after_a_log_header_reads_text_with_leading_spaces():
    from kb.exceptionlines import exception_after_header

    exc = exception_after_header("   12:00:00 ERROR ValueError: reward is NaN")
    assert exc is not None and exc.group("type") == "ValueError"
    assert exception_after_header("   ") is None
