"""Issue 48 item 5, in a real browser: a table whose key has gaps (``customer_id`` = 10 i + 7, shuffled) names
its rows by that key on the Audit page (the named rows) and on Memorization (the leak explorer), not by memviz's
positions. Needs /usr/bin/chromium and Playwright's Python package (skipped without them)."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dash_helpers import floored_run
from helpers import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, need_browser, serve_dashboard, settled

from memviz.tables.data import sample_data_dir, table_from_frame
from tests.app.test_audit_browser import upload

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SOURCES = [5, 77, 301, 555]


def keyed_files(folder: Path) -> tuple[dict[str, Path], pd.DataFrame]:
    """train.csv (800 Adult rows, the key first), holdout.csv (400), synthetic.csv (600 fresh rows but for 80
    verbatim copies of the training rows at :data:`SOURCES`, no key)."""
    rows = pd.concat([pd.read_csv(sample_data_dir() / f) for f in ("train.csv", "test.csv")], ignore_index=True)
    rows = rows.iloc[:1800].copy()
    rows.insert(0, "customer_id", np.random.default_rng(0).permutation(10 * np.arange(len(rows)) + 7))
    train, hold, fresh = rows.iloc[:800], rows.iloc[800:1200], rows.iloc[1200:]
    syn = fresh.drop(columns="customer_id").reset_index(drop=True)
    syn.iloc[:80] = train.drop(columns="customer_id").iloc[np.repeat(SOURCES, 20)].to_numpy()
    paths = {"train": folder / "train.csv", "holdout": folder / "holdout.csv", "synthetic": folder / "synthetic.csv"}
    train.to_csv(paths["train"], index=False)
    hold.to_csv(paths["holdout"], index=False)
    syn.to_csv(paths["synthetic"], index=False)
    return paths, train.reset_index(drop=True)


def grid_csv(page, header: str, timeout: float = 120_000) -> str:
    """The st.dataframe whose header holds ``header`` as its own toolbar's "Download as CSV" gives it: what the
    grid shows (the canvas draws its cells, so the DOM holds no text of them); "" when no visible grid has it."""
    grids = page.locator("[data-testid='stDataFrame']")
    grids.last.wait_for(timeout=timeout)
    for i in range(grids.count()):
        grid = grids.nth(i)
        if not grid.is_visible():
            continue
        grid.scroll_into_view_if_needed()
        grid.hover()
        button = grid.locator("button[aria-label='Download as CSV']")
        if button.count() == 0:
            button = page.locator("[data-testid='stElementToolbar'] button[aria-label='Download as CSV']").last
        with page.expect_download(timeout=timeout) as dl:
            button.click()
        text = Path(dl.value.path()).read_text(encoding="utf-8-sig")
        if header in text.splitlines()[0]:
            return text
    return ""


def keyed_run(root: Path, train: pd.DataFrame) -> None:
    """A stored run on the keyed table whose generated rows copy training rows 0..9, with a floor."""
    with pytest.warns(UserWarning):
        tr = table_from_frame(train.iloc[:300].reset_index(drop=True), target="income", source="train.csv")
    ho = table_from_frame(train.iloc[300:800].reset_index(drop=True), tr.schema, source="holdout.csv", role="test")
    floored_run(tr, ho, root / "keyed")


def test_named_rows_carry_the_users_key_in_the_browser(tmp_path):
    need_browser()
    from playwright.sync_api import sync_playwright  # lazy: playwright is optional (browser tests only)

    paths, train = keyed_files(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    keyed_run(runs, train)
    copied = {str(k) for k in train["customer_id"].iloc[SOURCES]}
    positions = {str(p) for p in SOURCES}
    with serve_dashboard(runs, "--server.headless", "true", "--browser.gatherUsageStats", "false") as url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
            page.add_init_script("delete window.showSaveFilePicker")       # the grid's CSV as a plain download
            # the Audit page: the named rows, raw values
            page.goto(url + "/audit", timeout=WAIT_MS)
            page.locator("h1").filter(has_text="Audit a synthetic table").first.wait_for(timeout=WAIT_MS)
            settled(page)
            upload(page, paths)
            page.locator("[data-testid='stCheckbox']").filter(has_text="Redact raw values").first.click()
            settled(page, 300_000)
            shown = grid_csv(page, "close copies")
            named = pd.read_csv(io.StringIO(shown))
            assert named.columns[0] == "customer_id" and "training row" not in named.columns, shown
            assert set(named["customer_id"].astype(str)) == copied, shown      # the user's keys, not positions
            assert not positions & set(named["customer_id"].astype(str)), shown
            # Memorization: the leak explorer's rows by key (the run copies training rows 0..9)
            page.goto(url + "/memorization?run=keyed", timeout=WAIT_MS)
            page.locator("h1").first.wait_for(timeout=WAIT_MS)
            settled(page, 300_000)
            page.locator("[data-testid='stCheckbox']").filter(has_text="Redact raw values").first.click()
            settled(page, 300_000)
            first_ten = {str(k) for k in train["customer_id"].iloc[:10]}
            heading = page.get_by_text(re.compile(r"Training row customer_id \d+ and")).first
            heading.wait_for(timeout=WAIT_MS)
            key = re.search(r"customer_id (\d+)", heading.inner_text()).group(1)
            assert key in first_ten, heading.inner_text()
            box = page.locator(".st-key-leak_row")                        # the picker of raw values
            inputs = box.locator("input")
            picker = box.inner_text() + " " + (inputs.first.input_value() if inputs.count() else "") + " " + \
                (inputs.first.get_attribute("aria-label") or "" if inputs.count() else "")
            assert f"customer_id {key}" in picker, box.inner_html()[:3000]
            ranked = grid_csv(page, "copies above expected")
            top = pd.read_csv(io.StringIO(ranked))
            assert top.columns[0] == "customer_id" and set(top["customer_id"].astype(str).head(5)) <= first_ten, ranked
            assert page.locator("[data-testid='stException']").count() == 0
        finally:
            browser.close()
