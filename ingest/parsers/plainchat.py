"""Plain-text conversations: lines starting `User:` / `Assistant:` (or 用户： / 助手：, Human:, AI:...)."""

from __future__ import annotations

import re

from ingest.parsers.base import Candidate
from ingest.parsers.turns import pair_turns, turns_from_markers
from kb.logclean import log_lines

MARKER_RE = re.compile(
    r"^\s*(?:\*\*|#{1,3}\s*)?(?P<who>User|Assistant|Human|AI|ChatGPT|Claude|Me|You|用户|助手|我|问|答)"
    r"(?:\*\*)?\s*[:：]\s*(?P<rest>.*)$",
    re.I,
)
ROLES = {
    "user": "user",
    "human": "user",
    "me": "user",
    "用户": "user",
    "我": "user",
    "问": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "chatgpt": "assistant",
    "claude": "assistant",
    "you": "assistant",
    "助手": "assistant",
    "答": "assistant",
}


def looks_like_plainchat(text: str) -> bool:
    whos = set()
    for line in text.splitlines()[:5000]:
        m = MARKER_RE.match(line)
        if m and m.group("who").lower() in ROLES:
            whos.add(ROLES[m.group("who").lower()])
    return whos == {"user", "assistant"}


def parse_plainchat(text: str) -> list[Candidate]:
    return pair_turns(turns_from_markers(log_lines(text), MARKER_RE, ROLES))
