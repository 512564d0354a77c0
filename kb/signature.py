"""Signatures: what identifies a failure across users, machines and ranks.

Pure Python. A signature keeps the root exception type, its message with the volatile parts
(numbers, paths, hex ids, pids, versions) masked, the key frames nearest the raise, and the
framework guessed from those frames.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from kb.exceptionlines import match_exception
from kb.logclean import clean_line, line_stream, log_lines, process_tag, quoted_as_code
from kb.logpatterns import (
    BAR_LINE_RE,
    CHAIN_CAUSE_RE,
    CHAIN_DURING_RE,
    CI_QUIET,
    FENCE_LINE_RE,
    QUIET_LINE_RE,
    TB_HEAD_RE,
    WARNING_LOG_LINE_RE,
)
from kb.logscan import ErrorBlock, Frame, scan_log
from kb.normalize import WS_RE, frame_key, mask_message, module_of
from kb.rootcause import RootChoice, deprecation_notice, select_root

PLACEHOLDER_RE = re.compile(r"<(?:NUM|PATH|HEX|IP|VER|PID|URL)>")
CONFIG_DUMP_RE = re.compile(
    r"^[{'\"\s]*'?[\w.]+'?\s*:\s*[\[{'\"\w.\-]*[,}\]]*\s*$|^\d{4}-\d\d-\d\d[ T][\d:,.]+ INFO\b"
    # a line of a printed dict or JSON config: 'key': {... / "key": value,
    r"|^[{\s]*['\"][\w.\-/]+['\"]\s*:\s*\S"
)


def traceback_structure(line: str) -> bool:
    """A traceback's header, chain marker or frame line (whole or cut: `File "/u`): where the
    error was raised, which the signature's frames read, never what failed."""
    head = TB_HEAD_RE.match(line)
    return (
        bool(head and not head["rest"])
        or bool(CHAIN_CAUSE_RE.match(line) or CHAIN_DURING_RE.match(line))
        or line.startswith('File "')
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

    @property
    def label(self) -> str:
        """What the page and the CI summary call it: a warning or the paste's own words are not errors."""
        if self.kind == "warning":
            return "No error found, only warnings; the first"
        if self.kind == "text":
            return "No error line found; your paste read as text"
        return "Root error"


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


def fingerprint(kind_name: str, masked: str) -> str:
    """Hash of the exception (or pattern) and the words of the masked message: numbers, whether
    masked or not, and punctuation do not count."""
    norm = re.sub(r"[^a-z]+", " ", PLACEHOLDER_RE.sub(" ", masked).lower()).strip()
    return hashlib.sha1(f"{kind_name}|{norm}".encode()).hexdigest()[:16]


# The levels a line's prefix can give it that make it informational (a CI runner's "##[group]" too); a
# logger's warning ("WARNING:accelerate.utils.other:Detected kernel version …") may be what went wrong.
QUIET_LEVELS = frozenset({"INFO", "DEBUG", *CI_QUIET})


def telling_lines(
    text: str, limit: int = 20, quiet_if_nothing_else: bool = False, with_warnings: bool = False
) -> list[str]:
    """The last lines of a text that are neither informational log lines (a logger's line a person
    quoted as code is not one), progress bars nor config dumps. With
    `quiet_if_nothing_else` (for a paste with no error in it), a paste made only of informational
    lines (a client retrying "Server is not up yet") is told by those. With `with_warnings`, a
    logger's warning lines count as telling too."""
    # Read from the end: only the last `limit` of either kind are kept, so a long log stops early.
    out: list[str] = []
    quiet: list[str] = []
    for raw in reversed(log_lines(text)):
        cl = clean_line(raw)
        line = cl.text.strip()
        if not line or CONFIG_DUMP_RE.match(line) or FENCE_LINE_RE.match(line) or traceback_structure(line):
            continue
        # The level a prefix gave the line ("INFO 08-10 21:22:23 llm.py:12]", "2024-09-04 23:45:31,637 [INFO]").
        # A logger's line a person quoted as code in a sentence ("`wandb: WARNING Path … wasn't
        # writable …`") is what they ask about, whatever its level.
        informational = not quoted_as_code(cl.prefix) and (
            cl.level in QUIET_LEVELS
            or bool(QUIET_LINE_RE.match(line))
            or ("%|" in line and bool(BAR_LINE_RE.match(line)))
        )
        if not informational or (with_warnings and WARNING_LOG_LINE_RE.match(line)):
            out.append(line)
            if len(out) == limit:
                break
        elif len(quiet) < limit:
            quiet.append(line)
    return (out or (quiet if quiet_if_nothing_else else []))[::-1]


LAZY_IMPORT_WRAPPER_RE = re.compile(r"because of the following error \(look up to see its traceback\):")


def signature_of(choice: RootChoice, text: str, symptom_context: bool = True, from_end: bool = False) -> Signature:
    """The signature of a chosen root error, with the other errors as context.

    `symptom_context=False` leaves known symptoms (wrappers, "Server 0 failed", torchrun's
    summary) out of the context when the root itself is informative: in a pasted job log they
    are noise, while in a curated entry they tell which symptom the problem shows.
    """
    root = choice.root
    if root is None:
        # No recognisable error: the text itself (a hang described in words, say) is the problem.
        # `from_end`: the part of a job log after its start-up noise, read by its last lines (a
        # logger's warning among them), where the job stopped, rather than by its first.
        lines = telling_lines(text, quiet_if_nothing_else=True, with_warnings=from_end)
        words = WS_RE.sub(" ", " ".join(last_words(lines) if from_end else lines)).strip()[:400]
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
    exc_type = root.short_type
    if root.kind == "truncated_traceback":
        message = ""
    wrapped = LAZY_IMPORT_WRAPPER_RE.split(message)
    if len(wrapped) > 1 and wrapped[-1].strip():
        # Hugging Face's lazy import wraps the failure that broke it ("Failed to import X because
        # of the following error (look up to see its traceback): No module named 'Y'"), once per
        # module on the way: the innermost text is the failure, its type is not printed.
        message, exc_type = wrapped[-1].strip(), ""
        inner = match_exception(message)
        if inner and inner.group("msg"):
            message, exc_type = inner.group("msg"), inner.group("type").rsplit(".", 1)[-1]
    masked = mask_message(message)[:500]
    frames = tuple(frame_key(f) for f in reversed(root.frames))[:12]
    keep_symptoms = symptom_context or root.symptom or root.kind not in ("traceback", "exception_line")
    context = tuple(
        f"{b.short_type or b.pattern}: {mask_message(b.message)[:200]}"
        for b in choice.secondary
        if b.message and (keep_symptoms or not b.symptom)
    )[:4]
    all_frames = tuple(f for b in choice.blocks for f in b.frames)
    return Signature(
        exc_type=exc_type,
        message=masked,
        frames=frames,
        framework=guess_framework(all_frames, message + " " + " ".join(context)),
        kind=root.kind,
        pattern=root.pattern,
        fingerprint=fingerprint(exc_type or root.pattern or root.kind, masked),
        raw_message=message[:1000],
        context=context,
    )


def signature_from_text(text: str, symptom_context: bool = True) -> tuple[Signature, RootChoice]:
    _, sig, choice = read_failure(text, symptom_context)
    return sig, choice


def read_failure(text: str, symptom_context: bool = True) -> tuple[str, Signature, RootChoice]:
    """The part of `text` that holds the failure, its signature and the root chosen in it.

    The part is the whole text but for one case: a worker's deprecation notice is the only error,
    and another process printed more after it. In a job log that notice is start-up noise and what
    follows (the user's own lines, the driver's) is the failure, so those lines are read alone, as a
    paste that names no error is.
    """
    choice = select_root(scan_log(text))
    if choice.root is not None and deprecation_notice(choice.root):
        after = other_stream_after(text, choice.root)
        if after:
            notice = choice.root
            note = (
                f"The only error, line {notice.line_start}'s {notice.exc_type} from "
                f"{process_tag(notice.prefix)}, is start-up noise: the lines another process printed after it "
                "are read as the failure."
            )
            choice = RootChoice(root=None, secondary=(), notes=(*choice.notes, note))
            return after, signature_of(choice, after, symptom_context, from_end=True), choice
    return text, signature_of(choice, text, symptom_context), choice


def last_words(lines: list[str], budget: int = 400) -> list[str]:
    """The last of `lines`, each cut at 200 characters, that fit in about `budget` characters."""
    kept: list[str] = []
    for line in reversed(lines):
        kept.append(line[:200])
        budget -= len(kept[-1]) + 1
        if budget <= 0:
            break
    return kept[::-1]


def other_stream_after(text: str, block: ErrorBlock) -> str:
    """The lines after `block` that another process printed (another launcher tag, or none), when
    `block` has a tag and those lines say something; else ""."""
    tag = process_tag(block.prefix)
    if not tag:
        return ""
    rest = "\n".join(line for line in log_lines(text)[block.line_end :] if line_stream(line) != tag)
    return rest if telling_lines(rest, limit=1, with_warnings=True) else ""


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
