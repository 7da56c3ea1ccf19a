"""The "why these rows" study's results as Markdown tables and one SVG figure (from ``results.json``'s record).

The answers are read by the rules declared in ``docs/study-why.md``: a factor "predicts" when its Holm-adjusted
p is below 0.05 on its declared side (AUC above 0.5); "a warm-up is not needed for pruning" on a table when the
isolation cut's non-inferiority claim against DynamicCut holds there.
"""
from __future__ import annotations

import math
from html import escape

from memviz.risk.explanation import feature_label
from memviz.study.inference import ALPHA

FACTOR_LABELS = {"isolation, standardized distance (post hoc)": "isolation, standardized (post hoc) ↑",
                 "isolation": "isolation (k = 5) ↑", "nearest": "nearest other row ↑",
                 "exact_duplicates": "exact duplicates ↓", "near_duplicates": "near duplicates ↓",
                 "value_rarity": "rarest value's share ↓", "pair_rarity": "rarest pair's share ↓",
                 "combination_count": "rows with all its categories ↓", "extremeness": "extremeness share ↓"}
#: the declared factors (the model and the post-hoc exploratory score are not factors)
DECLARED = tuple(k for k in ("isolation", "nearest", "exact_duplicates", "near_duplicates", "value_rarity",
                             "pair_rarity", "combination_count", "extremeness"))
METHOD_LABELS = {"baseline": "baseline", "dynamiccut": "DynamicCut", "random": "random pruning",
                 "isolation": "isolation cut"}


def p_text_with_floor(p: float, n_perm: int | None = None) -> str:
    """A p-value as the study writes it: "p < 1e-4" where a permutation test sits at its floor 1 / (1 + B)."""
    if p is None or not math.isfinite(p):
        return "–"
    if n_perm is not None and p <= 1.0 / (1 + n_perm) + 1e-15:
        return f"p < {_floor_text(n_perm)}"
    return f"p {p:.1e}" if p < 1e-3 else f"p {p:.3f}"


def _floor_text(n_perm: int) -> str:
    """The smallest power of ten at or above the permutation floor 1 / (1 + B): 1e-4 for B = 10,000 or 20,000."""
    return f"1e-{int(math.floor(math.log10(1 + n_perm)))}"



def _p(p, n_perm=None) -> str:
    return p_text_with_floor(p, n_perm)


def _num(x) -> float:
    """A JSON number (None for NaN in strict JSON) as a float."""
    return math.nan if x is None else float(x)


def _auc(r: dict) -> str:
    if not math.isfinite(_num(r.get("auc"))):
        return "–"
    lo, hi = _num(r.get("low")), _num(r.get("high"))
    return f"{r['auc']:.3f} ({lo:.3f}–{hi:.3f})" if math.isfinite(lo) and math.isfinite(hi) else f"{r['auc']:.3f}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def _iv(mean, low, high, scale=100.0, sign=True) -> str:
    """"+1.2 (+0.3 to +2.1)", or the mean alone where one seed gives no interval."""
    f = (lambda x: f"{scale * x:+.1f}") if sign else (lambda x: f"{scale * x:.1f}")  # noqa: E731
    mean, low, high = _num(mean), _num(low), _num(high)
    if mean is None or not math.isfinite(mean):
        return "–"
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"{f(mean)} (one seed: no interval)"
    return f"{f(mean)} ({f(low)} to {f(high)})"


def _verdict(r: dict) -> str:
    if r.get("exploratory"):
        return "exploratory, no verdict"
    if r.get("p_adj") is None or not math.isfinite(r["p_adj"]):
        return "–"
    if r["p_adj"] < ALPHA:
        return "predicts" if r["auc"] > 0.5 else "reversed"
    return "not shown"


def factor_rows(res: dict) -> list[str]:
    rows = res["factors"]
    tables = list(dict.fromkeys(r["dataset"] for r in rows))
    names = list(dict.fromkeys(r["score"] for r in rows))
    by = {(r["dataset"], r["score"]): r for r in rows}
    out = []
    for n in names:
        line = [FACTOR_LABELS.get(n, n)]
        for t in tables:
            r = by.get((t, n))
            p_adj = "" if r is None or r.get("p_adj") is None else f", p̃ {r['p_adj']:.2g}"
            line.append("–" if r is None else f"{_auc(r)}; {_p(r['p'], res['n_perm'])}{p_adj}: {_verdict(r)}")
        out.append(line)
    return _table(["score (risk ↑ / ↓)"] + [f"{t}: AUC (95 % interval); p, Holm p̃" for t in tables], out)


def attack_rows(res: dict) -> list[str]:
    rows = [r for r in res["attack"] if not r.get("too_few")]
    few = [r for r in res["attack"] if r.get("too_few")]
    out_lines = []
    if rows:
        cols = list(dict.fromkeys((r["dataset"], r["targets"]) for r in rows))
        by = {(r["dataset"], r["targets"], r["score"]): r for r in rows}
        names = list(dict.fromkeys(r["score"] for r in rows))
        out = [[FACTOR_LABELS.get(n, n)] + ["–" if (r := by.get((d, t, n))) is None else
                                             f"{_auc(r)}; {_p(r['p'], res['n_perm'])}, p̃ {r['p_adj']:.2g}"
                                             for d, t in cols] for n in names]
        head = [f"{d}, {t} ({by[(d, t, names[0])]['n_exposed']} exposed of {by[(d, t, names[0])]['n_pairs']} "
                f"(row, attack) pairs, {by[(d, t, names[0])]['n_rows']} rows)" for d, t in cols]
        out_lines += _table(["score"] + head, out)
    for r in few:
        out_lines += [f"{r['dataset']}, {r['targets']}: {r['n_exposed']} exposed of {r['n_pairs']} (row, attack) "
                      f"pairs: too few to test (at least 5 on each side).", ""]
    return out_lines or ["No attack cell was found (docs/study/attacks).", ""]


def importance_rows(res: dict) -> list[str]:
    out = []
    for ds, imp in res["importance"].items():
        out.append([ds, "; ".join(f"{feature_label(r['feature'], r['kind'])} {100 * r['share']:.0f} %"
                                  + ("" if r["direction"] is None or not math.isfinite(r["direction"] or math.nan)
                                     else f" (ρ {r['direction']:+.2f})") for r in imp[:6])])
    return _table(["table", "features by mean |SHAP| (share of the total; ρ: Spearman of the value and its SHAP)"],
                  out)


def pruning_rows(res: dict) -> list[str]:
    summ = [r for r in res["summary"] if r["model"] == "tabddpm"]
    out = []
    for r in summ:
        def f(k, s=100):
            m, sd = r.get(f"{k}_mean"), r.get(f"{k}_std")
            if m is None or not math.isfinite(m):
                return "–"
            return f"{s * m:.1f}" + (f" ± {s * sd:.1f}" if sd is not None and math.isfinite(sd) else "")
        out.append([r["dataset"], METHOD_LABELS.get(r["method"], r["method"]), str(r["n_seeds"]), f("mem_ratio"),
                    f("excess"), f("shape"), f("trend"), f("mle")])
    return _table(["table", "method", "seeds", "mem ratio %", "excess (pts)", "Shape", "Trend", "MLE"], out)


def claim_rows(res: dict, families=("pretraining", "quality", "pruning")) -> list[str]:
    out = []
    for t in res["pruning"]:
        if t["family"] not in families:
            continue
        eff = _iv(t.get("effect"), t.get("effect_low"), t.get("effect_high"))
        out.append([t["dataset"], t["claim"], t["family"], f"{t['n_positive']}/{t['n']}", eff,
                    "–" if t.get("p_adj") is None else f"{t['p_adj']:.3g}", t["label"]])
    return _table(["table", "claim", "family", "seeds on the claim's side", "mean d (points; 95 % t interval)",
                   "Holm p̃", "label"], out)


def cost_rows(res: dict) -> list[str]:
    out = []
    for ds, c in res["costs"].items():
        rank, wu, share = _num(c.get("ranking_seconds")), _num(c.get("warmup_seconds")), _num(c.get("T_share"))
        out.append([ds, "–" if not math.isfinite(rank) else f"{rank:.2f} s",
                    "–" if not math.isfinite(wu) else f"{wu:.0f} s (to T: {wu * share:.0f} s)",
                    f"{_num(c.get('cell_seconds')):.0f} s",
                    f"{wu / rank:,.0f}×" if math.isfinite(rank) and rank > 0 and math.isfinite(wu) else "–"])
    return _table(["table", "isolation ranking", "DynamicCut's warm-up (training and 25 checks)",
                   "one cell (fit, sample, evaluate)", "warm-up / ranking"], out)


def combination_rows(res: dict) -> list[str]:
    out = []
    for r in res["combinations"]:
        out.append([r["dataset"], METHOD_LABELS.get(r["method"], r["method"]), f"{r['baseline']:.1f}",
                    f"{r['method_mean']:.1f}", _iv(r["relative"], r["low"], r["high"]).replace(" (", " % (", 1),
                    f"{r['n_positive']}/{r['n_positive'] + r['n_negative']}",
                    "–" if r.get("p_adj") is None else f"{r['p_adj']:.3g}"])
    return _table(["table", "method", "high-risk copies, baseline (mean over seeds)", "the method's",
                   "reduction against the baseline (95 % t interval)", "seeds with fewer", "Holm p̃"], out)


def answer_b(res: dict) -> str:
    """The plain answer to (b), by the declared rule (a partial reading says on how many seeds)."""
    ni = [t for t in res["pruning"] if t["key"] == "iso_noninf_dc"]
    if not ni:
        return "The pruning cells have not finished: (b) is not answered yet."
    n = min(len(t["seeds"]) for t in ni)
    if n < 10:
        eff = "; ".join(f"{t['dataset']} {_iv(t.get('effect'), t.get('effect_low'), t.get('effect_high'))} points "
                        f"({len(t['seeds'])} seeds)" for t in ni)
        return (f"**A partial reading** (at most {max(len(t['seeds']) for t in ni)} of the 10 planned seeds per "
                "table; exact Wilcoxon with fewer than 6 seeds cannot reach p̃ < 0.05 in a family of 12): the "
                f"isolation cut's copying against DynamicCut's plus the 1-point margin, d = DynamicCut − isolation + "
                f"1 (positive: non-inferior): {eff}. Non-inferiority is not shown on any table, so the study cannot "
                "say that a warm-up is not needed for pruning.")
    holds = [t["dataset"] for t in ni if t["label"] == "holds"]
    other = [t["dataset"] for t in ni if t["label"] != "holds"]
    if holds and not other:
        return (f"On every table ({', '.join(holds)}) the isolation cut copies at most 1 point more than DynamicCut "
                "at the same p (non-inferiority holds after Holm): **a warm-up is not needed for pruning** at this "
                "scale.")
    if holds:
        return (f"Non-inferiority to DynamicCut holds on {', '.join(holds)} (there a warm-up is not needed for "
                f"pruning) and is not shown on {', '.join(other)}.")
    return ("Non-inferiority of the isolation cut to DynamicCut (within 1 point) is **not shown** on any table: "
            "this study cannot say that a warm-up is not needed for pruning.")


def reproduction_line(res: dict) -> list[str]:
    """How far warm-up seeds 0–4 reproduce the regime's committed selections."""
    rep = res.get("reproduction") or {}
    if not rep:
        return []
    return ["Reproduction: warm-up seeds 0–4 have the regime's settings and seeds; their DynamicCut selections "
            "(25 rows) share with the regime's committed ones, Jaccard per seed: " + "; ".join(
                f"{d} " + ", ".join(f"{j:.2f}" for j in js) for d, js in rep.items()) + " (1 = the same rows: the "
            "runs are not bit-identical across sessions, so the regime's cells are not reused here).", ""]


def render_why_results(res: dict) -> str:
    """The results section."""
    L = ["### (a) Which rows are memorized: the factors and the model against the Top group", "",
         "AUC = mean over the warm-up seeds of the AUC of the score for the seed's Top group (25 of 250 rows); 95 % "
         f"bootstrap interval over rows ({res['n_boot']:,} resamples); two-sided permutation p against 0.5 "
         f"({res['n_perm']:,} permutations across rows; \"p < 1e-4\": no permutation reached it); Holm within the "
         "family (every score on every table). Each factor in its declared direction (↑: larger is riskier).", ""]
    L += factor_rows(res)
    L += ["The model (gradient boosting on the row's columns and factors, 5 folds by row) — which features carry "
          "its fit, by SHAP (TreeExplainer, fitted on all rows):", ""] + importance_rows(res)
    L += ["### (a) The rows the targeted attack exposes", "",
          "Over the training targets of the attack study's attacks (section 10: three seeds per table; DynamicCut's "
          "top rows, the named rows and random rows), a target \"exposed\" when its exposure-AUC interval is above "
          "0.5; bootstrap and permutation over the attacked rows; Holm within each set of targets.", ""]
    L += attack_rows(res)
    L += ["### (b) Pruning without a warm-up: the isolation cut against DynamicCut", "", answer_b(res), "",
          "TabDDPM, mean ± sd over seeds (every arm 4,000 optimiser steps; memorization against the original 250 "
          "rows):", ""] + pruning_rows(res)
    L += ["Paired claims (exact Wilcoxon over seeds; d > 0 is the claim's side; Holm within each family over the "
          "three tables):", ""] + claim_rows(res)
    L += ["Cost (mean per run on this shared 2-core machine):", ""] + cost_rows(res) + reproduction_line(res)
    L += ["### (c) High-risk feature combinations, before and after each method", "",
          "High-risk copies: a cell's flagged copies whose nearest training row holds a high-risk pair of values "
          "(held by ≥ 3 rows, Top rate over the other warm-ups ≥ 2× the base rate; cross-fitted per seed); "
          "reduction = (baseline − method) / baseline per seed; Holm over methods × tables.", ""]
    L += combination_rows(res)
    L += ["Figure: [factors_auc.svg](study/why/factors_auc.svg) — each score's AUC with its interval, per table "
          "(Top group, left; the attack's exposed rows, right).", ""] + answer_lines(res)
    return "\n".join(L)


def forest_svg(factor_rows: list[dict], attack_rows: list[dict]) -> str:
    """The study's figure: each score's AUC (dot) and 95 % interval (line) per table, against the Top group
    (left panel) and the attack's exposed rows, all training targets (right panel); 0.5 dashed."""
    panels = [("Top group of the warm-ups", factor_rows),
              ("rows the targeted attack exposes", [r for r in attack_rows if r["targets"] == "all training targets"])]
    names = list(dict.fromkeys(r["score"] for r in factor_rows))
    tables = list(dict.fromkeys(r["dataset"] for r in factor_rows))
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    row_h, left, pw, gap, top = 30, 260, 300, 70, 50
    h = top + row_h * len(names) + 50
    w = left + 2 * pw + gap + 20
    x = lambda v, p: left + p * (pw + gap) + (v - 0.2) / 0.8 * pw  # noqa: E731  (AUC 0.2 .. 1.0)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
         f'<rect width="{w}" height="{h}" fill="white"/>']
    for i, n in enumerate(names):
        y = top + row_h * i + row_h / 2
        s.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(FACTOR_LABELS.get(n, n))}</text>')
    for p, (title, rows) in enumerate(panels):
        s.append(f'<text x="{x(0.6, p)}" y="{top - 28}" text-anchor="middle" font-weight="bold">'
                 f'{escape(title)}</text>')
        for v in (0.2, 0.4, 0.6, 0.8, 1.0):
            s.append(f'<line x1="{x(v, p)}" x2="{x(v, p)}" y1="{top - 10}" y2="{h - 40}" stroke="#ddd"/>'
                     f'<text x="{x(v, p)}" y="{h - 25}" text-anchor="middle">{v:.1f}</text>')
        s.append(f'<line x1="{x(0.5, p)}" x2="{x(0.5, p)}" y1="{top - 10}" y2="{h - 40}" stroke="#555" '
                 'stroke-dasharray="4 3"/>')
        by = {(r["dataset"], r["score"]): r for r in rows}
        for i, n in enumerate(names):
            for j, t in enumerate(tables):
                r = by.get((t, n))
                if r is None or not all(math.isfinite(r[k]) for k in ("auc", "low", "high")):
                    continue
                y = top + row_h * i + 8 + j * 7
                c = colors[j % len(colors)]
                s.append(f'<line x1="{x(r["low"], p)}" x2="{x(r["high"], p)}" y1="{y}" y2="{y}" stroke="{c}" '
                         'stroke-width="2"/>'
                         f'<circle cx="{x(r["auc"], p)}" cy="{y}" r="3.5" fill="{c}"/>')
    for j, t in enumerate(tables):
        s.append(f'<circle cx="{left + j * 110}" cy="{h - 8}" r="4" fill="{colors[j % len(colors)]}"/>'
                 f'<text x="{left + j * 110 + 8}" y="{h - 4}">{escape(t)}</text>')
    s.append(f'<text x="{left + pw + gap / 2}" y="{h - 4}">AUC (0.5: chance)</text>')
    return "\n".join(s + ["</svg>"]) + "\n"


def note(res: dict, text: str, reading: str = "") -> str:
    """Section 11 of study.md (``notes/11_why.md``): what was asked, the design in one paragraph, the figure and the
    results' tables (:func:`render_why_results`)."""
    return ("Which training rows does TabDDPM memorize, and why; and can they be found before any training? The "
            "design and the claims ([study-why.md](study-why.md), issue 52) were committed before the study's cells "
            "ran: the regime's settings (250 rows, 4,000 steps) with 10 seeds on adult, default and shoppers; per "
            "row, risk factors from the training table alone (`memviz.risk.factors`); a gradient-boosted model of "
            "the Top group with SHAP attributions (`memviz.risk.explanation`); and the **isolation cut** "
            "(`memviz compare --methods isolation`: the ⌈p · N⌉ most isolated rows, no warm-up) beside DynamicCut, "
            "random pruning and the baseline, every arm at the baseline's optimiser steps.\n\n"
            "![Each score's AUC for the Top group and for the rows the attack exposes, per table]"
            "(study/why/factors_auc.svg)\n\n" + text.replace("### ", "#### ") + reading)


def answer_lines(res: dict) -> list[str]:
    """The three answers in plain words, by the declared rules."""
    out = ["#### The answers", ""]
    iso = [r for r in res["factors"] if r["score"] == "isolation"]
    if iso:
        out.append("- **(a) Isolation and the Top group (claim A1):** " + "; ".join(
            f"{r['dataset']} AUC {r['auc']:.2f} ({r['low']:.2f}–{r['high']:.2f}), {_verdict(r)}" for r in iso) + ".")
        best = {}
        for r in res["factors"]:
            if r["score"] in DECLARED and (r["dataset"] not in best or r["auc"] > best[r["dataset"]]["auc"]):
                best[r["dataset"]] = r
        out.append("  The strongest factor per table: " + "; ".join(
            f"{d}: {FACTOR_LABELS.get(r['score'], r['score'])} AUC {r['auc']:.2f} ({r['low']:.2f}–{r['high']:.2f})"
            for d, r in best.items()) + ".")
    att = [r for r in res["attack"] if r["score"] == "isolation" and r["targets"] == "all training targets"]
    if att:
        out.append("- **(a) Isolation and the attack (claim A2):** " + "; ".join(
            f"{r['dataset']} AUC {r['auc']:.2f} ({r['low']:.2f}–{r['high']:.2f}), Holm p̃ {r['p_adj']:.2g}"
            for r in att) + ".")
    out.append("- **(b)** " + answer_b(res))
    combos = res["combinations"]
    if combos:
        out.append("- **(c) High-risk combinations:** " + "; ".join(
            f"{r['dataset']} {METHOD_LABELS.get(r['method'], r['method'])} {100 * r['relative']:+.0f} %"
            for r in combos) + " (the high-risk copies' reduction against the baseline; the DynamicCut write-up "
            "reports a 23 % reduction of its high-risk feature combinations, measured its own way).")
    return out + [""]
