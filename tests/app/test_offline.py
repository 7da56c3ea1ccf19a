"""No request leaves the machine: the dashboard (served with the repository's
.streamlit/config.toml, nothing overridden on the command line) and the HTML report, loaded in
headless Chromium with every request logged and every non-local one blocked.

On today's main (dd9d899) every page load fetched the favicon
``https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/search/default/24px.svg``
(app.py's ``page_icon=":material/search:"``; Streamlit's frontend builds that URL for any
``:material/...`` page icon). Needs /usr/bin/chromium and Playwright's Python package.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from dash_helpers import copier_run
from helpers import CHROMIUM, CHROMIUM_ARGS, need_browser, serve_dashboard

from memviz.app import reports
from memviz.app import runs as app_runs

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["Data", "Warm-up", "Memorization", "Dynamics", "Tune & prune", "Compare", "Report"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory, sample):
    """``streamlit run app.py`` on a runs root holding one finished run (``copier``)."""
    need_browser()
    runs = tmp_path_factory.mktemp("offline_runs")
    copier_run(sample[0].subset(sample[0].row_ids[:120]), runs / "copier")
    with serve_dashboard(runs) as url:
        yield url, runs


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
    from playwright.sync_api import sync_playwright  # lazy: playwright is optional (browser tests only)

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
                    page.locator(".js-plotly-plot >> visible=true").first.wait_for(timeout=120_000)
            page.wait_for_timeout(2000)  # late requests (favicon, fonts, telemetry)
            page.goto(report.as_uri())
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            page.wait_for_timeout(2000)
        finally:
            browser.close()
    assert outside == [], outside
