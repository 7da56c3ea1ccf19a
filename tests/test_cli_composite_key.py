"""The CLI with a composite row key (``--key branch --key account_no``, or meta.json's ``"key": [...]``) and with a
text key with gaps (issue 48 item 1): the schema block names the key, rows.csv carries one column per key column,
a duplicate combination is one line, and ``memviz prune`` writes the user's own columns back; a text key is kept
the same way."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import TINY_MODEL, memviz_cli
from unseen_tables import credit_composite, credit_like

from memviz.warmup.store import RunStore

KEY = ["branch", "account_no"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("composite")
    df = credit_composite(300, seed=1)
    train = df.iloc[:240].reset_index(drop=True)
    train.to_csv(d / "train.csv", index=False)
    df.iloc[240:].to_csv(d / "holdout.csv", index=False)
    syn = pd.concat([df.iloc[240:].drop(columns=KEY), train.drop(columns=KEY).iloc[[3] * 10 + [7] * 10]],
                    ignore_index=True)
    syn.to_csv(d / "syn.csv", index=False)
    return d, df, train


def test_audit_names_rows_by_both_key_columns(files, capsys, tmp_path):
    d, _, train = files
    rc, _, err = memviz_cli(capsys, "audit", "--train", d / "train.csv", "--synthetic", d / "syn.csv",
                            "--holdout", d / "holdout.csv", "--target", "Status", "--key", "branch", "--key",
                            "account_no", "--out", tmp_path / "a", "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 0, err
    block = err[err.index("schema of"):]
    assert "row key: branch + account_no (together)" in block
    assert [ln.split()[1:3] for ln in block.splitlines() if ln.strip().startswith(("branch", "account_no"))] == \
        [["row", "key"], ["row", "key"]]
    rows = pd.read_csv(tmp_path / "a" / "rows.csv")
    assert list(rows.columns[:2]) == KEY and "row_id" not in rows
    named = set(map(tuple, rows.loc[rows["over_copied"], KEY].itertuples(index=False)))
    assert named == set(map(tuple, train[KEY].iloc[[3, 7]].itertuples(index=False)))
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert doc["key"] == KEY and {tuple(r["key"].values()) for r in doc["over_copied"]} == named


def test_a_duplicate_combination_is_one_line(files, capsys, tmp_path):
    d, _, train = files
    dup = train.copy()
    dup.loc[20, KEY] = dup.loc[21, KEY].to_numpy()
    dup.to_csv(tmp_path / "dup.csv", index=False)
    rc, _, err = memviz_cli(capsys, "audit", "--train", tmp_path / "dup.csv", "--synthetic", d / "syn.csv",
                            "--target", "Status", "--key", "branch", "--key", "account_no", "--out", tmp_path / "o",
                            "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    b, n = dup.loc[21, "branch"], int(dup.loc[21, "account_no"])
    assert "columns 'branch', 'account_no'" in err and f"branch={b}, account_no={n}" in err
    assert not (tmp_path / "o").exists()


def test_warmup_and_prune_write_the_users_columns_back(files, capsys, tmp_path):
    d, df, train = files
    meta = {"target": "Status", "key": KEY, "numerical": ["Seniority", "Age", "Income", "Amount", "Price"],
            "categorical": ["Home", "Records", "Job"]}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    run = tmp_path / "run"
    rc, _, err = memviz_cli(capsys, "warmup", "--train", d / "train.csv", "--schema", tmp_path / "meta.json",
                            "--holdout", d / "holdout.csv", "--out", run, "--epochs", "4", "--check-every", "2",
                            "--device", "cpu", "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert rc == 0, err

    assert tuple(RunStore(run).schema.key) == tuple(KEY)
    rc, last, err = memviz_cli(capsys, "prune", run, "--p", "0.1", "--k", "2", "--out", tmp_path / "pruned.csv",
                               "--removed-out", tmp_path / "removed.csv")
    assert rc == 0, err
    head = json.loads(last)
    pruned = pd.read_csv(tmp_path / "pruned.csv")
    assert list(pruned.columns) == list(df.columns)
    removed = pd.read_csv(tmp_path / "removed.csv")
    assert list(removed.columns[:3]) == [*KEY, "row_id"]
    gone = set(map(tuple, removed.loc[removed["removed"], KEY].itertuples(index=False)))
    kept = set(map(tuple, pruned[KEY].itertuples(index=False)))
    assert len(gone) == head["removed"] == 24 and gone.isdisjoint(kept)
    assert gone | kept == set(map(tuple, train[KEY].itertuples(index=False)))
    assert head["key"] == KEY and {tuple(k.values()) for k in head["removed_keys"]} <= gone


def test_a_text_key_with_gaps_through_audit_and_prune(capsys, tmp_path):
    df = credit_like(300, seed=5)
    df["rownames"] = [f"C-{int(k):05d}" for k in df["rownames"]]         # text, gaps, not in row order
    train = df.iloc[:240].reset_index(drop=True)
    train.to_csv(tmp_path / "train.csv", index=False)
    df.iloc[240:].to_csv(tmp_path / "holdout.csv", index=False)
    syn = pd.concat([df.iloc[240:].drop(columns="rownames"),
                     train.drop(columns="rownames").iloc[[3] * 10 + [7] * 10]], ignore_index=True)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    rc, _, err = memviz_cli(capsys, "audit", "--train", tmp_path / "train.csv", "--synthetic", tmp_path / "syn.csv",
                            "--holdout", tmp_path / "holdout.csv", "--target", "Status", "--out", tmp_path / "a",
                            "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 0, err
    rows = pd.read_csv(tmp_path / "a" / "rows.csv")
    assert rows.columns[0] == "rownames"
    assert set(rows.loc[rows["over_copied"], "rownames"]) == set(train["rownames"].iloc[[3, 7]])
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert {r["key"] for r in doc["over_copied"]} == set(train["rownames"].iloc[[3, 7]])
    run = tmp_path / "run"
    rc, _, err = memviz_cli(capsys, "warmup", "--train", tmp_path / "train.csv", "--target", "Status", "--holdout",
                            tmp_path / "holdout.csv", "--out", run, "--epochs", "4", "--check-every", "2",
                            "--device", "cpu", "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert rc == 0, err
    rc, last, err = memviz_cli(capsys, "prune", run, "--p", "0.1", "--k", "2", "--out", tmp_path / "pruned.csv")
    assert rc == 0, err
    pruned = pd.read_csv(tmp_path / "pruned.csv")
    assert list(pruned.columns) == list(df.columns) and pruned["rownames"].str.startswith("C-").all()
    head = json.loads(last)
    assert len(pruned) == 240 - head["removed"] and set(head["removed_keys"]).isdisjoint(pruned["rownames"])
    assert np.isin(pruned["rownames"], train["rownames"]).all()
