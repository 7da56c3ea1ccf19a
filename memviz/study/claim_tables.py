"""Markdown tables of the study's verdicts: every claim with raw and Holm-adjusted p, its effect
with the interval over seeds, the smallest adjusted p the seeds allow, and power
(:mod:`memviz.study.inference`)."""
from __future__ import annotations

from memviz.study.tables import STATISTICS, table
from memviz.study.util import as_float, p_text

HEAVY_TAIL = ("heavy tail beyond the floor: the top 10 % of rows hold more of the copies than fresh real rows' "
              "flags would give them")


def null_name(name: str, frac: float) -> str:
    if name == "heavy_tail":
        return HEAVY_TAIL
    return STATISTICS.get(name, name) + (f", T = first {'quarter' if frac < 0.5 else 'half'}"
                                         if name.startswith("early_identification") else "")


def null_keys(summaries: dict) -> list[tuple]:
    """(statistic, T share) pairs in display order: the paper's, then the non-circular; T half first."""
    keys = {(f["name"], f["T_frac"]) for s in summaries.values() for f in s.get("null", [])}
    order = list(STATISTICS)
    return sorted(keys, key=lambda k: (order.index(k[0]) if k[0] in order else len(order), -k[1]))


def _pts(x, digits=1) -> str:
    x = as_float(x)
    return "–" if x is None else f"{x * 100:+.{digits}f}"


def effect_ci(t: dict, scale100: bool = True) -> str:
    """``+a (lo, hi)``: the mean effect with its 95 % t interval over seeds."""
    e, lo, hi = (as_float(t.get(k)) for k in ("effect", "effect_low", "effect_high"))
    if e is None:
        return "–"
    f = (lambda v: f"{v * 100:+.1f}") if scale100 else (lambda v: f"{v:+.3g}")
    return f(e) + (f" ({f(lo)}, {f(hi)})" if lo is not None and hi is not None else "")


def power_text(t: dict) -> str:
    p = as_float(t.get("power"))
    return "–" if p is None else f"{p:.2f}"


def p_cells(t: dict) -> list[str]:
    return [p_text(t.get("p_two")), f"{p_text(t.get('p_adj'))} (m = {t.get('m', '–')})", p_text(t.get("min_p_adj"))]


def test_rows(summaries: dict) -> list[str]:
    """One line per (claim, dataset): the paired test with its family correction (long format)."""
    rows = []
    for d, s in summaries.items():
        for t in s.get("tests", []):
            rel, r = as_float(t.get("relative")), as_float(t.get("pair_corr"))
            rows.append([t["claim"], d, t.get("family", "–"), f"{t['n_positive']}/{t['n']}",
                         effect_ci(t) + ("" if rel is None else f"; {rel * 100:+.0f} % of the comparator")
                         + ("" if r is None else f"; arms' r over seeds {r:+.2f}"),
                         *p_cells(t), power_text(t), power_text({"power": t.get("power_10")}),
                         f"**{t['label']}**" + _budget(t)])
    rows.sort(key=lambda r: (r[2], r[0], r[1]))
    return table(["claim", "dataset", "family", "seeds on the claim's side", "effect, points (95 % CI over seeds)",
                  "p (two-sided, exact Wilcoxon)", "Holm p̃ (family size)", "smallest p̃ the seeds allow",
                  "power at the paper's effect", "… with 10 seeds", "label"], rows)


def _budget(t: dict) -> str:
    """A note when the two arms trained for different numbers of optimiser steps."""
    a, b = as_float(t.get("steps_a")), as_float(t.get("steps_b"))
    if a is None or b is None or abs(a - b) < 0.5:
        return ""
    if "early_stop" in (t.get("a"), t.get("b")):  # fewer steps is early stop's treatment, not a confound
        return f" ({a:,.0f} vs {b:,.0f} optimiser steps: early stop trains fewer by design)"
    return f" (confounded: {a:,.0f} vs {b:,.0f} optimiser steps)"


def null_rows(summaries: dict) -> list[str]:
    """One line per (statistic, dataset): the per-seed verdicts combined by the binomial count."""
    rows = []
    keys = null_keys(summaries) + [("heavy_tail", 0.0)]
    for name, frac in keys:
        for d, s in summaries.items():
            if name == "heavy_tail":
                f = s.get("heavy_tail")
                extra = "" if f is None else (f"top 10 % hold {f['observed'] * 100:.1f} % of copies vs null "
                                              f"{f['null_low'] * 100:.1f}–{f['null_high'] * 100:.1f} %; "
                                              f"over-copied rows {f['n_over_copied']:.0f} of {f['n_rows']:,}")
            else:
                f = next((x for x in s.get("null", []) if x["name"] == name and x["T_frac"] == frac), None)
                sides = ("precision", "random") if name.startswith("early_identification") else ("Top", "Non-Top")
                extra = "" if f is None else (
                    f"{sides[0]} {_g(f['value'])} vs {sides[1]} {_g(f['baseline'])}; null {_g(f['null_low'], True)} "
                    f"to {_g(f['null_high'], True)}; paper's criterion {f['naive_holds']}/{f['n_seeds']} runs, "
                    f"{f['naive_null_share'] * 100:.0f} % of null runs")
            if f is None:
                continue
            rows.append([null_name(name, frac), d, f"{f['n_holds']} / {f['n_reversed']} of {f['n_seeds']}",
                         effect_ci(f, scale100=False), extra, *p_cells(f), power_text(f), f"**{f['label']}**"])
    return table(["statistic", "dataset", "seeds beyond the null: claim's side / opposite", "effect beyond the "
                  "null median (95 % CI over seeds)", "figures (means over seeds)", "p (two-sided, binomial count)",
                  "Holm p̃ (family size)", "smallest p̃ the seeds allow", "power at the observed effect", "label"],
                 rows)


def _g(x, signed=False) -> str:
    x = as_float(x)
    return "–" if x is None else (f"{x:+.3g}" if signed else f"{x:.3g}")


def overview_rows(study: dict, scales: list[str], datasets_of) -> list[str]:
    """Every label: claims × (scale, dataset)."""
    cols = [(sc, d) for sc in scales for d in datasets_of(study[sc])]
    if not cols:
        return []
    rows, keys = {}, []
    for sc, d in cols:
        s = study[sc][d]
        for f in sorted(s.get("null", []), key=lambda f: null_keys({d: s}).index((f["name"], f["T_frac"]))):
            k = null_name(f["name"], f["T_frac"])
            rows.setdefault(k, {})[(sc, d)] = _short(f)
            keys.append(k)
        if s.get("heavy_tail"):
            rows.setdefault(HEAVY_TAIL, {})[(sc, d)] = _short(s["heavy_tail"])
            keys.append(HEAVY_TAIL)
        for t in s.get("tests", []):
            rows.setdefault(t["claim"], {})[(sc, d)] = _short(t)
            keys.append(t["claim"])
    keys = list(dict.fromkeys(keys))
    head = ["claim"] + [f"{d} ({sc})" for sc, d in cols]
    return table(head, [[k] + [rows[k].get(c, "–") for c in cols] for k in keys])


def _short(t: dict) -> str:
    return f"{t['label']} (p̃ {p_text(t.get('p_adj'))})" + ("; unequal steps" if _budget(t) else "")
