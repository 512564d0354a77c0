"""Extraction from pastes as users really make them (examples from public issue threads)."""

from __future__ import annotations

import pytest

from kb.logclean import clean_line
from kb.logscan import scan_log
from kb.rootcause import select_root
from kb.signature import signature_from_text, telling_lines
from triage.lexical import raw_tokens


def root_of(text: str) -> tuple[str, str, str]:
    sig, _ = signature_from_text(text)
    return sig.exc_type, sig.pattern, sig.raw_message


CUT_AT_RAISE = [
    # DeepSpeed: the literal part of the `raise` under the last frame is the message
    (
        "/root/miniconda3/envs/dschat/lib/python3.9/site-packages/deepspeed/runtime/zero/"
        'partitioned_param_coordinator.py", line 186, in reset_step',
        '    raise RuntimeError(f"still have inflight params "',
        "RuntimeError",
        "still have inflight params",
    ),
    # peft: the exception line glued onto its `raise` by a lost line break (fresh's undocumented GPTQ report)
    (
        '/x/site-packages/peft/tuners/lora/model.py", line 317, in _create_new_module',
        "    raise ValueError(ValueError: Target module QuantLinear() is not supported. Currently, only the "
        "following modules are supported: `torch.nn.Linear`, `torch.nn.Embedding`.",
        "ValueError",
        "Target module QuantLinear() is not supported.",
    ),
]


@pytest.mark.parametrize(("frame", "raise_line", "exc_type", "message"), CUT_AT_RAISE)
def test_traceback_cut_before_its_exception_line_is_named_by_its_raise_statement(
    frame: str, raise_line: str, exc_type: str, message: str
) -> None:
    exc, _, got = root_of(f'  File "{frame}\n{raise_line}\n')
    assert exc == exc_type and got.startswith(message)


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
    # ms-swift's GRPO in a Chinese VS Code, pasted after a backtick, with the note on where it paused.
    text = (
        "`发生异常: KeyError       (note: full exception trace is shown but execution is paused at: "
        "_run_module_as_main)\n"
        "'prompt'\n"
        '  File "D:\\Anaconda\\anaconda\\envs\\qwen\\Lib\\site-packages\\trl\\trainer\\grpo_trainer.py", line 519, '
        "in _prepare_inputs\n"
        '    prompts = [x["prompt"] for x in inputs]\n'
    )
    assert root_of(text)[0::2] == ("KeyError", "'prompt'")


def test_error_quoted_in_prose_with_backticks():
    text = (
        "I am getting this issue with `torch-2.5.1+cu121`\n"
        "`ImportError: /dev/shm/pip-build-env/overlay/lib/python3.12/site-packages/torch/lib/../../nvidia/cusparse/"
        "lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12`\n"
    )
    exc, _, message = root_of(text)
    assert exc == "ImportError" and message.endswith("libnvJitLink.so.12")


# huggingface_hub's HTTP errors (a public issue of sap-ai-research's contexttab): the first line is
# the same for every 404 or 403, what failed is under a blank line, and the request id is new every time.
HUB_REVISION_NOT_FOUND = (
    "huggingface_hub.errors.RevisionNotFoundError: 404 Client Error. (Request ID: "
    "Root=1-684bd970-1580de85616085897ca5a570;8c78d1b2-4418-4eec-8316-bea62edac1ef)\n"
    "\n"
    "Revision Not Found for url: https://huggingface.co/sap-ai-research/contexttab/resolve/v1.0.0/l2/base.pt.\n"
    "Invalid rev id: v1.0.0\n"
)


def test_the_hubs_http_error_reads_on_past_its_blank_line_without_the_request_id():
    sig, _ = signature_from_text(HUB_REVISION_NOT_FOUND)
    assert sig.exc_type == "RevisionNotFoundError"
    assert "Revision Not Found for url" in sig.raw_message and "Invalid rev id" in sig.raw_message
    assert "Request ID" not in sig.message and "684bd970" not in sig.message
    # Any other exception stops at a blank line, as before.
    assert signature_from_text("ValueError: bad value\n\nsome prose after it\n")[0].raw_message == "bad value"


def test_a_glog_line_after_an_exception_is_not_its_message():
    # vLLM's server dying on a quantization it cannot load (a public vLLM issue): PyTorch's C++
    # warning about the process group, printed on exit by rank 0, is the next line.
    text = (
        "AttributeError: Model PixtralForConditionalGeneration does not support BitsAndBytes quantization yet. "
        "No 'packed_modules_mapping' found.\n"
        "[rank0]:[W324 09:04:36.304912418 ProcessGroupNCCL.cpp:1496] Warning: WARNING: destroy_process_group() "
        "was not called before program exit, which can leak resources.\n"
    )
    message = root_of(text)[2]
    assert message.endswith("No 'packed_modules_mapping' found.") and "destroy_process_group" not in message


def test_nvccs_own_fatal_error_outranks_the_make_lines_after_it():
    # A CUDA extension built for an RTX 4090 with CUDA 11.5 (public fastllm and pointnet2 issues).
    text = (
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
        "make[2]: *** [CMakeFiles/fastllm.dir/build.make:273: CMakeFiles/fastllm.dir/src/devices/cuda/"
        "fastllm-cuda.cu.o] Error 1\n"
        "make[2]: *** Waiting for unfinished jobs....\n"
        "make: *** [Makefile:91: all] Error 2\n"
    )
    _, pattern, message = root_of(text)
    assert pattern == "compiler_error" and "Unsupported gpu architecture 'compute_89'" in message
    text = (
        "I am not very sure why I keep getting this error:\nnvcc fatal: Unsupported gpu architecture 'compute_89'\n\n"
        "**Error occur while running:**\ncd third_party/pointnet2 && python setup.py install\n"
    )
    assert root_of(text)[1] == "compiler_error"


# A command-line tool's own diagnostic, lower case at the start of a line (public uv, pip, PyTorch
# extension and GitHub Actions reports): the error, ahead of the runner's exit code and the build
# tool giving up under it. pip's own code for "a subprocess failed" is not: its output says why.
CLI_DIAGNOSTICS = {
    "uv-above-the-runners-exit-code": (
        "$ uv pip install -U pip setuptools wheel invoke\n"
        "error: No Python default installation found in virtual environments\n"
        "Error: Process completed with exit code 2.\n",
        ("log_error", "No Python default installation found in virtual environments"),
    ),
    "pip-refusing-an-externally-managed-environment": (
        "error: externally-managed-environment\n\n"
        "× This environment is externally managed\n"
        "╰─> To install Python packages system-wide, try apt install\n"
        "    python3-xyz, where xyz is the package you are trying to\n",
        ("log_error", "externally-managed-environment"),
    ),
    "indented-in-pips-build-output": (
        "This is part of the error. The error content is too long, so I only brought part of it.\n"
        '      error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ Build Tools": \n'
        "I installed Visual Studio 2022 Community Edition and only installed the basics. What should I add?\n",
        ("log_error", "Microsoft Visual C++ 14.0 or greater is required"),
    ),
    "compiler-error-without-its-file-prefix-above-setuptools": (
        "~bash make.sh:\n"
        " fatal error: THC/THC.h: No such file or directory\n"
        "    7 | #include <THC/THC.h>\n"
        "      |          ^~~~~~~~~~~\n"
        "compilation terminated.\n"
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n",
        ("compiler_error", "THC/THC.h: No such file or directory"),
    ),
    "setuptools-giving-up-alone": (
        "error: command '/usr/bin/gcc' failed with exit code 1\n",
        ("build_failed", "failed with exit code 1"),
    ),
    "pips-wrapper-code-above-the-cmake-error": (
        "  error: subprocess-exited-with-error\n"
        "  \n"
        "  × Building wheel for sentencepiece (pyproject.toml) did not run successfully.\n"
        "  │ exit code: 1\n"
        "  ╰─> [5 lines of output]\n"
        "      CMake Error at CMakeLists.txt:23 (project):\n"
        "        No CMAKE_CXX_COMPILER could be found.\n",
        ("cmake_error", "CMake Error at CMakeLists.txt:23 (project): No CMAKE_CXX_COMPILER could be found."),
    ),
    # llama.cpp (an ollama issue): its functions' "error: failed to load model" lines are no
    # argparse errors (no usage line, not argparse's words); the first error says why.
    "llama-cpp-function-names-before-error": (
        "main: seed  = 1723019120\n"
        "llama_model_load: error loading model: tensor 'blk.2.ffn_down.weight' data is not within the file "
        "bounds, model is corrupted or incomplete\n"
        "llama_load_model_from_file: failed to load model\n"
        "llama_init_from_gpt_params: error: failed to load model 'models\\gemma-1.1-7b-it.Q4_K_M.gguf'\n"
        "main: error: unable to load model\n",
        ("log_error", "data is not within the file bounds"),
    ),
    # gcc's linker driver giving up (a Triton build, shared train set): the build's own pattern, no
    # argparse error (which would outrank the linker's `cannot find -lcuda` of another paste).
    "collect2-is-the-build-giving-up": (
        "collect2: error: ld returned 1 exit status\n",
        ("build_failed", "ld returned 1 exit status"),
    ),
    # Open MPI's shared-memory transport in a container (an ADIOS2 issue, behind --tag-output):
    # a failed system call by its number, the only error among the program's own output.
    "errno-of-a-failed-system-call": (
        "[1,0]<stdout>: bef begin_step\n"
        "[1,1]<stdout>: bef begin_step\n"
        "[1,1]<stderr>:[30678029a2d4:12987] Read -1, expected 32416, errno = 1\n"
        "[1,2]<stderr>:[30678029a2d4:12988] Read -1, expected 32416, errno = 1\n"
        "[1,4]<stdout>: aft begin_step\n",
        ("os_error", "Read -1, expected 32416, errno = 1"),
    ),
}


@pytest.mark.parametrize(("paste", "expected"), CLI_DIAGNOSTICS.values(), ids=CLI_DIAGNOSTICS.keys())
def test_a_command_line_tools_own_error_line_is_the_root(paste: str, expected: tuple[str, str]) -> None:
    _, pattern, message = root_of(paste)
    assert (pattern, expected[1] in message) == (expected[0], True), message


# A TRL issue and a Composer issue: the error put between ``` and ``` on one line, which GitHub
# shows as inline code; the opening backticks are no fence and no word of the error.
INLINE_CODE_ERRORS = [
    (
        "```ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' "
        "(/usr/local/lib/python3.10/dist-packages/transformers/__init__.py)```",
        "ImportError",
        "cannot import name 'top_k_top_p_filtering'",
    ),
    (
        "Then there will be error in ```node1```:\n```FileNotFoundError: [Errno 2] No such file or directory: "
        "'/tmp/tmp3o00dg6a/checkpoint/composer_states.pt'```\n",
        "FileNotFoundError",
        "composer_states.pt'",
    ),
]


@pytest.mark.parametrize(("text", "exc", "words"), INLINE_CODE_ERRORS)
def test_an_error_line_wrapped_in_triple_backticks_on_its_own_line_is_inline_code(text, exc, words):
    got, pattern, message = root_of(text)
    assert (got, pattern) == (exc, "") and words in message and "`" not in message


def test_a_fence_that_opens_a_block_is_still_a_fence():
    assert telling_lines("```python\nboom\n```") == ["boom"]


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
    assert root_of("stderr: [rank0]: NotImplementedError: Cannot copy out of meta tensor; no data!")[0] == (
        "NotImplementedError"
    )


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


def test_notebook_traceback_cut_before_its_exception_line():
    text = (
        "---------------------------------------------------------------------------\n"
        "RuntimeError                              Traceback (most recent call last)\n"
        "[/tmp/ipython-input-2426931006.py](https://localhost:8080/#) in <cell line: 0>()\n"
        "      1 from datasets import load_dataset\n"
        '----> 2 dataset = load_dataset("ds4sd/DocLayNet")\n'
        "\n"
        "3 frames\n"
        "[/usr/local/lib/python3.11/dist-packages/datasets/load.py](https://localhost:8080/#) in "
        "dataset_module_factory(path, revision)\n"
        '--> 989                 raise RuntimeError(f"Dataset scripts are no longer supported, but found {filename}")\n'
    )
    exc, _, message = root_of(text)
    assert exc == "RuntimeError" and message == "Dataset scripts are no longer supported, but found"


def test_notebook_traceback_with_its_exception_line_reads_that_line():
    text = (
        "KeyError                                  Traceback (most recent call last)\n"
        "----> 1 x = batch['input_ids']\n"
        "\n"
        "KeyError: 'input_ids'\n"
    )
    exc, _, message = root_of(text)
    assert exc == "KeyError" and message == "'input_ids'"


def test_warnings_pasted_in_fences_with_a_complaint_become_a_chat_entry():
    from ingest.parsers.turns import Turn, pair_turns

    user = (
        "```D:\\env\\lib\\site-packages\\transformers\\generation\\configuration_utils.py:362: UserWarning: "
        "`do_sample` is set to `False`. However, `temperature` is set to `0.7`\n"
        "  warnings.warn(```\n"
        "\n"
        "Training crashed with this. Any idea?"
    )
    turns = [Turn("user", user, 1, 5, 2, 5), Turn("assistant", "Set do_sample=True.", 6, 7, 7, 7)]
    assert [c.remedy_markdown for c in pair_turns(turns)] == ["Set do_sample=True."]
    # Pasted code that merely mentions errors is not a report.
    code = Turn(
        "user",
        "import re\n\ndef extract(s):\n    # fail if the error key is missing\n    return s['error']",
        1,
        5,
        2,
        5,
    )
    assert pair_turns([code, turns[1]]) == []


def test_error_line_in_markdown_bold_from_a_chat():
    text = (
        "Traceback (most recent call last):\n"
        '  File "D:\\work\\qyQwen\\minimind-master\\5-dpo_train.py", line 49, in <module>\n'
        "    dpo_trainer = DPOTrainer(\n"
        '  File "D:\\Anaconda3\\envs\\minni\\lib\\site-packages\\**transformers\\utils\\deprecation.py**", line 165, '
        "in wrapped_func\n"
        "    return func(*args, **kwargs)\n"
        "**TypeError: __init__() got an unexpected keyword argument 'beta'**\n"
    )
    sig, _ = signature_from_text(text)
    assert sig.exc_type == "TypeError" and sig.raw_message.endswith("'beta'")
    assert sig.frames[0] == "transformers.utils.deprecation:wrapped_func"


def test_exception_line_that_lost_its_type_under_the_last_frame_is_the_message():
    # pytest's "E   " marker, type cut off: the line under the last frame's source is the exception.
    text = (
        "```bash\n"
        '  File "/miniconda3/envs/py39/lib/python3.9/site-packages/deepspeed/autotuning/scheduler.py", line 8, '
        "in <module>\n"
        "    from numpy import BUFSIZE\n"
        "E   cannot import name 'BUFSIZE' from 'numpy' (/miniconda3/envs/py39/lib/python3.9/site-packages/numpy/"
        "__init__.py)\n"
        "```\n"
    )
    exc, _, message = root_of(text)
    assert exc == "" and message.startswith("cannot import name 'BUFSIZE' from 'numpy'")


def test_a_launcher_trailer_under_a_cut_traceback_is_not_its_message():
    text = (
        '  File "/root/train/online_dpo.py", line 88, in main\n'
        "    trainer.train()\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n"
    )
    sig, choice = signature_from_text(text)
    assert choice.root is not None and choice.root.kind == "truncated_traceback" and sig.raw_message == ""


def test_exception_line_behind_a_log_header_of_unknown_format():
    text = (
        "[16:10:33] stdout/INFO  triton.runtime.errors.OutOfResources: out of resource: shared memory, "
        "Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.\n"
        "[16:10:43] stdout/ERROR  [2026-08-28|16:10:43|FrontendAPI] ERROR    Backend worker is gone and cannot be "
        "restarted; stopping the API server\n"
    )
    exc, _, message = root_of(text)
    assert exc == "OutOfResources" and message.startswith("out of resource: shared memory")
    assert root_of("2024-05-01 10:00:00,123 - trainer - ERROR - ValueError: reward is NaN")[0] == "ValueError"
    assert root_of("ERROR:root:KeyError: 'prompt'")[0] == "KeyError"


def test_an_exception_named_in_a_log_lines_prose_is_not_an_exception_line():
    _sig, choice = signature_from_text("INFO 10:00:00 retrying after ConnectionError: reset by peer\n")
    assert choice.root is None


# A cloud job's log pasted with its line breaks lost (a numpy issue): the logger's headers stay on the
# one line, and the user quotes the error again in backticks at its end.
COLLAPSED_JOB_LOG = (
    "when I am trying to use pickle.loads a scale(most recent call last): 2024-07-15 10:20:22.594 "
    'workerpool0-0 File "/app/src/inference.py", line 44, in read_from_gcs 2024-07-15 10:20:22.594 '
    "workerpool0-0 scaler = pickle.loads(pickle_content) 2024-07-15 10:20:22.594 workerpool0-0 "
    "ModuleNotFoundError: No module named 'numpy._core'r data I am receiving "
    "`ModuleNotFoundError: No module named 'numpy._core'`\n"
)


def test_an_exception_quoted_as_code_after_log_headers_on_a_collapsed_line():
    assert root_of(COLLAPSED_JOB_LOG)[::2] == ("ModuleNotFoundError", "No module named 'numpy._core'")
    # Unquoted after a logger's clock time, it is still the logger's narration.
    _sig, choice = signature_from_text("10:00:00 worker-1 lost its link to the store, ConnectionError: reset by peer\n")
    assert choice.root is None


def test_an_error_quoted_in_a_report_under_rank_prefixes():
    text = (
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() "
        "are being deprecated.\n"
        '[rank0]: "ValueError: The model did not return a loss from the inputs, only the following keys: logits. '
        'For reference, the inputs it received are input_ids,attention_mask."\n'
    )
    exc, _, message = root_of(text)
    assert exc == "ValueError" and message.startswith("The model did not return a loss") and '"' not in message


def test_argparse_error_pasted_without_its_program_name():
    text = (
        "`Deepspeed` 全量训练train.py报错：\n\n"
        "[rank0]: `error: unrecognized arguments: --local_rank=0`\n"
        "[rank1]: `error: unrecognized arguments: --local_rank=1`\n"
    )
    _, pattern, message = root_of(text)
    assert pattern == "argparse_error" and message.startswith("error: unrecognized arguments: --local_rank")
    # "error:" with any other wording still needs the program name in front of it
    assert root_of("error: see the log above\n")[1] != "argparse_error"


def test_a_programs_error_line_is_argparses_only_in_its_words_or_under_its_usage():
    # A script's own parser.error() message, under the usage line argparse prints first.
    usage = "usage: train.py [-h] [--config CONFIG]\ntrain.py: error: config file missing a model section\n"
    assert root_of(usage)[1] == "argparse_error"
    # Argparse's own words need no usage line (a paste often drops it) ...
    assert root_of("grpo.py: error: the following arguments are required: --dataset_name\n")[1] == "argparse_error"
    # ... and a compiler driver's error has neither (fresh26, Apple clang under torch.compile).
    assert root_of("clang: error: unsupported option '-fopenmp'\n")[1] == "log_error"


def test_json_log_records_are_read_by_their_message_or_the_traceback_they_carry():
    record = (
        '{"ts": "2025-01-01T10:00:00Z", "level": "error", "msg": "RuntimeError: CUDA error: an illegal memory access"}'
    )
    assert root_of(record)[0] == "RuntimeError"
    with_exc = (
        '{"level": "ERROR", "message": "training failed", "exc_info": "Traceback (most recent call last):\\n'
        '  File \\"a.py\\", line 3, in f\\n    g()\\nValueError: reward is NaN"}'
    )
    exc, _, message = root_of(with_exc)
    assert exc == "ValueError" and message == "reward is NaN"
    # a printed Python dict is not a JSON record and stays as it was
    assert root_of("{'lr': 1e-05, 'error': 'none'}")[0] == ""


def test_slurm_reports_name_what_the_scheduler_did():
    oom = (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=123.0. Some of the step tasks have been OOM Killed.\n"
        "srun: error: node01: task 3: Exited with exit code 1\n"
    )
    assert root_of(oom)[1] == "host_oom"
    timeout = "slurmstepd: error: *** JOB 4242 ON gpu-node-07 CANCELLED AT 2025-01-01T10:00:00 DUE TO TIME LIMIT ***"
    assert root_of(timeout)[1] == "job_time_limit"
    sig, choice = signature_from_text("srun: error: node01: task 3: Exited with exit code 1\n")
    assert sig.pattern == "scheduler_error" and choice.root is not None and choice.root.symptom


def test_exception_behind_a_pod_name_and_iso_timestamp():
    text = "trainer-0 worker 2025-01-01T10:00:00.000Z RuntimeError: NCCL communicator was aborted on rank 3."
    assert root_of(text)[0] == "RuntimeError"


def test_a_warning_raised_as_an_error_under_its_frames_keeps_its_class():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    trainer.train()\n"
        "FutureWarning: `tokenizer` is deprecated and removed, use `processing_class` instead\n"
    )
    exc, _, message = root_of(text)
    assert exc == "FutureWarning" and message.startswith("`tokenizer` is deprecated")


def test_glog_error_lines_from_ray_and_torch_cpp_code():
    ray = (
        "(raylet) [2025-04-21 10:05:37,313 E 959680 959717] file_system_monitor.cc:116: /tmp/ray/session_2025-03-25 "
        "is over 95% full, available space: 42.6695 GB; capacity: 878.4 GB. Object creation will fail if spilling "
        "is required.\n"
    )
    assert root_of(ray)[1] == "log_error"
    assert root_of("E0105 10:00:00.123456 12345 gcs_client.cc:88] Lost connection to GCS\n")[1] == "log_error"
    # the same lines at INFO or WARNING severity are not failures
    assert root_of(ray.replace(" E 959680", " I 959680"))[1] == ""
    assert root_of("W0105 10:00:00.123456 12345 gcs_client.cc:88] Slow response from GCS\n")[1] == ""


def test_a_traceback_indented_as_a_whole_keeps_its_exception_line():
    # a markdown code block made by indenting four spaces, as in many issue reports
    text = (
        "I get this when I start training:\n\n"
        "    Traceback (most recent call last):\n"
        '      File "train.py", line 10, in <module>\n'
        "        trainer.train()\n"
        '      File "/usr/lib/python3/site-packages/trl/trainer/grpo_trainer.py", line 88, in train\n'
        "        self._prepare()\n"
        "    ValueError: GRPO requires num_generations > 1\n\n"
        "Any idea?\n"
    )
    exc, _, message = root_of(text)
    assert exc == "ValueError" and message == "GRPO requires num_generations > 1"
    # cut before its header, from its first frame
    cut = '      File "main.py", line 504, in <module>\n        main(args)\n    RuntimeError: CUDA error: invalid device ordinal\n'
    assert root_of(cut)[0] == "RuntimeError"


def test_cluster_launchers_line_tags():
    lines = [
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "    main()",
        "RuntimeError: NCCL error: unhandled system error",
    ]
    for tag in ("0: ", "[1,0]<stderr>:", "worker-1: ", "10.0.0.12: ", "2024-05-01T10:00:00.123+08:00 "):
        sig, _ = signature_from_text("\n".join(tag + line for line in lines))
        assert (sig.exc_type, sig.frames) == ("RuntimeError", ("train:<module>",)), tag
    # a tool's own name before its message is not a host
    assert root_of("collect2: error: ld returned 1 exit status\n")[2].startswith("collect2: error:")


def test_rich_traceback_box_gives_its_frames_to_the_exception_below_it():
    text = (
        "╭──────────────── Traceback (most recent call last) ────────────────╮\n"
        "│ /root/miniconda3/lib/python3.10/site-packages/trl/scripts/grpo.py:88 in main │\n"
        "│                                                                    │\n"
        "│ ❱ 88 │   trainer = GRPOTrainer(                                    │\n"
        "│ /root/miniconda3/lib/python3.10/site-packages/trl/trainer/grpo_trainer.py:412 in __init__ │\n"
        "╰────────────────────────────────────────────────────────────────────╯\n"
        "TypeError: GRPOTrainer.__init__() got an unexpected keyword argument 'tokenizer'\n"
    )
    sig, choice = signature_from_text(text)
    assert sig.exc_type == "TypeError" and sig.frames == ("trl.trainer.grpo_trainer:__init__", "trl.scripts.grpo:main")
    assert choice.root is not None and choice.root.line_start == 1


def test_logged_error_above_a_traceback_cut_before_its_exception_is_its_message():
    # logger.exception()'s shape (github.com/Eiztrips/ai-responder/issues/8), cut after the frames.
    text = (
        "ERROR:src.ml.model_trainer:Ошибка при обучении модели: TensorBoardCallback requires tensorboard to be "
        "installed. Either update your PyTorch version or install tensorboardX.\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\Users\\vanya\\Projects\\ai-responder\\src\\ml\\model_trainer.py", line 231, in train_model\n'
        "    trainer = Trainer(\n"
        '  File "C:\\Users\\vanya\\venv\\Lib\\site-packages\\transformers\\trainer_callback.py", line 449, in __init__\n'
        "    self.add_callback(cb)\n"
    )
    sig, choice = signature_from_text(text)
    assert "TensorBoardCallback requires tensorboard" in sig.raw_message
    assert sig.frames[0] == "transformers.trainer_callback:__init__"
    assert choice.root is not None and (choice.root.line_start, choice.root.line_end) == (1, 6)


def test_wandb_error_line_is_an_error_but_its_retries_are_not():
    # github.com/momentum-robotics-lab/deformgs/issues/7
    text = (
        "wandb: Network error (ConnectTimeout), entering retry loop.\n"
        "wandb: ERROR Run initialization has timed out after 600 sec. Please try increasing the timeout with the "
        "`init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 719, in <module>\n'
        "    wandb.init(project=args.wandb_project,name=args.wandb_name)\n"
    )
    assert "Run initialization has timed out" in root_of(text)[2]
    assert signature_from_text("wandb: ERROR Error while calling W&B API: retrying (3 attempts)\n")[1].root is None


def test_a_paste_of_informational_retries_only_is_told_by_them():
    # github.com/huggingface/open-r1/issues/568: nothing but the client's INFO retries.
    text = "INFO - trl.extras.vllm_client - Server is not up yet. Retrying in 2.0 seconds...\n" * 4
    sig, choice = signature_from_text(text)
    assert choice.root is None and "Server is not up yet" in sig.raw_message
    # With an error in the paste, its informational lines stay out of it.
    sig, _ = signature_from_text('INFO:     127.0.0.1:42880 - "GET /get_world_size HTTP/1.1" 404 Not Found\n' + text)
    assert sig.pattern == "http_error"


def test_pip_end_of_output_marker_is_not_part_of_the_message():
    # github.com/eqimp/hogwild_llm/issues/12
    text = (
        "  ╰─> [6 lines of output]\n"
        "      Traceback (most recent call last):\n"
        '        File "<string>", line 2, in <module>\n'
        '        File "/tmp/pip-install-go0vfrk9/flash-attn_6b2d67bbb95d4c93b94c80d60083bc0b/setup.py", line 22, '
        "in <module>\n"
        "          import torch\n"
        "      ModuleNotFoundError: No module named 'torch'\n"
        "      [end of output]\n"
    )
    assert root_of(text)[::2] == ("ModuleNotFoundError", "No module named 'torch'")


def test_stamped_lines_and_a_ray_wrapper_cut_before_the_wrapped_exception():
    # github.com/verl-project/verl/issues/5558: every line stamped by a supervisor, the paste cut
    # inside the traceback RayTaskError(NotImplementedError) wraps; Ray's task header says where,
    # not what.
    text = (
        '[2026-03-11 17:47:54]   File "/envs/verl3/lib/python3.12/site-packages/ray/_private/worker.py", line 968, '
        "in get_objects\n"
        "[2026-03-11 17:47:54]     raise value.as_instanceof_cause()\n"
        "[2026-03-11 17:47:54] ray.exceptions.RayTaskError(NotImplementedError): ray::TaskRunner.run() "
        "(pid=2991687, ip=10.21.175.69, actor_id=aa12428bb212c26e78160ab001000000, repr=<main_ppo.TaskRunner "
        "object at 0x7f89aca2aba0>)\n"
        '[2026-03-11 17:47:54]   File "/appdata/verl/verl/trainer/ppo/ray_trainer.py", line 598, in _validate\n'
        "[2026-03-11 17:47:54]     result = self.val_reward_fn(test_batch, return_dict=True)\n"
        '[2026-03-11 17:47:54]   File "/appdata/verl/verl/workers/reward_manager/naive.py", line 89, in __call__\n'
    )
    sig, _ = signature_from_text(text)
    assert (sig.exc_type, sig.raw_message) == ("NotImplementedError", "")
    assert sig.frames[:2] == ("verl.workers.reward_manager.naive:__call__", "verl.trainer.ppo.ray_trainer:_validate")
    # An unstamped exception line does not run on into the stamped log lines after it.
    text = "ValueError: bad value\n[2026-03-11 17:47:55] training resumed at step 3\n"
    assert root_of(text)[2] == "bad value"


def test_load_state_dict_mismatch_list_without_its_runtime_error():
    # A paste keeping only PyTorch's list of what did not load (a ZeRO-3 checkpoint saved empty).
    line = (
        "size mismatch for model.decoder.layers.0.self_attn.k_proj.weight: copying a param with shape "
        "torch.Size([768, 768]) from checkpoint, the shape in current model is torch.Size([0]).\n"
    )
    assert root_of(line)[1] == "state_dict_mismatch"
    # Under its RuntimeError the list stays that exception's message.
    exc, _, message = root_of("RuntimeError: Error(s) in loading state_dict for OPTForCausalLM:\n\t" + line)
    assert exc == "RuntimeError" and "size mismatch for" in message


def test_an_exception_named_with_its_module_is_the_root_of_a_job_log_without_a_traceback():
    # https://github.com/huggingface/datasets/issues/1817's error line, under a verl job's start-up
    # warnings: Python prints a class that is not a builtin with its module, whatever its name ends in.
    text = (
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and "
        "FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict()\n"
        "pyarrow.lib.ArrowInvalid: Column 5 named input_ids expected length 1000 but got length 1096\n"
        "(WorkerDict pid=4123) INFO: step 3 done\n"
    )
    exc, _, message = root_of(text)
    assert exc == "ArrowInvalid" and message.startswith("Column 5 named input_ids")


def test_a_logger_line_of_the_same_shape_does_not_take_the_root_from_the_failure():
    # Hadoop's warning, printed by libhdfs under pyarrow, before the job's real failure.
    text = (
        "2019-09-04 16:03:21,855 WARN util.NativeCodeLoader: Unable to load native-hadoop library for your "
        "platform... using builtin-java classes where applicable\n"
        "Traceback (most recent call last):\n"
        '  File "/app/verl/trainer/main_ppo.py", line 64, in main\n'
        "    trainer.fit()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    exc, _, _ = root_of(text)
    assert exc == "OutOfMemoryError"


def test_a_printed_config_line_loses_to_a_logged_error_and_is_never_an_exception_in_capitals():
    text = (
        "transformers.models.qwen2.modeling_qwen2.Qwen2ForCausalLM: Some weights of the model were not initialized\n"
        "ERROR: the reward function returned None for sample 12\n"
    )
    _, pattern, message = root_of(text)
    assert pattern == "log_error" and message.startswith("ERROR: the reward function")
    exc, _, _ = root_of("env.CUDA_VISIBLE_DEVICES: 0,1,2,3\n")
    assert exc == ""


def test_a_traceback_ending_in_an_exception_named_with_its_module_keeps_its_frames():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/datasets/arrow_dataset.py", line 3011, in map\n'
        "    table = pa.Table.from_pydict(batch)\n"
        "pyarrow.lib.ArrowInvalid: Column 5 named input_ids expected length 1000 but got length 1096\n"
    )
    sig, _ = signature_from_text(text)
    assert (sig.exc_type, sig.kind) == ("ArrowInvalid", "traceback") and sig.frames


def test_a_bare_assertion_error_under_the_assert_a_report_kept_is_its_root():
    # A verl model_merger report (the shared train set's undocumented failures): prose, the
    # command, then the two lines of the failure it quoted.
    text = (
        "model_merger.py is the same as the one in the current repo.\n"
        "However, it encountered\n"
        "```\n"
        "    assert isinstance(weight, torch.distributed._tensor.DTensor)\n"
        "AssertionError\n"
    )
    exc, _, _ = root_of(text)
    assert exc == "AssertionError"


def test_a_traceback_pasted_a_space_to_the_right_keeps_its_exception_line():
    # A FlashAttention-3 report (flash-attn's issue tracker): every line shifted by one space.
    text = (
        ' File "/usr/local/lib/python3.10/dist-packages/flash_attn_interface.py", line 183, in forward\n'
        "      out, q, k, v, out_padded, softmax_lse, S_dmask = _flash_attn_forward(\n"
        '  File "/usr/local/lib/python3.10/dist-packages/flash_attn_interface.py", line 19, in _flash_attn_forward\n'
        "      out, q, k, v, out_padded, softmax_lse, S_dmask = flashattn_hopper_cuda.fwd(\n"
        " RuntimeError: Only support head size 64, 128, and 256 for now\n"
    )
    sig, _ = signature_from_text(text)
    assert (sig.kind, sig.exc_type, sig.raw_message) == (
        "traceback",
        "RuntimeError",
        "Only support head size 64, 128, and 256 for now",
    )


def test_the_same_multi_line_warning_from_two_processes_is_no_error():
    # A healthy verl run (the samples' own log): two processes print vLLM's import warning, whose
    # message goes on below it; the first copy's message once took in the second's first line,
    # and the second's "No module named" line was then read as the log's root error.
    text = (
        "(main_task pid=7773) /root/miniconda3/lib/python3.12/site-packages/vllm/connections.py:8: "
        "RuntimeWarning: Failed to read commit hash:\n"
        "(main_task pid=7773) No module named 'vllm._version'\n"
        "(main_task pid=7773)   from vllm.version import __version__ as VLLM_VERSION\n"
        "(pid=8238) /root/miniconda3/lib/python3.12/site-packages/vllm/connections.py:8: "
        "RuntimeWarning: Failed to read commit hash:\n"
        "(pid=8238) No module named 'vllm._version'\n"
        "(pid=8238)   from vllm.version import __version__ as VLLM_VERSION\n"
        "(main_task pid=7773) step:1 - actor/pg_loss:0.012 - critic/score/mean:0.21\n"
    )
    blocks = scan_log(text)
    assert [(b.kind, b.exc_type, b.line_start) for b in blocks] == [
        ("warning", "RuntimeWarning", 1),
        ("warning", "RuntimeWarning", 4),
    ]
    assert blocks[1].message.startswith(
        "Failed to read commit hash: No module named 'vllm._version' from vllm.version import __version__"
    )
    sig, choice = signature_from_text(text)
    assert sig.kind == "warning" and choice.secondary == ()


def test_an_exception_named_inside_a_sentence_is_read():
    # Reports that name the error mid-sentence, in English and in Chinese (verl and OpenRLHF issues).
    exc, _, message = root_of(
        "Using this command, the vllm version installed was 0.10.1.1, and I kept getting errors when running it, "
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'model_hf_config'\n"
    )
    assert (
        exc == "TypeError" and message == "EngineArgs.__init__() got an unexpected keyword argument 'model_hf_config'"
    )
    exc, _, message = root_of(
        "用ds_z3_config.json的时候就会报错，错误显示：pydantic_core._pydantic_core.ValidationError: 1 validation error "
        "for DeepSpeedZeroConfig\n"
        "[rank3]: stage3_prefetch_bucket_size\n"
    )
    assert exc.endswith("ValidationError") and message.startswith("1 validation error for DeepSpeedZeroConfig")


def test_an_exception_named_right_after_chinese_text_is_read():
    # Chinese puts no space before a Latin word (LLaMA-Factory and transformers issues). Inside a job
    # log whose only warning is a start-up FutureWarning, such a report was read by the warning.
    warning = (
        "/root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:689: "
        "FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated.\n"
        "[INFO:swift] use_reentrant: True\n"
        "Parameter Offload - Persistent parameters statistics: param_count = 365, numel = 2129920\n"
    )
    exc, _, message = root_of(
        warning + "使用llama-factory lora微调qwen1.5-32B-Chat，报错ValueError: Cannot initialize PiSSA adapter on "
        "quantized models.\n"
    )
    assert exc == "ValueError" and message.startswith("Cannot initialize PiSSA adapter")
    exc, _, message = root_of(
        warning + "启动时显示错误ImportError: tokenizers>=0.14,<0.15 is required for a normal functioning of this "
        "module, but found tokenizers==0.13.3\n"
    )
    assert exc == "ImportError" and message.startswith("tokenizers>=0.14,<0.15 is required")
    # A sentence that says the program retried is no root, in Chinese as in English.
    exc, _, _ = root_of(warning + "连接失败，重试后ConnectionError: 已恢复\n")
    assert exc == "FutureWarning"


def test_an_error_quoted_in_a_sentence_as_code_or_bold_ends_at_the_quote():
    # transformers and DeepSpeed issues: the error marked up inside the report's prose.
    exc, _, message = root_of(
        "The problem arises when i try to use a tokenizer (from whatever model in my experiments) on multiple "
        "thread pools with an Autotokenizer, the error **RuntimeError: Already borrowed** get raised, i haven't "
        "tried if the same issues occure whith AutoModel\n"
    )
    assert (exc, message) == ("RuntimeError", "Already borrowed")
    exc, _, message = root_of(
        "It raised `AssertionError: Unable to pre-compile ops without torch installed. Please install torch "
        "before attempting to pre-compile ops.` when I ran DS_BUILD_OPS=1 pip install deepspeed\n"
    )
    assert exc == "AssertionError" and message.endswith("before attempting to pre-compile ops.")


def test_an_error_quoted_in_a_report_outranks_a_later_sentence_with_an_error_word():
    # https://github.com/ray-project/ray/issues/64466, the first report of vLLM's removed `task`
    # argument: the quoted ValueError says what failed; "can't find" in the next paragraph is prose.
    exc, _, message = root_of(
        "Hi team, I was following the [Deploy an embedding model](https://docs.ray.io/en/latest/serve/llm/"
        "user-guides/vllm-compatibility.html#deploy-an-embedding-model) documentation and came across an "
        'error. When specifying `task="embed"`, it fails with `ValueError: Unknown engine argument: task`.\n'
        "\n"
        "It's due to it referencing outdated docs. Atm, in [vLLM's Supported Models documentation]"
        "(https://docs.vllm.ai/en/stable/cli/serve/#vllm-serve), I can't find the `text-embedding-task-embed` "
        "section. It seems everything has been subsumed under the [Pooling Models]"
        "(https://docs.vllm.ai/en/stable/models/pooling_models/) section.\n"
    )
    assert (exc, message) == ("ValueError", "Unknown engine argument: task")
    # Of a generic error line and a named exception, the earlier still wins.
    exc, pattern, _ = root_of(
        "ERROR: could not connect to the rollout server at step 12\n"
        "Then the client said ValueError: Unknown engine argument: task\n"
    )
    assert (exc, pattern) == ("", "log_error")


def test_a_sentence_that_only_mentions_an_error_word_is_no_exception():
    blocks = scan_log("I thought it was a ValueError at first, but the run just hangs after step 3\n")
    assert [b for b in blocks if b.kind in ("exception_line", "traceback")] == []


def test_a_warning_whose_path_wrapped_onto_the_line_above_is_still_a_warning():
    text = (
        "/envs/pytorch/lib/python3.10/site-packages/transformers/generation/configuration_utils.py:362: \n"
        "UserWarning: `do_sample` is set to `False`. However, `temperature` is set to `0.9` -- this flag is only "
        "used in sample-based generation modes. \n"
        "You should set `do_sample=True` or unset `temperature`.\n"
    )
    (block,) = scan_log(text)
    assert (block.kind, block.exc_type, block.line_start) == ("warning", "UserWarning", 2)
    assert "`do_sample` is set to `False`" in block.message


def test_a_ray_workers_warning_does_not_continue_onto_a_line_another_stream_printed():
    # A verl job log: the worker's start-up FutureWarning, then the driver's own error (no Ray tag),
    # then two ranks' copies of another error; each is an error of its own, not the warning's text.
    text = (
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and "
        "FSDP.set_state_dict_type() are being deprecated.\n"
        "cannot import name 'LlamaFlashAttention2' from 'transformers.models.llama.modeling_llama' "
        "(/opt/conda/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py)\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n"
    )
    blocks = scan_log(text)
    assert blocks[0].kind == "warning" and "LlamaFlashAttention2" not in blocks[0].message
    _, pattern, message = root_of(text)
    assert pattern == "error_phrase" and "cannot import name 'LlamaFlashAttention2'" in message
    ranks = (
        "(WorkerDict pid=4123) /opt/fsdp.py:689: FutureWarning: FSDP.state_dict_type() is deprecated.\n"
        "[rank0]: Error in reward_fn: reward_extra_info\n"
        "[rank1]: Error in reward_fn: reward_extra_info\n"
    )
    _, pattern, message = root_of(ranks)
    assert pattern == "log_error" and message == "Error in reward_fn: reward_extra_info"


def test_of_warnings_alone_a_deprecation_notice_is_not_the_root():
    # A train-long paste: the samples' start-up FSDP notice, then the report's own warning.
    text = (
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and "
        "FSDP.set_state_dict_type() are being deprecated.\n"
        "[rank0]: /path/to/.venv/lib/python3.12/site-packages/transformers/generation/configuration_utils.py:628: "
        "UserWarning: `do_sample` is set to `False`. However, `temperature` is set to `0.0` -- this flag is only "
        "used in sample-based generation modes.\n"
    )
    sig, _choice = signature_from_text(text)
    assert sig.kind == "warning" and sig.exc_type == "UserWarning" and "`do_sample`" in sig.raw_message
    assert signature_from_text(text.split("\n")[0])[0].exc_type == "FutureWarning"  # alone, it is still read


# A program's own warning line inside a trainer's job log whose own lines name no failure: it had been
# no warning at all, and the job's start-up lines were read instead.
WARNINGS_IN_JOB_LOGS = {
    # fresh7-long: c10's TORCH_WARN line from a Ray worker.
    "c10-torch-warn-from-a-ray-worker": (
        "[INFO:swift] use_reentrant: True\n"
        "The tokenizer has new PAD/BOS/EOS tokens that differ from the model config and generation config.\n"
        "WARNING:accelerate.accelerator:Gradient accumulation steps mismatch: GradientAccumulationPlugin has 1, "
        "DeepSpeed config has 8. Using DeepSpeed's value.\n"
        "Parameter Offload - Persistent parameters statistics: param_count = 365, numel = 2129920\n"
        "[rank0]: ```\n"
        "[rank0]: (RayTrainWorker pid=2273, ip=172.24.21.66) [rank7]:[W Utils.hpp:108] Warning: Environment "
        "variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead "
        "(function getCvarString)\n"
        "[rank0]: ```\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n",
        "NCCL_ASYNC_ERROR_HANDLING is deprecated",
    ),
    # fresh33-long: huggingface_hub's CLI, "⚠️  Warning:" behind a sign.
    "a-warning-behind-a-warning-sign": (
        "[INFO:swift] use_reentrant: True\n"
        "Parameter Offload - Persistent parameters statistics: param_count = 365, numel = 2129920\n"
        "⚠️  Warning: 'huggingface-cli login' is deprecated. Use 'hf auth login' instead.\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n",
        "'huggingface-cli login' is deprecated",
    ),
}


@pytest.mark.parametrize(("text", "part"), WARNINGS_IN_JOB_LOGS.values(), ids=WARNINGS_IN_JOB_LOGS.keys())
def test_a_programs_own_warning_line_in_a_job_log_is_the_root(text: str, part: str) -> None:
    sig, _ = signature_from_text(text)
    assert sig.kind == "warning" and part in sig.raw_message


def test_a_programs_own_warning_line_is_a_warning():
    # glog's level letter (torch's C++ and Python loggers) and a bare "Warning: " line
    glog = "W0826 18:58:37.123000 4242 torch/utils/cpp_extension.py:2356] TORCH_CUDA_ARCH_LIST is not set.\n"
    assert signature_from_text(glog)[0].kind == "warning"
    assert signature_from_text("Warning: TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect.\n")[0].kind == "warning"
    # an error below the warning is still the root
    assert signature_from_text(glog + "RuntimeError: Error building extension 'fused_adam'\n")[0].kind != "warning"


def test_a_workers_deprecation_notice_with_another_process_after_it_is_not_the_root():
    # fresh10-long's pattern: a verl job log whose last worker line is FSDP's start-up notice, then
    # the user's report, which names no error: DeepSpeed's launcher on one node (a public issue).
    from kb.signature import read_failure

    notice = (
        "(WorkerDict pid=4123) /root/miniconda3/lib/python3.12/site-packages/torch/distributed/fsdp/"
        "fully_sharded_data_parallel.py:689: FutureWarning: FSDP.state_dict_type() and "
        "FSDP.set_state_dict_type() are being deprecated.\n"
    )
    report = (
        "[2023-07-26 10:50:43,488] [WARNING] [runner.py:191:fetch_hostfile] Unable to find hostfile, will proceed "
        "with training with local resources only.\n"
        "[2023-07-26 10:50:45,785] [INFO] [launch.py:235:main] nnodes=1, num_local_procs=4, node_rank=0\n"
    )
    text = "(WorkerDict pid=4123) no hf weight loader need to be updated\n" + notice + report
    reading, sig, choice = read_failure(text)
    assert choice.root is None and reading == report.rstrip("\n")
    assert choice.notes == (
        "The only error, line 2's FutureWarning from (WorkerDict pid=4123), is start-up noise: the lines "
        "another process printed after it are read as the failure.",
    )
    assert "Unable to find hostfile" in sig.raw_message and "FSDP" not in sig.raw_message
    # Printed by the same worker, or with nothing after it, the notice is still what is read.
    same_worker = notice + "".join(f"(WorkerDict pid=4123) {line}\n" for line in report.splitlines())
    assert signature_from_text(same_worker)[0].exc_type == "FutureWarning"
    assert signature_from_text(notice)[0].exc_type == "FutureWarning"


def test_an_exception_line_indented_under_its_raise_is_the_root():
    # pip indents a failed build's output; the paste starts at the last frame's `raise` (flash-attn).
    text = (
        "      raise RuntimeError(\n"
        "      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a "
        "supported version by running nvcc -V.\n"
        "\n"
        "      torch.__version__  = 2.3.1+cu121\n"
        "\n"
        "      [end of output]\n"
    )
    exc, _, message = root_of(text)
    assert exc == "RuntimeError" and message.startswith("FlashAttention is only supported on CUDA 11.6 and above.")
    assert root_of("    x = compute()\n    ValueError: not a raise above\n")[0] == ""


def test_an_exception_behind_a_lower_case_level_word_is_the_root():
    text = (
        "error   requests.exceptions.ReadTimeout: (ReadTimeoutError(\"HTTPSConnectionPool(host='cdn-lfs-us-1."
        "huggingface.co', port=443): Read timed out. (read timeout\n"
        "=10)\"), '(Request ID: 96de49cd-fd9d-4b91-8df1-5cb1f510eaf8)')\n"
    )
    exc, _, message = root_of(text)
    assert exc.endswith("ReadTimeout") and "cdn-lfs-us-1.huggingface.co" in message
    assert root_of("error when loading the model, see above\n")[0] == ""


def test_a_lazy_import_failure_is_read_by_the_error_it_wraps():
    # diffusers (and transformers) wrap the import that broke, once per module on the way.
    text = (
        "RuntimeError: Failed to import diffusers.pipelines.pipeline_utils because of the following error "
        "(look up to see its traceback):\n"
        "Failed to import diffusers.models.autoencoders.autoencoder_kl because of the following error "
        "(look up to see its traceback):\n"
        "module 'torch.library' has no attribute 'custom_op'\n"
    )
    sig, _ = signature_from_text(text)
    assert sig.exc_type == "" and sig.raw_message == "module 'torch.library' has no attribute 'custom_op'"
    typed = signature_from_text(
        "RuntimeError: Failed to import transformers.models.llama.modeling_llama because of the following error "
        "(look up to see its traceback):\nNo module named 'flash_attn_2_cuda'\n"
    )[0]
    assert typed.raw_message == "No module named 'flash_attn_2_cuda'"


def test_an_exception_line_indented_under_the_carets_of_its_frame_is_the_root():
    # pip's output of a failed build step: the last frame's source, its carets, then the exception,
    # all indented; the bare "Error:" above it names nothing.
    text = (
        "Error:\n"
        "register_finder(pkgutil.ImpImporter, find_on_path)\n"
        "                          ^^^^^^^^^^^^^^^^^^^\n"
        "      AttributeError: module 'pkgutil' has no attribute 'ImpImporter'. Did you mean: 'zipimporter'?\n"
        "      [end of output]\n"
        "\n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: subprocess-exited-with-error\n"
    )
    exc, _, message = root_of(text)
    assert exc == "AttributeError" and message.startswith("module 'pkgutil' has no attribute 'ImpImporter'")


def test_a_heading_over_the_pasted_log_is_no_error():
    # A user's markdown label above the log names no failure; the warning below it is what the paste is about.
    text = (
        "**Error message**\n"
        "\n"
        "```\n"
        "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. "
        "Disabling parallelism to avoid deadlocks...\n"
        "To disable this warning, you can either:\n"
        "\t- Avoid using `tokenizers` before the fork if possible\n"
        "```\n"
    )
    assert select_root(scan_log(text)).root is None
    sig, _ = signature_from_text(text)
    assert sig.kind == "text" and "forked" in sig.raw_message  # told by its own words
    for label in ("# Error log", "Full traceback:", "Error messages:", "错误信息：", "Error:"):
        assert select_root(scan_log(label + "\n")).root is None, label
    # A line that says what failed after such a word is still an error line.
    assert select_root(scan_log("Error: the run has no GPU left\n")).root is not None


def test_frame_lines_wrapped_at_a_fixed_width_are_read_whole():
    # A DeepSpeed user's paste (a public issue): the copy wrapped every line at 88 columns, inside
    # the frames' paths; the traceback stops before its exception line.
    text = (
        '[rank0]:   File "/home/agittis/miniconda3/envs/rp2/lib/python3.11/site-packages/pytorch_lightni\n'
        'ng/strategies/deepspeed.py", line 423, in _setup_model_and_optimizer\n'
        "[rank0]:     deepspeed_engine, deepspeed_optimizer, _, _ = deepspeed.initialize(\n"
        '[rank0]:   File "/home/agittis/miniconda3/envs/rp2/lib/python3.11/site-packages/deepspeed/runti\n'
        'me/engine.py", line 1201, in _configure_distributed_model\n'
        "[rank0]:     self._broadcast_model()\n"
        '[rank0]:   File "/home/agittis/miniconda3/envs/rp2/lib/python3.11/site-packages/deepspeed/runti\n'
        'me/engine.py", line 1120, in _broadcast_model\n'
        "\n"
        "What is wrong here and how do I fix it?\n"
    )
    (block,) = scan_log(text)
    assert [f.function for f in block.frames] == [
        "_setup_model_and_optimizer",
        "_configure_distributed_model",
        "_broadcast_model",
    ]
    assert block.frames[-1].path.endswith("deepspeed/runtime/engine.py")
    # The block's lines are the physical lines of the paste, the last frame's second half included.
    assert (block.line_start, block.line_end) == (1, 8)


def test_an_error_quoted_inline_ends_with_its_quote():
    # A transformers user's comment (a public issue): the error quoted in backticks, then their own words.
    text = (
        "This is aso helpful for \n"
        "`IndexError: index out of range in self`\n"
        "But it is strange that training in gpu seems dont have this problem.\n"
    )
    assert root_of(text) == ("IndexError", "", "index out of range in self")


def test_an_error_quoted_and_in_bold_in_a_sentence():
    # A user's report (a public issue): the error in bold inside double quotes, in a sentence.
    text = (
        'We got an error while importing xls2xlsx module "**ImportError: urllib3 v2.0 only supports OpenSSL '
        "1.1.1+, currently the 'ssl' module is compiled with 'OpenSSL 1.0.2k-fips  26 Jan 2017'**\" , we tried "
        "a couple of solutions. None of them worked.....,\n"
    )
    exc, _, message = root_of(text)
    assert exc == "ImportError" and message.startswith("urllib3 v2.0 only supports OpenSSL")
    assert message.endswith("26 Jan 2017'")


def test_a_generic_error_line_is_not_said_to_report_another_processs_failure():
    # A public issue's pip error: ranked as a generic error line, but nothing else failed.
    wheel = (
        "ERROR: flash_attn-2.7.2.post1+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl is not a supported "
        "wheel on this platform.\n"
    )
    choice = select_root(scan_log(wheel))
    assert choice.root is not None and choice.root.symptom and choice.notes == ()
    # torchrun's summary does report that another process failed: its own log holds the cause.
    summary = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \ntrain.py FAILED\n"
    choice = select_root(scan_log(summary))
    assert choice.root is not None and any("another process" in n for n in choice.notes)


def test_a_python_logging_info_line_with_its_time_first_is_no_error():
    # github.com/bghira/SimpleTuner/issues/940: the INFO line says "does not exist", the failure is
    # the traceback under it (cut off before its exception line).
    text = (
        "2024-09-04 23:45:31,637 [INFO] (helpers.training.trainer) Checkpoint 'latest' does not exist. "
        "Starting a new training run.\n"
        "2024-09-04 23:45:31,639 [INFO] (helpers.training.trainer) Loading our accelerator...\n"
        "value should be one of int, float, str, bool, or torch.Tensor\n"
        "Traceback (most recent call last):\n"
        '  File "/data1/foss/SimpleTuner/train.py", line 50, in <module>\n'
        "    trainer.init_trackers()\n"
        '  File "/data1/foss/SimpleTuner/venv/lib/python3.10/site-packages/accelerate/accelerator.py", '
        "line 2586, in init_trackers\n"
        "    tracker.store_init_configuration(config)\n"
    )
    sig, choice = signature_from_text(text)
    assert choice.root is not None and choice.root.kind == "truncated_traceback"
    assert "does not exist" not in sig.raw_message
    assert "Checkpoint 'latest'" not in "\n".join(telling_lines(text))
    assert any("stops before its last line" in n for n in choice.notes)


def test_python_logging_levels_after_the_time_are_read():
    error = "2024-01-05 10:00:00,001 - root - ERROR - Failed to connect to the reward server at 10.0.0.5:8000"
    assert clean_line(error).level == "ERROR" and clean_line(error).text.startswith("Failed to connect")
    loguru = "2024-01-05 10:00:00.001 | WARNING  | reward:score:12 - empty completion"
    assert clean_line(loguru).level == "WARNING"
    assert clean_line("2024-01-05 10:00:00 something happened").level == ""


def test_a_traceback_logged_line_by_line_through_fastchats_logger_is_read():
    # github.com/lm-sys/FastChat (fresh9): docker compose's prefix, then FastChat's "time | ERROR | stderr |"
    # on every line of the traceback; the user put the exception line in bold.
    head = "fastchat-model-worker-mistral7b-1  | 2025-05-15 23:11:06 | ERROR | stderr | "
    text = "".join(
        head + line + "\n"
        for line in (
            '  File "/app/venv/lib/python3.11/site-packages/fastchat/serve/vllm_worker.py", line 173, in generate',
            "    async for x in self.generate_stream(params):",
            '  File "/app/venv/lib/python3.11/site-packages/fastchat/serve/vllm_worker.py", line 106, in generate_stream',
            "    sampling_params = SamplingParams(",
            "**TypeError: Unexpected keyword argument 'use_beam_search'**",
        )
    )
    sig, _ = signature_from_text(text)
    assert sig.exc_type == "TypeError" and sig.raw_message == "Unexpected keyword argument 'use_beam_search'"
    assert sig.frames[0] == "fastchat.serve.vllm_worker:generate_stream"


def test_a_markdown_fence_is_no_word_of_the_failure():
    # github.com/verl-project/verl/issues/2389: an error pasted in a ```txt fence; its info string
    # had become the paste's last telling line, and "txt" a word matched against entries' texts.
    text = "```txt\nAPI Request Error: Server Error (500) on attempt 1/10\n```"
    assert telling_lines(text) == ["API Request Error: Server Error (500) on attempt 1/10"]
    assert "txt" not in raw_tokens(text)
    # A fence may be longer than three backticks (DeepSpeed issue 931 opens its paste with eleven).
    text = "```````````\nBeginning of Epoch 1/16, Total Micro Batches 1840\n~~~~\n"
    assert telling_lines(text) == ["Beginning of Epoch 1/16, Total Micro Batches 1840"]


def test_a_progress_bar_cut_by_the_paste_is_no_telling_line():
    # A note's NCCL warning under a progress bar a wide terminal drew and the paste cut mid-bar
    # (a verl job's output): the bar says nothing of what went wrong; the warning does.
    text = (
        "100%|" + "\u2588" * 240 + "\ufffd\n"
        "[rank4]:[W207 22:21:42.712978449 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 4]  using GPU 4 to "
        "perform barrier as devices used by this process are currently unknown.\n"
    )
    lines = telling_lines(text)
    assert len(lines) == 1 and "using GPU 4 to perform barrier" in lines[0]
    # A bar with its counters is no telling line either; a bar alone still tells the paste.
    assert telling_lines(
        "Processed prompts: 100%|\u2588\u2588\u2588| 1/1 [00:00<00:00,  5.91it/s, est. speed\nboom\n"
    ) == ["boom"]
    assert telling_lines("Loading: 50%|\u2588\u2588   | 5/10", quiet_if_nothing_else=True) == [
        "Loading: 50%|\u2588\u2588   | 5/10"
    ]
    # A warning printed right after a bar's counters on the same line still tells.
    glued = "2%|\u2588\u2588 | 2/9[2025-04-08 13:19:59,481] [WARNING] [stage3.py:2139:step] 28 pytorch allocator cache flushes"
    assert telling_lines(glued, with_warnings=True)


def test_a_tracebacks_header_and_frames_are_no_telling_lines():
    # bitsandbytes issue 1848: a logger's error line, then a traceback the paste cut in its first
    # frame. The header and the cut frame had been the paste's last telling lines, and their words
    # ("traceback", "most", "recent", "call", "file") cover every entry that holds a traceback.
    text = (
        "[bitsandbytes.cextension|ERROR]bitsandbytes library load error: Configured CUDA binary not found at "
        "/usr/local/lib/python3.12/dist-packages/bitsandbytes/libbitsandbytes_cuda131.so\n"
        "Traceback (most recent call last):\n"
        '  File "/u'
    )
    assert telling_lines(text) == [text.splitlines()[0]]
    assert telling_lines(text.split("\n", 1)[1], with_warnings=True) == []
    chained = (
        'Traceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\nValueError: no such run\n\n'
        "During handling of the above exception, another exception occurred:\n\n"
        "The above exception was the direct cause of the following exception:\n"
    )
    assert telling_lines(chained) == ["g()", "ValueError: no such run"]


def test_a_logger_line_quoted_as_code_in_a_sentence_is_what_the_paste_asks_about():
    # A wandb report: the only output is a logger's warning the user quoted in backticks, its
    # closing backtick on the next line; an informational level does not make it noise.
    text = (
        "It only says select runs in the website and \n\n"
        "`wandb: WARNING Path logs/custom_dir/wandb/ wasn't writable, using system temp directory.\n"
        "`\n"
        "in terminal.\n"
    )
    assert "wandb: WARNING Path logs/custom_dir/wandb/ wasn't writable, using system temp directory." in telling_lines(
        text
    )
    # The same line unquoted in a job log stays informational.
    assert telling_lines("wandb: WARNING Path logs/x wasn't writable, using system temp directory.\nboom\n") == ["boom"]


ROOT_AND_MESSAGE = {
    # OpenAI's error body as curl prints it, pasted alone (fresh39): the mapping is the error.
    "api-error-body-over-several-lines": (
        "{\n"
        '  "error": {\n'
        '    "message": "You exceeded your current quota, please check your plan and billing details.",\n'
        '    "type": "insufficient_quota",\n'
        '    "param": null,\n'
        '    "code": null\n'
        "  }\n"
        "}\n",
        (
            "",
            'error: { "message": "You exceeded your current quota, please check your plan and billing details.", '
            '"type": "insufficient_quota", "param": null, "code": null }',
        ),
    ),
    # ComfyUI on macOS (fresh34), pasted down to the "Traceback" line and no further: the failure it
    # printed above the header is the paste's.
    "cut-right-under-the-traceback-header": (
        "got prompt\n"
        "Loading LLM: unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit\n"
        "Unused kwargs: ['_load_in_4bit', '_load_in_8bit', 'quant_method']. These kwargs are not used in "
        "<class 'transformers.utils.quantization_config.BitsAndBytesConfig'>.\n"
        "!!! Exception during processing !!! Using `bitsandbytes` 4-bit quantization requires the latest "
        "version of bitsandbytes: `pip install -U bitsandbytes`\n"
        "Traceback (most recent call last):\n",
        (
            "",
            "!!! Exception during processing !!! Using `bitsandbytes` 4-bit quantization requires the latest "
            "version of bitsandbytes: `pip install -U bitsandbytes`",
        ),
    ),
    # SwarmUI stamps every line ComfyUI prints (fresh34): the date and time are no part of the failure.
    "application-date-and-time-before-each-line": (
        "2026-01-24T12:34:44.451526 - Loading Whisper model 'tiny.en' to cuda:0...\n"
        "2026-01-24T12:34:45.231016 - !!! Exception during processing !!! [WinError 2] The system cannot find "
        "the file specified\n"
        "2026-01-24T12:34:45.268427 - Traceback (most recent call last):\n"
        '  File "E:\\AI\\SwarmUI\\dlbackend\\comfy\\ComfyUI\\execution.py", line 518, in execute\n'
        "    output_data, output_ui = await get_output_data(prompt_id, unique_id, obj)\n",
        ("", "!!! Exception during processing !!! [WinError 2] The system cannot find the file specified"),
    ),
    # vLLM's engine logs the exception object it caught, as its repr; the HTTP 500 above it is what
    # the client saw.
    "exception-repr-under-access-log": (
        "INFO 03-19 11:53:56 [cuda.py:234] Cannot use FlashAttention-2 backend for Volta and Turing GPUs. \n"
        "INFO 03-19 11:53:56 [cuda.py:282] Using XFormers backend.  \n"
        ".....  \n"
        'INFO:     127.0.0.1:41950 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error\n'
        "ERROR 03-19 11:54:51 [engine.py:158] AssertionError('Only FlashAttention backend is supported for now.')",
        ("AssertionError", "Only FlashAttention backend is supported for now."),
    ),
    # GitHub joined torch's `raise AttributeError(` and the exception line under it (unsloth's GRPO,
    # fresh5): the names the message quotes tell it from every other missing attribute.
    "exception-line-glued-onto-its-raise": (
        '  File "/data/scripts/unsloth_compiled_cache/UnslothGRPOTrainer.py", line 857, in __init__\n'
        "    self.llm = model.vllm_engine; self._last_loaded_step = 0\n"
        "               ^^^^^^^^^^^^^^^^^\n"
        '  File "/home/u/.conda/envs/unsloth_env/lib/python3.11/site-packages/torch/nn/modules/module.py", '
        "line 1928, in __getattr__\n"
        "    raise AttributeError(AttributeError: 'Qwen2ForCausalLM' object has no attribute 'vllm_engine'\n",
        ("AttributeError", "'Qwen2ForCausalLM' object has no attribute 'vllm_engine'"),
    ),
    # llama-stack's issue 4534 (a vLLM server behind the openai client): the error is quoted in a
    # sentence and never closed; the `"` that opens the server's message in it had been read as the
    # closing quote, and the message ended at `'message':`.
    "a-string-inside-an-error-quoted-in-prose-closes-nothing": (
        "I keep getting the following error \"openai.BadRequestError: Error code: 400 - {'object': 'error', "
        "'message': \"This model's maximum context length is 6048 tokens. However, you requested 6616 tokens "
        "(568 in the messages, 6048 in the completion). Please reduce the length of the messages or "
        "completion.\", 'type': 'BadRequestError', 'param': None, 'code': 400}\n",
        (
            "BadRequestError",
            "Error code: 400 - {'object': 'error', 'message': \"This model's maximum context length is 6048 "
            "tokens. However, you requested 6616 tokens (568 in the messages, 6048 in the completion). Please "
            "reduce the length of the messages or completion.",
        ),
    ),
    # A quote that closes before a character that is no word character still ends the error.
    "a-quote-before-a-comma-closes-an-error-quoted-in-prose": (
        'It fails with "ValueError: bad shape", then exits\n',
        ("ValueError", "bad shape"),
    ),
    # A notebook's traceback pasted as a markdown quote (datasets' issue, fresh32): the quote's empty
    # line under the exception is blank, not a ">" that continues its message.
    "an-empty-quote-line-ends-the-message-above-it": (
        "Stack trace:\n\n"
        "> ---------------------------------------------------------------------------\n"
        "> ModuleNotFoundError                       Traceback (most recent call last)\n"
        "> /usr/local/lib/python3.9/dist-packages/datasets/utils/py_utils.py in _no_cache_fields(obj)\n"
        ">     367     try:\n"
        "> --> 368         import transformers as tr\n"
        ">     369 \n"
        "> \n"
        "> ModuleNotFoundError: No module named 'transformers'\n"
        "> \n"
        "> During handling of the above exception, another exception occurred:\n",
        ("ModuleNotFoundError", "No module named 'transformers'"),
    ),
    # pydantic v1's line for one invalid field, pasted without its ValidationError header (fresh37),
    # here inside a verl job log whose start-up warning came first.
    "a-validation-error-field-line-without-its-header": (
        "(main_task pid=2291) The tokenizer has new PAD tokens that differ from the model config and "
        "generation config. The model config and generation config were aligned accordingly.\n"
        "Did not find openai_api_key, please add an environment variable `OPENAI_API_KEY` which contains it, "
        "or pass  `openai_api_key` as a named parameter. (type=value_error)\n",
        (
            "",
            "Did not find openai_api_key, please add an environment variable `OPENAI_API_KEY` which contains "
            "it, or pass  `openai_api_key` as a named parameter. (type=value_error)",
        ),
    ),
    # The same lines under their header are the ValidationError's message (DeepSpeed, fresh10).
    "validation-error-field-lines-under-their-header": (
        "pydantic.error_wrappers.ValidationError: 2 validation errors for DeepSpeedZeroConfig\n"
        "zero_hpz_partition_size\n"
        "  extra fields not permitted (type=value_error.extra)\n"
        "zero_quantized_weights\n"
        "  extra fields not permitted (type=value_error.extra)\n",
        (
            "ValidationError",
            "2 validation errors for DeepSpeedZeroConfig zero_hpz_partition_size extra fields not permitted "
            "(type=value_error.extra) zero_quantized_weights extra fields not permitted (type=value_error.extra)",
        ),
    ),
}


@pytest.mark.parametrize(("paste", "expected"), ROOT_AND_MESSAGE.values(), ids=ROOT_AND_MESSAGE.keys())
def test_the_root_is_this_exception_with_this_message(paste: str, expected: tuple[str, str]) -> None:
    exc, _, message = root_of(paste)
    assert (exc, message) == expected


def test_traceback_a_logger_prints_under_an_exception_repr_outranks_the_repr():
    # The repr names the wrapper (RuntimeError); the traceback under it says what failed.
    head = "ERROR 10-11 16:03:09 engine.py:157] "
    text = "\n".join(
        head + line
        for line in (
            "RuntimeError('Error in model execution: Loading lora /home/fahadh/models/Qwen2.5-3B-adapter_otas failed')",
            "Traceback (most recent call last):",
            '  File "/home/fahadh/vllm/vllm/lora/models.py", line 218, in from_local_checkpoint',
            "    module_name, _ = parse_fine_tuned_lora_name(lora_module)",
            '  File "/home/fahadh/vllm/vllm/lora/utils.py", line 113, in parse_fine_tuned_lora_name',
            '    raise ValueError(f"{name} is unsupported LoRA weight")',
            "ValueError: base_model.model.lm_head.weight is unsupported LoRA weight",
        )
    )
    exc, _, message = root_of(text)
    assert (exc, message) == ("ValueError", "base_model.model.lm_head.weight is unsupported LoRA weight")
    assert any(b.exc_type == "RuntimeError" and b.from_repr for b in scan_log(text))


def test_a_repr_needs_an_exception_class_and_a_quoted_message():
    assert scan_log("print('Only FlashAttention backend')\n") == ()
    assert not any(b.exc_type == "ValueError" for b in scan_log("ValueError('')\n"))
    assert not any(b.exc_type == "ValueError" for b in scan_log("    ValueError('an indented line of code')\n"))


def test_a_bare_exception_printed_as_its_repr_is_read_too():
    blocks = scan_log("ERROR 03-19 11:54:51 [engine.py:158] Exception('Worker process died unexpectedly')\n")
    assert [(b.exc_type, b.message, b.from_repr) for b in blocks] == [
        ("Exception", "Worker process died unexpectedly", True)
    ]


# A ComfyUI user's paste (a public issue): the node's error printed above a traceback the paste cut.
COMFYUI_PASTE = (
    "!!! Exception during processing !!! ChatGLMTokenizer._pad() got an unexpected keyword argument 'padding_side'\n"
    "Traceback (most recent call last):\n"
    '  File "G:\\AI\\ComfyUI_w\\ComfyUI\\execution.py", line 323, in execute\n'
)


def test_the_failure_a_program_printed_above_a_cut_traceback_is_its_message():
    sig, choice = signature_from_text(COMFYUI_PASTE)
    assert choice.root is not None and choice.root.kind == "traceback"
    assert (choice.root.line_start, choice.root.line_end) == (1, 3)
    assert sig.raw_message.endswith("ChatGLMTokenizer._pad() got an unexpected keyword argument 'padding_side'")
    # ComfyUI's marker is said in front of every node's error: it is no part of what failed.
    assert "processing" not in sig.message and "padding_side" in sig.message


def test_a_stamp_before_a_line_is_a_prefix_and_a_stamped_line_no_part_of_an_unstamped_message():
    assert clean_line("2024-05-01 10:00:00.123 Traceback (most recent call last):").text.startswith("Traceback")
    # xinference (train): its logger's stamped line under the exception it caught.
    text = (
        "ImportError: cannot import name 'build_regex_from_schema' from 'outlines.fsm.json_schema'\n"
        "2024-12-21 20:28:44,695 xinference.core.worker 30898 ERROR    Leave launch_builtin_model, error: "
        "cannot import name 'build_regex_from_schema'\n"
    )
    assert "xinference" not in signature_from_text(text)[0].raw_message


def test_a_sentence_that_introduces_a_cut_traceback_is_not_its_message():
    for intro in ("I got the following error:", "Error log", "**Full traceback**"):
        text = COMFYUI_PASTE.replace(COMFYUI_PASTE.splitlines()[0], intro)
        assert [b.kind for b in scan_log(text)] == ["truncated_traceback"]
    # Cut right under its "Traceback" line, such a header names nothing either.
    assert scan_log("Here is the error:\nTraceback (most recent call last):\n") == ()


# torch.compile on Windows (fresh23): dynamo's wrapper ends its message with "raised:" and the
# backend's own exception follows on the next line; that one says what failed.
DYNAMO_WRAPPED = (
    "Traceback (most recent call last):\n"
    '  File "H:\\ComfyUI\\python_embeded\\Lib\\site-packages\\torch\\_dynamo\\output_graph.py", line 1465, '
    "in _call_user_compiler\n"
    "    raise BackendCompilerFailed(self.compiler_fn, e) from e\n"
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "FileExistsError: [WinError 183] Cannot create a file when that file already exists: "
    "'C:\\\\Users\\\\U\\\\AppData\\\\Local\\\\Temp\\\\torchinductor_U\\\\cache\\\\.33880.4940.tmp'\n"
    "\n"
    'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information\n'
)


def test_the_exception_a_wrapper_introduces_on_the_next_line_is_the_failure():
    sig, choice = signature_from_text(DYNAMO_WRAPPED)
    assert sig.exc_type == "FileExistsError" and sig.raw_message.startswith("[WinError 183] Cannot create a file")
    assert choice.root is not None and choice.root.wrappers == ("BackendCompilerFailed",)
    assert sig.frames  # the traceback's frames stay with it
    # a message ending in a colon with no exception under it is read as before
    exc, _, message = root_of("RuntimeError: Error(s) in loading state_dict for GPT2:\n\tMissing key(s): 'h.0'\n")
    assert exc == "RuntimeError" and message.startswith("Error(s) in loading state_dict for GPT2:")


ERROR_LINES = {
    # Ray's raylet: "(raylet)" between glog's header and the source file.
    "glog-line-with-process-tag": (
        "(raylet, ip=10.209.34.142) [2023-04-23 09:55:28,127 E 44 92] (raylet) file_system_monitor.cc:105: "
        "/tmp/ray/session_2023-04-23_08-48-16_909296_38 is over 95% full, available space: 11970445312; "
        "capacity: 422687690752. Object creation will fail if spilling is required.\n",
        "log_error",
        "is over 95% full",
    ),
    # stable-diffusion-webui on an RDNA2 card (fresh22): HIP's error code, quoted, then the abort.
    "rocm-hip-error-over-abort": (
        "Launching Web UI with arguments: --precision full --no-half\n"
        '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\n'
        "Aborted (core dumped)\n",
        "cuda_error",
        "hipErrorNoBinaryForGpu",
    ),
    # docker on an arm host running an amd64 image (fresh22): Go prints the system's error text in
    # lower case after what failed; inside a job log it outranks the trainer's notices.
    "system-error-text-ends-line": (
        "The tokenizer has new PAD/BOS/EOS tokens that differ from the model config and generation config. "
        "The model config and generation config were aligned accordingly, being updated with the tokenizer's "
        "values. Updated tokens: {'bos_token_id': None}.\n"
        "[rank0]:  docker logs  45263f126f61 \n"
        "[rank0]:  exec /usr/local/bin/python: exec format error\n",
        "os_error",
        "exec /usr/local/bin/python: exec format error",
    ),
    # datasets before 2.14 (fresh23): the sentence names the error and quotes it; the quote is the error.
    "error-quoted-in-a-sentence": (
        "Whenever I try to get an Argilla dataset from the Huggingface Hub I get the error "
        "`unexpected keyword argument 'token'`. THis happens with both public and private datasets.\n",
        "error_phrase",
        "unexpected keyword argument 'token'",
    ),
    # WSL2 without libcuda on the library path (fresh8): the error came under tqdm's redraw, glued to its
    # bar, right under a Python warning and its source line; the warning explains nothing.
    "error-glued-to-a-progress-bar-under-a-warning": (
        "/home/USERNAME/miniconda3/envs/ENVNAME/lib/python3.11/site-packages/torch/functional.py:504: UserWarning: "
        "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. (Triggered "
        "internally at ../aten/src/ATen/native/TensorShape.cpp:3483.)\n"
        "  return _VF.meshgrid(tensors, **kwargs)  # type: ignore[attr-defined]\n"
        "  0%|                                                  | 0/1 [00:00<?, ?it/s]Could not load library "
        "libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory\n"
        "Aborted\n",
        "log_error",
        "Could not load library libcudnn_cnn_infer.so.8",
    ),
    # torch.onnx's diagnostic (fresh34): the logger's line names the rule by its code; the words of
    # the failure are under the rule line.
    "error-named-by-a-code-only": (
        "ERROR: missing-standard-symbolic-function\n"
        "=========================================\n"
        "Exporting the operator 'aten::scaled_dot_product_attention' to ONNX opset version 15 is not supported. "
        "Please feel free to request support or submit a pull request on PyTorch GitHub: "
        "https://github.com/pytorch/pytorch/issues.\n"
        "None\n"
        "<Set verbose=True to see more details>\n",
        "error_phrase",
        "Exporting the operator 'aten::scaled_dot_product_attention' to ONNX opset version 15 is not supported",
    ),
    # A Cosmos user (fresh31), in double quotes after "an error for", inside a trainer's job log.
    "error-in-double-quotes-in-a-sentence": (
        "The tokenizer has new PAD/BOS/EOS tokens that differ from the model config and generation config. "
        "The model config and generation config were aligned accordingly, being updated with the tokenizer's "
        "values. Updated tokens: {'bos_token_id': None}.\n"
        'But when I ran post-training with Cosmos-1.0-Autoregressive-4B, there was an error for "Missing key in '
        'checkpoint state_dict: module.decoder.layers.self_attention.q_layernorm._extra_state/shard_0_16".\n',
        "error_phrase",
        "Missing key in checkpoint state_dict: module.decoder",
    ),
    # whisper-ctranslate2 (fresh32): the program aborts after saying why; the abort is not the failure.
    "an-abort-under-the-reason-it-prints": (
        "time whisper-ctranslate2 --model large-v2 --language en --word_timestamps True --output_format json "
        "childrenatplay_davies_ah_64kb.mp3\n"
        "Detected language 'English' with probability 1.000000\n"
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\n"
        "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor\n"
        "Aborted (core dumped)\n\n"
        "real    0m6.853s\n",
        "error_phrase",
        "Unable to load any of {libcudnn_ops.so.9.1.0",
    ),
    # LLaMA-Factory on native Windows (fresh32): torchrun's note that it cannot redirect output is
    # printed first; the warning under it is what went wrong.
    "a-tools-note-above-the-warning-that-failed": (
        "[INFO|2025-03-02 19:39:21] llamafactory.cli:157 >> Initializing distributed tasks at: 127.0.0.1:28133\n"
        "W0302 19:39:39.186000 22436 torch\\distributed\\elastic\\multiprocessing\\redirects.py:27] NOTE: "
        "Redirects are currently not supported in Windows or MacOs.\n"
        "[W socket.cpp:697] [c10d] The client socket has failed to connect to [WIN-57PDHSNQNT2]:28133 "
        "(system error: 10049 - 在其上文中，该请求的地址无效。).\n",
        "error_phrase",
        "The client socket has failed to connect",
    ),
}


@pytest.mark.parametrize(("paste", "pattern", "part"), ERROR_LINES.values(), ids=ERROR_LINES.keys())
def test_the_root_is_this_error_line(paste: str, pattern: str, part: str) -> None:
    _, got_pattern, message = root_of(paste)
    assert got_pattern == pattern and part in message


def test_an_abort_or_a_note_alone_is_still_the_root():
    assert root_of("Aborted (core dumped)\n")[1] == "segfault"
    assert root_of("ERROR: missing-standard-symbolic-function\n")[1] == "log_error"
    assert root_of("NOTE: Redirects are currently not supported in Windows or MacOs.\n")[1] == "error_phrase"
    # a segmentation fault is the failure itself, whatever was printed before it
    assert root_of("Unable to load any of {libfoo.so}\nSegmentation fault (core dumped)\n")[1] == "segfault"


def test_cmakes_error_is_read_with_the_message_under_its_header():
    # llama-cpp-python's build (fresh33): the header alone says nothing; what failed is the line under it.
    sig, _ = signature_from_text(
        "The build fails with:\n\n```\nCMake Error at vendor/llama.cpp/CMakeLists.txt:102 (message):\n"
        "LLAMA_CUBLAS is deprecated and will be removed in the future.\n```\n"
    )
    assert sig.pattern == "cmake_error" and sig.raw_message.endswith(
        "LLAMA_CUBLAS is deprecated and will be removed in the future."
    )
    # Under pip's indent (fresh31): CMake's configure checks that fail by design are no error, the
    # header is found though indented, and its message ends at the call stack.
    sig, _ = signature_from_text(
        "      -- Performing Test CMAKE_HAVE_LIBC_PTHREAD - Failed\n"
        "      -- Looking for pthread_create in pthreads - not found\n"
        "      -- cuBLAS found\n"
        "      CMake Error at C:/Users/MSI-NB/AppData/Local/Temp/pip-build-env-hemd9i_c/overlay/Lib/site-packages/"
        "cmake/data/share/cmake-3.26/Modules/CMakeDetermineCompilerId.cmake:501 (message):\n"
        "        No CUDA toolset found.\n"
        "      Call Stack (most recent call first):\n"
        "        vendor/llama.cpp/CMakeLists.txt:188 (enable_language)\n"
    )
    assert sig.pattern == "cmake_error" and sig.raw_message.endswith("(message): No CUDA toolset found.")
    # sentencepiece's build (fresh17): CMake's message runs over blank lines while it stays indented.
    sig, _ = signature_from_text(
        "CMake Error at CMakeLists.txt:23 (project):\n  Generator\n\n    NMake Makefiles\n\n"
        "  does not support platform specification, but platform x64 was specified.\n\n\n"
        "-- Configuring incomplete, errors occurred!\n"
    )
    assert sig.raw_message.endswith(
        "Generator NMake Makefiles does not support platform specification, but platform x64 was specified."
    )


def test_an_api_error_body_is_read_whole_and_its_keys_name_nothing():
    from kb.normalize import message_slots

    # A Node client's log of an OpenAI error (fresh39): the body under `data: {`, keys unquoted.
    sig, _ = signature_from_text(
        "  data: {\n"
        "    error: {\n"
        "      message: 'This is a chat model and not supported in the v1/completions endpoint.',\n"
        "      type: 'invalid_request_error',\n"
        "      param: 'model',\n"
        "      code: null\n"
        "    }\n"
        "  }\n"
    )
    assert sig.pattern == "error_mapping" and "This is a chat model" in sig.raw_message
    assert sig.raw_message.endswith("code: null }")
    assert "invalid_request_error" in message_slots(sig.raw_message)
    # A body that never closes (a cut paste) ends after ERROR_MAPPING_LINES lines, not at the end of the log.
    from kb.logpatterns import ERROR_MAPPING_LINES

    sig, _ = signature_from_text('"error": {\n' + '"message": "x y z",\n' * 40)
    assert sig.raw_message.count("x y z") == ERROR_MAPPING_LINES


def test_what_an_error_line_is_not():
    # the system's error text in a sentence is no error line
    assert root_of("we hit a permission denied earlier but that is fixed now\n")[1] != "os_error"
    # a bare type in backticks says less than the sentence around it
    assert root_of("Sometimes we get error `AssertionError ` here\n")[1] != "error_phrase"
    assert root_of('The run logs the error "Timeout" and goes on\n')[1] != "error_phrase"


def test_pytorchs_rocm_hint_sentences_are_no_part_of_what_failed():
    # PyTorch's ROCm build appends CUDA's hint sentences in HIP's words.
    sig, _ = signature_from_text(
        "torch.AcceleratorError: HIP error: invalid device function\n"
        "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
        "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.\n"
    )
    assert "asynchronously" not in sig.message and "serialize" not in sig.message.lower()
    assert "dsa" not in sig.message.lower()


def test_a_private_exception_class_is_read_as_the_exception():
    # gRPC raises classes whose names start with an underscore (grpc/grpc#11896, ray-project/ray#21440).
    # The frames below lost their indent in the paste, so only the exception's name tells the code from the error.
    sig, _ = signature_from_text(
        "Traceback (most recent call last):\n"
        'File "./greeter_client.py", line 28, in run\n'
        "response = stub.SayHello(helloworld_pb2.HelloRequest(name='you'))\n"
        'File "...python2.7/site-packages/grpc/_channel.py", line 440, in _end_unary_response_blocking\n'
        "raise _Rendezvous(state, None, None, deadline)\n"
        "grpc._channel._Rendezvous: <_Rendezvous of RPC that terminated with (StatusCode.UNAVAILABLE, "
        "Endpoint read failed)>\n"
    )
    assert sig.exc_type == "_Rendezvous" and "Endpoint read failed" in sig.message
    sig, _ = signature_from_text(
        "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n"
        "        status = StatusCode.RESOURCE_EXHAUSTED\n"
        '        details = "Received message larger than max (218771147 vs. 104857600)"\n'
    )
    assert sig.exc_type == "_InactiveRpcError" and "RESOURCE_EXHAUSTED" in sig.message


def test_an_exception_line_indented_like_code_ends_its_traceback():
    # The frames lost their indent and the exception line kept some (verl's model merger, a later
    # report; datasets' train_test_split): no frame follows it, so it is the error, not a source line.
    sig, _ = signature_from_text(
        'File "verl/model_merger/fsdp_model_merger.py", line 202, in _load_and_merge_state_dicts\n'
        "      state_dict[key] = torch.cat(state_dict[key], dim=0)\n"
        "  RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated\n"
    )
    assert sig.exc_type == "RuntimeError" and "zero-dimensional tensor" in sig.message
    sig, _ = signature_from_text(
        'File " lib/python3.12/site-packages/datasets/arrow_dataset.py", line 4596, in train_test_split\n'
        "  raise ValueError(\n"
        "   ValueError: test_size=1.0 should be either positive and smaller than the number of samples 330000 "
        "or a float in the (0, 1) range\n"
    )
    assert sig.exc_type == "ValueError" and sig.message.startswith("test_size=")


def test_an_exception_stated_above_its_frames_names_them():
    # huggingface/transformers (5.x tied weights): the user put the error first, then the one frame,
    # both indented as a markdown code block under a line of prose.
    sig, _ = signature_from_text(
        "Error on trainer startup:\n\n"
        "    AttributeError: 'list' object has no attribute 'keys'\n"
        '    File "transformers/modeling_utils.py", line 2489, in get_expanded_tied_weights_keys\n'
    )
    assert sig.exc_type == "AttributeError" and sig.message == "'list' object has no attribute 'keys'"
