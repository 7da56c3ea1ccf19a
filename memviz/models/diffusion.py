"""The maths of TabDDPM: Gaussian + multinomial diffusion, and the MLP denoiser.

Notation: ``T`` steps, ``t ∈ {0..T-1}`` (0-based as in the reference code),
``β_t`` the cosine schedule, ``α_t = 1 - β_t``, ``ᾱ_t = Π_{s≤t} α_s``.

Cosine schedule (Nichol & Dhariwal 2021)::

    f(u) = cos²((u + s) / (1 + s) · π/2),  s = 0.008
    β_t = min(1 - f((t+1)/T) / f(t/T), 0.999)

Numerical part: Gaussian DDPM with ε-prediction (Ho et al. 2020)::

    x_t = √ᾱ_t x_0 + √(1-ᾱ_t) ε,            L_gauss = mean_j (ε_j - ε̂_j)²
    x̂_0 = √(1/ᾱ_t) x_t - √(1/ᾱ_t - 1) ε̂
    x_{t-1} = μ̃(x̂_0, x_t) + σ_t z,  σ_t² = β_t ("fixed large"; σ_0² = β̃_1), z = 0 at t = 0
    μ̃ = β_t √ᾱ_{t-1} / (1-ᾱ_t) · x̂_0 + (1-ᾱ_{t-1}) √α_t / (1-ᾱ_t) · x_t

Categorical part: multinomial diffusion in log-one-hot space (Hoogeboom et al. 2021), per
column with ``K`` classes, x0-parametrization::

    q(x_t | x_{t-1}) = Cat(α_t x_{t-1} + β_t / K)
    q(x_t | x_0)     = Cat(ᾱ_t x_0 + (1-ᾱ_t) / K)
    q(x_{t-1} | x_t, x_0) ∝ q(x_t | x_{t-1}) ⊙ q(x_{t-1} | x_0)    (= x_0 itself at t = 0)
    p(x_{t-1} | x_t) = q(x_{t-1} | x_t, x̂_0),  x̂_0 = softmax(network output) per column
    L_t = KL(q(x_{t-1}|x_t,x_0) ‖ p(x_{t-1}|x_t))  for t > 0,  -log p(x_0|x_1) for t = 0
    L_multi = (T · L_t + KL(q(x_T|x_0) ‖ Uniform)) / n_cat

``T · L_t`` is the reference code's unbiased estimate of ``Σ_t L_t`` under a uniform
``t`` (it divides by ``p(t) = 1/T``); KLs are summed over all classes of all columns and
the sum is divided by the number of categorical columns. Total loss per batch:
``mean(L_gauss) + mean(L_multi)``.

``KL(q(x_T|x_0) ‖ Uniform)`` does not depend on the class of ``x_0`` (it is
``Σ_c [(ᾱ+(1-ᾱ)/K) log(K ᾱ + 1-ᾱ) + (K-1)(1-ᾱ)/K · log(1-ᾱ)]`` at ``ᾱ = ᾱ_{T-1}``), so it
is computed once.

Implementation notes (the reference's values with fewer, cheaper operations):

* the posteriors are computed in probability space and logged once:
  ``q(x_{t-1} | x_t, x_0) = ev ⊙ step / Σ_{k∈c} ev ⊙ step`` with
  ``ev = ᾱ_{t-1} x_0 + (1-ᾱ_{t-1})/K`` (``x̂_0`` for the model) and
  ``step = α_t x_t + β_t/K``, where the reference adds logs with ``logaddexp``. With
  ``x_0``, ``x_t`` exact 0/1 one-hots there are no ``log 1e-30`` terms, hence no float32
  denormals (about 100x slower on CPUs) and no ``log 0``;
* ``t = 0`` needs no special case: the schedule stores ``ᾱ_{-1} = 1`` and
  ``1 - ᾱ_{-1} = 1e-30`` (the reference's own floor for log-one-hots), so ``ev = x̂_0 + 1e-30/K``
  and the same expression gives ``p(x_0 | x_1)``; it differs from the reference only
  where ``x̂_0 < 1e-28``;
* per-column sums and their broadcast are products with the ``[C, D]`` 0/1 membership
  matrix; only the per-block maxima (the softmax shift of the network's logits, and
  Gumbel-max) loop over the columns;
* during training ``x_t ~ q(x_t | x_0)`` is drawn as the mixture it is (keep ``x_0``
  with probability ``ᾱ_t``, else a uniform class), the same distribution as the
  reference's Gumbel-max draw; generation uses Gumbel-max.

Network input: ``[x_t (numerical), x_t (categorical)]``, the categorical part as
``log(max(onehot, 1e-30))`` (values 0 and ≈ -69, the reference code) or as the plain
one-hot (``cat_input``).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

LOG_EPS = 1e-30
CAT_INPUTS = ("log-onehot", "onehot")
#: columns of MixedDiffusion.table, one row per t
_TABLE = ("sqrt_abar", "sqrt_1m_abar", "abar", "1m_abar", "abar_prev", "1m_abar_prev", "alpha", "beta")
#: the block sums use a [C, D] matrix up to this D, a loop over columns beyond
MAX_BLOCK_MATRIX = 4096


def cosine_betas(n_timesteps: int, s: float = 0.008, max_beta: float = 0.999) -> np.ndarray:
    """β_t of the cosine schedule, float64 ``[T]``."""
    u = np.arange(n_timesteps + 1, dtype=np.float64) / n_timesteps
    f = np.cos((u + s) / (1 + s) * math.pi / 2) ** 2
    return np.minimum(1 - f[1:] / f[:-1], max_beta)


class Segments:
    """The one-hot blocks of the categorical columns inside a ``[B, D]`` tensor.

    ``D = Σ_c K_c``; columns ``start_c .. start_c + K_c - 1`` hold column ``c``'s classes.
    Per-column results are ``[B, C]``; :meth:`spread` copies them to every slot, ``[B, D]``.
    Sums and spreads are products with the ``[C, D]`` 0/1 membership matrix (exact in
    float32, and deterministic on GPUs, unlike scatter-adds).
    """

    def __init__(self, sizes, device):
        self.sizes = [int(k) for k in sizes]
        self.n_cols, self.width = len(self.sizes), sum(self.sizes)
        self.k_max = max(self.sizes, default=0)
        starts = np.cumsum([0] + self.sizes[:-1]).astype(np.int64)
        col = np.repeat(np.arange(self.n_cols), self.sizes)                              # [D]
        slot = np.arange(self.width) - starts[col]                                       # [D]
        k = np.asarray(self.sizes, dtype=np.float64)
        as_t = lambda v, dt: torch.as_tensor(v, dtype=dt, device=device)  # noqa: E731
        self.offsets = as_t(starts, torch.long)[None, :]                                 # [1, C]
        self.k = as_t(k, torch.float32)[None, :]                                         # [1, C] K_c
        self.last = as_t(k - 1, torch.long)[None, :]                                     # [1, C] K_c - 1
        self.col = as_t(col, torch.long)                                                 # [D]
        self.rank = as_t(self.k_max - slot, torch.float32)[None, :]                      # [1, D]
        self.inv_k = as_t(1 / k[col], torch.float32)[None, :]                            # [1, D] 1/K_c
        self.member = None
        if self.width <= MAX_BLOCK_MATRIX:
            self.member = as_t(np.arange(self.n_cols)[:, None] == col[None, :], torch.float32)  # [C, D]

    def column_sum(self, x: torch.Tensor) -> torch.Tensor:
        """``Σ_{k∈c} x_k``: ``[B, D]`` -> ``[B, C]``."""
        if self.member is not None:
            return x @ self.member.t()
        return torch.stack([b.sum(1) for b in x.split(self.sizes, dim=1)], 1)

    def spread(self, y: torch.Tensor) -> torch.Tensor:
        """Per-column ``[B, C]`` (finite) -> every slot of its block, ``[B, D]``.

        A gather (``index_select``) where no gradient flows through ``y`` (sampling, the
        training targets, the detached softmax shift): 2.6x faster than the product on a
        CPU thread at 10,000 x 110 and the same values (each slot is ``1 · y_c`` plus exact
        zeros). With a gradient, the product with the membership matrix, whose backward is
        a product too (deterministic on GPUs, unlike the gather's scatter-add backward)."""
        if self.member is not None and y.requires_grad and torch.is_grad_enabled():
            return y @ self.member
        return y.index_select(1, self.col)

    def spread_product(self, y: torch.Tensor) -> torch.Tensor:
        """:meth:`spread` as the product with the membership matrix always (the reference
        for its test; needs ``member``)."""
        return y @ self.member

    def column_max(self, x: torch.Tensor) -> torch.Tensor:
        """``max_{k∈c} x_k``: ``[B, D]`` -> ``[B, C]`` (no gradient).

        One ``scatter_reduce`` over the membership index instead of a loop of per-block
        ``amax`` over strided slices (2x faster at 10,000 x 104 on a CPU thread); a maximum
        does not depend on the order it is taken in, so the values are the loop's
        (:meth:`column_max_loop`)."""
        x = x.detach()
        out = x.new_full((x.shape[0], self.n_cols), float("-inf"))
        return out.scatter_reduce_(1, self.col.expand(x.shape[0], -1), x, "amax")

    def column_max_loop(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`column_max` as a loop over the blocks (the reference for its test)."""
        return torch.stack([b.amax(1) for b in x.detach().split(self.sizes, dim=1)], 1)

    def softmax(self, logits: torch.Tensor) -> torch.Tensor:
        """Per-block softmax of ``[B, D]`` logits, shifted by the block maximum."""
        e = torch.exp(logits - self.spread(self.column_max(logits)))
        return e / self.spread(self.column_sum(e))

    def argmax(self, x: torch.Tensor) -> torch.Tensor:
        """Class code of the (first) largest entry of each block: ``[B, C]`` int64."""
        score = (x >= self.spread(self.column_max(x))) * self.rank   # K_max - slot at the maxima, else 0
        return self.k_max - self.column_max(score).long()

    def onehot(self, codes: torch.Tensor) -> torch.Tensor:
        """Codes ``[B, C]`` -> one-hot ``[B, D]``."""
        out = torch.zeros(codes.shape[0], self.width, device=codes.device)
        return out.scatter_(1, codes + self.offsets, 1.0)

    def gumbel_codes(self, logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Gumbel-max sample of each block: ``argmax(logits - log(-log u))``, ``[B, C]``."""
        u = torch.rand(logits.shape, generator=generator, device=logits.device)
        # -log(-log(u + ε) + ε) + logits, in place in u: no [B, D] allocation per operation
        return self.argmax(u.add_(LOG_EPS).log_().neg_().add_(LOG_EPS).log_().neg_().add_(logits))


class MixedDiffusion:
    """Schedules and the loss/sampling steps of TabDDPM's mixed-type diffusion.

    Parameters
    ----------
    n_num : int
        Number of numerical columns (model space, after the quantile transform).
    category_sizes : sequence of int
        ``K_c`` of each categorical column.
    n_timesteps : int
        ``T``.
    device : torch.device
    cat_input : {"log-onehot", "onehot"}
        How the network sees the categorical part of ``x_t``: ``log(max(onehot, 1e-30))``
        (0 and ≈ -69, the reference code) or the plain one-hot (0 and 1). The two are
        affine images of each other (``log-onehot = 69.08 · (onehot - 1)``), so the model
        family is the same; only the conditioning of the first layer differs, and with
        small networks and short training the -69 inputs drown the numerical ones.
    """

    def __init__(self, n_num: int, category_sizes, n_timesteps: int, device, cat_input: str = "log-onehot"):
        if cat_input not in CAT_INPUTS:
            raise ValueError(f"cat_input must be one of {CAT_INPUTS}, got {cat_input!r}")
        self.cat_input = cat_input
        self.n_num, self.T, self.device = n_num, int(n_timesteps), torch.device(device)
        self.seg = Segments(category_sizes, self.device)
        self.n_cat = self.seg.n_cols
        self.d_in = n_num + self.seg.width
        betas = cosine_betas(self.T)
        alphas = 1.0 - betas
        log_abar = np.cumsum(np.log(alphas))
        abar, one_m_abar = np.exp(log_abar), -np.expm1(log_abar)
        abar_prev = np.append(1.0, abar[:-1])                 # ᾱ_{t-1}, ᾱ_{-1} = 1
        one_m_prev = np.append(LOG_EPS, one_m_abar[:-1])      # 1 - ᾱ_{t-1}; 1e-30 at t = 0 (see module doc)
        post_var = betas * (1 - abar_prev) / one_m_abar
        f64 = {"sqrt_abar": np.sqrt(abar), "sqrt_1m_abar": np.sqrt(one_m_abar), "abar": abar,
               "1m_abar": one_m_abar, "abar_prev": abar_prev, "1m_abar_prev": one_m_prev,
               "alpha": alphas, "beta": betas,
               "sqrt_recip_abar": np.sqrt(1 / abar), "sqrt_recipm1_abar": np.sqrt(1 / abar - 1),
               "coef_x0": betas * np.sqrt(abar_prev) / one_m_abar,
               "coef_xt": (1 - abar_prev) * np.sqrt(alphas) / one_m_abar,
               "sigma": np.sqrt(np.append(post_var[1] if self.T > 1 else betas[0], betas[1:]))}
        self.coef = {k: v.tolist() for k, v in f64.items()}   # python floats for the sampling loop
        self.table = torch.tensor(np.stack([f64[k] for k in _TABLE], 1), dtype=torch.float32,
                                  device=self.device)         # [T, 8], columns _TABLE
        a, k = abar[-1], np.asarray(self.seg.sizes, dtype=np.float64)
        hot, cold = a + (1 - a) / k, (1 - a) / k
        self.prior_kl = float(np.sum(hot * np.log(k * hot) + (k - 1) * cold * np.log(np.maximum(k * cold, 1e-300))))

    # ------------------------------------------------------------ multinomial
    def _net_cat(self, x_t: torch.Tensor) -> torch.Tensor:
        """Network input of the categorical part of a one-hot ``x_t`` ``[B, D]``."""
        return torch.log(x_t.clamp(min=LOG_EPS)) if self.cat_input == "log-onehot" else x_t

    def _mix(self, p: torch.Tensor, keep, noise) -> torch.Tensor:
        """``keep · p + noise / K``: a categorical ``p`` ``[B, D]`` mixed with uniform noise."""
        if torch.is_tensor(keep):
            return torch.addcmul(noise * self.seg.inv_k, p, keep)
        return p * keep + noise * self.seg.inv_k

    def _log_posterior(self, ev: torch.Tensor, step: torch.Tensor, log_step: torch.Tensor) -> torch.Tensor:
        """``log(ev ⊙ step / Σ_{k∈c} ev ⊙ step)``: ``log q(x_{t-1} | x_t, ·)`` ``[B, D]``."""
        return torch.log(ev) + log_step - self.seg.spread(torch.log(self.seg.column_sum(ev * step)))

    def _vb_term(self, logits, x0, xt, c, at_zero):
        """``L_t`` per row ``[B]``: KL of the posteriors for ``t > 0``, ``-log p(x_0 | x_1)`` at ``t = 0``.

        ``logits`` ``[B, D]`` (network output), ``x0``, ``xt`` one-hot ``[B, D]``, ``c`` the
        schedule columns ``[B, 1]`` by name, ``at_zero`` the rows with ``t = 0`` ``[B]``.
        """
        step = self._mix(xt, c["alpha"], c["beta"])                                  # q(x_t | x_{t-1}) [B, D]
        log_step = torch.log(step)
        with torch.no_grad():
            u = self._mix(x0, c["abar_prev"], c["1m_abar_prev"]) * step
            p_true = u / self.seg.spread(self.seg.column_sum(u))                     # q(x_{t-1} | x_t, x_0)
            log_true = torch.log(p_true.clamp(min=1e-37))
        ev = self._mix(self.seg.softmax(logits), c["abar_prev"], c["1m_abar_prev"])   # q(x_{t-1} | x̂_0)
        log_model = self._log_posterior(ev, step, log_step)                          # log p(x_{t-1} | x_t)
        kl = (p_true * (log_true - log_model)).sum(1)                                # [B]
        nll = -(x0 * log_model).sum(1)                                                # [B]
        return torch.where(at_zero, nll, kl)

    # ------------------------------------------------------------------ loss
    def loss(self, model, x_num, codes, generator, dropout_generator=None, autocast=None, per_row: bool = False):
        """Training loss of one batch.

        ``x_num`` ``[B, n_num]``, ``codes`` ``[B, n_cat]``. Returns
        ``(loss, L_gauss mean, L_multi mean)`` as 0-dim tensors (no host sync).

        ``per_row=True`` returns each row's loss instead of the mean, ``[B]``:
        ``ℓ_i = mean_j (ε_ij - ε̂_ij)² + (T · L_t,i + KL_prior) / n_cat``, whose mean over the
        rows is the loss above (DP-SGD clips each row's gradient, :mod:`memviz.models.privacy`).
        The same random draws, in the same order.
        """
        B, dev, seg = codes.shape[0], self.device, self.seg
        t = torch.randint(0, self.T, (B,), generator=generator, device=dev)          # [B]
        rows = self.table[t]                                                         # [B, 8]
        c = {name: rows[:, j:j + 1] for j, name in enumerate(_TABLE)}                # name -> [B, 1]
        zero = x_num.new_zeros(())
        parts = []
        if self.n_num:
            eps = torch.randn(x_num.shape, generator=generator, device=dev)           # [B, n_num]
            parts.append(c["sqrt_abar"] * x_num + c["sqrt_1m_abar"] * eps)            # x_t
        if self.n_cat:
            keep = torch.rand(codes.shape, generator=generator, device=dev) < c["abar"]
            noise = (torch.rand(codes.shape, generator=generator, device=dev) * seg.k).long()
            x0 = seg.onehot(codes)                                                   # [B, D]
            xt = seg.onehot(torch.where(keep, codes, torch.minimum(noise, seg.last)))  # x_t ~ q(x_t|x_0)
            parts.append(self._net_cat(xt))
        with autocast() if autocast else _null():
            out = model(torch.cat(parts, dim=1), t, generator=dropout_generator)      # [B, d_in]
        out = out.float()
        if per_row:
            return self._row_loss(out, eps if self.n_num else None, x0 if self.n_cat else None,
                                  xt if self.n_cat else None, c, t)
        l_gauss = ((out[:, :self.n_num] - eps) ** 2).mean() if self.n_num else zero
        if self.n_cat:
            l_t = self._vb_term(out[:, self.n_num:], x0, xt, c, t == 0)
            l_multi = (self.T * l_t.mean() + self.prior_kl) / self.n_cat
        else:
            l_multi = zero
        return l_gauss + l_multi, l_gauss.detach(), l_multi.detach()

    def _row_loss(self, out, eps, x0, xt, c, t):
        """``(ℓ [B], L_gauss mean, L_multi mean)`` of :meth:`loss` with ``per_row=True``."""
        row = out.new_zeros(out.shape[0])
        l_gauss = l_multi = out.new_zeros(())
        if self.n_num:
            g = ((out[:, :self.n_num] - eps) ** 2).mean(1)                           # [B]
            row, l_gauss = row + g, g.detach().mean()
        if self.n_cat:
            m = (self.T * self._vb_term(out[:, self.n_num:], x0, xt, c, t == 0) + self.prior_kl) / self.n_cat
            row, l_multi = row + m, m.detach().mean()
        return row, l_gauss, l_multi

    # -------------------------------------------------------------- sampling
    @torch.inference_mode()
    def sample(self, model, n: int, generator: torch.Generator, autocast=None):
        """Ancestral sampling of ``n`` rows: ``(x_num [n, n_num], codes [n, n_cat])`` on the device."""
        dev, cf, seg = self.device, self.coef, self.seg
        x = torch.randn((n, self.n_num), generator=generator, device=dev)            # x_T [n, n_num]
        codes = torch.zeros(n, seg.n_cols, dtype=torch.long, device=dev)              # [n, C]
        if self.n_cat:
            codes = seg.gumbel_codes(torch.zeros(n, seg.width, device=dev), generator)  # uniform x_T
        z = seg.onehot(codes)                                                         # [n, D]
        for i in reversed(range(self.T)):
            t = torch.full((1,), i, device=dev, dtype=torch.long)
            with autocast() if autocast else _null():
                out = model(torch.cat([x, self._net_cat(z)], dim=1), t)               # [n, d_in]
            out = out.float()
            if self.n_num:
                x0 = cf["sqrt_recip_abar"][i] * x - cf["sqrt_recipm1_abar"][i] * out[:, :self.n_num]
                x = cf["coef_x0"][i] * x0 + cf["coef_xt"][i] * x
                if i > 0:
                    x = x + cf["sigma"][i] * torch.randn(x.shape, generator=generator, device=dev)
            if self.n_cat:
                step = self._mix(z, cf["alpha"][i], cf["beta"][i])
                ev = self._mix(seg.softmax(out[:, self.n_num:]), cf["abar_prev"][i], cf["1m_abar_prev"][i])
                codes = seg.gumbel_codes(self._log_posterior(ev, step, torch.log(step)), generator)
                z = seg.onehot(codes)
        return x, codes


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def timestep_embedding(t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """Sinusoidal embedding ``[cos(t ω_k), sin(t ω_k)]``, ``ω_k = 10000^(-k/half)``: ``[B, 2·half]``."""
    args = t.float()[:, None] * freqs[None]                                           # [B, half]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class MLPDenoiser(nn.Module):
    """TabDDPM's MLP: ``h = Linear(d_in→d0)(x) + E(t)``, ReLU MLP, linear head to ``d_in``.

    ``E(t) = Linear(d0→d0) ∘ SiLU ∘ Linear(d0→d0)`` of the sinusoidal embedding of ``t``
    (``d0`` = ``dim_t``). Hidden layers ``layers``: ``Linear → ReLU → dropout``.
    Dropout draws from the ``generator`` passed to :meth:`forward`, never the global RNG.
    Parameters are initialised as ``torch.nn.Linear`` does (``U(±1/√fan_in)``), from
    ``init_generator`` (seed 0 when None); the global RNG is never touched.
    ``inplace`` (True): the ReLUs overwrite their input; DP-SGD's per-sample hooks need a
    fresh tensor (:mod:`memviz.models.privacy` sets it to False; same values).
    """

    def __init__(self, d_in: int, layers, dim_t: int, dropout: float = 0.0,
                 init_generator: torch.Generator | None = None):
        super().__init__()
        self.dim_t, self.dropout = int(dim_t), float(dropout)
        self.inplace = True
        half = self.dim_t // 2
        meta = {"device": "meta"}      # no default initialisation: it would draw from the global RNG
        self.proj = nn.Linear(d_in, self.dim_t, **meta)
        self.time_embed = nn.Sequential(nn.Linear(2 * half, self.dim_t, **meta), nn.SiLU(),
                                        nn.Linear(self.dim_t, self.dim_t, **meta))
        widths = [self.dim_t, *layers]
        self.hidden = nn.ModuleList(nn.Linear(a, b, **meta) for a, b in zip(widths[:-1], widths[1:]))
        self.head = nn.Linear(widths[-1], d_in, **meta)
        self.to_empty(device="cpu")
        gen = init_generator if init_generator is not None else torch.Generator().manual_seed(0)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    bound = 1 / math.sqrt(m.in_features) if m.in_features else 0.0
                    m.weight.uniform_(-bound, bound, generator=gen)
                    m.bias.uniform_(-bound, bound, generator=gen)
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / max(half, 1)))

    def forward(self, x: torch.Tensor, t: torch.Tensor, generator: torch.Generator | None = None):
        """``x`` ``[B, d_in]``, ``t`` ``[B]`` or ``[1]`` -> ``[B, d_in]``."""
        h = self.proj(x) + self.time_embed(timestep_embedding(t, self.freqs))        # [B, d0]
        drop = self.training and self.dropout > 0
        for layer in self.hidden:
            h = torch.relu_(layer(h)) if self.inplace else torch.relu(layer(h))     # in place: one pass fewer
                                                                             # (not under per-sample hooks)
            if drop:
                keep = torch.rand(h.shape, generator=generator, device=h.device) >= self.dropout
                h = h * keep / (1 - self.dropout)
        return self.head(h)
