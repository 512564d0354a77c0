from __future__ import annotations

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


@register.filter
def render_markdown(text: str) -> SafeString:
    """Markdown from users and documents, sanitised: no scripts, no raw HTML attributes."""
    html = md.markdown(text or "", extensions=["fenced_code", "tables"])
    return mark_safe(nh3.clean(html, tags=ALLOWED_TAGS, attributes={"a": {"href"}}))  # noqa: S308
