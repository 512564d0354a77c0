"""`make run`'s path with nothing configured: SQLite and FAISS files under FIXBASE_DATA_DIR."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_embedded_default_migrates_ingests_and_triages_from_the_command_line(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"FIXBASE_DATA_DIR": str(tmp_path), "FIXBASE_EMBEDDER": "fake"})

    def manage(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert manage("migrate", "-v0").returncode == 0
    ingest = manage("ingest", "samples")
    assert ingest.returncode == 0, ingest.stderr
    assert "verl_ppo_chat.md: specstory" in ingest.stdout
    assert (tmp_path / "fixbase.sqlite3").exists()
    assert (tmp_path / "index" / "entries.faiss").exists()
    triage = manage(
        "triage", "-", stdin="RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    assert triage.returncode == 0, triage.stderr
    assert triage.stdout.startswith("verdict: match")
    empty = manage("triage", "-", stdin="   ")
    assert empty.returncode != 0 and "empty" in empty.stderr
