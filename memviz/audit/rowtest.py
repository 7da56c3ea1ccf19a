"""The per-row test's calibration and power at an audit's sizes (N reference rows, H hold-out rows, M generated rows).

Simulated from the fitted null (:mod:`memviz.measure.rownull`), R resamples (default 40):

* draw the spread α from its posterior weights w_k, then π_i ~ Gamma(α, rate α / μ) for the N rows;
* a fresh hold-out h_i ~ Poisson(H π_i) (refitted: the test's own estimation error is simulated)
  and copy-free generated rows c_i ~ Poisson(M π_i);
* **false alarm** = share of resamples with at least one row over-copied (q < 0.05); BH promises ≤ 5 %
  under this complete null;
* **power** = share of P planted rows (default 10, drawn at random) found over-copied when each gets
  k extra copies (k in :data:`PLANTED`).

Status: ``too_small`` when H < :data:`MIN_HOLDOUT` (the test is not run; a hold-out with few or no
flagged rows is no reason: a floor near 0 is what it measures, and any row with several copies is then
beyond chance); ``uncalibrated`` when the simulated
false-alarm rate exceeds :data:`MAX_FALSE_ALARM`; ``low_power`` when fewer than half the rows
planted with :data:`POWER_COPIES` extra copies are found; else ``calibrated``. The simulation checks
the test against its own model; its calibration against real fresh rows is measured in
``benchmarks/bench_audit.py`` (fresh Adult rows as the synthetic table).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from memviz.audit.result import RowTest

#: extra copies given to each planted row in the power simulation
PLANTED = (5, 20, 50, 200)
#: planted rows per resample
N_PLANTED = 10
#: resamples of the simulation
N_RESAMPLES = 40
#: fewer hold-out rows than this: the per-row test is not run
MIN_HOLDOUT = 100
#: a simulated false-alarm rate above this marks the test uncalibrated (40 resamples: 2 SE above 5 %)
MAX_FALSE_ALARM = 0.12
#: the planted size whose power decides ``low_power``
POWER_COPIES = 20


def assess(floor, n_generated: int, *, n_resamples: int = N_RESAMPLES, planted=PLANTED, n_planted: int = N_PLANTED,
           seed: int = 0) -> RowTest:
    """The :class:`RowTest` of the per-row test at ``floor``'s N and H and ``n_generated`` = M (module docstring)."""
    from memviz.measure.rownull import fit_null, row_null

    n, h_rows, m = floor.n_reference, floor.n_holdout, int(n_generated)
    if h_rows < MIN_HOLDOUT:
        return RowTest("too_small", n, h_rows, m)
    rng = np.random.default_rng(seed)
    a, _, w = floor.null.components(h_rows)                                       # (K,)
    mu = floor.null.rate
    n_planted = min(n_planted, n)
    any_false, found = 0, {k: 0 for k in planted}
    zeros = np.zeros(n)
    for _ in range(n_resamples):
        alpha = a[rng.choice(len(a), p=w)]
        pi = rng.gamma(alpha, mu / alpha, size=n)                                 # (N,)
        hits = rng.poisson(h_rows * pi)
        if hits.sum() == 0:
            hits[rng.integers(n)] = 1
        sim = replace(floor, hits=hits.astype(np.int64), n_flagged=int(hits.sum()),
                      null=fit_null(hits, zeros, 0.0, h_rows))
        copies = rng.poisson(m * pi).astype(np.int64)                             # (N,)
        any_false += bool(row_null(sim, copies, m).over_copied.any())
        rows = rng.choice(n, size=n_planted, replace=False)
        for k in planted:
            c = copies.copy()
            c[rows] += k
            found[k] += int(row_null(sim, c, m + k * n_planted).over_copied[rows].sum())
    false_alarm = any_false / n_resamples
    power = {k: found[k] / (n_resamples * n_planted) for k in planted}
    if false_alarm > MAX_FALSE_ALARM:
        status = "uncalibrated"
    elif power.get(POWER_COPIES, 1.0) < 0.5:
        status = "low_power"
    else:
        status = "calibrated"
    return RowTest(status, n, h_rows, m, false_alarm, power, n_planted, n_resamples)
