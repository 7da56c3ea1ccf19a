"""Issue 48 item 1 on the pages, for a composite key: a run on a table whose rows are named by ``branch`` and
``account_no`` together (neither unique alone; account numbers with gaps, not in row order) names its rows by both
columns on Memorization (the ranking, the leak explorer's picker and heading), Dynamics (the picker, a row typed as
shown), Tune & prune (the rows that would go, the pruned download) and the Audit page's named rows."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from dash_helpers import N_COPIED, floored_run, open_page
from unseen_tables import credit_composite

from memviz.app import audits, datasets, reports, runs
from memviz.app.runs import load_run
from memviz.jobs import control as jobs
from memviz.tables.data import table_from_frame

TIMEOUT = 120
KEY = ["branch", "account_no"]


def with_key(frame: pd.DataFrame, branch, account, role: str, schema=None):
    df = frame.reset_index(drop=True).copy()
    df.insert(0, "branch", branch)
    df.insert(3, "account_no", account)
    if schema is not None:
        return table_from_frame(df, schema, source=f"{role}.csv", role=role)
    return table_from_frame(df, source=f"{role}.csv", role=role, target="income",
                            overrides={"branch": "key", "account_no": "key"})


@pytest.fixture(scope="module")
def composite_root(tmp_path_factory, sample):
    """A copier run (it copies training rows 0..9) on 300 sample rows keyed by (branch, account_no)."""
    root = tmp_path_factory.mktemp("composite_runs")
    train, _ = sample
    rows = train.data.iloc[:800]
    rng = np.random.default_rng(5)
    accounts = rng.permutation(np.repeat(7 * np.arange(400) + 11, 2))          # each number in two branches
    branch = np.empty(800, dtype=object)
    for a in np.unique(accounts):
        at = np.flatnonzero(accounts == a)
        branch[at] = rng.choice(["North", "South", "East", "West"], len(at), replace=False)
    tr = with_key(rows.iloc[:300], branch[:300], accounts[:300], "train")
    assert tr.key == tuple(KEY) and not pd.Series(accounts[:300]).is_unique
    ho = with_key(rows.iloc[300:], branch[300:], accounts[300:], "test", tr.schema)
    floored_run(tr, ho, root / "composite")
    return root, tr


def names(tr, positions) -> list[str]:
    return [f"branch={tr.keys['branch'].iloc[i]}, account_no={tr.keys['account_no'].iloc[i]}" for i in positions]


@pytest.fixture
def page(composite_root, monkeypatch):
    root, _ = composite_root
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    return lambda name: open_page("composite", f"screens/{name}.py", TIMEOUT)


def table_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def pairs(frame) -> set:
    return set(map(tuple, frame[KEY].astype(str).itertuples(index=False)))


def test_memorization_names_rows_by_both_columns(page, composite_root):
    _, tr = composite_root
    copied = pairs(tr.keys.iloc[:N_COPIED])
    at = page("3_memorization")
    at.toggle(key="redact").set_value(False).run()
    assert not at.exception
    ranked = table_with(at, "account_no")
    assert list(ranked.columns[:2]) == KEY and "training row" not in ranked.columns
    assert pairs(ranked.head(5)) <= copied
    pick = at.selectbox(key="leak_row")
    first = int(pick.value)
    assert pick.format_func(first) == names(tr, [first])[0]
    heads = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown if "generated copies" in m.value]
    assert heads and names(tr, [first])[0] in heads[0]
    at.toggle(key="redact").set_value(True).run()
    hashed = table_with(at, "account_no")
    assert hashed["branch"].astype(str).str.startswith("key-").all()
    assert hashed["account_no"].astype(str).str.startswith("key-").all()


def test_dynamics_takes_a_composite_key_typed_as_shown(page, composite_root):
    _, tr = composite_root
    at = page("4_dynamics")
    assert at.multiselect(key="timeline_rows").options[0].startswith("branch=")
    a, b = names(tr, [150, 250])
    at.text_input(key="timeline_more").set_value(f"{a}; {b}; branch=North, account_no=1").run()
    assert not at.exception
    told = " ".join(re.sub(r"\\(.)", r"\1", c.value) for c in [*at.markdown, *at.text])
    assert "branch=North, account_no=1" in told
    fig = next(json.loads(el.proto.spec) for el in at.get("plotly_chart")
               if "timeline" in json.loads(el.proto.spec)["layout"]["title"]["text"].lower())
    labels = [str(y) for y in fig["data"][-1]["y"]]
    assert a in labels and b in labels


def test_tune_lists_the_rows_that_would_go_and_writes_them_back(page, composite_root):
    root, tr = composite_root
    at = page("5_tune")
    at.toggle(key="tune_redact").set_value(False).run()
    assert not at.exception
    gone = table_with(at, "DynamicCut score")
    assert list(gone.columns[1:3]) == KEY and "Training row" not in gone.columns
    assert pairs(gone) <= pairs(tr.keys)
    view = runs.load_run(root / "composite")
    pruned = pd.read_csv(io.BytesIO(runs.pruned_csv(view, tr.row_ids[:N_COPIED])))
    assert list(pruned.columns[:1]) == ["branch"] and pruned.columns[3] == "account_no" and "row_id" not in pruned
    assert pairs(pruned) == pairs(tr.keys.iloc[N_COPIED:])


def test_the_audit_pages_named_rows_and_the_report_carry_both_columns(composite_root):
    root, tr = composite_root
    view = load_run(root / "composite")
    a = audits.run_audit(view)
    shown = audits.over_copied_table(a, tr, redacted=False)
    assert list(shown.columns[:2]) == KEY and "training row" not in shown.columns
    assert len(shown) and pairs(shown) <= pairs(tr.keys.iloc[:N_COPIED])
    hashed = audits.over_copied_table(a, tr, redacted=True)
    assert hashed["account_no"].str.startswith("key-").all()
    csv = pd.read_csv(io.BytesIO(audits.rows_csv(a, tr)))
    assert list(csv.columns[:2]) == KEY and "row_id" not in csv.columns
    raw = reports.report_html(view, None, redacted=False)
    assert any(n in raw for n in names(tr, range(N_COPIED))) and not re.search(r"training row \d", raw)
    redacted = reports.report_html(view, None, redacted=True)
    assert re.search(r"branch=key-[0-9a-f]{6}, account_no=key-[0-9a-f]{6}", redacted)


def test_the_schema_table_makes_a_composite_key_of_two_key_rows():
    """The Data and Audit pages' schema table: two columns marked ``key`` are one composite key (it refused the
    second: "only one column can be the row key")."""
    df = credit_composite(120, seed=6)
    schema = datasets.infer_schema(df, target="Status")
    edited = datasets.schema_editor_frame(schema, df)
    edited.loc[edited["column"].isin(KEY), "kind"] = "key"
    s = datasets.apply_schema_edits(schema, edited, df)
    assert s.key == tuple(KEY) and not set(KEY) & set(s.columns)
    assert datasets.data_summary(table_from_frame(df, s), None)["row key"] == "branch, account_no"
    shown = datasets.schema_editor_frame(s, df)
    assert shown.set_index("column").loc[KEY, "kind"].tolist() == ["key", "key"]
