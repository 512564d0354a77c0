from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate

EDITORS = "editors"
# Editors curate: edit, merge, upload and add entries. Viewers (every other account) triage and
# browse. Admins (superusers) also manage accounts in /admin/.
EDITOR_PERMISSIONS = (
    ("kb", "add_entry"),
    ("kb", "change_entry"),
    ("kb", "delete_entry"),
    ("ingest", "add_document"),
    ("ingest", "change_document"),
)


def ensure_editors_group(**kwargs: Any) -> None:
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.get_or_create(name=EDITORS)
    perms = [
        p
        for app, codename in EDITOR_PERMISSIONS
        if (p := Permission.objects.filter(content_type__app_label=app, codename=codename).first())
    ]
    group.permissions.add(*perms)


class KbConfig(AppConfig):
    name = "kb"
    verbose_name = "Knowledge base"

    def ready(self) -> None:
        import reversion

        from kb.models import Entry

        # Every change of what people curate is a revision with its author and time.
        if not reversion.is_registered(Entry):
            reversion.register(Entry, fields=["title", "remedy_markdown", "merged_into"])
        post_migrate.connect(ensure_editors_group, dispatch_uid="fixbase-editors-group")
