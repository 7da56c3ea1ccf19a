"""Issue 48 items 2 and 3: the CLI shows the schema it read (one block on stderr, before the work) and takes
per-column overrides on every command that reads a table; a hand-written meta.json that does not list a
column keeps it as the row key when it is one, or leaves it out with one notice naming it (it dropped every
such column silently, the key included, and rows.csv lost the key)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import TINY_MODEL, memviz_cli

from memviz.cli import build_parser
from memviz.tables.data import sample_data_dir
from memviz.warmup.store import RunStore

COMMANDS = ("memorize", "warmup", "compare", "audit")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """train.csv (400 sample rows and a key ``customer_id`` = 10 i + 7, shuffled), holdout.csv, syn.csv (fresh
    rows with 10 verbatim copies of training rows 3 and 7) and meta.json listing neither the key nor ``fnlwgt``."""
    d = tmp_path_factory.mktemp("schema_cli")
    rows = pd.concat([pd.read_csv(sample_data_dir() / f) for f in ("train.csv", "test.csv")], ignore_index=True)
    rows = rows.iloc[:1000].copy()
    rows.insert(0, "customer_id", np.random.default_rng(0).permutation(10 * np.arange(len(rows)) + 7))
    train, hold, fresh = rows.iloc[:400], rows.iloc[400:700], rows.iloc[700:]
    syn = pd.concat([fresh.drop(columns="customer_id"),
                     train.drop(columns="customer_id").iloc[[3] * 10 + [7] * 10]], ignore_index=True)
    train.to_csv(d / "train.csv", index=False)
    hold.to_csv(d / "holdout.csv", index=False)
    syn.to_csv(d / "syn.csv", index=False)
    meta = json.loads((sample_data_dir() / "meta.json").read_text())
    meta["numerical"] = [c for c in meta["numerical"] if c != "fnlwgt"]
    (d / "meta.json").write_text(json.dumps(meta))
    return d, train


def block(err: str) -> dict[str, str]:
    """{column: kind} of the schema block in ``err``."""
    lines = err[err.index("memviz: schema of"):].splitlines()[1:]
    out = {}
    for line in lines:
        if not line.startswith("  ") or line.startswith("  ("):
            break
        col, kind = line.split()[:2]
        out[col] = "row key" if kind == "row" else ("left out" if kind == "left" else kind)
    return out


def test_every_command_that_reads_a_table_takes_the_overrides():
    parser = build_parser()
    for cmd in COMMANDS:
        sub = parser._subparsers._group_actions[0].choices[cmd]
        assert {"--numerical", "--categorical", "--key", "--ignore"} <= set(sub._option_string_actions), cmd


def test_the_schema_read_is_one_block_before_the_work(files, capsys):
    d, train = files
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--synthetic", d / "syn.csv", "--out",
                            d / "m.csv", "--device", "cpu")
    assert rc == 0, err
    kinds = block(err)
    assert list(kinds) == list(train.columns)                          # every column of the file, in its order
    assert kinds["customer_id"] == "row key" and kinds["age"] == "numerical" and kinds["workclass"] == "categorical"
    assert "identifies rows" in err and "distinct integers" in err     # why
    assert err.index("memviz: schema of") < err.index("memorize [")      # before the work
    rc, _, quiet = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--synthetic", d / "syn.csv", "--out",
                              d / "m.csv", "--device", "cpu", "--quiet")
    assert rc == 0 and "schema of" not in quiet                          # --quiet: no block (notices stay)
    assert "'customer_id' identifies rows" in quiet


def test_per_column_overrides(files, capsys):
    d, _ = files
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--synthetic", d / "syn.csv", "--out",
                            d / "m.csv", "--device", "cpu", "--numerical", "education-num", "capital-loss",
                            "--categorical", "age", "--ignore", "fnlwgt")
    assert rc == 0, err
    kinds = block(err)
    assert kinds["education-num"] == kinds["capital-loss"] == "numerical" and kinds["age"] == "categorical"
    assert kinds["fnlwgt"] == "left out" and "set by you" in err
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--synthetic", d / "syn.csv", "--out",
                            d / "m.csv", "--device", "cpu", "--numerical", "age", "--ignore", "age")
    assert rc == 2 and "schema of" not in err and "'age'" in err and "--ignore" in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1
    rc, _, err = memviz_cli(capsys, "memorize", "--train", d / "train.csv", "--synthetic", d / "syn.csv", "--out",
                            d / "m.csv", "--device", "cpu", "--numerical", "nope")
    errors = [line for line in err.splitlines() if "error:" in line]
    assert rc == 2 and len(errors) == 1 and "'nope'" in errors[0] and "no such column" in errors[0]


def test_a_meta_json_keeps_the_key_it_does_not_list_and_names_what_it_leaves_out(files, capsys, tmp_path):
    d, train = files
    rc, _, err = memviz_cli(capsys, "audit", "--train", d / "train.csv", "--schema", d / "meta.json",
                            "--synthetic", d / "syn.csv", "--holdout", d / "holdout.csv", "--out", tmp_path / "a",
                            "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 0, err
    notices = [line for line in err.splitlines() if "not in the schema" in line and "warning:" in line]
    assert len(notices) == 2, err                          # the key, and the one line naming what is left out
    assert "'customer_id'" in notices[0] and "row key" in notices[0]
    assert "'fnlwgt'" in notices[1] and "left out" in notices[1]
    kinds = block(err)
    assert kinds["customer_id"] == "row key" and kinds["fnlwgt"] == "left out"
    rows = pd.read_csv(tmp_path / "a" / "rows.csv")
    assert rows.columns[0] == "customer_id"
    assert set(rows.loc[rows["over_copied"], "customer_id"]) == set(train["customer_id"].iloc[[3, 7]])
    audit = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert audit["key"] == "customer_id"


def test_warmup_takes_the_overrides_and_shows_the_block(files, capsys, tmp_path):
    d, _ = files
    rc, _, err = memviz_cli(capsys, "warmup", "--train", d / "train.csv", "--target", "income", "--out",
                            tmp_path / "run", "--epochs", "2", "--check-every", "2", "--device", "cpu",
                            "--ignore", "fnlwgt", "--numerical", "education-num",
                            "--model-params", json.dumps(TINY_MODEL))
    assert rc == 0, err
    kinds = block(err)
    assert kinds["fnlwgt"] == "left out" and kinds["education-num"] == "numerical" and kinds["income"] == "target"

    schema = RunStore(tmp_path / "run").schema
    assert "fnlwgt" not in schema.columns and "education-num" in schema.numerical and schema.key == "customer_id"
