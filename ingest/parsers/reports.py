"""Helpers shared by the parsers: is there an error in this text, and what to call it."""

from __future__ import annotations

import re

from kb.logclean import clean_line, for_display
from kb.logpatterns import CODE_LINE_RE, FENCE_LINE_RE, LOG_LINE_RE, PIP_WRAPPER_RE
from kb.logscan import scan_log
from kb.normalize import strip_boilerplate
from kb.rootcause import select_root

# Failures that print no error: a user describes them in words.
SILENT_FAILURE_RE = re.compile(
    r"\b(?:hangs?|hanging|hung|stuck|freez(?:e|es|ing)|frozen|deadlock(?:ed)?|no progress|not progressing|"
    r"nan loss|loss (?:is|becomes|goes to) nan|diverg(?:e|es|ed|ing))\b|卡住|卡死|卡在|没有反应|无响应|不动了|一直不动",
    re.I,
)


# Words with which people hand over a failure they pasted ("Got this error, how to fix?").
REPORT_WORDS_RE = re.compile(
    r"\b(?:errors?|crash(?:ed|es|ing)?|fail(?:ed|s|ing|ure)?|exceptions?|traceback|warnings?|broken|"
    r"(?:does ?n[o']t|not) work(?:ing)?)\b|报错|出错|错误|崩溃|失败|警告|异常",
    re.I,
)


def describes_failure(text: str) -> bool:
    return bool(SILENT_FAILURE_RE.search(text))


def prose_lines(text: str) -> list[str]:
    """The lines a person wrote: outside code fences, not indented, not log or code lines."""
    out: list[str] = []
    fenced = False
    for raw in text.splitlines():
        if "```" in raw:  # a fence opens or closes here (pastes glue fences to their first and last lines)
            fenced ^= raw.count("```") % 2 == 1
            continue
        cl = clean_line(raw)
        line = cl.text
        if fenced or not line.strip() or line[0] in " \t" or cl.prefix or CODE_LINE_RE.match(line):
            continue
        if LOG_LINE_RE.match(line) or 'File "' in line or sum(line.count(c) for c in "(){}[]=<>") > 3:
            continue
        out.append(line)
    return out


# A question about what went wrong or how to repair it ("What is wrong here and how do I fix it?",
# "怎么修？", "这是什么问题？"), as opposed to "how do I watch the training now?".
REPAIR_QUESTION_RE = re.compile(
    r"(?:\b(?:fix|wrong|solve|resolve|mean|means|why|cause[sd]?)\b|修|解决|什么问题|怎么回事|为什么|原因).*[?？]\s*$",
    re.I,
)


def reports_problem(text: str) -> bool:
    """A chat turn that hands over a failure: an error in it, a silent failure described in
    words, the user's own words saying something failed ("Got this error, how to fix?"), or a
    warning pasted with a question about it. A pasted log of warnings, or code, with no such
    words and no question is not a report; output that names no error, asked about, is one."""
    if has_error(text) or describes_failure(text):
        return True
    prose = prose_lines(text)
    if any(REPORT_WORDS_RE.search(line) for line in prose):
        return True
    if not any(REPAIR_QUESTION_RE.search(line) for line in prose):
        return False
    return bool(scan_log(text)) or pastes_output(text)


def pastes_output(text: str) -> bool:
    """Whether a text holds a program's output: a line a launcher or logger stamped
    (`(main_task pid=…)`, `[rank0]:`, `INFO 08-10 …`) or one line printed over and over. A notice
    that names no error ("ANTLR runtime and generated code versions disagree") is such output."""
    seen: set[str] = set()
    for raw in text.splitlines():
        cl = clean_line(raw)
        line = cl.text.strip()
        if not line:
            continue
        if cl.prefix or LOG_LINE_RE.match(line) or line in seen:
            return True
        seen.add(line)
    return False


def has_error(text: str, offset: int = 0) -> bool:
    """An error in the text, or pip's word that a build step it ran failed: never the root error
    (kb.errorlines), but a paste of pip's box whose output names no error still reports a failure."""
    if any(b.kind != "warning" for b in scan_log(text, offset)):
        return True
    return "error: " in text and any(PIP_WRAPPER_RE.match(clean_line(line).text) for line in text.splitlines())


def title_for(text: str, fallback: str = "") -> str:
    """A one-line title: the root error as printed (exception and message), else the fallback."""
    root = select_root(scan_log(text)).root
    if root is None or (root.kind == "warning" and fallback):
        return _shorten(fallback or first_line(text))
    if root.kind == "truncated_traceback":
        frame = root.frames[-1]
        return _shorten(fallback or f"Traceback in {frame.function} ({frame.path.rsplit('/', 1)[-1]})")
    head = root.exc_type.rsplit(".", 1)[-1] if root.exc_type else ""
    message = for_display(strip_boilerplate(root.message))
    return _shorten(f"{head}: {message}" if head else message)


def first_line(text: str) -> str:
    """The first line with words, a markdown fence's own line (```, ```text) left out."""
    for line in text.splitlines():
        if line.strip() and not FENCE_LINE_RE.match(line.strip()):
            return line.strip()
    return ""


def _shorten(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
