"""REST API for documents: upload (202 + status URL) and status."""

from __future__ import annotations

import logging

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from config.api_errors import error_response
from ingest.models import Document
from ingest.parsers import FORMATS
from ingest.services import IngestError, document_delete, document_upload

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


class UploadInput(serializers.Serializer):  # type: ignore[type-arg]
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["", *FORMATS], required=False, allow_blank=True)


class DocumentUploadApi(generics.ListAPIView):  # type: ignore[type-arg]
    """GET the documents (newest first); POST one (multipart `file`): 202 and its status URL."""

    parser_classes = [MultiPartParser, FormParser]
    serializer_class = DocumentOutput
    queryset = Document.objects.all()
    required_scopes = {"POST": "write"}

    @extend_schema(request=UploadInput, responses={202: DocumentOutput, 200: DocumentOutput})
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is None:
            msg = "Send the document as a multipart field named 'file'."
            return error_response(400, msg, {"file": [msg]})
        try:
            fmt = str(request.data.get("format", "")) if isinstance(request.data, dict) else ""
            submitted = document_upload(upload.name or "upload.txt", upload.chunks(), fmt, uploaded_by=request.user)
        except IngestError as exc:
            logger.info("upload refused: %s", exc)
            return error_response(400, str(exc), {"file": [str(exc)]})
        doc = submitted.document
        doc.refresh_from_db()
        body = DocumentOutput(doc, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED if submitted.needs_processing else status.HTTP_200_OK)


class DocumentDetailApi(generics.RetrieveDestroyAPIView):  # type: ignore[type-arg]
    """A document's status; DELETE removes the document and its stored text (its entries stay,
    with their provenance)."""

    queryset = Document.objects.all()
    serializer_class = DocumentOutput
    required_scopes = {"DELETE": "write"}

    def perform_destroy(self, instance: Document) -> None:
        document_delete(instance)
