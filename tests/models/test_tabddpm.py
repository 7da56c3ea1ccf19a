"""TabDDPM: schema round trip, reproducibility, callbacks, checkpoint/resume, the maths."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from memviz.errors import MemvizError
from memviz.models.callbacks import STOP, Callback
from memviz.models.diffusion import _TABLE, MixedDiffusion, cosine_betas
from memviz.models.tabddpm import PRESETS, TabDDPM, TabDDPMConfig
from memviz.models.transforms import TabularTransform, n_quantiles_for
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 64, "epochs": 3}


pytestmark = pytest.mark.usefixtures("one_thread")


# ------------------------------------------------------------------ tables
def mixed_table(n=200, seed=0):
    """Every kind of column: int/float numericals (one with NaN), text with NaN, int codes,
    bool, pandas category, float codes, and a text target."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    income = rng.lognormal(10, 1, n)
    income[rng.random(n) < 0.1] = np.nan
    city = rng.choice(["Paris", "Lyon", "Nice"], n).astype(object)
    city[rng.random(n) < 0.2] = np.nan
    df = pd.DataFrame({
        "age": age.astype(np.int64),
        "income": income,
        "city": city,
        "edu": rng.choice([1, 2, 3, 4], n).astype(np.int64),
        "flag": rng.random(n) < 0.3,
        "tier": pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "mid", "hi"]),
        "grade": rng.choice([1.0, 2.0], n),
        "label": np.where(age + rng.normal(0, 10, n) > 50, ">50", "<=50").astype(object),
    })
    schema = Schema(numerical=("age", "income"), categorical=("city", "edu", "flag", "tier", "grade"),
                    target="label", task="binary")
    return table_from_frame(df, schema)


def numeric_table(n=200, seed=0, target=True):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n)
    df = pd.DataFrame({"x": x, "y": 2 * x + rng.normal(0, 0.3, n), "k": rng.integers(0, 100, n)})
    if target:
        return table_from_frame(df, Schema(numerical=("x", "k"), categorical=(), target="y", task="regression"))
    return table_from_frame(df, Schema(numerical=("x", "y", "k"), categorical=()))


def categorical_table(n=300, seed=0, p_major=0.85):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": np.where(rng.random(n) < p_major, "major", "minor").astype(object),
                       "b": rng.choice([10, 20, 30], n).astype(np.int64),
                       "c": rng.choice(["x", "y"], n).astype(object)})
    return table_from_frame(df, Schema(numerical=(), categorical=("a", "b"), target="c", task="binary"))


def assert_like_table(df: pd.DataFrame, table, n: int):
    assert list(df.columns) == list(table.schema.columns)
    assert len(df) == n
    for col in table.schema.columns:
        assert df[col].dtype == table.data[col].dtype, col
    for col in table.schema.distance_categorical:
        seen = set(table.data[col].dropna().tolist())
        assert set(df[col].dropna().tolist()) <= seen, col
        if not table.data[col].isna().any():
            assert not df[col].isna().any(), col
    for col in table.schema.distance_numerical:
        v = df[col].to_numpy(dtype=float)
        assert np.isfinite(v).all(), col
        assert (v >= table.data[col].min()).all() and (v <= table.data[col].max()).all(), col


# ------------------------------------------------------------ round trip
def test_fit_sample_keeps_schema_dtypes_and_categories():
    table = mixed_table()
    df = TabDDPM(**TINY).fit(table).sample(150, seed=0)
    assert_like_table(df, table, 150)
    assert (df["age"] == np.round(df["age"])).all()               # integer column: whole numbers
    assert isinstance(df["edu"].iloc[0], (int, np.integer))        # integer-coded category stays int
    assert df["flag"].dtype == bool
    assert list(df["tier"].cat.categories) == ["lo", "mid", "hi"]  # pandas category dtype kept
    assert set(df["label"]) <= {">50", "<=50"}


def test_missing_category_is_sampled_back_as_nan():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"v": rng.normal(size=300),
                       "c": np.where(rng.random(300) < 0.5, None, "filled").astype(object)})
    table = table_from_frame(df, Schema(numerical=("v",), categorical=("c",)))
    out = TabDDPM(**{**TINY, "epochs": 10}).fit(table).sample(300, seed=0)
    share = out["c"].isna().mean()
    assert 0.2 < share < 0.8
    assert set(out["c"].dropna()) == {"filled"}


@pytest.mark.parametrize("target", [True, False])
def test_only_numerical_columns(target):
    table = numeric_table(target=target)
    df = TabDDPM(**TINY).fit(table).sample(50, seed=0)
    assert_like_table(df, table, 50)
    assert df["k"].dtype == np.int64


def test_only_categorical_columns():
    table = categorical_table()
    df = TabDDPM(**TINY).fit(table).sample(80, seed=0)
    assert_like_table(df, table, 80)


def test_sample_zero_rows_and_small_batches():
    table = mixed_table()
    model = TabDDPM(**TINY).fit(table)
    assert_like_table(model.sample(0, seed=0), table, 0)
    assert_like_table(model.sample(25, seed=0, batch_size=7), table, 25)


# ------------------------------------------------------------ randomness
def test_same_seed_same_rows_and_same_training():
    table = mixed_table()
    a = TabDDPM(**TINY, seed=3).fit(table)
    b = TabDDPM(**TINY, seed=3).fit(table)
    assert a.loss_history_ == b.loss_history_
    pd.testing.assert_frame_equal(a.sample(60, seed=5), b.sample(60, seed=5))
    pd.testing.assert_frame_equal(a.sample(60, seed=5), a.sample(60, seed=5))
    assert not a.sample(60, seed=5).equals(a.sample(60, seed=6))
    assert TabDDPM(**TINY, seed=4).fit(table).loss_history_ != a.loss_history_


def test_global_torch_rng_is_never_used():
    table = mixed_table()
    before = torch.random.get_rng_state()
    TabDDPM(**{**TINY, "dropout": 0.2}).fit(table).sample(30, seed=0)
    assert torch.equal(before, torch.random.get_rng_state())


class Recorder(Callback):
    def __init__(self, stop_at=None, sample_each_epoch=False):
        self.events, self.stop_at, self.sample_each_epoch = [], stop_at, sample_each_epoch

    def on_fit_start(self, model):
        self.events.append(("start", model.epoch_))

    def on_epoch_end(self, model, epoch, logs):
        assert model.epoch_ == epoch and math.isfinite(logs["loss"])
        self.events.append(("epoch", epoch))
        if self.sample_each_epoch:
            model.sample(20, seed=epoch)
        return STOP if epoch == self.stop_at else None

    def on_fit_end(self, model):
        self.events.append(("end", model.epoch_))


def test_callbacks_get_every_epoch_and_stop_is_honoured():
    table = mixed_table()
    rec = Recorder()
    TabDDPM(**{**TINY, "epochs": 4}).fit(table, callbacks=[rec])
    assert rec.events == [("start", 0), ("epoch", 1), ("epoch", 2), ("epoch", 3), ("epoch", 4), ("end", 4)]
    rec = Recorder(stop_at=2)
    model = TabDDPM(**{**TINY, "epochs": 6}).fit(table, callbacks=[rec])
    assert rec.events[-1] == ("end", 2) and model.epoch_ == 2 and len(model.loss_history_) == 2


def test_sampling_inside_a_callback_leaves_training_untouched():
    table = mixed_table()
    params = {**TINY, "epochs": 4, "dropout": 0.1}
    plain = TabDDPM(**params).fit(table)
    watched = TabDDPM(**params).fit(table, callbacks=[Recorder(sample_each_epoch=True)])
    assert plain.loss_history_ == watched.loss_history_
    pd.testing.assert_frame_equal(plain.sample(40, seed=1), watched.sample(40, seed=1))


# ------------------------------------------------------------ checkpoints
class SaveAt(Callback):
    def __init__(self, epoch, path, stop=False):
        self.epoch, self.path, self.stop = epoch, path, stop

    def on_epoch_end(self, model, epoch, logs):
        if epoch == self.epoch:
            torch.save(model.state_dict(), self.path)
            return STOP if self.stop else None
        return None


def _plain_data(obj) -> bool:
    if isinstance(obj, dict):
        return all(isinstance(k, (str, int)) and _plain_data(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return all(_plain_data(v) for v in obj)
    return obj is None or isinstance(obj, (str, int, float, bool, torch.Tensor))


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_resume_equals_uninterrupted_training(tmp_path, dropout):
    table = mixed_table()
    params = {**TINY, "epochs": 5, "dropout": dropout}
    full = TabDDPM(**params).fit(table)
    path = tmp_path / "state.pt"
    first = TabDDPM(**params).fit(table, callbacks=[SaveAt(2, path, stop=True)])
    assert first.epoch_ == 2
    state = torch.load(path, weights_only=True)
    assert _plain_data(state)
    rec = Recorder()
    resumed = TabDDPM(**params).fit(table, callbacks=[rec], resume_state=state)
    assert [e for k, e in rec.events if k == "epoch"] == [3, 4, 5]
    assert resumed.loss_history_ == full.loss_history_
    for a, b in zip(full.model_.state_dict().values(), resumed.model_.state_dict().values()):
        assert torch.equal(a, b)
    pd.testing.assert_frame_equal(full.sample(50, seed=9), resumed.sample(50, seed=9))


def test_from_state_dict_samples_like_the_original(tmp_path):
    table = mixed_table()
    model = TabDDPM(**TINY).fit(table)
    torch.save(model.state_dict(), tmp_path / "s.pt")
    state = torch.load(tmp_path / "s.pt", weights_only=True)
    # same device kind: the same rows for the same seed
    loaded = TabDDPM.from_state_dict(state, device=model.device_.type)
    assert loaded.epoch_ == model.epoch_ and loaded.config_ == model.config_
    pd.testing.assert_frame_equal(model.sample(40, seed=2), loaded.sample(40, seed=2))
    # a GPU-trained model also samples on the CPU (other random streams, same columns)
    on_cpu = TabDDPM.from_state_dict(state, device="cpu")
    assert next(on_cpu.model_.parameters()).device.type == "cpu"
    assert list(on_cpu.sample(40, seed=2).columns) == list(table.schema.columns)


def test_resume_refuses_another_table_or_architecture():
    table = mixed_table()
    state = TabDDPM(**TINY).fit(table).state_dict()
    with pytest.raises(MemvizError, match="another table"):
        TabDDPM(**TINY).fit(mixed_table(seed=1), resume_state=state)
    with pytest.raises(MemvizError, match="layers"):
        TabDDPM(**{**TINY, "layers": (16,)}).fit(table, resume_state=state)


# ------------------------------------------------------------ learning
def test_loss_goes_down_on_a_simple_table():
    table = numeric_table(n=400)
    model = TabDDPM(**{**TINY, "epochs": 25, "n_timesteps": 20}).fit(table)
    h = model.loss_history_
    assert np.mean(h[-5:]) < 0.8 * np.mean(h[:3])


def test_dominant_class_frequency_is_reproduced():
    table = categorical_table(n=400, p_major=0.85)
    model = TabDDPM(layers=(64, 64), dim_t=32, n_timesteps=20, batch_size=64, epochs=25).fit(table)
    share = (model.sample(1000, seed=0)["a"] == "major").mean()
    assert abs(share - 0.85) < 0.08


# ------------------------------------------------------------ lean loop
def test_one_host_sync_per_epoch_and_none_while_sampling(monkeypatch):
    table = mixed_table()
    model = TabDDPM(**{**TINY, "epochs": 3, "batch_size": 32})       # 7 steps per epoch
    calls = []
    for name in ("item", "tolist", "cpu", "numpy"):
        original = getattr(torch.Tensor, name)

        def counted(self, *a, _name=name, _orig=original, **k):
            calls.append(_name)
            return _orig(self, *a, **k)
        monkeypatch.setattr(torch.Tensor, name, counted)
    model.fit(table)
    fit_calls = len(calls)
    assert fit_calls <= 3 + 2            # one loss read per epoch (+ setup)
    calls.clear()
    model.diffusion_.sample(model.model_, 64, torch.Generator(device=model.device_).manual_seed(0))
    assert calls == []


# ------------------------------------------------------------ maths
def test_multinomial_term_matches_the_log_space_reference():
    """L_t from our probability-space code equals Hoogeboom/TabDDPM's log-space formulas."""
    sizes, T, B = [3, 1, 5, 2], 20, 64
    d = MixedDiffusion(0, sizes, T, "cpu")
    g = torch.Generator().manual_seed(0)
    t = torch.randint(0, T, (B,), generator=g)
    t[:5] = 0
    codes0 = torch.stack([torch.randint(0, k, (B,), generator=g) for k in sizes], 1)
    codest = torch.stack([torch.randint(0, k, (B,), generator=g) for k in sizes], 1)
    logits = torch.randn(B, d.seg.width, generator=g) * 3
    x0, xt = d.seg.onehot(codes0), d.seg.onehot(codest)
    rows = d.table[t]
    ours = d._vb_term(logits, x0, xt, {n: rows[:, j:j + 1] for j, n in enumerate(_TABLE)}, t == 0)

    betas = torch.tensor(cosine_betas(T))
    log_a, log_1ma = torch.log(1 - betas), torch.log(betas)
    log_ca = torch.cumsum(log_a, 0)
    log_1mca = torch.log(-torch.expm1(log_ca))

    def posterior(log_x0, log_xt, tt, k):   # log q(x_{t-1} | x_t, x_0), reference form
        ev = torch.logaddexp(log_x0 + log_ca[(tt - 1).clamp(min=0)], log_1mca[(tt - 1).clamp(min=0)] - math.log(k))
        ev = torch.where(tt == 0, log_x0, ev)
        u = ev + torch.logaddexp(log_xt + log_a[tt], log_1ma[tt] - math.log(k))
        return u - torch.logsumexp(u, 1, keepdim=True)

    kl, nll, o = torch.zeros(B, dtype=torch.float64), torch.zeros(B, dtype=torch.float64), 0
    for k in sizes:
        lx0 = torch.log(x0[:, o:o + k].double().clamp(min=1e-30))
        lxt = torch.log(xt[:, o:o + k].double().clamp(min=1e-30))
        lt = posterior(lx0, lxt, t[:, None], k)
        lm = posterior(torch.log_softmax(logits[:, o:o + k].double(), 1), lxt, t[:, None], k)
        kl += (lt.exp() * (lt - lm)).sum(1)
        nll -= (lx0.exp() * lm).sum(1)
        o += k
    ref = torch.where(t == 0, nll, kl)
    assert torch.allclose(ours.double(), ref, rtol=1e-4, atol=1e-4)

    a = float(torch.exp(log_ca[-1]))
    prior = sum((a + (1 - a) / k) * math.log(k * (a + (1 - a) / k)) + (k - 1) * (1 - a) / k * math.log(1 - a)
                for k in sizes)
    assert d.prior_kl == pytest.approx(prior, rel=1e-9, abs=1e-15)


def test_cosine_schedule_and_training_draws():
    betas = cosine_betas(50)
    assert betas.shape == (50,) and (betas > 0).all() and betas.max() <= 0.999
    assert np.all(np.diff(betas) >= 0)
    d = MixedDiffusion(0, [4], 50, "cpu")
    abar = d.coef["abar"]
    assert abar[0] > 0.99 and abar[-1] < 1e-3


def test_gumbel_max_draws_follow_the_probabilities():
    d = MixedDiffusion(0, [3, 2], 10, "cpu")
    probs = torch.tensor([[0.7, 0.2, 0.1, 0.5, 0.5]]).repeat(20000, 1)
    codes = d.seg.gumbel_codes(torch.log(probs), torch.Generator().manual_seed(0))
    share = torch.bincount(codes[:, 0], minlength=3).double() / len(codes)
    assert torch.allclose(share, torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64), atol=0.02)
    ties = torch.zeros(4, 5)                  # all equal: the first class of each block
    assert d.seg.argmax(ties).tolist() == [[0, 0]] * 4


# ------------------------------------------------------------ transforms
def test_transform_state_round_trip_and_quantile_settings(tmp_path):
    table = mixed_table(n=600)
    tf = TabularTransform.fit(table.data, table.schema)
    assert len(tf.references) == n_quantiles_for(600) == 20
    assert n_quantiles_for(100) == 10 and n_quantiles_for(10**6) == 1000
    torch.save(tf.to_state(), tmp_path / "tf.pt")
    back = TabularTransform.from_state(torch.load(tmp_path / "tf.pt", weights_only=True))
    x1, c1 = tf.transform(table.data)
    x2, c2 = back.transform(table.data)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(c1, c2)
    assert [c["name"] for c in tf.categorical][0] == "label"          # the target is the first categorical
    out = back.inverse(x2, c2)
    pd.testing.assert_series_equal(out["city"], table.data["city"].reset_index(drop=True))
    assert (np.abs(out["age"].to_numpy() - table.data["age"].to_numpy()) <= 3).mean() > 0.9
    imputed = x1[table.data["income"].isna().to_numpy(), 1]
    assert np.allclose(imputed, imputed[0])                            # missing -> the mean, one value


# ------------------------------------------------------------ contract
def test_presets_and_parameters():
    assert dataclasses.is_dataclass(TabDDPMConfig)
    paper = PRESETS["paper"]
    assert paper.layers == (1024, 2048, 2048, 1024) and paper.n_timesteps == 1000
    assert paper.lr == pytest.approx(1.81e-3, rel=1e-3) and paper.batch_size == 4096
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["cpu-quick"].epochs = 1
    model = TabDDPM("paper", epochs=7, layers=[8, 8], lr_schedule="constant")
    assert model.config.epochs == 7 and model.config.layers == (8, 8) and model.config.n_timesteps == 1000
    assert model.get_params()["preset"] == "paper"
    for bad in ({"preset": "nope"}, {"dropout": 1.5}, {"lr_schedule": "cosine"}, {"layers": ()},
                {"cat_input": "dense"}, {"n_timesteps": 0}):
        with pytest.raises(MemvizError):
            TabDDPM(**bad)
    with pytest.raises(MemvizError, match="not fitted"):
        TabDDPM().sample(3)


def test_linear_lr_decays_to_zero_and_amp_is_ignored_on_cpu():
    table = mixed_table()
    lrs = []

    class LR(Callback):
        def on_epoch_end(self, model, epoch, logs):
            lrs.append(logs["lr"])

    model = TabDDPM(**{**TINY, "epochs": 4, "lr": 1e-3}, amp=True, device="auto").fit(table, [LR()])
    assert model.device_.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert lrs == sorted(lrs, reverse=True) and lrs[-1] < 1e-3 / 4
    assert model.step_ == 4 * math.ceil(len(table) / 64)


def test_constant_columns():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"n": np.full(60, 3.5), "m": rng.normal(size=60), "c": ["only"] * 60,
                       "d": rng.choice(["a", "b"], 60).astype(object)})
    table = table_from_frame(df, Schema(numerical=("n", "m"), categorical=("c",), target="d", task="binary"))
    out = TabDDPM(**TINY).fit(table).sample(20, seed=0)
    assert (out["n"] == 3.5).all() and (out["c"] == "only").all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("amp", [False, True])
def test_cuda_fit_sample_and_resume(amp):
    table = mixed_table()
    params = {**TINY, "epochs": 4, "device": "cuda", "amp": amp}
    full = TabDDPM(**params).fit(table)
    assert next(full.model_.parameters()).is_cuda
    assert_like_table(full.sample(50, seed=0), table, 50)
    states = []

    class Keep(Callback):
        def on_epoch_end(self, model, epoch, logs):
            if epoch == 2:
                states.append(model.state_dict())
                return STOP

    TabDDPM(**params).fit(table, callbacks=[Keep()])
    resumed = TabDDPM(**params).fit(table, resume_state=states[0])
    assert resumed.loss_history_ == pytest.approx(full.loss_history_, rel=1e-5)


def test_date_categories_are_refused_in_one_line():
    df = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", "2020-01-02"] * 10), "x": np.arange(20.0)})
    table = table_from_frame(df, Schema(numerical=("x",), categorical=("d",)))
    with pytest.raises(MemvizError, match="column 'd'"):
        TabDDPM(**TINY).fit(table)


def test_state_from_another_device_kind_samples_but_does_not_resume():
    """A GPU-trained state (device_type "cuda") loads for sampling on a CPU; resuming its
    training there is refused, since CPU and CUDA random streams differ."""
    table = mixed_table()
    model = TabDDPM(**{**TINY, "device": "cpu"}).fit(table)
    state = {**model.state_dict(), "device_type": "cuda"}
    loaded = TabDDPM.from_state_dict(state, device="cpu")
    for a, b in zip(model.model_.parameters(), loaded.model_.parameters()):
        assert torch.equal(a, b)
    assert list(loaded.sample(20, seed=1).columns) == list(table.schema.columns)
    with pytest.raises(MemvizError, match="same kind of device"):
        TabDDPM(**{**TINY, "device": "cpu", "epochs": TINY["epochs"] + 1}).fit(table, resume_state=state)
