"""The README's CI examples, run as a new user would against a live server: the GitHub Actions
failure step, the GitLab after_script, the Slurm wrapper."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ingest.services import document_process, document_submit_path
from tests.conftest import ROOT, require
from triage.models import TriageRecord

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
EXAMPLES = ROOT / "clients" / "examples"
SM120 = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


@pytest.fixture
def env(live_server, viewer, tmp_path):  # type: ignore[no-untyped-def]
    from triage.tokens import token_create

    require(shutil.which("curl") is not None, "curl is missing")
    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    (tmp_path / "train.log").write_text("INFO step 1\n" + SM120)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    return {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "FIXBASE_URL": live_server.url,
        "FIXBASE_TOKEN": token_create(viewer, "ci")[1],
    }


def run_script(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_github_actions_failure_step_writes_the_step_summary(env, tmp_path):
    steps = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())["jobs"]["smoke-train"]["steps"]
    step = next(s for s in steps if s.get("if") == "failure()")
    summary = tmp_path / "summary.md"
    gh = {
        "GITHUB_JOB": "smoke-train",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "team/rl",
        "GITHUB_RUN_ID": "42",
        "GITHUB_SHA": "abc123",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    out = run_script(step["run"], {**env, **gh}, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "### Known issue" in summary.read_text()
    assert TriageRecord.objects.get().context == {
        "job": "smoke-train",
        "url": "https://github.com/team/rl/actions/runs/42",
        "commit": "abc123",
    }


def test_gitlab_after_script_asks_only_when_the_job_failed(env, tmp_path):
    job = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())["smoke-train"]
    script = "\n".join(job["after_script"])
    gl = {"CI_JOB_NAME": "smoke-train", "CI_JOB_URL": "https://gitlab/j/7", "CI_COMMIT_SHA": "def456"}
    passed = run_script(script, {**env, **gl, "CI_JOB_STATUS": "success"}, tmp_path)
    assert passed.returncode == 0 and TriageRecord.objects.count() == 0
    failed = run_script(script, {**env, **gl, "CI_JOB_STATUS": "failed"}, tmp_path)
    assert failed.returncode == 0, failed.stderr
    assert "### Known issue" in (tmp_path / "fixbase.md").read_text()


def test_slurm_wrapper_keeps_the_exit_code_and_prints_the_fix(env, tmp_path):
    shutil.copy(ROOT / "clients" / "fixbase_ci.py", tmp_path / "fixbase_ci.py")
    shutil.copy(EXAMPLES / "slurm-train.sh", tmp_path / "slurm-train.sh")
    crash = f"import sys; print({SM120!r}); sys.exit(7)"
    out = subprocess.run(
        ["bash", str(tmp_path / "slurm-train.sh"), sys.executable, "-c", crash],
        env={**env, "SLURM_JOB_ID": "991", "SLURM_CLUSTER_NAME": "a100"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 7 and "### Known issue" in out.stdout
    assert TriageRecord.objects.get().context["job"] == "slurm-991"
    assert os.access(EXAMPLES / "slurm-train.sh", os.X_OK)
