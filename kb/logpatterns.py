"""The patterns log scanning recognises: prefixes, traceback parts, error lines, symptoms, metrics.

Pure data (compiled regular expressions and tables) plus the metrics-anomaly rule, so that
`kb.logscan` and its readers hold only the scanning logic.
"""

from __future__ import annotations

import os
import re

ANSI_RE = re.compile(r"(?:\x1b)?\[\d{1,3}(?:;\d{1,3})*m|\x1b\[[0-9;?]*[A-Za-z]")
# A colour code between two single spaces, as vLLM prints one after a worker's tag ("(VllmWorker
# rank=0 pid=281) \x1b[0;0m WARNING 05-15 …"): it goes with one of the spaces, so the line reads as
# it would uncoloured and the logger's header after the tag is still a prefix. Before an indented
# line (two spaces or more) it leaves the indentation alone.
SPACED_ANSI_RE = re.compile(rf" (?:{ANSI_RE.pattern})+(?= \S)")
TQDM_RE = re.compile(r"[^\n|]{0,40}\d{1,3}%\|[^|\n]{0,200}\|\s*[\d.]+[kM]?/[\d.?]+[kM]?\s*\[[^\]\n]{0,80}\]")
# A line that is a progress bar and nothing else, whatever its width or where a paste cut it
# ("100%|████████…" with no counters after it): output, never what went wrong.
BAR_LINE_RE = re.compile(
    r"^[^|\n]{0,40}\d{1,3}%\|[\u2580-\u259f\s#=>.\ufffd-]*(?:\|\s*[\d.]+[kM]?/[\d.?]+[kM]?(?:\s*\[[^\]\n]*\]?)?\s*)?$"
)
# What a title shows without: a progress bar of any width (a wide terminal draws bars past TQDM_RE's
# 200 columns; the scanner keeps that bound, since widening it changed which chat turns are reports)
# transformers' logging header ("[WARNING|logging.py:305] 2023-10-19 09:44:55,318 >> ") and glog's
# ("[E914 16:41:52.386201954 ProcessGroupNCCL.cpp:632] ", PyTorch's and Ray's C++ code).
DISPLAY_NOISE_RE = re.compile(
    r"\d{1,3}%\|[^|\n]*\|\s*[\d.]+[kM]?/[\d.?]+[kM]?\s*\[[^\]\n]{0,80}\]"
    r"|\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\|[\w.-]+:\d+\]\s*(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+\s*)?>>\s*"
    r"|^\[[IWEF]\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)?(?: +\d+)? +[\w.-]+:\d+\] *"
)

# A date and time in brackets and nothing else, as a supervisor or `ts` stamps each line of a child's output.
STAMP_RE = re.compile(r"\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\]")
# A date and time anywhere in a line's stripped prefix, in brackets or not: the line is stamped.
STAMPED_RE = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")
# The tag Ray ("(WorkerDict pid=4123)") or torchrun ("[rank0]:", "[default3]:") puts on every line
# one process prints, found in a line's stripped prefix.
PROCESS_TAG_RE = re.compile(r"(?:^|\s)(?:\((?:[\w.\-]+\s+)?[^()]*pid=\d+[^)]*\)|\[[\w.\-]{1,30}\]:)")
# Prefixes that launchers, Ray, torchrun, docker compose and NCCL put in front of every line.
PREFIX_RES = (
    # CI runners' timestamps (GitHub Actions "2026-07-30T10:35:18.6494363Z ", Jenkins "[2026-07-30T10:35:18.649Z] ").
    re.compile(r"^\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\]?\s"),
    # A supervisor's or `ts`'s stamp on every line of a child's output: "[2026-03-11 17:47:54] ".
    re.compile("^" + STAMP_RE.pattern + r"\s?"),
    # Buildkite's inline timestamps ("_bk;t=1690000000000\x07").
    re.compile(r"^_bk;t=\d+\x07?"),
    # Docker BuildKit's plain progress: the build step and the seconds since it began ("#10 98.65 ERROR: …").
    re.compile(r"^#\d{1,4} \d+\.\d+ "),
    # CI markers, kept as the line's level: GitHub Actions "##[error]", "::error file=a.py,line=3::",
    # GitLab's "section_start:1690000000:step_script" (its text follows after a carriage return).
    re.compile(r"^##\[(?P<level>error|warning|notice|debug|group|endgroup|command|section)\]", re.I),
    re.compile(r"^::(?P<level>error|warning|notice|debug|group|endgroup)(?:\s[^:]{0,300})?::"),
    re.compile(r"^section_(?:start|end):\d+:[\w.\-]+(?:\[[^\]]*\])?"),
    # Cluster launchers that tag each line with where it came from: Slurm's `srun --label` ("3: "),
    # OpenMPI's `--tag-output` ("[1,0]<stderr>:"), pdsh as DeepSpeed's multi-node runner uses it
    # ("worker-1: ", "10.0.0.12: ").
    re.compile(r"^\d{1,5}: "),
    re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:"),
    # (a host name needs its hyphen and digit: "collect2: error:" is the compiler's own line)
    re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z]*\d[a-z0-9]*): "),
    # A test runner's or launcher's capture of a child's streams: "stderr: [rank0]: ...".
    re.compile(r"^(?:stdout|stderr):\s"),
    # Any short bracketed tag ending in a colon: [rank0]:, [rankx]:, [default0]:, [worker-3]:.
    re.compile(r"^\[[\w.\-]{1,30}\]:\s?"),
    re.compile(r"^\((?:[\w.\-]+\s+)?(?:[\w.\-]+=[^\s,)]+[,\s]+)*pid=\d+[^)]{0,80}\)\s?"),
    # docker compose and similar multiplexers: "worker-3  | ", "trainer_1 | ".
    re.compile(r"^[\w.\-]{0,30}[\d_\-][\w.\-]{0,30}\s+\|\s"),
    # Markdown quotes and an opening backtick around a pasted error; a quote's empty line (">") is blank.
    re.compile(r"^(?:>\s?)+(?=\S|$)"),
    re.compile(r"^`(?!``)"),
    # Python logging with its time first, the level in words: "2024-09-04 23:45:31,637 [INFO] (trainer) ",
    # "2024-09-04 23:45:31,637 - root - ERROR - ", loguru's "2024-09-04 23:45:31.637 | WARNING  | ",
    # FastChat's "2025-05-15 23:11:06 | ERROR | stderr | ".
    re.compile(
        r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:\s+[-|]\s+[\w.\-]{1,60})?\s+(?:[-|]\s+)?"
        r"\[?(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL)\]?:?(?:\s+\|\s+[\w.\-]{1,60}(?=\s+\|\s))?(?:\s+[-|])?\s+(?=\S)"
    ),
    # A date and time with nothing after it that logging's format above reads, as an application
    # stamps what it prints ("2026-01-24T12:34:45.231016 - !!! Exception during processing !!! …",
    # "2024-05-01 10:00:00.123 Traceback (most recent call last):").
    re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\s+-)?\s+(?=\S)"),
    # Python logging's default format: "ERROR:root:", "WARNING:accelerate.accelerator:".
    re.compile(r"^(?P<level>ERROR|CRITICAL|WARNING|INFO|DEBUG):[\w.\-]{1,60}:(?=\S)"),
    re.compile(r"^(?P<level>ERROR|INFO|WARNING|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[?[\w./-]+:\d+\]\s"),
    re.compile(r"^[\w.-]+:\d+:\d+ \[\d+\] "),
    # pytest's marker before the lines of a failure's explanation ("E       RuntimeError: …").
    re.compile(r"^E {3,}(?=\S)"),
)

FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+?))?\s*$')
CARET_RE = re.compile(r"^\s*[\^~]+\s*$")
TB_HEAD_RE = re.compile(r"^\s*Traceback \(most recent call last\):\s*(?P<rest>.*)$")
CHAIN_CAUSE_RE = re.compile(r"^\s*The above exception was the direct cause of the following exception")
CHAIN_DURING_RE = re.compile(r"^\s*During handling of the above exception, another exception occurred")
RAY_SECTION_RE = re.compile(r"^\s*ray::[\w.]+\(\)")
# A class private to its module keeps its underscore (grpc._channel._InactiveRpcError, torch._C._LinAlgError).
EXC_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*"
    r"(?:_?[A-Za-z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Died)|Exception|KeyboardInterrupt|StopIteration)"
    # any class from a module named errors/exceptions (triton.runtime.errors.OutOfResources)
    r"|(?:[A-Za-z_]\w*\.)*(?:errors|exceptions)\.[A-Z]\w*)"
    r"(?:\((?P<inner>[\w.]+)\))?"
    r"(?:(?P<colon>:)\s*(?P<msg>.*))?$"
)
# An exception printed as its repr, as a logger prints the exception object it caught
# (`ERROR … [engine.py:158] AssertionError('Only FlashAttention backend is supported for now.')`).
# Its groups are EXC_RE's, for the same readers (`inner` matches nothing: a repr wraps no type).
EXC_REPR_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Za-z]\w*(?:Error|Exception)|Exception))"
    r"\((?P<q>['\"])(?P<msg>\S.*?)\s*(?P=q),?\)(?P<inner>)$"
)
# Any class named with its module, as Python prints an exception that is not a builtin, whatever its
# name ends in (pyarrow.lib.ArrowInvalid: …, torch._dynamo.exc.Unsupported: …). Loggers and config
# dumps print the same shape (util.NativeCodeLoader: …, env.CUDA_VISIBLE_DEVICES: …), so it is read
# only where an exception must be (under a traceback's frames), or as a weak root of its own line.
MODULE_EXC_RE = re.compile(
    r"^(?P<type>(?:[a-z_]\w*\.)+_?[A-Z][a-z]\w*)(?:\((?P<inner>[\w.]+)\))?(?P<colon>:)\s*(?P<msg>\S.*)$"
)
# A warning whose `path.py:362: ` a narrow terminal or a paste put on the line above.
WRAPPED_WARNING_RE = re.compile(r"^(?P<type>[A-Z]\w{0,40}Warning): (?P<msg>\S.*)$")
# Where a sentence may name an exception: after a space, a comma or a colon (also CJK ones), or
# right after a CJK character, since Chinese and Japanese put no space before a Latin word
# ("报错ValueError: …", "启动时显示错误ImportError: …").
# The error may be quoted or marked up as code or bold (`…`, "…", **…**), or both ("**…**"), and
# then ends where the innermost quote closes.
_PROSE_EXC = r"(?P<open>(?:\*\*|`|\"|“|「){1,2})?(?=(?:[a-z_]\w{0,40}\.){0,8}[A-Z]\w{0,60}(?:Error|Exception)\b)"
PROSE_EXC_START_RE = re.compile(
    r"(?:(?<=\S)[\s,;:，：；。]{1,8}|(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]))" + _PROSE_EXC
)
PROSE_EXC_OPEN_RE = re.compile(r"\*\*|`|\"|“|「")
PROSE_EXC_CLOSE = {"**": "**", "`": "`", '"': '"', "“": "”", "「": "」"}
# An error a sentence quotes as code right after naming it ("I get the error `unexpected keyword
# argument 'token'`", "error: `…`"): what is quoted is the error, whatever words it uses.
# In double quotes too, after a word that joins it to the error ("there was an error for "Missing key
# in checkpoint state_dict: …"", "got the error: "…"").
QUOTED_ERROR_RE = re.compile(
    r"\b(?:error|exception)s?\b(?:\s+(?:for|of|like|saying|message))?\s*[:：]?\s*"
    r"(?:`(?P<msg>[^`\n]{8,300})`|[\"“](?P<dmsg>[^\"“”\n]{8,300})[\"”])",
    re.I,
)
# Words by which a program says it handled an exception it names: a retry, a skipped item, a fallback.
HANDLED_RE = re.compile(
    r"\b(?:retry|retrying|retries|retried|skip|skipping|skipped|caught|catching|ignor(?:e|ed|ing)|fall(?:ing)? back"
    r"|fallback|attempt\w*|handled|recovered)\b|重试|跳过|忽略|回退",
    re.I,
)
# Quantifiers before a literal are bounded: on a megabyte-long line an unbounded \S+ would make
# every search quadratic.
WARNING_RE = re.compile(r"(?P<path>[^\s:]{1,300}\.py):\d+: (?P<type>\w{0,40}Warning): (?P<msg>.*)$")
# The source line Python prints under a warning (`warnings.formatwarning`): indented by two spaces.
WARNING_SOURCE_RE = re.compile(r"^  \S")
# argparse: "prog: error: …" (Slurm's tools say the same, and have their own pattern), or only
# argparse's own wording when a paste dropped the program name before "error:".
ARGPARSE_RE = re.compile(
    r"^(?!(?:slurmstepd|srun|sbatch|salloc)\b)[\w .-]{1,40}: error: .+$|"
    r"^error: (?:unrecognized arguments|the following arguments are required|"
    r"argument [\w/-]+: (?:invalid|expected|ambiguous|not allowed|conflicting))\b"
)
# What only argparse says after "error:"; without it, a "prog: error: …" line is argparse's only under
# its "usage:" line (at most ARGPARSE_USAGE_LINES lines up): C programs word their own errors the same way
# ("llama_init_from_gpt_params: error: failed to load model", "clang: error: unsupported option").
ARGPARSE_WORDING_RE = re.compile(
    r"error: (?:unrecognized arguments|the following arguments are required|argument [\w/-]+: |invalid choice: "
    r"|ambiguous option: |one of the arguments )"
)
ARGPARSE_USAGE_RE = re.compile(r"^\s*usage: ", re.I)
ARGPARSE_USAGE_LINES = 200
LOG_LINE_RE = re.compile(
    r"^(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d\d:\d\d:\d\d\]|\[?(?:INFO|WARNING|WARN|DEBUG|ERROR)\b|\[(?:INFO|WARNING|ERROR):|\d{1,3}%\||"
    r"INFO:|WARNING:|DEBUG:|\[?[IWEF]\d{3,4} \d\d:\d\d:\d\d)"
)

# CMake's error header ("CMake Error at CMakeLists.txt:102 (message):"), also indented under pip's
# build output: what failed is on the lines under it, up to a blank line or its call stack.
CMAKE_ERROR_HEAD_RE = re.compile(r"^CMake Error\b.{0,400}:$")
CMAKE_MESSAGE_LINES = 6
# An HTTP API's error body printed over several lines (OpenAI's format, which vLLM, SGLang and Ollama's
# compatible servers answer with): the `"error": {` key that opens it, and how many lines it may take.
ERROR_MAPPING_HEAD_RE = re.compile(r"""^(?:data:\s*)?["']?errors?["']?\s*:\s*\{$""")
ERROR_MAPPING_LINES = 20

# Lines a weak root at most (kb.rootcause ranks them under every other error line): a program's
# abort (SIGABRT, "Aborted (core dumped)"), which follows the message of what made it abort; and a
# note a tool prints in capitals ("… NOTE: Redirects are currently not supported in Windows or MacOs."),
# which says what it will not do, not what failed.
ABORT_RE = re.compile(r"\bAborted\b|\bSIGABRT\b")
NOTE_LINE_RE = re.compile(r"(?:^|[\s\]:>|])NOTE:\s")
# An error line that names its failure by a code and nothing else ("ERROR: missing-standard-symbolic-function",
# torch.onnx's diagnostic, whose words are on the lines under it): it says nothing another error line says.
CODE_ONLY_ERROR_RE = re.compile(r"^\W{0,3}(?:error|fatal|critical)\W{1,3}[\w.\-]+\W{0,3}$", re.I)

# pip's codes for "a subprocess failed" (the subprocess's own output under them says why): never the
# error, though they open a line the way a command-line tool's own diagnostic does.
PIP_WRAPPER_RE = re.compile(
    r"^\s*error: (?:subprocess-exited-with-error|metadata-generation-failed|legacy-install-failure)\b"
)

# A logger's or supervisor's header of unknown format in front of an exception line
# ("[16:10:33] stdout/INFO  triton.runtime.errors.OutOfResources: ...", "2024-05-01 10:00:00,123 -
# trainer - ERROR - ValueError: ..."): at most 8 tokens, one of them a clock time or a level word.
LEVEL_WORDS = r"(?:ERROR|CRITICAL|FATAL|WARNING|WARN|INFO|DEBUG)"
LOG_HEADER_MARK_RE = re.compile(rf"(?<!\d)\d\d:\d\d:\d\d|\b{LEVEL_WORDS}\b")
# A level word in lower case opens some loggers' lines ("error   requests.exceptions.ReadTimeout: …").
LOWER_LEVEL_HEAD_RE = re.compile(r"^(?:error|critical|fatal|warning|warn|info|debug)\s")
# How a header's last token ends before the exception: a separator, a number or path, a level
# word ("... retrying after ConnectionError: ..." is prose, not a header).
LOG_HEADER_END_RE = re.compile(rf"[\]|:>\-]$|^\W+$|[\d/]|^{LEVEL_WORDS}$")
LOG_HEADER_TOKENS = 8

# The operating system's own error texts, as its C library words them ("Permission denied",
# "Invalid argument", "Exec format error"), whoever printed them.
OS_ERRORS = tuple(t for t in map(os.strerror, range(1, 134)) if not t.startswith("Unknown error"))

# Error lines that are not Python exceptions; the name says what kind of failure it is.
ERROR_LINE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cuda_oom", re.compile(r"CUDA out of memory", re.I)),
    ("command_not_found", re.compile(r":\s*(?:line \d+:\s*)?\S{1,300}: command not found\s*$")),
    ("nccl_warn", re.compile(r"\bNCCL WARN\b\s*(?P<msg>.*)")),
    ("nccl_error", re.compile(r"\bNCCL (?:error|ERROR)\b(?P<msg>.*)")),
    ("disk_full", re.compile(r"No space left on device", re.I)),
    # PyTorch's load_state_dict lists what did not fit under its RuntimeError; a paste often keeps only the list.
    (
        "state_dict_mismatch",
        re.compile(
            r"^\s*(?:size mismatch for \S{1,300}: copying a param with shape|(?:Missing|Unexpected) key\(s\) in state_dict:)"
        ),
    ),
    (
        "host_oom",
        re.compile(r"\b(?:Out of memory: Killed process|oom[-_]kill|OOM killer|running low on memory)\b", re.I),
    ),
    # Slurm: the job hit its time limit or was cancelled; any other error slurmstepd or srun reports.
    ("job_time_limit", re.compile(r"\bCANCELLED AT \S+ DUE TO TIME LIMIT\b|\bJob \d+ exceeded (?:its )?time limit")),
    ("scheduler_error", re.compile(r"^(?:slurmstepd|srun|sbatch|salloc)(?:-[\w.-]+)?: error: ")),
    ("segfault", re.compile(r"\b(?:Segmentation fault|Bus error|core dumped|SIGSEGV|SIGBUS|SIGABRT)\b")),
    # torchrun's "exitcode : -9", "Signal 9 (SIGKILL) received", a shell's bare "Killed": usually the
    # host's OOM killer.
    (
        "killed_by_signal",
        re.compile(r"\bSIGKILL\b|\bSignal 9\b|exitcode\s*:\s*-9\b|^\s*Killed\s*$|\b\d+ Killed\s{2,}\S"),
    ),
    # AMD GPUs (ROCm): the runtime's report of a GPU fault or hang.
    ("gpu_fault", re.compile(r"HW Exception by GPU|Memory access fault by GPU|reason\s*:\s*GPU Hang")),
    ("watchdog_timeout", re.compile(r"Watchdog caught collective operation timeout", re.I)),
    # CI: a test that failed, named by its id (pytest's short summary, unittest's header), a test
    # killed by a timeout, the runner cancelling or timing out the job.
    (
        "test_failed",
        re.compile(r"^(?:FAILED|ERROR) (?:\[[\d.]+m?s\] )?(?P<test>[\w./\-]+\.py::\S+)(?: - (?P<msg>.*))?$"),
    ),
    ("test_failed", re.compile(r"^(?:FAIL|ERROR)(?: \[[\d.]+m?s\])?: (?P<test>test\w*) \((?P<cls>[\w.]+)\)")),
    # automake / make-check style: "FAIL: tests/test_x", "Running foo-test ...... FAIL foo-test".
    ("test_failed", re.compile(r"^FAIL: (?P<test>[\w./\-]+)\s*$|\.{3,}\s*FAIL(?:ED)?\b")),
    ("test_timeout", re.compile(r"^(?:E\s+)?Failed: Timeout >|^\+{5,} Timeout \+{5,}")),
    (
        "ci_cancelled",
        re.compile(
            r"The operation was canceled|has exceeded the maximum execution time|"
            r"The runner has received a shutdown signal|execution took longer than \S+ seconds"
        ),
    ),
    ("cmake_error", re.compile(r"^CMake Error(?: at \S+)?")),
    # The linker's own diagnostic ("/usr/bin/ld: cannot find -lcuda", "undefined reference to `f'").
    (
        "linker_error",
        re.compile(r"\bld(?:\.\w+)?: (?:cannot find -l\S+|cannot find \S+|error: )|undefined reference to `"),
    ),
    # CI: checkout, container registry, cloud credentials, API rate limits.
    (
        "git_error",
        re.compile(r"^fatal: \S|^error: pathspec '[^']+' did not match|^error: failed to push some refs"),
    ),
    (
        "registry_error",
        re.compile(
            r"manifest unknown|manifest for \S+ not found|pull access denied|toomanyrequests:|"
            r"denied: requested access to the resource is denied"
        ),
    ),
    (
        "credentials_error",
        re.compile(
            r"Unable to locate credentials|NoCredentialsError|ExpiredToken|InvalidAccessKeyId|SignatureDoesNotMatch|"
            r"security token included in the request is (?:invalid|expired)|Permission denied \(publickey\)"
        ),
    ),
    ("rate_limited", re.compile(r"API rate limit exceeded|secondary rate limit|429 Too Many Requests", re.I)),
    # A linter's diagnostic: "path.py:12:5: F401 `os` imported but unused".
    ("lint_error", re.compile(r"^\S{1,300}\.(?:py|pyi):\d+:\d+: [A-Z]{1,3}\d{2,4}\b|^would reformat \S+")),
    # Jenkins losing its agent or the shell step it runs.
    (
        "ci_agent_error",
        re.compile(
            r"wrapper script does not seem to be touching the log file|Agent went offline|ChannelClosedException"
        ),
    ),
    # What a build tool or a CI step says after the real error: never the cause itself.
    (
        "build_failed",
        re.compile(
            r"ninja: build stopped|make(?:\[\d+\])?: \*\*\* \S.* Error \d+|collect2: error: ld returned \d+ exit status|"
            r"ERROR: Failed building wheel for|Failed to build installable wheels|Error (?:compiling objects for|building) extension|"
            r"^\s*error: command '[^']{1,300}' failed with exit (?:code|status) \d+"
        ),
    ),
    (
        "exit_code",
        re.compile(
            r"Process completed with exit code \d+|ERROR: Job failed: exit code \d+|script returned exit code -?\d+|"
            r"exited with (?:code|status) \d+|^FAILED \((?:failures|errors)=\d+|^=+ .*\b\d+ (?:failed|error)s?\b.* in [\d.]+s"
        ),
    ),
    ("dependency_conflict", re.compile(r"\brequires \S{1,300}, but you have\b")),
    # pydantic v1's line for one invalid field, which a paste often keeps without its ValidationError
    # header: "  field required (type=value_error.missing)", "… named parameter. (type=value_error)".
    ("validation_error", re.compile(r"\(type=[a-z_]*error(?:\.[\w.]+)?(?:; [^()]{0,300})?\)\s*$")),
    # gcc/clang/nvcc diagnostics: "main.c:5:10: fatal error: Python.h: No such file or directory",
    # nvcc's own ("nvcc fatal   : Unsupported gpu architecture 'compute_89'"), and a fatal one pasted
    # without its file prefix ("fatal error: THC/THC.h: No such file or directory").
    (
        "compiler_error",
        re.compile(
            r"\S{1,300}?:\d+(?::\d+)?: (?:fatal )?error: |\S{1,300}?\(\d+\): (?:fatal )?error C\d{4}:|"
            r"(?:^|\s)nvcc (?:fatal|error)\s*: |^\s*fatal error: \S"
        ),
    ),
    (
        "cuda_error",
        re.compile(r"\b(?:CUDA|HIP) error\b|\b(?:cuda|hip)Error\w*|\bCUBLAS_STATUS_\w+|\bcuda runtime error\b"),
    ),
    ("log_error", re.compile(r"(?:^|[\s\[(])(?:ERROR|FATAL|CRITICAL|Error)(?::|\]|\s{2,}|\s(?=\w))")),
    # A command-line tool's own diagnostic, lower case at the start of a line (uv, pip, cargo, git,
    # a compiler whose file:line prefix was cut): "error: No virtual environment found".
    ("log_error", re.compile(r"^\s*error: \S")),
    # A program's own error under its name or its function's, in lower case: "clang: error: …",
    # "llama_model_load: error loading model: …" (argparse's own lines are read before these).
    ("log_error", re.compile(r"^\s*[\w.+-]{1,60}: (?:fatal )?error(?: [a-z]{2,20}){0,4}: \S")),
    # glog's severity letter, as Ray's and PyTorch's C++ code print it: "[2025-04-21 10:05:37,313 E
    # 959680 959717] file.cc:116:", "E0105 10:00:00.123456 12345 file.cc:88]", "[E105 10:00:00.000 file.cpp:616]".
    (
        "log_error",
        re.compile(
            r"(?:^|\s)\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [EF] \d+ \d+\] (?:\(\w+\) )?[\w.]+:\d+:|"
            r"^\[?[EF]\d{3,4} \d\d:\d\d:\d\d\.\d+ +(?:\d+ )?[\w.]+:\d+\]"
        ),
    ),
    (
        "error_phrase",
        re.compile(
            r"\b(?:has no attribute|not found|cannot|can't|could not|couldn't|failed|must be|not supported|"
            r"does not (?:have|exist|match|support)|did not match|invalid|unable to|no module named|incompatible|"
            r"timed out|connection refused|permission denied|out of memory)\b",
            re.I,
        ),
    ),
    # What failed, then the system's error text in lower case, as Go programs (docker, containerd,
    # the kubelet) print it: "exec /usr/local/bin/python: exec format error". Generic, like
    # error_phrase (kb.rootcause.GENERIC_ERROR_LINES): any more telling error outranks it.
    (
        "os_error",
        re.compile(r":\s(?:" + "|".join(re.escape(t.lower()) for t in OS_ERRORS) + r")\s*$"),
    ),
    # A C program's report of a failed system call by its number: "Read -1, expected 32416, errno = 1".
    ("os_error", re.compile(r"\berrno\s?[=:]\s?[1-9]\d{0,3}\b")),
)

SHELL_LINE_RE = re.compile(r"^(?:\+ |\$ |# |\(\w+\) \S+@|\S+@\S+:.*[#$] )")
HTTP_ERROR_RE = re.compile(r'"(?:GET|POST|PUT|DELETE|PATCH) \S+ HTTP/[\d.]+" (?P<status>[45]\d\d)\b')

SYMPTOM_RES = (
    re.compile(r"returned non-zero exit status \d+"),
    re.compile(r"Error (?:compiling objects for|building) extension"),
    re.compile(r"Server \d+ failed: 5\d\d"),
    re.compile(r"Exception in ASGI application"),
    re.compile(r"Method execution failed"),
    re.compile(r"'NoneType' object is not (?:iterable|subscriptable)"),
    re.compile(r"ChildFailedError|ActorDiedError|WorkerCrashedError|RaySystemError"),
    re.compile(r"failed \(exitcode: \d+\)"),
    re.compile(r"Sending process \d+ closing signal"),
    re.compile(r"Error executing job with overrides"),
    re.compile(r"task \d+: Exited with exit code \d+"),
)
WRAPPER_TYPES = frozenset({"RayTaskError", "RayActorError", "ChildFailedError", "ActorDiedError"})
# Informational lines and source code: error words in them ("cannot be used", "invalid") are not errors.
QUIET_LINE_RE = re.compile(
    r"^(?:\[?(?:INFO|DEBUG|WARNING|WARN)\b|\[(?:INFO|DEBUG|WARNING):|(?:INFO|DEBUG|WARNING):|wandb: (?!ERROR\b(?!.*\bretrying\b))|[✓✔√] "
    # CMake's configure checks ("-- Performing Test CMAKE_HAVE_LIBC_PTHREAD - Failed"): most fail by design.
    r"|-- (?:Performing Test|Looking for|Checking for|Check for|Check if|Detecting) )"
)
# The id huggingface_hub puts after an HTTP error's first line ("404 Client Error. (Request ID: Root=…)"),
# another one every time; what failed follows under a blank line.
HUB_REQUEST_ID_RE = re.compile(r"\(Request ID: [^)\n]{1,200}\)")
# A markdown fence on a line of its own ("```", "```txt", "~~~python", or longer): markup around a paste, so
# its info string ("txt", "python", "bash") is no word of the failure.
FENCE_LINE_RE = re.compile(r"^(?:`{3,}|~{3,})[\w+.-]*\s*$")
# A warning in the words of a program rather than a logger: c10's TORCH_WARN ("[W Utils.hpp:108] Warning: …",
# "[W1028 04:48:10.1 ProcessGroupNCCL.cpp:4115] …"), glog's level letter ("W0302 19:39:39.186000 22436 x.py:27] …"),
# and a line that opens with "Warning: " (after a sign such as "⚠️ ").
PROGRAM_WARNING_RE = re.compile(
    r"^(?:\[W(?:\d{3,4} [\d:.]+)? ?[^\s\]]{1,200}:\d+\]|W\d{4} \d\d:\d\d:\d\d\S* |(?:[^\w\s]{1,3}\s{0,3})?Warning: \S)"
)
# The informational lines that are a logger's warnings ("WARNING:accelerate…", "[WARNING|logging.py:328]",
# "wandb: WARNING …"): noise through a job log, but what a user asks about when one ends the paste.
WARNING_LOG_LINE_RE = re.compile(r"^(?:\[?(?:WARNING|WARN)\b|\[WARNING:|WARNING:|wandb: WARNING\b)")
# Line levels set by CI markers (GitHub Actions' "##[group]", "::error::"...): lowercase.
CI_MARKS = frozenset({"error", "warning", "notice", "debug", "group", "endgroup", "command", "section"})
CI_QUIET = frozenset({"notice", "debug", "group", "endgroup", "command", "section"})
# The line Ray puts where a wrapped exception's message would be: "ray::TaskRunner.run() (pid=…, ip=…)".
RAY_TASK_HEADER_RE = re.compile(r"^\s*ray::[\w.]+\(\)\s*(?:\(pid=.*\))?\s*$")
# A debugger's report of an exception (VS Code in English and Chinese): the type, then its message below;
# a backtick may open it in a paste, and VS Code may add where it paused ("(note: full exception trace
# is shown but execution is paused at: _run_module_as_main)").
DEBUGGER_EXC_RE = re.compile(
    r"^\s*`?(?:Exception has occurred|发生异常)\s*[:：]\s*(?P<type>[\w.]+)\s*(?:\(note: [^)]{0,200}\))?\s*$"
)
# The source line of the innermost frame of a traceback cut before its exception line.
RAISE_LINE_RE = re.compile(
    r"^\s*(?:-*>\s*\d+\s+)?raise\s+(?P<type>[\w.]*(?:Error|Exception|Failure))\s*\(\s*(?P<msg>.*)$"
)
# IPython / Jupyter: "RuntimeError                Traceback (most recent call last)", cells below.
# rich's traceback box (typer and rich-based CLIs): "╭── Traceback (most recent call last) ──╮",
# frames as "│ /path/file.py:88 in main   │", the box closed by "╰──╯", the exception line below.
RICH_HEAD_RE = re.compile(r"^\s*╭─+ Traceback \(most recent call last\) ─+╮")
RICH_FRAME_RE = re.compile(r"^\s*│ (?P<path>\S+?\.py):(?P<line>\d+) in (?P<func>\S+)\s*│\s*$")
RICH_END_RE = re.compile(r"^\s*╰─+╯")
IPYTHON_HEAD_RE = re.compile(r"^(?P<type>[\w.]*(?:Error|Exception|Failure))\s{2,}Traceback \(most recent call last\)")
# A heading or label a user puts above the log they paste ("**Error message**", "# Error log",
# "Full traceback:", "错误信息："): it names no failure, so it is no error line.
LABEL_LINE_RE = re.compile(
    r"^[\s>*#_`=\-\[(]*(?:(?:the|my|full|complete|whole|following|here is|below|error|errors|exception|"
    r"message|messages|log|logs|output|traceback|stack ?trace|trace|details?|报错|错误|信息|日志|输出|如下|完整)"
    r"[\s:：]*){1,5}[\s*_`:：\])]*$",
    re.I,
)
CODE_LINE_RE = re.compile(
    r"^\s*(?:raise|return|print|def|class|elif|else|for|while|try|except|import|from|with|assert|if)\b(?!:)"
    r"|^\s*(?:#|//|>>>)|[=(,\[]\s*$"
)
METRIC_RE = re.compile(r"\{[^{}]*'(?:loss|reward|reward_std|grad_norm)'\s*:[^{}]*\}")
METRIC_KV_RE = re.compile(r"'(?P<key>[\w/()\-.]+)'\s*:\s*'?(?P<val>-?[\d.]+(?:e-?\d+)?)'?")


METRIC_DESCRIPTIONS = {
    "no_learning_signal": "No learning signal: reward std is zero in every group, loss and grad norm stay zero",
    "completions_clipped": "Completions clipped: almost every completion is cut at the maximum completion length",
    "grpo_zero_loss_expected": "GRPO loss is zero at the start while rewards vary: expected, not a bug",
}
METRIC_KEYS = {
    "no_learning_signal": ("reward_std", "frac_reward_zero_std", "loss", "grad_norm"),
    "completions_clipped": ("completions/clipped_ratio", "completions/mean_length"),
    "grpo_zero_loss_expected": ("loss", "reward_std"),
}


def metric_anomaly(values: dict[str, float]) -> str:
    """Name the failure a metrics line shows, or "" when it looks healthy.

    GRPO/PPO failures that print no error: no learning signal (every group has identical
    rewards), every completion cut at max length, and the expected loss of 0 at the start of
    GRPO (reported so the user learns it is not a bug).
    """
    std = values.get("reward_std")
    frac_zero = values.get("frac_reward_zero_std")
    loss = values.get("loss")
    grad = values.get("grad_norm")
    clipped = values.get("completions/clipped_ratio")
    if (frac_zero is not None and frac_zero >= 0.99) or (std is not None and std == 0.0 and grad == 0.0):
        return "no_learning_signal"
    if clipped is not None and clipped >= 0.9:
        return "completions_clipped"
    if loss is not None and loss == 0.0 and std is not None and std > 0.0:
        return "grpo_zero_loss_expected"
    return ""
