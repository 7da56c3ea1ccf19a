"""No request leaves the machine: the dashboard (served with the repository's
.streamlit/config.toml, nothing overridden on the command line) and the HTML report, loaded in
headless Chromium with every request logged and every non-local one blocked.

On today's main (dd9d899) every page load fetched the favicon
``https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/search/default/24px.svg``
(app.py's ``page_icon=":material/search:"``; Streamlit's frontend builds that URL for any
``:material/...`` page icon). Needs /usr/bin/chromium and Playwright's Python package.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from dash_helpers import copier_run

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
PAGES = ["Data", "Warm-up", "Memorization", "Dynamics", "Tune & prune", "Compare", "Report"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory, sample):
    """``streamlit run app.py`` on a runs root holding one finished run (``copier``)."""
    pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    runs = tmp_path_factory.mktemp("offline_runs")
    copier_run(sample[0].subset(sample[0].row_ids[:120]), runs / "copier")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(runs / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)],
                            cwd=ROOT, env=dict(os.environ, MEMVIZ_RUNS=str(runs)), stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (runs / "server.log").read_text()[-2000:]
            time.sleep(0.5)
        yield url, runs
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _browser(pw, local: tuple[str, ...]):
    """A page whose requests outside ``local`` are recorded and blocked."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    context = browser.new_context()
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(local):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    return browser, context.new_page(), outside


def _idle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=120_000)


def test_the_dashboard_and_the_report_request_nothing_outside(served, tmp_path):
    from playwright.sync_api import sync_playwright

    from memviz.app import reports
    from memviz.app import runs as app_runs

    url, root = served
    report = tmp_path / "report.html"
    report.write_text(reports.report_html(app_runs.load_run(root / "copier"), redacted=False), encoding="utf-8")
    with sync_playwright() as pw:
        browser, page, outside = _browser(pw, (url, "data:", "blob:", "file:"))
        try:
            page.goto(url + "/?run=copier", timeout=120_000)
            page.locator("[data-testid='stSidebarNav']").wait_for(timeout=120_000)
            _idle(page)
            for title in PAGES:
                page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
                _idle(page)
                if title == "Memorization":
                    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
            page.wait_for_timeout(2000)  # late requests (favicon, fonts, telemetry)
            page.goto(report.as_uri())
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            page.wait_for_timeout(2000)
        finally:
            browser.close()
    assert outside == [], outside
