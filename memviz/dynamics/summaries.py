"""Summaries of a warm-up's per-row dynamics (:mod:`memviz.dynamics.rows`).

* how concentrated copies are over training rows: :func:`concentration_curve`,
  :func:`concentration`, :func:`heavy_tail` (Gini, zero share);
* the paper's Top vs Non-Top statistics, :func:`summarize`: first-memorization epoch,
  forgetting events and early Mem-AUC, with two-sided Mann–Whitney tests. They are
  **circular** — the Top group is formed from the same counts they then compare — so a
  simulation with no row-level dynamics "confirms" them too; the non-circular reading is
  :mod:`memviz.dynamics.splithalf` against the null model of :mod:`memviz.dynamics.nullmodel`.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import mannwhitneyu

from memviz.dynamics.rows import RowDynamics, ceil_share
from memviz.errors import BadOption


def concentration_curve(dyn: RowDynamics) -> tuple[np.ndarray, np.ndarray]:
    """Concentration (Lorenz-type) curve of copies over training rows.

    Rows are sorted by total count, largest first; ``x[j] = j / N`` and
    ``y[j] = (sum of the j largest C_i) / sum_i C_i`` for j = 0..N (both start at 0).
    ``y`` is all NaN when there are no copies at all.
    """
    tot = np.sort(dyn.total)[::-1].astype(np.float64)  # (N,) descending
    x = np.arange(len(tot) + 1) / len(tot)
    s = tot.sum()
    y = np.concatenate([[0.0], np.cumsum(tot)]) / s if s > 0 else np.full(len(tot) + 1, np.nan)
    return x, y


def concentration(dyn: RowDynamics, share: float) -> float:
    """Share of all copies held by the ``ceil(share * N)`` most-copied rows (NaN if no copies)."""
    x, y = concentration_curve(dyn)
    return float(y[ceil_share(share, dyn.n_rows)])


@dataclass(frozen=True)
class HeavyTail:
    """Shape of the distribution of total counts C_i over all N training rows.

    gini = (2 * sum_j j * C_(j)) / (N * sum_j C_(j)) - (N + 1) / N with C_(1) <= ... <= C_(N)
    (0 = all rows copied equally, -> 1 = one row holds every copy; NaN when no copies).
    """

    gini: float
    max_count: int
    mean_count: float
    median_count: float
    zero_share: float  # share of rows with C_i = 0


def heavy_tail(dyn: RowDynamics) -> HeavyTail:
    """Gini, max, mean, median and zero share of the total counts (see :class:`HeavyTail`)."""
    tot = np.sort(dyn.total).astype(np.float64)
    n, s = len(tot), tot.sum()
    gini = float(2.0 * np.sum(np.arange(1, n + 1) * tot) / (n * s) - (n + 1) / n) if s > 0 else float("nan")
    return HeavyTail(gini=gini, max_count=int(tot[-1]), mean_count=float(tot.mean()),
                     median_count=float(np.median(tot)), zero_share=float(np.mean(tot == 0)))


@dataclass(frozen=True)
class GroupStats:
    """Dynamics of one group of training rows (Top or Non-Top).

    median_first_epoch is over the group's memorized rows only (NaN if none);
    censored_share = share of the group never memorized;
    forgetting_rate = mean_i F_i over the group (the paper's: a count of events, not a
    rate per memorized check, so it grows with how often a row is copied at all; see
    :func:`memviz.dynamics.splithalf.forgetting_rate`);
    forgetting_rate_memorized = mean_i F_i over its memorized rows (NaN if none);
    early_mem_auc = mean over rows of (1 / q) * sum_{e < q} A_i(e), q = early checks. A_i(e) is the
    per-row Mem-AUC (:attr:`memviz.dynamics.rows.RowDynamics.auc`): a sum of 1 - r over the generated
    rows whose nearest training row is i, so it lies in [0, S_e] (S_e generated rows at check e), not
    in [0, 1] as the run's Mem-AUC (their mean over all generated rows) does.
    """

    n_rows: int
    n_memorized: int
    censored_share: float
    median_first_epoch: float
    forgetting_rate: float
    forgetting_rate_memorized: float
    early_mem_auc: float


@dataclass(frozen=True)
class DynamicsSummary:
    """Headline numbers of a warm-up's per-row dynamics (see :func:`summarize`).

    ``concentration`` maps a share q (e.g. 0.01) to the share of copies held by the
    ceil(q N) most-copied rows. p-values are two-sided Mann-Whitney U tests Top vs
    Non-Top (NaN when a group has no value to compare).
    """

    n_rows: int
    n_checks: int
    early_checks: int
    total_copies: int
    top_frac: float
    concentration: dict
    heavy_tail: HeavyTail
    top: GroupStats
    non_top: GroupStats
    p_first_epoch: float
    p_forgetting: float
    p_early_mem_auc: float

    def to_dict(self) -> dict:
        """JSON-ready nested dict (concentration keys become strings such as ``"0.01"``)."""
        d = asdict(self)
        d["concentration"] = {f"{k:g}": v for k, v in self.concentration.items()}
        return d


def early_mem_auc(dyn: RowDynamics, early_checks: int | None = None) -> np.ndarray:
    """(N,) early Mem-AUC: (1 / q) * sum over the first q checks of A_i(e).

    A_i(e), the per-row Mem-AUC, sums 1 - r over the generated rows nearest row i, so each value lies in
    [0, max_e S_e] (generated rows per check), not in [0, 1]: a row that is the nearest of many generated
    rows scores above 1 with few copies. Summed over all rows it is at most S_e per check.

    q defaults to ``ceil(C / 4)`` (the first quarter of the checks, at least one).
    """
    q = early_check_count(dyn, early_checks)
    return dyn.auc[:, :q].mean(axis=1)


def early_check_count(dyn: RowDynamics, early_checks: int | None) -> int:
    if early_checks is None:
        return max(1, ceil_share(0.25, dyn.n_checks))
    if int(early_checks) != early_checks or not 1 <= early_checks <= dyn.n_checks:
        raise BadOption(f"early_checks must be an integer in [1, {dyn.n_checks}], got {early_checks}")
    return int(early_checks)


def _mean(a: np.ndarray) -> float:
    return float(a.mean()) if a.size else float("nan")


def _group(dyn: RowDynamics, mask: np.ndarray, early: np.ndarray) -> GroupStats:
    mem = mask & ~dyn.censored
    return GroupStats(
        n_rows=int(mask.sum()), n_memorized=int(mem.sum()),
        censored_share=_mean(dyn.censored[mask].astype(float)),
        median_first_epoch=float(np.median(dyn.first_epoch[mem])) if mem.any() else float("nan"),
        forgetting_rate=_mean(dyn.forgetting_events[mask].astype(float)),
        forgetting_rate_memorized=_mean(dyn.forgetting_events[mem].astype(float)),
        early_mem_auc=_mean(early[mask]),
    )


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value (scipy); NaN when a sample is empty or the test is undefined."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def summarize(dyn: RowDynamics, early_checks: int | None = None,
              shares: tuple[float, ...] = (0.01, 0.05, 0.10)) -> DynamicsSummary:
    """Summarize the dynamics: concentration, heavy tail and Top vs Non-Top behaviour.

    Parameters
    ----------
    dyn : RowDynamics
    early_checks : int, optional
        q, the number of leading checks averaged for the early Mem-AUC; default
        ``ceil(C / 4)`` (the first quarter of the checks).
    shares : tuple of float
        Shares q for the concentration (share of copies in the ceil(q N) top rows).

    Notes
    -----
    Top vs Non-Top tests (two-sided Mann-Whitney U): first-memorization epoch over
    memorized rows only (censored rows are reported as ``censored_share``); forgetting
    events F_i and early Mem-AUC over all rows of each group.

    These are the paper's definitions, kept for fidelity. They are **circular**: Top is
    ranked by the same counts the statistics are then measured on, so rows with a fixed
    copy propensity and no dynamics of their own already give p < 1e-60 in the paper's
    direction (a row drawn often by chance is both put in Top and memorized sooner, and a
    row with more memorized checks has more chances to "forget"). A small p says only that
    the groups differ, not that memorization has dynamics; for that, use the split-half
    statistics of :mod:`memviz.dynamics.splithalf` against the null of :mod:`memviz.dynamics.nullmodel`.
    """
    early = early_mem_auc(dyn, early_checks)
    q = early_check_count(dyn, early_checks)
    top, rest = dyn.top, ~dyn.top
    mem = ~dyn.censored
    return DynamicsSummary(
        n_rows=dyn.n_rows, n_checks=dyn.n_checks, early_checks=q, total_copies=int(dyn.total.sum()),
        top_frac=dyn.top_frac, concentration={float(s): concentration(dyn, s) for s in shares},
        heavy_tail=heavy_tail(dyn), top=_group(dyn, top, early), non_top=_group(dyn, rest, early),
        p_first_epoch=mann_whitney_p(dyn.first_epoch[top & mem], dyn.first_epoch[rest & mem]),
        p_forgetting=mann_whitney_p(dyn.forgetting_events[top], dyn.forgetting_events[rest]),
        p_early_mem_auc=mann_whitney_p(early[top], early[rest]),
    )
