"""The study's verdicts, by fixed criteria written down before the results.

Mitigation claims: paired by seed
---------------------------------
A claim says method a gives lower values of a figure than comparator b (e.g. DynamicCut's
mem ratio against the original table is below random pruning's). Per seed s,
d_s = figure_b(s) − figure_a(s) (points; positive = on the claim's side), over the seeds
where both cells finished. Both cells of a seed share the training table, the seed and,
for pruning, the warm-up of that seed, so the seed's own level cancels.

**Test: exact Wilcoxon signed-rank, one-sided in the claim's direction.** Zeros are
dropped (n = non-zero differences); ranks of |d_s| with mid-ranks for ties; W+ = sum of
the ranks of positive d_s. The p-value is exact, by enumerating all 2^n sign assignments
of the observed ranks: p_claim = P(W+ ≥ w), p_against = P(W+ ≤ w). The smallest p any
data can give is **2^-n** (every difference on one side): 0.125 with 3 seeds, 0.0625 with
4, 0.031 with 5, 0.016 with 6. With 5 seeds, p < 0.05 therefore needs every seed on the
claim's side.

**Labels** (α = 0.05):

* ``holds`` — p_claim < α;
* ``reversed`` — p_against < α;
* ``consistent sign, not significant`` — every seed on the same side (either; the
  numbers say which), but neither p reaches α (e.g. 3 seeds can never do better than 0.125);
* ``not shown`` — otherwise (mixed signs, or no seed).

A non-inferiority claim ("keeps quality within m points") is the same test on
d_s = figure_a(s) − figure_b(s) + m.

Null-model claims, over warm-up seeds
-------------------------------------
Each warm-up gives each statistic a verdict against its own null
(:func:`memviz.findings.nullmodel.verdict`: Monte Carlo p on the claim's side below 0.025, i.e.
outside the null's central 95 %). Across the warm-up seeds: ``holds`` when it holds in
every seed, ``reversed`` when reversed in every seed, ``consistent sign, not significant``
when the observed effect is beyond the null median on the same side in every seed, ``not
shown`` otherwise.
"""
from __future__ import annotations

from itertools import product

import numpy as np
import pandas as pd

ALPHA = 0.05
LABELS = ("holds", "consistent sign, not significant", "not shown", "reversed")


def signed_rank_exact(d) -> dict:
    """Exact one-sided Wilcoxon signed-rank test of paired differences ``d`` (module docstring).

    Returns n (non-zero differences), n_positive, n_negative, W+, p_claim = P(W+ ≥ w),
    p_against = P(W+ ≤ w) and min_p = 2^-n (1.0 when n = 0).
    """
    from scipy.stats import rankdata

    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d) & (d != 0)]
    n = int(d.size)
    out = {"n": n, "n_positive": int((d > 0).sum()), "n_negative": int((d < 0).sum()), "w_plus": 0.0,
           "p_claim": 1.0, "p_against": 1.0, "min_p": 2.0 ** -n}
    if n == 0:
        return out
    ranks = rankdata(np.abs(d))                                         # (n,) mid-ranks
    w = float(ranks[d > 0].sum())
    signs = np.array(list(product((0.0, 1.0), repeat=n)))               # (2^n, n)
    dist = signs @ ranks                                                # (2^n,) W+ under H0
    eps = 1e-9
    out.update(w_plus=w, p_claim=float(np.mean(dist >= w - eps)), p_against=float(np.mean(dist <= w + eps)))
    return out


def label(test: dict, alpha: float = ALPHA) -> str:
    """The label of a paired test (module docstring)."""
    if test["n"] == 0:
        return "not shown"
    if test["p_claim"] < alpha:
        return "holds"
    if test["p_against"] < alpha:
        return "reversed"
    if test["n_positive"] == test["n"] or test["n_negative"] == test["n"]:
        return "consistent sign, not significant"
    return "not shown"


def combine_null(verdicts: list[str], observed: list[float], medians: list[float], direction: str) -> str:
    """Label of one null-model statistic over warm-up seeds (module docstring)."""
    if not verdicts:
        return "not shown"
    if all(v == "holds" for v in verdicts):
        return "holds"
    if all(v == "reversed" for v in verdicts):
        return "reversed"
    side = [np.sign(o - m) * (1 if direction == "higher" else -1) for o, m in zip(observed, medians)]
    if all(s > 0 for s in side) or all(s < 0 for s in side):
        return "consistent sign, not significant"
    return "not shown"


def null_findings(analyses: list[dict]) -> pd.DataFrame:
    """One row per (statistic, T): its per-seed verdicts and the combined label."""
    rows = pd.DataFrame([f for a in analyses for f in a["null"]])
    if rows.empty:
        return rows
    out = []
    for (name, frac), g in rows.groupby(["name", "T_frac"], sort=False):
        g = g.sort_values("seed")
        out.append({"name": name, "T_frac": frac, "T": int(g["T"].iloc[0]), "label": g["label"].iloc[0],
                    "circular": bool(g["circular"].iloc[0]), "direction": g["direction"].iloc[0],
                    "value": float(g["value"].mean()), "baseline": float(g["baseline"].mean()),
                    "observed": float(g["observed"].mean()), "null_median": float(g["null_median"].mean()),
                    "null_low": float(g["null_low"].min()), "null_high": float(g["null_high"].max()),
                    "n_holds": int((g["verdict"] == "holds").sum()),
                    "n_reversed": int((g["verdict"] == "reversed").sum()),
                    "n_seeds": int(len(g)), "naive_holds": int(g["naive_holds"].sum()),
                    "naive_null_share": float(g["naive_null_share"].mean()),
                    "combined": combine_null(list(g["verdict"]), list(g["observed"]), list(g["null_median"]),
                                             g["direction"].iloc[0])})
    return pd.DataFrame(out)


#: The mitigation claims, fixed before the results: (key, claim, model, figure_a, method_a,
#: figure_b, method_b, direction, margin). "lower": figure_a of method a below figure_b of
#: method b, d_s = b − a + margin; "higher": d_s = a − b + margin.
CLAIMS = (
    ("dc_vs_random", "DynamicCut (raw) lowers memorization more than random pruning of as many rows",
     "tabddpm", "mem_ratio", "dynamiccut", "mem_ratio", "random", "lower", 0.0),
    ("dcx_vs_random", "DynamicCut (excess) lowers memorization more than random pruning",
     "tabddpm", "mem_ratio", "dynamiccut_excess", "mem_ratio", "random", "lower", 0.0),
    ("dcx_vs_dc", "DynamicCut (excess) lowers memorization more than DynamicCut (raw)",
     "tabddpm", "mem_ratio", "dynamiccut_excess", "mem_ratio", "dynamiccut", "lower", 0.0),
    ("dcq_vs_random", "DynamicCut with T = the first quarter lowers memorization more than random pruning",
     "tabddpm", "mem_ratio", "dynamiccut_q", "mem_ratio", "random", "lower", 0.0),
    ("dc_vs_baseline", "DynamicCut (raw) lowers memorization below the baseline",
     "tabddpm", "mem_ratio", "dynamiccut", "mem_ratio", "baseline", "lower", 0.0),
    ("dcmix_vs_tcm", "DynamicCutMix lowers memorization more than TabCutMix",
     "tabddpm", "mem_ratio", "dynamiccutmix", "mem_ratio", "tabcutmix", "lower", 0.0),
    ("dcmix_vs_baseline", "DynamicCutMix lowers memorization below the baseline (added after the first "
     "regime results)", "tabddpm", "mem_ratio", "dynamiccutmix", "mem_ratio", "baseline", "lower", 0.0),
    ("tcm_vs_baseline", "TabCutMix lowers memorization below the baseline",
     "tabddpm", "mem_ratio", "tabcutmix", "mem_ratio", "baseline", "lower", 0.0),
    ("tcmp_vs_baseline", "TabCutMixPlus lowers memorization below the baseline",
     "tabddpm", "mem_ratio", "tabcutmixplus", "mem_ratio", "baseline", "lower", 0.0),
    ("smote_vs_baseline", "SMOTE (the reference's) lowers memorization below the baseline",
     "tabddpm", "mem_ratio", "smote", "mem_ratio", "baseline", "lower", 0.0),
    ("smotenc_vs_baseline", "SMOTE-NC (imbalanced-learn) lowers memorization below the baseline",
     "tabddpm", "mem_ratio", "smote_nc", "mem_ratio", "baseline", "lower", 0.0),
    ("dc_kept_vs_control", "DynamicCut's rows copy the kept rows less than the baseline's rows do "
     "(mem vs kept below the control)", "tabddpm", "mem_ratio_kept", "dynamiccut", "control_kept", "dynamiccut",
     "lower", 0.0),
    ("dc_mle", "DynamicCut keeps MLE within 1 point of the baseline (non-inferiority)",
     "tabddpm", "mle", "dynamiccut", "mle", "baseline", "higher", 0.01),
    ("dc_shape", "DynamicCut keeps Shape within 1 point of the baseline (non-inferiority)",
     "tabddpm", "shape", "dynamiccut", "shape", "baseline", "higher", 0.01),
    ("tvae_dc_vs_random", "the TabDDPM ranking lowers TVAE's memorization more than random pruning",
     "tvae", "mem_ratio", "dynamiccut", "mem_ratio", "random", "lower", 0.0),
    ("ctgan_dc_vs_random", "the TabDDPM ranking lowers CTGAN's memorization more than random pruning",
     "ctgan", "mem_ratio", "dynamiccut", "mem_ratio", "random", "lower", 0.0),
)


def paired_figures(results: pd.DataFrame, model: str, fig_a: str, a: str, fig_b: str, b: str,
                   direction: str = "lower", margin: float = 0.0) -> dict:
    """Seed-paired test of ``fig_a`` of method ``a`` against ``fig_b`` of method ``b`` (module docstring).

    Returns seeds, d (the per-seed differences), mean, the fields of :func:`signed_rank_exact`
    and ``label``; no seed (nothing to pair) gives label "not shown" with n = 0.
    """
    ok = results[(results["status"] == "ok") & (results["model"] == model)]
    out = {"model": model, "figure_a": fig_a, "a": a, "figure_b": fig_b, "b": b, "direction": direction,
           "margin": margin, "seeds": [], "d": [], "mean": None}
    if fig_a in ok.columns and fig_b in ok.columns:
        va = ok[ok["method"] == a].drop_duplicates("seed").set_index("seed")[fig_a]
        vb = ok[ok["method"] == b].drop_duplicates("seed").set_index("seed")[fig_b]
        va, vb = pd.to_numeric(va, errors="coerce"), pd.to_numeric(vb, errors="coerce")
        d = ((vb - va) if direction == "lower" else (va - vb)).dropna() + margin
        out.update(seeds=[int(s) for s in d.index], d=[float(x) for x in d], mean=float(d.mean()) if len(d) else None)
    test = signed_rank_exact(out["d"])
    return {**out, **test, "label": label(test)}


def claim_tests(results: pd.DataFrame) -> list[dict]:
    """Every claim of :data:`CLAIMS` whose cells and figures are in ``results``, tested seed by seed."""
    out = []
    methods = set(results.loc[results["status"] == "ok", ["model", "method"]].itertuples(index=False, name=None))
    for key, claim, model, fa, a, fb, b, direction, margin in CLAIMS:
        if (model, a) in methods and (model, b) in methods:
            t = paired_figures(results, model, fa, a, fb, b, direction, margin)
            if t["seeds"]:  # a figure the results do not have (yet) gives nothing to pair
                out.append({"key": key, "claim": claim, **t})
    return out
