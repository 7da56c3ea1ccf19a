"""The isolation cut in the one registry (memviz.compare.methods): what it removes, the same rows from
apply_method and removed_rows, its p checked by the comparison's config, and its cell key naming its ranking."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from unseen_tables import credit_like

from memviz.compare import CompareConfig
from memviz.compare.methods import (
    METHOD_LABELS,
    PRETRAINING,
    PRUNES,
    apply_method,
    isolation_removed,
    pretraining_key,
    removed_rows,
)
from memviz.errors import MemvizError
from memviz.risk.factors import risk_factors
from memviz.tables.data import table_from_frame

from .stubs import grid


@pytest.fixture(scope="module")
def credit():
    df = credit_like(150, seed=9)
    df.loc[3, ["Income", "Amount", "Price"]] = [9_000.0, 99_950, 90_000.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return table_from_frame(df, target="Status")


def test_it_removes_the_ceil_p_n_most_isolated_rows(credit):
    res = apply_method("isolation", credit, p=0.1)
    assert len(res.removed) == 15 and len(res.table) == 135 and res.method == "isolation"
    want = risk_factors(credit).order()[:15]
    assert set(res.removed) == set(want) and 3 in set(res.removed)
    assert np.array_equal(removed_rows("isolation", credit, p=0.1), np.sort(want))
    assert list(isolation_removed(credit, 0.1)) == list(want)         # most isolated first
    assert res.params["n_remove"] == 15 and res.params["k"] == 5
    assert "isolation" in PRUNES and METHOD_LABELS["isolation"] == "Isolation cut" and "isolation" in PRETRAINING


def test_the_config_checks_its_p_without_a_warm_up():
    cfg = CompareConfig(methods=("baseline", "isolation"), p=0.2).validated()
    assert not cfg.needs_ranking and cfg.dynamiccut is not None and cfg.dynamiccut.p == 0.2

    with pytest.raises(MemvizError):
        CompareConfig(methods=("isolation",), p=1.5).validated()


def test_the_cell_key_names_the_ranking():
    assert pretraining_key("isolation", 150, 0.1) != pretraining_key("isolation", 150, 0.2)
    assert pretraining_key("isolation", 150, 0.1)["n_remove"] == 15


def test_the_random_arm_prunes_as_many_rows_as_the_isolation_cut(credit):
    """With no DynamicCut ranking in the grid, random pruning and the isolation cut both remove ceil(p · N)."""
    r = apply_method("random", credit, p=0.1, seed=1)
    assert len(r.removed) == len(apply_method("isolation", credit, p=0.1).removed)
    assert isinstance(r.table.data, pd.DataFrame)


def test_a_comparison_runs_the_isolation_cut_without_a_warm_up(tables, tmp_path, stub):
    """`memviz compare --methods baseline,isolation`: no warm-up folder, the cut's 20 of 200 rows removed and
    stored, the pruning protocol's figures filled, and a change of p (its ranking in the cell key) reruns it."""
    train, test = tables
    res = grid(train, test, ["baseline", "isolation"], ["ctgan"], [0], tmp_path, device="cpu", p=0.1, threads=1)
    assert (res["status"] == "ok").all() and not (tmp_path / "warmup").exists()
    iso = res[res["method"] == "isolation"].iloc[0]
    assert iso["n_removed"] == 20 and iso["n_train_used"] == 180 and np.isfinite(iso["mem_ratio_kept"])
    sel = pd.read_parquet(next((tmp_path / "selections").glob("isolation_*.parquet")))
    assert set(sel.loc[sel["removed"].astype(bool), "row_id"]) == set(isolation_removed(train, 0.1))
    assert [n for _, n in stub.fits] == [200, 180]
    grid(train, test, ["baseline", "isolation"], ["ctgan"], [0], tmp_path, device="cpu", p=0.2, threads=1)
    assert [n for _, n in stub.fits[2:]] == [160]                          # only the cut's cell, at its new p
