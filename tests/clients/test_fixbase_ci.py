"""The CI client against a live server: match, no match, unreachable, hanging, a 20 MB log, `run`."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ingest.services import document_process, document_submit_path
from tests.conftest import ROOT
from triage.models import TriageRecord

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
CLIENT = ROOT / "clients" / "fixbase_ci.py"
SM120 = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
_spec = importlib.util.spec_from_file_location("fixbase_ci", CLIENT)
assert _spec is not None and _spec.loader is not None
fixbase_ci = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixbase_ci)
UNKNOWN = "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5555')\n"


@pytest.fixture
def server(live_server, viewer):  # type: ignore[no-untyped-def]
    from triage.tokens import token_create

    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    return live_server.url, token_create(viewer, "ci")[1]


def client(url: str, token: str, *args: str, stdin: str | None = None, timeout: float = 60):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, str(CLIENT), "--url", url, "--token", token, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_a_match_prints_the_fix_and_exits_0_or_10_when_asked(server, tmp_path):
    url, token = server
    summary = tmp_path / "summary.md"
    out = client(url, token, "--summary", str(summary), "--context", "job=nightly", "triage", "-", stdin=SM120)
    assert out.returncode == 0, out.stderr
    assert "### Known issue" in out.stdout and "sm_120" in out.stdout and "/kb/entries/" in out.stdout
    assert summary.read_text().startswith("## Fixbase")
    assert TriageRecord.objects.get().context == {"job": "nightly"}
    assert client(url, token, "--fail-on-match", "triage", "-", stdin=SM120).returncode == 10
    assert (
        client(url, token, "--exit-code-on-known-infra", "75", "--infra", "verl", "triage", "-", stdin=SM120).returncode
        == 75
    )


def test_no_match_says_so_and_exits_0_even_with_fail_on_match(server):
    url, token = server
    out = client(url, token, "--fail-on-match", "triage", "-", stdin=UNKNOWN)
    assert out.returncode == 0 and "No known match" in out.stdout


def test_an_unreachable_server_never_fails_the_job(db):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    out = client(f"http://127.0.0.1:{port}", "fb_x", "--fail-on-match", "triage", "-", stdin=SM120)
    assert out.returncode == 0 and "could not ask" in out.stderr


def test_a_server_that_hangs_is_given_up_on_within_the_timeout(db):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    start = time.monotonic()
    out = client(f"http://127.0.0.1:{listener.getsockname()[1]}", "fb_x", "--timeout", "2", "triage", "-", stdin=SM120)
    took = time.monotonic() - start
    listener.close()
    assert out.returncode == 0 and "could not ask" in out.stderr and took < 10


def test_a_20_mb_log_is_cut_to_what_matters_and_answered(server, tmp_path):
    url, token = server
    log = tmp_path / "job.log"
    noise = "INFO step {i} loss 0.{i:04d} reward 0.5 lr 1e-6 grad_norm 0.3 tokens/s 1234\n"
    with open(log, "w") as fh:
        i = 0
        while fh.tell() < 20 * 1024 * 1024:
            fh.write(noise.format(i=i % 10000))
            i += 1
        fh.write(SM120 + "CUDA kernel errors might be asynchronously reported at some other API call.\n")
        fh.write(noise.format(i=1) * 50)
    out = client(url, token, "triage", str(log))
    assert out.returncode == 0, out.stderr
    assert "### Known issue" in out.stdout
    assert len(TriageRecord.objects.get().log) < 2 * 1024 * 1024
    assert f"(log lines {i + 1}–" in out.stdout  # the error's line in the file, not in what was sent


def test_a_cut_log_maps_its_lines_back_to_the_file():
    lines = [f"INFO step {n}" for n in range(1, 5001)]
    lines[2999] = "RuntimeError: CUDA error: device-side assert triggered"
    text = "\n".join(lines)

    for limit in (8000, 3000, *range(1000, 9000, 97)):  # the error and the tail kept; then only the tail's end
        kept = fixbase_ci.keep_what_matters(text, max_bytes=limit)
        numbers = fixbase_ci.original_line_numbers(kept)
        sent = kept.split("\n")
        assert len(kept.encode()) <= limit and sent[0].startswith("[… ")
        assert all(numbers[k] == int(line.split()[-1]) for k, line in enumerate(sent) if line.startswith("INFO step"))
        if limit == 8000:
            assert numbers[sent.index(lines[2999])] == 3000


def test_run_posts_only_when_the_command_fails_and_keeps_its_exit_code(server):
    url, token = server
    ok = client(url, token, "run", "--", sys.executable, "-c", "print('all good')")
    assert ok.returncode == 0 and "all good" in ok.stdout and TriageRecord.objects.count() == 0
    failing = f"import sys; print({SM120!r}); sys.exit(3)"
    bad = client(url, token, "run", "--", sys.executable, "-c", failing)
    assert bad.returncode == 3 and "no kernel image" in bad.stdout and "### Known issue" in bad.stdout
    assert TriageRecord.objects.get().context["job"].startswith(sys.executable)


def test_run_keeps_the_streams_apart_and_a_stdout_line_is_not_the_exceptions_message(server):
    # A training script whose exception reaches stderr while its own progress line reaches stdout
    # right after it: the line is not the rest of the message, and each stream stays our own.
    url, token = server
    script = (
        "import sys, time\n"
        'sys.stderr.write(\'Traceback (most recent call last):\\n  File "train.py", line 3, in <module>\\n'
        "ValueError: max_tokens must be at least 1, got -2929.\\n'); sys.stderr.flush(); time.sleep(0.3)\n"
        "print('saving emergency checkpoint to /tmp/ckpt', flush=True)\n"
        "sys.exit(1)\n"
    )
    run = client(url, token, "run", "--", sys.executable, "-c", script)
    assert run.returncode == 1
    assert run.stderr.startswith("Traceback (most recent call last):") and "ValueError: max_tokens" in run.stderr
    assert run.stdout.startswith("saving emergency checkpoint to /tmp/ckpt\n")
    record = TriageRecord.objects.get()
    assert "[stderr]: ValueError: max_tokens must be at least 1, got -2929." in record.log
    assert "\nsaving emergency checkpoint to /tmp/ckpt" in record.log
    assert (
        record.headline.startswith("ValueError: max_tokens must be at least 1") and "checkpoint" not in record.headline
    )


def test_run_of_a_missing_command_or_a_silent_failure_says_so_in_one_line(tmp_path):
    # No server is needed: neither case may ask one.
    missing = client("http://127.0.0.1:1", "t", "run", "--", str(tmp_path / "no-such-command"))
    assert missing.returncode == 127 and missing.stdout == ""
    assert (
        missing.stderr.strip()
        == f"fixbase run: cannot run {tmp_path / 'no-such-command'}: No such file or directory; not asked."
    )
    script = tmp_path / "not-executable.sh"
    script.write_text("echo hi\n")
    assert client("http://127.0.0.1:1", "t", "run", "--", str(script)).returncode == 126

    silent = client("http://127.0.0.1:1", "t", "run", "--", sys.executable, "-c", "raise SystemExit(4)")
    assert silent.returncode == 4
    assert silent.stderr.strip() == "fixbase run: the command failed (exit 4) and printed nothing; not asked."

    nothing = client("http://127.0.0.1:1", "t", "run", "--")
    assert nothing.returncode == 2 and nothing.stderr.strip() == "fixbase run: give the command after --"


def test_the_client_uses_the_standard_library_only():
    source = Path(CLIENT).read_text()
    imports = {line.split()[1].split(".")[0] for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= {
        "__future__",
        "argparse",
        "json",
        "os",
        "re",
        "subprocess",
        "sys",
        "threading",
        "urllib",
        "collections",
        "typing",
    }


def test_manage_triage_asks_the_running_server_with_distinct_exit_codes(server, tmp_path):
    import os

    url, token = server
    env = {**os.environ, "FIXBASE_URL": url, "FIXBASE_TOKEN": token, "FIXBASE_DATA_DIR": str(tmp_path)}

    def manage(stdin: str, **extra: str):  # type: ignore[no-untyped-def]
        return subprocess.run(
            [sys.executable, "manage.py", "triage", "-"],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**env, **extra},
            timeout=60,
        )

    start = time.monotonic()
    match = manage(SM120)
    assert match.returncode == 0 and match.stdout.startswith("verdict: match"), match.stderr
    assert time.monotonic() - start < 8  # the server answered: no model loaded here
    assert manage(UNKNOWN).returncode == 1
    assert manage(SM120, FIXBASE_URL="http://127.0.0.1:1").returncode == 2
    assert TriageRecord.objects.filter(source="api").count() == 2


def test_a_paste_with_no_recognised_error_is_summarised_by_its_words():
    sig = {"kind": "text", "label": "No error line found; your paste read as text", "message": "Traceback (most recent"}

    text = fixbase_ci.summary_markdown({"verdict": "no_match", "matches": [], "signature": sig}, "http://fixbase")

    assert "**No error line found; your paste read as text:** ` Traceback (most recent `" in text
    assert "` text:" not in text


def test_the_summary_names_the_root_as_the_server_labels_it():
    warning = {"kind": "warning", "label": "No error found, only warnings; the first", "exception": "UserWarning"}
    warning["message"] = "FSDP is switching to NO_SHARD"
    older_server = {"kind": "traceback", "exception": "RuntimeError", "message": "boom"}  # sends no label

    text = fixbase_ci.summary_markdown({"verdict": "no_match", "matches": [], "signature": warning}, "http://x")
    older = fixbase_ci.summary_markdown({"verdict": "no_match", "matches": [], "signature": older_server}, "http://x")

    assert "**No error found, only warnings; the first:** ` UserWarning: FSDP is switching to NO_SHARD `" in text
    assert "Root error" not in text
    assert "**Root error:** ` RuntimeError: boom `" in older


def test_the_summary_says_how_a_listed_entry_differs_from_the_error():
    sig = {"kind": "exception_line", "exception": "TypeError", "message": "Object of type set is not JSON serializable"}
    differs = "Your error says \u201cset\u201d where this entry's says \u201cTensor\u201d: the same wording may be another failure."
    entry = {
        "title": "Object of type Tensor",
        "url": "http://x/kb/entries/1/",
        "score": 0.4,
        "remedy_markdown": "Cast it.",
    }
    older_entry = {**entry, "title": "Another"}  # an older server sends no differences

    possible = fixbase_ci.summary_markdown(
        {"verdict": "possible", "matches": [{**entry, "differences": [differs]}, older_entry], "signature": sig},
        "http://x",
    )
    match = fixbase_ci.summary_markdown(
        {"verdict": "match", "matches": [{**entry, "differences": [differs]}], "signature": sig}, "http://x"
    )

    assert f"(score 0.40)\n  - {differs}\n- [Another]" in possible
    assert f"### Known issue: [Object of type Tensor](http://x/kb/entries/1/)\n\n> {differs}\n\nCast it." in match


def test_the_summary_carries_the_servers_notes_on_how_it_read_the_log():
    sig = {"kind": "truncated_traceback", "label": "Root error", "message": ""}
    note = "The traceback stops before its last line, the exception that says what failed."

    text = fixbase_ci.summary_markdown({"verdict": "no_match", "matches": [], "signature": sig, "notes": [note]}, "x")
    older = fixbase_ci.summary_markdown({"verdict": "no_match", "matches": [], "signature": sig}, "x")  # no notes

    assert f"\n\n> ⚠ {note}\n\n### No known match" in text
    assert "⚠" not in older
