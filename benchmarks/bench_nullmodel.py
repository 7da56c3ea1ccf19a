"""Benchmark: null-model replicates of the dynamics at Adult scale.

A synthetic checks table of N training rows x C checks x S synthetic rows per check
(default 32,561 x 25 x 32,561, i.e. 0.8 M events, heavy-tailed NN1 attribution, a rising
memorization trend) is built, then timed:

* ``fit_dynamics_null`` once;
* one replicate (``NullModel.simulate``) and the statistics of one run
  (``dynamics_statistics``), medians over repeats;
* ``compute_dynamics`` on the same table in the same run, as the baseline the ratios use.

Usage: python benchmarks/bench_nullmodel.py [--rows N] [--checks C] [--synthetic S] [--repeats R]
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_rescore import timed  # noqa: E402  (benchmarks/ is on the path when run as a script)

from memviz.dynamics.rows import compute_dynamics
from memviz.dynamics.nullmodel import fit_dynamics_null
from memviz.dynamics.splithalf import dynamics_statistics


def synthetic_checks(n_rows: int, n_checks: int, n_syn: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    weight = rng.gamma(0.5, 1.0, n_rows) + 1e-6  # fixed per-row propensity, heavy-tailed
    weight /= weight.sum()
    n = n_checks * n_syn
    nn1 = rng.choice(n_rows, size=n, p=weight).astype(np.int64)
    check = np.repeat(np.arange(n_checks), n_syn)
    ratio = rng.uniform(0.0, 1.0, n) ** (1.0 + check / n_checks)  # closer copies later in training
    return pd.DataFrame({"check": check, "epoch": 8 * (check + 1), "nn1": nn1, "ratio": ratio,
                         "memorized": ratio < 1 / 3})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=32561)
    ap.add_argument("--checks", type=int, default=25)
    ap.add_argument("--synthetic", type=int, default=32561)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    checks = synthetic_checks(a.rows, a.checks, a.synthetic)
    ids = np.arange(a.rows, dtype=np.int64)
    print(f"checks table: {len(checks):,} events ({a.rows:,} train x {a.checks} checks x {a.synthetic:,} synthetic)")
    base = np.median([timed(compute_dynamics, checks, ids)[1] for _ in range(3)])
    print(f"compute_dynamics (baseline): median {base:.0f} ms")
    model, ms = timed(fit_dynamics_null, checks, ids)
    rng = np.random.default_rng(0)
    sim = [timed(model.simulate, rng)[1] for _ in range(a.repeats)]
    dyn = model.simulate(rng)
    stats = [timed(dynamics_statistics, dyn)[1] for _ in range(a.repeats)]
    one = np.median(sim) + np.median(stats)
    print(f"fit_dynamics_null {ms:.0f} ms; replicate median {np.median(sim):.0f} ms (x{np.median(sim) / base:.2f}"
          f" compute_dynamics); statistics median {np.median(stats):.0f} ms; 100 replicates ~ {one / 10:.1f} s")

if __name__ == "__main__":
    main()
