"""REST API: POST /api/v1/triage/ (token auth) — the CI failure hook's entry point."""

from __future__ import annotations

import logging

from django.conf import settings
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from triage.limits import body_too_large, too_large_message
from triage.presenters import result_as_dict
from triage.services import triage_log, triage_record

logger = logging.getLogger("fixbase.triage")


class TriageInput(serializers.Serializer):  # type: ignore[type-arg]
    log = serializers.CharField(trim_whitespace=False, allow_blank=False)
    top_k = serializers.IntegerField(min_value=1, max_value=50, default=5)

    def validate_log(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The log is empty: paste the error output.")
        if len(value.encode()) > settings.FIXBASE_MAX_PASTE_BYTES:
            raise serializers.ValidationError(too_large_message())
        return value


class TriageApi(APIView):
    def post(self, request: Request) -> Response:
        if body_too_large(request._request):
            logger.warning("triage API: refused oversize body from %s", request.user)
            return Response({"detail": too_large_message()}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        data = TriageInput(data=request.data)
        if not data.is_valid():
            logger.info("triage API: bad input: %s", data.errors)
            return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
        result = triage_log(data.validated_data["log"], top_k=data.validated_data["top_k"])
        triage_record(result, "api")
        return Response(result_as_dict(result, request.build_absolute_uri))
