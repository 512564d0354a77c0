"""The wiki in a real Chromium: log in, paste, feedback, edit/history/revert, merge/unmerge,
upload with live progress, and the narrow layout. Screenshots go to docs/screenshots/ when
FIXBASE_SCREENSHOTS=1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connections

from ingest.services import document_process, document_submit_path
from kb.models import Entry, Merge
from tests.conftest import ROOT, make_user, require

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CHROMIUM = Path(os.environ.get("FIXBASE_CHROMIUM", "/usr/bin/chromium"))
SHOTS = ROOT / "docs" / "screenshots"
SM120 = (
    "(WorkerDict pid=4242) RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "CUDA kernel errors might be asynchronously reported at some other API call.\n"
)


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    if os.environ.get("FIXBASE_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.fixture
def browser(live_server):  # type: ignore[no-untyped-def]
    require(CHROMIUM.exists(), f"{CHROMIUM} is missing (run scripts/ensure-chromium.sh)")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    make_user("edith", editor=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        yield browser
        browser.close()
        # The test's own queries ran while Playwright's greenlet was active, which Django's
        # context-local connections count as another context with a connection of its own: closed
        # here, or it would still hold the test database when the suite drops it.
        connections.close_all()


def logged_in(browser, live_server, width: int = 1366):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.errors = errors
    page.goto(live_server.url + "/")
    assert "/accounts/login/" in page.url  # nothing is open without an account
    shot(page, "login") if width > 1000 else None
    page.fill("#id_username", "edith")
    page.fill("#id_password", "pw-edith")
    page.click("#login-button")
    page.wait_for_selector("#log")
    return page


@pytest.fixture
def page(browser, live_server):  # type: ignore[no-untyped-def]
    return logged_in(browser, live_server)


def test_paste_after_login_swaps_in_the_known_fix_without_reloading(page):
    page.evaluate("window.__marker = 'still here'")
    page.fill("#log", SM120)
    page.click("#triage-button")
    page.wait_for_selector("#verdict", timeout=15000)
    assert page.evaluate("window.__marker") == "still here"  # no navigation: htmx swapped the partial
    assert "Known issue" in page.inner_text("#verdict")
    assert page.evaluate("document.activeElement.id") == "verdict"  # focus moved to the answer
    assert page.get_attribute("#results", "aria-live") == "polite"
    first = page.locator("section.match").first
    assert "no kernel image" in first.inner_text() and "sm_120" in first.inner_text()
    shot(page, "triage")
    assert not [e for e in page.errors if "Content Security Policy" in e]  # nothing blocked by the CSP


def test_a_match_opens_the_lines_of_the_document_it_was_seen_in(page):
    page.fill("#log", SM120)
    page.click("#triage-button")
    page.wait_for_selector("#verdict", timeout=15000)
    link = page.locator("section.match").first.locator("a[href*='/lines/']").first
    label = link.inner_text()  # "<file> lines <start>–<end>"
    link.click()
    page.wait_for_selector("table.doc-lines")
    start, end = (int(n) for n in label.rsplit(" ", 1)[-1].split("–"))
    highlighted = page.locator("tr.hl")
    assert highlighted.count() == end - start + 1
    assert highlighted.first.get_attribute("id") == f"L{start}"
    assert "no kernel image" in page.locator("table.doc-lines").inner_text()


def test_empty_paste_shows_the_error_in_place(page):
    page.evaluate("document.querySelector('#log').removeAttribute('required')")
    page.evaluate("window.__marker = 1")
    page.click("#triage-button")
    page.wait_for_selector("[role=alert]", timeout=15000)
    assert "empty" in page.inner_text("[role=alert]")
    assert page.evaluate("window.__marker") == 1


def test_didnt_help_changes_the_answer(page):
    page.fill("#log", SM120)
    page.click("#triage-button")
    page.wait_for_selector("#verdict")
    assert "Known issue" in page.inner_text("#verdict")
    page.locator("section.match").first.locator("button[value='0']").click()
    page.wait_for_selector("text=it will rank lower")
    page.click("#triage-button")
    from playwright.sync_api import expect

    # The same failure is answered again: the entry is no longer presented as the fix.
    expect(page.locator("#verdict")).not_to_contain_text("Known issue", timeout=15000)


def test_a_needs_a_fix_entry_given_a_remedy_is_the_next_answer(page, live_server):
    zmq = "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5555')"
    page.fill("#log", zmq)
    page.click("#triage-button")
    page.wait_for_selector("#verdict >> text=No known match")
    page.click("text=Add this log as a new")
    page.wait_for_selector("text=No fix recorded yet")
    page.click("text=Add the fix")
    page.fill("#remedy", "Another trainer on this node holds port 5555: stop it or set a free port.")
    page.click("text=Save")
    page.wait_for_selector("text=holds port 5555")
    page.goto(live_server.url + "/")
    page.fill("#log", zmq)
    page.click("#triage-button")
    page.wait_for_selector("#verdict")
    assert "Known issue" in page.inner_text("#verdict")
    assert "holds port 5555" in page.locator("section.match").first.inner_text()


def test_edit_then_history_then_revert(page, live_server):
    entry = Entry.objects.get(title__contains="no kernel image")
    original = entry.remedy_markdown
    page.goto(f"{live_server.url}/kb/entries/{entry.pk}/edit/")
    page.fill("#remedy", "Just reboot.")
    page.click("text=Save")
    page.wait_for_selector("text=Just reboot.")
    page.click("text=History")
    page.wait_for_selector("pre.diff")
    assert "edith" in page.inner_text("main")
    shot(page, "history")
    page.locator("section.revision").last.locator("button").click()
    page.wait_for_selector("text=reverted to the revision")
    entry.refresh_from_db()
    assert entry.remedy_markdown == original


def test_merge_by_search_then_undo(page, live_server):
    target = Entry.objects.get(title__contains="no kernel image")
    source = Entry.objects.exclude(pk=target.pk).order_by("pk").first()
    page.goto(f"{live_server.url}/kb/entries/{target.pk}/")
    page.click("text=Merge a duplicate into this")
    page.fill("#merge-q", source.title.split()[0])
    page.wait_for_selector(f"a[href='?source={source.pk}']")
    page.click(f"a[href='?source={source.pk}']")
    page.wait_for_selector("#confirm-merge")
    shot(page, "merge-preview")
    page.click("#confirm-merge")
    page.wait_for_selector("#merges")
    assert not Entry.objects.filter(pk=source.pk).exists()
    page.click("text=Undo merge")
    page.wait_for_selector(f"text={source.title[:40]}")
    assert Entry.objects.filter(pk=source.pk).exists() and Merge.objects.get().undone_at is not None


def test_upload_shows_live_progress_until_done(page, live_server, settings, tmp_path):
    from bench.gen_log import write_log

    settings.FIXBASE_INGEST_IN_THREAD = True
    log = tmp_path / "job.log"
    write_log(log, 40 * 1024 * 1024)  # large enough to be seen while it runs
    page.goto(f"{live_server.url}/upload/")
    page.set_input_files("input[type=file]", str(log))
    page.click("#upload-button")
    page.wait_for_selector("#doc-status", timeout=120000)
    seen = page.inner_text("#doc-status")
    assert "queued" in seen or "processing" in seen  # the upload returned before the ingest ended
    page.wait_for_selector("#doc-status >> text=done", timeout=120000)
    assert "refreshing" not in page.inner_text("#doc-status")
    assert page.locator("#doc-status a[href^='/kb/entries/']").count() > 0  # it became entries
    shot(page, "upload-done")


def test_an_uploaded_transcript_becomes_entries(page, live_server, settings):
    from tests.conftest import SM120_SAMPLE, shared_sample

    settings.FIXBASE_INGEST_IN_THREAD = True
    page.goto(f"{live_server.url}/upload/")
    page.set_input_files("input[type=file]", str(shared_sample(SM120_SAMPLE)))
    page.click("#upload-button")
    page.wait_for_selector("#doc-status >> text=done", timeout=120000)
    assert "specstory" in page.inner_text("#doc-status")
    entries = page.locator("#doc-status a[href^='/kb/entries/']")
    assert entries.count() >= 1
    assert "no kernel image" in page.inner_text("#doc-status")


@pytest.mark.parametrize("width", [400, 1366])
def test_pages_fit_the_window(browser, live_server, width):
    page = logged_in(browser, live_server, width)
    page.fill("#log", SM120)
    page.click("#triage-button")
    page.wait_for_selector("#verdict")
    entry = Entry.objects.get(title__contains="no kernel image")
    for path in ("/", "/kb/", f"/kb/entries/{entry.pk}/"):
        if path != "/":
            page.goto(live_server.url + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at {width}px"
        if width == 400:
            shot(page, "narrow-" + (path.strip("/").replace("/", "-") or "triage").split("-")[0])
        elif path == "/kb/":
            shot(page, "knowledge-base")


def test_a_look_alike_says_beside_it_how_the_error_differs(page):
    from ingest.services import document_submit

    notes = "# Cast the grad norm to a float before saving\nTypeError: Object of type Tensor is not JSON serializable\n"
    document_process(document_submit("notes.md", [notes.encode()]).document.pk)
    page.fill("#log", "TypeError: Object of type set is not JSON serializable")
    page.click("#triage-button")
    page.wait_for_selector("#verdict", timeout=15000)
    differs = page.locator("section.match ul.differs").first
    assert differs.is_visible()  # said beside the entry, not folded away with "why it matched"
    assert "\u201cset\u201d" in differs.inner_text() and "\u201cTensor\u201d" in differs.inner_text()
    shot(page, "differences")
    assert not page.errors
