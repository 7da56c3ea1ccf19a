"""Top vs Non-Top statistics of a warm-up's dynamics, the paper's and non-circular ones.

The paper's statistics (:func:`memviz.dynamics.summaries.summarize`, :func:`memviz.dynamics.dynamiccut.
early_identification`) define the Top group from the **same** copy counts they then
measure, so sampling noise alone makes Top look earlier, more "erratic" and higher in early
Mem-AUC: a row drawn more often by chance is both put in Top and memorized sooner. The
non-circular versions here never measure a statistic on a check used to form the groups.

Notation as in :mod:`memviz.dynamics.rows`: checks at positions j = 0..C-1 with epochs t_j,
copy counts c_i(j), per-row Mem-AUC A_i(j).

* **Split half.** Groups are formed on the odd positions G = {1, 3, 5, ...} and every
  statistic is measured on the even positions M = {0, 2, 4, ...}. Synthetic rows are fresh
  samples at every check, so the sampling noise of G and M is independent. Interleaving
  (rather than first half / second half) keeps both halves spread over the whole warm-up,
  with the same global trend; M takes the even positions because it then holds the first
  check, which the "early" statistics need. Top_G = the ceil(f N) rows with the largest
  sum_{j in G} c_i(j), ties to the lowest row_id.
* **Forgetting rate** over an ordered set of checks j_1 < ... < j_m:
  F_i = #{l < m : c_i(j_l) > 0 and c_i(j_{l+1}) = 0} (forgetting events) and
  D_i = #{l < m : c_i(j_l) > 0} (memorized checks that have a next check: a row memorized
  at m' of the checks has D_i = m', or m' - 1 when the last check is one of them);
  rate phi_i = F_i / D_i, NaN when D_i = 0: the row's empirical probability of not being
  memorized at the next check given that it is now. A group's rate is pooled,
  Phi = sum_i F_i / sum_i D_i (forgetting events per memorized check of the group). The
  raw count F_i grows with the number of memorized checks (a row copied more often has
  more chances to "forget"); the rate does not: with no dynamics and per-check
  memorization probability q_i, independent across checks, E[F_i] = (m - 1) q_i (1 - q_i)
  and E[D_i] = (m - 1) q_i, so E[F_i] / E[D_i] = 1 - q_i whatever the number of checks,
  and it *falls* as the propensity grows. (The mean of the per-row ratios phi_i is biased
  upwards for rows with few memorized checks, hence the pooled rate.)
* **Early identification after T**: the DynamicCut selection uses checks with epoch <= T;
  the Top group it is scored against uses only the checks after T
  (:func:`memviz.dynamics.dynamiccut.target_top` with ``target="after"``).

Even non-circular statistics differ between Top and Non-Top without any dynamics (a row
with a higher fixed propensity is memorized sooner on any set of checks), so a difference is
evidence of dynamics only beyond the null model's (:mod:`memviz.dynamics.nullmodel`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memviz.dynamics.rows import RowDynamics, top_mask
from memviz.dynamics.summaries import early_check_count, mann_whitney_p
from memviz.errors import BadRunFolder
from memviz.dynamics.dynamiccut import (
    DEFAULT_K,
    DEFAULT_P,
    DynamicCutParams,
    dynamiccut_selection,
    params_of,
    target_top,
)

#: the paper's criteria, as :func:`memviz.study.findings` applies them: two-sided
#: Mann-Whitney p below this (with the Top value on the paper's side) for group statistics ...
NAIVE_ALPHA = 0.01
#: ... and precision at least this multiple of the random precision for early identification
NAIVE_PRECISION_FACTOR = 2.0
MIN_CHECKS = 4  # two checks in each half


@dataclass(frozen=True)
class Statistic:
    """One Top vs Non-Top statistic of one run.

    Attributes
    ----------
    name : str
        Key, e.g. ``"first_epoch"`` (the paper's) or ``"first_epoch_split"``.
    label : str
        Plain-words description, with the group and measurement checks.
    circular : bool
        True for the paper's definitions (groups and statistic from the same checks).
    direction : {"lower", "higher"}
        The side of ``effect`` the paper's claim predicts.
    value, baseline : float
        Top's value and Non-Top's (for early identification: the precision and the
        random precision |Top| / N).
    effect : float
        value - baseline.
    p_naive : float
        Two-sided Mann-Whitney p of Top vs Non-Top (NaN for early identification).
    naive_holds : bool
        The paper's criterion: effect on the paper's side and p_naive < 0.01 (group
        statistics); precision >= 2 x random precision (early identification).
    """

    name: str
    label: str
    circular: bool
    direction: str
    value: float
    baseline: float
    effect: float
    p_naive: float
    naive_holds: bool


def split_halves(n_checks: int) -> tuple[np.ndarray, np.ndarray]:
    """(G, M): odd check positions (groups) and even ones (measurement); disjoint, both sorted."""
    if n_checks < MIN_CHECKS:
        raise BadRunFolder(f"split-half statistics need at least {MIN_CHECKS} checks, the warm-up has {n_checks}")
    pos = np.arange(n_checks)
    return pos[1::2], pos[0::2]


def split_top(dyn: RowDynamics) -> np.ndarray:
    """(N,) bool Top_G: the ceil(f N) rows with the largest count over the odd checks G only."""
    g, _ = split_halves(dyn.n_checks)
    return top_mask(dyn.counts[:, g].sum(axis=1, dtype=np.int64), dyn.row_ids, dyn.top_frac)


def forgetting_rate(counts: np.ndarray) -> np.ndarray:
    """(N,) phi_i = F_i / D_i over the columns of ``counts`` (N, m), in order; NaN when D_i = 0.

    F_i = #{l : c_i(l) > 0, c_i(l+1) = 0}, D_i = #{l < m - 1 : c_i(l) > 0} (module docstring).
    """
    copied = np.asarray(counts) > 0  # (N, m)
    events = (copied[:, :-1] & ~copied[:, 1:]).sum(axis=1)  # (N,) F_i
    opportunities = copied[:, :-1].sum(axis=1)  # (N,) D_i
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(opportunities > 0, events / np.maximum(opportunities, 1), np.nan)


def pooled_forgetting_rate(counts: np.ndarray, mask: np.ndarray) -> float:
    """Phi = sum_{i in mask} F_i / sum_{i in mask} D_i over the columns of ``counts`` (NaN if no D)."""
    copied = np.asarray(counts)[mask] > 0  # (n, m)
    opportunities = copied[:, :-1].sum()
    return float((copied[:, :-1] & ~copied[:, 1:]).sum() / opportunities) if opportunities else float("nan")


def first_epoch(counts: np.ndarray, epochs: np.ndarray) -> np.ndarray:
    """(N,) epoch of the first column of ``counts`` (N, m) with c > 0; NaN when none."""
    copied = np.asarray(counts) > 0
    first = np.argmax(copied, axis=1)
    return np.where(copied.any(axis=1), np.asarray(epochs, dtype=np.float64)[first], np.nan)


def _nanstat(a: np.ndarray, how) -> float:
    a = a[np.isfinite(a)]
    return float(how(a)) if a.size else float("nan")


def _group_stat(name, label, circular, direction, values, top, how, group_value=None) -> Statistic:
    """Top vs Non-Top of per-row ``values`` (NaN rows left out); ``group_value(mask)``, when
    given, replaces ``how(values[mask])`` as each side's value (Mann-Whitney stays per row)."""
    a, b = values[top], values[~top]
    v, base = (_nanstat(a, how), _nanstat(b, how)) if group_value is None else (group_value(top), group_value(~top))
    p = mann_whitney_p(a[np.isfinite(a)], b[np.isfinite(b)])
    effect = v - base
    side = effect < 0 if direction == "lower" else effect > 0
    return Statistic(name, label, circular, direction, v, base, effect, p, bool(side and p < NAIVE_ALPHA))


def _precision_stat(name, label, circular, chosen, top) -> Statistic:
    n_top = int(top.sum())
    prec = float((chosen & top).sum() / chosen.sum()) if n_top else float("nan")
    rnd = n_top / len(top) if n_top else float("nan")
    return Statistic(name, label, circular, "higher", prec, rnd, prec - rnd, float("nan"),
                     bool(prec >= NAIVE_PRECISION_FACTOR * rnd))


def dynamics_statistics(dyn: RowDynamics, p: float = DEFAULT_P, k: int = DEFAULT_K, T=None,
                        early_checks: int | None = None, *,
                        params: DynamicCutParams | None = None) -> tuple[Statistic, ...]:
    """The paper's four Top vs Non-Top statistics and their four non-circular versions.

    Parameters
    ----------
    dyn : RowDynamics
        Top share f = ``dyn.top_frac``.
    p, k, T : DynamicCut's parameters for early identification (defaults as
        :func:`memviz.dynamics.dynamiccut.dynamiccut_selection`).
    early_checks : int, optional
        q, the leading checks of the early Mem-AUC (default ceil(C / 4), as
        :func:`memviz.dynamics.summaries.summarize`).
    params : DynamicCutParams, optional
        (p, k, T) checked when made (given, ``p``, ``k`` and ``T`` are not read).

    Returns
    -------
    tuple of Statistic
        Paper's (Top = ``dyn.top``, by the total over all checks):

        * ``first_epoch``: median first-memorization epoch of memorized rows, lower;
        * ``forgetting_events``: mean F_i over all checks, higher;
        * ``early_mem_auc``: mean of (1/q) sum_{j<q} A_i(j), higher;
        * ``early_identification``: precision of the selection at (p, k, T) vs ``dyn.top``.

        Non-circular (Top = Top_G from the odd checks, measured on the even ones M):

        * ``first_epoch_split``: **mean** epoch of the first j in M with c_i(j) > 0, over
          rows memorized in M (a mean rather than the paper's median: on a grid of check
          epochs the median moves in steps of two check intervals);
        * ``forgetting_rate_split``: the pooled rate Phi over M (Mann-Whitney on the
          per-row phi_i of rows with D_i > 0);
        * ``early_mem_auc_split``: mean A_i(j) over j in M with j < q;
        * ``early_identification_after``: precision vs the Top group of the checks after T.
    """
    _, m = split_halves(dyn.n_checks)
    q = early_check_count(dyn, early_checks)
    params = params_of(params, p, k, T)
    T = params.window(dyn)
    top, early = dyn.top, dyn.auc[:, :q].mean(axis=1)  # (N,), (N,)
    top_g = split_top(dyn)  # (N,)
    m_early = m[m < q]
    chosen = dynamiccut_selection(dyn, params=params).removed_mask  # (N,)
    return (
        _group_stat("first_epoch", "median first-memorization epoch (Top by all checks)", True, "lower",
                    dyn.first_epoch, top, np.median),
        _group_stat("forgetting_events", "forgetting events per row (Top by all checks)", True, "higher",
                    dyn.forgetting_events.astype(np.float64), top, np.mean),
        _group_stat("early_mem_auc", f"mean Mem-AUC over the first {q} checks (Top by all checks)", True,
                    "higher", early, top, np.mean),
        _precision_stat("early_identification", f"precision of the selection at T={T:g} vs the final Top",
                        True, chosen, top),
        _group_stat("first_epoch_split", "mean first-memorization epoch on even checks (Top by odd checks)",
                    False, "lower", first_epoch(dyn.counts[:, m], dyn.epochs[m]), top_g, np.mean),
        _group_stat("forgetting_rate_split", "forgetting events per memorized even check (Top by odd checks)",
                    False, "higher", forgetting_rate(dyn.counts[:, m]), top_g, np.mean,
                    lambda mask: pooled_forgetting_rate(dyn.counts[:, m], mask)),
        _group_stat("early_mem_auc_split", f"mean Mem-AUC over the even checks of the first {q} "
                    "(Top by odd checks)", False, "higher", dyn.auc[:, m_early].mean(axis=1), top_g, np.mean),
        _precision_stat("early_identification_after", f"precision of the selection at T={T:g} vs the Top "
                        "of the checks after T", False, chosen, target_top(dyn, T, "after")),
    )
