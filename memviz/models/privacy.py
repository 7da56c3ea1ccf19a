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

What the guarantee covers: the whole pipeline from the raw training table to the generated rows: the column
transforms' statistics (bounds, quantiles, category lists) and the network's weights, so every table sampled from
them (post-processing), against an attacker who knows everything but one training row (added or removed) and the
training's randomness. The transforms' statistics are public (``bounds``, ``categories``, given by the user) or
released with OpenDP (:mod:`memviz.models.dpstats`: thresholded histograms, so that a rare category or an outlying
value never reaches the model) from ``ε_pre = preprocessing · ε``, ``δ_pre = preprocessing · δ``; DP-SGD trains to
``ε_sgd = (1 − preprocessing) · ε`` and ``δ_sgd = (1 − preprocessing) · δ``; by basic sequential composition the
model is (ε_pre + ε_sgd, δ_pre + δ_sgd)-DP, the one ε and δ reported (:func:`epsilon_spent`, :func:`guarantee`).
Assumed public: the schema (column names, kinds, dtypes), the number of training rows N, the bounds and categories
the user gives, the hyper-parameters. The Poisson draws and the noise come from their own generator, seeded from
the operating system's entropy (never stored in a manifest); ``noise_seed`` makes a run repeatable and then assumes
that seed stays secret (OpenDP's noise is never seeded). The run folder holds the training rows anyway.

Refused in one line (:func:`plan`), before any training: ε or δ out of range, δ ≥ 1/N (a
mechanism that may release one row whole is (0, 1/N)-private), an ε that no noise
multiplier below Opacus' bound (10⁶) reaches in S steps, bfloat16 autocast (``amp``: the
per-sample norms in bfloat16 would not bound each row's contribution), a layer Opacus cannot
clip per sample, leaving rows out by a data-dependent rule while training (the dynamic
threshold), resuming a run trained with other privacy settings.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import warnings
from dataclasses import asdict, dataclass, fields, replace

from memviz.errors import BadOption
from memviz.models.dpstats import COMPOSITION, PREPROCESSING_SHARE

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
    preprocessing : the share of ε and δ the column transforms' statistics spend, in [0, 1) (0: every column's
        bounds or categories public, nothing spent; :mod:`memviz.models.dpstats`).
    bounds : public bounds of numerical columns, ``{column: [low, high]}`` (given as a dict; kept as pairs).
    categories : public categories of categorical columns, ``{column: [value, ...]}`` (null: missing values).
    """

    epsilon: float
    delta: float | None = None
    max_grad_norm: float = 1.0
    accountant: str = "rdp"
    noise_seed: int | None = None
    preprocessing: float = PREPROCESSING_SHARE
    bounds: tuple = ()
    categories: tuple = ()

    @classmethod
    def parse(cls, value) -> "PrivacyConfig | None":
        """None (no privacy), a number (ε) or a dict of the fields; one-line MemvizError otherwise."""
        if value is None or isinstance(value, PrivacyConfig):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = {"epsilon": value}
        if not isinstance(value, dict):
            raise BadOption(f"privacy: expected a number (ε) or {{epsilon, delta, max_grad_norm, accountant, "
                            f"noise_seed}}, got {type(value).__name__}")
        known = {f.name for f in fields(cls)}
        bad = [k for k in value if k not in known]
        if bad:
            raise BadOption(f"privacy: unknown setting {bad[0]!r} (use {', '.join(sorted(known))})")
        if "epsilon" not in value:
            raise BadOption("privacy: needs an epsilon (the target ε)")
        return cls(**value).validated()

    def validated(self) -> "PrivacyConfig":
        """The same settings, or a one-line MemvizError naming the bad one (δ against N: :func:`plan`)."""
        if not _positive(self.epsilon):
            raise BadOption(f"privacy: epsilon must be a finite number > 0, got {self.epsilon!r}")
        if self.delta is not None and not (_positive(self.delta) and self.delta < 1):
            raise BadOption(f"privacy: delta must be in (0, 1), got {self.delta!r}")
        if not _positive(self.max_grad_norm):
            raise BadOption(f"privacy: max_grad_norm must be a finite number > 0, got {self.max_grad_norm!r}")
        if self.accountant not in ACCOUNTANTS:
            raise BadOption(f"privacy: accountant {self.accountant!r} is not one of {', '.join(ACCOUNTANTS)}")
        if self.noise_seed is not None and (isinstance(self.noise_seed, bool) or not isinstance(self.noise_seed, int)):
            raise BadOption(f"privacy: noise_seed must be a whole number or None, got {self.noise_seed!r}")
        share = self.preprocessing
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
            raise BadOption(f"privacy: preprocessing must be a share in [0, 1), got {share!r}")
        return PrivacyConfig(float(self.epsilon), None if self.delta is None else float(self.delta),
                             float(self.max_grad_norm), self.accountant, self.noise_seed, float(share),
                             public_bounds(self.bounds), public_categories(self.categories))

    def to_dict(self) -> dict:
        """Plain JSON values (bounds and categories as dicts); ``epsilon`` exactly as given."""
        d = asdict(self)
        d["bounds"] = {c: [lo, hi] for c, lo, hi in self.bounds}
        d["categories"] = {c: list(v) for c, v in self.categories}
        return d

    def split(self, n_rows: int) -> tuple[float, float, float, float]:
        """``(ε_pre, δ_pre, ε_sgd, δ_sgd)``: the preprocessing's share of (ε, δ) and DP-SGD's rest."""
        delta = self.delta_for(n_rows)
        eps_pre, delta_pre = self.epsilon * self.preprocessing, delta * self.preprocessing
        return eps_pre, delta_pre, self.epsilon - eps_pre, delta - delta_pre

    def delta_for(self, n_rows: int) -> float:
        """δ for a table of ``n_rows`` rows: the given one, else ``DELTA_FACTOR / n_rows``."""
        return float(self.delta) if self.delta is not None else DELTA_FACTOR / max(int(n_rows), 1)


@dataclass(frozen=True)
class PrivacyPlan:
    """The noise of one private fit: σ for (q, S, δ_sgd) so that the accountant's ε ≤ ε_sgd = the target less the
    preprocessing's share; ``preprocessing_epsilon`` / ``_delta``: what the transforms' releases spent (set once
    they are made, :func:`with_preprocessing`)."""

    epsilon: float              # the target, the whole pipeline's
    delta: float                # the target δ, the whole pipeline's
    noise_multiplier: float     # σ
    sample_rate: float          # q = B / N
    expected_batch_size: int    # B
    steps: int                  # S, planned
    max_grad_norm: float
    accountant: str
    sgd_epsilon: float = 0.0    # DP-SGD's target ε_sgd
    sgd_delta: float = 0.0      # DP-SGD's δ_sgd
    preprocessing_epsilon: float = 0.0   # spent by the transforms' releases (≤ ε − ε_sgd)
    preprocessing_delta: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def with_preprocessing(p: PrivacyPlan, epsilon: float, delta: float) -> PrivacyPlan:
    """The plan with what the transforms' releases spent (one line if it exceeds their share)."""
    if epsilon > p.epsilon - p.sgd_epsilon + 1e-12 or delta > p.delta - p.sgd_delta + 1e-15:
        raise BadOption(f"privacy: the preprocessing spent ({epsilon:g}, {delta:g}), over its share "
                        f"({p.epsilon - p.sgd_epsilon:g}, {p.delta - p.sgd_delta:g})")
    return replace(p, preprocessing_epsilon=float(epsilon), preprocessing_delta=float(delta))


@functools.lru_cache(maxsize=64)          # a bisection of accountant calls (PRV: seconds); the same inputs, the same σ
def plan(config: PrivacyConfig, n_rows: int, batch_size: int, steps: int, *, amp: bool = False) -> PrivacyPlan:
    """σ for training ``steps`` steps at expected batch ``batch_size`` on ``n_rows`` rows, or a
    one-line MemvizError when no private training of that shape exists (module docstring)."""
    if (missing := missing_piece()) is not None:
        raise BadOption(f"privacy: {missing}")
    from opacus.accountants.utils import get_noise_multiplier  # lazy: opacus, an extra (dp)

    n, b, s = int(n_rows), int(batch_size), int(steps)
    delta = config.delta_for(n)
    _, _, eps_sgd, delta_sgd = config.split(n)
    if delta >= 1 / n:
        raise BadOption(f"privacy: delta {delta:g} is not below 1/N = {1 / n:g} ({n:,} training rows): such a "
                        "guarantee allows releasing a training row whole; give a smaller delta (default 1/(10 N))")
    if amp:
        raise BadOption("privacy: amp (bfloat16 autocast) cannot train privately: per-sample gradient norms in "
                        "bfloat16 would not bound each row's contribution; leave amp off")
    if s < 1:
        raise BadOption(f"privacy: {s} optimiser steps: nothing to train")
    q = min(b, n) / n
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sigma = get_noise_multiplier(target_epsilon=eps_sgd, target_delta=delta_sgd, sample_rate=q, steps=s,
                                         accountant=config.accountant,
                                         epsilon_tolerance=min(EPSILON_TOLERANCE, eps_sgd / 10))
    except ValueError:
        raise BadOption(f"privacy: epsilon {config.epsilon:g} (DP-SGD's part {eps_sgd:g}) cannot be reached in "
                        f"{s:,} steps at sample rate {q:.3g} and delta {delta_sgd:g}: the noise would exceed "
                        "Opacus' bound; raise epsilon or train fewer steps") from None
    return PrivacyPlan(config.epsilon, delta, float(sigma), q, min(b, n), s, config.max_grad_norm,
                       config.accountant, eps_sgd, delta_sgd)


@functools.lru_cache(maxsize=1024)
def sgd_epsilon_spent(p: PrivacyPlan, steps: int) -> float:
    """The accountant's ε_sgd after ``steps`` steps of the plan's σ and q at δ_sgd (0 before the first)."""
    if steps <= 0:
        return 0.0
    from opacus.accountants import create_accountant  # lazy: opacus, an extra (dp)

    acc = create_accountant(mechanism=p.accountant)
    acc.history = [(p.noise_multiplier, p.sample_rate, int(steps))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(acc.get_epsilon(delta=p.sgd_delta or p.delta))


def epsilon_spent(p: PrivacyPlan, steps: int) -> float:
    """The whole pipeline's ε after ``steps`` steps: ``ε_pre + ε_sgd(steps)`` (basic sequential composition)."""
    return p.preprocessing_epsilon + sgd_epsilon_spent(p, steps)


def guarantee(p: PrivacyPlan, steps: int) -> dict:
    """The guarantee of a fit after ``steps`` steps, as every output states it: ε and δ (the totals), their parts,
    the composition, what it covers and what it assumes public."""
    eps_sgd = sgd_epsilon_spent(p, steps)
    return {"epsilon_spent": p.preprocessing_epsilon + eps_sgd, "delta_spent": p.preprocessing_delta + p.sgd_delta,
            "epsilon_preprocessing": p.preprocessing_epsilon, "delta_preprocessing": p.preprocessing_delta,
            "epsilon_sgd": eps_sgd, "delta_sgd": p.sgd_delta, "composition": COMPOSITION,
            "covers": COVERS, "assumes_public": ASSUMES_PUBLIC}


#: what the reported (ε, δ) covers and assumes public, in the words every output uses
COVERS = ("the whole pipeline: the column transforms' statistics (bounds, quantiles, categories) and the network's "
          "weights, hence every row sampled from them; add/remove-one-row neighbours")
ASSUMES_PUBLIC = ("the schema (column names, kinds, dtypes), the number of training rows, the bounds and categories "
                  "given as public, the hyper-parameters")


def check_module(model) -> None:
    """A network Opacus cannot clip per sample is a one-line MemvizError (its first complaint)."""
    from opacus.validators import ModuleValidator  # lazy: opacus, an extra (dp)

    errors = ModuleValidator.validate(model, strict=False)
    if errors:
        raise BadOption(f"privacy: Opacus cannot train this network privately ({' '.join(str(errors[0]).split())})")


class DPSGD:
    """DP-SGD around one TabDDPM fit (module docstring): attach, :meth:`step` each batch, :meth:`close`.

    ``model`` the denoiser, ``optimizer`` its AdamW, ``generator`` the Poisson draws' and the
    noise's (on the model's device).
    """

    def __init__(self, model, optimizer, p: PrivacyPlan, generator):
        from opacus.grad_sample import GradSampleModuleFastGradientClipping  # lazy: opacus, an extra (dp)
        from opacus.optimizers import DPOptimizerFastGradientClipping  # lazy: opacus, an extra (dp)

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
        import torch  # lazy: torch, an extra (train): the privacy settings are read without it

        keep = torch.rand(n, generator=self.generator, device=device) < self.plan.sample_rate   # [N]
        return keep.nonzero().squeeze(1)

    def step(self, row_loss_fn, n_rows: int):
        """One DP-SGD step; ``row_loss_fn()`` gives ``(ℓ [b], L_gauss, L_multi)`` of the batch
        (``n_rows`` = b). Returns ``(mean loss, L_gauss, L_multi)`` as tensors."""
        import torch  # lazy: torch, an extra (train): the privacy settings are read without it
        from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping  # lazy: opacus, an extra (dp)

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


def missing_piece() -> str | None:
    """None when private training can run here (Opacus and OpenDP installed), else the one line saying what to
    install: a page never offers what cannot run (found without importing either)."""
    lost = [name for name, mod in (("Opacus", "opacus"), ("OpenDP", "opendp"))
            if importlib.util.find_spec(mod) is None]
    if not lost:
        return None
    return f"private training needs {' and '.join(lost)}: pip install 'memviz[dp]'"


def public_bounds(value) -> tuple:
    """``{column: [low, high]}`` (or the pairs already kept) as ``((column, low, high), ...)``, checked."""
    items = value.items() if isinstance(value, dict) else [(c, (lo, hi)) for c, lo, hi in value or ()]
    out = []
    for col, pair in items:
        try:
            lo, hi = (float(x) for x in pair)
        except (TypeError, ValueError):
            raise BadOption(f"privacy: bounds of column {col!r}: expected [low, high], got {pair!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise BadOption(f"privacy: bounds of column {col!r}: expected finite low <= high, got {list(pair)!r}")
        out.append((str(col), lo, hi))
    return tuple(sorted(out))


def public_categories(value) -> tuple:
    """``{column: [value, ...]}`` (or the pairs already kept) as ``((column, (value, ...)), ...)``, checked."""
    items = value.items() if isinstance(value, dict) else list(value or ())
    out = []
    for col, values in items:
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
            raise BadOption(f"privacy: categories of column {col!r}: expected a non-empty list, got {values!r}")
        bad = [v for v in values if v is not None and not isinstance(v, (str, int, float, bool))]
        if bad:
            raise BadOption(f"privacy: categories of column {col!r}: {bad[0]!r} is not text, a number, a boolean "
                            "or null")
        out.append((str(col), tuple(values)))
    return tuple(sorted(out, key=lambda x: x[0]))


#: the help of every ε field (the Warm-up and Compare pages)
EPSILON_HELP = ("Train TabDDPM privately to this ε, δ = 1/(10 × training rows): (ε, δ)-differential privacy for the "
                "whole pipeline, the column transforms' statistics (released with OpenDP from 0.1 of ε and δ, or "
                "given as public in the schema) and the network (DP-SGD with Opacus, the rest), so for every table "
                "sampled from it; it assumes public the schema, the number of training rows and the bounds and "
                "categories given. Smaller is more private.")
