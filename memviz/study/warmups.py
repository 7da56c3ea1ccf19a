"""Warm-ups of one dataset at one scale, and what is read from them (parts 2, 3, 5).

One TabDDPM warm-up per seed on the same training rows, each given the scale's test rows as
hold-out, so it stores its floor (:mod:`memviz.measure.floor`) and every check's excess. From each:

* **per check**: mem ratio, floor, excess and its 95 % Newcombe interval, copy share, and Shape and
  Trend of the check's rows (:class:`memviz.evaluate.quality.CheckQuality`, every generated row), which
  early stop's recommended epoch reads (:func:`memviz.warmup.frontier.recommend`);
* **the paper's statistics** (:func:`memviz.dynamics.summaries.summarize`, circular) and **all eight
  statistics against the null model** (:func:`memviz.dynamics.nullmodel.compare_to_null`: the
  paper's four and the non-circular four: split-half groups, forgetting as a rate, Top
  after T), at T = the first half and T = the first quarter of the epochs;
* **heavy tail against the floor**: the share of copies held by the top 10 % of rows,
  against the same share when the copies land on rows as fresh real rows' flags do
  (:func:`concentration_null`); rows over-copied by the per-row null (:mod:`memviz.measure.rownull`);
* **selections**: DynamicCut's removed rows for score raw / excess at each T, so that the
  ranking's variation between warm-up seeds is measured (:func:`selection_overlap`).

T for a share f of the epochs E is the last check epoch at or below f · E; its cost is
T epochs of training (the warm-up could stop there).
"""
from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from memviz.device import torch_threads
from memviz.dynamics.dynamiccut import dynamiccut_selection, early_identification
from memviz.dynamics.nullmodel import compare_to_null, verdict
from memviz.dynamics.rows import ceil_share
from memviz.dynamics.summaries import summarize
from memviz.evaluate.quality import CheckQuality
from memviz.io import settings_key
from memviz.measure.rownull import row_null
from memviz.study.scales import StudyScale
from memviz.study.util import run_jobs, save_record, stored
from memviz.warmup.run import WarmupConfig, ensure_warmup, load_warmup

SCORES = ("raw", "excess")
#: the heavy-tail statistic: share of copies held by the top 10 % of rows
TOP_SHARE = 0.10


def warmup_config(scale: StudyScale, seed: int, device: str) -> WarmupConfig:
    """The warm-up of ``seed`` at this scale (the preset's checks: about 25). Only the last check keeps its
    weights (``last:1``): the study's early stop retrains to the recommended epoch rather than sampling."""
    return WarmupConfig(preset=scale.preset, epochs=scale.epochs, n_samples=scale.warmup_samples, seed=seed,
                        device=device, model_params=dict(scale.tabddpm_params), keep_checkpoints="last:1")


def warmup_job(train, test, config: WarmupConfig, run_dir: Path) -> float:
    with torch_threads(1):  # Shape and Trend at every check: early stop's recommended epoch needs them
        return float(ensure_warmup(train, config, run_dir, holdout=test, quality=CheckQuality).seconds)


def run_warmups(train, test, scale: StudyScale, runs: Path, device: str, n_jobs: int) -> dict:
    """seed -> finished :class:`~memviz.warmup.run.WarmupResult` (started, resumed or reused; parallel)."""
    jobs = [(train, test, warmup_config(scale, s, device), Path(runs) / f"warmup_s{s}") for s in scale.seeds]
    run_jobs(warmup_job, jobs, n_jobs)
    return {s: load_warmup(Path(runs) / f"warmup_s{s}") for s in scale.seeds}


def T_at(epochs: np.ndarray, frac: float) -> int:
    """The last check epoch at or below ``frac`` of the last one (the first check if none is)."""
    ok = epochs[epochs <= frac * epochs.max() + 1e-9]
    return int(ok.max() if ok.size else epochs.min())


def concentration_null(floor, copies: np.ndarray, share: float = TOP_SHARE, replicates: int = 200,
                       seed: int = 0) -> dict:
    """Share of copies held by the ceil(share · N) most-copied rows, observed and under the floor's null.

    Null: the K observed copies land on rows as fresh real rows' flags do. A replicate draws
    one spread α_k of the floor's Gamma–Poisson fit (weights w_k), each row's rate
    π_i ~ Gamma(α_k + h_i, rate b_k) (its posterior given its hold-out hits h_i) and the
    copies ~ Multinomial(K, π / Σπ). p_null and the verdict as :func:`memviz.dynamics.nullmodel.verdict`
    ("higher": more concentrated than fresh rows).
    """
    copies = np.asarray(copies, dtype=np.int64)                         # (N,)
    n_top, total = ceil_share(share, len(copies)), int(copies.sum())
    if total == 0:
        return {"observed": float("nan"), "null_low": float("nan"), "null_median": float("nan"),
                "null_high": float("nan"), "p_null": float("nan"), "verdict": "undefined"}
    top_share = lambda c: float(np.sort(c)[::-1][:n_top].sum() / total)  # noqa: E731
    a, b, w = floor.null.components(floor.n_holdout)                    # (K,) each
    rng = np.random.default_rng(seed)
    sims = np.empty(replicates)
    for r in range(replicates):
        k = rng.choice(len(w), p=w / w.sum())
        pi = rng.gamma(a[k] + floor.hits, 1.0 / b[k])                   # (N,)
        sims[r] = top_share(rng.multinomial(total, pi / pi.sum()))
    obs = top_share(copies)
    p_null, label = verdict(obs, sims, "higher")
    low, med, high = np.quantile(sims, [0.025, 0.5, 0.975])
    return {"observed": obs, "null_low": float(low), "null_median": float(med), "null_high": float(high),
            "p_null": p_null, "verdict": label}


def analyse_warmup(wres, scale: StudyScale, seed: int, path: Path) -> dict:
    """Everything the study reads from one warm-up (module docstring); stored at ``path``, reused."""
    dyn, floor = wres.dynamics, wres.floor
    key = settings_key({"checks": int(dyn.n_checks), "total": int(dyn.total.sum()), "epochs": dyn.epochs.tolist(),
                        "floor": None if floor is None else floor.floor, "p": scale.p, "k": scale.k,
                        "fracs": scale.T_fracs, "R": scale.null_replicates, "v": 1})
    if (rec := stored(path, key)) is not None:
        return rec
    epochs = np.asarray(dyn.epochs)
    Ts = {f"{f:g}": T_at(epochs, f) for f in scale.T_fracs}
    rate = None if floor is None else floor.expected_auc_rate
    nulls, early, selections = [], [], {}
    last = max(Ts, key=float)
    for frac, T in Ts.items():
        cmp = compare_to_null(wres.checks, dyn.row_ids, scale.null_replicates, seed=seed, p=scale.p, k=scale.k, T=T)
        for f in cmp.to_frame().to_dict(orient="records"):
            if frac == last or f["name"].startswith("early_identification"):
                nulls.append({**f, "T_frac": float(frac), "T": T, "seed": seed})
        for score in SCORES if rate is not None else ("raw",):
            r = rate if score == "excess" else None
            sel = dynamiccut_selection(dyn, scale.p, scale.k, T, score, r)
            selections[f"{score}|{frac}"] = [int(x) for x in sel.removed]
            for target in ("final", "after"):
                e = early_identification(dyn, scale.p, scale.k, T, score, r, target)
                early.append({"seed": seed, "score": score, "T_frac": float(frac), "T": T, "target": target,
                              "precision": e.precision, "random_precision": e.random_precision,
                              "n_checks_used": e.n_checks_used})
    pc = wres.per_check
    cols = [c for c in ("check", "epoch", "n_synthetic", "mem_ratio", "floor", "floor_low", "floor_high", "excess",
                        "excess_low", "excess_high", "copy_share", "shape", "trend", "quality", "quality_rows")
            if c in pc.columns]
    rec = {"seed": seed, "epochs": int(epochs.max()), "n_checks": int(dyn.n_checks), "T": Ts,
           "seconds": float(wres.seconds), "summary": summarize(dyn).to_dict(),
           "per_check": pc[cols].to_dict(orient="list"), "null": nulls, "early": early, "selections": selections,
           "floor": None if floor is None else floor.to_dict()}
    if floor is not None:
        rn = row_null(floor, dyn.total.astype(np.int64), dyn.n_synthetic)
        rec["heavy_tail_null"] = {**concentration_null(floor, dyn.total, replicates=scale.null_replicates, seed=seed),
                                  "n_over_copied": int(rn.above_chance.sum()), "n_rows": int(dyn.n_rows),
                                  "over_copied_copy_share": float(rn.copies[rn.above_chance].sum()
                                                                  / max(1, rn.copies.sum()))}
    return save_record(path, key, rec)


def selection_frame(analyses: list[dict]) -> pd.DataFrame:
    """Long table of every selection: seed, score, T_frac, rank (1 = highest score), row_id."""
    rows = []
    for a in analyses:
        for name, ids in a["selections"].items():
            score, frac = name.split("|")
            rows += [{"seed": a["seed"], "score": score, "T_frac": float(frac), "T": a["T"][frac], "rank": i + 1,
                      "row_id": rid} for i, rid in enumerate(ids)]
    return pd.DataFrame(rows, columns=["seed", "score", "T_frac", "T", "rank", "row_id"])


def jaccard(a, b) -> float:
    """|A ∩ B| / |A ∪ B| of two id sets (NaN when both are empty)."""
    a, b = set(map(int, a)), set(map(int, b))
    return len(a & b) / len(a | b) if (a or b) else float("nan")


def random_jaccard(n_rows: int, n_selected: int) -> float:
    """E[J] of two independent uniform selections of n of N rows: X ~ Hypergeom(N, n, n), J = X / (2n − X)."""
    x = np.arange(0, n_selected + 1)
    pmf = hypergeom(n_rows, n_selected, n_selected).pmf(x)
    return float(np.sum(pmf * x / (2 * n_selected - x)))


def selection_overlap(sel: pd.DataFrame, n_rows: int) -> list[dict]:
    """Jaccard of the selections between warm-up seeds (per score and T; mean, min, max over pairs),
    between scores (same seed and T) and between Ts (same seed and score), beside random selections."""
    sets = {k: g["row_id"].to_numpy() for k, g in sel.groupby(["seed", "score", "T_frac"])}
    seeds = sorted({k[0] for k in sets})
    out = []

    def row(what, score, frac, js, n):
        js = [j for j in js if not math.isnan(j)]
        if js:
            out.append({"between": what, "score": score, "T_frac": frac, "pairs": len(js), "mean": float(np.mean(js)),
                        "min": float(np.min(js)), "max": float(np.max(js)), "random": random_jaccard(n_rows, n)})

    for (score, frac), g in sel.groupby(["score", "T_frac"]):
        n = int(g.groupby("seed").size().iloc[0])
        row("warm-up seeds", score, frac, [jaccard(sets[(a, score, frac)], sets[(b, score, frac)])
                                            for a, b in combinations(seeds, 2)], n)
    fracs = sorted({k[2] for k in sets})
    for frac in fracs:
        pairs = [(sets[(s, "raw", frac)], sets[(s, "excess", frac)]) for s in seeds if (s, "excess", frac) in sets]
        if pairs:
            row("raw vs excess score", "both", frac, [jaccard(a, b) for a, b in pairs], len(pairs[0][0]))
    if len(fracs) > 1:
        pairs = [(sets[(s, "raw", fracs[0])], sets[(s, "raw", fracs[-1])]) for s in seeds]
        row("first quarter vs first half", "raw", None, [jaccard(a, b) for a, b in pairs], len(pairs[0][0]))
    return out


def dataset_warmups(train, test, scale: StudyScale, runs: Path, device: str, n_jobs: int) -> list[dict]:
    """Run (or reuse) the warm-ups and analyse each; one record per seed."""
    results = run_warmups(train, test, scale, runs, device, n_jobs)
    return [analyse_warmup(w, scale, s, Path(runs) / f"analysis_s{s}.json") for s, w in results.items()]
