"""REST API for triage: post a log (JSON, text/plain or gzip), triage history, feedback, health."""

from __future__ import annotations

import gzip
import logging
import zlib
from typing import Any

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.utils.http import parse_header_parameters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.validators import ProhibitSurrogateCharactersValidator
from rest_framework.views import APIView

from config.api import NulFreeJSONParser
from config.api_errors import TooLarge, error_response
from kb.models import Entry
from kb.textdecode import DocumentError, decode_document, looks_binary, sniff_encoding
from triage.models import TriageRecord
from triage.presenters import result_as_dict
from triage.request_limits import body_too_large, paste_too_large, too_large_message
from triage.services import FeedbackRefused, feedback_on_triage, triage_and_record

logger = logging.getLogger("fixbase.triage")
CONTEXT_KEYS = ("job", "url", "commit", "framework", "cluster")


class PlainTextParser(BaseParser):
    media_type = "text/plain"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> dict[str, str]:
        """The body is the log, in the charset the Content-Type names, else in the encoding an
        upload's is sniffed in (UTF-8, UTF-16 with or without a mark, GB18030, Latin-1). Never
        unpacked: a gzip body is refused as binary (upload it as a multipart file instead)."""
        data = stream.read() if stream is not None else b""
        charset = parse_header_parameters(media_type or "")[1].get("charset", "")
        try:
            text = data.decode(charset or sniff_encoding(data[:65536]), errors="replace")
        except (LookupError, UnicodeError, ValueError) as exc:  # no such codec, or not a text one
            logger.info("triage API: refused charset %r", charset[:40])
            raise exceptions.ParseError(f"Unknown charset {charset[:40]!r} in the Content-Type.") from exc
        text = text.replace("\x00", "")  # binary output in a job log: dropped, as from JSON
        if looks_binary(text[:65536].encode("utf-8")):
            logger.info("triage API: refused a binary text/plain body")
            raise exceptions.ParseError(
                "This looks like binary data, not a log; send text (a .gz as a multipart file)."
            )
        return {"log": text}


class SurrogateCheck(ProhibitSurrogateCharactersValidator):
    """DRF's check that a text holds no lone surrogate (JSON's "\\ud800"), with its message, done by
    the UTF-8 encoder, which refuses one: DRF's reads the text a character at a time in Python,
    which a paste of megabytes makes slow."""

    def __call__(self, value: Any) -> None:
        text = str(value)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValidationError(self.message.format(code_point=ord(text[err.start])), code=self.code) from None


class TextField(serializers.CharField):
    """Text as sent: a number or a list is refused, not turned into text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [
            SurrogateCheck() if isinstance(v, ProhibitSurrogateCharactersValidator) else v for v in self.validators
        ]

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class JobContext(serializers.Serializer):  # type: ignore[type-arg]
    job = serializers.CharField(required=False, allow_blank=True, max_length=300)
    url = serializers.CharField(required=False, allow_blank=True, max_length=1000)
    commit = serializers.CharField(required=False, allow_blank=True, max_length=100)
    framework = serializers.CharField(required=False, allow_blank=True, max_length=100)
    cluster = serializers.CharField(required=False, allow_blank=True, max_length=200)


NO_LOG = (
    'No log was sent: send it as a text/plain body, as JSON {"log": "…"}, or as a form\'s `log` '
    "field or `file` upload (curl's --data-binary without a Content-Type header sends a form with no such field)."
)


class TriageInput(serializers.Serializer):  # type: ignore[type-arg]
    log = TextField(trim_whitespace=False, allow_blank=False, required=False)
    file = serializers.FileField(required=False, help_text="The log as a file; .gz is opened.")
    top_k = serializers.IntegerField(min_value=1, max_value=50, default=5)
    context = JobContext(required=False)  # type: ignore[assignment]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        upload = attrs.pop("file", None)
        if upload is not None:
            attrs["log"] = _read_upload(upload)
        if "log" not in attrs:
            raise serializers.ValidationError({"log": [NO_LOG]})
        log = attrs["log"]
        if not log.strip():
            raise serializers.ValidationError({"log": ["The log is empty: paste the error output."]})
        if paste_too_large(log):
            raise TooLarge(too_large_message())
        return attrs


def _read_upload(upload: Any) -> str:
    limit = settings.FIXBASE_MAX_PASTE_BYTES
    head = upload.read(2)
    upload.seek(0)
    try:
        if head == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=upload) as fh:
                data = fh.read(limit + 1)  # never more than the limit is expanded
        else:
            data = upload.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise serializers.ValidationError({"file": [f"The gzip file is damaged: {exc}."]}) from exc
    if len(data) > limit:
        logger.warning("triage API: refused a gzip upload that expands past the limit")
        raise TooLarge(too_large_message())
    try:
        return decode_document(data)
    except DocumentError as exc:
        raise serializers.ValidationError({"file": [str(exc)]}) from exc


class RecordOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    user = serializers.CharField(source="user.username", default=None, read_only=True)

    class Meta:
        model = TriageRecord
        fields = [
            "id",
            "created_at",
            "source",
            "user",
            "verdict",
            "top_entry_id",
            "top_score",
            "entry_ids",
            "headline",
            "fingerprint",
            "context",
        ]


TRIAGE_ANSWER = inline_serializer(
    "TriageAnswer",
    {
        "verdict": serializers.ChoiceField(choices=["match", "possible", "no_match"]),
        "confidence": serializers.FloatField(),
        "threshold": serializers.FloatField(),
        "floor": serializers.FloatField(),
        "record_id": serializers.IntegerField(),
        "signature": serializers.DictField(),
        "notes": serializers.ListField(child=serializers.CharField()),
        "secondary_errors": serializers.ListField(child=serializers.DictField()),
        "matches": serializers.ListField(child=serializers.DictField()),
    },
)


class TriageApi(generics.ListAPIView):  # type: ignore[type-arg]
    """POST a failing job's log; GET the triage history (newest first)."""

    parser_classes = [NulFreeJSONParser, PlainTextParser, MultiPartParser, FormParser]
    serializer_class = RecordOutput

    def get_queryset(self) -> Any:
        qs = TriageRecord.objects.select_related("user").order_by("-created_at", "-pk")
        params = self.request.query_params
        verdict, entry = params.get("verdict", ""), params.get("entry", "")
        if verdict and verdict not in ("match", "possible", "no_match"):
            raise serializers.ValidationError({"verdict": ["verdict is match, possible or no_match."]})
        if entry and not entry.isdigit():
            raise serializers.ValidationError({"entry": ["entry is an entry id (a whole number)."]})
        if verdict:
            qs = qs.filter(verdict=verdict)
        if entry:
            qs = qs.filter(top_entry_id=int(entry))
        if params.get("job"):
            qs = qs.filter(context__job=params["job"])
        return qs

    @extend_schema(
        parameters=[
            OpenApiParameter("verdict", str, enum=["match", "possible", "no_match"]),
            OpenApiParameter("entry", int),
            OpenApiParameter("job", str),
        ]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request={
            "application/json": TriageInput,
            "text/plain": OpenApiTypes.STR,
            "multipart/form-data": TriageInput,
        },
        responses={
            200: TRIAGE_ANSWER,
            400: OpenApiResponse(description="error"),
            413: OpenApiResponse(description="error"),
        },
    )
    def post(self, request: Request) -> Response:
        if body_too_large(request._request):
            logger.warning("triage API: refused oversize body from %s", request.user)
            return error_response(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, too_large_message())
        data = TriageInput(data=request.data)
        if not data.is_valid():
            meta = request.META
            if "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower() and not meta.get("CONTENT_LENGTH"):
                # The WSGI server handed over no body: say why, rather than "the log is empty".
                logger.info("triage API: refused a chunked body from %s", request.user)
                return error_response(411, "Send the log with a Content-Length: a chunked body is not read.")
            raise serializers.ValidationError(data.errors)
        log, top_k = data.validated_data["log"], data.validated_data["top_k"]
        context = {k: v for k, v in dict(data.validated_data.get("context", {})).items() if k in CONTEXT_KEYS and v}
        result, record = triage_and_record(log, "api", user=request.user, top_k=top_k, context=context, keep_log=True)
        body = result_as_dict(result, request.build_absolute_uri)
        body["record_id"] = record.pk
        return Response(body)


class TriageRecordApi(generics.RetrieveAPIView):  # type: ignore[type-arg]
    queryset = TriageRecord.objects.select_related("user")
    serializer_class = RecordOutput


class FeedbackInput(serializers.Serializer):  # type: ignore[type-arg]
    entry_id = serializers.IntegerField(min_value=1)
    helpful = serializers.BooleanField()


class FeedbackApi(APIView):
    """Did the entry fix the failure of this triage? One vote per user, entry and failure."""

    @extend_schema(request=FeedbackInput, responses={200: FeedbackInput})
    def post(self, request: Request, pk: int) -> Response:
        record = get_object_or_404(TriageRecord, pk=pk)
        data = FeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            feedback_on_triage(request.user, record, data.validated_data["entry_id"], data.validated_data["helpful"])
        except FeedbackRefused as exc:
            logger.info("feedback refused: entry %s not shown by triage %s", data.validated_data["entry_id"], pk)
            return error_response(400, str(exc), {"entry_id": [str(exc)]})
        except Entry.DoesNotExist:
            logger.info("feedback refused: no entry %s", data.validated_data["entry_id"])
            return error_response(404, "No such entry.")
        return Response(data.validated_data)


class HealthApi(APIView):
    """For monitors: database, index, worker and model. No token needed; 503 when degraded."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes: list[Any] = []

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        from triage.health import health

        report = health()
        return Response(report, status=200 if report["status"] == "ok" else 503)
