from __future__ import annotations

import re

import markdown as md
import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

ALLOWED_TAGS = {
    "p",
    "pre",
    "code",
    "em",
    "strong",
    "ul",
    "ol",
    "li",
    "a",
    "h1",
    "h2",
    "h3",
    "h4",
    "blockquote",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}


LIST_ITEM_RE = re.compile(r"^ {0,3}(?:[-*+]|\d{1,3}[.)])\s+\S")
# What may start a list right under a paragraph, as in CommonMark: a bullet, or "1." ("2007. was
# a year" inside a paragraph is no list).
LIST_START_RE = re.compile(r"^ {0,3}(?:[-*+]|1[.)])\s+\S")


def lists_after_paragraphs(text: str) -> str:
    """A blank line before a list that starts right under a line of text. Remedies are written
    as chats and GitHub write them, where a list may follow a paragraph directly; Python-Markdown
    would otherwise run the items into the paragraph ("Fix: - do this - do that")."""
    out: list[str] = []
    fenced, prev = False, ""
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and LIST_START_RE.match(line) and _plain_text(prev):
            out.append("")
        out.append(line)
        prev = line
    return "\n".join(out)


def _plain_text(line: str) -> bool:
    """A line of a paragraph: not blank, not indented (a list item's continuation), not an item."""
    return bool(line.strip()) and not line.startswith((" ", "\t")) and not LIST_ITEM_RE.match(line)


@register.filter
def render_markdown(text: str) -> SafeString:
    """Markdown from users and documents, sanitised: no scripts, no raw HTML attributes."""
    html = md.markdown(lists_after_paragraphs(text or ""), extensions=["fenced_code", "tables"])
    return mark_safe(nh3.clean(html, tags=ALLOWED_TAGS, attributes={"a": {"href"}}))  # noqa: S308
