"""Remedies as Markdown: how they render, and how a merge appends one to another.

CommonMark, as chat assistants and GitHub write it: a list may follow a line of text directly, a
nested list is indented to its parent item's text (three spaces under "1. "), and a fenced block
may sit inside a list item. Python-Markdown, used before, ran such a remedy's commands into one line
of inline code. Raw HTML in a remedy is shown as text; links keep only their href.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

PARSER = MarkdownIt("commonmark", {"html": False}).enable("table")
ALLOWED_TAGS = {
    "p", "pre", "code", "em", "strong", "ul", "ol", "li", "a", "h1", "h2", "h3", "h4",
    "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_PROBE = "fixbase-end-of-remedy-probe"


def remedy_html(text: str) -> str:
    """The remedy as sanitised HTML: no scripts, no attributes but a link's href."""
    return nh3.clean(PARSER.render(text or ""), tags=ALLOWED_TAGS, attributes={"a": {"href"}})


def fences_closed(text: str) -> str:
    """The remedy with a code fence it leaves open closed, so that what a merge appends below it
    is not read as more of its code (CommonMark runs an open fence to the end of the text). The
    parser decides what is open: a one-line ```cmd``` is inline code, and a fence inside a list
    item ends with the item."""
    for token in PARSER.parse(f"{text}\n\n{_PROBE}"):
        if token.type == "fence" and _PROBE in token.content:
            return f"{text}\n{token.markup}"
    return text
