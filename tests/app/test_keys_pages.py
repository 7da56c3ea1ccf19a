"""Issue 48 item 1 on the pages: a run on a table with an integer key with gaps (``customer_id`` = 10 i + 7,
shuffled: a row's key, its row_id and its position all differ) names its rows by that key on Memorization
(the leak explorer: its table, its row picker, its heading), Dynamics (the timeline's picker, the rows typed
by key, the figure) and Tune & prune (the rows that would go). The pages named them by memviz's row_id
("training row 1482" for the user's 1876), and Dynamics refused a real key ("Not a training row_id")."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from dash_helpers import N_COPIED, floored_run, open_page

from memviz.app import audits, datasets, reports
from memviz.app.runs import load_run
from memviz.jobs import control as jobs
from memviz.tables.data import sample_data_dir, table_from_frame

TIMEOUT = 120


def keyed(frame: pd.DataFrame, keys, role: str, schema=None):
    df = frame.reset_index(drop=True).copy()
    df.insert(0, "customer_id", keys)
    return table_from_frame(df, schema, source=f"{role}.csv", role=role, target=None if schema else "income")


@pytest.fixture(scope="module")
def keyed_root(tmp_path_factory, sample):
    """A copier run (it copies training rows 0..9) on 300 keyed sample rows, floored on 500 more."""
    root = tmp_path_factory.mktemp("keyed_runs")
    train, _ = sample
    rows = train.data.iloc[:800]
    keys = np.random.default_rng(3).permutation(10 * np.arange(800) + 7)
    with pytest.warns(UserWarning, match="'customer_id' identifies rows"):
        tr = keyed(rows.iloc[:300], keys[:300], "train")
    ho = keyed(rows.iloc[300:], keys[300:], "test", tr.schema)
    assert tr.key == "customer_id"
    floored_run(tr, ho, root / "keyed")
    return root, tr


@pytest.fixture
def page(keyed_root, monkeypatch):
    root, _ = keyed_root
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    return lambda name: open_page("keyed", f"screens/{name}.py", TIMEOUT)


def table_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_memorization_names_rows_by_the_key(page, keyed_root):
    _, tr = keyed_root
    copied = set(tr.keys.iloc[:N_COPIED])                   # the user's keys of the copied rows
    at = page("3_memorization")
    at.toggle(key="redact").set_value(False).run()
    assert not at.exception
    ranked = table_with(at, "customer_id")
    assert "training row" not in ranked.columns and "row_id" not in ranked.columns
    assert set(ranked["customer_id"].head(5)) <= copied
    pick = at.selectbox(key="leak_row")
    first = int(pick.value)
    assert pick.format_func(first) == f"customer_id {tr.keys.loc[first]}"
    heads = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown if "generated copies" in m.value]
    assert heads and f"customer_id {tr.keys.loc[first]}" in heads[0] and f"row {first} " not in heads[0]
    at.toggle(key="redact").set_value(True).run()           # redacted: the key hashed, as in the report
    hashed = table_with(at, "customer_id")["customer_id"].astype(str)
    assert hashed.str.startswith("key-").all() and not set(hashed) & {str(k) for k in copied}


def test_dynamics_takes_the_users_keys(page, keyed_root):
    _, tr = keyed_root
    at = page("4_dynamics")
    chooser = at.multiselect(key="timeline_rows")
    assert chooser.options[0].startswith("customer_id ")          # the picker shows the key
    key_a, key_b = tr.keys.iloc[150], tr.keys.iloc[250]     # rows outside the 10 copied ones
    assert key_a != 150 and key_b != 250
    at.text_input(key="timeline_more").set_value(f"{key_a}, {key_b}, 123456789").run()
    assert not at.exception
    warned = [w.value for w in at.warning]
    assert any("customer_id" in w for w in warned) and not any("row_id" in w for w in warned)
    told = " ".join(re.sub(r"\\(.)", r"\1", c.value) for c in [*at.markdown, *at.text])
    assert "123456789" in told and str(key_a) not in told.split("123456789")[0][-40:]
    fig = next(json.loads(el.proto.spec) for el in at.get("plotly_chart")
               if "timeline" in json.loads(el.proto.spec)["layout"]["title"]["text"].lower())
    labels = [str(y) for y in fig["data"][-1]["y"]]
    assert f"customer_id {key_a}" in labels and f"customer_id {key_b}" in labels


def test_tune_lists_the_rows_that_would_go_by_key(page, keyed_root):
    _, tr = keyed_root
    at = page("5_tune")
    at.toggle(key="tune_redact").set_value(False).run()
    assert not at.exception
    gone = table_with(at, "DynamicCut score")
    assert gone.columns[1] == "customer_id" and "Training row" not in gone.columns
    assert set(gone["customer_id"]) <= set(tr.keys)


def test_the_audit_pages_named_rows_carry_the_key(keyed_root):
    """The Audit page's named-rows table (memviz.app.audits.over_copied_table) listed row_ids."""
    root, tr = keyed_root
    a = audits.run_audit(load_run(root / "keyed"))
    shown = audits.over_copied_table(a, tr, redacted=False)
    assert shown.columns[0] == "customer_id" and "training row" not in shown.columns
    assert len(shown) and set(shown["customer_id"]) <= set(tr.keys.iloc[:N_COPIED])
    hashed = audits.over_copied_table(a, tr, redacted=True)["customer_id"]
    assert hashed.str.startswith("key-").all()
    csv = pd.read_csv(__import__("io").BytesIO(audits.rows_csv(a, tr)))
    assert csv.columns[0] == "customer_id" and "row_id" not in csv.columns


def test_the_run_report_names_rows_by_the_key(keyed_root):
    """The Report page's HTML (memviz.app.reports.report_html): its leak views and named rows by the key."""
    root, tr = keyed_root
    view = load_run(root / "keyed")
    raw = reports.report_html(view, None, redacted=False)
    copied = [str(k) for k in tr.keys.iloc[:N_COPIED]]
    assert any(f"customer_id {k}" in raw for k in copied)
    assert not re.search(r"training row \d", raw)                  # never memviz's row_id
    redacted = reports.report_html(view, None, redacted=True)
    assert re.search(r"customer_id key-[0-9a-f]{6}", redacted) and not any(f"customer_id {k}<" in redacted
                                                                           for k in copied)


def test_the_audit_pages_schema_table_sets_a_columns_kind(tmp_path):
    """Issue 48 item 3 on the Audit page: a kind changed in its schema table is applied to the uploaded tables
    (memviz.app.audits.kind_edits -> upload_tables(overrides=))."""
    raw = (sample_data_dir() / "train.csv").read_bytes()
    test = (sample_data_dir() / "test.csv").read_bytes()
    train, _, _ = audits.upload_tables("train.csv", raw, "syn.csv", test, target="income")
    assert train.schema.kind_of("education-num") == "categorical"
    edited = datasets.schema_editor_frame(train.schema, pd.read_csv(sample_data_dir() / "train.csv"))
    edited.loc[edited["column"] == "education-num", "kind"] = "numerical"
    edited.loc[edited["column"] == "fnlwgt", "kind"] = "excluded"
    kinds = audits.kind_edits(train.schema, edited)
    assert kinds == (("fnlwgt", "excluded"), ("education-num", "numerical"))
    again, syn, _ = audits.upload_tables("train.csv", raw, "syn.csv", test, target="income", overrides=kinds)
    assert again.schema.kind_of("education-num") == "numerical" and again.schema.kind_of("fnlwgt") == "excluded"
    assert "fnlwgt" not in syn.data.columns and again.why["education-num"] == "set by you"
