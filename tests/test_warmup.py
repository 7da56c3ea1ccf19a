import numpy as np
import pandas as pd
import pytest

from memviz.callbacks import Callback
from memviz.errors import MemvizError, RunError
from memviz.store import RunStore, list_runs
from memviz.warmup import WarmupConfig, load_warmup, run_warmup

from helpers import TINY_MODEL


def tiny(**kw):
    base = dict(epochs=6, check_every=2, seed=3, device="cpu", model_params=dict(TINY_MODEL))
    base.update(kw)
    return WarmupConfig(**base)


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
    with pytest.raises(RunError):
        run_warmup(small_train, tiny(), run)  # never overwrite a run


class Crash(Callback):
    def __init__(self, at):
        self.at = at

    def on_epoch_end(self, model, epoch, logs):
        if epoch == self.at:
            raise RuntimeError("killed")


def test_killed_run_resumes_to_the_uninterrupted_result(small_train, tmp_path, monkeypatch):
    full = run_warmup(small_train, tiny(), tmp_path / "full")
    # crash during epoch 5: checks at epochs 2 and 4 are finished and checkpointed
    import memviz.models.tabddpm as tabddpm
    original_fit = tabddpm.TabDDPM.fit

    def crashing_fit(self, table, callbacks=(), resume_state=None):
        return original_fit(self, table, list(callbacks) + [Crash(5)], resume_state)

    monkeypatch.setattr(tabddpm.TabDDPM, "fit", crashing_fit)
    with pytest.raises(RuntimeError):
        run_warmup(small_train, tiny(), tmp_path / "part")
    store = RunStore(tmp_path / "part")
    assert store.manifest()["status"] == "failed" and store.finished_checks() == [0, 1]
    monkeypatch.setattr(tabddpm.TabDDPM, "fit", original_fit)
    resumed = run_warmup(small_train, tiny(), tmp_path / "part", resume=True)
    assert resumed.status == "finished"
    pd.testing.assert_frame_equal(resumed.checks, full.checks)
    np.testing.assert_array_equal(resumed.dynamics.counts, full.dynamics.counts)


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
    with pytest.raises(RunError, match="another table"):
        run_warmup(other, tiny(epochs=2), tmp_path / "r", resume=True)
    with pytest.raises(RunError, match="seed"):
        run_warmup(small_train, tiny(epochs=2, seed=9), tmp_path / "r", resume=True)
