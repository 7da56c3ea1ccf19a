"""Private TabDDPM (DP-SGD with Opacus): ε spent against the target, per-sample clipping against a
from-scratch loop, Poisson sampling, refusals in one line, resume, tables not designed for."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("opacus")

from memviz.errors import MemvizError  # noqa: E402
from memviz.models.callbacks import STOP, Callback  # noqa: E402
from memviz.models.diffusion import MixedDiffusion, MLPDenoiser  # noqa: E402
from memviz.models.privacy import (  # noqa: E402
    DELTA_FACTOR,
    DPSGD,
    EPSILON_TOLERANCE,
    PrivacyConfig,
    PrivacyPlan,
    check_module,
    epsilon_spent,
    plan,
)
from memviz.models.tabddpm import TabDDPM  # noqa: E402
from memviz.tables.data import table_from_frame  # noqa: E402
from memviz.tables.schema import Schema  # noqa: E402
from tests.helpers import with_public_knowledge  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 32}


def credit_table(n=300, seed=0):
    """A table not shaped like Adult: an integer key with gaps, missing values in a numerical and a
    categorical column, a label named 'default_flag' with 0/1 codes."""
    rng = np.random.default_rng(seed)
    key = np.sort(rng.choice(10 * n, n, replace=False)) + 7
    limit = rng.lognormal(9, 0.7, n)
    limit[rng.random(n) < 0.08] = np.nan
    status = rng.choice(["paid", "late", "very late"], n, p=[0.7, 0.2, 0.1]).astype(object)
    status[rng.random(n) < 0.05] = np.nan
    df = pd.DataFrame({"account": key, "limit": limit, "age": rng.integers(21, 75, n), "status": status,
                       "default_flag": (rng.random(n) < 0.22).astype(np.int64)})
    return with_public_knowledge(table_from_frame(df, Schema(numerical=("limit", "age"), categorical=("status",),
                                                             target="default_flag", task="binary")))


def numeric_table(n=200, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n)
    df = pd.DataFrame({"x": x, "y": 2 * x + rng.normal(0, 0.3, n), "z": rng.normal(5, 2, n)})
    return with_public_knowledge(table_from_frame(df, Schema(numerical=("x", "y", "z"), categorical=())))


# ------------------------------------------------------------------ the accountant
@pytest.mark.parametrize("accountant", ["rdp", "prv"])
def test_epsilon_spent_is_within_the_accountants_tolerance_of_the_target(accountant):
    table = credit_table()
    m = TabDDPM(epochs=4, seed=0, device="cpu", privacy={"epsilon": 3.0, "accountant": accountant}, **TINY)
    m.fit(table)
    p = m.privacy_
    n = len(table)
    assert p["steps"] == p["steps_taken"] == m.step_ == 4 * math.ceil(n / 32)
    assert p["delta"] == pytest.approx(DELTA_FACTOR / n) and p["delta"] < 1 / n
    assert p["sample_rate"] == pytest.approx(32 / n)
    assert 3.0 - EPSILON_TOLERANCE < p["epsilon_spent"] <= 3.0
    # DP-SGD's part from Opacus' own accountant, stepped one step at a time, at its δ_sgd; plus the preprocessing's
    from opacus.accountants import create_accountant  # lazy: opacus, an extra (dp)

    acc = create_accountant(accountant)
    for _ in range(m.step_):
        acc.step(noise_multiplier=p["noise_multiplier"], sample_rate=p["sample_rate"])
    assert p["delta_sgd"] == pytest.approx(0.9 * p["delta"])
    assert acc.get_epsilon(delta=p["delta_sgd"]) == pytest.approx(p["epsilon_sgd"], rel=1e-9)
    assert p["epsilon_spent"] == pytest.approx(p["epsilon_sgd"] + p["epsilon_preprocessing"], rel=1e-12)
    assert p["epsilon_preprocessing"] == pytest.approx(0.3)   # bounds and categories public: the 3 histograms
    assert m.sample(50, seed=0).shape == (50, len(table.schema.columns))


def test_a_stopped_fit_spends_less_and_each_epoch_says_what_it_spent():
    class StopAt(Callback):
        def on_epoch_end(self, model, epoch, logs):
            return STOP if epoch == 2 else None

    m = TabDDPM(epochs=6, seed=0, device="cpu", privacy=2.0, **TINY).fit(numeric_table(), callbacks=[StopAt()])
    assert m.epoch_ == 2 and m.privacy_["steps_taken"] == m.step_ < m.privacy_["steps"]
    assert 0 < m.privacy_["epsilon_spent"] < 2.0 - EPSILON_TOLERANCE
    assert m.epsilon_at(2) == pytest.approx(m.privacy_["epsilon_spent"])
    assert m.epsilon_at(1) < m.epsilon_at(2) < m.epsilon_at(6) <= 2.0


def test_more_noise_for_a_smaller_epsilon_and_for_more_steps():
    cfg = PrivacyConfig(epsilon=1.0)
    a, b = plan(cfg, 1000, 100, 500), plan(PrivacyConfig(epsilon=10.0), 1000, 100, 500)
    c = plan(cfg, 1000, 100, 5000)
    assert a.noise_multiplier > b.noise_multiplier and c.noise_multiplier > a.noise_multiplier
    for p in (a, b, c):     # DP-SGD's part: ε_sgd = 0.9 ε (the default preprocessing share 0.1 spent by none here)
        assert p.sgd_epsilon == pytest.approx(0.9 * p.epsilon)
        assert p.sgd_epsilon - EPSILON_TOLERANCE < epsilon_spent(p, p.steps) <= p.sgd_epsilon


# ------------------------------------------------------------------ refusals, one line each
@pytest.mark.parametrize("privacy, n, words", [
    ({"epsilon": 1.0, "delta": 0.01}, 300, "not below 1/N"),            # δ ≥ 1/N
    ({"epsilon": 1e-6}, 300, "cannot be reached"),                      # no σ below Opacus' bound
])
def test_a_configuration_that_cannot_be_private_is_refused_in_one_line(privacy, n, words):
    m = TabDDPM(epochs=50, seed=0, device="cpu", privacy=privacy, **TINY)
    with pytest.raises(MemvizError) as exc:
        m.fit(credit_table(n))
    msg = str(exc.value)
    assert words in msg and "\n" not in msg and msg.startswith("privacy:")


def test_amp_and_bad_settings_are_refused_before_any_work():
    with pytest.raises(MemvizError, match="amp"):
        TabDDPM(epochs=1, device="cpu", amp=True, privacy=3, **TINY).fit(numeric_table())
    for bad, words in (({"epsilon": 0}, "epsilon"), ({"epsilon": float("inf")}, "epsilon"),
                       ({"epsilon": 1, "delta": 1.5}, "delta"), ({"epsilon": 1, "accountant": "gdp"}, "accountant"),
                       ({"epsilon": 1, "clip": 1}, "unknown setting"), ({"delta": 1e-5}, "needs an epsilon"),
                       ("3", "expected a number")):
        with pytest.raises(MemvizError, match=words) as exc:
            TabDDPM(device="cpu", privacy=bad)
        assert "\n" not in str(exc.value)


def test_a_network_opacus_cannot_clip_per_sample_is_refused():
    with pytest.raises(MemvizError, match="Opacus cannot train this network privately") as exc:
        check_module(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)))
    assert "\n" not in str(exc.value)
    check_module(MLPDenoiser(5, (8,), 4))                                  # the denoiser passes


def test_private_training_does_not_leave_rows_out():
    class LeaveOut(Callback):
        def rows_left_out(self, model, epoch):
            return [0]

    with pytest.raises(MemvizError, match="cannot leave rows out"):
        TabDDPM(epochs=1, device="cpu", privacy=3, **TINY).fit(numeric_table(), callbacks=[LeaveOut()])


# ------------------------------------------------------------------ the mechanism
def test_ghost_clipping_equals_a_loop_of_clipped_per_row_gradients():
    """With no noise, one DP-SGD step's gradient is (1/B) Σ_i g_i · min(1, C/‖g_i‖), each g_i from its
    own backward pass (the from-scratch version); the norms too."""
    torch.manual_seed(0)
    diff = MixedDiffusion(2, [3, 4], 10, torch.device("cpu"), "onehot")
    net = MLPDenoiser(diff.d_in, (16, 16), 8, 0.0, torch.Generator().manual_seed(0))
    ref = MLPDenoiser(diff.d_in, (16, 16), 8, 0.0, torch.Generator().manual_seed(0))
    ref.inplace = False
    x, codes = torch.randn(9, 2), torch.randint(0, 3, (9, 2))
    C, B = 0.05, 12                                   # a small C: most rows are clipped; B = expected batch

    p = PrivacyPlan(1.0, 1e-5, 0.0, 0.5, B, 10, C, "rdp")
    opt = torch.optim.SGD(net.parameters(), lr=1.0)
    dp = DPSGD(net, opt, p, torch.Generator().manual_seed(5))
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    before = [q.detach().clone() for q in net.parameters()]
    dp.step(lambda: diff.loss(net, x, codes, g1, g1, per_row=True), 9)
    update = [b - q.detach() for b, q in zip(before, net.parameters())]          # lr 1: the gradient
    norms = dp.gsm.per_sample_gradient_norms.clone()
    dp.close()
    rows, _, _ = diff.loss(ref, x, codes, g2, g2, per_row=True)
    expect = [torch.zeros_like(q) for q in ref.parameters()]
    ref_norms = []
    for i in range(9):
        grads = torch.autograd.grad(rows[i], list(ref.parameters()), retain_graph=True)
        norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        ref_norms.append(norm)
        for e, g in zip(expect, grads):
            e += g * min(1.0, C / (float(norm) + 1e-6))
    assert torch.allclose(norms, torch.stack(ref_norms), rtol=1e-4, atol=1e-7)
    for u, e in zip(update, expect):
        assert torch.allclose(u, e / B, rtol=1e-4, atol=1e-7)


def test_per_row_losses_average_to_the_loss():
    diff = MixedDiffusion(3, [2, 5], 10, torch.device("cpu"), "onehot")
    net = MLPDenoiser(diff.d_in, (16,), 8, 0.0, torch.Generator().manual_seed(0))
    x, codes = torch.randn(40, 3), torch.randint(0, 2, (40, 2))
    loss, lg, lm = diff.loss(net, x, codes, torch.Generator().manual_seed(1))
    rows, lg2, lm2 = diff.loss(net, x, codes, torch.Generator().manual_seed(1), per_row=True)
    assert rows.shape == (40,)
    assert torch.allclose(rows.mean(), loss, rtol=1e-5) and torch.allclose(lg, lg2) and torch.allclose(lm, lm2)


def test_poisson_batches_draw_each_row_at_the_sample_rate():
    p = PrivacyPlan(1.0, 1e-5, 1.0, 0.2, 40, 10, 1.0, "rdp")
    net = MLPDenoiser(4, (8,), 4)
    dp = DPSGD(net, torch.optim.SGD(net.parameters(), lr=0.1), p, torch.Generator().manual_seed(0))
    sizes = np.array([dp.batch(200, torch.device("cpu")).numel() for _ in range(2000)])
    dp.close()
    # Binomial(200, 0.2): mean 40, sd sqrt(200 * 0.2 * 0.8) = 5.66; the mean of 2,000 within 4 standard errors
    assert abs(sizes.mean() - 40) < 4 * 5.66 / math.sqrt(2000)
    assert abs(sizes.std() - 5.66) < 0.5


def test_an_empty_poisson_batch_still_releases_noise():
    p = PrivacyPlan(1.0, 1e-5, 1.0, 0.01, 4, 10, 1.0, "rdp")
    net = MLPDenoiser(4, (8,), 4)
    before = [q.detach().clone() for q in net.parameters()]
    dp = DPSGD(net, torch.optim.SGD(net.parameters(), lr=0.1), p, torch.Generator().manual_seed(0))
    dp.step(lambda: pytest.fail("no loss for an empty batch"), 0)
    dp.close()
    assert any(not torch.equal(b, q) for b, q in zip(before, net.parameters()))


# ------------------------------------------------------------------ state, resume, repeatability
def test_resume_continues_bit_identically_and_refuses_other_privacy_settings():
    table = credit_table(200)
    kw = dict(epochs=4, seed=2, device="cpu", privacy={"epsilon": 5.0, "noise_seed": 11}, **TINY)

    class Keep(Callback):
        def on_epoch_end(self, model, epoch, logs):
            if epoch == 2:
                self.state = model.state_dict()

    keep = Keep()
    full = TabDDPM(**kw).fit(table, callbacks=[keep])     # the transforms' noise is OpenDP's, never seeded: the
    resumed = TabDDPM(**kw).fit(table, resume_state=keep.state)   # same fit, continued from its own epoch 2
    for a, b in zip(full.model_.state_dict().values(), resumed.model_.state_dict().values()):
        assert torch.equal(a, b)
    assert resumed.privacy_["epsilon_spent"] == full.privacy_["epsilon_spent"]
    with pytest.raises(MemvizError, match="privacy"):
        TabDDPM(**{**kw, "privacy": {"epsilon": 6.0, "noise_seed": 11}}).fit(table, resume_state=keep.state)
    plain = TabDDPM(**{**kw, "privacy": None})
    with pytest.raises(MemvizError, match="privacy"):
        plain.fit(table, resume_state=keep.state)
    again = TabDDPM.from_state_dict(full.state_dict(), device="cpu")
    assert again.privacy_["epsilon_spent"] == full.privacy_["epsilon_spent"]
    assert again.model_.inplace                        # the hooks are gone: a plain network again


def test_the_noise_is_secret_unless_seeded():
    table = numeric_table(120)
    a = TabDDPM(epochs=1, seed=0, device="cpu", privacy=4, **TINY).fit(table)
    b = TabDDPM(epochs=1, seed=0, device="cpu", privacy=4, **TINY).fit(table)
    assert not torch.equal(a.model_.head.weight, b.model_.head.weight)   # fresh entropy each fit
    c = TabDDPM(epochs=1, seed=0, device="cpu", privacy={"epsilon": 4, "noise_seed": 1}, **TINY).fit(table)
    d = TabDDPM(epochs=1, seed=0, device="cpu", privacy={"epsilon": 4, "noise_seed": 1}, **TINY).fit(table)
    assert torch.equal(c.model_.head.weight, d.model_.head.weight)
    assert "noise_seed" in c.state_dict()["params"]["privacy"]


def test_plain_training_is_unchanged_by_the_privacy_code():
    """The non-private path equals the training loop as it was before privacy and rows left out
    (restated here: a randperm of the rows per epoch, batches in order, the linear schedule), bit
    for bit; privacy_ is None."""
    table = credit_table(150)
    fitted = TabDDPM(epochs=2, seed=4, device="cpu", **TINY).fit(table)
    ref = TabDDPM(epochs=0, seed=4, device="cpu", **TINY).fit(table)      # built, not trained
    x_num, codes = (torch.from_numpy(a) for a in ref.transform_.transform(table.data[list(table.schema.columns)]))
    n, bs = len(table), 32
    steps = math.ceil(n / bs)
    total, step = 2 * steps, 0
    gen, opt = ref._train_gen, ref.optimizer_
    ref.model_.train()
    for _ in range(2):
        perm = torch.randperm(n, generator=gen)
        for s in range(steps):
            idx = perm[s * bs:(s + 1) * bs]
            for group in opt.param_groups:
                group["lr"] = ref.config_.lr * (1 - step / total)
            loss, _, _ = ref.diffusion_.loss(ref.model_, x_num[idx], codes[idx], gen, gen)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
    assert fitted.privacy_ is None and fitted.epsilon_at(2) is None
    for a, b in zip(fitted.model_.state_dict().values(), ref.model_.state_dict().values()):
        assert torch.equal(a, b)
