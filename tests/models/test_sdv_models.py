"""CTGAN / TVAE behind memviz's generator interface (tiny tables, 2 epochs)."""
import contextlib
import io
import pickle
import types
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from memviz.compare.cell import CellReporter
from memviz.errors import MemvizError
from memviz.models import make_model
from memviz.models.callbacks import STOP, Callback
from memviz.models.sdv_models import DEFAULT_EPOCHS, SDVGenerator
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema

KINDS = ("ctgan", "tvae")


def tiny_table(n=80, seed=0):
    rng = np.random.default_rng(seed)
    color = np.where(rng.random(n) < 0.3, None, rng.choice(["red", "green", "blue"], n))
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "score": np.where(rng.random(n) < 0.2, np.nan, rng.normal(0, 1, n).round(3)),
        "color": pd.Categorical(color, categories=["red", "green", "blue", "unused"]),
        "flag": rng.random(n) < 0.5,
        "level": rng.integers(0, 3, n),
        "label": rng.choice(["yes", "no"], n),
    })
    schema = Schema(numerical=("age", "score"), categorical=("color", "flag", "level"),
                    target="label", task="binary")
    return table_from_frame(df, schema, source="tiny")


class Recorder(Callback):
    def __init__(self):
        self.calls = []

    def on_fit_start(self, model):
        self.calls.append(("start",))

    def on_epoch_end(self, model, epoch, logs):
        self.calls.append(("epoch", epoch, logs.get("loss"), model.epoch_))

    def on_fit_end(self, model):
        self.calls.append(("end",))


@pytest.mark.parametrize("kind", KINDS)
def test_sample_keeps_columns_dtypes_categories_and_missing(kind):
    table = tiny_table()
    model = SDVGenerator(kind=kind, epochs=2, device="cpu").fit(table)
    out = model.sample(500, seed=0)
    assert list(out.columns) == list(table.schema.columns)
    assert len(out) == 500 and isinstance(out.index, pd.RangeIndex)
    for col in table.schema.columns:
        assert out[col].dtype == table.data[col].dtype, col
    assert list(out["color"].cat.categories) == ["red", "green", "blue", "unused"]
    # missing categoricals come back as real NaN, not as a string
    assert out["color"].isna().sum() > 0
    assert set(out["color"].dropna().astype(str)) <= {"red", "green", "blue"}
    assert set(out["label"].dropna()) <= {"yes", "no"} and not out["label"].isna().any()
    assert set(out["level"]) <= {0, 1, 2}
    assert out["score"].isna().sum() > 0 and out["age"].between(18, 79).all()


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_model_and_explicit_sample_seeds(kind):
    table = tiny_table()
    a = SDVGenerator(kind=kind, epochs=2, seed=3, device="cpu").fit(table)
    b = SDVGenerator(kind=kind, epochs=2, seed=3, device="cpu").fit(table)
    pd.testing.assert_frame_equal(a.sample(100, seed=5), b.sample(100, seed=5))
    # seed=None: a stream seeded at fit time, reproducible as a sequence, fresh at each call
    s1, s2 = a.sample(100), a.sample(100)
    pd.testing.assert_frame_equal(s1, b.sample(100))
    assert not s1.equals(s2)
    # an explicit seed does not depend on earlier calls
    pd.testing.assert_frame_equal(a.sample(100, seed=5), b.sample(100, seed=5))
    assert not a.sample(100, seed=5).equals(a.sample(100, seed=6))


def test_other_seed_other_model():
    table = tiny_table()
    a = SDVGenerator(kind="tvae", epochs=2, seed=0, device="cpu").fit(table)
    b = SDVGenerator(kind="tvae", epochs=2, seed=1, device="cpu").fit(table)
    assert not a.sample(100, seed=0).equals(b.sample(100, seed=0))


def test_fit_leaves_global_random_state_and_output_alone():
    table = tiny_table()
    np.random.seed(123)
    torch.manual_seed(123)
    np_before, torch_before = np.random.get_state()[1].copy(), torch.get_rng_state().clone()
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(buf):
        warnings.simplefilter("always")
        model = SDVGenerator(kind="ctgan", epochs=2, device="cpu").fit(table)
        model.sample(50)
    assert np.array_equal(np.random.get_state()[1], np_before)
    assert torch.equal(torch.get_rng_state(), torch_before)
    assert buf.getvalue() == ""
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("kind", KINDS)
def test_callbacks_start_every_epoch_end(kind):
    """Issue 20 item 3: one on_epoch_end per epoch, while SDV trains (it used to be one call after the fit)."""
    rec = Recorder()
    model = SDVGenerator(kind=kind, epochs=3, device="cpu").fit(tiny_table(), callbacks=[rec])
    assert [c[0] for c in rec.calls] == ["start", "epoch", "epoch", "epoch", "end"]
    epochs = [c for c in rec.calls if c[0] == "epoch"]
    assert [c[1] for c in epochs] == [1, 2, 3] and [c[3] for c in epochs] == [1, 2, 3]  # model.epoch_ follows
    assert all(np.isfinite(c[2]) for c in epochs)
    assert model.epoch_ == 3 and epochs[-1][2] == model.loss_


class StopAfter(Recorder):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def on_epoch_end(self, model, epoch, logs):
        super().on_epoch_end(model, epoch, logs)
        return STOP if epoch >= self.n else None


@pytest.mark.parametrize("kind", KINDS)
def test_stop_ends_the_fit_after_that_epoch(kind):
    rec = StopAfter(2)
    model = SDVGenerator(kind=kind, epochs=6, device="cpu").fit(tiny_table(), callbacks=[rec])
    assert [c[1] for c in rec.calls if c[0] == "epoch"] == [1, 2]
    assert model.epoch_ == 2 and rec.calls[-1] == ("end",)
    assert len(model.sample(10, seed=0)) == 10


def test_a_compare_cell_of_ctgan_reports_each_epoch(monkeypatch):
    """The Compare page's in-cell events (cell_epoch, as TabDDPM's) arrive per epoch for CTGAN."""
    seen = []
    ctx = types.SimpleNamespace(progress=seen.append)
    spec = types.SimpleNamespace(method="baseline", model="ctgan", seed=0)
    say = CellReporter(ctx, spec, min_interval=0.0)
    SDVGenerator(kind="ctgan", epochs=4, device="cpu").fit(tiny_table(), callbacks=[say])
    assert [(e["event"], e["epoch"], e["epochs"]) for e in seen] == [("cell_epoch", i, 4) for i in range(5)]
    assert all(e["model"] == "ctgan" for e in seen)
    seen.clear()  # the kind's default epochs (epochs=None) are known to the cell before the first epoch
    monkeypatch.setitem(DEFAULT_EPOCHS, "tvae", 3)
    say = CellReporter(ctx, spec, min_interval=0.0)
    SDVGenerator(kind="tvae", device="cpu").fit(tiny_table(), callbacks=[say])
    assert [(e["epoch"], e["epochs"]) for e in seen] == [(i, 3) for i in range(4)]


def test_other_threads_and_other_uses_of_tqdm_are_untouched():
    import ctgan.synthesizers.ctgan as loop  # lazy: ctgan, an extra (sdv)

    rec = Recorder()
    SDVGenerator(kind="ctgan", epochs=1, device="cpu").fit(tiny_table(), callbacks=[rec])
    bar = loop.tqdm(range(3), disable=True)  # no fit in progress: ctgan's own tqdm
    assert type(bar).__name__ == "tqdm" and list(bar) == [0, 1, 2]


def test_regression_target_and_make_model():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "c": rng.choice(["a", "b"], 60), "y": rng.normal(size=60)})
    table = table_from_frame(df, Schema(numerical=("x",), categorical=("c",), target="y", task="regression"))
    model = make_model("tvae", epochs=2, device="cpu")
    assert isinstance(model, SDVGenerator) and model.kind == "tvae"
    out = model.fit(table).sample(30, seed=0)
    assert list(out.columns) == ["x", "c", "y"]
    assert out["y"].dtype == np.float64 and out["y"].notna().all()
    assert len(model.sample(0)) == 0


@pytest.mark.parametrize("params, match", [
    ({"kind": "gan"}, "kind"),
    ({"kind": "ctgan", "epochs": 0}, "epochs"),
    ({"kind": "ctgan", "batch_size": 25}, "pac"),
    ({"kind": "tvae", "device": "tpu"}, "device"),
])
def test_bad_parameters_are_one_line_errors(params, match):
    with pytest.raises(MemvizError, match=match):
        SDVGenerator(**params).fit(tiny_table())


def test_cuda_without_gpu_and_sample_before_fit():
    if not torch.cuda.is_available():
        with pytest.raises(MemvizError, match="CUDA"):
            SDVGenerator(kind="tvae", device="cuda").fit(tiny_table())
    with pytest.raises(MemvizError, match="before fit"):
        SDVGenerator(kind="tvae").sample(5)


def test_fitted_model_pickles():
    model = SDVGenerator(kind="ctgan", epochs=2, device="cpu").fit(tiny_table())
    clone = pickle.loads(pickle.dumps(model))
    pd.testing.assert_frame_equal(clone.sample(50, seed=1), model.sample(50, seed=1))
