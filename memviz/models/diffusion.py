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

Network input: ``[x_t (numerical), log-one-hot x_t (categorical)]``, the categorical part
as the log of a one-hot vector clamped at 1e-30 (values 0 and ≈ -69), as in the
reference code.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

LOG_EPS = 1e-30
#: floor of every exp() argument: e^-80 is still a normal float32 (denormals are slow on CPUs)
EXP_FLOOR = -80.0
CAT_INPUTS = ("log-onehot", "onehot")


def cosine_betas(n_timesteps: int, s: float = 0.008, max_beta: float = 0.999) -> np.ndarray:
    """β_t of the cosine schedule, float64 ``[T]``."""
    u = np.arange(n_timesteps + 1, dtype=np.float64) / n_timesteps
    f = np.cos((u + s) / (1 + s) * math.pi / 2) ** 2
    return np.minimum(1 - f[1:] / f[:-1], max_beta)


class Segments:
    """The one-hot blocks of the categorical columns, in a class-major ``[D, B]`` tensor.

    ``D = Σ_c K_c``; rows ``offset_c .. offset_c + K_c - 1`` hold column ``c``'s classes
    for the ``B`` rows of a batch. Class-major keeps every block contiguous, so the
    per-block reductions are vectorised over the batch (a loop over the ``C`` columns,
    one reduction each) and the element-wise maths runs on the whole tensor at once.
    """

    def __init__(self, sizes, device):
        self.sizes = [int(k) for k in sizes]
        self.n_cols, self.width = len(self.sizes), sum(self.sizes)
        self.k_max = max(self.sizes, default=0)
        starts = np.cumsum([0] + self.sizes[:-1]).astype(np.int64)
        self.starts = starts.tolist()
        col = np.repeat(np.arange(self.n_cols), self.sizes)                              # [D]
        slot = np.arange(self.width) - starts[col]                                       # [D]
        self.offsets = torch.as_tensor(starts, device=device)[:, None]                  # [C, 1]
        self.rank = torch.as_tensor(self.k_max - slot, dtype=torch.float32, device=device)[:, None]  # [D, 1]
        k = np.asarray(self.sizes, dtype=np.float64)[col]
        self.log_k = torch.as_tensor(np.log(k), dtype=torch.float32, device=device)[:, None]   # [D, 1] log K_c
        self.inv_k = torch.as_tensor(1 / k, dtype=torch.float32, device=device)[:, None]       # [D, 1] 1/K_c

    def blocks(self, x: torch.Tensor):
        """Views ``[K_c, B]`` of ``x`` ``[D, B]``, one per column."""
        return x.split(self.sizes, dim=0)

    def logsumexp(self, x: torch.Tensor) -> torch.Tensor:
        """``log Σ_{k∈c} exp x_k`` broadcast to each slot of block ``c``: ``[D, B]``.

        ``m_c + log Σ exp(max(x_k - m_c, -80))`` with ``m_c`` the block maximum: the
        floor keeps ``exp`` out of float32's denormal range (100x slower on CPUs) and
        changes the sum by less than ``K·e^-80``.
        """
        m = torch.cat([b.detach().amax(0, keepdim=True).expand_as(b) for b in self.blocks(x)], 0)   # [D, B]
        e = torch.exp((x - m).clamp(min=EXP_FLOOR))                                                  # [D, B]
        total = torch.cat([b.sum(0, keepdim=True).expand_as(b) for b in self.blocks(e)], 0)         # [D, B]
        return m + torch.log(total)

    def log_softmax(self, x: torch.Tensor) -> torch.Tensor:
        """``x_k - log Σ_{k'∈c} exp x_k'`` per block: ``[D, B]``."""
        return x - self.logsumexp(x)

    def argmax(self, x: torch.Tensor) -> torch.Tensor:
        """Class code of the (first) largest entry of each block: ``[C, B]`` int64."""
        top = torch.cat([b.amax(0, keepdim=True).expand_as(b) for b in self.blocks(x)], 0)   # [D, B]
        score = (x >= top) * self.rank                       # K_max - slot at the maxima, else 0
        first = torch.stack([b.amax(0) for b in self.blocks(score)])                        # [C, B]
        return (self.k_max - first).long()

    def onehot(self, codes: torch.Tensor) -> torch.Tensor:
        """Codes ``[C, B]`` -> one-hot ``[D, B]``."""
        out = torch.zeros(self.width, codes.shape[1], device=codes.device)
        return out.scatter_(0, codes + self.offsets, 1.0)

    def log_onehot(self, codes: torch.Tensor) -> torch.Tensor:
        """Codes ``[C, B]`` -> ``log(max(onehot, 1e-30))`` ``[D, B]`` (0 and log 1e-30)."""
        out = torch.full((self.width, codes.shape[1]), math.log(LOG_EPS), device=codes.device)
        return out.scatter_(0, codes + self.offsets, 0.0)

    def gumbel_codes(self, logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Gumbel-max sample of each block: ``argmax(logits - log(-log u))``, ``[C, B]``."""
        u = torch.rand(logits.shape, generator=generator, device=logits.device)
        gumbel = -torch.log(-torch.log(u + LOG_EPS) + LOG_EPS)
        return self.argmax(logits + gumbel)


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
        abar = np.cumprod(alphas)
        abar_prev = np.append(1.0, abar[:-1])
        post_var = betas * (1 - abar_prev) / (1 - abar)
        log_cum_alpha = np.cumsum(np.log(alphas))
        f64 = {
            "sqrt_abar": np.sqrt(abar), "sqrt_1m_abar": np.sqrt(1 - abar),
            "sqrt_recip_abar": np.sqrt(1 / abar), "sqrt_recipm1_abar": np.sqrt(1 / abar - 1),
            "coef_x0": betas * np.sqrt(abar_prev) / (1 - abar),
            "coef_xt": (1 - abar_prev) * np.sqrt(alphas) / (1 - abar),
            "sigma": np.sqrt(np.append(post_var[1] if self.T > 1 else betas[0], betas[1:])),
            "alpha": alphas, "beta": betas, "abar": np.exp(log_cum_alpha), "1m_abar": -np.expm1(log_cum_alpha),
        }
        self.coef = {k: v.tolist() for k, v in f64.items()}  # python floats for the sampling loop
        self.buf = {k: torch.tensor(v, dtype=torch.float32, device=self.device) for k, v in f64.items()}

    # ------------------------------------------------------------ multinomial
    def _net_cat(self, codes_t, log_xt):
        """Network input of the categorical part, ``[B, D]``: log-one-hot or one-hot of x_t."""
        return log_xt.t() if self.cat_input == "log-onehot" else self.seg.onehot(codes_t).t()

    def _mix(self, log_p, keep, noise):
        """``log(keep · p + noise / K)``, ``p = exp(log_p)``: a categorical mixed with uniform noise.

        The reference code writes it ``logaddexp(log_p + log keep, log(noise) - log K)``;
        the same value is computed through probabilities (``exp`` floored at e^-80, the
        result ≥ ``noise / K`` > 0), which keeps the CPU out of denormal arithmetic.
        """
        return torch.log(torch.exp(log_p.clamp(min=EXP_FLOOR)) * keep + noise * self.seg.inv_k)

    def _q_posterior(self, log_x0, log_xt, t, at_zero):
        """log q(x_{t-1} | x_t, x_0) ``[D, B]``; ``t`` a ``[1, B]`` index tensor or an int."""
        if isinstance(t, int):
            cf, tm1 = self.coef, max(t - 1, 0)
        else:
            cf, tm1 = self.buf, (t - 1).clamp(min=0)
        log_ev = self._mix(log_x0, cf["abar"][tm1], cf["1m_abar"][tm1])            # q(x_{t-1} | x_0)
        if at_zero is True:
            log_ev = log_x0
        elif at_zero is not False:
            log_ev = torch.where(at_zero, log_x0, log_ev)
        unnormed = log_ev + self._mix(log_xt, cf["alpha"][t], cf["beta"][t])        # ⊙ q(x_t | x_{t-1})
        return unnormed - self.seg.logsumexp(unnormed)

    # ------------------------------------------------------------------ loss
    def loss(self, model, x_num, codes, generator, dropout_generator=None, autocast=None):
        """Training loss of one batch.

        ``x_num`` ``[B, n_num]``, ``codes`` ``[B, n_cat]``. Returns
        ``(loss, L_gauss mean, L_multi mean)`` as 0-dim tensors (no host sync).
        """
        B, dev, buf = codes.shape[0], self.device, self.buf
        t = torch.randint(0, self.T, (B,), generator=generator, device=dev)          # [B]
        zero = x_num.new_zeros(())
        parts = []
        if self.n_num:
            eps = torch.randn(x_num.shape, generator=generator, device=dev)           # [B, n_num]
            tc = t[:, None]                                                          # [B, 1]
            parts.append(buf["sqrt_abar"][tc] * x_num + buf["sqrt_1m_abar"][tc] * eps)
        if self.n_cat:
            tr = t[None, :]                                                          # [1, B]
            log_x0 = self.seg.log_onehot(codes.t())                                  # [D, B]
            log_q = self._mix(log_x0, buf["abar"][tr], buf["1m_abar"][tr])            # q(x_t | x_0)
            codes_t = self.seg.gumbel_codes(log_q, generator)                        # [C, B]
            log_xt = self.seg.log_onehot(codes_t)                                    # [D, B]
            parts.append(self._net_cat(codes_t, log_xt))
        with autocast() if autocast else _null():
            out = model(torch.cat(parts, dim=1), t, generator=dropout_generator)      # [B, d_in]
        out = out.float()
        l_gauss = ((out[:, :self.n_num] - eps) ** 2).mean() if self.n_num else zero
        if self.n_cat:
            at_zero = tr == 0
            log_true = self._q_posterior(log_x0, log_xt, tr, at_zero)                # [D, B]
            log_x0_hat = self.seg.log_softmax(out[:, self.n_num:].t().contiguous())  # [D, B]
            log_model = self._q_posterior(log_x0_hat, log_xt, tr, at_zero)          # [D, B]
            kl = (_exp(log_true) * (log_true - log_model)).sum(0)                     # [B]
            nll = -(self.seg.onehot(codes.t()) * log_model).sum(0)                    # [B]
            l_t = torch.where(t == 0, nll, kl)
            last = self.T - 1
            log_qT = self._mix(log_x0, self.coef["abar"][last], self.coef["1m_abar"][last])
            prior = (_exp(log_qT) * (log_qT + self.seg.log_k)).sum(0)                 # KL(q(x_T|x_0) ‖ 1/K)
            l_multi = ((self.T * l_t + prior) / self.n_cat).mean()
        else:
            l_multi = zero
        return l_gauss + l_multi, l_gauss.detach(), l_multi.detach()

    # -------------------------------------------------------------- sampling
    @torch.no_grad()
    def sample(self, model, n: int, generator: torch.Generator, autocast=None):
        """Ancestral sampling of ``n`` rows: ``(x_num [n, n_num], codes [n, n_cat])`` on the device."""
        dev, c, seg = self.device, self.coef, self.seg
        x = torch.randn((n, self.n_num), generator=generator, device=dev)            # x_T [n, n_num]
        codes = torch.zeros(seg.n_cols, n, dtype=torch.long, device=dev)              # [C, n]
        log_z = torch.zeros(seg.width, n, device=dev)                                 # [D, n]
        if self.n_cat:
            codes = seg.gumbel_codes(log_z, generator)                                # uniform x_T
            log_z = seg.log_onehot(codes)
        z_in = self._net_cat(codes, log_z)                                            # [n, D]
        for i in reversed(range(self.T)):
            t = torch.full((1,), i, device=dev, dtype=torch.long)
            with autocast() if autocast else _null():
                out = model(torch.cat([x, z_in], dim=1), t)                           # [n, d_in]
            out = out.float()
            if self.n_num:
                x0 = c["sqrt_recip_abar"][i] * x - c["sqrt_recipm1_abar"][i] * out[:, :self.n_num]
                x = c["coef_x0"][i] * x0 + c["coef_xt"][i] * x
                if i > 0:
                    x = x + c["sigma"][i] * torch.randn(x.shape, generator=generator, device=dev)
            if self.n_cat:
                log_x0_hat = seg.log_softmax(out[:, self.n_num:].t().contiguous())   # [D, n]
                codes = seg.gumbel_codes(self._q_posterior(log_x0_hat, log_z, i, i == 0), generator)
                if i > 0:
                    log_z = seg.log_onehot(codes)
                    z_in = self._net_cat(codes, log_z)
        return x, codes.t()


def _exp(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x.clamp(min=EXP_FLOOR))


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
    ``init_generator``.
    """

    def __init__(self, d_in: int, layers, dim_t: int, dropout: float = 0.0,
                 init_generator: torch.Generator | None = None):
        super().__init__()
        self.dim_t, self.dropout = int(dim_t), float(dropout)
        half = self.dim_t // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / max(half, 1)))
        self.proj = nn.Linear(d_in, self.dim_t)
        self.time_embed = nn.Sequential(nn.Linear(2 * half, self.dim_t), nn.SiLU(), nn.Linear(self.dim_t, self.dim_t))
        widths = [self.dim_t, *layers]
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.head = nn.Linear(widths[-1], d_in)
        if init_generator is not None:
            with torch.no_grad():
                for m in self.modules():
                    if isinstance(m, nn.Linear):
                        bound = 1 / math.sqrt(m.in_features) if m.in_features else 0.0
                        m.weight.uniform_(-bound, bound, generator=init_generator)
                        m.bias.uniform_(-bound, bound, generator=init_generator)

    def forward(self, x: torch.Tensor, t: torch.Tensor, generator: torch.Generator | None = None):
        """``x`` ``[B, d_in]``, ``t`` ``[B]`` or ``[1]`` -> ``[B, d_in]``."""
        h = self.proj(x) + self.time_embed(timestep_embedding(t, self.freqs))        # [B, d0]
        drop = self.training and self.dropout > 0
        for layer in self.hidden:
            h = torch.relu(layer(h))
            if drop:
                keep = torch.rand(h.shape, generator=generator, device=h.device) >= self.dropout
                h = h * keep / (1 - self.dropout)
        return self.head(h)
