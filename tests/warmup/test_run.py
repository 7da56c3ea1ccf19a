import numpy as np
import pandas as pd
import pytest
from helpers import TINY_MODEL, Crash
from helpers import tiny_warmup as tiny

from memviz.errors import MemvizError, BadRunFolder
from memviz.measure.floor import excess, holdout_floor
from memviz.warmup.run import (
    IDENTITY,
    WarmupConfig,
    ensure_warmup,
    load_warmup,
    run_warmup,
)
from memviz.warmup.store import RunStore, list_runs


def test_check_epochs_every_m_and_at_the_end():
    cfg = WarmupConfig(epochs=10, check_every=4).resolved(100)
    assert cfg.check_epochs() == [4, 8, 10]
    assert WarmupConfig(epochs=150).resolved(100).check_epochs()[-1] == 150
    assert len(WarmupConfig(epochs=150).resolved(100).check_epochs()) >= 20
    assert WarmupConfig().resolved(321).n_samples == 321


@pytest.mark.parametrize("kw", [{"epochs": 0}, {"check_every": 0}, {"n_samples": 0}, {"top_frac": 1.5},
                                {"preset": "huge"}])
def test_bad_settings_are_user_errors(kw):
    with pytest.raises(MemvizError):
        WarmupConfig(**kw).resolved(100)


def test_in_memory_warmup_records_every_check(small_train):
    events = []
    res = run_warmup(small_train, tiny(n_samples=40), progress=events.append)
    assert res.status == "finished"
    assert list(res.per_check["epoch"]) == [2, 4, 6]
    long = res.checks
    assert set(long.columns) >= {"check", "epoch", "synthetic_id", "nn1", "d1", "d2", "ratio", "memorized"}
    assert len(long) == 3 * 40
    assert set(long["nn1"]) <= set(small_train.row_ids)
    np.testing.assert_array_equal(long["memorized"].to_numpy(), (long["ratio"] < 1 / 3).to_numpy())
    # per-row counts add up to the memorized rows of each check
    assert res.dynamics.counts.sum() == int(long["memorized"].sum())
    assert [e["event"] for e in events].count("check") == 3 and events[-1]["event"] == "done"


def test_run_store_round_trip(small_train, tmp_path):
    run = tmp_path / "run"
    res = run_warmup(small_train, tiny(), run)
    m = RunStore(run).manifest()
    assert m["status"] == "finished" and len(m["checks"]) == 3
    assert m["data"]["n_rows"] == len(small_train) and m["config"]["seed"] == 3
    assert {"torch", "numpy", "memviz"} <= set(m["versions"])
    for f in ("checks.parquet", "rows.parquet", "row_checks.parquet", "train.parquet", "checkpoints/model.pt"):
        assert (run / f).exists(), f
    rows = pd.read_parquet(run / "rows.parquet")
    assert len(rows) == len(small_train) and {"row_id", "total_count", "first_epoch", "forgetting_events",
                                              "top"} <= set(rows.columns)
    again = load_warmup(run)
    pd.testing.assert_frame_equal(again.checks, res.checks)
    samples = RunStore(run).samples(1)
    assert list(samples.columns) == ["synthetic_id", *small_train.schema.columns]
    assert len(samples) == len(small_train)
    assert list_runs(tmp_path)["run_id"].tolist() == ["run"]
    with pytest.raises(BadRunFolder):
        run_warmup(small_train, tiny(), run)  # never overwrite a run



@pytest.mark.parametrize("with_floor", [False, True])
def test_killed_run_resumes_to_the_uninterrupted_result(small_train, sample, tmp_path, monkeypatch, with_floor):
    holdout = sample[1].subset(sample[1].row_ids[:200]) if with_floor else None
    full = run_warmup(small_train, tiny(), tmp_path / "full", holdout=holdout)
    # crash during epoch 5: checks at epochs 2 and 4 are finished and checkpointed
    import memviz.models.tabddpm as tabddpm  # lazy: torch (memviz.models.tabddpm), an extra (train)
    original_fit = tabddpm.TabDDPM.fit

    def crashing_fit(self, table, callbacks=(), resume_state=None):
        return original_fit(self, table, list(callbacks) + [Crash(5)], resume_state)

    monkeypatch.setattr(tabddpm.TabDDPM, "fit", crashing_fit)
    with pytest.raises(RuntimeError):
        run_warmup(small_train, tiny(), tmp_path / "part", holdout=holdout)
    store = RunStore(tmp_path / "part")
    assert store.manifest()["status"] == "failed" and store.finished_checks() == [0, 1]
    monkeypatch.setattr(tabddpm.TabDDPM, "fit", original_fit)
    resumed = run_warmup(small_train, tiny(), tmp_path / "part", resume=True, holdout=holdout)
    assert resumed.status == "finished"
    pd.testing.assert_frame_equal(resumed.checks, full.checks)
    pd.testing.assert_frame_equal(resumed.per_check, full.per_check)
    np.testing.assert_array_equal(resumed.dynamics.counts, full.dynamics.counts)
    manifest = lambda run: RunStore(tmp_path / run).manifest()["checks"]  # noqa: E731
    assert [{k: v for k, v in c.items() if "seconds" not in k} for c in manifest("part")] == \
        [{k: v for k, v in c.items() if "seconds" not in k} for c in manifest("full")]
    assert (resumed.floor is None) == (not with_floor)
    if with_floor:
        figures = lambda f: {k: v for k, v in f.to_dict().items() if k != "seconds"}  # noqa: E731
        assert figures(resumed.floor) == figures(full.floor)


def test_cancel_keeps_finished_checks(small_train, tmp_path):
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] >= 3   # polled after every epoch: stop after epoch 3
    res = run_warmup(small_train, tiny(), tmp_path / "r", should_stop=stop)
    assert res.status == "cancelled" and list(res.per_check["epoch"]) == [2]
    assert RunStore(tmp_path / "r").manifest()["status"] == "cancelled"


def test_resume_refuses_other_data_or_settings(small_train, sample, tmp_path):
    run_warmup(small_train, tiny(epochs=2), tmp_path / "r")
    other = sample[0].subset(sample[0].row_ids[150:300])
    with pytest.raises(BadRunFolder, match="another table"):
        run_warmup(other, tiny(epochs=2), tmp_path / "r", resume=True)
    with pytest.raises(BadRunFolder, match="seed"):
        run_warmup(small_train, tiny(epochs=2, seed=9), tmp_path / "r", resume=True)


def test_resume_refuses_other_model_parameters(small_train, tmp_path):
    """A resume with another lr trained the rest of the run with other settings, silently (issue 21)."""
    run_warmup(small_train, tiny(epochs=2), tmp_path / "r")
    with pytest.raises(BadRunFolder, match="model_params"):
        run_warmup(small_train, tiny(epochs=2, model_params={**TINY_MODEL, "lr": 0.01}), tmp_path / "r", resume=True)


@pytest.mark.parametrize("kw,name", [({"check_every": 1}, "check_every"), ({"n_samples": 50}, "n_samples"),
                                     ({"top_frac": 0.2}, "top_frac"), ({"quality_rows": 20}, "quality_rows")])
def test_reuse_refuses_a_finished_run_made_with_other_check_settings(small_train, tmp_path, kw, name):
    """A comparison or the study reused a finished run made with other check settings (issue 21)."""
    run_warmup(small_train, tiny(epochs=2), tmp_path / "r")
    with pytest.raises(BadRunFolder, match=name):
        ensure_warmup(small_train, tiny(epochs=2, **kw), tmp_path / "r")
    assert ensure_warmup(small_train, tiny(epochs=2), tmp_path / "r").status == "finished"  # same: reused


def test_one_identity_for_resume_and_reuse(small_train, tmp_path):
    """Resume and reuse compare the same settings: every setting that changes what a run computes."""
    assert set(IDENTITY) == {"preset", "epochs", "check_every", "n_samples", "seed", "distance", "top_frac",
                             "model_params", "quality_rows"}
    run_warmup(small_train, tiny(epochs=2), tmp_path / "r")
    for name, value in [("distance", "standardized"), ("seed", 9), ("epochs", 3)]:
        for call in (lambda c: run_warmup(small_train, c, tmp_path / "r", resume=True),
                     lambda c: ensure_warmup(small_train, c, tmp_path / "r")):
            with pytest.raises(BadRunFolder, match=name):
                call(tiny(epochs=2, **{name: value}) if name != "epochs" else tiny(epochs=value))


def test_warmup_with_a_holdout_stores_and_reloads_its_floor(small_train, sample, tmp_path):
    holdout = sample[1].subset(sample[1].row_ids[:200])
    events = []
    res = run_warmup(small_train, tiny(n_samples=60), tmp_path / "r", holdout=holdout, progress=events.append)
    floor = res.floor
    assert floor.n_holdout == 200 and floor.n_reference == len(small_train) and floor.low <= floor.floor <= floor.high
    assert (tmp_path / "r" / "floor.json").exists() and (tmp_path / "r" / "floor_rows.parquet").exists()
    assert [e["event"] for e in events][0] == "floor" and events[0]["n_holdout"] == 200
    # the same floor as measured on its own, with a fresh engine
    alone = holdout_floor(small_train, holdout, distance="paper", device="cpu")
    assert alone.floor == floor.floor and np.array_equal(alone.hits, floor.hits)
    # every check: the existing columns, then its excess over the floor with the interval
    pc = res.per_check
    assert list(pc.columns[:6]) == ["check", "epoch", "n_synthetic", "n_memorized", "mem_ratio", "mem_auc"]
    for row in pc.itertuples():
        ex = excess(row.mem_ratio, row.n_synthetic, floor)
        assert (row.excess, row.excess_low, row.excess_high) == pytest.approx((ex.excess, ex.low, ex.high))
    m = RunStore(tmp_path / "r").manifest()
    assert [c["excess"] for c in m["checks"]] == pytest.approx(pc["excess"].tolist())
    again = load_warmup(tmp_path / "r")
    assert again.floor.to_dict() == floor.to_dict()
    np.testing.assert_array_equal(again.floor.expected_auc_rate, floor.expected_auc_rate)
    pd.testing.assert_frame_equal(again.per_check, pc)
    # the floor changes nothing about the warm-up itself
    plain = run_warmup(small_train, tiny(n_samples=60))
    pd.testing.assert_frame_equal(plain.checks, res.checks)
    assert plain.floor is None and "excess" not in plain.per_check


def test_a_run_without_a_floor_still_opens(small_train, tmp_path):
    run_warmup(small_train, tiny(epochs=2), tmp_path / "r")
    assert not (tmp_path / "r" / "floor.json").exists()
    res = load_warmup(tmp_path / "r")
    assert res.floor is None and "excess" not in res.per_check and len(res.per_check) == 1


def test_a_bad_holdout_fails_before_the_run_folder_exists(small_train, sample, tmp_path):
    with pytest.raises(MemvizError, match="are rows of the training table"):
        run_warmup(small_train, tiny(epochs=2), tmp_path / "r", holdout=small_train)
    assert not (tmp_path / "r").exists()
    run_warmup(small_train, tiny(epochs=2), tmp_path / "ok", holdout=sample[1].subset(sample[1].row_ids[:100]))
    with pytest.raises(BadRunFolder, match="another hold-out"):
        run_warmup(small_train, tiny(epochs=2), tmp_path / "ok", resume=True,
                   holdout=sample[1].subset(sample[1].row_ids[100:200]))
