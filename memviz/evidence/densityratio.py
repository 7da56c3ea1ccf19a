"""Density-ratio membership inference (DOMIAS: van Breugel, Sun, Qian & van der Schaar, AISTATS 2023).

The attack: an adversary holding the synthetic table S and reference rows R from the same population
(real rows the model never saw) scores a real row x by how much more likely the generator makes it
than the population does,

    s(x) = log(p̂_S(x) + ε) − log(p̂_R(x) + ε)             (large = member),

because a generator that overfits puts density on its training rows beyond what the population has
there (DOMIAS's score is p̂_S / p̂_R; ε is this module's, below). The distance attack (:mod:`memviz.evidence.membership`) reads only the nearest generated row;
this one reads the generator's density against the population's, so a region the population fills
densely (where every real row has a generated row near it) is discounted and a copy in a sparse
region counts.

Encoding (declared; mixed tables)
---------------------------------
Over the distance columns (:attr:`Schema.distance_numerical`, :attr:`Schema.distance_categorical`),
p numerical and q categorical, d = p + q:

* a numerical column is standardized by the reference centres' mean and standard deviation (1 where
  it is 0); a missing value sits at the mean (z = 0) and the column gets a missing / present
  indicator, treated as one more categorical column;
* a categorical column is one-hot over the categories seen in any of the frames (an encoding only);
* the kernel is the isotropic Gaussian on u = [z, onehot] / h,

      K(x, c) = exp(−½ ‖u(x) − u(c)‖²) = exp(−‖z_x − z_c‖² / (2h²)) · exp(−m(x, c) / h²),

  m the number of categorical columns that differ: a product kernel, Gaussian on the numbers and a
  factor exp(−1/h²) per differing category;
* one bandwidth h for both densities (so the kernel's normalising constant cancels in s),
  by Scott's rule on the standardized scale with the reference centres' count: h = n_R^(−1/(d+4))
  (Adult: 8,141 reference rows, d = 15: h = 0.62, a differing category a factor 0.07); ``bandwidth=``
  a float sets it;
* the hold-out is split at random (seeded) into a **reference** part (:data:`REFERENCE_SHARE`, the
  centres of p̂_R) and an **evaluation** part (the non-members), as DOMIAS keeps them apart. Given S
  and the reference, members and evaluated non-members are then independent draws of the
  population when the model learnt nothing about its training rows, so their scores are
  exchangeable and the interval and the tail test below are calibrated. (Scoring every hold-out
  row leave-one-out against all the others is not: where the hold-out happens to cluster, the
  reference's excess density *is* the non-members' own positions, which spreads the AUC beyond
  DeLong's interval; on the Adult sample it covered 0.5 in 25 of 30 fresh-row resamples.)
* p̂_S(x) = (1/C_S) Σ_c K(x, c) over C_S = min(M, max_centres) generated rows, p̂_R likewise over
  C_R = min(|reference|, max_centres) reference rows (seeded draws when capped);
* ε = the median of p̂_R over the scored members and non-members together: the population's typical
  density. Where the population is sparse both estimates rest on a few rows and their plain ratio is
  noise (on the Adult sample the rows that led the plain ranking were lone rows, not copies); adding
  ε to both shrinks those ratios towards 0 and leaves the dense regions' ratios, and a copy's, which
  lifts p̂_S far above ε, as they were (5 % planted copies on the Adult sample: 23–30 of 45 copied
  rows among the 45 highest scores against 17–22 without ε). ε is a symmetric function of the pooled
  members and non-members, so it keeps their exchangeability.

Figures (as the distance attack's, with scores read "large = member")
---------------------------------------------------------------------
* AUC = P(s(member) > s(non-member)) + ½ P(=), DeLong's 95 % interval
  (:func:`memviz.evidence.ranktests.auc_delong` on −s);
* TPR at FPR α (1 % and 0.1 %): flag s(x) > the (k + 1)-th largest non-member score, k = ⌊α H'⌋
  (:func:`memviz.evidence.membership.tpr_at_fpr` on −s), with its Wilson interval;
* its **exact tail p-value**: under no membership signal the members' and non-members' scores are
  exchangeable, so the number X of members above the (k + 1)-th largest non-member score follows the
  negative hypergeometric law (draw the N' + H' scores from the top, count members before the
  (k + 1)-th non-member): p_α = P(X ≥ x_obs) (``scipy.stats.nhypergeom``);
* ``flags_copying`` (its calibrated level, 5 % in all): the AUC interval lies above 0.5 (one-sided
  2.5 %), or the smaller tail p-value, Bonferroni over the two α, is below 2.5 %; ``p_value`` is the
  one p-value of that rule, min(1, 2 · min(p_AUC, 2 · min_α p_α)), p_AUC = 1 − Φ((AUC − ½) / se);
* per training row: s(x), log p̂_S(x), log p̂_R(x), the empirical p-value
  (1 + #{y ≥ s(x)}) / (H' + 1) against the non-members, BH q-values, ``exposed`` (flagged at 1 %);
* overlap with the rows the audit names (``flagged_row_ids``): |E ∩ F| beside |E| |F| / N'.

Cost (bounded)
--------------
(N' + H') (C_S + C_R) kernel evaluations, each a float32 matrix product over D = p + Σ categories
(+ 2 per indicator) columns and one exp, in blocks. ``max_queries`` caps N' and H' (seeded draws;
rows named in ``flagged_row_ids`` are scored as well but enter no figure but the overlap):
:data:`AUDIT_LIMITS` is what :func:`memviz.audit` runs (at full Adult: 4,096 + 4,096 query rows
against 8,192 + 8,141 centres, 1.3 · 10⁸ kernels), :func:`density_ratio_attack`'s defaults score
every row against up to :data:`MAX_CENTRES` centres each (full Adult: 40,701 × 24,525 = 1.0 · 10⁹
kernels). Figures: ``benchmarks/bench_attacks.py``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import nhypergeom, norm

from memviz.device import compute_device
from memviz.engine.blocks import one_blas_thread
from memviz.errors import BadOption, BadTable
from memviz.evidence.attack_readings import AttackReading
from memviz.tables.holdout import CheckedHoldout, as_table, checked_holdout
from memviz.evidence.membership import FPRS, N_NAMED, ROC_POINTS, roc_curve_points, thin_roc, tpr_at_fpr
from memviz.evidence.ranktests import auc_delong, json_safe
from memviz.measure.multiplicity import bh_qvalues, bonferroni
from memviz.tables.data import Table
from memviz.tables.encoding import canonical_series

FORMAT = "memviz.evidence.density_ratio/1"
#: the encoding's name in the JSON (module docstring)
ENCODING = "gaussian-kde: standardized numericals, one-hot categories, one Scott bandwidth"
#: centres per density by default (a seeded draw above it)
MAX_CENTRES = 16_384
#: what the audit runs (:func:`memviz.evidence.suite.audit_evidence`): query rows per side and centres per density
AUDIT_LIMITS = {"max_queries": 4_096, "max_centres": 8_192}
#: the share of the hold-out that is the reference (the rest: the non-members)
REFERENCE_SHARE = 0.5
#: the calibrated level of ``flags_copying`` (module docstring)
LEVEL = 0.05
#: query rows and centres per block of the kernel sums (a (512, 8192) float32 block is 16 MB)
QUERY_BLOCK, CENTRE_BLOCK = 512, 8_192


# ------------------------------------------------------------------ the encoding
@dataclass(frozen=True)
class KDESpace:
    """The declared encoding (module docstring), fitted on the reference centres.

    num_cols, cat_cols : the distance columns. mean, sd : (p,) the reference centres' statistics.
    missing : the numerical columns that get a missing / present indicator.
    vocab : per categorical column, its categories (canonical values) in code order.
    h : the bandwidth.
    """

    num_cols: tuple
    cat_cols: tuple
    mean: np.ndarray
    sd: np.ndarray
    missing: tuple
    vocab: tuple
    h: float

    @classmethod
    def fit(cls, reference: pd.DataFrame, frames, num_cols, cat_cols, bandwidth="scott") -> "KDESpace":
        """Statistics from ``reference`` (the centres of p̂_R), categories and missing columns from every frame."""
        num = reference.loc[:, list(num_cols)].to_numpy(dtype=np.float64) if num_cols else np.zeros((len(reference), 0))
        with np.errstate(all="ignore"):
            mean = np.nanmean(np.where(np.isfinite(num), num, np.nan), axis=0) if len(num) else np.zeros(len(num_cols))
            sd = np.nanstd(np.where(np.isfinite(num), num, np.nan), axis=0) if len(num) else np.ones(len(num_cols))
        mean = np.where(np.isfinite(mean), mean, 0.0)
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        missing = tuple(c for c in num_cols if any(f[c].isna().any() for f in frames))
        vocab = []
        for c in cat_cols:
            seen: dict = {}
            for f in frames:
                for v in pd.unique(canonical_series(f[c])):
                    seen.setdefault(v, len(seen))
            vocab.append(tuple(seen))
        d = len(num_cols) + len(cat_cols)
        h = bandwidth_of(bandwidth, len(reference), d)
        return cls(tuple(num_cols), tuple(cat_cols), mean, sd, missing, tuple(vocab), h)

    @property
    def width(self) -> int:
        """D: the encoded columns."""
        return len(self.num_cols) + 2 * len(self.missing) + sum(len(v) for v in self.vocab)

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """(n, D) float32 u = [z, indicators, onehot] / h (class and module docstrings)."""
        n = len(frame)
        out = np.zeros((n, self.width), dtype=np.float64)
        p = len(self.num_cols)
        if p:
            num = frame.loc[:, list(self.num_cols)].to_numpy(dtype=np.float64)
            z = (num - self.mean) / self.sd
            out[:, :p] = np.where(np.isfinite(z), z, 0.0)
        at = p
        for c in self.missing:
            miss = frame[c].isna().to_numpy()
            out[np.flatnonzero(miss), at] = 1.0
            out[np.flatnonzero(~miss), at + 1] = 1.0
            at += 2
        for c, cats in zip(self.cat_cols, self.vocab):
            index = {v: i for i, v in enumerate(cats)}
            codes = np.array([index.get(v, -1) for v in canonical_series(frame[c])], dtype=np.int64)
            ok = codes >= 0
            out[np.flatnonzero(ok), at + codes[ok]] = 1.0
            at += len(cats)
        return (out / self.h).astype(np.float32)

    def describe(self) -> dict:
        return {"name": ENCODING, "bandwidth": self.h, "numerical": list(self.num_cols),
                "categorical": list(self.cat_cols), "missing_indicators": list(self.missing), "width": self.width}


def bandwidth_of(bandwidth, n: int, d: int) -> float:
    """h: Scott's factor n^(−1/(d+4)) for ``"scott"``, else the positive number given."""
    if isinstance(bandwidth, str):
        if bandwidth != "scott":
            raise BadOption(f"bandwidth {bandwidth!r}: unknown (use scott or a positive number)")
        return float(max(n, 2) ** (-1.0 / (d + 4)))
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float, np.integer, np.floating)) \
            or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise BadOption(f"bandwidth {bandwidth!r}: must be scott or a positive number")
    return float(bandwidth)


def log_kde(queries: np.ndarray, centres: np.ndarray, device: str = "cpu") -> np.ndarray:
    """(n,) log((1/C) Σ_c exp(−½ ‖q − c‖²)) over the C centres, in float32 blocks with a running
    log-sum-exp in float64 (each block's maximum taken out: no underflow, however far the row).
    ‖q − c‖² = ‖q‖² + ‖c‖² − 2 q·c, clipped at 0; its rounding (about 10⁻⁶ of ‖q‖² + ‖c‖²) moves a
    kernel by a factor within 10⁻⁴ on standardized rows. On the CPU in numpy (no torch), on CUDA
    in torch: the same blocks, float32 products summed in each library's own order."""
    dev = compute_device(device)
    c = len(centres)
    if c == 0:
        raise BadTable("density ratio: no centres to estimate a density from")
    out = _log_kde_cpu(queries, centres) if dev.type == "cpu" else _log_kde_torch(queries, centres, dev)
    return out - math.log(c)


def _log_kde_cpu(queries: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Σ_c exp(−½ ‖q − c‖²) in log, numpy (see :func:`log_kde`)."""
    cen = np.asarray(centres)
    cn = np.einsum("ij,ij->i", cen, cen)                                           # (C,)
    out = np.empty(len(queries), dtype=np.float64)
    with one_blas_thread(), np.errstate(under="ignore"):
        for a in range(0, len(queries), QUERY_BLOCK):
            q = np.asarray(queries[a:a + QUERY_BLOCK])
            qn = np.einsum("ij,ij->i", q, q)[:, None]
            acc = np.full(len(q), -math.inf)
            for b in range(0, len(cen), CENTRE_BLOCK):
                cb = cen[b:b + CENTRE_BLOCK]
                sq = np.matmul(q, cb.T)
                sq *= -2.0
                sq += qn + cn[b:b + CENTRE_BLOCK][None, :]
                lk = np.maximum(sq, 0.0, out=sq)
                lk *= -0.5                                                         # (b, c) log kernels
                top = lk.max(axis=1, keepdims=True)
                lse = np.log(np.exp(lk - top).sum(axis=1, dtype=np.float32)) + top[:, 0]
                acc = np.logaddexp(acc, lse.astype(np.float64))
            out[a:a + len(q)] = acc
    return out


def _log_kde_torch(queries: np.ndarray, centres: np.ndarray, dev) -> np.ndarray:
    """Σ_c exp(−½ ‖q − c‖²) in log, torch on ``dev`` (see :func:`log_kde`)."""
    import torch  # lazy: torch, an extra (train): the density ratio runs on the CPU without it

    cen = torch.as_tensor(centres, device=dev)
    cn = (cen * cen).sum(dim=1)                                                    # (C,)
    out = np.empty(len(queries), dtype=np.float64)
    for a in range(0, len(queries), QUERY_BLOCK):
        q = torch.as_tensor(queries[a:a + QUERY_BLOCK], device=dev)
        qn = (q * q).sum(dim=1, keepdim=True)
        acc = torch.full((len(q),), -math.inf, dtype=torch.float64, device=dev)
        for b in range(0, len(cen), CENTRE_BLOCK):
            sq = torch.addmm(qn + cn[b:b + CENTRE_BLOCK][None, :], q, cen[b:b + CENTRE_BLOCK].T, alpha=-2.0)
            lk = sq.clamp_(min=0.0).mul_(-0.5)                                      # (b, c) log kernels
            acc = torch.logaddexp(acc, torch.logsumexp(lk, dim=1).to(torch.float64))
        out[a:a + len(q)] = acc.cpu().numpy()
    return out


# ------------------------------------------------------------------ the result
@dataclass(frozen=True, eq=False)
class DensityRatioResult:
    """The density-ratio attack's figures (module docstring).

    encoding : the declared encoding (:meth:`KDESpace.describe`).
    n_train, n_holdout, n_synthetic : the tables' rows. n_members, n_nonmembers : the rows the figures
        read (N', H'). n_synthetic_centres, n_reference_centres : C_S, C_R.
    auc, auc_low, auc_high, auc_se : AUC and its DeLong 95 % interval.
    tpr : per α of :data:`FPRS`, as the distance attack's, plus ``p_value`` (the exact tail test).
    roc_fpr, roc_tpr : the full ROC curve.
    rows : per scored training row, most exposed first: row_id, score, log_p_synthetic, log_p_reference,
        p_value, q_value, exposed, evaluated (False: a named row scored outside the draw).
    log_epsilon : log ε (module docstring).
    holdout_scores : (H',) the non-members' scores; nonmember_ids : (H',) their row ids.
    reference_ids : (C_R,) the row ids of the hold-out rows that were the reference centres.
    overlap : None, or n_flagged, n_exposed, n_both, expected.
    """

    encoding: dict
    n_train: int
    n_holdout: int
    n_synthetic: int
    n_members: int
    n_nonmembers: int
    n_synthetic_centres: int
    n_reference_centres: int
    auc: float
    auc_low: float
    auc_high: float
    auc_se: float
    tpr: tuple
    roc_fpr: np.ndarray
    roc_tpr: np.ndarray
    rows: pd.DataFrame
    holdout_scores: np.ndarray
    nonmember_ids: np.ndarray
    reference_ids: np.ndarray
    log_epsilon: float
    overlap: dict | None = None
    seconds: float = 0.0

    @property
    def n_exposed(self) -> int:
        return int(self.rows.loc[self.rows["evaluated"], "exposed"].sum())

    @property
    def better_than_chance(self) -> bool:
        return self.auc_low > 0.5

    @property
    def auc_p_value(self) -> float:
        """One-sided p-value of AUC > ½ from DeLong's normal approximation."""
        if not math.isfinite(self.auc) or not self.auc_se > 0:
            return 1.0 if not self.auc > 0.5 else 0.0
        return float(norm.sf((self.auc - 0.5) / self.auc_se))

    @property
    def tail_p_value(self) -> float:
        """The smaller exact tail p-value over the α of :data:`FPRS`, Bonferroni-corrected."""
        return bonferroni([t["p_value"] for t in self.tpr])

    @property
    def p_value(self) -> float:
        """The one p-value of ``flags_copying``'s rule (module docstring): flags when below :data:`LEVEL`."""
        return float(min(1.0, 2.0 * min(self.auc_p_value, self.tail_p_value)))

    @property
    def flags_copying(self) -> bool:
        """The AUC interval above ½, or the Bonferroni-corrected tail test below 2.5 % (5 % in all)."""
        return bool(self.better_than_chance or self.tail_p_value < LEVEL / 2)

    def reading(self):
        """This attack as an :class:`~memviz.evidence.attack_readings.AttackReading` (the verdict's worst case)."""
        auc_side = self.auc_p_value <= self.tail_p_value
        t = min(self.tpr, key=lambda r: r["p_value"])
        return AttackReading(
            test="density_ratio", attack="the density-ratio attack (DOMIAS)",
            statistic="AUC" if auc_side else f"TPR at {100 * t['fpr']:g} % FPR",
            value=self.auc if auc_side else t["tpr"], low=self.auc_low if auc_side else t["low"],
            high=self.auc_high if auc_side else t["high"], chance=0.5 if auc_side else t["fpr"],
            p_value=self.p_value, level=LEVEL, flags=self.flags_copying,
            calibration="DeLong interval and exact rank tail test against the hold-out, Bonferroni")

    def roc_points(self, n: int = ROC_POINTS) -> tuple[np.ndarray, np.ndarray]:
        """About ``n`` points of the ROC curve (:func:`memviz.evidence.membership.thin_roc`)."""
        return thin_roc(self.roc_fpr, self.roc_tpr, self.n_nonmembers, n)

    def figures(self) -> dict:
        """The headline figures under their :data:`memviz.metrics.EVIDENCE_METRICS` keys."""
        return {"dr_auc": self.auc, "dr_tpr_1pct": self.tpr[0]["tpr"], "dr_tpr_01pct": self.tpr[1]["tpr"],
                "dr_exposed": self.n_exposed}

    def to_dict(self) -> dict:
        fpr, tpr = self.roc_points()
        named = self.rows[self.rows["evaluated"]].head(N_NAMED)
        return json_safe({
            "format": FORMAT, "test": "density_ratio", "encoding": self.encoding, "n_train": self.n_train,
            "n_holdout": self.n_holdout, "n_synthetic": self.n_synthetic, "n_members": self.n_members,
            "n_nonmembers": self.n_nonmembers, "n_synthetic_centres": self.n_synthetic_centres,
            "n_reference_centres": self.n_reference_centres, "log_epsilon": self.log_epsilon, "auc": self.auc,
            "auc_ci": [self.auc_low, self.auc_high], "auc_se": self.auc_se, "interval": "delong",
            "tpr_at_fpr": [{k: v for k, v in t.items() if k != "threshold"} for t in self.tpr],
            "n_exposed": self.n_exposed, "p_value": self.p_value, "level": LEVEL,
            "flags_copying": self.flags_copying, "roc": {"fpr": fpr, "tpr": tpr},
            "most_exposed": [{"row_id": int(r.row_id), "score": float(r.score), "p_value": float(r.p_value)}
                             for r in named.itertuples()],
            "overlap": self.overlap, "figures": self.figures(),
            "seconds": self.seconds})



# ------------------------------------------------------------------ the attack
def _draw(n: int, cap: int | None, rng) -> np.ndarray:
    """Positions 0..n−1, or a sorted seeded draw of ``cap`` of them."""
    if cap is None or n <= cap:
        return np.arange(n)
    return np.sort(rng.choice(n, int(cap), replace=False))


def _check_cap(name: str, v) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2:
        raise BadOption(f"{name}={v!r}: must be a whole number >= 2 (or None: no cap)")
    return int(v)


def tail_p_value(n_members: int, n_nonmembers: int, k: int, hits: int) -> float:
    """P(X ≥ hits), X ~ the number of members drawn before the (k + 1)-th non-member when the
    N' + H' rows come in a uniformly random order (the negative hypergeometric law, module docstring)."""
    if hits <= 0:
        return 1.0
    if k >= n_nonmembers:
        return 1.0
    return float(nhypergeom(n_members + n_nonmembers, n_members, k + 1).sf(hits - 1))


def density_ratio_attack(train: Table, synthetic, holdout: CheckedHoldout | Table | pd.DataFrame, *,
                         bandwidth="scott", max_centres: int | None = MAX_CENTRES, max_queries: int | None = None,
                         flagged_row_ids=None, seed: int = 0, device: str = "cpu") -> DensityRatioResult:
    """The density-ratio attack against ``train`` with ``holdout`` as non-members and as the reference.

    Parameters
    ----------
    train : the training table (the members).
    synthetic : the generated rows (a Table or a DataFrame with the training columns).
    holdout : real rows the model never trained on, split into the reference and the non-members:
        a :class:`~memviz.tables.holdout.CheckedHoldout` (used as is), else checked by
        :func:`~memviz.tables.holdout.checked_holdout`.
    bandwidth : ``"scott"`` (module docstring) or a positive number (on the standardized scale).
    max_centres : centres per density (a seeded draw above it); None: every row.
    max_queries : members and non-members scored for the figures (seeded draws); None: every row.
    flagged_row_ids : the rows the audit names (scored always; the overlap).
    seed : the draws.
    device : ``cpu``, ``cuda`` or ``auto`` for the kernel sums.

    Returns
    -------
    DensityRatioResult
    """
    t0 = time.perf_counter()
    max_centres, max_queries = _check_cap("max_centres", max_centres), _check_cap("max_queries", max_queries)
    synth = as_table(train, synthetic, "synthetic", "synthetic table")
    hold = checked_holdout(train, holdout).table
    if len(hold) < 4:
        raise BadTable(f"{hold.source}: the density-ratio attack needs at least 4 hold-out rows, got {len(hold)}")
    schema = train.schema
    num, cat = tuple(schema.distance_numerical), tuple(schema.distance_categorical)
    rng = np.random.default_rng(seed)
    split = rng.permutation(len(hold))
    n_ref = min(len(hold) - 2, max(2, int(round(REFERENCE_SHARE * len(hold)))))
    ref, evl = np.sort(split[:n_ref]), np.sort(split[n_ref:])                    # reference | non-members
    s_pos = _draw(len(synth), max_centres, rng)                                   # generated centres
    r_pos = ref[_draw(len(ref), max_centres, rng)]                                # reference centres
    m_pos = _draw(len(train), max_queries, rng)                                   # members scored
    h_pos = evl[_draw(len(evl), max_queries, rng)]                                # non-members scored
    named = np.zeros(0, dtype=np.int64)
    if flagged_row_ids is not None:
        wanted = np.isin(train.row_ids, np.asarray(flagged_row_ids, dtype=np.int64))
        named = np.setdiff1d(np.flatnonzero(wanted), m_pos)
    q_train = np.concatenate([m_pos, named])
    cols = list(num + cat)
    frames = [train.data.iloc[q_train][cols], synth.data.iloc[s_pos][cols], hold.data[cols]]
    space = KDESpace.fit(hold.data.iloc[r_pos][cols], frames, num, cat, bandwidth)
    u_train, u_hold = space.encode(frames[0]), space.encode(hold.data.iloc[h_pos][cols])
    u_syn, u_ref = space.encode(frames[1]), space.encode(hold.data.iloc[r_pos][cols])
    ls_x, lr_x = log_kde(u_train, u_syn, device=device), log_kde(u_train, u_ref, device=device)
    ls_y, lr_y = log_kde(u_hold, u_syn, device=device), log_kde(u_hold, u_ref, device=device)
    eps = float(np.median(np.r_[lr_x[: len(m_pos)], lr_y]))                      # log ε
    x_all = np.logaddexp(ls_x, eps) - np.logaddexp(lr_x, eps)                     # (N' + named,)
    y = np.logaddexp(ls_y, eps) - np.logaddexp(lr_y, eps)                         # (H',)
    x = x_all[: len(m_pos)]
    auc, lo, hi, se = auc_delong(-x, -y)
    tpr = []
    for a in FPRS:
        t = tpr_at_fpr(-x, -y, a)
        t["p_value"] = tail_p_value(len(x), len(y), t["false_alarms"], int(round(t["tpr"] * len(x))))
        tpr.append(t)
    fpr_c, tpr_c = roc_curve_points(-x, -y)
    n_ge = len(y) - np.searchsorted(np.sort(y), x_all, side="left")                # #{y ≥ s(x)}
    p = (1.0 + n_ge) / (len(y) + 1.0)
    exposed = -x_all < tpr[0]["threshold"]
    evaluated = np.r_[np.ones(len(m_pos), bool), np.zeros(len(named), bool)]
    q = np.full(len(p), np.nan)
    q[evaluated] = bh_qvalues(p[evaluated])
    rows = pd.DataFrame({"row_id": train.row_ids[q_train], "score": x_all, "log_p_synthetic": ls_x,
                         "log_p_reference": lr_x, "p_value": p, "q_value": q, "exposed": exposed,
                         "evaluated": evaluated})
    rows = rows.sort_values(["score", "row_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    overlap = None
    if flagged_row_ids is not None:
        flagged = np.intersect1d(np.asarray(flagged_row_ids, dtype=np.int64), train.row_ids)
        ex_ids = rows.loc[rows["exposed"], "row_id"].to_numpy()
        rate = float(exposed[: len(m_pos)].mean()) if len(m_pos) else 0.0   # the exposed share of the draw
        overlap = {"n_flagged": int(len(flagged)), "n_exposed": int(rows.loc[rows["evaluated"], "exposed"].sum()),
                   "n_both": int(len(np.intersect1d(flagged, ex_ids))), "expected": len(flagged) * rate}
    return DensityRatioResult(space.describe(), len(train), len(hold), len(synth), len(m_pos), len(h_pos),
                              len(s_pos), len(r_pos), auc, lo, hi, se, tuple(tpr), fpr_c, tpr_c, rows, y,
                              hold.row_ids[h_pos], hold.row_ids[r_pos], eps, overlap, time.perf_counter() - t0)
