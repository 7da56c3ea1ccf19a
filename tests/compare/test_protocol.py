"""The pruning protocol: floor and excess for every cell, kept rows, control and removed-row copies
for the pruning cells; stub generators, so every figure is known by construction."""
import json
import math

import numpy as np
import pandas as pd
import pytest

import memviz.compare.cell as cell
import memviz.compare.grid as grid_module
import memviz.compare.protocol as protocol
from memviz.cli import main
from memviz.compare.methods import PRUNES, SELECTION_SCORE, apply_method, removed_rows
from memviz.compare.ranking import selections_from_run
from memviz.dynamics.dynamiccut import DynamicCutParams, dynamiccut_selection
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadRunFolder, MemvizError
from memviz.measure.floor import holdout_floor
from memviz.measure.memorization import memorization
from memviz.tables.data import fingerprint, load_table, sample_data_dir, table_from_frame
from memviz.warmup.run import load_warmup

from .stubs import TINY, Stub, grid

META = sample_data_dir() / "meta.json"
PRUNING = ["dynamiccut", "dynamiccut_excess", "dynamiccutmix", "random"]
KW = dict(device="cpu", p=0.1, threads=1)


@pytest.fixture(scope="module")
def pool(files):
    """Fresh real rows: training-split rows 400..999 of the sample, in neither the training table nor the test rows."""
    train = load_table(files / "train.csv", META)
    rows = pd.read_csv(sample_data_dir() / "train.csv").iloc[400:1000]
    return load_table_from(rows, train)


def load_table_from(df, like):
    return table_from_frame(df.loc[:, list(like.schema.columns)].reset_index(drop=True), like.schema, source="pool")


class Copier(Stub):
    """Generates round(share · n) copies of rows of its training table, the rest fresh real rows from ``pool``."""

    share, pool = 0.5, None

    def sample(self, n, seed=None):
        rng = np.random.default_rng(seed)
        k = int(round(self.share * n))
        copies = self.table_.data.iloc[rng.integers(0, len(self.table_), k)]
        fresh = self.pool.data.iloc[rng.choice(len(self.pool), n - k, replace=False)]
        return pd.concat([copies, fresh]).reset_index(drop=True)


class Leaker(Stub):
    """Copies fixed rows of the ORIGINAL table whatever it was trained on (removed rows included)."""

    source = None

    def sample(self, n, seed=None):
        return self.source.iloc[np.arange(n) % len(self.source)].reset_index(drop=True)


def use(monkeypatch, cls, **attrs):
    """Cells fit ``cls`` and skip the quality / MLE / DCR evaluation (no part of the protocol)."""
    Stub.fits = []
    for k, v in attrs.items():
        setattr(cls, k, v)
    monkeypatch.setattr(cell, "make_model", lambda name, **kw: cls(name, **kw))
    monkeypatch.setattr(cell, "evaluate_synthetic", lambda *a, **k: {})
    monkeypatch.setattr(grid_module, "_mle_reference", lambda *a, **k: {})
    return cls


def selection(out, method, seed):
    return pd.read_parquet(out / "selections" / f"{method}_{seed}.parquet")


# ------------------------------------------------------------------ methods and selections
def test_pruning_keeps_the_budget_and_stores_each_selection(tables, run_floor, tmp_path, monkeypatch):
    train, test = tables
    use(monkeypatch, Stub)
    res = grid(train, test, ["baseline", *PRUNING], ["ctgan"], [0, 1], tmp_path, run_dir=str(run_floor), **KW)
    budget = math.ceil(0.1 * len(train))
    sels = selections_from_run(run_floor, train, params=DynamicCutParams(0.1), scores=("raw", "excess"))
    for method in PRUNING:
        for seed in (0, 1):
            sel = selection(tmp_path, method, seed)
            assert sorted(sel["row_id"]) == sorted(train.row_ids) and sel["removed"].sum() == budget
            ids = sels[SELECTION_SCORE.get(method, "raw")].removed
            removed = np.sort(sel.loc[sel["removed"], "row_id"].to_numpy())
            assert np.array_equal(removed, removed_rows(method, train, selection=ids, seed=seed))
            assert np.array_equal(removed, apply_method(method, train, selection=ids, seed=seed).removed)
            if method in SELECTION_SCORE:                                      # ranked: score and rank stored
                assert (sel.loc[sel["removed"], "rank"] <= budget).all() and sel["score"].notna().all()
    assert (res.loc[res["method"].isin(PRUNING), "n_removed"] == budget).all()
    assert not selection(tmp_path, "random", 0)["removed"].equals(selection(tmp_path, "random", 1)["removed"])
    assert not (tmp_path / "selections" / "baseline_0.parquet").exists()
    # the excess ranking is the warm-up's excess score with its floor's expected Mem-AUC rate
    warm = load_warmup(run_floor)
    by_hand = dynamiccut_selection(warm.dynamics, p=0.1, score="excess",
                                   expected_auc_rate=warm.floor.expected_auc_rate)
    sel = selection(tmp_path, "dynamiccut_excess", 0).set_index("row_id").loc[by_hand.row_ids]
    assert np.array_equal(sel["score"].to_numpy(), by_hand.scores)


def test_dynamiccut_excess_without_a_floor_stops_before_any_cell(tables, files, run_dir, tmp_path, monkeypatch,
                                                                 capsys):
    train, test = tables
    use(monkeypatch, Stub)
    with pytest.raises(BadRunFolder, match="no floor"):
        grid(train, test, ["baseline", "dynamiccut_excess"], ["ctgan"], [0], tmp_path / "a", run_dir=str(run_dir), **KW)
    with pytest.raises(MemvizError, match="needs a floor"):
        grid(train, None, ["dynamiccut_excess"], ["ctgan"], [0], tmp_path / "b", **KW)
    assert Stub.fits == [] and not (tmp_path / "a" / "cells").exists() and not (tmp_path / "b").exists()
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"), "--schema",
                 str(META), "--run", str(run_dir), "--methods", "baseline,dynamiccut_excess", "--models", "ctgan",
                 "--out", str(tmp_path / "c"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no floor" in err[0]


def test_own_warmup_measures_its_floor_on_the_test_split(tables, tmp_path, monkeypatch):
    train, test = tables
    use(monkeypatch, Stub)
    res = grid(train, test, ["dynamiccut_excess"], ["ctgan"], [0], tmp_path, epochs=2,
               model_params={"tabddpm": TINY}, **KW)
    floor = load_warmup(tmp_path / "warmup").floor
    assert floor is not None and floor.holdout_fingerprint == fingerprint(test)
    assert (res["status"] == "ok").all() and (res["n_removed"] == 20).all()


# ------------------------------------------------------------------ the figures
def test_floor_and_control_by_hand_and_the_floor_never_uses_a_training_row(tables, run_floor, tmp_path,
                                                                             monkeypatch):
    train, test = tables
    use(monkeypatch, Stub)
    calls = []
    real = protocol.holdout_floor

    def spy(reference, holdout, **kw):
        calls.append((reference.row_ids.copy(), holdout))
        return real(reference, holdout, **kw)

    monkeypatch.setattr(protocol, "holdout_floor", spy)
    res = grid(train, test, ["baseline", "dynamiccut", "random"], ["ctgan"], [0, 1], tmp_path,
               run_dir=str(run_floor), **KW)
    # one floor for the original table, one per distinct kept set: dynamiccut's (shared by the seeds), random's per seed
    assert len(calls) == 4
    train_rows = set(pd.util.hash_pandas_object(train.data, index=False))
    for ref_ids, holdout in calls:
        assert fingerprint(holdout) == fingerprint(test) and set(ref_ids) <= set(train.row_ids)
        assert not set(pd.util.hash_pandas_object(holdout.data, index=False)) & train_rows
    full = holdout_floor(train, test)
    assert np.allclose(res[["floor", "floor_low", "floor_high"]].to_numpy(), [full.floor, full.low, full.high])
    assert (res["n_holdout"] == len(test)).all()
    for _, r in res.iterrows():
        if r["method"] == "baseline":
            assert np.isnan(r[["mem_ratio_kept", "floor_kept", "control_kept", "n_flagged_removed"]].to_numpy(
                float)).all()
            continue
        sel = selection(tmp_path, r["method"], r["seed"])
        kept = train.drop(sel.loc[sel["removed"], "row_id"])
        assert r["floor_kept"] == pytest.approx(holdout_floor(kept, test).floor)
        base = pd.read_parquet(tmp_path / "synthetic" / f"baseline_{r['model']}_{r['seed']}.parquet")
        assert r["control_kept"] == pytest.approx(memorization(kept, base).mem_ratio)
        own = pd.read_parquet(tmp_path / r["synthetic"])
        assert r["mem_ratio_kept"] == pytest.approx(memorization(kept, own).mem_ratio) == r["mem_ratio_pruned"]
    # without a baseline cell in the grid there is no control
    alone = grid(train, test, ["dynamiccut"], ["ctgan"], [0], tmp_path / "alone", run_dir=str(run_floor), **KW)
    assert alone["control_kept"].isna().all() and alone["floor_kept"].notna().all()


def test_planted_copier_excess_is_its_copy_share_above_the_floor(tables, pool, run_floor, tmp_path, monkeypatch):
    """Copies are always flagged, fresh rows at the floor f: mem = s + (1 − s) f, so excess = s (1 − f)."""
    train, test = tables
    use(monkeypatch, Copier, share=0.5, pool=pool)
    res = grid(train, test, ["baseline"], ["ctgan"], [0, 1, 2], tmp_path, **KW)
    f = res["floor"].iloc[0]
    assert 0.05 < f < 0.5
    expected = 0.5 * (1 - f)
    assert (res["excess_low"] <= expected).all() and (expected <= res["excess_high"]).all()
    assert abs(res["excess"].mean() - expected) < 0.05 and (res["excess_low"] > 0.2).all()
    # fresh rows alone: the excess interval covers 0
    use(monkeypatch, Copier, share=0.0, pool=pool)
    fresh = grid(train, test, ["baseline"], ["ctgan"], [0], tmp_path / "fresh", **KW)
    assert (fresh["excess_low"] <= 0).all() and (fresh["excess_high"] >= 0).all()


def test_n_flagged_removed_counts_copies_of_removed_rows_exactly(tables, run_floor, tmp_path, monkeypatch):
    train, test = tables
    assert not train.data.duplicated().any()                   # an exact copy's NN1 is its source, and it is flagged
    leak = train.data.iloc[np.r_[0:200:3]].reset_index(drop=True)
    ids = train.row_ids[np.r_[0:200:3]]
    use(monkeypatch, Leaker, source=leak)
    res = grid(train, test, ["baseline", *PRUNING], ["ctgan"], [0, 1], tmp_path, run_dir=str(run_floor), **KW)
    n = len(train)
    copies_of = ids[np.arange(n) % len(ids)]                   # source row_id of each generated row
    for _, r in res[res["method"].isin(PRUNES)].iterrows():
        sel = selection(tmp_path, r["method"], r["seed"])
        removed = sel.loc[sel["removed"], "row_id"].to_numpy()
        assert r["n_flagged_removed"] == np.isin(copies_of, removed).sum() > 0
    assert (res["mem_ratio"] == 1.0).all()


# ------------------------------------------------------------------ reruns
def test_rerun_recomputes_nothing(tables, run_floor, tmp_path, monkeypatch):
    train, test = tables
    use(monkeypatch, Stub)
    cells = (["baseline", "dynamiccut", "random"], ["ctgan"], [0, 1])
    first = grid(train, test, *cells, tmp_path, run_dir=str(run_floor), **KW)
    passes = []
    for mod in (protocol, cell):
        monkeypatch.setattr(mod, "memorization", lambda *a, **k: passes.append("memorization"))
    monkeypatch.setattr(protocol, "holdout_floor", lambda *a, **k: passes.append("floor"))
    monkeypatch.setattr(NeighborEngine, "fit", lambda *a, **k: passes.append("fit"))
    fits = len(Stub.fits)
    again = grid(train, test, *cells, tmp_path, run_dir=str(run_floor), **KW)
    assert passes == [] and len(Stub.fits) == fits
    pd.testing.assert_frame_equal(again, first)
    # a cell made before these figures existed gets them from its stored rows, once
    monkeypatch.undo()
    use(monkeypatch, Stub)
    f = next((tmp_path / "cells").glob("dynamiccut_ctgan_0_*.json"))
    rec = json.loads(f.read_text())
    f.write_text(json.dumps({k: v for k, v in rec.items() if k not in ("mem_ratio_kept", "n_flagged_removed")}))
    for p in (tmp_path / "protocol").glob("dynamiccut_ctgan_0_*.json"):
        p.unlink()
    filled = grid(train, test, *cells, tmp_path, run_dir=str(run_floor), **KW)
    assert Stub.fits == []
    pd.testing.assert_frame_equal(filled, first)
