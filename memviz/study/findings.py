"""The paper's claims checked on a study's results, each with a verdict by fixed criteria."""
from __future__ import annotations

import pandas as pd

from .util import _float, _p, _pct


#: method pairs compared seed by seed (the first should reduce memorization more)
PAIRS = (("dynamiccut", "random"), ("dynamiccutmix", "tabcutmix"))


def paired_difference(results: pd.DataFrame, model: str, a: str, b: str) -> dict:
    """Seed-by-seed difference of the relative reduction of method ``a`` and method ``b``.

    Both are measured against the baseline of the same model and seed, so the difference
    per seed, Δ_s = red_a(s) − red_b(s), removes the seed's own variation. Returned: the
    seeds, mean and std (ddof = 1) of Δ, how many seeds have Δ > 0, and a two-sided paired
    t-test p-value (None below 2 seeds; with 3 seeds it can only flag large effects).
    """
    ok = results[(results["status"] == "ok") & (results["model"] == model)]
    red = ok.pivot_table(index="seed", columns="method", values="relative_reduction", aggfunc="first")
    out = {"model": model, "a": a, "b": b, "seeds": [], "mean": None, "std": None, "n_positive": 0, "p": None}
    if a not in red.columns or b not in red.columns:
        return out
    d = (red[a] - red[b]).dropna()
    out.update(seeds=[int(x) for x in d.index], n_positive=int((d > 0).sum()), mean=_float(d.mean()) if len(d) else None,
               std=_float(d.std(ddof=1)) if len(d) > 1 else None)
    if len(d) > 1 and (_float(d.std(ddof=1)) or 0.0) > 1e-12:  # no t-test on constant differences
        from scipy.stats import ttest_1samp
        out["p"] = _float(ttest_1samp(d.to_numpy(dtype=float), 0.0).pvalue)
    return out


def _verdict_pair(pr: dict) -> tuple[str, str]:
    """holds: Δ > 0 in every seed (at least 3); not shown: mixed signs; reversed: Δ < 0 in every seed."""
    n, pos = len(pr["seeds"]), pr["n_positive"]
    if n == 0 or pr["mean"] is None:
        return "not measured", ""
    num = (f"Δ = {pr['mean'] * 100:+.1f} ± {(pr['std'] or 0) * 100:.1f} pts, better in {pos}/{n} seeds"
           + (f", paired t p = {_p(pr['p'])}" if pr["p"] is not None else ""))
    if n >= 3 and pos == n:
        return "holds", num
    if n >= 3 and pos == 0:
        return "reversed", num
    return "not shown", num


def findings(study: dict) -> list[dict]:
    """The paper's claims checked on one dataset's study, each with a verdict and its numbers.

    Criteria (fixed before looking at the results, documented here so the verdicts can be
    checked by hand):

    * heavy tail — the top 10 % of rows produce at least 30 % of all copies (3x uniform);
    * Top memorized earlier / more erratically / with higher early Mem-AUC — the Top median
      (first epoch) or mean (forgetting events, early Mem-AUC) is on the paper's side and
      the two-sided Mann–Whitney p < 0.01;
    * early identification — precision of the DynamicCut set from the first half of the
      warm-up is at least twice the random precision p;
    * DynamicCut beats random pruning, DynamicCutMix beats TabCutMix, and the ranking
      transfers to CTGAN / TVAE — the paired difference of relative reductions is positive
      in every seed (at least 3 seeds); "reversed" when negative in every seed;
    * quality holds — DynamicCut's mean Shape, Trend and MLE are at most 1 point below the
      baseline's (TabDDPM).
    """
    out = []
    summ = study["heavy_tail"]["summary"]
    top10 = _float(summ["concentration"].get("0.1", summ["concentration"].get(0.1)))
    out.append({"claim": "heavy tail: a small Top group gets most copies",
                "verdict": "holds" if top10 is not None and top10 >= 0.30 else "does not hold",
                "numbers": f"top 10 % of rows → {_pct(top10)} % of copies; Gini {_float(summ['heavy_tail']['gini']) or 0:.2f}"})
    top, non = summ["top"], summ["non_top"]
    for claim, key, pkey, better, fmt in (
            ("Top rows are memorized earlier", "median_first_epoch", "p_first_epoch", lambda a, b: a < b, "{:g}"),
            ("Top rows are memorized more erratically (forgetting events)", "forgetting_rate", "p_forgetting",
             lambda a, b: a > b, "{:.2f}"),
            ("Top rows have a higher early Mem-AUC", "early_mem_auc", "p_early_mem_auc", lambda a, b: a > b, "{:.3f}")):
        a, b, pv = _float(top[key]), _float(non[key]), _float(summ[pkey])
        ok = a is not None and b is not None and pv is not None and better(a, b) and pv < 0.01
        out.append({"claim": claim, "verdict": "holds" if ok else "does not hold",
                    "numbers": f"Top {fmt.format(a) if a is not None else '–'} vs Non-Top "
                               f"{fmt.format(b) if b is not None else '–'}, Mann–Whitney p = {_p(pv)}"})
    early = study["early_identification"]
    epochs = study["warmup"]["config"]["epochs"]
    half = [e for e in early if e["T"] <= epochs / 2] or early[:1]
    if half:
        e = half[-1]
        prec, rnd = _float(e["precision"]) or 0.0, _float(e["random_precision"]) or 0.0
        out.append({"claim": "the first half of the warm-up identifies the final Top group",
                    "verdict": "holds" if rnd and prec >= 2 * rnd else "does not hold",
                    "numbers": f"T = {e['T']:g}: precision {prec:.2f} vs {rnd:.2f} at random"})
    pairs = {(pr["model"], pr["a"], pr["b"]): pr for pr in study.get("paired", [])}
    for key, claim in ((("tabddpm", "dynamiccut", "random"), "DynamicCut reduces TabDDPM memorization more than "
                                                             "random pruning of as many rows"),
                       (("tabddpm", "dynamiccutmix", "tabcutmix"), "DynamicCutMix beats TabCutMix (TabDDPM)"),
                       (("ctgan", "dynamiccut", "random"), "the TabDDPM ranking transfers to CTGAN (vs random)"),
                       (("tvae", "dynamiccut", "random"), "the TabDDPM ranking transfers to TVAE (vs random)")):
        if key in pairs:
            verdict, numbers = _verdict_pair(pairs[key])
            out.append({"claim": claim, "verdict": verdict, "numbers": numbers})
    rows = {(r["model"], r["method"]): r for r in study["comparison"]}
    base, dc = rows.get(("tabddpm", "baseline")), rows.get(("tabddpm", "dynamiccut"))
    if base and dc:
        deltas = {m: (_float(dc[f"{m}_mean"]) or 0) - (_float(base[f"{m}_mean"]) or 0) for m in ("shape", "trend", "mle")}
        out.append({"claim": "DynamicCut keeps TabDDPM's quality (Shape, Trend, MLE)",
                    "verdict": "holds" if all(v >= -0.01 for v in deltas.values()) else "does not hold",
                    "numbers": ", ".join(f"{m} {v * 100:+.1f} pts" for m, v in deltas.items())})
    return out
