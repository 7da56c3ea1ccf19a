"""The declared tests of the "why these rows" study (``docs/study-why.md``), from its committed files alone.

(a) **Factors and the model against the Top group** (:func:`factor_tests`): per table and score f (each factor in
its declared direction, :data:`DIRECTIONS`, and the model's out-of-fold score), AUC_f = mean over warm-ups s of
AUC(f, Top_s); 95 % percentile bootstrap over rows (:data:`N_BOOT`); two-sided permutation p against 0.5, the
factor's values permuted across rows, the same permutation in every warm-up (:data:`N_PERM`):
p = (1 + #{|AUC_π − ½| ≥ |AUC − ½|}) / (1 + N_PERM); Holm within the family (every score on every table).
The attack (:func:`attack_tests`): the same AUC over the (training target, attack) pairs of a table's attacks for
the attack's ``exposed``; bootstrap and permutation over the attacked rows.

(b) **Pruning** (:func:`pruning_tests`): the study's paired claims (:mod:`memviz.study.findings`) of the scale's
summaries, Holm within each family over the tables (:func:`memviz.study.inference.adjust`); and the costs.

(c) **High-risk combinations** (:func:`combination_tests`): pairs of (column = value) with numbers in the
training table's quintiles; H_s = the pairs held by ≥ :data:`MIN_SUPPORT` rows whose Top rate over the other
warm-ups is ≥ :data:`RISK_MULTIPLE` × the Top share; a cell's high-risk copies = its flagged copies whose nearest
training row holds a pair of H_s; per method the relative change against the baseline of the same seed
(mean, t interval over seeds), exact paired Wilcoxon, Holm over methods × tables.
"""
from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from memviz.evidence.ranktests import json_safe
from memviz.io import atomic_write_csv, atomic_write_json, atomic_write_text, read_json
from memviz.measure.intervals import t_interval
from memviz.measure.multiplicity import holm
from memviz.risk.explanation import bootstrap_auc, explain_rows, mean_auc, quantile_ranges, rank_auc
from memviz.risk.factors import RiskFactors, isolation_scores
from memviz.study.findings import claim_tests, signed_rank_exact
from memviz.study.floors import study_tables
from memviz.study.inference import adjust, two_sided
from memviz.study.mitigation import merge_stored, method_summary
from memviz.study.scales import SCALES
from memviz.study.warmups import jaccard
from memviz.study.whyreport import forest_svg, note, render_why_results
from memviz.tables.encoding import canonical_series

#: each factor's declared direction of risk (+1: a larger value is riskier)
DIRECTIONS = {"isolation": 1, "nearest": 1, "exact_duplicates": -1, "near_duplicates": -1, "value_rarity": -1,
              "pair_rarity": -1, "combination_count": -1, "extremeness": -1}
MODEL = "model (out of fold)"
#: added after the first results were read (post hoc, exploratory, outside every Holm family): isolation in the
#: standardized distance, where numbers are not rescaled per row as the paper distance does
EXPLORATORY = "isolation, standardized distance (post hoc)"
#: a subset of attack targets with fewer exposed (or unexposed) pairs than this is not tested
MIN_EXPOSED = 5
N_BOOT = 2000
N_PERM = 10_000
MIN_SUPPORT = 3
RISK_MULTIPLE = 2.0
ATTACK_TABLES = ("adult", "default")
RESULTS_HEAD, RESULTS_END = "## Results", "## How to run and continue it"


# ------------------------------------------------------------------ the inputs
def labels_matrix(rows: pd.DataFrame, row_ids: np.ndarray) -> np.ndarray:
    """(N, S) Top membership of ``row_ids`` in each warm-up seed of ``rows`` (rows.csv)."""
    wide = rows.pivot(index="row_id", columns="seed", values="top").astype(bool)
    return wide.reindex(row_ids).to_numpy(dtype=bool)


def oriented(factors: pd.DataFrame) -> dict:
    """factor -> (N,) score, larger = riskier (:data:`DIRECTIONS`)."""
    return {f: d * factors[f].to_numpy(dtype=np.float64) for f, d in DIRECTIONS.items()}


def permutation_p(score: np.ndarray, labels: np.ndarray, n_perm: int = N_PERM, seed: int = 0) -> float:
    """Two-sided permutation p of :func:`~memviz.risk.explanation.mean_auc` against 0.5 (module docstring)."""
    y = np.asarray(labels, dtype=bool)
    y = y[:, None] if y.ndim == 1 else y
    r = rankdata(np.asarray(score, dtype=np.float64))                          # (N,)
    n1 = y.sum(axis=0).astype(np.float64)
    n0 = len(r) - n1
    ok = (n1 > 0) & (n0 > 0)
    obs = abs(mean_auc(score, y) - 0.5)
    rng = np.random.default_rng(seed)
    hits = 0
    for chunk in np.array_split(np.arange(n_perm), max(1, n_perm // 500)):
        perms = np.argsort(rng.random((len(chunk), len(r))), axis=1)           # (b, N)
        sums = np.einsum("bn,ns->bs", r[perms], y.astype(np.float64))          # rank sums of the positives
        auc = (sums[:, ok] - n1[ok] * (n1[ok] + 1) / 2) / (n1[ok] * n0[ok])
        hits += int(np.sum(np.abs(auc.mean(axis=1) - 0.5) >= obs - 1e-12))
    return (1 + hits) / (1 + n_perm)


def score_test(name: str, score: np.ndarray, labels: np.ndarray, seed: int = 0) -> dict:
    auc = mean_auc(score, labels)
    lo, hi = bootstrap_auc(score, labels, N_BOOT, seed)
    return {"score": name, "auc": auc, "low": lo, "high": hi, "p": permutation_p(score, labels, N_PERM, seed)}


# ------------------------------------------------------------------ (a)
def factor_tests(train, factors: pd.DataFrame, rows: pd.DataFrame, dataset: str) -> tuple[list[dict], object]:
    """Every factor and the model against the Top groups of one table's warm-ups (module docstring)."""
    ids = train.row_ids
    y = labels_matrix(rows, ids)
    f = factors.set_index("row_id").loc[ids]
    out = [{"dataset": dataset, **score_test(name, s, y)} for name, s in oriented(f).items()]

    rf = RiskFactors(f, 5, "paper", 0.1, float(np.median(f["isolation"])), 0.0)
    ex = explain_rows(train, y, factors=rf, n_boot=N_BOOT)
    out.append({"dataset": dataset, **score_test(MODEL, ex.oof.to_numpy(), y)})

    out.append({"dataset": dataset, "exploratory": True,
                **score_test(EXPLORATORY, isolation_scores(train, distance="standardized"), y)})
    return out, ex


def attack_pairs(attack_dir: Path, dataset: str, group: str | None = None) -> pd.DataFrame:
    """(row_id, attack, exposed, auc, group) of the training targets of a table's attacks."""
    recs = []
    for f in sorted(Path(attack_dir).glob(f"{dataset}_s*.json")):
        c = json.loads(f.read_text())
        for t in c["result"]["targets"]:
            if t.get("source") == "train" and (group is None or t["group"] == group):
                recs.append({"row_id": int(t["row_id"]), "attack": int(c["seed"]), "exposed": bool(t["exposed"]),
                             "auc": float(t["auc"]), "group": t["group"]})
    return pd.DataFrame(recs, columns=["row_id", "attack", "exposed", "auc", "group"])


def pair_auc_test(name: str, score_by_row: pd.Series, pairs: pd.DataFrame, seed: int = 0) -> dict:
    """AUC of the row's score for ``exposed`` over the (row, attack) pairs; bootstrap and permutation over the
    attacked rows (a row attacked in several attacks moves with all its pairs)."""
    rows = np.unique(pairs["row_id"].to_numpy())
    pos = {r: i for i, r in enumerate(rows)}
    idx = pairs["row_id"].map(pos).to_numpy()
    y = pairs["exposed"].to_numpy(dtype=bool)
    s_row = score_by_row.reindex(rows).to_numpy(dtype=np.float64)
    auc = float(rank_auc(s_row[idx], y))
    rng = np.random.default_rng(seed)
    by_row = [np.flatnonzero(idx == i) for i in range(len(rows))]
    boots = []
    for _ in range(N_BOOT):
        pick = np.concatenate([by_row[i] for i in rng.integers(0, len(rows), len(rows))])
        boots.append(rank_auc(s_row[idx[pick]], y[pick]))
    boots = np.asarray(boots, dtype=np.float64)
    boots = boots[np.isfinite(boots)]
    lo, hi = (np.quantile(boots, [0.025, 0.975]) if boots.size else (math.nan, math.nan))
    hits = 0
    for _ in range(N_PERM):
        hits += abs(float(rank_auc(rng.permutation(s_row)[idx], y)) - 0.5) >= abs(auc - 0.5) - 1e-12
    return {"score": name, "auc": auc, "low": float(lo), "high": float(hi), "p": (1 + hits) / (1 + N_PERM),
            "n_pairs": int(len(pairs)), "n_rows": int(len(rows)), "n_exposed": int(y.sum())}


def attack_tests(attack_dir: Path, factors: pd.DataFrame, oof: pd.Series | None, dataset: str) -> list[dict]:
    """Every factor (and the model's out-of-fold score) against the attack's ``exposed``, over all training
    targets and over the random targets alone."""
    f = factors.set_index("row_id")
    scores = {name: pd.Series(s, index=f.index) for name, s in oriented(f).items()}
    if oof is not None:
        scores[MODEL] = oof
    out = []
    for subset, group in (("all training targets", None), ("random targets", "random")):
        pairs = attack_pairs(attack_dir, dataset, group)
        if pairs.empty or pairs["exposed"].nunique() < 2:
            continue
        n_exp = int(pairs["exposed"].sum())
        if min(n_exp, len(pairs) - n_exp) < MIN_EXPOSED:   # an AUC of 1 exposed pair is that pair, not a test
            out.append({"dataset": dataset, "targets": subset, "score": None, "too_few": True, "n_exposed": n_exp,
                        "n_pairs": int(len(pairs)), "n_rows": int(pairs["row_id"].nunique())})
            continue
        for name, s in scores.items():
            out.append({"dataset": dataset, "targets": subset, **pair_auc_test(name, s, pairs)})
    return out


def with_holm(tests: list[dict], family: str) -> list[dict]:
    adj = holm([t["p"] for t in tests])
    for t, a in zip(tests, adj):
        t["family"], t["p_adj"], t["m"] = family, float(a), len(tests)
    return tests


# ------------------------------------------------------------------ (c)
def value_texts(train) -> pd.DataFrame:
    """Each row's value text per distance column, numbers in the training table's quintile ranges."""
    sch = train.schema
    out = {c: pd.Series(canonical_series(train.data[c]), index=train.data.index) for c in sch.distance_categorical}
    for c in sch.distance_numerical:
        out[c] = quantile_ranges(pd.to_numeric(train.data[c], errors="coerce"), 5)
    return pd.DataFrame(out, index=train.data.index)


def high_risk_rows(texts: pd.DataFrame, top_rate: pd.Series, base: float) -> tuple[np.ndarray, int]:
    """(row_ids holding a high-risk pair, the number of high-risk pairs): pairs of (column = value) held by at
    least :data:`MIN_SUPPORT` rows whose mean ``top_rate`` is at least :data:`RISK_MULTIPLE` · ``base``."""
    rate = top_rate.reindex(texts.index).to_numpy(dtype=np.float64)
    hit = np.zeros(len(texts), dtype=bool)
    n_pairs = 0
    for a, b in combinations(texts.columns, 2):
        key = texts[a].astype(str) + "\x1f" + texts[b].astype(str)
        codes, uniq = pd.factorize(key)
        n = np.bincount(codes, minlength=len(uniq))
        r = np.bincount(codes, weights=rate, minlength=len(uniq)) / np.maximum(n, 1)
        risky = (n >= MIN_SUPPORT) & (r >= RISK_MULTIPLE * base)
        n_pairs += int(risky.sum())
        hit |= risky[codes]
    return texts.index.to_numpy(dtype=np.int64)[hit], n_pairs


def combination_tests(train, rows: pd.DataFrame, copies: pd.DataFrame, dataset: str,
                      methods=("dynamiccut", "random", "isolation")) -> tuple[list[dict], pd.DataFrame]:
    """(the paired tests against the baseline, the per-cell counts) of one table (module docstring)."""
    texts = value_texts(train)
    wide = rows.pivot(index="row_id", columns="seed", values="top").astype(float).reindex(train.row_ids)
    base = float(wide.to_numpy().mean())
    cells = []
    for s in sorted(copies["seed"].unique()):
        others = [c for c in wide.columns if c != s]
        if not others:
            continue
        risky, n_pairs = high_risk_rows(texts, wide[others].mean(axis=1), base)
        cs = copies[copies["seed"] == s]
        for m, g in cs.groupby("method"):
            cells.append({"dataset": dataset, "seed": int(s), "method": m, "n_pairs": n_pairs,
                          "n_risky_rows": int(len(risky)), "copies": int(g["copies"].sum()),
                          "risky_copies": int(g.loc[g["row_id"].isin(risky), "copies"].sum())})
    cells = pd.DataFrame(cells)
    out = []
    if cells.empty:
        return out, cells
    wide_c = cells.pivot(index="seed", columns="method", values="risky_copies")
    for m in methods:
        if m not in wide_c.columns or "baseline" not in wide_c.columns:
            continue
        pair = wide_c[["baseline", m]].dropna()
        d = (pair["baseline"] - pair[m]).to_numpy(dtype=float)
        rel = (d / pair["baseline"].replace(0, np.nan).to_numpy(dtype=float))
        t = signed_rank_exact(d)
        mean, lo, hi = t_interval(rel)
        out.append({"dataset": dataset, "method": m, "n_seeds": int(len(pair)),
                    "baseline": float(pair["baseline"].mean()), "method_mean": float(pair[m].mean()),
                    "relative": mean, "low": lo, "high": hi, "n_positive": t["n_positive"],
                    "n_negative": t["n_negative"], "p": two_sided(t["p_claim"], t["p_against"]) if t["n"] else math.nan,
                    "p_claim": t["p_claim"]})
    return out, cells


# ------------------------------------------------------------------ (b)
def table_results(out: Path, dataset: str) -> pd.DataFrame | None:
    """A table's cells: the committed ``results.csv`` merged with the run folders' finished ``main`` cells (newer;
    a run still going has its cells in its folders before the study writes its tables)."""
    d = Path(out) / "why" / dataset
    fresh = [pd.read_csv(f).assign(grid="main", warmup_seed=int(f.parent.name.removeprefix("main_s")))
             for f in sorted((d / "runs").glob("main_s*/results.csv"))]
    return merge_stored(d / "results.csv", pd.concat(fresh, ignore_index=True) if fresh else None)


def pruning_tests(out: Path, names) -> tuple[list[dict], list[dict], dict]:
    """(the scale's paired claims, Holm-adjusted over its tables; the per-method summaries; the costs), from each
    table's finished cells (:func:`table_results`)."""
    tests, summary, costs = [], [], {}
    for ds in names:
        res = table_results(out, ds)
        if res is None or res.empty:
            continue
        ok = res[res["status"] == "ok"]
        tests += [dict(t, dataset=ds) for t in claim_tests(res)]
        summary += [dict(r, dataset=ds) for r in method_summary(res).to_dict(orient="records")]
        f = Path(out) / "why" / ds / "summary.json"
        ws = read_json(f, "study summary").get("warmups", []) if f.is_file() else []
        if not ws:
            ws = [read_json(a, "warm-up analysis") for a in sorted((Path(out) / "why" / ds / "runs").glob("analysis_s*.json"))]
        iso = ok[ok["method"] == "isolation"]
        costs[ds] = {"ranking_seconds": float(pd.to_numeric(iso["mitigate_seconds"], errors="coerce").mean())
                     if len(iso) else math.nan,
                     "warmup_seconds": float(np.mean([w["seconds"] for w in ws])) if ws else math.nan,
                     "T_share": float(np.mean([w["T"]["0.5"] / w["epochs"] for w in ws])) if ws else math.nan,
                     "cell_seconds": float(pd.to_numeric(ok["total_seconds"], errors="coerce").mean()),
                     "n_cells": int(len(ok)), "n_warmups": len(ws),
                     "seeds": sorted(int(x) for x in ok.loc[ok["method"] == "isolation", "seed"].unique())}
    adjust(tests)
    return tests, summary, costs


# ------------------------------------------------------------------ the document
def write_results(data_dir, out, names, markdown=None, say=print) -> dict:
    """Every declared test from the committed files; ``OUT/why/results.json``, the figure, and the results
    section of ``markdown`` and of the study's note (``OUT/notes/11_why.md``)."""
    out = Path(out)
    scale = SCALES["why"]
    factor_rows, attack_rows, combo_rows, cells, importance = [], [], [], [], {}
    for ds in names:
        d = out / "why" / ds
        if not (d / "rows.csv").is_file():
            continue
        train, _, _ = study_tables(Path(data_dir) / ds, scale)
        factors, rows = pd.read_csv(d / "factors.csv"), pd.read_csv(d / "rows.csv")
        say(f"{ds}: factors and the model against {rows['seed'].nunique()} warm-ups")
        fr, ex = factor_tests(train, factors, rows, ds)
        factor_rows += fr
        importance[ds] = ex.importance.head(8).to_dict(orient="records")
        if ds in ATTACK_TABLES and (out / "attacks").is_dir():
            say(f"{ds}: the attack's exposed rows")
            attack_rows += attack_tests(out / "attacks", factors, ex.oof, ds)
        if (d / "copies.csv").is_file():
            cr, cc = combination_tests(train, rows, pd.read_csv(d / "copies.csv"), ds)
            combo_rows += cr
            cells.append(cc)
    with_holm([r for r in factor_rows if not r.get("exploratory")], "why-factors")
    for subset in {r["targets"] for r in attack_rows}:
        with_holm([r for r in attack_rows if r["targets"] == subset and not r.get("too_few")], "why-attack")
    with_holm([r for r in combo_rows if math.isfinite(r["p"])], "why-combinations")
    tests, summary, costs = pruning_tests(out, names)
    res = {"reproduction": reproduction(out, names), "factors": factor_rows, "attack": attack_rows, "combinations": combo_rows, "importance": importance,
           "pruning": [t for t in tests if t["family"] in ("pretraining", "quality", "pruning")],
           "summary": summary, "costs": costs, "n_perm": N_PERM, "n_boot": N_BOOT}
    atomic_write_json(out / "why" / "results.json", _json_safe(res))
    if cells:
        atomic_write_csv(out / "why" / "combinations.csv", pd.concat(cells, ignore_index=True))
    atomic_write_text(out / "why" / "factors_auc.svg", forest_svg(factor_rows, attack_rows))
    render_results(out, markdown, res)
    return res


def render_results(out, markdown=None, res: dict | None = None) -> None:
    """Section 11's note (``OUT/notes/11_why.md``) and the results section of ``markdown`` from ``res`` (default:
    the committed ``OUT/why/results.json``), with the hand-written reading ``OUT/why/reading.md`` when there."""
    out = Path(out)
    res = res if res is not None else json.loads((out / "why" / "results.json").read_text(encoding="utf-8"))
    text = render_why_results(res)
    hand = out / "why" / "reading.md"   # the reading, written after looking at the numbers (optional)
    reading = "\n" + hand.read_text(encoding="utf-8") if hand.is_file() else ""
    atomic_write_text(out / "notes" / "11_why.md", note(res, text, reading))
    if markdown:
        md = Path(markdown)
        doc = md.read_text(encoding="utf-8")
        a, b = doc.index(RESULTS_HEAD), doc.index(RESULTS_END)
        atomic_write_text(md, doc[:a] + RESULTS_HEAD + "\n\n" + text + reading + "\n" + doc[b:])


def reproduction(out: Path, names) -> dict:
    """{table: [Jaccard of warm-up s's DynamicCut selection (raw, T = half) with the regime's committed one]}."""
    rep = {}
    for ds in names:
        f = Path(out) / "regime" / ds / "selections.csv"
        if not f.is_file():
            continue
        reg = pd.read_csv(f)
        mine = Path(out) / "why" / ds / "selections.csv"
        mine = pd.read_csv(mine) if mine.is_file() else None
        pick = lambda t, s: t[(t["seed"] == s) & (t["score"] == "raw") & (t["T_frac"] == 0.5)]["row_id"]  # noqa: E731
        js = []
        for s in range(5):
            a = Path(out) / "why" / ds / "runs" / f"analysis_s{s}.json"
            r = pick(reg, s)
            m = pick(mine, s) if mine is not None else []
            if not len(m) and a.is_file():
                m = read_json(a, "warm-up analysis")["selections"]["raw|0.5"]
            if len(m) and len(r):
                js.append(jaccard(m, r))
        if js:
            rep[ds] = js
    return rep


def _json_safe(x):
    return json_safe(x)
