"""The per-row test's calibration and power at an audit's sizes (N reference rows, H hold-out rows, M generated rows).

Simulated in a world as heterogeneous as this audit's rows, R resamples (default 40):

* the rows' rates are drawn from Ĝ, the nonparametric maximum-likelihood distribution of π fitted on
  the hold-out's hits h_i ~ Poisson(H π_i) and the copies c_i ~ Poisson(e π_i), e = Σ_i c_i / (N μ)
  (:func:`rate_distribution`), then scaled to the hold-out's mean μ (the null: no copying). Ĝ keeps
  the hubs the test must not call copied; a world drawn from the test's own fitted Gamma mixture has a
  heavier tail than the table (measured on 600 Adult rows, H = 247, M = 12,000: it stated 8–12 % false
  alarms and 0–3 % of rows with +50 copies found where fresh rows gave 0 % and 88 %);
* a fresh hold-out h_i ~ Poisson(H π_i) (refitted: the test's own estimation error is simulated)
  and copy-free generated rows c_i ~ Poisson(M π_i);
* **false alarm** = share of resamples with at least one row over-copied (q < 0.05); BH promises ≤ 5 %
  under this complete null;
* **power** = share of P planted rows (default 10, drawn at random) found over-copied when each gets
  k extra copies (k in :data:`PLANTED`).

The test run on each simulated table is the default one (:func:`memviz.measure.rownull.row_null`).

Status: ``too_small`` when H < :data:`MIN_HOLDOUT` (the test is not run; a hold-out with few or no
flagged rows is no reason: a floor near 0 is what it measures, and any row with several copies is then
beyond chance); ``uncalibrated`` when the simulated
false-alarm rate exceeds :data:`MAX_FALSE_ALARM`; ``low_power`` when fewer than half the rows
planted with :data:`POWER_COPIES` extra copies are found; else ``calibrated``. The simulation checks
the test in a world fitted to this audit's rows; its calibration against real fresh rows is measured in
``benchmarks/bench_audit.py`` (fresh Adult rows as the synthetic table), which prints both: at N = 3,000,
M = 60,000 and H = 300 / 1,233 / 3,000 this simulation stated any false row in 0 / 0 / 0 % and +200
copies found at 20 / 89 / 100 %, where 100 resamples of fresh rows gave 0 / 0 / 1 % and 46 / 91 / 99 %.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from memviz.auditing.result import RowTest

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
#: points of the rate grid and EM iterations of :func:`rate_distribution`
N_GRID, N_ITER = 150, 300
#: the planted size whose power decides ``low_power``
POWER_COPIES = 20


def rate_distribution(hits, copies, n_holdout: int, exposure: float, *, n_grid: int = N_GRID, n_iter: int = N_ITER):
    """(π_g, ĝ_g): the nonparametric maximum-likelihood (Kiefer–Wolfowitz) distribution of the rows' rates on a
    log grid, h_i ~ Poisson(H π_i) and c_i ~ Poisson(e π_i) given π_i; EM: ĝ ← (1/N) Σ_i post_i, post_ig ∝
    ĝ_g Pois(h_i; H π_g) Pois(c_i; e π_g). No parametric tail: the simulated rows are as heterogeneous as
    these (hubs included), which a Gamma or a mixture of Gammas fitted for the test is not."""
    from scipy import special

    h, c = np.asarray(hits, dtype=np.int64), np.asarray(copies, dtype=np.int64)
    n = len(h)
    top = max((h.max() + 1.0) / n_holdout, (c.max() + 1.0) / exposure if exposure > 0 else 0.0)
    grid = np.geomspace(1e-4 * (h.sum() + c.sum() + 1.0) / (n * (n_holdout + exposure)), 2 * top, n_grid)   # (G,)
    base = int(h.max()) + 1
    pairs, count = np.unique(c * base + h, return_counts=True)                  # (P,) distinct (c, h)
    uc, uh = (pairs // base)[:, None], (pairs % base)[:, None]
    log_l = uh * np.log(n_holdout * grid) - n_holdout * grid - special.gammaln(uh + 1.0)   # (P, G)
    if exposure > 0:
        log_l = log_l + uc * np.log(exposure * grid) - exposure * grid
    lik = np.exp(log_l - log_l.max(axis=1, keepdims=True))
    g = np.full(n_grid, 1.0 / n_grid)
    for _ in range(n_iter):
        post = lik * g
        post /= post.sum(axis=1, keepdims=True)
        g = count @ post / n
    return grid, g / g.sum()


def assess(floor, n_generated: int, *, copies=None, n_resamples: int = N_RESAMPLES, planted=PLANTED,
           n_planted: int = N_PLANTED, seed: int = 0) -> RowTest:
    """The :class:`RowTest` of the default per-row test at ``floor``'s N and H and ``n_generated`` = M
    (module docstring), simulated from the prior that test fits on ``floor``'s hits and ``copies`` ((N,)
    counts the audit tests; None: on the hits alone, e.g. before any copies are counted)."""
    from memviz.measure.rownull import (
        fit_null,
        row_null,
    )

    n, h_rows, m = floor.n_reference, floor.n_holdout, int(n_generated)
    if h_rows < MIN_HOLDOUT:
        return RowTest("too_small", n, h_rows, m)
    rng = np.random.default_rng(seed)
    seen = np.zeros(n, dtype=np.int64) if copies is None else np.asarray(copies, dtype=np.int64)   # (N,) c_i
    mu = floor.null.rate
    exposure = seen.sum() / (n * mu)                      # e = Σ c_i / (N μ): c_i ~ Poisson(e π_i) at the model's rate
    grid, g = rate_distribution(floor.hits, seen, h_rows, exposure)             # (G,) π values, weights
    n_planted = min(n_planted, n)
    any_false, found = 0, {k: 0 for k in planted}
    zeros = np.zeros(n)
    for _ in range(n_resamples):
        pi = grid[rng.choice(len(grid), size=n, p=g)]                            # (N,) rates π_i ~ Ĝ
        pi *= mu / pi.mean()                                                      # the null: the hold-out's mean
        hits = rng.poisson(h_rows * pi)
        if hits.sum() == 0:
            hits[rng.integers(n)] = 1
        sim = replace(floor, hits=hits.astype(np.int64), n_flagged=int(hits.sum()),
                      null=fit_null(hits, zeros, 0.0, h_rows))
        fresh = rng.poisson(m * pi).astype(np.int64)                              # (N,) copy-free
        any_false += bool(row_null(sim, fresh, m).over_copied.any())
        rows = rng.choice(n, size=n_planted, replace=False)
        for k in planted:
            c = fresh.copy()
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
