"""Markdown tables of the study, one function per table (lists of lines)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from memviz.measure.intervals import t_interval
from memviz.text import as_float, percent

#: plain-words names of the null model's statistics (:func:`memviz.dynamics.splithalf.dynamics_statistics`)
STATISTICS = {
    "first_epoch": "Top memorized earlier — paper's (Top by all checks; median first epoch)",
    "forgetting_events": ("Top forgets more than its copy rate predicts — paper's (forgetting events per row; "
                          "the paper's claim is more than Non-Top)"),
    "early_mem_auc": "Top has a higher early Mem-AUC — paper's (first quarter of the checks)",
    "early_identification": "selection at T finds the final Top — paper's (Top counts the checks ≤ T too)",
    "first_epoch_split": "Top memorized earlier — split-half (Top by odd checks, measured on even; mean epoch)",
    "forgetting_rate_split": ("Top forgets more than its copy rate predicts — split-half, as a rate (events per "
                              "memorized check; Top still forgets less often than Non-Top)"),
    "early_mem_auc_split": "Top has a higher early Mem-AUC — split-half (first quarter of the checks)",
    "early_identification_after": "selection at T finds the Top of the checks after T (no shared check)",
}
METHOD_NAMES = {"baseline": "Baseline", "dynamiccut": "DynamicCut (raw)", "dynamiccut_excess": "DynamicCut (excess)",
                "dynamiccut_q": "DynamicCut (raw), T = first quarter",
                "dynamiccut_excess_q": "DynamicCut (excess), T = first quarter", "dynamiccutmix": "DynamicCutMix",
                "tabcutmix": "TabCutMix", "tabcutmixplus": "TabCutMixPlus", "tabcutmixplus_dtype":
                "TabCutMixPlus (dtype rule)", "smote": "SMOTE (reference: minority only)",
                "smote_nc": "SMOTE-NC (imbalanced-learn)", "random": "Random pruning",
                "baseline_eq": "Baseline, equal-steps rerun", "tabcutmix_eq": "TabCutMix, equal-steps rerun",
                "early_stop": "Early stop (the warm-up's recommended epoch)", "dp@1": "DP-SGD ε = 1",
                "dp@10": "DP-SGD ε = 10", "dynamic_threshold": "Dynamic threshold (p0 = 0.1, cosine to 0)"}


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def pts(x, digits=1) -> str:
    """A share as signed points."""
    return percent(x, digits, signed=True, unit='')


def interval(x, lo, hi) -> str:
    return f"{pts(x)} ({pts(lo)}, {pts(hi)})" if as_float(x) is not None else "–"


def mean_sd(row: dict, key: str, signed=False, scale100=True) -> str:
    m, s = as_float(row.get(f"{key}_mean")), as_float(row.get(f"{key}_std"))
    if m is None:
        return "–"
    f = (lambda v: f"{v * 100:+.1f}" if signed else f"{v * 100:.1f}") if scale100 else (lambda v: f"{v:.1f}")
    if s is None:
        return f(m)
    return f(m) + (f" ± {abs(s) * 100:.1f}" if scale100 else f" ± {s:.1f}")


# ------------------------------------------------------------------ part 1
def floor_rows(floors: list[dict]) -> list[str]:
    by = {}
    for r in floors:
        by.setdefault(r["dataset"], {})[r["distance"]] = r
    rows = []
    for name, d in by.items():
        p, s = d.get("paper", {}), d.get("standardized", {})
        rows.append([name, f"{p.get('n_reference', 0):,}", f"{p.get('n_holdout', 0):,}",
                     _ci(p), _ci(s), f"{p.get('published_tabddpm', '–')} %",
                     f"{(p.get('seconds') or 0) + (s.get('seconds') or 0):.1f} s"])
    return table(["dataset", "training rows (reference)", "test rows (hold-out)", "floor, paper distance",
                  "floor, standardized distance", "published TabDDPM mem ratio", "cost"], rows)


def _ci(r: dict) -> str:
    if not r:
        return "–"
    return f"{r['floor'] * 100:.1f} % ({r['low'] * 100:.1f}–{r['high'] * 100:.1f})"


# ------------------------------------------------------------------ part 2
def warmup_excess_rows(summaries: dict) -> list[str]:
    """Final check of every warm-up: mem ratio, floor, excess (interval), per dataset."""
    rows = []
    for name, s in summaries.items():
        for w in s.get("warmups", []):
            pc = w.get("per_check") or {}
            fl = w.get("floor") or {}
            last = {k: (v[-1] if isinstance(v, list) and v else None) for k, v in pc.items()}
            rows.append([name, str(w["seed"]), f"{w['epochs']:,}", percent(last.get("mem_ratio"), unit=''),
                         percent(fl.get("floor"), unit=''), interval(last.get("excess"), last.get("excess_low"),
                                                         last.get("excess_high")),
                         _share(excess_copy_share(last.get("excess"), fl.get("floor"))), f"{w['seconds'] / 60:.1f} min"])
    return table(["dataset", "warm-up seed", "epochs", "mem ratio %", "floor %", "excess, points (95 % CI of this "
                  "run)", "copy share c", "warm-up cost"], rows)


def _share(c) -> str:
    return "–" if c is None else f"{c * 100:+.1f} %"


def knob_rows(knobs: list[dict], datasets) -> list[str]:
    """Excess against (rows, epochs): one row per setting, one column per dataset (each seed)."""
    keys = sorted({(r["n_rows"], r["epochs"]) for r in knobs}, key=lambda k: (k[0], k[1]))
    rows = []
    for n, e in keys:
        cells, steps, secs = [], None, []
        for d in datasets:
            rs = sorted((r for r in knobs if r["dataset"] == d and (r["n_rows"], r["epochs"]) == (n, e)),
                        key=lambda r: r["seed"])
            steps = steps or (rs[0]["steps"] if rs else None)
            secs += [r["fit_cpu_seconds"] for r in rs]
            cells.append("<br>".join(f"{interval(r['excess'], r['excess_low'], r['excess_high'])} "
                                     f"[floor {percent(r['floor'], unit='')}, c {_share(excess_copy_share(r['excess'], r['floor']))}]"
                                     for r in rs) or "–")
        rows.append([f"{n:,}", f"{e:,}", f"{steps:,}" if steps else "–", *cells,
                     f"{np.mean(secs):.0f} s" if secs else "–"])
    return table(["training rows", "epochs", "steps", *[f"{d}: excess, points (95 % CI)" for d in datasets],
                  "training CPU s (mean)"], rows)


# ------------------------------------------------------------------ part 4
def pilot_rows(pilot) -> list[str]:
    """The pilot (a DataFrame of every check of every finished run): the last check of each run, then per
    setting the mean excess and copy share over seeds with the t interval over seeds."""
    if pilot is None or len(pilot) == 0:
        return []
    done = pilot["finished"].astype(bool) if "finished" in pilot.columns else pd.Series(True, index=pilot.index)
    last = pilot[done].sort_values("check").groupby(["n_train", "epochs", "seed"], sort=False).tail(1)
    rows = []
    for (n, e), g in last.sort_values(["n_train", "epochs", "seed"]).groupby(["n_train", "epochs"]):
        per = "<br>".join(f"seed {int(r.seed)}: {interval(r.excess, r.excess_low, r.excess_high)}"
                          for r in g.itertuples())
        m, lo, hi = t_interval(g["excess"])
        cm, clo, chi = t_interval(g["copy_share"])
        over = (f"{m * 100:+.1f} ({lo * 100:+.1f}, {hi * 100:+.1f})" if np.isfinite(lo) else f"{m * 100:+.1f} "
                "(one seed)")
        rows.append([f"{n:,}", f"{e:,}", f"{int(g['steps'].iloc[0]):,}", str(len(g)), percent(g["floor"].mean(), unit=''), per,
                     over, f"{cm * 100:+.1f} %"])
    out = table(["training rows", "epochs", "optimiser steps", "seeds", "floor %", "excess at the last check, "
                 "points (95 % CI of each run)", "mean excess over seeds (95 % t interval over seeds)",
                 "copy share c (mean)"], rows)
    part = pilot[~done].sort_values("check").groupby(["n_train", "epochs", "seed"], sort=False).tail(1)
    for r in part.itertuples():
        out += [f"Unfinished (resumes from its last check): {r.n_train:,} rows × {r.epochs:,} epochs, seed {r.seed}, "
                f"at epoch {r.epoch:,}: excess {interval(r.excess, r.excess_low, r.excess_high)} points "
                "(the learning rate decays over all the epochs, so a check before the end is not a shorter run).",
                ""]
    return out


def excess_copy_share(excess, floor):
    """c = excess / (1 − floor): the share of the rows fresh real rows would not flag that the model's do."""
    e, f = as_float(excess), as_float(floor)
    return None if e is None or f is None or f >= 1 else e / (1 - f)


def _c(row: dict, ex: str = "excess", fl: str = "floor") -> str:
    c = excess_copy_share(row.get(f"{ex}_mean"), row.get(f"{fl}_mean"))
    return "–" if c is None else f"{c * 100:+.1f} %"


def _steps(row: dict) -> str:
    m = as_float(row.get("steps_mean"))
    if m is None:
        return "–"
    sd = as_float(row.get("steps_std")) or 0.0
    return f"{m:,.0f}" + (f" ± {sd:,.0f}" if sd else "")


def mitigation_rows(summary: list[dict], model: str = "tabddpm") -> list[str]:
    rows = []
    for r in summary:
        if r["model"] != model:
            continue
        rows.append([METHOD_NAMES.get(r["method"], r["method"]), str(r["n_seeds"]), _steps(r), mean_sd(r, "mem_ratio"),
                     mean_sd(r, "excess", signed=True), _c(r), mean_sd(r, "relative_reduction", signed=True),
                     mean_sd(r, "relative_reduction_pruned", signed=True),
                     mean_sd(r, "mem_ratio_kept") if "mem_ratio_kept_mean" in r else mean_sd(r, "mem_ratio_pruned"),
                     mean_sd(r, "control_kept"), mean_sd(r, "floor_kept"),
                     mean_sd(r, "n_flagged_removed", scale100=False), mean_sd(r, "shape"), mean_sd(r, "trend"),
                     mean_sd(r, "mle"), mean_sd(r, "total_seconds", scale100=False)])
    return table(["method", "seeds", "optimiser steps", "mem vs original %", "excess vs original, points",
                  "copy share c", "reduction vs the baseline, original table %",
                  "paper-style reduction: mem vs the pruned table %", "mem vs kept %", "control: baseline vs kept %",
                  "floor vs kept %", "flagged rows copying a removed row", "Shape", "Trend", "MLE", "cell s"], rows)


def onion_rows(summaries: dict) -> list[str]:
    """The kept rows: DynamicCut beside random pruning of as many rows, both against the same kept rows'
    floor, and the baseline's rows of the same seed (and of the other seeds, where measured) as controls."""
    rows = []
    for d, s in summaries.items():
        by = {r["method"]: r for r in s.get("summary", []) if r["model"] == "tabddpm"}
        for m in ("dynamiccut", "dynamiccut_excess", "random"):
            r = by.get(m)
            if r is None or as_float(r.get("mem_ratio_kept_mean")) is None:
                continue
            ex = as_float(r["mem_ratio_kept_mean"]) - (as_float(r.get("floor_kept_mean")) or 0.0)
            c = excess_copy_share(ex, r.get("floor_kept_mean"))
            rows.append([d, METHOD_NAMES.get(m, m), mean_sd(r, "mem_ratio_kept"), mean_sd(r, "floor_kept"),
                         f"{ex * 100:+.1f}", "–" if c is None else f"{c * 100:+.1f} %", mean_sd(r, "control_kept"),
                         mean_sd(r, "control_kept_cross"), mean_sd(by.get("baseline", {}), "excess", signed=True)])
    return table(["dataset", "method", "mem vs kept %", "floor vs kept %", "excess vs kept, points",
                  "copy share c vs kept", "control: same-seed baseline vs kept %",
                  "control: other seeds' baselines vs kept %", "baseline excess vs original, points"], rows)


def overlap_rows(summaries: dict) -> list[str]:
    rows = []
    for d, s in summaries.items():
        for o in s.get("overlap", []):
            t = "–" if o["T_frac"] is None else ("first quarter" if o["T_frac"] < 0.5 else "first half")
            rows.append([d, o["between"], o["score"], t, str(o["pairs"]), f"{o['mean']:.2f}",
                         f"{o['min']:.2f}–{o['max']:.2f}", f"{o['random']:.3f}"])
    return table(["dataset", "between", "score", "T", "pairs", "mean Jaccard", "range", "two random selections"],
                 rows)


# ------------------------------------------------------------------ part 5
def early_rows(summaries: dict) -> list[str]:
    rows = []
    for d, s in summaries.items():
        ws = s.get("warmups", [])
        if not ws:
            continue
        epochs = ws[0]["epochs"]
        for frac in sorted({e["T_frac"] for w in ws for e in w["early"]}):
            for score in ("raw", "excess"):
                es = [e for w in ws for e in w["early"] if e["T_frac"] == frac and e["score"] == score]
                if not es:
                    continue
                T = es[0]["T"]
                after = [e["precision"] for e in es if e["target"] == "after"]
                final = [e["precision"] for e in es if e["target"] == "final"]
                rows.append([d, "first quarter" if frac < 0.5 else "first half", f"{T:,} of {epochs:,} "
                             f"({T / epochs * 100:.0f} %)", score, f"{np.mean(final):.2f}",
                             f"{np.nanmean(after):.2f} ({np.nanmin(after):.2f}–{np.nanmax(after):.2f})",
                             f"{es[0]['n_checks_used']}"])
    return table(["dataset", "T", "cost: epochs of warm-up", "score", "precision vs final Top (circular)",
                  "precision vs Top after T (seeds' mean, range)", "checks used"], rows)


# ------------------------------------------------------------------ part 6
def budget_rows(budget: list[dict]) -> list[str]:
    rows = [[r["model"].upper() if r["model"] != "tabddpm" else "TabDDPM", f"{r['epochs']:,}",
             f"{r['fit_cpu_seconds']:.0f} s", f"{r['mle'] * 100:.1f}", f"{r['mle_real'] * 100:.1f}",
             f"{(r['mle_real'] - r['mle']) * 100:.1f}", percent(r["mem_ratio"], unit=''), pts(r["excess"])]
            for r in sorted(budget, key=lambda r: (r["model"], r["epochs"]))]
    return table(["model", "epochs", "training CPU", "MLE (AUC %)", "real-data line", "gap, points",
                  "mem ratio %", "excess, points"], rows)


# ------------------------------------------------------------------ part 7
def cluster_rows(summaries: dict) -> list[str]:
    """Multi-column clusters of each rule per dataset (single columns are left out: they swap alone)."""
    rows = []
    for d, s in summaries.items():
        cl = s.get("clusters") or {}
        if not cl:
            continue
        cells = []
        for rule in ("schema", "dtype"):
            groups = [g for g in cl.get(rule, []) if len(g) > 1]
            cells.append("; ".join("[" + ", ".join(g) + "]" for g in groups) or "none")
        n = [str(len(cl.get(r, []))) for r in ("schema", "dtype")]
        rows.append([d, f"{s['n_train']:,}", *cells, " / ".join(n)])
    return table(["dataset", "training rows", "schema rule (memviz): clusters of 2+ columns",
                  "dtype rule (reference): clusters of 2+ columns", "clusters K (schema / dtype)"], rows)


def stop_rows(summaries: dict) -> list[str]:
    """Early stop beside the same seed's baseline, seed by seed (``summary["stop"]``, :func:`memviz.study.mitigation.stop_records`)."""
    rows = []
    for name, s in summaries.items():
        for r in s.get("stop") or []:
            d = None if r["es_excess"] is None or r["base_excess"] is None else r["base_excess"] - r["es_excess"]
            rows.append([name, str(r["seed"]), f"{r['epochs']:,.0f}" if r["epochs"] else "–",
                         f"{r['steps']:,.0f}" if r["steps"] else "–",
                         pts(r["base_excess"]), interval(r["es_excess"], r["es_excess_low"], r["es_excess_high"]),
                         pts(d), _c({"excess_mean": r["base_excess"], "floor_mean": r["base_floor"]}),
                         _c({"excess_mean": r["es_excess"], "floor_mean": r["es_floor"]}),
                         *[f"{percent(r[f'base_{f}'], unit='')} / {percent(r[f'es_{f}'], unit='')}" for f in ("shape", "trend", "mle")]])
    if not rows:
        return []
    return table(["dataset", "seed", "epochs E* (recommended)", "optimiser steps", "baseline excess, points",
                  "early stop excess, points (95 % CI)", "excess lowered by, points", "copy share c: baseline",
                  "copy share c: early stop", "Shape ×100: baseline / early stop", "Trend ×100: baseline / early stop",
                  "MLE ×100: baseline / early stop"], rows)


def _figure(r: dict, k: str, scale: float = 100.0, fmt: str = "{:+.1f}") -> str:
    """``mean (low, high)`` of figure ``k`` of a three-way record (the mean alone without bounds; "–" without it)."""
    m, lo, hi = (as_float(r.get(k + s)) for s in ("", "_low", "_high"))
    if m is None:
        return "–"
    return fmt.format(m * scale) + ("" if lo is None or hi is None else
                                    f" ({fmt.format(lo * scale)}, {fmt.format(hi * scale)})")


def three_way_rows(summaries: dict) -> list[str]:
    """The DynamicCut write-up's table per dataset: each method's privacy gain, quality change and cost against
    the baseline of the same seed (:func:`memviz.compare.threeway.three_way`, stored in ``summary.json``);
    means over seeds with their 95 % t intervals. Empty when no dataset of the scale has it."""
    rows = []
    for d, s in summaries.items():
        for r in s.get("three_way") or []:
            if r["model"] != "tabddpm":
                continue
            eps = as_float(r.get("epsilon_spent"))
            left = as_float(r.get("row_epochs_left_out"))
            rows.append([d, METHOD_NAMES.get(r["method"], r["method"]), r["family"], str(r["n_seeds"]),
                         *(_figure(r, k) for k in ("gain_rel", "gain_points", "shape_change", "trend_change",
                                                   "mle_change")),
                         _figure(r, "time_ratio", 1.0, "{:.2f}"), "–" if eps is None else f"{eps:.2f}",
                         "–" if not left else f"{left:,.0f}"])
    if not rows:
        return []
    return table(["dataset", "method", "family", "seeds", "privacy gain: mem ratio lowered by, % of the baseline's",
                  "privacy gain: excess lowered by, points", "Shape change, points", "Trend change, points",
                  "MLE change, points", "cost: cell wall time ÷ the baseline's", "cost: ε spent",
                  "cost: row-epochs left out"], rows)
