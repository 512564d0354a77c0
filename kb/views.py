"""The team wiki: browse and search entries, read one, edit it, see and revert its history,
merge duplicates (chosen by search, previewed, undoable)."""

from __future__ import annotations

import difflib
import logging
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Count, Max, Q
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from reversion.models import Version

from config.access import public_read
from config.http import HtmxHttpRequest as HttpRequest
from kb.models import Entry, Merge
from kb.permissions import can_edit, editor_required
from kb.selectors import entry_list
from kb.services import entry_merge, entry_revert, entry_unmerge, entry_update

logger = logging.getLogger("fixbase.kb")

PAGE_SIZE = 50


@public_read
def entry_list_view(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()
    framework = request.GET.get("framework", "").strip()
    kind = request.GET.get("kind", "").strip()
    needs_fix = request.GET.get("needs_fix") == "1"
    entries = entry_list(q, framework, True if needs_fix else None, kind=kind)
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "entries": page.object_list,
        "page": page,
        "q": q,
        "framework": framework,
        "kind": kind,
        "needs_fix": needs_fix,
        "frameworks": _choices("framework"),
        "kinds": _kind_choices(),
    }
    template = "kb/_entry_rows.html" if request.htmx else "kb/entry_list.html"
    return render(request, template, context)


def _choices(field: str) -> list[str]:
    return [v for v in Entry.objects.order_by(field).values_list(field, flat=True).distinct() if v]


# What the scanner calls each kind of failure, in the words the filter shows.
KIND_LABELS = {
    "traceback": "Python traceback",
    "truncated_traceback": "traceback cut before its error",
    "exception_line": "exception line",
    "error_line": "error line (not an exception)",
    "metric": "training metrics",
    "warning": "warning",
    "text": "described in words",
}


def _kind_choices() -> list[tuple[str, str]]:
    return [(k, KIND_LABELS.get(k, k.replace("_", " "))) for k in _choices("kind")]


def _feedback_summary(entry: Entry) -> dict[str, Any]:
    agg = entry.feedback.aggregate(
        fixed=Count("user", filter=Q(helpful=True), distinct=True),
        not_helped=Count("user", filter=Q(helpful=False), distinct=True),
        last_fixed=Max("created_at", filter=Q(helpful=True)),
    )
    return agg


def _detail_context(request: HttpRequest, entry: Entry) -> dict[str, Any]:
    return {
        "entry": entry,
        "occurrences": entry.occurrences.all(),
        "can_edit": can_edit(request.user),
        "feedback": _feedback_summary(entry),
        "merges": Merge.objects.filter(target=entry, undone_at__isnull=True).select_related("source", "merged_by"),
    }


@public_read
def entry_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    entry = Entry.all_objects.filter(pk=pk).first()
    if entry is None:
        return render(request, "404.html", {"what": "entry"}, status=404)
    if entry.merged_into_id:
        return redirect("kb:entry", pk=entry.merged_into_id)
    return render(request, "kb/entry_detail.html", _detail_context(request, entry))


@editor_required
@require_http_methods(["GET", "POST"])
def entry_edit_view(request: HttpRequest, pk: int) -> HttpResponse:
    entry = get_object_or_404(Entry, pk=pk)
    if request.method == "POST":
        title, remedy = request.POST.get("title", ""), request.POST.get("remedy_markdown", "")
        if not title.strip():
            logger.info("edit of entry %s refused: blank title", pk)
            form = {"title": title, "remedy_markdown": remedy, "error": "An entry needs a title."}
            return render(request, "kb/entry_edit.html", {"entry": entry, "form": form}, status=400)
        entry_update(entry, title=title, remedy_markdown=remedy, user=request.user)
        return redirect(entry.get_absolute_url())
    form = {"title": entry.title, "remedy_markdown": entry.remedy_markdown}
    return render(request, "kb/entry_edit.html", {"entry": entry, "form": form})


@public_read
def entry_history_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Every revision, newest first, each with its diff against the one before."""
    entry = get_object_or_404(Entry, pk=pk)
    versions = list(Version.objects.get_for_object(entry).select_related("revision__user"))
    rows = []
    for i, v in enumerate(versions):
        older = versions[i + 1].field_dict if i + 1 < len(versions) else {}
        now = v.field_dict
        diffs = []
        for field in ("title", "remedy_markdown"):
            a, b = str(older.get(field, "")), str(now.get(field, ""))
            if a != b and older:
                diffs.append((field, _diff(a, b)))
        rows.append({"version": v, "diffs": diffs, "first": not older, "latest": i == 0})
    return render(request, "kb/entry_history.html", {"entry": entry, "rows": rows, "can_edit": can_edit(request.user)})


def _diff(a: str, b: str) -> list[tuple[str, str]]:
    """Lines of a unified diff as (kind, text): kind is "add", "del" or "ctx"."""
    out = []
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=2):
        if line.startswith(("---", "+++", "@@")):
            continue
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        out.append((kind, line))
    return out


@editor_required
@require_POST
def entry_revert_view(request: HttpRequest, pk: int, version_id: int) -> HttpResponse:
    entry = get_object_or_404(Entry, pk=pk)
    try:
        entry_revert(entry, version_id, user=request.user)
    except Version.DoesNotExist:
        return HttpResponseBadRequest("No such revision of this entry.")
    return redirect("kb:entry_history", pk=entry.pk)


@editor_required
def entry_merge_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Merge a duplicate into this entry: search for it, preview both side by side, confirm."""
    target = get_object_or_404(Entry, pk=pk)
    q = request.GET.get("q", "").strip()
    candidates = entry_list(q).exclude(pk=target.pk)[:20] if q else []
    source = None
    if request.GET.get("source", "").isdigit():
        source = Entry.objects.filter(pk=int(request.GET["source"])).exclude(pk=target.pk).first()
    if request.method == "POST":
        raw = request.POST.get("source", "")
        source = Entry.objects.filter(pk=int(raw)).exclude(pk=target.pk).first() if raw.isdigit() else None
        if source is None:
            context = {"target": target, "q": q, "candidates": candidates, "error": "Choose another entry to merge."}
            return render(request, "kb/entry_merge.html", context, status=400)
        entry_merge(target, source, user=request.user)
        return redirect(target.get_absolute_url())
    template = "kb/_merge_candidates.html" if request.htmx and not source else "kb/entry_merge.html"
    return render(request, template, {"target": target, "q": q, "candidates": candidates, "source": source})


@editor_required
@require_POST
def merge_undo_view(request: HttpRequest, merge_id: int) -> HttpResponse:
    merge = get_object_or_404(Merge, pk=merge_id)
    try:
        source = entry_unmerge(merge, user=request.user)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    return redirect(source.get_absolute_url())
