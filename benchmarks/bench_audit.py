"""Benchmark: the per-row test's calibration and power at full size, and what one audit costs.

Calibration (issue 19, item 3): fresh real rows as the "synthetic" table. 3,000 reference rows are
drawn (seeded) from Adult's 48,842 rows (train + test splits); the other 45,842 are fresh real rows,
answered once by the engine (NN1, ratio). Each resample draws a hold-out of H fresh rows and
M = 60,000 generated rows from the rest (with replacement: i.i.d. draws from the fresh rows, as a
pooled warm-up's checks are i.i.d. draws from a model), then runs the per-row test. Reported per H
in {300, 1,233, 3,000} and M in {3,000, 60,000}: the share of resamples with any false over-copied
row (BH promises ≤ 5 %) and the mean number of false rows, for the per-row mixture prior (the default,
``spread="mixture"``), one spread fitted on the hold-out and the copies (``joint``, the default before)
and, with ``--spreads holdout,...``, the first test (the spread from the hold-out alone), in the same run;
the power: the share of 10 rows found over-copied when each gets k extra copies (k = 5, 20, 50, 100,
200); and what the audit states for the default test at these sizes (:func:`memviz.verdict.rowtest.row_test`
on the first resample's hold-out and copies) beside what was measured.

Cost: ``memviz.audit`` on the sample (3,000 training rows, 1,000 test rows as the hold-out, 1,000
fresh rows as the synthetic table) against the engine's pass over the same rows (``memorization``),
in the same run.

Usage: python benchmarks/bench_audit.py [--data ../shared/datasets/adult] [--resamples R]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import memviz
from memviz.verdict.rowtest import assess
from memviz.measure.floor import floor_from_attributions
from memviz.measure.memorization import memorization
from memviz.measure.rownull import DEFAULT_SPREAD, copies_per_row, row_null

PLANTED = (5, 20, 50, 100, 200)


def fresh_pool(data: Path, n_ref: int = 3000, seed: int = 0):
    train, test = memviz.load_dataset(data)
    allf = pd.concat([train.data, test.data], ignore_index=True)
    idx = np.random.default_rng(seed).permutation(len(allf))
    ref = memviz.table_from_frame(allf.iloc[idx[:n_ref]].reset_index(drop=True), train.schema, source="reference")
    t0 = time.perf_counter()
    res = memorization(ref, allf.iloc[idx[n_ref:]].reset_index(drop=True))
    print(f"engine: {len(res.ratio):,} fresh rows against {n_ref:,} reference rows in {time.perf_counter() - t0:.1f} s;"
          f" fresh rows flagged {res.mem_ratio:.1%}")
    return ref.row_ids, res.nn1, res.ratio, res.memorized


def calibration(pool, h_rows: int, m: int, spread: str, resamples: int, seed: int = 1):
    ids, nn1, ratio, flag = pool
    rng = np.random.default_rng(seed)
    any_false, n_false, found, stated = 0, 0, {k: 0 for k in PLANTED}, None
    for r in range(resamples):
        perm = rng.permutation(len(nn1))
        fl = floor_from_attributions(ids, nn1[perm[:h_rows]], ratio[perm[:h_rows]], distance="paper")
        g = perm[h_rows:][rng.integers(0, len(nn1) - h_rows, m)]
        c = copies_per_row(fl, nn1[g], flag[g])
        if r == 0 and spread == DEFAULT_SPREAD:
            stated = assess(fl, m, copies=c)
        k = int(row_null(fl, c, m, spread=spread).over_copied.sum())
        any_false += k > 0
        n_false += k
        rows = rng.choice(len(c), 10, replace=False)
        for extra in PLANTED:
            cc = c.copy()
            cc[rows] += extra
            found[extra] += int(row_null(fl, cc, m + 10 * extra, spread=spread).over_copied[rows].sum())
    return any_false / resamples, n_false / resamples, {k: v / (10 * resamples) for k, v in found.items()}, stated


def audit_cost(repeats: int = 3):
    train, test = memviz.load_dataset(memviz.sample_data_dir())
    ids = np.random.default_rng(0).permutation(train.row_ids)
    ref, fresh = train.subset(np.sort(ids[:2000])), train.subset(np.sort(ids[2000:]))
    t_audit, t_engine = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        memorization(ref, fresh.data)
        memorization(ref, test.data)
        t_engine.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        a = memviz.audit(ref, fresh.data, test)
        t_audit.append(time.perf_counter() - t0)
    ta, te = float(np.median(t_audit)), float(np.median(t_engine))
    print(f"audit of the sample (2,000 reference, 1,000 synthetic, 1,000 hold-out rows): {ta:.2f} s median of "
          f"{repeats}, {ta / te:.1f}x the two engine passes it needs ({te:.2f} s); verdict {a.verdict.code}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "adult"))
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--spreads", default="mixture,joint", help="the tests compared (row_null's spread)")
    ap.add_argument("--sizes", default="60000", help="the M values")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPU cores)")
    pool = fresh_pool(Path(args.data))
    print(f"{args.resamples} resamples per H, M and test")
    print("H       M        test     resamples with any false row   mean false rows   power (share of 10 planted rows "
          "found) at +5 / +20 / +50 / +100 / +200 copies")
    for m in (int(x) for x in args.sizes.split(",")):
        for h in (300, 1233, 3000):
            for spread in args.spreads.split(","):
                frac, mean, power, stated = calibration(pool, h, m, spread, args.resamples)
                label = {"holdout": "holdout", "joint": "joint  ", "mixture": "mixture"}[spread]
                print(f"{h:<7,} {m:<8,} {label}  {frac:>6.1%}                         {mean:>6.2f}            "
                      + " / ".join(f"{power[k]:.0%}" for k in PLANTED), flush=True)
                if stated is not None:
                    print(f"        the audit states ({stated.n_resamples} simulated resamples): any false row "
                          f"{stated.false_alarm:.1%}, power " + " / ".join(f"+{k} {v:.0%}" for k, v in
                                                                          sorted(stated.power.items()))
                          + f", status {stated.status}", flush=True)
    audit_cost()
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
