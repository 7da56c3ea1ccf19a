"""Benchmark: per-row dynamics build and DynamicCut rescoring at Adult scale.

A synthetic checks table of N training rows x C checks x S synthetic rows per check
(default 32,561 x 100 x 32,561, i.e. 3.3 M table rows; heavy-tailed NN1 attribution) is
built, then timed:

* ``compute_dynamics`` (once per repeat),
* rescoring a new (p, k, T) with ``dynamiccut_selection`` (median over repeats),
* the same rescoring in plain pandas on ``dyn.to_long()`` (filter epoch <= T, sort, groupby
  head(k) mean, sort by score then row_id), measured in the same run, and the ratio;
* rescoring with ``score="excess"`` (a random expected_auc_rate per row) beside the raw score;
* optionally the textbook ``groupby().apply(nlargest(k).mean())`` once (``--apply``).

Usage: python benchmarks/bench_rescore.py [--rows N] [--checks C] [--synthetic S] [--repeats R]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from memviz.dynamics.rows import check_summary, compute_dynamics
from memviz.dynamics.summaries import summarize
from memviz.dynamics.dynamiccut import dynamiccut_selection


def synthetic_checks(n_rows: int, n_checks: int, n_syn: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    weight = rng.pareto(1.2, n_rows) + 1e-3  # heavy-tailed "attractiveness" of training rows
    weight /= weight.sum()
    n = n_checks * n_syn
    nn1 = rng.choice(n_rows, size=n, p=weight).astype(np.int64) * 2 + 1  # non-contiguous row_ids
    d2 = rng.uniform(0.1, 1.0, n)
    d1 = d2 * rng.beta(2.0, 3.0, n)
    ratio = d1 / d2
    return pd.DataFrame({
        "check": np.repeat(np.arange(n_checks), n_syn), "epoch": np.repeat(10 * (np.arange(n_checks) + 1), n_syn),
        "synthetic_id": np.tile(np.arange(n_syn), n_checks), "nn1": nn1, "d1": d1, "d2": d2,
        "ratio": ratio, "memorized": ratio < 1 / 3,
    })


def pandas_rescore(long: pd.DataFrame, p: float, k: int, T: float) -> np.ndarray:
    """Reference pandas implementation: removed row_ids in rank order."""
    window = long[long["epoch"] <= T]
    top = window.sort_values(["row_id", "mem_auc"], ascending=[True, False]).groupby("row_id").head(k)
    score = top.groupby("row_id")["mem_auc"].mean().rename("score").reset_index()
    ranked = score.sort_values(["score", "row_id"], ascending=[False, True])
    return ranked["row_id"].to_numpy()[: int(np.ceil(round(p * len(score), 9)))]


def pandas_apply_rescore(long: pd.DataFrame, p: float, k: int, T: float) -> np.ndarray:
    score = long[long["epoch"] <= T].groupby("row_id")["mem_auc"].apply(lambda s: s.nlargest(k).mean())
    ranked = score.rename("score").reset_index().sort_values(["score", "row_id"], ascending=[False, True])
    return ranked["row_id"].to_numpy()[: int(np.ceil(round(p * len(score), 9)))]


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=32561)
    ap.add_argument("--checks", type=int, default=100)
    ap.add_argument("--synthetic", type=int, default=32561)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--apply", action="store_true", help="also time groupby().apply(nlargest) once")
    a = ap.parse_args()

    checks, ms = timed(synthetic_checks, a.rows, a.checks, a.synthetic)
    train_ids = np.arange(a.rows, dtype=np.int64) * 2 + 1
    print(f"checks table: {len(checks):,} rows ({a.rows:,} train x {a.checks} checks x {a.synthetic:,} synthetic),"
          f" generated in {ms:.0f} ms")
    build = [timed(compute_dynamics, checks, train_ids)[1] for _ in range(3)]
    dyn = compute_dynamics(checks, train_ids)
    print(f"compute_dynamics: median {np.median(build):.0f} ms (3 runs)")
    summarize(dyn)  # warm the scipy import
    print(f"check_summary: {timed(check_summary, checks)[1]:.0f} ms;  summarize: {timed(summarize, dyn)[1]:.0f} ms")

    grid = [(0.1, 3, None), (0.05, 5, 300), (0.2, 1, 800), (0.1, 10, 1000)]
    fast = {g: [timed(dynamiccut_selection, dyn, *g)[1] for _ in range(a.repeats)] for g in grid}
    long, ms = timed(dyn.to_long)
    print(f"to_long: {ms:.0f} ms ({len(long):,} rows)")
    for p, k, T in grid:
        sel = dynamiccut_selection(dyn, p, k, T)
        slow = [timed(pandas_rescore, long, p, k, sel.T)[1] for _ in range(max(3, a.repeats // 5))]
        same = np.array_equal(pandas_rescore(long, p, k, sel.T), sel.removed)
        f, s = np.median(fast[(p, k, T)]), np.median(slow)
        print(f"rescore p={p} k={k} T={sel.T} ({sel.n_checks_used} checks): numpy median {f:.1f} ms,"
              f" pandas median {s:.0f} ms, speed-up x{s / f:.0f}, same removed set: {same}")
    rate = np.random.default_rng(1).uniform(0, 2.0 / a.rows, a.rows)  # expected Mem-AUC per generated row
    for p, k, T in grid[:2]:
        raw = np.median([timed(dynamiccut_selection, dyn, p, k, T)[1] for _ in range(a.repeats)])
        exc = np.median([timed(dynamiccut_selection, dyn, p, k, T, "excess", rate)[1] for _ in range(a.repeats)])
        print(f"rescore p={p} k={k} T={T}: excess median {exc:.1f} ms vs raw {raw:.1f} ms (x{exc / raw:.2f})")
    if a.apply:
        sel = dynamiccut_selection(dyn, 0.1, 3, None)
        removed, ms = timed(pandas_apply_rescore, long, 0.1, 3, sel.T)
        print(f"groupby.apply(nlargest) once: {ms:.0f} ms, same removed set: {np.array_equal(removed, sel.removed)}")


if __name__ == "__main__":
    main()
