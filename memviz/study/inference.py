"""The study's inference: claim families, Holm within each, effects with intervals, power.

Declared before the third edition's runs (the pilot and the 10-seed test); the second
edition's 5-seed results are re-read with the same rules, after they were seen (so for them
the correction is a re-analysis: it can only remove verdicts, never add one).

Families (:data:`FAMILIES`), each corrected on its own, per scale, over every claim of the
family on every dataset of the scale:

* ``pruning`` — DynamicCut against random pruning, the baseline, its variants, and its
  kept-rows control;
* ``augmentation`` — TabCutMix, TabCutMixPlus, SMOTE, DynamicCutMix against the baseline or
  TabCutMix;
* ``quality`` — the non-inferiority claims (MLE, Shape, Trend within 1 point);
* ``stopping`` — early stop (retrained to the warm-up's recommended epoch) against the baseline
  (issue 23, declared before its runs);
* ``transfer`` — other generators pruned with TabDDPM's ranking;
* ``private`` — DP-SGD (ε = 1 and 10) against the baseline and DynamicCut, and its quality
  (issue 38, declared before its runs);
* ``threshold`` — the dynamic threshold against the baseline, random pruning and DynamicCut, and its
  quality (issue 38, declared before its runs);
* ``pretraining`` — the isolation cut (a ranking from the table alone, no warm-up) against the baseline,
  random pruning and DynamicCut (issue 52, declared before its runs; its quality claims are in ``quality``);
* ``dynamics`` — every statistic against the null model and the heavy tail against the floor.

**Two-sided p, Holm.** Each claim has two one-sided p-values (p_claim on the claim's side,
p_against on the other); the test's p is p₂ = min(1, 2 · min(p_claim, p_against)). Holm's
step-down adjustment within a family of m tests, p₍₁₎ ≤ … ≤ p₍ₘ₎:

    p̃₍ᵢ₎ = min(1, max_{j ≤ i} (m − j + 1) · p₍ⱼ₎)

controls the family-wise error rate at α = 0.05 under any dependence.

**Labels** (by the adjusted p and the side of the smaller one-sided p; ties: the sign of the
mean effect): ``holds`` (p̃ < α, claim's side), ``reversed`` (p̃ < α, opposite side),
``claim's side, not significant``, ``opposite side, not significant``, ``no data``.

**Mitigation claims** (paired by seed, :func:`memviz.study.findings.signed_rank_exact`):
the effect is the mean of the per-seed differences d_s (positive = the claim's side) with
the 95 % t interval over seeds, mean ± t₀.₉₇₅,ₙ₋₁ · sd / √n (the spread of runs in general,
not one run's sampling interval); the minimum attainable p₂ is 2 · 2⁻ⁿ (n seeds, no tie),
and m · 2 · 2⁻ⁿ after Holm's first step. **Power** (:func:`wilcoxon_power`): the chance of
"holds" (one-sided exact p ≤ α / (2m), Bonferroni's bound on Holm's first step, so
conservative) when d_s ~ Normal(δ, sd²), with sd the observed spread of d_s and δ the
reference effect: for a memorization claim the paper's headline, a relative reduction of
13.58 % of the comparator's mean (:data:`PAPER_RELATIVE`); for a non-inferiority claim the
margin (the method exactly as good as the baseline). ``power_10``: the same with 10 seeds, the
power of the next design at this spread.

**Null-model claims** (over warm-up seeds): each seed's Monte Carlo test rejects on the
claim's side when its p < 0.025 and on the other side when its p on that side is
(:func:`memviz.dynamics.nullmodel.verdict`). Combination rule: **binomial count**. With n
independent warm-ups (seeded separately on the same rows) and each per-seed test of size at
most α₁ = 0.025 per side, the number H of seeds rejecting on the claim's side has
P(H ≥ h) ≤ P(Binomial(n, α₁) ≥ h) under the null, so p_claim = P(Bin(n, α₁) ≥ h) and
p_against = P(Bin(n, α₁) ≥ r) (r seeds reversed). Effect: mean over seeds of
e_s = ±(observed − null median) (positive = the claim's side) with its t interval; power at
the observed effect: each seed rejects with π = 1 − Φ(z₀.₉₇₅ − z̄), z̄ the mean of
e_s / σ_s (σ_s = the null's central 95 % width / 3.92), and the count reaches the smallest h
with P(Bin(n, α₁) ≥ h) ≤ α / (2m).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom, norm

from memviz.measure.intervals import t_interval
from memviz.measure.multiplicity import holm

ALPHA = 0.05
#: the per-seed null-model test's size on each side (outside the null's central 95 %)
ALPHA_SEED = 0.025
#: the DynamicCut paper's headline: TabDDPM's mem ratio on adult reduced by 13.58 % (relative)
PAPER_RELATIVE = 0.1358
LABELS = ("holds", "claim's side, not significant", "opposite side, not significant", "reversed", "no data")

#: claim key -> family (:mod:`memviz.study.findings` CLAIMS); the null-model statistics are "dynamics"
FAMILIES = {
    "dc_vs_random": "pruning", "dcx_vs_random": "pruning", "dcx_vs_dc": "pruning", "dcq_vs_random": "pruning",
    "dc_vs_baseline": "pruning", "dc_kept_vs_control": "pruning",
    "dcmix_vs_tcm": "augmentation", "dcmix_vs_baseline": "augmentation", "tcm_vs_baseline": "augmentation",
    "tcmp_vs_baseline": "augmentation", "smote_vs_baseline": "augmentation", "smotenc_vs_baseline": "augmentation",
    "tcm_eq_vs_baseline_eq": "augmentation",
    "dc_mle": "quality", "dc_shape": "quality",
    "es_vs_baseline": "stopping", "es_shape": "quality", "es_trend": "quality", "es_mle": "quality",
    "tvae_dc_vs_random": "transfer", "ctgan_dc_vs_random": "transfer",
    "dp1_vs_baseline": "private", "dp10_vs_baseline": "private", "dp10_vs_dc": "private", "dp10_shape": "private",
    "dp10_mle": "private",
    "dt_vs_baseline": "threshold", "dt_vs_random": "threshold", "dt_vs_dc": "threshold", "dt_shape": "threshold",
    "iso_vs_baseline": "pretraining", "iso_vs_random": "pretraining", "iso_vs_dc": "pretraining",
    "iso_noninf_dc": "pretraining", "iso_shape": "quality", "iso_mle": "quality",
}
DYNAMICS = "dynamics"


def two_sided(p_claim: float, p_against: float) -> float:
    return float(min(1.0, 2.0 * min(p_claim, p_against)))


def _wplus_upper(n: int) -> np.ndarray:
    """P(W+ ≥ w) for w = 0..n(n+1)/2 under H0 with ranks 1..n (no ties): exact, by counting subsets."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts[::-1])[::-1] / 2.0 ** n


def wilcoxon_power(n: int, delta: float, sd: float, level: float, reps: int = 4000, seed: int = 0) -> float:
    """P(exact one-sided signed-rank p ≤ ``level``) for n paired differences ~ Normal(delta, sd²).

    Monte Carlo over ``reps`` seeded draws; 0 when no data can reach ``level`` (2⁻ⁿ > level).
    """
    if n < 1 or not np.isfinite(delta) or not np.isfinite(sd):
        return math.nan
    upper = _wplus_upper(n)                                          # (n(n+1)/2 + 1,)
    ok = np.flatnonzero(upper <= level + 1e-12)
    if ok.size == 0:
        return 0.0
    w_crit = int(ok[0])
    if sd <= 0:
        return float(delta > 0)
    d = np.random.default_rng(seed).normal(delta, sd, size=(reps, n))  # (reps, n)
    ranks = np.abs(d).argsort(axis=1).argsort(axis=1) + 1            # (reps, n), ties have probability 0
    w = np.where(d > 0, ranks, 0).sum(axis=1)                        # (reps,)
    return float(np.mean(w >= w_crit))


def binom_upper(k: int, n: int, p: float = ALPHA_SEED) -> float:
    """P(Binomial(n, p) ≥ k)."""
    return 1.0 if k <= 0 else float(binom.sf(k - 1, n, p))


def binom_critical(n: int, level: float, p: float = ALPHA_SEED) -> int | None:
    """The smallest count k with P(Bin(n, p) ≥ k) ≤ level (None: no count of n seeds reaches it)."""
    return next((k for k in range(1, n + 1) if binom_upper(k, n, p) <= level), None)


def binom_power(n: int, pi: float, level: float) -> float:
    """P(Bin(n, π) ≥ k*) with k* = :func:`binom_critical` (n, level): the count test's power."""
    k = binom_critical(n, level)
    return 0.0 if k is None or not np.isfinite(pi) else float(binom.sf(k - 1, n, pi))


def label(p_adj: float, side: int) -> str:
    """Label by the adjusted p and the side (+1 claim, −1 opposite, 0 none) (module docstring)."""
    if not np.isfinite(p_adj) or side == 0:
        return "no data"
    if p_adj < ALPHA:
        return "holds" if side > 0 else "reversed"
    return "claim's side, not significant" if side > 0 else "opposite side, not significant"


def side_of(p_claim: float, p_against: float, effect: float) -> int:
    if p_claim < p_against:
        return 1
    if p_against < p_claim:
        return -1
    return int(np.sign(effect)) if np.isfinite(effect) else 0


def count_test(rows: list[dict]) -> dict:
    """The binomial-count combination of per-seed null-model verdicts (module docstring).

    ``rows``: one per warm-up seed, with ``verdict`` ("holds" / "reversed" / other), ``observed``,
    ``null_median``, ``null_low``, ``null_high`` and ``direction`` ("higher" / "lower")."""
    n = len(rows)
    h = sum(r["verdict"] == "holds" for r in rows)
    r_ = sum(r["verdict"] == "reversed" for r in rows)
    sign = [1.0 if r["direction"] == "higher" else -1.0 for r in rows]
    e = np.array([s * (r["observed"] - r["null_median"]) for s, r in zip(sign, rows)], dtype=float)
    width = np.array([(r["null_high"] - r["null_low"]) / (2 * norm.ppf(1 - ALPHA_SEED)) for r in rows], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(width > 0, e / width, np.nan)
    mean, low, high = t_interval(e)
    p_claim, p_against = binom_upper(h, n), binom_upper(r_, n)
    return {"kind": "count", "n_seeds": n, "n_holds": int(h), "n_reversed": int(r_), "p_claim": p_claim,
            "p_against": p_against, "p_two": two_sided(p_claim, p_against) if n else math.nan,
            "min_p_two": two_sided(binom_upper(n, n), 1.0) if n else math.nan,
            "effect": mean, "effect_low": low, "effect_high": high,
            "z_mean": float(np.nanmean(z)) if np.isfinite(z).any() else math.nan}


def _power(t: dict, level: float) -> float | None:
    if t.get("kind") == "paired":
        return wilcoxon_power(int(t["n"]), float(t["delta_ref"]), float(t["sd"]), level) \
            if t.get("n") and t.get("sd") is not None and t.get("delta_ref") is not None else None
    if t.get("kind") == "count" and t.get("n_seeds"):
        z = t.get("z_mean")
        if z is None or not np.isfinite(z):
            return None
        return binom_power(int(t["n_seeds"]), float(norm.sf(norm.ppf(1 - ALPHA_SEED) - z)), level)
    return None


def adjust(tests: list[dict]) -> list[dict]:
    """Holm within each family over ``tests`` (dicts with ``family``, ``p_two``, ``p_claim``, ``p_against``,
    ``effect``, ``min_p_two`` and the fields of their ``kind``): adds ``m`` (family size), ``p_adj``,
    ``min_p_adj`` (the smallest adjusted p the data could give), ``power`` at level α / (2m) and ``label``;
    returns the same dicts, changed in place."""
    fams: dict = {}
    for t in tests:
        fams.setdefault(t["family"], []).append(t)
    for group in fams.values():
        m = sum(1 for t in group if _finite(t.get("p_two")))
        adj = holm([t["p_two"] if _finite(t.get("p_two")) else math.nan for t in group])
        for t, pa in zip(group, adj):
            t["m"], t["p_adj"] = m, (float(pa) if np.isfinite(pa) else None)
            t["min_p_adj"] = float(min(1.0, m * t["min_p_two"])) if _finite(t.get("min_p_two")) else None
            t["label"] = label(pa, side_of(t["p_claim"], t["p_against"], t.get("effect", math.nan)))
            t["power"] = _power(t, ALPHA / (2 * m)) if m else None
            if t.get("kind") == "paired" and m:  # what 10 seeds would give at the same spread (the next design)
                t["power_10"] = _power({**t, "n": 10}, ALPHA / (2 * m))
    return tests


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False
