"""The site in a real browser (Debian's Chromium through Playwright): navigate from the Evals page to a job, a
run, its diff and transcript; hostile content must not run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from parts import CHROMIUM, needs
from report_data import JOB

from skillassay.report.serve import start
from skillassay.report.site import build_site

ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = needs(CHROMIUM.exists(), "Debian's chromium (apt-get install chromium)")


@pytest.fixture
def served_site(results_tree, definitions, tmp_path):
    out = tmp_path / "site"
    build_site(results_tree.root, out, definitions=definitions)
    server, thread = start(out, 0)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_navigate_evals_job_run_diff_transcript(served_site, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    dialogs: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("request", lambda r: requests.append(r.url))

            # the Evals page: scoring examples and definitions
            page.goto(f"{served_site}/index.html")
            expect(page.locator("h1")).to_have_text("Evals")
            examples = page.locator(".example .verdict")
            expect(examples).to_have_count(3)
            expect(examples.nth(1)).to_contain_text("70%")
            expect(examples.nth(1)).to_contain_text("scope_discipline, respects_policy")
            expect(examples.nth(2)).to_contain_text("fail (forbidden behaviour)")
            expect(page.locator("#eval-never-run")).to_contain_text("Not evaluated yet")
            page.screenshot(path=str(tmp_path / "evals.png"), full_page=True)

            # to the job
            page.locator("#results").locator("xpath=following-sibling::table[1]").get_by_role(
                "link", name=JOB
            ).click()
            expect(page.locator("h1")).to_have_text(f"Job {JOB}")
            expect(page.locator("svg").first).to_be_visible()
            expect(page.locator("#comparison")).to_be_visible()
            page.screenshot(path=str(tmp_path / "job.png"), full_page=True)

            # to a run (the hostile one)
            page.locator("table tr", has_text="express-ts").filter(has_text="skill").get_by_role(
                "link", name="run 1"
            ).first.click()
            expect(page.locator("h1")).to_contain_text("express-ts · run 1")
            expect(page.locator("p.verdict .badge")).to_have_text("pass")

            # its diff
            page.get_by_role("link", name="Diff", exact=True).click()
            assert page.url.endswith("#diff")
            expect(page.locator("code.diff-file").first).to_have_text("src/app.ts")
            expect(page.locator(".diff")).to_contain_text("</pre><script>alert(2)</script>")  # shown as text

            # its transcript: the timeline of tool calls
            page.get_by_role("link", name="Transcript", exact=True).click()
            timeline = page.locator("ol.timeline > li")
            expect(timeline).to_have_count(3)
            expect(timeline.nth(1).locator(".tool")).to_have_text("Bash")
            expect(timeline.nth(1).locator(".call-summary")).to_have_text("echo '<script>alert(1)</script>'")
            expect(page.locator(".final-message")).to_have_text("done <script>alert(1)</script>")

            # nothing ran: no dialog, no script element, no handler fired, nothing fetched from elsewhere
            page.wait_for_timeout(300)
            assert dialogs == []
            assert page.evaluate("document.querySelectorAll('script').length") == 0
            assert page.evaluate("document.querySelectorAll('.diff img').length") == 0
            assert page.evaluate("document.body.dataset.pwned === undefined")
            assert all(u.startswith(served_site) for u in requests), requests
            page.screenshot(path=str(tmp_path / "run.png"), full_page=True)
        finally:
            browser.close()
    for name in ("evals.png", "job.png", "run.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    keep = Path(__import__("os").environ.get("SKILLASSAY_KEEP_SCREENSHOTS", ""))
    if keep.name:
        keep.mkdir(parents=True, exist_ok=True)
        for name in ("evals.png", "job.png", "run.png"):
            shutil.copy(tmp_path / name, keep / name)
