"""Issue 51 in Chromium, on a first start with the bundled demo (items 1-3): the pages have a finished run to show
at once; a Tune & prune move reruns the page alone (the sidebar is not redrawn); the Audit page's example is one
click away, and a new audit hides the previous verdict while it runs. Every wait is for a state (helpers.WAIT_MS).
"""
from __future__ import annotations

import pytest
from helpers import WAIT_MS, drawn, goto, launch_chromium, need_browser, no_exception, serve_dashboard

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: records, from now on, every element of the sidebar that a script run marks stale (about to be redrawn)
WATCH_SIDEBAR = """() => {
  window.__sidebarStale = 0;
  const side = document.querySelector("[data-testid='stSidebar']");
  new MutationObserver(ms => { for (const m of ms) if (m.target.getAttribute && m.target.getAttribute('data-stale')
      === 'true') window.__sidebarStale += 1; })
    .observe(side, {subtree: true, attributes: true, attributeFilter: ['data-stale']});
}"""


def test_a_first_start_shows_the_demo_and_redraws_only_the_page(tmp_path, monkeypatch):
    need_browser()
    from playwright.sync_api import sync_playwright  # lazy: playwright is optional (browser tests only)

    monkeypatch.setenv("MEMVIZ_DEMO", "1")
    root = tmp_path / "runs"
    root.mkdir()
    with serve_dashboard(root, "--server.headless", "true") as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.goto(url, timeout=WAIT_MS)
            page.locator("h1").filter(has_text="Data").first.wait_for(timeout=WAIT_MS)
            drawn(page)
            side = page.locator("[data-testid='stSidebar']")
            side.get_by_text("finished").first.wait_for(timeout=WAIT_MS)          # the demo run, picked
            for title in ("Memorization", "Dynamics", "Compare"):
                goto(page, title)
                drawn(page)
                no_exception(page)
                assert page.locator("[data-testid='stPlotlyChart']").count() >= 1, title
            goto(page, "Tune & prune")
            drawn(page)
            page.evaluate(WATCH_SIDEBAR)
            box = page.locator("[data-testid='stMetric']").filter(has_text="rows that would go").first
            before = box.locator("[data-testid='stMetricValue']").inner_text()
            slider = page.get_by_role("slider").first
            slider.focus()
            slider.press("ArrowRight")
            page.wait_for_function("""([before]) => {
                const box = [...document.querySelectorAll("[data-testid='stMetric']")]
                    .find(b => b.innerText.includes('rows that would go'));
                return box && box.querySelector("[data-testid='stMetricValue']").innerText !== before;
            }""", arg=[before], timeout=WAIT_MS)
            drawn(page)
            assert page.evaluate("window.__sidebarStale") == 0          # the page reran, not the app

            # the officer's path: the example, then another distance: the old verdict is gone while it runs
            goto(page, "Audit a synthetic table")
            page.get_by_role("button", name="Try the example").click()
            headline = page.locator(".st-key-audit_headline")
            headline.wait_for(timeout=WAIT_MS)
            drawn(page)
            assert "copies" in headline.inner_text().lower() or "copied" in headline.inner_text().lower()
            page.locator(".st-key-audit_distance").get_by_text("the standardized distance", exact=False).click()
            page.get_by_text("A new audit runs").first.wait_for(timeout=WAIT_MS)
            assert headline.count() == 0                                # never beside the running audit
            headline.wait_for(timeout=WAIT_MS)
            drawn(page)
            no_exception(page)
            # a reload keeps the files (they were lost)
            page.reload()
            page.locator(".st-key-audit_headline").wait_for(timeout=WAIT_MS)
            no_exception(page)
        finally:
            browser.close()
