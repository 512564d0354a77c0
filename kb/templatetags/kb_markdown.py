from __future__ import annotations

import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

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


# CommonMark, as chat assistants and GitHub write it: a list may follow a line of text directly,
# a nested list is indented to its parent item's text (three spaces under "1. "), and a fenced
# block may sit inside a list item. Python-Markdown, used before, ran such a remedy's commands into
# one line of inline code. Raw HTML in a remedy is shown as text; links keep only their href.
RENDERER = MarkdownIt("commonmark", {"html": False}).enable("table")


@register.filter
def render_markdown(text: str) -> SafeString:
    """Markdown from users and documents, sanitised: no scripts, no raw HTML attributes."""
    html = RENDERER.render(text or "")
    return mark_safe(nh3.clean(html, tags=ALLOWED_TAGS, attributes={"a": {"href"}}))  # noqa: S308
