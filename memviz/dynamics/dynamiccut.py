"""DynamicCut: score training rows by their early per-row Mem-AUC and prune the top p.

DynamicCut (arXiv 2505.22322) warms a model up for T epochs while tracking
memorization, scores every training row by the mean of its k largest per-check
Mem-AUC values in that window, removes the top p and retrains on the rest.

score_i(k, T) = (1 / k') * sum of the k' largest A_i(e) over checks e with epoch(e) <= T,
k' = min(k, #{e : epoch(e) <= T})

where A_i(e) is the per-row Mem-AUC of :mod:`memviz.dynamics.rows`. Defaults (the paper
leaves both to tune): k = 3 and T = the epoch of check ``ceil(C / 2)`` (the first half
of the warm-up's checks; with evenly spaced checks, half of the warm-up's epochs).

``score="excess"`` (not the paper's) scores a row by its Mem-AUC above what the null
expects: A_i(e) is replaced by A_i(e) - S_e * rate_i, where S_e is the number of generated
rows at check e and rate_i the expected per-row Mem-AUC per generated row under the null
(fresh real rows attributed to row i, e.g. from the hold-out floor). A typical "hub" row
that any sample from the population lands on then no longer outranks a rare, reproduced one.

Everything works on the dense (N, C) matrix of :class:`~memviz.dynamics.rows.RowDynamics`,
so a new (p, k, T) is rescored in milliseconds.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd

from memviz.dynamics.rows import RowDynamics, ceil_share, top_mask
from memviz.errors import BadOption

SCORES = ("raw", "excess")
TARGETS = ("final", "after")


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or not 0.0 < p < 1.0:
        raise BadOption(f"p must be strictly between 0 and 1, got {p!r}")
    return float(p)


def check_k(k) -> int:
    """``k`` as an int, or a one-line MemvizError (not an integer >= 1)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise BadOption(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _check_T(T):
    """``T`` unchanged (None: the default window), or a one-line MemvizError (not a number, or below epoch 1:
    no check is ever at or before it; ``report --T -3`` had been recorded as tuned)."""
    if T is None:
        return None
    if isinstance(T, bool) or not isinstance(T, (int, float, np.integer, np.floating)) or math.isnan(T):
        raise BadOption(f"T must be a number of epochs, got {T!r}")
    if T < 1:
        raise BadOption(f"T must be an epoch, 1 or more (the last epoch scored), got {T!r}")
    return T


@dataclass(frozen=True)
class DynamicCutParams:
    """DynamicCut's parameters (p, k, T), validated once, when made: the one place they are defaulted,
    checked and carried (every other module takes one of these, or reads its defaults).

    Attributes
    ----------
    p : float, default 0.10
        Share of training rows removed, strictly between 0 and 1 (``n_remove = ceil(p * N)``).
    k : int, default 3
        Number of largest per-check Mem-AUC values averaged, >= 1.
    T : number, optional
        Last epoch of the scoring window; None: :func:`default_T` (the first half of the checks).

    Raises
    ------
    MemvizError
        One line naming the first bad value (p, then k, then T).
    """

    p: float = 0.10
    k: int = 3
    T: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "p", _check_p(self.p))
        object.__setattr__(self, "k", check_k(self.k))
        object.__setattr__(self, "T", _check_T(self.T))

    @classmethod
    def unchecked(cls, p: float, k: int, T) -> "DynamicCutParams":
        """Made from values checked when they were first made (a comparison's settings read back from the
        experiment.json it wrote after checking them; :meth:`at`): nothing is checked again."""
        new = object.__new__(cls)
        for name, value in (("p", p), ("k", k), ("T", T)):
            object.__setattr__(new, name, value)
        return new

    def at(self, T) -> "DynamicCutParams":
        """The same p and k at the window T (only T is checked: p and k were when these were made)."""
        return DynamicCutParams.unchecked(self.p, self.k, _check_T(T))

    def window(self, dyn: RowDynamics) -> float:
        """The scoring window's last epoch on ``dyn``: T, or :func:`default_T` when None; a one-line
        MemvizError when no check has epoch <= T."""
        if self.T is None:
            return default_T(dyn)
        if self.T < dyn.epochs[0]:
            raise BadOption(f"no check has epoch <= T={self.T}: the first check is at epoch {int(dyn.epochs[0])}")
        return self.T

    def budget(self, n_rows: int) -> int:
        """n_remove = ceil(p * N) (at least 1); a one-line MemvizError when it would remove every row."""
        n_remove = max(1, ceil_share(self.p, n_rows))
        if n_remove >= n_rows:
            raise BadOption(f"p={self.p} would remove all {n_rows} training rows; choose a smaller p")
        return n_remove


#: the defaults, defined once (:class:`DynamicCutParams`)
DEFAULTS = DynamicCutParams()


def tuned_params(p=None, k=None, T=None) -> DynamicCutParams | None:
    """The settings a caller tuned, each given one checked by :class:`DynamicCutParams` (one not given is its
    default; None, nothing checked, when none is given): a report records what a user tuned, and records it only
    when it is DynamicCut's."""
    if p is None and k is None and T is None:
        return None
    return DynamicCutParams(DEFAULTS.p if p is None else p, DEFAULTS.k if k is None else k, T)
DEFAULT_P = DEFAULTS.p
DEFAULT_K = DEFAULTS.k


def params_of(params: DynamicCutParams | None = None, p=DEFAULT_P, k=DEFAULT_K, T=None) -> DynamicCutParams:
    """``params`` when given (checked when it was made: nothing is checked again), else (p, k, T) checked now."""
    return params if params is not None else DynamicCutParams(p, k, T)


def _k_T(params: DynamicCutParams | None, k, T=None) -> DynamicCutParams:
    """``params``, else (k, T) checked now, for what uses no p (a ranking)."""
    return params if params is not None else DynamicCutParams.unchecked(DEFAULT_P, check_k(k), _check_T(T))


def default_T(dyn: RowDynamics) -> int:
    """Default warm-up window: the epoch of check number ``ceil(C / 2)`` (1-based)."""
    return int(dyn.epochs[max(1, math.ceil(dyn.n_checks / 2)) - 1])


def resolve_T(dyn: RowDynamics, T) -> float:
    """The scoring window's last epoch: ``T`` checked (a number, at least the first check's
    epoch), or :func:`default_T` when None. Raises MemvizError with one line otherwise."""
    return DEFAULTS.at(T).window(dyn)


def prune_budget(p, n_rows: int) -> int:
    """n_remove = ceil(p * N) (at least 1); raises when it would remove every row. ``p``: a share, or a
    :class:`DynamicCutParams` (not checked again)."""
    params = p if isinstance(p, DynamicCutParams) else DynamicCutParams(p)
    return params.budget(n_rows)


def _check_score(score: str) -> str:
    if score not in SCORES:
        raise BadOption(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    return score


def _check_rate(dyn: RowDynamics, rate) -> np.ndarray:
    if rate is None:
        raise BadOption("score='excess' needs expected_auc_rate: the null's expected Mem-AUC per "
                        "generated row, one value per training row")
    rate = np.asarray(rate, dtype=np.float64)
    if rate.shape != (dyn.n_rows,):
        raise BadOption(f"expected_auc_rate has shape {rate.shape}, the warm-up has {dyn.n_rows} training rows")
    if not np.all(np.isfinite(rate)) or np.any(rate < 0):
        raise BadOption("expected_auc_rate must be finite and >= 0 for every training row")
    return rate


def score_rows(dyn: RowDynamics, k: int = DEFAULT_K, T=None, score: str = "raw",
               expected_auc_rate=None, *, params: DynamicCutParams | None = None) -> np.ndarray:
    """DynamicCut scores, aligned with ``dyn.row_ids``.

    Parameters
    ----------
    dyn : RowDynamics
    k : int, default 3
        Number of largest per-check values averaged. When fewer than k checks have
        epoch <= T, the mean is over all of them (k' = min(k, m)).
    T : number, optional
        Last epoch of the scoring window (checks with epoch <= T); default
        :func:`default_T` (first half of the checks).
    score : {"raw", "excess"}, default "raw"
        "raw" (the paper's): the per-check value is A_i(e). "excess": it is
        A_i(e) - S_e * rate_i, the Mem-AUC above the null's expectation.
    expected_auc_rate : array of float, (N,), optional
        rate_i, aligned with ``dyn.row_ids``: the expected per-row Mem-AUC per generated
        row under the null. Required for "excess"; ignored for "raw".
    params : DynamicCutParams, optional
        k and T already checked (given, ``k`` and ``T`` are not read).

    Returns
    -------
    ndarray, float64, (N,)
        score_i = mean of the k' largest per-check values, epoch(e) <= T.

    Raises
    ------
    MemvizError
        k < 1, T not a number, no check with epoch <= T (the message names T and the
        first check's epoch), an unknown score, or a missing / misshapen / negative rate.
    """
    params = _k_T(params, k, T)
    k, T = params.k, params.window(dyn)
    rate = _check_rate(dyn, expected_auc_rate) if _check_score(score) == "excess" else None
    window = dyn.epochs <= T  # (C,)
    m = int(window.sum())
    # epochs are non-decreasing, so the window is a prefix of the checks
    prefix = bool(window[:m].all())
    auc = dyn.auc[:, :m] if prefix else dyn.auc[:, window]  # (N, m)
    if rate is not None:
        sizes = dyn.n_synthetic[:m] if prefix else dyn.n_synthetic[window]  # (m,) S_e
        auc = auc - rate[:, None] * sizes[None, :].astype(np.float64)  # (N, m) A_i(e) - S_e rate_i
    kk = min(k, m)
    if kk == m:
        return auc.mean(axis=1)
    if kk == 1:
        return auc.max(axis=1)
    top_k = np.partition(auc, m - kk, axis=1)[:, m - kk:]  # (N, k') largest values, unordered
    return top_k.mean(axis=1)


def rank_by_score(scores: np.ndarray, row_ids: np.ndarray) -> np.ndarray:
    """Positions sorted by descending score, ties broken by the lowest ``row_id``."""
    return np.lexsort((row_ids, -scores))


@dataclass(frozen=True, eq=False)
class Selection:
    """A DynamicCut pruning decision.

    Attributes
    ----------
    removed : ndarray, int64, (n_remove,)
        Removed training row_ids, in rank order (highest score first).
    row_ids : ndarray, int64, (N,)
        All training row_ids, ascending (= ``dyn.row_ids``).
    scores : ndarray, float64, (N,)
        DynamicCut score of each row in ``row_ids``.
    ranks : ndarray, int64, (N,)
        1-based rank of each row in ``row_ids`` (1 = highest score; ties to the lowest row_id).
    p, k, T : float, int, number
        The parameters, T resolved (never None).
    n_remove : int
        ceil(p * N).
    n_checks_used : int
        Checks with epoch <= T.
    score : str
        "raw" (the paper's score) or "excess" (see :func:`score_rows`).
    """

    removed: np.ndarray
    row_ids: np.ndarray
    scores: np.ndarray
    ranks: np.ndarray
    p: float
    k: int
    T: float
    n_remove: int
    n_checks_used: int
    score: str = "raw"

    @property
    def removed_mask(self) -> np.ndarray:
        """(N,) bool aligned with ``row_ids``: True for removed rows."""
        return self.ranks <= self.n_remove

    @property
    def kept(self) -> np.ndarray:
        """Kept row_ids, ascending (the training table to retrain on)."""
        return self.row_ids[~self.removed_mask]

    def to_frame(self) -> pd.DataFrame:
        """One row per training row in rank order: row_id, score, rank, removed."""
        order = np.argsort(self.ranks)
        return pd.DataFrame({"row_id": self.row_ids[order], "score": self.scores[order],
                             "rank": self.ranks[order], "removed": self.removed_mask[order]})


@dataclass(frozen=True, eq=False)
class Ranking:
    """DynamicCut's ranking of the training rows at (k, T): the selection at every p is a prefix of it.

    Keep one to try many p without rescoring (a slice of ``order``, O(ceil(p N)), instead of a
    partition of the N × m Mem-AUC values and a sort of N rows); pass it to
    :func:`dynamiccut_selection`, :func:`early_identification` or :func:`early_identification_curve`.

    Attributes
    ----------
    row_ids : ndarray, int64, (N,)
        All training row_ids (= ``dyn.row_ids``).
    scores : ndarray, float64, (N,)
        :func:`score_rows` at (k, T), aligned with ``row_ids``.
    order : ndarray, int64, (N,)
        :func:`rank_by_score`: positions, best first (ties to the lowest row_id).
    ranks : ndarray, int64, (N,)
        1-based rank of each row in ``row_ids``.
    k, T, n_checks_used, score
        As in :class:`Selection` (T resolved).
    """

    row_ids: np.ndarray
    scores: np.ndarray
    order: np.ndarray
    ranks: np.ndarray
    k: int
    T: float
    n_checks_used: int
    score: str = "raw"

    def selection(self, p=DEFAULT_P) -> Selection:
        """The top ``n_remove = ceil(p * N)`` rows of the ranking (see :func:`dynamiccut_selection`).
        ``p``: a share, or the :class:`DynamicCutParams` whose p it takes (not checked again)."""
        params = p if isinstance(p, DynamicCutParams) else DynamicCutParams(p)
        n_remove = params.budget(len(self.row_ids))
        return Selection(removed=self.row_ids[self.order[:n_remove]], row_ids=self.row_ids, scores=self.scores,
                         ranks=self.ranks, p=params.p, k=self.k, T=self.T, n_remove=n_remove,
                         n_checks_used=self.n_checks_used, score=self.score)


def dynamiccut_ranking(dyn: RowDynamics, k: int = DEFAULT_K, T=None, score: str = "raw",
                       expected_auc_rate=None, *, params: DynamicCutParams | None = None) -> Ranking:
    """Rank rows by :func:`score_rows` (descending score, ties to the lowest row_id).
    ``params``: k and T already checked (given, ``k`` and ``T`` are not read).

    Raises
    ------
    MemvizError
        As :func:`score_rows`.
    """
    params = _k_T(params, k, T)
    T = params.window(dyn)
    scores = score_rows(dyn, score=score, expected_auc_rate=expected_auc_rate, params=params)
    order = rank_by_score(scores, dyn.row_ids)  # (N,) positions
    ranks = np.empty(dyn.n_rows, dtype=np.int64)
    ranks[order] = np.arange(1, dyn.n_rows + 1)
    return Ranking(row_ids=dyn.row_ids, scores=scores, order=order, ranks=ranks, k=params.k, T=T,
                   n_checks_used=int((dyn.epochs <= T).sum()), score=score)


def _ranking_for(dyn: RowDynamics, params: DynamicCutParams, score, expected_auc_rate,
                 ranking: Ranking | None) -> Ranking:
    """``ranking`` when it was made at (k, T, score) on these rows; a fresh one when None."""
    if ranking is None:
        return dynamiccut_ranking(dyn, score=score, expected_auc_rate=expected_auc_rate, params=params)
    want = (params.k, params.window(dyn), _check_score(score))
    if (ranking.k, ranking.T, ranking.score) != want or len(ranking.row_ids) != dyn.n_rows:
        raise BadOption(f"the ranking given was made at k={ranking.k}, T={ranking.T}, score={ranking.score!r} "
                        f"on {len(ranking.row_ids)} rows, not at k={want[0]}, T={want[1]}, score={want[2]!r} "
                        f"on {dyn.n_rows}")
    return ranking


def dynamiccut_selection(dyn: RowDynamics, p: float = DEFAULT_P, k: int = DEFAULT_K, T=None,
                         score: str = "raw", expected_auc_rate=None, ranking: Ranking | None = None, *,
                         params: DynamicCutParams | None = None) -> Selection:
    """Rank rows by :func:`score_rows` and remove the top ``n_remove = ceil(p * N)``.

    Ranking: descending score, ties broken by the lowest row_id, so the result does not
    depend on the order of the checks table or of the training row_ids. ``score`` and
    ``expected_auc_rate`` are passed to :func:`score_rows`. ``ranking``: a
    :func:`dynamiccut_ranking` at (k, T, score) kept by the caller (nothing is rescored).
    ``params``: (p, k, T) checked when made (given, ``p``, ``k`` and ``T`` are not read; nothing is
    checked again).

    Raises
    ------
    MemvizError
        p outside (0, 1) or removing every row, bad k, no check with epoch <= T, an
        unknown score, a bad rate, or a ``ranking`` made at another (k, T, score).
    """
    params = params_of(params, p, k, T)
    params.budget(dyn.n_rows)
    return _ranking_for(dyn, params, score, expected_auc_rate, ranking).selection(params)


@dataclass(frozen=True)
class EarlyIdentification:
    """How well a DynamicCut selection at T recovers a Top group.

    With S the removed rows and Top the target group:
    precision = |S ∩ Top| / |S|, recall = |S ∩ Top| / |Top|,
    jaccard = |S ∩ Top| / |S ∪ Top|. A random selection of |S| rows has expected
    precision |Top| / N (``random_precision``) and recall |S| / N (``random_recall``).

    ``target`` names the Top group: "final" (the paper's) is ``dyn.top``, by the total
    count over the **whole** warm-up, checks <= T included; "after" is the
    ceil(top_frac * N) rows with the largest count over the checks **after** T only
    (sum_{e : epoch(e) > T} c_i(e), ties to the lowest row_id), so that the selection
    (checks <= T) and the target share no check. All rates are NaN for "after" when no
    check is after T.
    """

    T: float
    p: float
    k: int
    n_checks_used: int
    n_selected: int
    n_top: int
    precision: float
    recall: float
    jaccard: float
    random_precision: float
    random_recall: float
    score: str = "raw"
    target: str = "final"


def target_top(dyn: RowDynamics, T, target: str = "final") -> np.ndarray:
    """(N,) bool Top group for :func:`early_identification` (see :class:`EarlyIdentification`).

    "after" with no check after T gives an all-False mask.
    """
    if target not in TARGETS:
        raise BadOption(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    if target == "final":
        return dyn.top
    after = dyn.epochs > resolve_T(dyn, T)  # (C,)
    if not after.any():
        return np.zeros(dyn.n_rows, dtype=bool)
    return top_mask(dyn.counts[:, after].sum(axis=1, dtype=np.int64), dyn.row_ids, dyn.top_frac)


def early_identification(dyn: RowDynamics, p: float = DEFAULT_P, k: int = DEFAULT_K, T=None,
                         score: str = "raw", expected_auc_rate=None, target: str = "final",
                         ranking: Ranking | None = None, *,
                         params: DynamicCutParams | None = None) -> EarlyIdentification:
    """Precision, recall and Jaccard overlap of the DynamicCut selection at (p, k, T) vs a Top group.

    The default (``target="final"``, ``score="raw"``) is the paper's measure. It is
    **circular**: the final Top group is ranked by counts that include the very checks
    <= T the selection is scored on, so the same sampling noise sits on both sides and
    the precision is high even when rows have no dynamics of their own (a row with a
    fixed copy propensity). ``target="after"`` scores against a Top group built only from
    the checks after T; compare either against :mod:`memviz.dynamics.nullmodel` before reading it
    as evidence of dynamics. ``ranking`` and ``params``: as in :func:`dynamiccut_selection`.
    """
    sel = dynamiccut_selection(dyn, score=score, expected_auc_rate=expected_auc_rate, ranking=ranking,
                               params=params_of(params, p, k, T))
    chosen, top = sel.removed_mask, target_top(dyn, sel.T, target)
    inter, union = int((chosen & top).sum()), int((chosen | top).sum())
    n_top, n = int(top.sum()), dyn.n_rows
    nan = float("nan")
    return EarlyIdentification(
        T=sel.T, p=sel.p, k=sel.k, n_checks_used=sel.n_checks_used, n_selected=sel.n_remove, n_top=n_top,
        precision=inter / sel.n_remove if n_top else nan, recall=inter / n_top if n_top else nan,
        jaccard=inter / union if n_top else nan,
        random_precision=n_top / n if n_top else nan, random_recall=sel.n_remove / n if n_top else nan,
        score=score, target=target,
    )


def early_identification_curve(dyn: RowDynamics, p: float = DEFAULT_P, k: int = DEFAULT_K, Ts=None,
                               score: str = "raw", expected_auc_rate=None, target: str = "final",
                               rankings: dict | None = None, *, params: DynamicCutParams | None = None) -> pd.DataFrame:
    """:func:`early_identification` for every T in ``Ts`` (default: each distinct check epoch).

    ``rankings``: {T: :func:`dynamiccut_ranking` at (k, T, score)} kept by the caller
    (:func:`dynamiccut_rankings`); a T without one is scored afresh. ``params``: p and k checked when
    made (given, ``p`` and ``k`` are not read; its T is not used): p and k are checked once for all the Ts.

    Columns: the fields of :class:`EarlyIdentification` (T, p, k, n_checks_used,
    n_selected, n_top, precision, recall, jaccard, random_precision, random_recall, score,
    target).
    """
    Ts = np.unique(dyn.epochs) if Ts is None else Ts
    Ts = [T.item() if isinstance(T, np.generic) else T for T in Ts]
    params = params_of(params, p, k)
    rows = [early_identification(dyn, score=score, expected_auc_rate=expected_auc_rate, target=target,
                                 ranking=(rankings or {}).get(T), params=params.at(T)) for T in Ts]
    return pd.DataFrame([asdict(r) for r in rows], columns=[f.name for f in fields(EarlyIdentification)])


def dynamiccut_rankings(dyn: RowDynamics, k: int = DEFAULT_K, score: str = "raw", expected_auc_rate=None, *,
                        params: DynamicCutParams | None = None) -> dict:
    """{T: :func:`dynamiccut_ranking` at (k, T)} for each distinct check epoch T: what
    :func:`early_identification_curve` needs for every p, computed once. ``params``: k checked when
    made (given, ``k`` is not read)."""
    params = _k_T(params, k)
    return {T.item(): dynamiccut_ranking(dyn, score=score, expected_auc_rate=expected_auc_rate,
                                         params=params.at(T.item())) for T in np.unique(dyn.epochs)}
