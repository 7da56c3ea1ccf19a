"""End to end in a real browser: `streamlit run app.py` driven by headless Chromium.

Loads the sample, runs a tiny warm-up from the Warm-up page, opens every page, moves
the p slider; saves a screenshot of each page under artifacts/screenshots/ and the
page-switch and slider timings in artifacts/timings.json. Needs Debian's chromium
(/usr/bin/chromium) and Playwright's Python package; skipped without them (no
browser is ever downloaded).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"
SHOTS = ARTIFACTS / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
PAGES = [("Warm-up", "warmup"), ("Memorization", "memorization"), ("Dynamics", "dynamics"),
         ("Tune & prune", "tune"), ("Compare", "compare"), ("Report", "report")]

#: optional: a finished run folder to time page switches and slider moves on (e.g. Adult size)
BENCH_ENV = "MEMVIZ_BROWSER_BENCH_RUN"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    runs = tmp_path_factory.mktemp("browser_runs")
    port = _free_port()
    log = open(runs / "server.log", "wb")
    env = dict(os.environ, MEMVIZ_RUNS=str(runs))
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
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
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("streamlit did not start:\n" + (runs / "server.log").read_text()[-2000:])
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


def _idle(page, timeout=120_000) -> None:
    """Wait until the script run is over (Streamlit's 'Running' status widget is gone)."""
    page.wait_for_timeout(150)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=timeout)


def _no_exception(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0, page.locator(
        "[data-testid='stException']").first.inner_text()


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _goto(page, title: str) -> float:
    """Click a page in the sidebar navigation; seconds until its script run is over."""
    t0 = time.perf_counter()
    page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
    page.locator("h1").filter(has_text=title).first.wait_for(timeout=60_000)
    _idle(page)
    return time.perf_counter() - t0


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text().strip()


def _bench(page, url: str, runs: Path, run: Path) -> dict:
    """Page-switch and slider timings on another finished run (copied into the runs root)."""
    shutil.copytree(run, runs / run.name)
    out: dict = {"run": run.name, "page_switch_seconds": {}, "slider_seconds": []}
    page.goto(f"{url}/?run={run.name}", timeout=120_000)
    page.get_by_text("Bundled sample", exact=False).first.wait_for(timeout=120_000)
    _idle(page)
    for rep in ("first", "again"):
        for title, _ in PAGES:
            out["page_switch_seconds"][f"{title} ({rep})"] = _goto(page, title)
            _no_exception(page)
            if rep == "first":
                _shot(page, f"bench_{title.split()[0].lower()}")
    _goto(page, "Tune & prune")
    slider = page.get_by_role("slider").first
    for _ in range(3):
        before = _metric(page, "rows that would go")
        t0 = time.perf_counter()
        slider.focus()
        slider.press("ArrowRight")
        deadline = time.monotonic() + 60
        while _metric(page, "rows that would go") == before and time.monotonic() < deadline:
            page.wait_for_timeout(20)
        _idle(page)
        out["slider_seconds"].append(time.perf_counter() - t0)
    return out


def test_dashboard_end_to_end(server):
    from playwright.sync_api import sync_playwright

    url, runs = server
    timings: dict = {"page_switch_seconds": {}, "slider_seconds": [], "notes": "sample data (3,000 rows)"}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            # a deep link as the server's very first request still goes through the router
            page.goto(url + "/report", timeout=120_000)
            page.locator("h1").filter(has_text="Report").first.wait_for(timeout=120_000)
            _idle(page)
            nav = page.locator("[data-testid='stSidebarNav'] a")
            assert nav.count() == len(PAGES) + 1, nav.all_inner_texts()
            assert "training rows" in page.locator("[data-testid='stSidebar']").inner_text()
            t0 = time.perf_counter()
            page.goto(url, timeout=120_000)
            page.get_by_text("Bundled sample", exact=False).first.wait_for(timeout=120_000)
            _idle(page)
            timings["first_load_seconds"] = time.perf_counter() - t0
            page.get_by_text("Bundled sample", exact=False).first.click()  # load the sample
            _idle(page)
            _no_exception(page)
            assert "3,000 training rows" in page.locator("[data-testid='stSidebar']").inner_text()
            _shot(page, "1_data")

            # a tiny warm-up from the Warm-up page
            timings["page_switch_seconds"]["Warm-up (no run)"] = _goto(page, "Warm-up")
            for label, value in (("Epochs", "2"), ("Check every (epochs)", "1"),
                                 ("Generated rows per check (0 = as many as training rows)", "300")):
                box = page.get_by_label(label, exact=True)
                box.fill(value)
                box.press("Tab")
            t_run = time.perf_counter()
            page.get_by_role("button", name="Start warm-up").click()
            page.get_by_text(re.compile(r"finished · 2 checks")).first.wait_for(timeout=600_000)
            _idle(page)
            timings["warmup_seconds"] = time.perf_counter() - t_run
            _no_exception(page)
            _shot(page, "2_warmup")

            for i, (title, name) in enumerate(PAGES[1:], start=3):
                timings["page_switch_seconds"][title] = _goto(page, title)
                _no_exception(page)
                if title in ("Memorization", "Dynamics", "Tune & prune"):
                    # figures render after the script finishes: wait for them, then count
                    try:
                        page.locator(".js-plotly-plot").nth(1).wait_for(timeout=120_000)
                    except Exception:
                        _shot(page, f"FAILED_{name}")
                        raise AssertionError(f"{title}: no figures (see {SHOTS}/FAILED_{name}.png)") from None
                    assert page.locator(".js-plotly-plot").count() >= 2
                if title == "Tune & prune":
                    before = _metric(page, "rows that would go")
                    assert before == "300"
                    slider = page.get_by_role("slider").first
                    for expected in ("330", "360", "390"):
                        t0 = time.perf_counter()
                        slider.focus()
                        slider.press("ArrowRight")
                        page.locator("[data-testid='stMetric']").filter(has_text="rows that would go").get_by_text(
                            expected, exact=True).wait_for(timeout=60_000)
                        _idle(page)
                        timings["slider_seconds"].append(time.perf_counter() - t0)
                    _no_exception(page)
                _shot(page, f"{i}_{name}")
            # back to a page already seen: warm caches
            timings["page_switch_seconds"]["Memorization (again)"] = _goto(page, "Memorization")
            bench = os.environ.get(BENCH_ENV)
            if bench:  # the same on a bigger finished run (e.g. Adult size), given by path
                timings["bench"] = _bench(page, url, runs, Path(bench))
        finally:
            browser.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timings.json").write_text(json.dumps(timings, indent=1))
    assert len(list(runs.glob("*-warmup-*/manifest.json"))) == 1  # the warm-up started from the page
    assert sorted(p.name for p in SHOTS.glob("*.png")) >= ["1_data.png", "2_warmup.png"]
