"""The per-row test's simulation world (memviz.auditing.rowtest.rate_distribution), checked with scipy."""
import numpy as np
from scipy import stats

from memviz.auditing.rowtest import rate_distribution


def test_rate_distribution_is_the_poisson_mixture_mle_and_keeps_a_heavy_tail():
    # 2,970 ordinary rows at rate 1e-4 and 30 hubs at 1.2e-3 (12x), as Adult's most-attributed rows
    rng = np.random.default_rng(0)
    pi = np.where(np.arange(3000) < 30, 1.2e-3, 1e-4)
    h_rows, exposure = 3000, 60_000
    hits, copies = rng.poisson(h_rows * pi), rng.poisson(exposure * pi)
    grid, g = rate_distribution(hits, copies, h_rows, exposure, n_iter=2000)
    assert abs(g.sum() - 1) < 1e-12 and np.all(g >= 0)
    lik = stats.poisson.pmf(hits[:, None], h_rows * grid) * stats.poisson.pmf(copies[:, None], exposure * grid)
    mix = lik @ g                                                                    # (N,) fitted marginal
    # the NPMLE's optimality (Lindsay): D(π) = mean_i L_i(π) / f_i ≤ 1 on the grid, = 1 where Ĝ has mass
    d = (lik / mix[:, None]).mean(axis=0)
    assert d.max() < 1.05 and np.all(np.abs(d[g > 1e-3] - 1) < 0.05)      # EM nears it slowly
    # the hubs' share and rate are found (a Gamma fitted to these counts puts far less mass there)
    hub = grid > 6e-4
    assert abs(g[hub].sum() - 0.01) < 0.005 and abs(np.dot(g[hub], grid[hub]) / g[hub].sum() - 1.2e-3) < 2e-4
    alpha = copies.mean() ** 2 / max(copies.var() - copies.mean(), 1e-9)            # moment Gamma shape
    assert stats.gamma(alpha, scale=pi.mean() / alpha).sf(6e-4) < 0.5 * g[hub].sum()
