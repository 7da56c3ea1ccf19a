"""Per-check quality, per-check checkpoints with retention, and the recommended check."""
import numpy as np
import pandas as pd
import pytest
from helpers import TINY_MODEL, Crash, tiny_warmup

from memviz.errors import MemvizError, BadRunFolder
from memviz.evaluate.quality import CheckQuality
from memviz.evaluate.synthetic import quality as full_quality
from memviz.warmup import checkpoints
from memviz.warmup.frontier import StopRule, recommend
from memviz.warmup.run import load_warmup, run_warmup
from memviz.warmup.store import RunStore
from memviz.warmup.tracking import check_seed


def tiny(**kw):
    return tiny_warmup(**{"epochs": 8, **kw})


def test_every_check_stores_shape_and_trend_equal_to_the_report(small_train, sample, tmp_path):
    holdout = sample[1].subset(sample[1].row_ids[:200])
    res = run_warmup(small_train, tiny(), tmp_path / "r", holdout=holdout, quality=CheckQuality)
    pc = res.per_check
    assert {"shape", "trend", "quality", "copy_share", "copy_share_low", "copy_share_high"} <= set(pc.columns)
    assert pc["shape"].between(0, 1).all() and pc["trend"].between(0, 1).all()
    # the stored figure of a check is the QualityReport of its stored rows
    store = RunStore(tmp_path / "r")
    rows = store.samples(2).drop(columns="synthetic_id")
    ref = full_quality(small_train, rows)
    assert pc.loc[pc["check"] == 2, "shape"].item() == pytest.approx(ref.shape, abs=1e-12)
    assert pc.loc[pc["check"] == 2, "trend"].item() == pytest.approx(ref.trend, abs=1e-12)
    np.testing.assert_allclose(pc["copy_share"], pc["excess"] / (1 - pc["floor"]))
    again = load_warmup(tmp_path / "r").per_check
    pd.testing.assert_frame_equal(again, pc)
    m = store.manifest()
    assert all("shape" in c and "quality_seconds" in c for c in m["checks"])
    assert m["timings"]["quality_seconds"] > 0


def test_quality_rows_subsamples_and_zero_turns_it_off(small_train):
    res = run_warmup(small_train, tiny(epochs=2, quality_rows=50), quality=CheckQuality)
    assert res.per_check["quality_rows"].tolist() == [50]
    off = run_warmup(small_train, tiny(epochs=2, quality_rows=0), quality=CheckQuality)
    assert "shape" not in off.per_check
    with pytest.raises(MemvizError, match="quality_rows"):
        tiny(quality_rows=-1).resolved(100)


@pytest.mark.parametrize("rule, kept", [("all", [0, 1, 2, 3]), ("every:3", [0, 3]), ("last:2", [2, 3]),
                                        ("none", [])])
def test_retention_keeps_the_checks_it_says(small_train, tmp_path, rule, kept):
    run_warmup(small_train, tiny(keep_checkpoints=rule), tmp_path / "r")
    assert checkpoints.kept(tmp_path / "r") == kept
    assert (tmp_path / "r" / "checkpoints" / "model.pt").exists()  # the resume point, whatever the rule


@pytest.mark.parametrize("rule", ["sometimes", "last:0", "every:x"])
def test_a_bad_retention_is_one_line(rule):
    with pytest.raises(MemvizError, match="keep_checkpoints"):
        tiny(keep_checkpoints=rule).resolved(100)


def test_a_check_checkpoint_samples_the_checks_rows_but_cannot_resume(small_train, tmp_path):
    from memviz.models.tabddpm import TabDDPM  # lazy: torch (memviz.models.tabddpm), an extra (train)

    cfg = tiny(n_samples=60)
    run_warmup(small_train, cfg, tmp_path / "r")
    state = checkpoints.load_checkpoint(tmp_path / "r", 1)
    assert "optimizer" not in state and state["epoch"] == 4
    model = TabDDPM.from_state_dict(state, device="cpu")
    again = model.sample(60, seed=check_seed(cfg.seed, 1))
    stored = RunStore(tmp_path / "r").samples(1).drop(columns="synthetic_id")
    pd.testing.assert_frame_equal(again.reset_index(drop=True), stored, check_dtype=False)
    with pytest.raises(MemvizError, match="weights only"):
        TabDDPM("cpu-quick", epochs=8, device="cpu", **TINY_MODEL).fit(small_train, resume_state=state)
    with pytest.raises(BadRunFolder, match="kept checks"):
        checkpoints.load_checkpoint(tmp_path / "r", 9)


def test_a_killed_run_with_retention_resumes_bit_identically(small_train, sample, tmp_path, monkeypatch):
    import memviz.models.tabddpm as tabddpm  # lazy: torch (memviz.models.tabddpm), an extra (train)

    holdout = sample[1].subset(sample[1].row_ids[:200])
    cfg = tiny(keep_checkpoints="last:2")
    full = run_warmup(small_train, cfg, tmp_path / "full", holdout=holdout, quality=CheckQuality)
    original_fit = tabddpm.TabDDPM.fit
    monkeypatch.setattr(tabddpm.TabDDPM, "fit", lambda self, table, callbacks=(), resume_state=None:
                        original_fit(self, table, list(callbacks) + [Crash(5)], resume_state))
    with pytest.raises(RuntimeError):
        run_warmup(small_train, cfg, tmp_path / "part", holdout=holdout, quality=CheckQuality)
    assert checkpoints.kept(tmp_path / "part") == [0, 1]
    monkeypatch.setattr(tabddpm.TabDDPM, "fit", original_fit)
    resumed = run_warmup(small_train, cfg, tmp_path / "part", resume=True, holdout=holdout, quality=CheckQuality)
    pd.testing.assert_frame_equal(resumed.checks, full.checks)
    cols = [c for c in full.per_check if "seconds" not in c]
    pd.testing.assert_frame_equal(resumed.per_check[cols], full.per_check[cols])
    assert checkpoints.kept(tmp_path / "part") == checkpoints.kept(tmp_path / "full") == [2, 3]
    for c in (2, 3):
        a, b = checkpoints.load_checkpoint(tmp_path / "part", c)["model"], checkpoints.load_checkpoint(tmp_path / "full", c)["model"]
        assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)


def _pc(quality, excess_low, excess=None, mem=None):
    n = len(quality)
    excess = excess_low if excess is None else excess
    return pd.DataFrame({"check": range(n), "epoch": [10 * (i + 1) for i in range(n)],
                         "mem_ratio": mem or [0.3] * n, "quality": quality, "shape": quality, "trend": quality,
                         "excess": np.array(excess) + 0.01, "excess_low": excess_low,
                         "excess_high": np.array(excess) + 0.03})


def test_the_rule_takes_the_earliest_good_enough_check_at_the_floor():
    pc = _pc([0.60, 0.85, 0.90, 0.91, 0.92], [-0.02, -0.01, -0.005, 0.04, 0.08])
    r = recommend(pc)
    assert (r.check, r.epoch, r.passed) == (2, 30, True)  # 0.90 is within 0.02 of 0.92 and at the floor
    assert r.eligible == (2, 3, 4) and "epoch 30" in r.reason and r.reason.count(".") >= 1
    assert recommend(pc, StopRule(tolerance=0.1)).check == 1
    assert recommend(pc, StopRule(tolerance=0.005)).check == 4 and not recommend(pc, StopRule(tolerance=0.005)).passed
    assert recommend(pc, StopRule(tolerance=0.005, max_excess=0.08)).passed
    assert recommend(pc, available=[0, 3, 4]).check == 3  # check 2 has no checkpoint
    assert "kept checkpoint" in recommend(pc, available=[0, 3, 4]).reason


def test_without_a_good_check_the_lowest_excess_wins_and_without_quality_the_latest_at_floor():
    pc = _pc([0.90, 0.91, 0.92], [0.05, 0.02, 0.04])
    r = recommend(pc)
    assert r.check == 1 and not r.passed and "lowest" in r.reason
    no_q = pc.drop(columns=["quality", "shape", "trend"]).assign(excess_low=[-0.01, -0.01, 0.02])
    r = recommend(no_q)
    assert r.check == 1 and "not measured" in r.reason
    no_floor = pc.drop(columns=["excess", "excess_low", "excess_high"]).assign(mem_ratio=[0.4, 0.35, 0.3])
    r = recommend(no_floor)
    assert r.check == 2 and "no floor" in r.reason
    with pytest.raises(MemvizError, match="tolerance"):
        recommend(pc, StopRule(tolerance=-1))
