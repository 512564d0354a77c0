"""JSON exports: ChatGPT's conversations.json, Claude's export, and GitHub issue threads.

Line numbers point into the JSON file: a message's span is the line where its text starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ingest.parsers.base import Candidate, ParseError
from ingest.parsers.reports import has_error, title_for
from ingest.parsers.turns import Turn, pair_turns

MAINTAINER_ROLES = {"OWNER", "MEMBER", "COLLABORATOR"}
FIX_WORDS_RE = re.compile(
    r"\b(?:fix(?:ed)?|solv(?:e|ed)|resolv(?:e|ed)|works?|worked|upgrad(?:e|ed|ing)|downgrad(?:e|ed)|install|"
    r"set|export|use|pin|try|change)\b|解决|升级|降级|设置|改成|可以了",
    re.I,
)


def load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"Invalid JSON at line {exc.lineno}: {exc.msg}.") from exc


class _Locator:
    """Find the line of the JSON file where a message's text is written."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cursor = 0
        self.line_starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.line_starts.append(i + 1)

    def line_of(self, content: str) -> int:
        needle = json.dumps(content[:60], ensure_ascii=False)[1:-1]
        pos = self.text.find(needle, self.cursor) if needle else -1
        if pos < 0:
            needle = json.dumps(content[:60])[1:-1]
            pos = self.text.find(needle, self.cursor) if needle else -1
        if pos < 0:
            return self._line(self.cursor)
        self.cursor = pos + len(needle)
        return self._line(pos)

    def _line(self, pos: int) -> int:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1


def _turns(messages: list[tuple[str, str]], text: str) -> list[Turn]:
    loc = _Locator(text)
    turns: list[Turn] = []
    for who, content in messages:
        if not content.strip():
            continue
        line = loc.line_of(content)
        # A message is one JSON string, so it sits on one line of the file.
        turns.append(Turn(who=who, text=content, start=line, end=line, body_start=line, body_end=line))
    return turns


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if "parts" in content:
            return "\n".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content["parts"] or [])
        return str(content.get("text", ""))
    if isinstance(content, list):
        return "\n".join(_parts_text(c) for c in content)
    return ""


def chatgpt_messages(conv: dict[str, Any]) -> list[tuple[str, str]]:
    """Messages of one ChatGPT conversation in order: follow `current_node` back to the root."""
    mapping = conv.get("mapping") or {}
    node = conv.get("current_node")
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node and node in mapping and node not in seen:
        seen.add(node)
        chain.append(mapping[node])
        node = mapping[node].get("parent")
    if not chain:  # no current_node: take the mapping's own order
        chain = list(reversed(list(mapping.values())))
    out: list[tuple[str, str]] = []
    for item in reversed(chain):
        msg = item.get("message") or {}
        role = (msg.get("author") or {}).get("role", "")
        if role in ("user", "assistant"):
            out.append((role, _parts_text(msg.get("content"))))
    return out


def claude_messages(conv: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for msg in conv.get("chat_messages") or []:
        who = "user" if msg.get("sender") in ("human", "user") else "assistant"
        text = msg.get("text") or _parts_text(msg.get("content"))
        out.append((who, str(text)))
    return out


def json_kind(data: Any) -> str:
    items = data if isinstance(data, list) else [data]
    first = next((i for i in items if isinstance(i, dict)), {})
    if "mapping" in first:
        return "chatgpt"
    if "chat_messages" in first:
        return "claude"
    if "issue" in first or ("body" in first and ("comments" in first or "html_url" in first or "number" in first)):
        return "github"
    return ""


def _shape_checked(kind: str, parse: Callable[[str], list[Candidate]]) -> Callable[[str], list[Candidate]]:
    """A JSON file of the wrong shape (a list where an object was expected...) is a ParseError."""

    def run(text: str) -> list[Candidate]:
        try:
            return parse(text)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            if isinstance(exc, ParseError):
                raise
            raise ParseError(f"This JSON is not a {kind} export ({type(exc).__name__}: {exc}).") from exc

    return run


def _parse_chatgpt(text: str) -> list[Candidate]:
    data = load_json(text)
    convs = data if isinstance(data, list) else [data]
    return [c for conv in convs if isinstance(conv, dict) for c in pair_turns(_turns(chatgpt_messages(conv), text))]


def _parse_claude(text: str) -> list[Candidate]:
    data = load_json(text)
    convs = data if isinstance(data, list) else [data]
    return [c for conv in convs if isinstance(conv, dict) for c in pair_turns(_turns(claude_messages(conv), text))]


def resolving_comment(comments: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The comment most likely to hold the fix: a maintainer's, with fix words, not a "me too"."""
    best, best_score = None, 0.0
    for c in comments:
        body = str(c.get("body") or "")
        score = 0.0
        if str(c.get("author_association", "")).upper() in MAINTAINER_ROLES:
            score += 2
        score += min(2, len(FIX_WORDS_RE.findall(body)))
        if "`" in body:
            score += 1
        if has_error(body):
            score -= 2
        if len(body.strip()) < 40:
            score -= 2
        reactions = c.get("reactions") or {}
        score += min(2, int(reactions.get("+1", 0) or 0) / 3)
        if score >= best_score and score > 0:
            best, best_score = c, score
    return best


def _parse_github(text: str) -> list[Candidate]:
    data = load_json(text)
    if isinstance(data, list):
        issue, comments = data[0], [c for c in data[1:] if isinstance(c, dict)]
    elif "issue" in data:
        issue, comments = data["issue"], data.get("comments") or []
    else:
        issue, comments = data, data.get("comments") if isinstance(data.get("comments"), list) else []
    body = str(issue.get("body") or "")
    if not has_error(body):
        return []
    loc = _Locator(text)
    start = loc.line_of(body)
    fix = resolving_comment(comments)
    remedy = str(fix.get("body") or "") if fix else ""
    end = loc.line_of(remedy) if remedy else start
    return [
        Candidate(
            title=title_for(body, fallback=str(issue.get("title") or "")),
            problem_text=body,
            remedy_markdown=remedy,
            line_start=start,
            line_end=max(start, end),
            problem_start=start,
            problem_end=start,
        )
    ]


parse_chatgpt = _shape_checked("ChatGPT conversations.json", _parse_chatgpt)
parse_claude = _shape_checked("Claude", _parse_claude)
parse_github = _shape_checked("GitHub issue", _parse_github)
