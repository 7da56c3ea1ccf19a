"""The dynamic threshold: the rows left out of each epoch's batches equal the schedule
p(e) = p0 · ½ (1 + cos(π e / E)), they are the top of the DynamicCut score so far, and its budget is stated."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from memviz.dynamics.dynamiccut import rank_by_score
from memviz.errors import MemvizError
from memviz.mitigate.dynamic import DynamicThreshold, DynamicThresholdCallback, left_out_count, share
from memviz.models.callbacks import Callback
from memviz.models.tabddpm import TabDDPM
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 40}


@pytest.fixture(scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def keyed_table(n=160, seed=0):
    """An integer key with gaps as row_id, a unique continuous column (so each row's model-space values
    name it), a category with a missing value, a label not named like Adult's."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"acct": np.sort(rng.choice(5 * n, n, replace=False)) + 3, "u": rng.permutation(n) + 0.5,
                       "v": rng.normal(size=n), "g": rng.choice(["a", "b", None], n).astype(object),
                       "churned": rng.choice(["yes", "no"], n)})
    schema = Schema(numerical=("u", "v"), categorical=("g",), target="churned", task="binary")
    return table_from_frame(df, schema, row_id_column="acct")


class BatchSpy(Callback):
    """Records, per epoch, the training positions that went into its batches (from the model-space rows)."""

    def __init__(self, table):
        self.table, self.seen, self.epoch = table, {}, 1

    def on_fit_start(self, model):
        x_num, _ = model.transform_.transform(self.table.data.loc[:, list(self.table.schema.columns)])
        where = {float(v): i for i, v in enumerate(x_num[:, 0])}
        assert len(where) == len(self.table)                         # the unique column names each row
        loss = model.diffusion_.loss

        def spy(net, x, codes, *args, **kw):
            self.seen.setdefault(self.epoch, []).extend(where[float(v)] for v in x[:, 0].tolist())
            return loss(net, x, codes, *args, **kw)

        model.diffusion_.loss = spy

    def on_epoch_end(self, model, epoch, logs):
        self.epoch = epoch + 1


def test_the_rows_left_out_of_each_epoch_equal_the_schedule():
    table = keyed_table()
    n, E, m = len(table), 12, 3
    dyn = DynamicThresholdCallback(table, {"p0": 0.25, "check_every": m, "n_samples": 120}, seed=5, device="cpu")
    spy = BatchSpy(table)
    TabDDPM(epochs=E, seed=1, device="cpu", **TINY).fit(table, callbacks=[spy, dyn])
    assert dyn.end == E and len(dyn.schedule) == E
    for s in dyn.schedule:
        epoch, e = s["epoch"], s["finished"]
        checks = e // m if e < E else (E - 1) // m                  # checks scored before this epoch
        expect = left_out_count(e, 0.25, E, n) if checks else 0
        assert s["check"] == checks and s["n_left_out"] == expect, s
        assert s["share"] == pytest.approx(0.25 * 0.5 * (1 + math.cos(math.pi * e / E)))
        out = dyn.left_out.get(epoch, np.empty(0, dtype=np.int64))
        assert out.size == expect
        seen = np.asarray(spy.seen[epoch])
        assert len(seen) == len(set(seen.tolist())) == n - expect     # every kept row once, no left-out row
        assert set(seen.tolist()) == set(range(n)) - set(out.tolist())
        if expect:                                                   # the top of DynamicCut's score so far
            a = np.stack(dyn.auc[:checks], axis=1)
            k = min(3, checks)
            score = np.sort(a, axis=1)[:, checks - k:].mean(axis=1)
            assert np.array_equal(out, np.sort(rank_by_score(score, table.row_ids.to_numpy()
                                                         if hasattr(table.row_ids, "to_numpy")
                                                         else np.asarray(table.row_ids))[:expect]))
    b = dyn.budget()
    assert b["row_epochs_left_out"] == sum(s["n_left_out"] for s in dyn.schedule) > 0
    assert b["rows_left_out"] == len(np.unique(np.concatenate(list(dyn.left_out.values()))))
    assert b["checks"] == (E - 1) // m and b["end"] == E


def test_the_schedule_decays_from_p0_to_zero_and_a_steps_budget_trains_its_steps():
    assert share(0, 0.1, 100) == pytest.approx(0.1) and share(50, 0.1, 100) == pytest.approx(0.05)
    assert share(100, 0.1, 100) == pytest.approx(0.0, abs=1e-18) and share(150, 0.1, 100) == pytest.approx(0.0)
    assert left_out_count(0, 0.1, 100, 1000) == 100 and left_out_count(100, 0.1, 100, 1000) == 0
    table = keyed_table(120, 2)
    dyn = DynamicThresholdCallback(table, {"check_every": 2, "n_samples": 60}, seed=0, device="cpu")
    model = TabDDPM(steps=30, seed=0, device="cpu", **TINY).fit(table, callbacks=[dyn])
    assert model.step_ == 30                                         # equal optimiser steps, more epochs
    assert dyn.end == 10 and model.epoch_ >= 10
    assert sum(math.ceil((len(table) - s["n_left_out"]) / 40) for s in dyn.schedule) >= 30


def test_bad_settings_are_one_line():
    for bad, words in (({"p0": 1.0}, "p0"), ({"end": 0}, "end"), ({"k": 0}, "k"), ({"q": 1}, "unknown")):
        with pytest.raises(MemvizError, match=words) as exc:
            DynamicThreshold.parse(bad)
        assert "\n" not in str(exc.value)
