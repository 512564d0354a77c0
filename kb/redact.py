"""Remove secrets from text before anything is stored, embedded or returned.

Pure Python. Logs carry API keys (WANDB_API_KEY, hf_..., sk-...), cloud credentials, bearer
tokens and passwords inside URLs; none of them may reach the shared wiki.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
            r"(?<![\w-])((?:[A-Za-z_]*(?:API_?KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?))"
            r"['\"]?\s*[=:]\s*['\"]?)([^\s'\",;]{6,})",
            re.I,
        ),
    ),
    ("wandb-login", re.compile(r"(?<=wandb login )(?:--relogin )?[0-9a-f]{40}\b")),
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


def redact(text: str, mask_hosts: bool = False) -> Redacted:
    """Replace every secret with `[REDACTED:<kind>]`; optionally mask IPs and hostnames too."""
    count = 0
    kinds: list[str] = []

    for kind, rx in SECRET_PATTERNS:

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
    if mask_hosts:
        for kind, rx in HOST_PATTERNS:
            text = rx.sub(f"<{kind}>", text)
    return Redacted(text=text, count=count, kinds=tuple(sorted(set(kinds))))
