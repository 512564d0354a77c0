"""Signatures: what identifies a failure across users, machines and ranks.

Pure Python. A signature keeps the root exception type, its message with the volatile parts
(numbers, paths, hex ids, pids, versions) masked, the key frames nearest the raise, and the
framework guessed from those frames.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from kb.logscan import QUIET_LINE_RE, ErrorBlock, Frame, clean_line, scan_log

URL_RE = re.compile(r"https?://\S+")
PATH_RE = re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[\\/][\w.\-@+~]+){2,}[\\/]?")
HEX_RE = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b")
IP_RE = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")
PID_RE = re.compile(r"\b(pid|tid|actor_id|job_id|node_id)\s*[=:]\s*\w+", re.I)
VERSION_RE = re.compile(r"\b\d+\.\d+\.\d+(?:[.\-+]?\w+)*\b")
FLOAT_RE = re.compile(r"-?\b\d+\.\d+\b")
BIGINT_RE = re.compile(r"-?\b\d{4,}\b")
WS_RE = re.compile(r"\s+")
PLACEHOLDER_RE = re.compile(r"<(?:NUM|PATH|HEX|IP|VER|PID|URL)>")
CONFIG_DUMP_RE = re.compile(r"^[{'\"\s]*'?[\w.]+'?\s*:\s*[\[{'\"\w.\-]*[,}\]]*\s*$|^\d{4}-\d\d-\d\d[ T][\d:,.]+ INFO\b")
WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\b\d{3}\b|[\u4e00-\u9fff]+")
CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
PLACEHOLDERS = frozenset({"path", "url", "hex", "ip", "ver", "num", "pid"})
STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "from",
        "you",
        "your",
        "please",
        "if",
        "not",
        "no",
        "but",
        "can",
        "will",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "there",
        "their",
        "its",
        "into",
        "than",
        "then",
        "so",
        "such",
        "use",
        "using",
        "used",
        "try",
    ]
)

# Package directories that identify a module root in a path (after site-packages or not).
KNOWN_PACKAGES = (
    "verl",
    "trl",
    "swift",
    "openrlhf",
    "deepspeed",
    "vllm",
    "ray",
    "torch",
    "transformers",
    "accelerate",
    "peft",
    "llamafactory",
    "llmtuner",
    "flash_attn",
    "wandb",
    "safetensors",
    "datasets",
    "tokenizers",
    "megatron",
    "sglang",
    "numpy",
    "jinja2",
    "hydra",
    "axolotl",
)
# Most specific first: the RL framework a user runs matters more than the libraries beneath it.
FRAMEWORK_ORDER = (
    ("verl", "verl"),
    ("openrlhf", "openrlhf"),
    ("trl", "trl"),
    ("swift", "ms-swift"),
    ("llamafactory", "llamafactory"),
    ("llmtuner", "llamafactory"),
    ("axolotl", "axolotl"),
    ("deepspeed", "deepspeed"),
    ("vllm", "vllm"),
    ("sglang", "sglang"),
    ("ray", "ray"),
    ("accelerate", "accelerate"),
    ("peft", "peft"),
    ("transformers", "transformers"),
    ("flash_attn", "flash-attn"),
    ("wandb", "wandb"),
    ("torch", "pytorch"),
)
MESSAGE_FRAMEWORK_HINTS = (
    ("verl", re.compile(r"\bverl\b|actor_rollout_ref|ppo_mini_batch", re.I)),
    ("openrlhf", re.compile(r"openrlhf", re.I)),
    ("trl", re.compile(r"\btrl\b|GRPOTrainer|DPOTrainer|GRPOConfig", re.I)),
    ("ms-swift", re.compile(r"\bswift\b|ms-swift", re.I)),
    ("vllm", re.compile(r"\bvllm\b|gpu_memory_utilization|max_model_len|max_num_batched_tokens", re.I)),
    ("deepspeed", re.compile(r"deepspeed|zero-?3", re.I)),
    ("nccl", re.compile(r"\bnccl\b", re.I)),
    ("ray", re.compile(r"\bray\b", re.I)),
    ("pytorch", re.compile(r"\bcuda\b|\btorch\b", re.I)),
)

EXCEPTION_PARENTS = {
    "OutOfMemoryError": "RuntimeError",
    "DistBackendError": "DistError",
    "DistNetworkError": "DistError",
    "DistStoreError": "DistError",
    "DistError": "RuntimeError",
    "NotImplementedError": "RuntimeError",
    "ModuleNotFoundError": "ImportError",
    "FileNotFoundError": "OSError",
    "PermissionError": "OSError",
    "ConnectionError": "OSError",
    "TimeoutError": "OSError",
    "KeyError": "LookupError",
    "IndexError": "LookupError",
    "ValidationError": "ValueError",
    "UnicodeDecodeError": "ValueError",
    "JSONDecodeError": "ValueError",
    "CommError": "Exception",
    "SafetensorError": "Exception",
    "TemplateError": "Exception",
}

# Tiers for root-error selection, lower is better.
SPECIFIC_ERROR_LINES = frozenset(
    {
        "cuda_oom",
        "command_not_found",
        "nccl_warn",
        "nccl_error",
        "disk_full",
        "host_oom",
        "watchdog_timeout",
        "segfault",
        "cuda_error",
        "dependency_conflict",
        "argparse_error",
    }
)


@dataclass(frozen=True)
class Signature:
    exc_type: str
    message: str
    frames: tuple[str, ...]
    framework: str
    kind: str
    pattern: str
    fingerprint: str
    raw_message: str
    context: tuple[str, ...] = ()

    @property
    def headline(self) -> str:
        head = self.exc_type or self.pattern.replace("_", " ")
        return f"{head}: {self.message}" if head else self.message


@dataclass(frozen=True)
class RootChoice:
    root: ErrorBlock | None
    secondary: tuple[ErrorBlock, ...]
    notes: tuple[str, ...]


# Sentences that libraries append to many different errors; they say nothing about which one.
BOILERPLATE_RES = (
    re.compile(r"CUDA kernel errors might be asynchronously reported at some other API call.*?(?:incorrect\.|$)", re.I),
    re.compile(r"For debugging consider passing CUDA_LAUNCH_BLOCKING=1\.?", re.I),
    re.compile(r"Compile with `?TORCH_USE_CUDA_DSA`? to enable device-side assertions\.?", re.I),
    re.compile(r"\(?run with NCCL_DEBUG=INFO for details\)?", re.I),
    re.compile(r"Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace\.?", re.I),
    re.compile(r"Including non-PyTorch memory.*?(?=$)", re.I),
    re.compile(r"See documentation for Memory Management.*?(?=$)", re.I),
)


def strip_boilerplate(message: str) -> str:
    for rx in BOILERPLATE_RES:
        message = rx.sub(" ", message)
    return WS_RE.sub(" ", message).strip()


def mask_message(message: str) -> str:
    s = URL_RE.sub("<URL>", strip_boilerplate(message))
    s = PATH_RE.sub("<PATH>", s)
    s = IP_RE.sub("<IP>", s)
    s = PID_RE.sub(lambda m: f"{m.group(1)}=<PID>", s)
    s = HEX_RE.sub("<HEX>", s)
    s = VERSION_RE.sub("<VER>", s)
    s = FLOAT_RE.sub("<NUM>", s)
    s = BIGINT_RE.sub("<NUM>", s)
    return WS_RE.sub(" ", s).strip()


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens with identifiers also split into their parts, lightly stemmed.

    `max_num_batched_tokens` yields itself plus max/num/batch/token; `LLMEngine` yields
    llmengine plus llm/engine; Chinese runs yield character bigrams.
    """
    out: list[str] = []
    for raw in WORD_RE.findall(text):
        if "\u4e00" <= raw[0] <= "\u9fff":
            out.extend(raw[i : i + 2] for i in range(max(1, len(raw) - 1)))
            continue
        low = raw.lower()
        if low in STOPWORDS or low in PLACEHOLDERS or len(low) < 2:
            continue
        out.append(_stem(low))
        parts = [p for chunk in raw.split("_") for p in CAMEL_RE.findall(chunk)]
        if len(parts) > 1:
            for part in parts:
                pl = part.lower()
                if len(pl) >= 2 and pl not in STOPWORDS and not pl.isdigit():
                    out.append(_stem(pl))
    return out


def module_of(path: str) -> str:
    """Dotted module for a frame path: site-packages prefix stripped, else from a known package."""
    p = path.replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/"):
        if marker in p:
            p = p.rsplit(marker, 1)[1]
            break
    else:
        parts = p.split("/")
        known = [i for i, part in enumerate(parts[:-1]) if part in KNOWN_PACKAGES]
        p = "/".join(parts[known[-1] :]) if known else "/".join(parts[-2:])
    p = re.sub(r"\.(?:py|pyx|pyi)$", "", p.strip("/"))
    return p.replace("/", ".").removesuffix(".__init__")


def frame_key(frame: Frame) -> str:
    return f"{module_of(frame.path)}:{frame.function}"


def guess_framework(frames: tuple[Frame, ...], text: str) -> str:
    tops = {module_of(f.path).split(".", 1)[0] for f in frames}
    for top, name in FRAMEWORK_ORDER:
        if top in tops:
            return name
    for name, rx in MESSAGE_FRAMEWORK_HINTS:
        if rx.search(text):
            return name
    return ""


def exception_relation(a: str, b: str) -> float:
    """1 for the same exception type, 0.6 for parent/child, 0.3 for siblings, else 0."""
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    pa, pb = EXCEPTION_PARENTS.get(a), EXCEPTION_PARENTS.get(b)
    if pa == b or pb == a:
        return 0.6
    if pa and pa == pb and pa != "Exception":
        return 0.3
    return 0.0


def _tier(block: ErrorBlock) -> int:
    informative = len(re.findall(r"[A-Za-z\u4e00-\u9fff]{2,}", block.message)) >= 2
    if block.kind in ("traceback", "exception_line"):
        return 0 if informative and not block.symptom else 3
    if block.kind == "error_line":
        return 1 if block.pattern in SPECIFIC_ERROR_LINES and not block.symptom else 4
    if block.kind == "metric":
        return 2
    if block.kind == "truncated_traceback":
        return 5
    return 6


def block_key(block: ErrorBlock) -> tuple[str, str, tuple[str, ...]]:
    return (
        block.short_type or block.pattern,
        mask_message(block.message).lower(),
        tuple(frame_key(f) for f in block.frames[-4:]),
    )


def dedupe_blocks(blocks: tuple[ErrorBlock, ...]) -> tuple[ErrorBlock, ...]:
    """Keep the first of blocks that repeat (the same traceback printed by several ranks)."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    out: list[ErrorBlock] = []
    for block in blocks:
        key = block_key(block)
        if block.kind == "truncated_traceback":
            key = ("", "", tuple(frame_key(f) for f in block.frames))
        if key in seen:
            continue
        seen.add(key)
        out.append(block)
    return tuple(out)


def select_root(blocks: tuple[ErrorBlock, ...]) -> RootChoice:
    """Pick the error that explains the failure.

    1. Drop repeats (multi-rank output).
    2. Prefer, in order: an informative exception that is not a known symptom, a specific
       error line (OOM, NCCL WARN, command not found, disk full...), a metrics anomaly, a
       symptom exception, generic error lines, a traceback with no exception, a warning.
    3. Within a tier the earliest wins: the first error in a log (and the innermost cause of
       a chain, which Python prints first) explains the ones after it.
    """
    unique = dedupe_blocks(blocks)
    ranked = sorted(enumerate(unique), key=lambda ib: (_tier(ib[1]), ib[0]))
    if not ranked:
        return RootChoice(root=None, secondary=(), notes=())
    root = ranked[0][1]
    secondary = tuple(b for _, b in ranked[1:] if b.kind != "warning")[:6]
    notes: list[str] = []
    if _tier(root) >= 3 and root.kind != "warning":
        notes.append(
            "This error is a symptom: it reports that another process or server failed. "
            "That process's own log (the rollout server, the Ray worker, the other rank) holds the cause."
        )
    if root.kind == "metric" and root.pattern == "grpo_zero_loss_expected":
        notes.append(
            "A GRPO loss of 0 in the first steps is expected while rewards vary (reward_std > 0): "
            "with one policy update per batch the ratio is 1 and the advantages average to 0, "
            "so only the KL term moves the loss. Watch reward and reward_std instead."
        )
    later_symptoms = [b for b in secondary if b.symptom and b.line_start > root.line_start]
    if later_symptoms and _tier(root) < 3:
        first = later_symptoms[0]
        notes.append(
            f"Later errors (line {first.line_start}: {(first.short_type or first.pattern)}) "
            "are consequences of this one."
        )
    return RootChoice(root=root, secondary=secondary, notes=tuple(notes))


def fingerprint(kind_name: str, masked: str) -> str:
    norm = re.sub(r"[^a-z]+", " ", masked.lower()).strip()
    return hashlib.sha1(f"{kind_name}|{norm}".encode()).hexdigest()[:16]


def telling_lines(text: str, limit: int = 20) -> list[str]:
    """The last lines of a text that are neither informational log lines nor config dumps."""
    out: list[str] = []
    for raw in text.splitlines():
        line = clean_line(raw).text.strip()
        if not line or QUIET_LINE_RE.match(line) or CONFIG_DUMP_RE.match(line):
            continue
        out.append(line)
    return out[-limit:]


def signature_of(choice: RootChoice, text: str) -> Signature:
    root = choice.root
    if root is None:
        # No recognisable error: the text itself (a hang described in words, say) is the problem.
        words = WS_RE.sub(" ", " ".join(telling_lines(text))).strip()[:400]
        masked = mask_message(words)
        return Signature(
            exc_type="",
            message=masked,
            frames=(),
            framework=guess_framework((), text),
            kind="text",
            pattern="",
            fingerprint=fingerprint("text", masked),
            raw_message=words,
        )
    message = root.message
    if root.kind == "truncated_traceback":
        message = ""
    masked = mask_message(message)[:500]
    frames = tuple(frame_key(f) for f in reversed(root.frames))[:12]
    context = tuple(
        f"{b.short_type or b.pattern}: {mask_message(b.message)[:200]}" for b in choice.secondary if b.message
    )[:4]
    all_frames = tuple(f for b in (root, *choice.secondary) for f in b.frames)
    return Signature(
        exc_type=root.short_type,
        message=masked,
        frames=frames,
        framework=guess_framework(all_frames, message + " " + " ".join(context)),
        kind=root.kind,
        pattern=root.pattern,
        fingerprint=fingerprint(root.short_type or root.pattern or root.kind, masked),
        raw_message=message[:1000],
        context=context,
    )


def signature_from_text(text: str) -> tuple[Signature, RootChoice]:
    choice = select_root(scan_log(text))
    return signature_of(choice, text), choice


def compact_text(sig: Signature) -> str:
    """The text that gets embedded: the error and where it was raised, in about 50 tokens.

    Masked placeholders are dropped (they carry no meaning for the model) and only the three
    frames nearest the raise are kept, so the text fits the model's window with room to spare
    and embeds fast.
    """
    headline = PLACEHOLDER_RE.sub("", sig.headline)
    parts = [WS_RE.sub(" ", headline).strip()[:200]]
    funcs = [f.rsplit(":", 1)[-1] for f in sig.frames[:3]]
    if funcs:
        parts.append("in " + ", ".join(funcs))
    if sig.framework:
        parts.append(sig.framework)
    return " | ".join(parts)
