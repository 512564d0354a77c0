"""The paste-a-log page. htmx requests get the results partial; without JS the form posts normally."""

from __future__ import annotations

import logging

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from config.access import public_read
from config.http import HtmxHttpRequest as HttpRequest
from kb.logclean import log_lines
from kb.models import Entry
from kb.permissions import can_edit, editor_required
from kb.services import entry_create_from_paste
from triage.request_limits import body_too_large, paste_too_large, too_large_message
from triage.selectors import trends, triage_record_get
from triage.services import FeedbackRefused, feedback_on_triage, triage_and_record

logger = logging.getLogger("fixbase.triage")


def _render(request: HttpRequest, context: dict[str, object], status: int = 200) -> HttpResponse:
    template = "triage/_results.html" if request.htmx else "triage/paste.html"
    return render(request, template, context, status=status)


@public_read
@require_http_methods(["GET", "POST"])
def paste_view(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "triage/paste.html", {})
    if body_too_large(request):
        logger.warning("paste refused: body too large")
        return _render(request, {"error": too_large_message()}, status=413)
    log = request.POST.get("log", "")
    if paste_too_large(log):
        logger.warning("paste refused: too large")
        return _render(request, {"error": too_large_message()}, status=413)
    if not log.strip():
        logger.info("paste refused: empty")
        return _render(request, {"error": "The paste is empty: paste a traceback or a log."}, status=400)
    result, record = triage_and_record(log, "web", user=request.user)
    lines = log_lines(log)
    highlights = set(result.matches[0].explanation.highlight_lines) if result.matches else set()
    numbered = [(n, line, n in highlights) for n, line in enumerate(lines, 1)]
    return _render(request, {"result": result, "record": record, "log": log, "numbered": numbered})


@editor_required
@require_POST
def new_entry_view(request: HttpRequest) -> HttpResponse:
    if body_too_large(request):
        return render(request, "triage/paste.html", {"error": too_large_message()}, status=413)
    log = request.POST.get("log", "")
    if paste_too_large(log):
        logger.warning("new entry refused: paste too large")
        return render(request, "triage/paste.html", {"error": too_large_message()}, status=413)
    if not log.strip():
        return render(request, "triage/paste.html", {"error": "Nothing to add: the log is empty."}, status=400)
    entry = entry_create_from_paste(log, user=request.user)
    return redirect(entry.get_absolute_url())


@require_POST
def feedback_view(request: HttpRequest) -> HttpResponse:
    """ "This fixed it" / "didn't help" on an entry a triage showed: one vote per user, entry and failure."""
    entry_id, record_id = request.POST.get("entry", ""), request.POST.get("record", "")
    helpful = request.POST.get("helpful")
    if not entry_id.isdigit() or not record_id.isdigit() or helpful not in ("0", "1"):
        return HttpResponse("Feedback needs an entry, the triage it was shown by and a vote.", status=400)
    record = triage_record_get(int(record_id))
    if record is None:
        return HttpResponse("That triage is not on record.", status=404)
    try:
        entry = feedback_on_triage(request.user, record, int(entry_id), helpful == "1")
    except FeedbackRefused as exc:
        logger.info("feedback refused: entry %s not shown by triage %s", entry_id, record_id)
        return HttpResponse(str(exc), status=400)
    except Entry.DoesNotExist:
        logger.info("feedback refused: entry %s no longer exists", entry_id)
        return HttpResponse("That entry no longer exists.", status=404)
    return render(
        request,
        "triage/_feedback_done.html",
        {
            "helpful": helpful == "1",
            "entry_id": entry.pk,
            "record_id": record.pk,
            "has_fix": bool(entry.remedy_markdown.strip()),
        },
    )


MAX_DAYS = 3650


@public_read
def trends_view(request: HttpRequest) -> HttpResponse:
    """What keeps failing: the entries triage matched most, and recent pastes nobody knew."""
    raw = request.GET.get("days", "30").strip() or "30"
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_DAYS:
        return render(
            request,
            "triage/trends.html",
            {"error": f"days must be a whole number from 1 to {MAX_DAYS}.", "days": 30},
            status=400,
        )
    return render(request, "triage/trends.html", {**trends(days=int(raw)), "can_edit": can_edit(request.user)})


@require_http_methods(["GET", "POST"])
def tokens_view(request: HttpRequest) -> HttpResponse:
    """The user's API tokens: make one (its key is shown once), see when each was used, revoke."""
    from triage.models import ApiToken
    from triage.tokens import token_create, token_revoke

    context: dict[str, object] = {"can_edit": can_edit(request.user)}
    status = 200
    if request.method == "POST":
        if request.POST.get("revoke", "").isdigit():
            token = ApiToken.objects.filter(pk=int(request.POST["revoke"]), user_id=int(request.user.pk or 0)).first()
            if token is not None:
                token_revoke(token)
                context["message"] = f"Revoked {token.prefix}…: it no longer works."
        else:
            scopes = ("triage", "write") if request.POST.get("write") == "1" else ("triage",)
            try:
                token, key = token_create(request.user, request.POST.get("name", ""), scopes)
            except ValueError as exc:
                context["error"], status = str(exc), 400
            else:
                # Shown once, on the page the browser is sent to: a reload makes no second token.
                request.session["new_token"] = {"key": key, "name": token.name}
                return redirect("triage:tokens")
    new = request.session.pop("new_token", None)
    if new:
        context["new_key"], context["new_name"] = new["key"], new["name"]
    context["tokens"] = ApiToken.objects.filter(user_id=int(request.user.pk or 0))
    return render(request, "triage/tokens.html", context, status=status)
