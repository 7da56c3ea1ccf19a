"""Differentially private training of TabDDPM: DP-SGD with Opacus (``pip install memviz[dp]``).

Usage::

    TabDDPM("cpu-quick", epochs=200, privacy={"epsilon": 3}).fit(table)   # δ = 1 / (10 N)
    model.privacy_["epsilon_spent"]                                       # ≤ 3, within 0.01

DP-SGD (Abadi et al., CCS 2016) at every optimiser step s of S:

1. **Poisson sampling**: every training row joins the batch independently with probability
   ``q = B / N`` (B the configured batch size, N the rows), so the batch size varies
   around B (and may be 0: the step then releases noise alone);
2. **per-sample clipping**: each row's gradient ``g_i = ∇ℓ_i`` (ℓ_i its diffusion loss,
   :meth:`memviz.models.diffusion.MixedDiffusion.loss` with ``per_row=True``) is scaled to
   ``g_i · min(1, C / ‖g_i‖)`` (C = ``max_grad_norm``). The norms come from Opacus' ghost
   clipping (``GradSampleModuleFastGradientClipping``: ``‖g_i‖² = Σ_layers ‖a_i‖² ‖b_i‖²``
   from each Linear layer's input a_i and output gradient b_i, no per-sample gradient is
   materialised), then a second backward pass of ``Σ_i c_i ℓ_i`` gives the clipped sum;
3. **noise**: ``ĝ = (Σ_i c_i g_i + N(0, σ² C² I)) / B``, then the AdamW step (AdamW, its
   weight decay and the learning-rate schedule are post-processing of ĝ).

σ (the noise multiplier) is the smallest that keeps ε(σ, q, S, δ) ≤ the target ε, found by
Opacus' ``get_noise_multiplier`` (bisection to ``EPSILON_TOLERANCE``), with the RDP accountant
(Mironov 2017, the default: an upper bound) or the PRV accountant (Gopi et al. 2021: tighter,
its upper estimate to ``eps_error`` 0.01). ``epsilon_spent`` is the accountant's ε after the
steps actually taken (below the target when training stopped early).

What the guarantee covers: the network's weights, so every table sampled from them
(post-processing), against an attacker who knows everything but one training row and the
training's randomness. It does **not** cover the column transforms, which are fitted on the
training rows without noise (:mod:`memviz.models.transforms`: each numerical column's
quantiles, minimum and maximum, each categorical column's list of categories): a rare
category or an extreme value can be read from the generated rows whatever ε. The Poisson
draws and the noise come from their own generator, seeded from the operating system's
entropy (never stored in a manifest); ``noise_seed`` makes a run repeatable and then assumes
that seed stays secret. The run folder holds the training rows anyway.

Refused in one line (:func:`plan`), before any training: ε or δ out of range, δ ≥ 1/N (a
mechanism that may release one row whole is (0, 1/N)-private), an ε that no noise
multiplier below Opacus' bound (10⁶) reaches in S steps, bfloat16 autocast (``amp``: the
per-sample norms in bfloat16 would not bound each row's contribution), a layer Opacus cannot
clip per sample, leaving rows out by a data-dependent rule while training (the dynamic
threshold), resuming a run trained with other privacy settings.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import asdict, dataclass, fields

from memviz.errors import MemvizError

ACCOUNTANTS = ("rdp", "prv")
#: the bisection's precision on ε: the planned ε lies in (target − 0.01, target]
EPSILON_TOLERANCE = 0.01
#: δ = DELTA_FACTOR / N when none is given (below 1/N, the bound a private δ must stay under)
DELTA_FACTOR = 0.1


@dataclass(frozen=True)
class PrivacyConfig:
    """The (ε, δ) a private TabDDPM trains to (module docstring).

    Parameters
    ----------
    epsilon : target ε (> 0).
    delta : target δ in (0, 1/N); None: ``DELTA_FACTOR / N`` = 1 / (10 N).
    max_grad_norm : C, each row's gradient is clipped to this L2 norm (> 0).
    accountant : ``"rdp"`` (default) or ``"prv"``.
    noise_seed : seeds the Poisson draws and the noise (None: fresh entropy; see above).
    """

    epsilon: float
    delta: float | None = None
    max_grad_norm: float = 1.0
    accountant: str = "rdp"
    noise_seed: int | None = None

    @classmethod
    def parse(cls, value) -> "PrivacyConfig | None":
        """None (no privacy), a number (ε) or a dict of the fields; one-line MemvizError otherwise."""
        if value is None or isinstance(value, PrivacyConfig):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = {"epsilon": value}
        if not isinstance(value, dict):
            raise MemvizError(f"privacy: expected a number (ε) or {{epsilon, delta, max_grad_norm, accountant, "
                              f"noise_seed}}, got {type(value).__name__}")
        known = {f.name for f in fields(cls)}
        bad = [k for k in value if k not in known]
        if bad:
            raise MemvizError(f"privacy: unknown setting {bad[0]!r} (use {', '.join(sorted(known))})")
        if "epsilon" not in value:
            raise MemvizError("privacy: needs an epsilon (the target ε)")
        return cls(**value).validated()

    def validated(self) -> "PrivacyConfig":
        """The same settings, or a one-line MemvizError naming the bad one (δ against N: :func:`plan`)."""
        if not _positive(self.epsilon):
            raise MemvizError(f"privacy: epsilon must be a finite number > 0, got {self.epsilon!r}")
        if self.delta is not None and not (_positive(self.delta) and self.delta < 1):
            raise MemvizError(f"privacy: delta must be in (0, 1), got {self.delta!r}")
        if not _positive(self.max_grad_norm):
            raise MemvizError(f"privacy: max_grad_norm must be a finite number > 0, got {self.max_grad_norm!r}")
        if self.accountant not in ACCOUNTANTS:
            raise MemvizError(f"privacy: accountant {self.accountant!r} is not one of {', '.join(ACCOUNTANTS)}")
        if self.noise_seed is not None and (isinstance(self.noise_seed, bool) or not isinstance(self.noise_seed, int)):
            raise MemvizError(f"privacy: noise_seed must be a whole number or None, got {self.noise_seed!r}")
        return PrivacyConfig(float(self.epsilon), None if self.delta is None else float(self.delta),
                             float(self.max_grad_norm), self.accountant, self.noise_seed)

    def to_dict(self) -> dict:
        return asdict(self)

    def delta_for(self, n_rows: int) -> float:
        """δ for a table of ``n_rows`` rows: the given one, else ``DELTA_FACTOR / n_rows``."""
        return float(self.delta) if self.delta is not None else DELTA_FACTOR / max(int(n_rows), 1)


@dataclass(frozen=True)
class PrivacyPlan:
    """The noise of one private fit: σ for (q, S, δ) so that the accountant's ε ≤ the target."""

    epsilon: float              # the target
    delta: float
    noise_multiplier: float     # σ
    sample_rate: float          # q = B / N
    expected_batch_size: int    # B
    steps: int                  # S, planned
    max_grad_norm: float
    accountant: str

    def to_dict(self) -> dict:
        return asdict(self)


@functools.lru_cache(maxsize=64)          # a bisection of accountant calls (PRV: seconds); the same inputs, the same σ
def plan(config: PrivacyConfig, n_rows: int, batch_size: int, steps: int, *, amp: bool = False) -> PrivacyPlan:
    """σ for training ``steps`` steps at expected batch ``batch_size`` on ``n_rows`` rows, or a
    one-line MemvizError when no private training of that shape exists (module docstring)."""
    try:
        from opacus.accountants.utils import get_noise_multiplier
    except ImportError:
        raise MemvizError("privacy: private training needs Opacus (pip install 'memviz[dp]')") from None

    n, b, s = int(n_rows), int(batch_size), int(steps)
    delta = config.delta_for(n)
    if delta >= 1 / n:
        raise MemvizError(f"privacy: delta {delta:g} is not below 1/N = {1 / n:g} ({n:,} training rows): such a "
                          "guarantee allows releasing a training row whole; give a smaller delta (default 1/(10 N))")
    if amp:
        raise MemvizError("privacy: amp (bfloat16 autocast) cannot train privately: per-sample gradient norms in "
                          "bfloat16 would not bound each row's contribution; leave amp off")
    if s < 1:
        raise MemvizError(f"privacy: {s} optimiser steps: nothing to train")
    q = min(b, n) / n
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sigma = get_noise_multiplier(target_epsilon=config.epsilon, target_delta=delta, sample_rate=q, steps=s,
                                         accountant=config.accountant, epsilon_tolerance=EPSILON_TOLERANCE)
    except ValueError:
        raise MemvizError(f"privacy: epsilon {config.epsilon:g} cannot be reached in {s:,} steps at sample rate "
                          f"{q:.3g} and delta {delta:g}: the noise would exceed Opacus' bound; raise epsilon or "
                          "train fewer steps") from None
    return PrivacyPlan(config.epsilon, delta, float(sigma), q, min(b, n), s, config.max_grad_norm,
                       config.accountant)


@functools.lru_cache(maxsize=1024)
def epsilon_spent(p: PrivacyPlan, steps: int) -> float:
    """The accountant's ε after ``steps`` steps of the plan's σ and q (0 before the first)."""
    if steps <= 0:
        return 0.0
    from opacus.accountants import create_accountant

    acc = create_accountant(mechanism=p.accountant)
    acc.history = [(p.noise_multiplier, p.sample_rate, int(steps))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(acc.get_epsilon(delta=p.delta))


def check_module(model) -> None:
    """A network Opacus cannot clip per sample is a one-line MemvizError (its first complaint)."""
    from opacus.validators import ModuleValidator

    errors = ModuleValidator.validate(model, strict=False)
    if errors:
        raise MemvizError(f"privacy: Opacus cannot train this network privately ({' '.join(str(errors[0]).split())})")


class DPSGD:
    """DP-SGD around one TabDDPM fit (module docstring): attach, :meth:`step` each batch, :meth:`close`.

    ``model`` the denoiser, ``optimizer`` its AdamW, ``generator`` the Poisson draws' and the
    noise's (on the model's device).
    """

    def __init__(self, model, optimizer, p: PrivacyPlan, generator):
        from opacus.grad_sample import GradSampleModuleFastGradientClipping
        from opacus.optimizers import DPOptimizerFastGradientClipping

        check_module(model)
        self.model, self.plan, self.generator = model, p, generator
        model.inplace = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # "strict=False": the one buffer is the constant frequencies
            self.gsm = GradSampleModuleFastGradientClipping(model, batch_first=True, loss_reduction="mean",
                                                             strict=False, max_grad_norm=p.max_grad_norm,
                                                             use_ghost_clipping=True)
        self.optimizer = DPOptimizerFastGradientClipping(optimizer, noise_multiplier=p.noise_multiplier,
                                                         max_grad_norm=p.max_grad_norm,
                                                         expected_batch_size=p.expected_batch_size,
                                                         loss_reduction="mean", generator=generator)

    def batch(self, n: int, device):
        """The rows of one Poisson batch: positions ``[b]`` with each row in independently at rate q."""
        import torch

        keep = torch.rand(n, generator=self.generator, device=device) < self.plan.sample_rate   # [N]
        return keep.nonzero().squeeze(1)

    def step(self, row_loss_fn, n_rows: int):
        """One DP-SGD step; ``row_loss_fn()`` gives ``(ℓ [b], L_gauss, L_multi)`` of the batch
        (``n_rows`` = b). Returns ``(mean loss, L_gauss, L_multi)`` as tensors."""
        import torch
        from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping

        opt = self.optimizer
        opt.zero_grad(set_to_none=True)
        if n_rows == 0:        # an empty Poisson batch: the step releases the noise alone
            for p in opt.params:
                p.grad = torch.zeros_like(p)
            opt.step()
            zero = torch.zeros((), device=opt.params[0].device)
            return zero, zero, zero
        rows, l_gauss, l_multi = row_loss_fn()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # "full backward hook ... no inputs require gradients"
            DPTensorFastGradientClipping(self.gsm, opt, rows, "mean").backward()
        opt.step()
        return rows.detach().mean(), l_gauss, l_multi

    def close(self) -> None:
        """Remove the hooks (sampling and a later fit see the plain network)."""
        self.gsm.remove_hooks()
        for m in self.model.modules():
            if hasattr(m, "activations"):
                del m.activations
        self.model.inplace = True


def _positive(x) -> bool:
    try:
        return not isinstance(x, bool) and math.isfinite(float(x)) and float(x) > 0
    except (TypeError, ValueError):
        return False
