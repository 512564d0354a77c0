"""REST API for documents: upload (202 + status URL) and status."""

from __future__ import annotations

import logging

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import reverse
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingest.dispatch import ingest_later
from ingest.models import Document
from ingest.services import IngestError, document_submit
from kb.permissions import can_edit

logger = logging.getLogger("fixbase.ingest")


class DocumentOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = [
            "id",
            "filename",
            "size",
            "format",
            "status",
            "error",
            "entries_parsed",
            "entries_created",
            "entries_embedded",
            "entries_grouped",
            "secrets_redacted",
            "bytes_scanned",
            "created_at",
            "updated_at",
            "status_url",
        ]

    def get_status_url(self, obj: Document) -> str:
        request = self.context.get("request")
        url = reverse("api-document", args=[obj.pk])
        return request.build_absolute_uri(url) if request else url


class CanUpload(BasePermission):
    """Uploading adds to the knowledge base: editors only (viewers' tokens can triage)."""

    message = "Only editors can upload documents."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or can_edit(request.user)


class DocumentUploadApi(APIView):
    parser_classes = [MultiPartParser, FormParser]
    permission_classes = [IsAuthenticated, CanUpload]

    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is None:
            return Response({"file": ["Send the document as a multipart field named 'file'."]}, status=400)
        try:
            fmt = str(request.data.get("format", "")) if isinstance(request.data, dict) else ""
            submitted = document_submit(upload.name or "upload.txt", upload.chunks(), fmt, uploaded_by=request.user)
        except IngestError as exc:
            logger.info("upload refused: %s", exc)
            return Response({"file": [str(exc)]}, status=400)
        doc = submitted.document
        if submitted.needs_processing:
            transaction.on_commit(lambda: ingest_later(doc.pk))
        doc.refresh_from_db()
        body = DocumentOutput(doc, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED if submitted.needs_processing else status.HTTP_200_OK)


class DocumentDetailApi(APIView):
    def get(self, request: Request, pk: int) -> Response:
        doc = get_object_or_404(Document, pk=pk)
        return Response(DocumentOutput(doc, context={"request": request}).data)
