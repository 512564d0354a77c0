"""The paste page in a real Chromium: results swap in without a reload."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ingest.services import document_process, document_submit_path
from tests.conftest import ROOT, require

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CHROMIUM = Path(os.environ.get("FIXBASE_CHROMIUM", "/usr/bin/chromium"))
SM120 = (
    "(WorkerDict pid=4242) RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "CUDA kernel errors might be asynchronously reported at some other API call.\n"
)


@pytest.fixture
def page(live_server):  # type: ignore[no-untyped-def]
    require(CHROMIUM.exists(), f"{CHROMIUM} is missing (run scripts/ensure-chromium.sh)")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        page = browser.new_page()
        page.goto(live_server.url + "/")
        yield page
        browser.close()


def test_pasting_a_traceback_swaps_in_the_known_fix_without_reloading(page):
    page.evaluate("window.__marker = 'still here'")
    page.fill("#log", SM120)
    page.click("#triage-button")
    page.wait_for_selector("#verdict", timeout=15000)
    assert page.evaluate("window.__marker") == "still here"  # no navigation: htmx swapped the partial
    assert "Known issue" in page.inner_text("#verdict")
    first = page.locator("section.match").first
    assert "no kernel image" in first.inner_text()
    assert "sm_120" in first.inner_text()


def test_empty_paste_shows_the_error_in_place(page):
    page.evaluate("document.querySelector('#log').removeAttribute('required')")
    page.evaluate("window.__marker = 1")
    page.click("#triage-button")
    page.wait_for_selector("[role=alert]", timeout=15000)
    assert "empty" in page.inner_text("[role=alert]")
    assert page.evaluate("window.__marker") == 1
