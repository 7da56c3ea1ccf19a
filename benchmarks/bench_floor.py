"""Benchmark: what a floor costs, and the per-row null at Adult scale.

* the floor of the full Adult training split (32,561 rows) on its test split (16,281 rows)
  with a warm engine, against one warm-up check's memorization of N = 32,561 generated rows
  (the training rows themselves stand in for them), measured in the same run: the ratio is
  what a floor adds to a warm-up, as a share of one check's memorization;
* ``row_null`` for N = 32,561 rows at M = 25 checks x 32,561 rows (target < 100 ms), against
  one ``scipy.stats.nbinom.sf`` call over the N rows (the least any per-row NegBin test costs);
* the same at the sample's scale (1,000 hold-out rows against 3,000 training rows).

Usage: python benchmarks/bench_floor.py [--data ../shared/datasets/adult] [--repeats R]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats

import memviz
from memviz.measure.floor import holdout_floor
from memviz.measure.memorization import memorization
from memviz.engine.neighbors import NeighborEngine
from memviz.measure.rownull import row_null


def best(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def floor_vs_check(train, holdout, repeats, label):
    engine = NeighborEngine(distance="paper", device="cpu").fit(train)
    t_floor, floor = best(lambda: holdout_floor(train, holdout, engine=engine), repeats)
    t_check, _ = best(lambda: memorization(train, train.data, engine=engine), repeats)
    print(f"{label}: floor {floor.floor:.3f} on {floor.n_holdout} rows in {t_floor:.2f} s; one check's "
          f"memorization of {len(train)} rows {t_check:.2f} s; floor / check = {t_floor / t_check:.2f}")
    return floor


def null_speed(floor, n_checks, repeats):
    n, m = floor.n_reference, n_checks * floor.n_reference
    copies = np.random.default_rng(0).poisson(m * floor.floor / n, n)
    t_null, res = best(lambda: row_null(floor, copies, m), repeats)
    t_base, _ = best(lambda: stats.nbinom.sf(copies - 1, 0.5 + floor.hits, 0.5), repeats)
    print(f"row_null N={n} M={m}: {1000 * t_null:.1f} ms (target 100 ms; {len(floor.null.alphas)} spread "
          f"components) vs one nbinom.sf {1000 * t_base:.1f} ms (x{t_null / t_base:.1f}); "
          f"over-copied {int(res.over_copied.sum())}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    train, test = memviz.load_dataset(memviz.sample_data_dir())
    floor = floor_vs_check(train, test, args.repeats, "sample (3,000 / 1,000)")
    null_speed(floor, 25, args.repeats)
    if Path(args.data, "train.csv").exists():
        train, test = memviz.load_dataset(args.data)
        floor = floor_vs_check(train, test, args.repeats, "full Adult (32,561 / 16,281)")
        null_speed(floor, 25, args.repeats)


if __name__ == "__main__":
    main()
