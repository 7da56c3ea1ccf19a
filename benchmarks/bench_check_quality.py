"""Benchmark: what Shape and Trend at every check cost, as a share of the check.

One warm-up check = sample G rows (G = N, the training rows, as the warm-up's default) +
memorization of them against the training table. Measured in the same run, per scale:

* ``check``: sampling + memorization (median of R repeats, a cpu-quick TabDDPM trained for
  a few epochs: sampling time does not depend on training);
* ``fast``: :class:`memviz.evaluate.quality.CheckQuality` on all G generated rows (the
  warm-up's default, ``quality_rows=None``) and on the first 2,000 (the real side prepared once,
  as in a warm-up; its preparation is timed separately: it is paid once per run);
* ``report``: SDMetrics' QualityReport (:func:`memviz.evaluate.synthetic.quality`) on the same rows,
  the baseline the fast path replaces, and the largest difference between the two.

Scales: the bundled sample (3,000 training rows) and full Adult (32,561). Target: quality
<= 25 % of a check. Usage: python benchmarks/bench_check_quality.py [--data ../shared/datasets/adult]
[--repeats R] [--skip-full]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import memviz
from memviz.evaluate.quality import CheckQuality
from memviz.evaluate.synthetic import quality
from memviz.measure.memorization import memorization
from memviz.engine.neighbors import NeighborEngine
from memviz.models.tabddpm import TabDDPM

ROOT = Path(__file__).resolve().parent.parent


def median(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def scale(train, label, repeats, epochs):
    n = len(train)
    model = TabDDPM("cpu-quick", epochs=epochs, device="cpu", seed=0).fit(train)
    engine = NeighborEngine(distance="paper", device="cpu").fit(train)
    t_sample, syn = median(lambda: model.sample(n, seed=1), repeats)
    t_mem, _ = median(lambda: memorization(train, syn, engine=engine), repeats)
    check = t_sample + t_mem
    t0 = time.perf_counter()
    cq = CheckQuality(train)
    t_prep = time.perf_counter() - t0
    cq2k = CheckQuality(train, rows=2000)
    t_fast, fast = median(lambda: cq(syn), repeats)
    t_fast2k, _ = median(lambda: cq2k(syn), repeats)
    quality(train.subset(train.row_ids[:50]), syn.iloc[:50])  # import SDMetrics outside the timing
    t_rep, rep = median(lambda: quality(train, syn), max(1, repeats // 2))
    diff = max(abs(fast["shape"] - rep.shape), abs(fast["trend"] - rep.trend))
    print(f"{label}: N = G = {n:,} rows, {len(train.schema.columns)} columns")
    print(f"  one check: {check:.2f} s (sampling {t_sample:.2f} s + memorization {t_mem:.2f} s)")
    print(f"  fast quality, all {n:,} rows: {t_fast:.3f} s = {t_fast / check:.1%} of the check "
          f"(real side prepared once: {t_prep:.3f} s)")
    print(f"  fast quality, first 2,000 rows: {t_fast2k:.3f} s = {t_fast2k / check:.1%} of the check")
    print(f"  SDMetrics QualityReport, all rows: {t_rep:.2f} s = {t_rep / check:.1%} of the check; "
          f"fast path {t_rep / t_fast:.1f}x faster, max |difference| {diff:.1e}")
    print(f"  Shape {fast['shape']:.4f}, Trend {fast['trend']:.4f}")


def main():
    ap = argparse.ArgumentParser()
    here = [p / "shared" / "datasets" / "adult" for p in ROOT.parents if (p / "shared" / "datasets" / "adult").is_dir()]
    ap.add_argument("--data", default=str(here[0]) if here else "../shared/datasets/adult")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-full", action="store_true")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    train, _ = memviz.load_dataset(ROOT / "sample_data")
    scale(train, "sample", args.repeats, epochs=5)
    if not args.skip_full:
        full, _ = memviz.load_dataset(args.data)
        scale(full, "full Adult", max(1, args.repeats - 2), epochs=1)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
