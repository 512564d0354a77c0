"""Remove secrets from text before anything is stored, embedded or returned.

Pure Python. Logs carry API keys (WANDB_API_KEY, hf_..., sk-...), cloud credentials, bearer
tokens and passwords inside URLs; none of them may reach the shared wiki.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.trigger_search import compile_trigger

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url-password", re.compile(r"(?<=://)([^:/\s@]{1,64}):([^@\s/]{1,200})(?=@)")),
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----")),
    ("huggingface", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("openai", re.compile(r"\bsk-(?:proj-|ant-|ant-api\d\d-)?[A-Za-z0-9_\-]{20,}")),
    ("github", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("bearer", re.compile(r"(?<=Bearer )[A-Za-z0-9\-._~+/]{16,}=*", re.I)),
    (
        "assignment",
        re.compile(
            r"(?<![\w-])((?:[A-Za-z_]{0,60}(?:API_?KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?))"
            r"['\"]?\s*[=:]\s*['\"]?)([^\s'\",;]{6,})",
            re.I,
        ),
    ),
    ("wandb-login", re.compile(r"(?<=wandb login )(?:--relogin )?[0-9a-f]{40}\b")),
    # key=..., api_key: ... with a long token-like value (short values are config, not secrets)
    ("key", re.compile(r"(?<=[^\w-]key=)[A-Za-z0-9_\-]{32,}|(?<=[^\w-]key: )[A-Za-z0-9_\-]{32,}", re.I)),
)
HOST_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ip", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")),
    ("host", re.compile(r"\b[\w-]+@[\w.-]+(?=[:\s])")),
    ("host", re.compile(r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|cn|internal|local|lan|cluster)\b", re.I)),
)
PLACEHOLDER_VALUES = frozenset({"your_key", "xxx", "<key>", "none", "null", "true", "false", "required", "optional"})


@dataclass(frozen=True)
class Redacted:
    text: str
    count: int
    kinds: tuple[str, ...]


# Every secret pattern needs one of these literals on its line. Finding them with str.find is
# fast, so only the few lines that contain one go through the full patterns, and a
# multi-gigabyte log is redacted at close to the speed of reading it.
LITERALS = (
    "://",
    "PRIVATE KEY",
    "hf_",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "eyJ",
    "Bearer",
    "wandb login",
)
KEYWORDS = ("key", "token", "secret", "passw", "credential")  # found case-insensitively


def _trigger_pattern() -> str:
    """Every literal, and every keyword followed by an assignment, in one alternation."""
    literals = "|".join(re.escape(lit) for lit in LITERALS)
    keywords = "|".join(KEYWORDS)
    return f"(?:{literals})|(?i:{keywords})\\w*['\"]?\\s*[=:]"


TRIGGER_RE = compile_trigger(_trigger_pattern())


def _trigger_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the lines that may hold a secret, in order, merged."""
    starts: list[int] = []
    pos = 0
    for m in TRIGGER_RE.finditer(text):
        if m.start() < pos:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        starts.append(start)
        nl = text.find("\n", m.end())
        pos = len(text) if nl < 0 else nl + 1
    spans: list[tuple[int, int]] = []
    for start in starts:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if text.startswith("-----BEGIN", start) or "PRIVATE KEY" in text[start:end]:
            close = text.find("PRIVATE KEY-----", end, end + 20000)
            if close >= 0:
                nl = text.find("\n", close)
                end = len(text) if nl < 0 else nl
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


def redact(text: str, mask_hosts: bool = False) -> Redacted:
    """Replace every secret with `[REDACTED:<kind>]`; optionally mask IPs and hostnames too."""
    pieces: list[str] = []
    pos = 0
    count = 0
    kinds: list[str] = []
    for start, end in _trigger_lines(text):
        segment, n, found = _redact_segment(text[start:end])
        pieces.append(text[pos:start])
        pieces.append(segment)
        pos = end
        count += n
        kinds.extend(found)
    pieces.append(text[pos:])
    out = "".join(pieces)
    if mask_hosts:
        for kind, rx in HOST_PATTERNS:
            out = rx.sub(f"<{kind}>", out)
    return Redacted(text=out, count=count, kinds=tuple(sorted(set(kinds))))


# A pattern can only match a line holding its literal; most trigger lines hold one or two.
NEEDS: dict[str, tuple[str, ...]] = {
    "url-password": ("://",),
    "private-key": ("PRIVATE KEY",),
    "huggingface": ("hf_",),
    "openai": ("sk-",),
    "github": ("gh", "github_pat_"),
    "aws-access-key": ("AKIA", "ASIA"),
    "jwt": ("eyJ",),
    "bearer": ("bearer",),
    "assignment": KEYWORDS,
    "wandb-login": ("wandb login",),
    "key": ("key",),
}
CASE_INSENSITIVE = frozenset({"bearer", "assignment", "key"})


def _redact_segment(text: str) -> tuple[str, int, list[str]]:
    count = 0
    kinds: list[str] = []
    lower = text.lower()

    for kind, rx in SECRET_PATTERNS:
        hay = lower if kind in CASE_INSENSITIVE else text
        if not any(lit in hay for lit in NEEDS[kind]):
            continue

        def repl(m: re.Match[str], kind: str = kind) -> str:
            nonlocal count
            if kind == "assignment":
                value = m.group(2)
                if value.lower() in PLACEHOLDER_VALUES or value.startswith(("$", "{", "[REDACTED", "<")):
                    return m.group(0)
                count += 1
                kinds.append(kind)
                return f"{m.group(1)}[REDACTED:secret]"
            if kind == "url-password":
                count += 1
                kinds.append(kind)
                return f"{m.group(1)}:[REDACTED:password]"
            count += 1
            kinds.append(kind)
            # Keep the line count: triage highlights lines of the pasted text by number.
            return f"[REDACTED:{kind}]" + "\n" * m.group(0).count("\n")

        text = rx.sub(repl, text)
    return text, count, kinds
