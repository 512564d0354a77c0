"""Upload page and document status page (polled by htmx while the document is processing)."""

from __future__ import annotations

import logging
from pathlib import Path

from django.http import FileResponse, Http404, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from config.access import public_read
from config.http import HtmxHttpRequest as HttpRequest
from ingest.dispatch import no_worker_running, resume_abandoned
from ingest.models import Document
from ingest.parsers import FORMATS
from ingest.selectors import EXCERPT_CONTEXT, EXCERPT_LIMIT, document_excerpt
from ingest.services import IngestError, document_upload
from kb.permissions import editor_required
from kb.selectors import entries_of_document

logger = logging.getLogger("fixbase.ingest")


@editor_required
@require_http_methods(["GET", "POST"])
def upload_view(request: HttpRequest) -> HttpResponse:
    resume_abandoned()
    context: dict[str, object] = {"formats": FORMATS, "documents": Document.objects.all()[:20]}
    if request.method == "GET":
        return render(request, "ingest/upload.html", context)
    upload = request.FILES.get("file")
    if upload is None:
        context["error"] = "Choose a file to upload."
        return render(request, "ingest/upload.html", context, status=400)
    try:
        submitted = document_upload(
            upload.name or "upload.txt", upload.chunks(), request.POST.get("format", ""), uploaded_by=request.user
        )
    except IngestError as exc:
        logger.info("upload refused: %s", exc)
        context["error"] = str(exc)
        return render(request, "ingest/upload.html", context, status=400)
    url = submitted.document.get_absolute_url()
    return redirect(url if submitted.created else f"{url}?again=1")


@public_read
def document_view(request: HttpRequest, pk: int) -> HttpResponse:
    doc = get_object_or_404(Document, pk=pk)
    if doc.status in (Document.Status.QUEUED, Document.Status.PROCESSING) and resume_abandoned():
        doc.refresh_from_db()
    template = "ingest/_status.html" if request.htmx else "ingest/document.html"
    context = {
        "doc": doc,
        "polling": doc.status in ("queued", "processing"),
        "entries": entries_of_document(doc.pk),
        "waiting_for_worker": doc.status == Document.Status.QUEUED and no_worker_running(),
        "uploaded_before": request.GET.get("again") == "1",
    }
    return render(request, template, context)


@require_http_methods(["GET"])
def document_lines_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Lines of a document: the range an entry was seen at (`?from=&to=`, highlighted, with some
    context), or its first lines. Team members only, even when triage is public: it is the whole
    stored text (secrets redacted), not just the failures."""
    doc = get_object_or_404(Document, pk=pk)
    asked = "from" in request.GET
    try:
        if asked:
            start = int(request.GET["from"])
            end = int(request.GET.get("to", start))
        else:  # reading page by page
            start = int(request.GET.get("start", "1"))
            end = start + EXCERPT_LIMIT - 1
    except ValueError:
        logger.info("lines of document %s refused: %r", pk, request.GET.urlencode()[:200])
        context = {"doc": doc, "error": "from, to and start must be line numbers."}
        return render(request, "ingest/lines.html", context, status=400)
    if not doc.file or not Path(doc.file.path).exists():
        raise Http404("The document's text is not stored.")
    excerpt = document_excerpt(doc.file.path, start, end, context=EXCERPT_CONTEXT if asked else 0)
    return render(request, "ingest/lines.html", {"doc": doc, "excerpt": excerpt, "highlight": asked})


@editor_required
def document_original_view(request: HttpRequest, pk: int) -> HttpResponseBase:
    """The upload's own bytes, kept when decoding lost some (secrets redacted)."""
    doc = get_object_or_404(Document, pk=pk)
    path = Path(doc.original_path)
    if not doc.undecodable_bytes or not path.exists():
        raise Http404("Nothing was lost decoding this document: its text is the whole upload.")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=f"{doc.filename}.orig")
