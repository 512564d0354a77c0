"""The team wiki: browse and search entries, read one, edit its remedy."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from config.http import HtmxHttpRequest as HttpRequest
from kb.models import Entry
from kb.selectors import entry_list
from kb.services import entry_merge, entry_update


def entry_list_view(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()
    needs_fix = request.GET.get("needs_fix") == "1"
    entries = entry_list(q, request.GET.get("framework", ""), True if needs_fix else None)[:200]
    template = "kb/_entry_rows.html" if request.htmx else "kb/entry_list.html"
    return render(request, template, {"entries": entries, "q": q, "needs_fix": needs_fix})


def entry_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    entry = get_object_or_404(Entry, pk=pk)
    return render(request, "kb/entry_detail.html", {"entry": entry, "occurrences": entry.occurrences.all()})


@require_http_methods(["GET", "POST"])
def entry_edit_view(request: HttpRequest, pk: int) -> HttpResponse:
    entry = get_object_or_404(Entry, pk=pk)
    if request.method == "POST":
        entry_update(
            entry, title=request.POST.get("title", ""), remedy_markdown=request.POST.get("remedy_markdown", "")
        )
        return redirect(entry.get_absolute_url())
    return render(request, "kb/entry_edit.html", {"entry": entry})


@require_http_methods(["POST"])
def entry_merge_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Merge another entry (its id in the form) into this one."""
    target = get_object_or_404(Entry, pk=pk)
    try:
        source = Entry.objects.get(pk=int(request.POST.get("source", "")))
        entry_merge(target, source)
    except (ValueError, Entry.DoesNotExist):
        entry = target
        return render(
            request,
            "kb/entry_detail.html",
            {"entry": entry, "occurrences": entry.occurrences.all(), "merge_error": "Give the id of another entry."},
            status=400,
        )
    return redirect(target.get_absolute_url())
