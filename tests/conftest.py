from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
DATA = Path(__file__).resolve().parent / "data"
IN_CI = os.environ.get("CI") == "true"


def require(condition: bool, reason: str) -> None:
    """Skip when a real service is missing on a laptop; under CI=true that is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(autouse=True)
def _isolated_kb(settings, tmp_path: Path) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Each test gets its own index and media folders and the fake embedder, with no caches."""
    from triage import ranking_cache
    from triage.services import ranker_model

    settings.FIXBASE_EMBEDDER = "fake"
    settings.FIXBASE_INDEX_DIR = tmp_path / "index"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FIXBASE_INGEST_IN_THREAD = False  # tests that need the background thread turn it on
    ranking_cache._current = None
    ranker_model.cache_clear()
    yield
    ranking_cache._current = None


@pytest.fixture
def real_embedder(settings):  # type: ignore[no-untyped-def]
    settings.FIXBASE_EMBEDDER = "minilm"
    return settings


def shared_sample(name: str) -> Path:
    path = SHARED / "samples" / name
    require(path.exists(), f"{path} is not beside the project")
    return path


SM120_SAMPLE = "003_77b862750afda6fa.txt"
NOTES_SAMPLE = "000_242c947b765e3cc2.txt"


def make_user(name: str, editor: bool = False):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group, User

    from kb.apps import EDITORS, ensure_editors_group

    user = User.objects.create_user(username=name, password="pw-" + name)
    if editor:
        ensure_editors_group()
        user.groups.add(Group.objects.get(name=EDITORS))
    return user


@pytest.fixture
def editor(db):  # type: ignore[no-untyped-def]
    return make_user("edith", editor=True)


@pytest.fixture
def viewer(db):  # type: ignore[no-untyped-def]
    return make_user("victor")


@pytest.fixture
def editor_client(editor):  # type: ignore[no-untyped-def]
    from django.test import Client

    c = Client()
    c.force_login(editor)
    return c


@pytest.fixture
def viewer_client(viewer):  # type: ignore[no-untyped-def]
    from django.test import Client

    c = Client()
    c.force_login(viewer)
    return c
