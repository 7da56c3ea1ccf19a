"""Markdown tables of the study, one function per table (lists of lines)."""
from __future__ import annotations

import numpy as np

from memviz.study.util import _float, _p, _pct

#: plain-words names of the null model's statistics (:func:`memviz.findings.splithalf.dynamics_statistics`)
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
                "smote_nc": "SMOTE-NC (imbalanced-learn)", "random": "Random pruning"}


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def pts(x, digits=1) -> str:
    """A share as signed points."""
    return _pct(x, signed=True, digits=digits)


def interval(x, lo, hi) -> str:
    return f"{pts(x)} ({pts(lo)}, {pts(hi)})" if _float(x) is not None else "–"


def mean_sd(row: dict, key: str, signed=False, scale100=True) -> str:
    m, s = _float(row.get(f"{key}_mean")), _float(row.get(f"{key}_std"))
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
            rows.append([name, str(w["seed"]), f"{w['epochs']:,}", _pct(last.get("mem_ratio")),
                         _pct(fl.get("floor")), interval(last.get("excess"), last.get("excess_low"),
                                                         last.get("excess_high")),
                         f"{w['seconds'] / 60:.1f} min"])
    return table(["dataset", "warm-up seed", "epochs", "mem ratio %", "floor %", "excess, points (95 % CI)",
                  "warm-up cost"], rows)


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
                                     f"[floor {_pct(r['floor'])}]" for r in rs) or "–")
        rows.append([f"{n:,}", f"{e:,}", f"{steps:,}" if steps else "–", *cells,
                     f"{np.mean(secs):.0f} s" if secs else "–"])
    return table(["training rows", "epochs", "steps", *[f"{d}: excess, points (95 % CI)" for d in datasets],
                  "training CPU s (mean)"], rows)


# ------------------------------------------------------------------ part 3
HEAVY_TAIL = ("heavy tail beyond the floor: the top 10 % of rows hold more of the copies than fresh real rows' "
              "flags would give them")


def heavy_tail_label(ws: list[dict]) -> str:
    """Label of the heavy-tail test over warm-up seeds (the rule of :func:`memviz.study.findings.combine_null`)."""
    if not ws:
        return ""
    from memviz.study.findings import combine_null

    lab = combine_null([w["verdict"] for w in ws], [w["observed"] for w in ws], [w["null_median"] for w in ws],
                       "higher")
    f = {"combined": lab, "n_holds": sum(w["verdict"] == "holds" for w in ws),
         "n_reversed": sum(w["verdict"] == "reversed" for w in ws), "n_seeds": len(ws)}
    return null_label(f)


def null_label(f: dict) -> str:
    """A combined null label with its per-seed counts."""
    h, r, n = f["n_holds"], f["n_reversed"], f["n_seeds"]
    if f["combined"] == "holds":
        return f"holds ({h}/{n})"
    if f["combined"] == "reversed":
        return f"reversed ({r}/{n})"
    return f"{f['combined']} (holds {h}, reversed {r} of {n})"


def null_keys(summaries: dict) -> list[tuple]:
    """(statistic, T share) pairs in display order: the paper's, then the non-circular; T half first."""
    keys = {(f["name"], f["T_frac"]) for s in summaries.values() for f in s.get("null", [])}
    order = list(STATISTICS)
    return sorted(keys, key=lambda k: (order.index(k[0]) if k[0] in order else len(order), -k[1]))


def null_name(name: str, frac: float) -> str:
    return STATISTICS.get(name, name) + (f", T = first {'quarter' if frac < 0.5 else 'half'}"
                                         if name.startswith("early_identification") else "")


def null_rows(summaries: dict) -> list[str]:
    names = list(summaries)
    rows = []
    for name, frac in null_keys(summaries):
        cells = []
        for d in names:
            f = next((x for x in summaries[d].get("null", []) if x["name"] == name and x["T_frac"] == frac), None)
            sides = ("precision", "random") if name.startswith("early_identification") else ("Top", "Non-Top")
            cells.append("–" if f is None else
                         f"**{null_label(f)}**; {sides[0]} {_num3(f['value'], False)} vs {sides[1]} "
                         f"{_num3(f['baseline'], False)}: effect {_num3(f['observed'])}, null "
                         f"{_num3(f['null_low'])} to {_num3(f['null_high'])}; paper's criterion: "
                         f"{f['naive_holds']}/{f['n_seeds']} runs, {f['naive_null_share'] * 100:.0f} % of null runs")
        rows.append([null_name(name, frac), *cells])
    ht = []
    for d in names:
        ws = [w["heavy_tail_null"] for w in summaries[d].get("warmups", []) if w.get("heavy_tail_null")]
        ht.append("–" if not ws else
                  f"**{heavy_tail_label(ws)}**; top 10 % hold {np.mean([w['observed'] for w in ws]) * 100:.1f} % of "
                  f"copies vs null {min(w['null_low'] for w in ws) * 100:.1f}–"
                  f"{max(w['null_high'] for w in ws) * 100:.1f} %; over-copied rows (q < 0.05) "
                  f"{np.mean([w['n_over_copied'] for w in ws]):.0f} of "
                  f"{ws[0]['n_rows']:,}")
    rows.append([HEAVY_TAIL, *ht])
    return table(["statistic (effect = Top − Non-Top; precision − random)", *names], rows)


def _num3(x, signed=True) -> str:
    x = _float(x)
    return "–" if x is None else (f"{x:+.3g}" if signed else f"{x:.3g}")


# ------------------------------------------------------------------ part 4
def mitigation_rows(summary: list[dict], model: str = "tabddpm") -> list[str]:
    rows = []
    for r in summary:
        if r["model"] != model:
            continue
        rows.append([METHOD_NAMES.get(r["method"], r["method"]), str(r["n_seeds"]), mean_sd(r, "mem_ratio"),
                     mean_sd(r, "excess", signed=True), mean_sd(r, "mem_ratio_kept") if "mem_ratio_kept_mean" in r
                     else mean_sd(r, "mem_ratio_pruned"), mean_sd(r, "control_kept"), mean_sd(r, "floor_kept"),
                     mean_sd(r, "n_flagged_removed", scale100=False), mean_sd(r, "shape"), mean_sd(r, "mle"),
                     mean_sd(r, "total_seconds", scale100=False)])
    return table(["method", "seeds", "mem vs original %", "excess vs original, points", "mem vs kept %",
                  "control: baseline vs kept %", "floor vs kept %", "flagged rows copying a removed row", "Shape",
                  "MLE", "cell s"], rows)


def test_rows(summaries: dict) -> list[str]:
    names = list(summaries)
    claims = []
    for s in summaries.values():
        for t in s.get("tests", []):
            if t["claim"] not in claims:
                claims.append(t["claim"])
    rows = []
    for c in claims:
        cells = []
        for d in names:
            t = next((x for x in summaries[d].get("tests", []) if x["claim"] == c), None)
            cells.append("–" if t is None else
                         f"**{t['label']}**; Δ {pts(t['mean'])} pts, {t['n_positive']}/{t['n']} seeds on the "
                         f"claim's side, p = {_p(t['p_claim'])} (min {_p(t['min_p'])})")
        rows.append([c, *cells])
    return table(["claim (paired by seed; exact one-sided Wilcoxon signed-rank)", *names], rows)


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
             f"{(r['mle_real'] - r['mle']) * 100:.1f}", _pct(r["mem_ratio"]), pts(r["excess"])]
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
