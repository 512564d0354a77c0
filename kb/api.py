"""REST API for entries: list and search, read, create from a log, update, merge."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api_errors import error_response
from kb.models import Entry
from kb.selectors import entry_list
from kb.services import entry_create_from_paste, entry_merge, entry_update


class EntryOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    needs_fix = serializers.BooleanField(read_only=True)
    seen = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Entry
        fields = [
            "id",
            "title",
            "exc_type",
            "message",
            "framework",
            "kind",
            "pattern",
            "fingerprint",
            "remedy_markdown",
            "needs_fix",
            "seen",
            "created_at",
            "updated_at",
            "url",
        ]

    def get_seen(self, obj: Entry) -> int:
        return int(getattr(obj, "n_occurrences", None) or obj.occurrences.count())

    def get_url(self, obj: Entry) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(obj.get_absolute_url()) if request else obj.get_absolute_url()


class EntryCreate(serializers.Serializer):  # type: ignore[type-arg]
    log = serializers.CharField(trim_whitespace=False, max_length=2_000_000)
    title = serializers.CharField(required=False, allow_blank=True, max_length=300)
    remedy_markdown = serializers.CharField(required=False, allow_blank=True, max_length=100_000)


class EntryUpdate(serializers.Serializer):  # type: ignore[type-arg]
    title = serializers.CharField(required=False, allow_blank=False, max_length=300)
    remedy_markdown = serializers.CharField(required=False, allow_blank=True, max_length=100_000)


class MergeInput(serializers.Serializer):  # type: ignore[type-arg]
    source = serializers.IntegerField(min_value=1, help_text="The duplicate folded into this entry.")  # type: ignore[assignment]


class EntryListApi(generics.ListCreateAPIView):  # type: ignore[type-arg]
    serializer_class = EntryOutput
    required_scopes = {"POST": "write"}

    def get_queryset(self) -> Any:
        p = self.request.query_params
        needs_fix = p.get("needs_fix") in ("1", "true")
        return entry_list(
            p.get("q", "").strip(), p.get("framework", ""), True if needs_fix else None, kind=p.get("kind", "")
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description="words in the title, error or remedy"),
            OpenApiParameter("framework", str),
            OpenApiParameter("kind", str, description="category: traceback, exception_line, pattern, metric…"),
            OpenApiParameter("needs_fix", bool),
        ]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=EntryCreate, responses={201: EntryOutput})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = EntryCreate(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data["log"].strip():
            return error_response(400, "The log is empty.", {"log": ["The log is empty."]})
        entry = entry_create_from_paste(
            data.validated_data["log"], data.validated_data.get("title", ""), user=request.user
        )
        if data.validated_data.get("remedy_markdown"):
            entry = entry_update(
                entry, title=entry.title, remedy_markdown=data.validated_data["remedy_markdown"], user=request.user
            )
        return Response(EntryOutput(entry, context={"request": request}).data, status=201)


class EntryDetailApi(generics.RetrieveAPIView):  # type: ignore[type-arg]
    queryset = Entry.objects.all()
    serializer_class = EntryOutput
    required_scopes = {"PATCH": "write"}

    @extend_schema(request=EntryUpdate, responses={200: EntryOutput})
    def patch(self, request: Request, pk: int) -> Response:
        entry = self.get_object()
        data = EntryUpdate(data=request.data)
        data.is_valid(raise_exception=True)
        entry = entry_update(
            entry,
            title=data.validated_data.get("title", entry.title),
            remedy_markdown=data.validated_data.get("remedy_markdown", entry.remedy_markdown),
            user=request.user,
        )
        return Response(EntryOutput(entry, context={"request": request}).data)


class EntryMergeApi(APIView):
    required_scopes = {"POST": "write"}

    @extend_schema(request=MergeInput, responses={200: EntryOutput})
    def post(self, request: Request, pk: int) -> Response:
        target = Entry.objects.filter(pk=pk).first()
        if target is None:
            return error_response(404, "No such entry.")
        data = MergeInput(data=request.data)
        data.is_valid(raise_exception=True)
        source = Entry.objects.filter(pk=data.validated_data["source"]).first()
        if source is None or source.pk == target.pk:
            return error_response(400, "Give the id of another entry.", {"source": ["Give the id of another entry."]})
        entry_merge(target, source, user=request.user)
        target.refresh_from_db()
        return Response(EntryOutput(target, context={"request": request}).data)
