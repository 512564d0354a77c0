from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from kb.remedy_markdown import remedy_html

register = template.Library()


@register.filter
def render_markdown(text: str) -> SafeString:
    """Markdown from users and documents, sanitised (kb.remedy_markdown)."""
    return mark_safe(remedy_html(text))  # noqa: S308 - nh3 cleaned it
