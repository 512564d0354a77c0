from __future__ import annotations

from kb.normalize import mask_message, message_slots, module_of, surface_words, tokenize
from triage.ranking import slot_agreement


def test_masking_removes_what_differs_between_users():
    msg = "CUDA out of memory. Tried to allocate 4.64 GiB at /root/a/b.py pid=7773 addr 0x7f97c234c290 vllm 0.11.0"
    assert (
        mask_message(msg)
        == "CUDA out of memory. Tried to allocate <NUM> GiB at <PATH> b.py pid=<PID> addr <HEX> vllm <VER>"
    )


def test_masking_keeps_what_tells_two_failures_apart():
    """The missing file's name and the unreachable service's host stay; the folders and the rest of the URL go."""
    a = mask_message("OSError: Can't load /home/alice/ckpt/step_100/config.json")
    b = mask_message("OSError: Can't load /data/bob/models/tokenizer.json")
    assert a == "OSError: Can't load <PATH> config.json" and b == "OSError: Can't load <PATH> tokenizer.json"
    assert mask_message("ConnectionError: HTTPSConnectionPool: https://huggingface.co/api/models/x?rev=1 failed") == (
        "ConnectionError: HTTPSConnectionPool: <URL> huggingface.co failed"
    )
    assert mask_message("cannot open /opt/conda/lib/") == "cannot open <PATH>"


def test_masking_drops_library_boilerplate():
    masked = mask_message(
        "CUDA error: no kernel image is available CUDA kernel errors might be asynchronously reported at some "
        "other API call, so the stacktrace below might be incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    )
    assert masked == "CUDA error: no kernel image is available"


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


def test_tokens_split_identifiers_and_chinese():
    tokens = tokenize("max_num_batched_tokens LLMEngine 训练卡住")
    assert {"max_num_batched_token", "batch", "llmengine", "engine", "训练", "卡住"} <= set(tokens)


def test_error_families_keep_what_went_wrong():
    from kb.normalize import error_family

    assert error_family("CUDA error: device-side assert triggered") == (
        "cuda",
        frozenset({"device", "side", "assert", "trigger"}),
    )
    assert (
        error_family("cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version")[0]
        == "cuda"
    )
    assert error_family(
        "NCCL error in: <PATH>:<NUM>, internal error - please report this issue to the NCCL developers"
    ) == (
        "nccl",
        frozenset({"internal"}),
    )
    assert error_family("max_tokens must be at least 1") is None


def test_rocm_hip_errors_are_cudas_family():
    # fresh22: ROCm's PyTorch says CUDA's runtime errors as "HIP error: …" (pytorch#164346); what
    # went wrong still decides which failure it is, as for CUDA's.
    from kb.normalize import error_family

    hip = error_family("HIP error: invalid device function")
    assert hip == ("cuda", frozenset({"invalid", "device", "function"}))
    assert hip != error_family("CUDA error: invalid device ordinal")
    assert hip == error_family("CUDA error: invalid device function")


def test_slots_keep_the_names_masking_would_merge():
    assert message_slots(
        "cannot import name 'GRPOConfig' from 'trl' (/usr/lib/python3.11/site-packages/trl/__init__.py)"
    ) == (
        "grpoconfig",
        "trl",
    )
    assert message_slots("/usr/bin/ld: cannot find -lcurand: No such file or directory") == ("-lcurand",)
    assert "code:802" in message_slots(
        "Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized"
    )
    assert message_slots("DPOTrainer.__init__() got an unexpected keyword argument 'max_prompt_length'") == (
        "max_prompt_length",
        "dpotrainer.__init__",
    )


def test_slots_ignore_prose_apostrophes_and_mask_numbers():
    assert message_slots("Your setup doesn't support bf16/gpu.") == ()
    assert message_slots("version `GLIBCXX_3.4.30' not found (required by /opt/x/libfoo.so)") == (
        "glibcxx_#.#.#",
        "libfoo",
    )
    assert message_slots("unrecognized arguments: --local_rank=3") == ("--local_rank",)


def test_slots_keep_the_shared_library_a_loader_could_not_open():
    # fresh5's look-alike: TensorRT-LLM's mpi4py missing libmpi is not CUDA's runtime missing.
    mpi = message_slots("ImportError: libmpi.so.12: cannot open shared object file: No such file or directory")
    cudart = message_slots("OSError: libcudart.so.12: cannot open shared object file: No such file or directory")
    assert mpi == ("libmpi",) and cudart == ("libcudart",)
    # Another version of the same library is the same slot.
    assert (
        message_slots("OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory") == cudart
    )
    assert message_slots('OSError: [WinError 126] Error loading "C:/torch/lib/fbgemm.dll"')[-1] == "fbgemm"


def test_a_librarys_sentence_appended_to_many_errors_names_no_slot():
    # Two reports of one failure (a display GPU's watchdog), by PyTorch 2.x and by an old release:
    # the newer one's hint names `TORCH_USE_CUDA_DSA`, which would conflict with the older one's code.
    newer = message_slots(
        "CUDA error: the launch timed out and was terminated\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
        "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."
    )
    older = message_slots("cuda runtime error (6) : the launch timed out and was terminated at THCTensorCopy.cpp:21")
    assert newer == () and older == ("code:6",)
    assert slot_agreement(newer, older)["slot_conflict"] == 0.0


def test_slots_keep_the_port_of_a_connection_not_the_address():
    redis = message_slots("Error 111 connecting to 10.0.3.7:6379. Connection refused.")
    assert "port:6379" in redis and not any("10.0" in s for s in redis)
    assert message_slots("The client socket has failed to connect to [localhost]:29500 (errno: 99)")[-1] == "port:29500"


def test_a_flag_the_shell_ran_as_a_command_is_no_slot():
    # Launch scripts whose line above lost its trailing backslash (public issues of VLM-3R and
    # ms-swift): the shell runs the next flag as a command, whichever flag it is.
    assert message_slots("eval_vlm_3r_vsibench.sh: line 9: -m: command not found") == ()
    assert message_slots("merge.sh: line 2: --model: command not found") == ()
    # A program the shell could not find, and a flag inside another message, still are.
    assert message_slots("error: unrecognized arguments: --local_rank=0") == ("--local_rank",)
    assert message_slots("deepspeed: error: argument --num_gpus: expected one argument") == ("--num_gpus",)


def test_matched_tokens_are_shown_as_the_words_of_the_message():
    message = (
        "ImportError: libcusparse.so.12: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE; "
        "set NCCL_SOCKET_IFNAME, socket timeouts"
    )
    tokens = ["undefin", "symbol", "libcusparse", "cuda", "socket", "timeout"]

    # `cuda` is only part of a longer name here, and `socket` is a word of its own as well
    assert surface_words(message, tokens) == ["undefined", "symbol", "libcusparse", "cuda", "socket", "timeouts"]


def test_a_models_name_is_no_slot():
    # Two vLLM users (public issues) asked the server for a model it does not serve: each names their own.
    first = message_slots('{"object":"error","message":"The model `Qwen1.5-14B-Chat-GPTQ-Int8` does not exist."}')
    second = message_slots("Error code: 404 - {'message': 'The model `/data/Qwen1.5-72B-Chat` does not exist.'}")
    assert not [s for s in first + second if "qwen" in s]
    assert message_slots("OSError: Can't load tokenizer for 'meta-llama/Llama-2-7b-hf'") == ()
    # A name with digits that is no model's stays: a module, a layer's key.
    assert message_slots("No module named 'flash_attn_2_cuda'") == ("flash_attn_#_cuda",)
    assert message_slots("KeyError: 'model.layers.0.mlp.gate_proj.weight'") == ("model.layers.#.mlp.gate_proj.weight",)


def test_a_name_quoted_with_mixed_quotes_is_the_name_alone():
    # A user's "ModuleNotFoundError: No module named 'resource‘”is displayed" (vllm on native Windows):
    # the slot is the module, as in the entry's "No module named 'resource'".
    assert message_slots("No module named 'resource‘”is displayed") == message_slots("No module named 'resource'")
    assert message_slots("No module named ‘resource’") == ("resource",)


def test_the_keys_of_a_printed_mapping_are_no_slots_its_values_are():
    # llama-server's JSON error (fresh38) and pydantic's error list (fresh37): every such error has
    # these keys; what tells two of them apart is in the values.
    assert message_slots(
        'got exception: {"code":500,"message":"image input is not supported by this server","type":"server_error"}'
    ) == ("server_error", "code:500")
    assert message_slots(
        "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_otpions'), 'msg': 'Extra inputs are not permitted'}]"
    ) == ("extra_forbidden", "body", "stream_otpions")
    # A quoted name before a colon elsewhere in a sentence is still a value.
    assert message_slots('Please add <"zero_allow_untested_optimizer": true> in the configuration file') == (
        "zero_allow_untested_optimizer",
    )
