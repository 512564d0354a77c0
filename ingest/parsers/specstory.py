"""SpecStory / Cursor markdown chat transcripts: `_**User**_` and `_**Assistant**_` turns."""

from __future__ import annotations

import re

from ingest.parsers.base import Candidate
from ingest.parsers.turns import pair_turns, turns_from_markers
from kb.logclean import log_lines

TURN_RE = re.compile(r"^_\*\*(?P<who>User|Assistant)\b[^*]*\*\*_\s*$")
ROLES = {"user": "user", "assistant": "assistant"}


def looks_like_specstory(text: str) -> bool:
    return sum(1 for line in text.splitlines() if TURN_RE.match(line)) >= 2


def parse_specstory(text: str) -> list[Candidate]:
    return pair_turns(turns_from_markers(log_lines(text), TURN_RE, ROLES))
