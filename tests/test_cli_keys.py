"""The CLI on a table memviz was not designed on (issue 42): ``--target`` on every command that infers a
schema (``warmup`` had none), the user's row key kept through a warm-up into ``memviz prune``'s output, SDV
metadata notes on stderr."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import TINY_MODEL, memviz_cli
from unseen_tables import credit_like

from memviz.cli import build_parser
from memviz.warmup.store import RunStore


@pytest.fixture(scope="module")
def credit_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("credit")
    df = credit_like(300, seed=1)
    df.iloc[:240].to_csv(d / "train.csv", index=False)
    df.iloc[240:].to_csv(d / "holdout.csv", index=False)
    return d, df


def test_every_command_that_infers_a_schema_takes_target():
    parser = build_parser()
    for cmd in ("memorize", "warmup", "compare", "audit"):
        sub = parser._subparsers._group_actions[0].choices[cmd]
        assert "--target" in sub._option_string_actions, cmd


def test_warmup_with_target_keeps_the_key_and_prune_writes_it_back(credit_files, capsys):
    d, df = credit_files
    run = d / "run"
    rc, _, err = memviz_cli(capsys, "warmup", "--train", d / "train.csv", "--target", "Status", "--holdout",
                            d / "holdout.csv", "--out", run, "--epochs", "4", "--check-every", "2",
                            "--device", "cpu", "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert rc == 0, err
    assert "'rownames' identifies rows" in err and "row key" in err and "no target given" not in err

    store = RunStore(run)
    assert store.schema.target == "Status" and store.schema.key == "rownames"
    train = store.train()
    assert list(train.keys) == list(df["rownames"].iloc[:240])

    rc, last, err = memviz_cli(capsys, "prune", run, "--p", "0.1", "--k", "2", "--out", d / "pruned.csv",
                               "--removed-out", d / "removed.csv")
    assert rc == 0, err
    head = json.loads(last)
    pruned = pd.read_csv(d / "pruned.csv")
    assert list(pruned.columns) == list(df.columns)       # the user's columns, in the user's order, key included
    removed = pd.read_csv(d / "removed.csv")
    gone = set(removed.loc[removed["removed"], "rownames"])
    assert len(gone) == head["removed"] == 24 and gone.isdisjoint(pruned["rownames"])
    assert set(pruned["rownames"]) | gone == set(df["rownames"].iloc[:240])
    assert head["key"] == "rownames" and set(head["removed_keys"]) <= gone
    assert list(removed.columns[:2]) == ["rownames", "row_id"]


def test_memorize_target_and_no_target(credit_files, capsys):
    d, _ = credit_files
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--target", "Status", "--synthetic",
                            d / "holdout.csv", "--out", d / "m.csv", "--device", "cpu", "--quiet")
    assert rc == 0 and "no target given" not in err, err
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--synthetic", d / "holdout.csv",
                            "--out", d / "m2.csv", "--device", "cpu", "--quiet")
    assert rc == 0 and "no target given" not in err, err       # memorization reads no target: nothing to suggest
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--target", "nope", "--synthetic",
                            d / "holdout.csv", "--out", d / "m3.csv", "--device", "cpu", "--quiet")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "'nope'" in err


def test_metadata_notes_and_an_unlisted_column_refused(credit_files, capsys, tmp_path):
    d, df = credit_files
    cols = {"rownames": {"sdtype": "id"}, "Status": {"sdtype": "categorical"}, "Seniority": {"sdtype": "numerical"},
            "Home": {"sdtype": "address", "pii": True}, "Age": {"sdtype": "numerical"},
            "Records": {"sdtype": "boolean"}, "Job": {"sdtype": "ordinal"}, "Income": {"sdtype": "numerical"},
            "Amount": {"sdtype": "numerical"}, "Price": {"sdtype": "numerical"}}
    meta = tmp_path / "sdv.json"
    meta.write_text(json.dumps({"METADATA_SPEC_VERSION": "V1", "relationships": [],
                                "tables": {"credit": {"columns": cols, "primary_key": "rownames"}}}))
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--metadata", meta, "--target",
                            "Status", "--synthetic", d / "holdout.csv", "--out", tmp_path / "m.csv", "--device",
                            "cpu", "--quiet")
    assert rc == 0, err
    assert "rownames (id) is the row key" in err and "Home (address)" in err and "Job (ordinal)" in err
    del cols["Price"]
    meta.write_text(json.dumps({"columns": cols, "METADATA_SPEC_VERSION": "SINGLE_TABLE_V1"}))
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--metadata", meta, "--synthetic",
                            d / "holdout.csv", "--out", tmp_path / "m2.csv", "--device", "cpu", "--quiet")
    assert rc == 2 and err.strip().splitlines()[-1].endswith(
        "column 'Price': in the data but not in the SDV metadata (SDV refuses such data too: add it to the "
        "metadata, with sdtype numerical or categorical, or drop it)")


def test_the_audits_rows_csv_names_rows_by_the_users_key(credit_files, capsys, tmp_path):
    """rows.csv named every training row by memviz's internal row_id only, though the report names them by the
    user's key: a privacy officer could not find the named rows in their own table."""
    d, df = credit_files
    train = df.iloc[:240].reset_index(drop=True)
    syn = pd.concat([df.iloc[240:].drop(columns="rownames"),
                     train.drop(columns="rownames").iloc[[3] * 10 + [7] * 10]], ignore_index=True)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    rc, _, err = memviz_cli(capsys, "audit", "--train", d / "train.csv", "--synthetic", tmp_path / "syn.csv",
                            "--holdout", d / "holdout.csv", "--target", "Status", "--out", tmp_path / "a",
                            "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 0, err
    rows = pd.read_csv(tmp_path / "a" / "rows.csv")
    assert rows.columns[0] == "rownames" and "row_id" not in rows.columns     # row_id only when asked (issue 48)
    named = rows.loc[rows["over_copied"], "rownames"]
    assert set(named) == set(train["rownames"].iloc[[3, 7]])
    rc, _, err = memviz_cli(capsys, "audit", "--train", d / "train.csv", "--synthetic", tmp_path / "syn.csv",
                            "--holdout", d / "holdout.csv", "--target", "Status", "--out", tmp_path / "b",
                            "--no-evidence", "--no-quality", "--device", "cpu", "--keep-row-id")
    assert rc == 0, err
    rows = pd.read_csv(tmp_path / "b" / "rows.csv")
    assert list(rows.columns[:2]) == ["rownames", "row_id"]
    assert rows.set_index("row_id").loc[[3, 7], "rownames"].tolist() == train["rownames"].iloc[[3, 7]].tolist()


def test_explain_writes_factors_keyed_by_the_users_key_and_its_json_line_last(credit_files, capsys):
    """memviz explain on a run of the credit-like table: factors.csv keyed by ``rownames`` (no row_id), the reasons
    redacted (no raw category), shap.csv, explanation.json, and a JSON last line with the held-out AUC and its
    strength in words (or the one line saying why there is no model)."""
    d, df = credit_files
    run = d / "run_explain"
    rc, _, err = memviz_cli(capsys, "warmup", "--train", d / "train.csv", "--target", "Status", "--holdout",
                            d / "holdout.csv", "--out", run, "--epochs", "4", "--check-every", "2",
                            "--device", "cpu", "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert rc == 0, err
    rc, last, err = memviz_cli(capsys, "explain", run, "--out", d / "why")
    assert rc == 0, err
    head = json.loads(last)
    factors = pd.read_csv(d / "why" / "factors.csv")
    assert factors.columns[0] == "rownames" and "row_id" not in factors.columns
    assert set(factors["rownames"]) == set(df["rownames"].iloc[:240])
    assert {"isolation", "pair_rarity", "extremeness", "exact_duplicates", "top", "why"} <= set(factors.columns)
    for raw in ("rent", "owner", "parents", "freelance", "partime"):
        assert not factors["why"].str.contains(f"= {raw} ", regex=False).any()
    if head["auc"] is not None:
        assert head["strength"] in ("strong", "moderate", "weak", "no better than chance")
        assert (d / "why" / "shap.csv").is_file() and "model_score" in factors.columns
        assert json.loads((d / "why" / "explanation.json").read_text())["explanation"]["importance"]
    else:
        assert head["reason"]
    assert len(head["riskiest"]) == 5 and all(r["row"].startswith("key-") for r in head["riskiest"])
    rc, _, err = memviz_cli(capsys, "explain", d / "no_such_run", "--out", d / "why2")
    assert rc == 2 and len(err.strip().splitlines()) == 1
