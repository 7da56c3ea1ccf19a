"""The Audit page in a real browser gives what `memviz audit` prints for the same files.

Headless Chromium uploads a training table, a hold-out and an external synthetic table (the
sample's test rows with 10 % of them replaced by planted copies of training rows) with its
meta.json to ``streamlit run app.py``, and reads the floor, the excess and the verdict sentence
the page shows; the CLI audits the same files in a subprocess. Needs /usr/bin/chromium and
Playwright's Python package (skipped without them).
"""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, need_browser, serve_dashboard, settled
from unseen import credit_table, independent_columns, with_copies

from memviz.app.datasets import raw_from_upload
from memviz.tables.schema import Schema
from memviz.text import pct

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
PLANTED_SHARE = 0.10
#: numerical columns of the sample that the SDV metadata of the Data page's test calls categorical
CATEGORICAL_IN_SDV = ("age", "hours-per-week")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def planted_files(folder: Path) -> dict[str, Path]:
    """train.csv (the sample's 3,000 rows), holdout.csv (500 test rows), synthetic.csv (the other 500
    test rows, 10 % of them replaced by exact copies of 10 seeded training rows, 5 each) and meta.json."""
    train = pd.read_csv(SAMPLE / "train.csv")
    test = pd.read_csv(SAMPLE / "test.csv")
    rng = np.random.default_rng(7)
    synthetic = test.iloc[500:].reset_index(drop=True)
    n = int(round(PLANTED_SHARE * len(synthetic)))                  # 50 copies: 10 training rows, 5 each
    where = rng.choice(len(synthetic), size=n, replace=False)
    sources = np.repeat(rng.choice(len(train), size=n // 5, replace=False), 5)
    synthetic.iloc[where] = train.iloc[sources].to_numpy()
    paths = {"train": folder / "train.csv", "holdout": folder / "holdout.csv",
             "synthetic": folder / "generator output.csv", "schema": folder / "meta.json"}
    train.to_csv(paths["train"], index=False)
    test.iloc[:500].to_csv(paths["holdout"], index=False)
    synthetic.to_csv(paths["synthetic"], index=False)
    paths["schema"].write_bytes((SAMPLE / "meta.json").read_bytes())
    return paths


def cli_audit(paths: dict[str, Path], out: Path) -> tuple[dict, dict]:
    """`memviz audit` on the files: (its last stdout line, its audit.json)."""
    proc = subprocess.run([sys.executable, "-m", "memviz", "audit", "--train", str(paths["train"]),
                           "--synthetic", str(paths["synthetic"]), "--holdout", str(paths["holdout"]),
                           "--schema", str(paths["schema"]), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), json.loads((out / "audit.json").read_text())


def _idle(page, timeout=WAIT_MS) -> None:
    settled(page, timeout)


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text().strip()


@contextlib.contextmanager
def audit_page(tmp_path: Path):
    """The Audit page of a dashboard served on an empty runs root, in headless Chromium."""
    from playwright.sync_api import sync_playwright  # lazy: playwright is optional (browser tests only)

    runs = tmp_path / "runs"
    runs.mkdir()
    with serve_dashboard(runs, "--server.headless", "true", "--browser.gatherUsageStats", "false") as url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
            page.goto(url + "/audit", timeout=WAIT_MS)
            page.locator("h1").filter(has_text="Audit a synthetic table").first.wait_for(timeout=WAIT_MS)
            _idle(page)
            yield page
        finally:
            browser.close()


def upload(page, paths: dict[str, Path]):
    """Each file of ``paths`` into the Audit page's uploader of the same key (its widget key), in order; then
    the audit's headline, once the page has settled."""
    for key, path in paths.items():
        box = page.locator(f".st-key-audit_{key} input[type='file']")
        box.wait_for(state="attached", timeout=WAIT_MS)
        box.set_input_files(str(path))
        page.locator(f".st-key-audit_{key}").get_by_text(path.name, exact=True).wait_for(timeout=WAIT_MS)
        _idle(page)
    head = page.locator(".st-key-audit_headline")
    head.wait_for(timeout=WAIT_MS)
    _idle(page)
    return head


def _shows(page, selector: str, text: str, timeout=WAIT_MS) -> None:
    """Wait until the element at ``selector`` holds ``text`` (whitespace runs read as one space) and no element of
    an earlier script run is left on the page; on timeout return, so that the caller's assertion says what is
    shown. The uploader lists a file's name before the script run that reads it has started, so an idle page
    after the last upload can still show the previous run's audit (the schema not yet read: its verdict names
    the data-copying test, the CLI's does not)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # lazy: playwright is optional

    try:
        page.wait_for_function(
            "([sel, want]) => { const e = document.querySelector(sel);"
            " return !!e && e.innerText.replace(/\\s+/g, ' ').includes(want)"
            " && !document.querySelector(\"[data-stale='true']\")"
            " && !document.querySelector(\"[data-testid='stStatusWidget']\"); }",
            arg=[selector, " ".join(text.split())], timeout=timeout)
    except PlaywrightTimeout:
        pass


def test_the_audit_page_shows_what_the_cli_prints(tmp_path):
    need_browser()
    paths = planted_files(tmp_path)
    line, cli = cli_audit(paths, tmp_path / "cli")
    ratio = cli["ratio_test"]
    assert cli["n_over_copied"] >= 1 and ratio["excess_ci"][0] > 0    # the planted copies are seen
    with audit_page(tmp_path) as page:
        head = upload(page, paths)                                  # train, hold-out, synthetic, schema
        _shows(page, ".st-key-audit_headline", cli["verdict"]["sentence"])
        assert page.locator("[data-testid='stException']").count() == 0
        shown = head.inner_text()
        assert cli["verdict"]["sentence"] in " ".join(shown.split()), shown
        assert _metric(page, "floor: real rows never seen") == pct(ratio["floor"])  # the one formatter
        assert _metric(page, "above the floor (excess)") == f"{100 * ratio['excess']:+.1f} points"
        assert line["verdict"]["sentence"] == cli["verdict"]["sentence"]
        # the page's audit.json holds the CLI's numbers, not only their rounding
        with page.expect_download(timeout=WAIT_MS) as dl:
            page.get_by_role("button", name="audit.json").click()
        got = json.loads(Path(dl.value.path()).read_text())
        for key in ("mem_ratio", "floor", "excess", "copy_share"):
            assert got["ratio_test"][key] == pytest.approx(ratio[key], rel=1e-12, abs=1e-15), key
        for key in ("n_over_copied", "identical_share"):
            assert got[key] == pytest.approx(cli[key], rel=1e-12, abs=1e-15), key
        assert got["findings"] == cli["findings"]
        assert got["verdict"] == cli["verdict"]
        assert got["provenance"]["fingerprints"] == cli["provenance"]["fingerprints"]
        page.screenshot(path=str(tmp_path / "audit_page.png"), full_page=True)
        _data_page_reads_sdv_metadata(page, paths, tmp_path)


def _data_page_reads_sdv_metadata(page, paths: dict[str, Path], tmp: Path) -> None:
    """The Data page: an SDV metadata upload replaces the inferred schema (here: 'age' and
    'hours-per-week' categorical, an identifier column left out), with the target picked on the page."""
    schema = Schema.load(paths["schema"])
    frame = pd.read_csv(paths["train"]).assign(person=lambda d: np.arange(len(d)))
    frame.to_csv(tmp / "people.csv", index=False)
    sdv = {"METADATA_SPEC_VERSION": "V1", "tables": {"people": {"columns": {
        **{c: {"sdtype": "numerical"} for c in schema.numerical if c not in CATEGORICAL_IN_SDV},
        **{c: {"sdtype": "categorical"} for c in (*schema.categorical, *CATEGORICAL_IN_SDV, schema.target)},
        "person": {"sdtype": "id"}}}}}
    (tmp / "sdv.json").write_text(json.dumps(sdv))
    page.locator("[data-testid='stSidebarNav']").get_by_text("Data", exact=True).click()
    page.get_by_text("Upload a CSV or Parquet file", exact=True).click()
    _idle(page)
    page.locator(".st-key-upload_train input[type='file']").set_input_files(str(tmp / "people.csv"))
    box = page.locator("[class*='st-key-upload_schema_'] input[type='file']")
    box.wait_for(state="attached", timeout=WAIT_MS)
    _idle(page)
    inferred = raw_from_upload("people.csv", (tmp / "people.csv").read_bytes()).schema
    assert _metric(page, "numerical") == str(len(inferred.numerical))
    box.set_input_files(str(tmp / "sdv.json"))
    page.get_by_text("person (id) is the row key", exact=False).first.wait_for(timeout=WAIT_MS)
    _idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert _metric(page, "numerical") == str(len(schema.numerical) - 2) != str(len(inferred.numerical))
    # the target and the row key are said in text that wraps (a metric cut 'rownames' to 'rowna…')
    said = " ".join(page.locator("[data-testid='stMain']").inner_text().split())
    assert f"Target: {schema.target} · Row key: person" in said, said[:2000]


def test_the_audit_page_shows_a_new_tables_key_and_asks_for_its_target(tmp_path):
    """Issue 42: a credit table (an integer key with gaps, a label named Status, no schema file) on the Audit page
    in a browser: the schema it read says the key is left out and names the rows, the target is the table's
    suggestion and can be changed, and the files and result stay after a visit to another page."""
    need_browser()

    df = credit_table(1500, seed=4)
    train, hold = df.iloc[:1000].reset_index(drop=True), df.iloc[1000:].reset_index(drop=True)
    syn, _ = with_copies(independent_columns(train.drop(columns="rownames"), 500, seed=1),
                         train.drop(columns="rownames"), 10, 10, seed=2)
    syn.insert(0, "rownames", np.arange(len(syn)) + 10**6)
    paths = {"train": tmp_path / "credit_train.csv", "holdout": tmp_path / "credit_holdout.csv",
             "synthetic": tmp_path / "credit_synthetic.csv"}
    for key, frame in (("train", train), ("holdout", hold), ("synthetic", syn)):
        frame.to_csv(paths[key], index=False)
    with audit_page(tmp_path) as page:
        upload(page, paths)
        expander = page.locator("[data-testid='stExpander']").filter(has_text="Schema read from")
        expander.get_by_text("target Status").first.wait_for(timeout=WAIT_MS)
        expander.get_by_text("Schema read from", exact=False).first.click()
        expander.get_by_text("Row key: rownames", exact=False).first.wait_for(timeout=WAIT_MS)
        assert "names the rows" in expander.inner_text() and "Target: Status" in expander.inner_text()
        # the user's own target
        expander.locator(".st-key-audit_target").click()
        page.get_by_role("option", name="Home", exact=True).click()
        _idle(page)
        page.locator("[data-testid='stExpander']").filter(has_text="target Home").first.wait_for(timeout=WAIT_MS)
        # another page and back: the files, the target and the result are kept
        page.locator("[data-testid='stSidebarNav']").get_by_text("Data", exact=True).click()
        page.locator("h1").filter(has_text="Data").first.wait_for(timeout=WAIT_MS)
        _idle(page)
        page.locator("[data-testid='stSidebarNav']").get_by_text("Audit a synthetic table", exact=True).click()
        page.locator(".st-key-audit_headline").wait_for(timeout=WAIT_MS)
        _idle(page)
        assert page.get_by_text("earlier in this session", exact=False).count() >= 1
        page.locator("[data-testid='stExpander']").filter(has_text="target Home").first.wait_for(timeout=WAIT_MS)
        assert page.locator("[data-testid='stException']").count() == 0
