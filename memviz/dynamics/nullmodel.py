"""A null model with no row-level dynamics, and the dynamics findings tested against it.

Generative model (H0). Each event (one synthetic row at one check) falls in a stratum s:
memorized or not, crossed with its Mem-AUC term v = 1 - r in ``VALUE_BINS`` equal bins of
[0, 1]. Under H0 the number of events of stratum s at check e attributed to training row i is

    n_{i,s}(e) ~ Poisson(pi_{i,s} * mu_s(e))        independently,

a constant per-row propensity pi_{i,s} times a global per-check level mu_s(e). So the
warm-up's trend (how many rows are memorized at each check, and how close they are) is
kept, but no row rises or falls on its own. The copy count is c_i(e) = sum over memorized
strata of n_{i,s}(e) and the per-row Mem-AUC A_i(e) is the sum of the values v of row i's
events at check e, memorized or not.

Replicates: within each stratum, the events' checks are shuffled among the stratum's
events. This keeps every row's events and values (its pooled contributions), every check's
number of events per stratum (hence S_e, n_memorized(e) and the per-check value
distribution at the bins' resolution) and draws the rest from the conditional distribution
of H0 given those margins. That distribution does not depend on pi or mu, so a test against
it has its stated size whatever the propensities (Fisher's conditional argument; the fitted
propensities pi_{i,s} = n_{i,s} / n_s are implicit). The plug-in alternative (draw each
check's n_s(e) events from the fitted pi_{i,s}, a bootstrap) was measured and dropped: on
simulated warm-ups with no dynamics it said "holds" for the paper's circular statistics in
10-12 % of runs instead of 2.5 %, because re-drawn totals re-select a noisier Top group.

Cost (``benchmarks/bench_nullmodel.py``, Adult size: 32,561 rows x 25 checks x 32,561
rows per check, 0.8 M events, on the shared 2-core machine): fitting 0.3-0.4 s once; a
replicate (a shuffle of the events and two ``np.bincount`` over the (N, C) cells) 40-70 ms
and its statistics 35-100 ms, so the default 100 replicates take 7-17 s. At the study's
scale (3,000 rows x 25 checks) 200 replicates take 2-6 s.

Verdict of a statistic with observed effect x and null effects y_1..y_R (finite ones):
p_null = (1 + #{r : y_r >= x}) / (R + 1) on the paper's side ("higher"; <= for "lower").
"holds" when p_null < ALPHA / 2, i.e. x lies beyond the null's central 1 - ALPHA interval on
the paper's side; "reversed" when the same holds on the other side; "not shown" otherwise;
"undefined" when x is NaN. This needs R >= 40 so that 1 / (R + 1) < 0.025. Ties with the
null count against the claim, so a statistic on a coarse grid (the paper's median epoch)
is judged conservatively.

What a verdict means:

* Top vs Non-Top statistics: "holds" says Top differs from Non-Top by more than fixed
  propensities explain, i.e. the Top rows have dynamics of their own in the paper's
  direction (e.g. they are copied relatively more early in training than late).
* Early identification: the null is the best case for an early ranking (nothing changes,
  so a row's past predicts its future as well as sampling noise allows). "reversed" (below
  the null) says rows' ranks change during training, so the early selection misses more of
  the later Top than fixed propensities would. The practical claim "the early selection
  finds the later Top" is the precision against random (``value`` vs ``baseline``), which
  the null does not judge.
* The heavy tail of copies is an input here (each row keeps its copies), so this null cannot
  test it: that needs a per-row null of copies from real rows the model never saw.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from memviz.dynamics.rows import (
    DEFAULT_TOP_FRAC,
    CheckEvents,
    RowDynamics,
    check_events,
    dynamics_from_events,
)
from memviz.dynamics.summaries import early_check_count
from memviz.errors import BadOption
from memviz.dynamics.splithalf import Statistic, dynamics_statistics
from memviz.dynamics.dynamiccut import DEFAULT_K, DEFAULT_P, DynamicCutParams

VALUE_BINS = 10
DEFAULT_REPLICATES = 100
ALPHA = 0.05


@dataclass(frozen=True, eq=False)
class NullModel:
    """A warm-up's events grouped by stratum, ready to draw null replicates.

    Attributes
    ----------
    events : CheckEvents
        The observed events, sorted by stratum (memorized first).
    bounds : ndarray, int64, (B + 1,)
        Stratum b holds events ``bounds[b]:bounds[b + 1]``.
    top_frac : float
    """

    events: CheckEvents
    bounds: np.ndarray
    top_frac: float = DEFAULT_TOP_FRAC

    def observed(self) -> RowDynamics:
        """The observed :class:`RowDynamics` (identical to :func:`~memviz.dynamics.rows.compute_dynamics`)."""
        return dynamics_from_events(self.events, self.top_frac)

    def simulate(self, rng: np.random.Generator) -> RowDynamics:
        """One replicate under H0 (see the module docstring), as :class:`RowDynamics`."""
        ev = self.events
        check_pos = ev.check_pos.copy()  # (S,)
        for a, b in zip(self.bounds[:-1], self.bounds[1:]):
            check_pos[a:b] = rng.permutation(ev.check_pos[a:b])
        return dynamics_from_events(ev, self.top_frac, check_pos=check_pos)


def fit_dynamics_null(checks: pd.DataFrame, train_row_ids, top_frac: float = DEFAULT_TOP_FRAC) -> NullModel:
    """Fit the null model of a checks table (see the module docstring for the model).

    Raises
    ------
    MemvizError
        A checks table :func:`~memviz.dynamics.rows.compute_dynamics` rejects.
    """
    ev = check_events(checks, train_row_ids)
    value_bin = np.minimum((np.clip(ev.value, 0.0, 1.0) * VALUE_BINS).astype(np.int64), VALUE_BINS - 1)
    stratum = np.where(ev.memorized, 0, VALUE_BINS) + value_bin  # (S,), memorized strata first
    order = np.argsort(stratum, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(stratum, minlength=2 * VALUE_BINS))])
    sorted_ev = CheckEvents(row_ids=ev.row_ids, check_ids=ev.check_ids, epochs=ev.epochs,
                            row_pos=ev.row_pos[order], check_pos=ev.check_pos[order],
                            value=ev.value[order], memorized=ev.memorized[order])
    return NullModel(events=sorted_ev, bounds=bounds.astype(np.int64), top_frac=float(top_frac))


@dataclass(frozen=True)
class NullFinding(Statistic):
    """One statistic on the observed run (the fields of :class:`~memviz.dynamics.splithalf.Statistic`)
    beside its null distribution.

    ``observed`` is the statistic's effect (Top - Non-Top, or precision - random
    precision); ``null_median``, ``null_low`` and ``null_high`` the median and 2.5 / 97.5 %
    quantiles of the null effects; ``p_null`` the one-sided Monte Carlo p on the paper's
    side; ``naive_null_share`` the share of null replicates where the paper's criterion
    (``naive_holds`` on the observed run) also says it holds (near 1: the criterion cannot
    tell the run from the null).
    """

    null_median: float = float("nan")
    null_low: float = float("nan")
    null_high: float = float("nan")
    p_null: float = float("nan")
    naive_null_share: float = float("nan")
    verdict: str = ""

    @property
    def observed(self) -> float:
        return self.effect


@dataclass(frozen=True, eq=False)
class NullComparison:
    """All statistics of a run against ``n_replicates`` null replicates.

    ``findings`` holds one :class:`NullFinding` per statistic of
    :func:`memviz.dynamics.splithalf.dynamics_statistics` (the paper's four, then the four
    non-circular ones); ``T`` and ``early_checks`` are resolved (never None).
    """

    findings: tuple
    n_replicates: int
    seed: int
    p: float
    k: int
    T: float
    early_checks: int
    null_effects: dict = field(repr=False)  # name -> (R,) ndarray of null effects

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic: the fields of :class:`NullFinding` (``effect`` named ``observed``)."""
        return pd.DataFrame([asdict(f) for f in self.findings]).rename(columns={"effect": "observed"})

def verdict(observed: float, null: np.ndarray, direction: str, alpha: float = ALPHA) -> tuple[float, str]:
    """(p_null, verdict) of one statistic (module docstring); NaN null effects are dropped."""
    null = np.asarray(null, dtype=np.float64)
    null = null[np.isfinite(null)]
    if not np.isfinite(observed) or null.size == 0:
        return float("nan"), "undefined"
    hi = (1 + np.sum(null >= observed)) / (null.size + 1)
    lo = (1 + np.sum(null <= observed)) / (null.size + 1)
    p_dir, p_other = (hi, lo) if direction == "higher" else (lo, hi)
    label = "holds" if p_dir < alpha / 2 else "reversed" if p_other < alpha / 2 else "not shown"
    return float(p_dir), label


def _finding(obs: Statistic, null: list[Statistic]) -> NullFinding:
    effects = np.array([s.effect for s in null], dtype=np.float64)  # (R,)
    finite = effects[np.isfinite(effects)]
    low, med, high = np.quantile(finite, [0.025, 0.5, 0.975]) if finite.size else (np.nan,) * 3
    p_null, label = verdict(obs.effect, effects, obs.direction)
    return NullFinding(**asdict(obs), null_median=float(med), null_low=float(low), null_high=float(high),
                       p_null=p_null, naive_null_share=float(np.mean([s.naive_holds for s in null])), verdict=label)


def compare_to_null(checks: pd.DataFrame, train_row_ids, replicates: int = DEFAULT_REPLICATES, seed: int = 0,
                    p: float = DEFAULT_P, k: int = DEFAULT_K, T=None,
                    early_checks: int | None = None, top_frac: float = DEFAULT_TOP_FRAC) -> NullComparison:
    """Every statistic of :func:`memviz.dynamics.splithalf.dynamics_statistics` on the run and under H0.

    Parameters
    ----------
    checks, train_row_ids : the warm-up's checks table and all training row_ids.
    replicates : int, default 100
        R null replicates (at least 40; about 0.1 s each at Adult size).
    seed : int
        Seeds ``np.random.default_rng``; the same seed gives the same comparison.
    p, k, T, early_checks, top_frac : as :func:`memviz.dynamics.splithalf.dynamics_statistics`.

    Returns
    -------
    NullComparison
        The same code computes each statistic on the observed run and on every replicate.
    """
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 40:
        raise BadOption(f"replicates must be an integer >= 40 (so the null can reject at 2.5 %), got {replicates!r}")
    params = DynamicCutParams(p, k, T)  # checked once for the run and every replicate
    model = fit_dynamics_null(checks, train_row_ids, top_frac)
    obs_dyn = model.observed()
    observed = dynamics_statistics(obs_dyn, early_checks=early_checks, params=params)
    rng = np.random.default_rng(seed)
    null = [dynamics_statistics(model.simulate(rng), early_checks=early_checks, params=params)
            for _ in range(int(replicates))]
    findings = tuple(_finding(obs, [rep[j] for rep in null]) for j, obs in enumerate(observed))
    effects = {obs.name: np.array([rep[j].effect for rep in null]) for j, obs in enumerate(observed)}
    return NullComparison(findings=findings, n_replicates=int(replicates), seed=int(seed),
                          p=params.p, k=params.k, T=params.window(obs_dyn),
                          early_checks=early_check_count(obs_dyn, early_checks),
                          null_effects=effects)
