"""The too-close tests (and the identical, near-verbatim and per-row ones): how close every generated row is
to the training rows, read against real rows the model never saw.

The ratio test (:mod:`memviz.measure.memorization`) asks whether a generated row is *relatively*
nearer its nearest training row than its second nearest; averaged over a table, rows a generator
places far from every training row cancel its copies (a table of 20 % verbatim rows read "no
copying": issue 36). This module reads the **distance to the closest record** (DCR) of every
generated row, and compares it with the same distance for real rows the model never saw, so that no
average can hide a copy.

Notation: training rows i = 1..N, generated rows g (M of them), hold-out rows h (H of them: real
rows the model never saw), D(x) = d(x, NN1(x)) the standardized distance of a row x to its nearest
training row (:mod:`memviz.engine.neighbors`: numericals scaled by their training range, one per
categorical mismatch; D = 0 exactly when x equals a training row on every distance column), and
NN1(x) that row (the lowest position among ties).

The three tests, each exact under the null "the generated rows are fresh real rows" (generated and
hold-out rows exchangeable)
------------------------------------------------------------------------------------------------
* **too close**   threshold t = D_(k), the k-th smallest hold-out distance, k = ⌊α (H + 1)⌋ with
  α = :data:`CLOSE_QUANTILE` (5 %); a generated row is too close when D(g) < t, nearer its training row
  than all but k − 1 of the H real rows are. Under the null P(D(g) < D_(k)) = U with U ~ Beta(k, H − k + 1)
  (the k-th order statistic's coverage), so the count X of too-close generated rows is
  **Beta-Binomial(M, k, H − k + 1)** (the threshold's own estimation error included: the test stays exact
  at any H ≥ 1/α − 1 = 19); p = P(X' ≥ X). Ties only lower P(D(g) < t), so with ties the test is
  conservative. Expected share k / (H + 1) ≈ α; the share is reported with its Wilson interval.
  **Its tail.** One quantile is an average too: a generator whose other rows sit far from every training
  row fills the α quota with copies and passes (25 credit rows near-copied 6 times each, 5.0 % of its rows,
  inside an independent-columns generator: 5.0 % too close against 4.9 % expected, "no copying"). So the
  same count is read at the levels of :data:`TAIL_QUANTILES` too, and nearer than *every* hold-out row
  (k = 1, expected share 1 / (H + 1)): each level j, with k_j = max(1, ⌊q_j (H + 1)⌋) (levels with equal
  k counted once), has its exact Beta-Binomial p_j, and the member's p is Bonferroni's,
  p = min(1, L · min_j p_j) over the L levels: valid whatever their dependence (:class:`CloseLevel`).
* **identical**   I_S = #{g : D(g) = 0} and I_H = #{h : D(h) = 0}: given I_S + I_H the generated count is
  **hypergeometric** (Fisher's exact test, one-sided): p = P(I' ≥ I_S). The difference of the shares is
  reported with Newcombe's interval (:func:`memviz.measure.floor.newcombe_interval`). A generated row that
  equals a training row repeated in the training table has D = 0 like any other: identical rows are
  copies whatever the training table's duplicates (the ratio test gives them r = 0/0, never flagged).
* **close copies per training row**   an event is a close copy: D(x) < t or D(x) = 0. Per training row
  i, c_i = #{g : NN1(g) = i, event} and r_i = the same count over the hold-out's rows. Under the null each
  of the M + H rows gives row i an event with the same probability π_i, so **given n_i = c_i + r_i,
  c_i ~ Binomial(n_i, M / (M + H))** whatever π_i: the test needs no model of how unequal the rows are.
  p_i = P(Bin(n_i, s) ≥ c_i) (1 when c_i = 0); rows enter Benjamini–Hochberg when the smallest p their n_i
  allows, s^{n_i}, is at most :data:`Q_LEVEL` (a row that could never be named does not dilute the others;
  the selection reads n_i only, which the null leaves free of the split). Its smallest q-value is Simes' p
  of "some row has more close copies than chance" (:attr:`CloseCopies.p_rows`): exact, the member of the
  verdict's family (:mod:`memviz.verdict.family`).
* **naming rows**   once the family holds (the table copies, or some row does), rows are named with more
  power: the training rows join the reference, each against the other N − 1 (leave one out: NN1 of training
  row j among the rows other than j; :func:`leave_one_out`), R = H + N, s = M / (M + R), and a row is named at
  q ≤ 5 % (:meth:`CloseCopies.named`). That multiplies R by (N + H) / H, which is what makes a row with 5
  copies stand out at N = 4,000, M = 1,800, H = 1,500 ((1,800 / 7,300)^5 = 9e-4, where against the hold-out
  alone (1,800 / 3,300)^5 = 0.05). A training row j is a fresh row for the others only on average over
  training tables, not given this one (a value seen once in it meets fresh rows but no twin): so it names
  rows after the family's exact gate, never opens it. Identical training rows (twins) count as one record,
  the lowest position, which every search attributes their ties to.

A training row j against the others is a fresh row for them only when the training table repeats
rows as often as fresh rows meet it: a table deduplicated before training repeats none. So the
training rows join the reference only when their events are as frequent as the hold-out's
(:func:`comparable`: neither their identical share nor their too-close share is below the hold-out's,
one-sided exact test at :data:`COMPARABLE_P`); otherwise rows are named against the hold-out alone, and
the result says so.

The hold-out itself must be fresh: one that shares rows with the training table beyond what the
training table shares with itself (its identical share above the training rows' own beyond a margin, at
exact confidence bounds: :func:`memviz.tables.holdout.shared_rows`, the one rule of every command) is refused by :func:`check_holdout` (45 % of training rows in a hold-out
moved its floor from 23 % to 58 % and turned a "copying" verdict into "no copying").
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadTable
from memviz.io import to_jsonable
from memviz.measure.floor import newcombe_interval, wilson_interval
from memviz.measure.multiplicity import bh_qvalues, bonferroni
from memviz.measure.tails import betabinom_sf, binom_sf, hypergeom_sf
from memviz.tables.holdout import refuse_shared_rows

#: α: a generated row is too close when nearer its training row than all but α of the hold-out rows
CLOSE_QUANTILE = 0.05
#: the too-close test's tail: the same count read at these shares of the hold-out too, and nearer than
#: every hold-out row (k = 1); Bonferroni over the levels (module docstring)
TAIL_QUANTILES = (0.01,)
#: the distance of every closeness figure: the standardized one (the paper's per-row min-max
#: scaling gives the numerically nearest row a zero, so its distances do not compare across rows)
DISTANCE = "standardized"
#: a training row is named when its q-value is at most this (before the verdict's family adjusts it)
Q_LEVEL = 0.05
#: the training rows join the reference unless their events are rarer than the hold-out's at this p
COMPARABLE_P = 1e-3
#: the per-row test counts a row equal to a training row in all but this many columns as a close copy of it (one:
#: on a credit table 35 % of real rows equal a training row in all but two columns, 0.6 % in all but one, so
#: the second level would bury a row's copies in real rows' matches)
ROW_ALTERED = 1
#: the seed of the draws that order rows tied at a too-close threshold (:func:`tie_draws`)
TIE_SEED = 20261207
ROW_COLUMNS = ("row_id", "close_copies", "identical_copies", "near_verbatim_copies", "real_close", "expected_close", "p_value",
               "q_value", "closest_distance")


# ------------------------------------------------------------------ nearest training rows
@dataclass(frozen=True, eq=False)
class Nearest:
    """The nearest training row of each query row under the standardized distance.

    distance : (n,) float64 D(x).  position : (n,) int64 NN1(x)'s position in the training table.
    """

    distance: np.ndarray
    position: np.ndarray

    def __post_init__(self):
        if self.distance.shape != self.position.shape or self.distance.ndim != 1:
            raise BadOption("nearest: distances and positions must be two arrays of one length")

    def __len__(self) -> int:
        return len(self.distance)

    def take(self, rows) -> "Nearest":
        rows = np.asarray(rows)
        return Nearest(self.distance[rows], self.position[rows])


def nearest(engine, queries) -> Nearest:
    """:class:`Nearest` of ``queries`` (a Table or a frame of the training columns) under ``engine``
    (fitted on the training table with the standardized distance)."""
    _check_engine(engine)
    nb = engine.kneighbors(queries, k=1)
    return Nearest(nb.dist[:, 0].copy(), nb.pos[:, 0].copy())


def leave_one_out(engine, train) -> Nearest:
    """Each training row's nearest *other* training row (k = 2, the row itself left out): the training
    rows as fresh rows for the rest of the table. A row repeated in the table meets its twin at D = 0."""
    _check_engine(engine)
    n = engine.n_reference_
    if n < 2:
        return Nearest(np.zeros(0), np.zeros(0, dtype=np.int64))
    nb = engine.kneighbors(train, k=2)
    own = nb.pos[:, 0] == np.arange(n)                                      # (N,) the row found itself first
    return Nearest(np.where(own, nb.dist[:, 1], nb.dist[:, 0]), np.where(own, nb.pos[:, 1], nb.pos[:, 0]))


def _check_engine(engine) -> None:
    if engine.distance != DISTANCE:
        raise BadOption(f"engine: uses the {engine.distance} distance; closeness is read with the {DISTANCE} one")


# ------------------------------------------------------------------ the hold-out at the door
def identical_excess_p(n_a: int, size_a: int, n_b: int, size_b: int) -> float:
    """One-sided Fisher exact p that sample a's share of identical rows exceeds sample b's:
    P(X ≥ n_a), X ~ Hypergeometric(size_a + size_b, n_a + n_b, size_a)."""
    return hypergeom_sf(n_a, size_a + size_b, n_a + n_b, size_a)


def check_holdout(holdout: Nearest, loo: Nearest, source: str) -> None:
    """Refuse a hold-out that shares rows with the training table beyond what the training table shares
    with itself, in the one rule and the one line of every command
    (:func:`memviz.tables.holdout.refuse_shared_rows`), the identical shares read here from the standardized
    distances (the hold-out's nearest training row, each training row's nearest other one). Without hold-out
    rows, or without training rows to compare, nothing is refused."""
    h, n = len(holdout), len(loo)
    i_h, i_n = int(np.sum(holdout.distance == 0)), int(np.sum(loo.distance == 0))
    if h and n:
        refuse_shared_rows(source, i_h, h, i_n, n)


# ------------------------------------------------------------------ the tests
@dataclass(frozen=True)
class CloseLevel:
    """One level of the too-close test (module docstring).

    quantile : the declared share q of the hold-out (:data:`CLOSE_QUANTILE` or one of
        :data:`TAIL_QUANTILES`); 0 for "nearer than every hold-out row".
    k, threshold : k = max(1, ⌊q (H + 1)⌋) and t = D_(k), the k-th smallest hold-out distance (ties ordered by
        their tie-breaking draws).
    n_too_close, share : X = #{g : (D(g), u(g)) < (D_(k), u_(k))} and X / M.  expected_share : k / (H + 1).
    p : P(X' ≥ X), X' ~ Beta-Binomial(M, k, H − k + 1) (1 when X = 0).
    n_tied : generated rows at exactly the threshold's distance, ordered against it by their draws.
    """

    quantile: float
    k: int
    threshold: float
    n_too_close: int
    share: float
    expected_share: float
    p: float
    n_tied: int = 0

    @property
    def every(self) -> bool:
        """Whether this level reads "nearer than every hold-out row" (k = 1)."""
        return self.k == 1

    @property
    def than(self) -> str:
        """What a too-close row is nearer its training row than: "any real row" or "99 % of real rows"."""
        return "any real row" if self.every else f"{100 * (1 - self.quantile):.0f} % of real rows"

    def to_dict(self) -> dict:
        return to_jsonable({"quantile": self.quantile, "k": self.k, "threshold": self.threshold,
                            "n_too_close": self.n_too_close, "share": self.share,
                            "expected_share": self.expected_share, "p": self.p, "n_tied": self.n_tied})


def tie_key(synthetic_distance: np.ndarray, holdout_distance: np.ndarray) -> int:
    """The seed of one audit's tie-breaking draws: 64 bits of SHA-256 over the generated and hold-out distances
    pooled and sorted. It changes with the data, so that over audits the draws are as good as fresh ones (with one
    fixed seed, the lowest draws' mix of generated and hold-out rows tilted every audit the same way: 6.9 % of
    tied fresh-row tables read too close at 5 %), and it does not depend on which rows are the generated ones, so
    the two samples stay exchangeable under the null. The same tables give the same audit."""
    pooled = np.sort(np.concatenate([np.asarray(synthetic_distance, dtype=np.float64),
                                     np.asarray(holdout_distance, dtype=np.float64)]))
    return int.from_bytes(hashlib.sha256(pooled.tobytes()).digest()[:8], "little")


def tie_draws(n: int, which: str, key: int) -> np.ndarray:
    """(n,) the tie-breaking draws u of the generated (``which="synthetic"``), hold-out or training rows:
    independent uniforms seeded by :data:`TIE_SEED` and the audit's :func:`tie_key`, drawn without looking at
    the rows, so that the pairs (D, u) of the two samples stay exchangeable under the null."""
    return np.random.default_rng([TIE_SEED, key, {"synthetic": 0, "holdout": 1, "training": 2}[which]]).random(n)


def close_levels(synthetic_distance: np.ndarray, holdout_distance: np.ndarray,
                 alpha: float = CLOSE_QUANTILE) -> tuple[CloseLevel, ...]:
    """The too-close test's levels, α first, then :data:`TAIL_QUANTILES`, then k = 1, each k once; () when
    ⌊α (H + 1)⌋ < 1 (too few hold-out rows for α: no too-close test). Rows tied with the threshold are ordered
    by their tie-breaking draws (:func:`tie_draws`): a hold-out row at distance 0 never disables a level."""
    dS = np.asarray(synthetic_distance, dtype=np.float64)
    dH = np.asarray(holdout_distance, dtype=np.float64)
    m, h = len(dS), len(dH)
    if math.floor(alpha * (h + 1)) < 1:
        return ()
    key = tie_key(dS, dH)
    uS, uH = tie_draws(m, "synthetic", key), tie_draws(h, "holdout", key)
    order = np.lexsort((uH, dH))                                          # (D, u) ascending
    out, seen = [], set()
    for q in (alpha, *(q for q in TAIL_QUANTILES if q < alpha), 0.0):
        k = max(1, math.floor(q * (h + 1)))
        if k in seen:
            continue
        seen.add(k)
        t, ut = float(dH[order[k - 1]]), float(uH[order[k - 1]])
        tied = dS == t
        x = int(np.sum(dS < t) + np.sum(tied & (uS < ut)))
        p = betabinom_sf(x, m, k, h - k + 1) if x else 1.0
        out.append(CloseLevel(q, k, t, x, x / m, k / (h + 1), p, int(tied.sum())))
    return tuple(out)


@dataclass(frozen=True)
class ReferenceShare:
    """One event's share among the generated rows against its reference (module docstring: identical rows, rows
    equal in all but ``altered`` columns).

    n, share : generated rows with the event and their share of M.
    n_holdout, holdout_share : the same among the hold-out's H rows.
    n_training, training_share : among the training rows against each other (leave one out; 0 / NaN: not read).
    pooled : whether the training rows are in the reference (their share is not below the hold-out's:
        :func:`comparable`).
    reference_share : the share in the reference, (n_holdout [+ n_training]) / (H [+ N]).
    p : Fisher's exact one-sided p of "the generated rows' share exceeds the reference's".
    altered : 0 for identical rows, L for "equal in all but at most L columns".
    by_column : for L ≥ 1, {column: generated rows whose first differing column it is}, most first.
    """

    n: int
    share: float
    n_holdout: int
    holdout_share: float
    n_training: int
    training_share: float
    pooled: bool
    reference_share: float
    p: float
    altered: int = 0
    by_column: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict:
        return to_jsonable({"altered": self.altered, "n": self.n, "share": self.share, "n_holdout": self.n_holdout,
                            "holdout_share": self.holdout_share, "n_training": self.n_training,
                            "training_share": self.training_share, "pooled": self.pooled,
                            "reference_share": self.reference_share, "p": self.p,
                            "by_column": [{"column": c, "n": k} for c, k in self.by_column]})


def design_effect(events: np.ndarray, partner: np.ndarray) -> float:
    """How much more the training rows' own event count varies than independent rows' would: their events come in
    clusters (k identical rows give k events, each the other's match), so the count's variance is about
    deff = Σ_c k_c² / Σ_c k_c times the binomial one, k_c the size of cluster c (rows with an event grouped by the
    lower of their own and their match's position); 1 without events."""
    rows = np.flatnonzero(events)
    if not len(rows):
        return 1.0
    sizes = np.unique(np.minimum(rows, np.asarray(partner)[rows]), return_counts=True)[1].astype(float)
    return float(max(1.0, (sizes ** 2).sum() / sizes.sum()))


def reference_share(events_s: np.ndarray, events_h: np.ndarray, events_l: np.ndarray | None,
                    altered: int = 0, partner_l: np.ndarray | None = None) -> ReferenceShare:
    """:class:`ReferenceShare` of boolean events of the generated, hold-out and (optional) training rows: the
    training rows join the reference when their share is not below the hold-out's (:func:`comparable`), each
    cluster of them weighed once (:func:`design_effect` of ``partner_l``, each training row's match: their count
    and size divided by it, the count rounded up and the size down, so the pooled test never claims more than
    their clusters say)."""
    m, h = len(events_s), len(events_h)
    x, xh = int(np.sum(events_s)), int(np.sum(events_h))
    n_l = len(events_l) if events_l is not None else 0
    xl = int(np.sum(events_l)) if n_l else 0
    pooled = bool(n_l) and comparable(xh, h, xl, n_l)
    if pooled:
        deff = design_effect(events_l, partner_l) if partner_l is not None else 1.0
        xr, r = xh + math.ceil(xl / deff), h + math.floor(n_l / deff)
    else:
        xr, r = xh, h
    p = hypergeom_sf(x, m + r, x + xr, m)
    return ReferenceShare(x, x / m, xh, xh / h, xl, xl / n_l if n_l else math.nan, pooled, xr / r, p, altered)


@dataclass(frozen=True, eq=False)
class CloseCopies:
    """The closeness tests of a generated table (module docstring).

    alpha, k, threshold : α, k = ⌊α (H + 1)⌋ and t = D_(k) (NaN when H < 1/α − 1: no too-close test).
    n_generated, n_holdout, n_reference : M, H and the training rows in the per-row reference (0: hold-out only).
    reference_note : why the training rows are not in the per-row reference ("" when they are, or N = 0).
    n_too_close, too_close_share, too_close_ci : X, X / M and its Wilson interval.
    expected_share : k / (H + 1), the share fresh rows give.
    p_too_close : the too-close member's p, Bonferroni over :attr:`levels` (NaN: no test).
    levels : the too-close test's :class:`CloseLevel` s, α first (empty: no test).
    n_identical, identical_share : I_S, I_S / M.  n_holdout_identical, holdout_identical_share : I_H, I_H / H.
    identical_excess, identical_excess_ci : I_S / M − I_H / H and Newcombe's interval.
    identical : the identical member (:class:`ReferenceShare`: the hold-out and, when comparable, the training
        rows against each other).  p_identical : its p.
    n_training_identical : training rows equal to another training row (the training table's own repeats).
    partial : the near-verbatim member's levels (:class:`ReferenceShare` with ``altered`` = 1, 2; empty: not
        read).  p_partial : Bonferroni over them (NaN: not read).
    share : M / (M + R), the per-row test's binomial probability.  n_candidates : rows that entered BH.
    rows : per training row (:data:`ROW_COLUMNS`, aligned with the training table's row_ids ascending).
    generated : per generated row position, distance, too_close, identical, altered (A), close (event),
        nn1 (row_id of the training row the event is counted for).
    holdout_distances : (H,) the hold-out rows' D, ascending (what the generated rows are read against).
    p_rows : Simes' p of "some training row has more close copies than real rows give it": the smallest q-value
        of the per-row test, the same test that names the rows (the verdict family's member).
    """

    alpha: float
    k: int
    threshold: float
    n_generated: int
    n_holdout: int
    n_reference: int
    reference_note: str
    n_too_close: int
    too_close_share: float
    too_close_ci: tuple[float, float]
    expected_share: float
    p_too_close: float
    n_identical: int
    identical_share: float
    n_holdout_identical: int
    holdout_identical_share: float
    identical_excess: float
    identical_excess_ci: tuple[float, float]
    p_identical: float
    n_training_identical: int
    share: float
    n_candidates: int
    rows: pd.DataFrame
    generated: pd.DataFrame
    holdout_distances: np.ndarray
    p_rows: float = 1.0
    levels: tuple[CloseLevel, ...] = ()
    identical: ReferenceShare | None = None
    partial: tuple[ReferenceShare, ...] = ()
    p_partial: float = math.nan

    @property
    def every_level(self) -> CloseLevel | None:
        """The level "nearer than every hold-out row" (k = 1) when it is not α's own; None otherwise."""
        return self.levels[-1] if len(self.levels) > 1 and self.levels[-1].every else None

    @property
    def carrying_level(self) -> CloseLevel | None:
        """The level with the smallest p (the first, α's, among equals): what the too-close member reads."""
        return min(self.levels, key=lambda lv: lv.p) if self.levels else None

    @property
    def carrying_partial(self) -> ReferenceShare | None:
        """The near-verbatim level with the smallest p (the first, one altered column, among equals)."""
        return min(self.partial, key=lambda lv: lv.p) if self.partial else None

    def named(self, level: float = Q_LEVEL) -> pd.DataFrame:
        """The training rows with q ≤ ``level``, most close copies first."""
        r = self.rows
        return r[r["q_value"] <= level].sort_values(["close_copies", "q_value"], ascending=[False, True])

    def copies_needed(self, level: float = Q_LEVEL) -> int | None:
        """The fewest close copies that name a row on their own (no close real row, no other candidate):
        the smallest c with share^c ≤ level / max(1, candidates); None when no count up to 10,000 does."""
        if not 0 < self.share < 1:
            return None
        c = math.ceil(math.log(level / max(1, self.n_candidates)) / math.log(self.share))
        return max(1, c) if c <= 10_000 else None

    def to_dict(self) -> dict:
        """The figures (JSON-ready; the per-row table goes to rows.csv)."""
        keep = ("alpha", "k", "threshold", "n_generated", "n_holdout", "n_reference", "reference_note", "n_too_close",
                "too_close_share", "expected_share", "p_too_close", "n_identical", "identical_share",
                "n_holdout_identical", "holdout_identical_share", "identical_excess", "p_identical",
                "n_training_identical", "share", "n_candidates")
        out = {k: getattr(self, k) for k in keep}
        out["too_close_ci"] = list(self.too_close_ci)
        out["identical_excess_ci"] = list(self.identical_excess_ci)
        out["p_rows"] = self.p_rows
        out["levels"] = [lv.to_dict() for lv in self.levels]
        out["identical"] = self.identical.to_dict() if self.identical is not None else None
        out["partial"] = [lv.to_dict() for lv in self.partial]
        out["p_partial"] = self.p_partial
        out["distance"] = DISTANCE
        return to_jsonable(out)


def comparable(holdout_events: int, h: int, loo_events: int, n: int) -> bool:
    """Whether the training rows' events (one kind: identical, too close, nearly identical) are not rarer than
    the hold-out's: the one-sided exact p of "the hold-out's share exceeds theirs" is at least
    :data:`COMPARABLE_P`."""
    return identical_excess_p(holdout_events, h, loo_events, n) >= COMPARABLE_P


def close_copy_test(row_ids, synthetic: Nearest, holdout: Nearest, loo: Nearest | None = None, *,
                    alpha: float = CLOSE_QUANTILE, partial=None) -> CloseCopies:
    """The closeness tests of the module docstring.

    Parameters
    ----------
    row_ids : (N,) the training table's row_ids in engine position order (``engine.row_ids_``).
    synthetic, holdout : :class:`Nearest` of the generated and the hold-out rows.
    loo : :func:`leave_one_out` of the training rows (None: the hold-out alone is the reference).
    alpha : :data:`CLOSE_QUANTILE`.
    partial : :class:`memviz.measure.partial.PartialSet` of the same rows (None: the near-verbatim member is
        not read).

    Returns
    -------
    CloseCopies
    """
    if not 0 < alpha < 1:
        raise BadOption(f"alpha={alpha}: must be between 0 and 1")
    row_ids = np.asarray(row_ids, dtype=np.int64)
    n, m, h = len(row_ids), len(synthetic), len(holdout)
    if m == 0 or h == 0:
        raise BadTable("closeness: needs at least one generated and one hold-out row")
    dS, dH = synthetic.distance, holdout.distance
    levels = close_levels(dS, dH, alpha)
    k = levels[0].k if levels else 0
    main = levels[0] if levels else None
    if main is not None:
        t, x, expected = main.threshold, main.n_too_close, main.expected_share
        key = tie_key(dS, dH)
        uS, uH = tie_draws(m, "synthetic", key), tie_draws(h, "holdout", key)
        cut = _kth_draw(dH, uH, k)
        too = (dS < t) | ((dS == t) & (uS < cut))                                # (M,) ties by their draws
        tooH = (dH < t) | ((dH == t) & (uH < cut))                               # (H,) k − 1 rows
    else:                                        # H < 1/α − 1: no quantile to read
        t, x, expected = math.nan, 0, math.nan
        too, tooH = np.zeros(m, dtype=bool), np.zeros(h, dtype=bool)
    p_close = bonferroni([lv.p for lv in levels])
    lo, hi = wilson_interval(x, m)
    iS, iH = dS == 0, dH == 0
    n_is, n_ih = int(iS.sum()), int(iH.sum())
    diff, dlo, dhi = newcombe_interval(n_is, m, n_ih, h)
    has_loo = loo is not None and len(loo) > 0
    iL = loo.distance == 0 if has_loo else None
    ident = reference_share(iS, iH, iL, partner_l=loo.position if has_loo else None)
    # the near-verbatim member: rows equal to a training row in all but 1..L columns (and not identical)
    parts, p_part = (), math.nan
    pS = pH = pL = None
    if partial is not None and partial.levels:
        pS, pH = partial.synthetic, partial.holdout
        pL = partial.loo if has_loo and partial.loo is not None and len(partial.loo) == n else None
        out = []
        for L in partial.levels:
            eS, eH = pS.within(L) & ~iS, pH.within(L) & ~iH
            eL = pL.within(L) & ~iL if pL is not None else None
            rs = reference_share(eS, eH, eL, altered=L, partner_l=pL.position if pL is not None else None)
            cols = pd.Series(np.asarray(pS.columns, dtype=object)[pS.column[eS]]).value_counts(sort=True)
            out.append(replace(rs, by_column=tuple((str(c), int(v)) for c, v in cols.items())))
        parts, p_part = tuple(out), bonferroni([lv.p for lv in out])
    # per training row: close copies (too close, identical, or equal in all but L columns) against the reference
    # rows' close matches. Identical training rows (twins) are one record: a generated row equal to them goes to
    # the lowest position, and so does every count here (each twin's own leave-one-out match is the other twin)
    rep = np.arange(n)
    if has_loo:
        twin = iL
        rep[twin] = np.minimum(rep[twin], loo.position[twin])
    L_max = ROW_ALTERED if parts else 0
    evS, atS = _events(iS, too, synthetic.position, pS, L_max)
    evH, atH = _events(iH, tooH, holdout.position, pH, L_max)
    c = np.bincount(rep[atS[evS]], minlength=n)                                   # (N,)
    ident_rows = np.bincount(rep[synthetic.position[iS]], minlength=n)
    if pS is not None:          # generated rows equal to this row in every column but one (not identical)
        near = pS.within(1) & ~iS
        near_rows = np.bincount(rep[pS.position[near]], minlength=n)
    else:
        near_rows = np.zeros(n, dtype=np.int64)
    r_h = np.bincount(rep[atH[evH]], minlength=n)
    r, big_r, note, n_loo_ident = r_h, h, "", 0
    if has_loo:
        n_loo_ident = int(iL.sum())
        if k >= 1:                                         # the training rows' ties at t go by their draws too
            dL = loo.distance
            tooL = (dL < t) | ((dL == t) & (tie_draws(len(dL), "training", key) < cut))
        else:
            tooL = np.zeros(len(loo), dtype=bool)
        ok_ident = ident.pooled or n_ih == 0 and n_loo_ident == 0
        ok_close = k < 1 or comparable(int(tooH.sum()), h, int(tooL.sum()), len(loo))
        ok_part = all(lv.pooled or lv.n_holdout == 0 for lv in parts)
        if ok_ident and ok_close and ok_part:
            evL, atL = _events(iL, tooL, loo.position, pL, L_max)
            r = r_h + np.bincount(rep[atL[evL]], minlength=n)
            big_r += len(loo)
        else:
            what = "identical" if not ok_ident else "close" if not ok_close else "nearly identical"
            mine = iL if not ok_ident else tooL if not ok_close else pL.within(L_max) & ~iL
            theirs = iH if not ok_ident else tooH if not ok_close else pH.within(L_max) & ~iH
            note = (f"the training rows repeat each other less often than real rows meet them ({what} rows: "
                    f"{100 * np.mean(mine):.1f} % against {100 * np.mean(theirs):.1f} % of the hold-out), so rows "
                    "are named against the hold-out alone")
    share = m / (m + big_r)
    p, q, cand = _row_tests(c, r, share)
    closest = np.full(n, np.inf)
    np.minimum.at(closest, atS[evS], dS[evS])                                      # each row's closest close copy
    closest[np.isinf(closest)] = np.nan
    rows = pd.DataFrame({"row_id": row_ids, "close_copies": c, "identical_copies": ident_rows,
                         "near_verbatim_copies": near_rows, "real_close": r,
                         "expected_close": m * r / big_r, "p_value": p, "q_value": q,
                         "closest_distance": closest}, columns=list(ROW_COLUMNS))
    rows = rows.sort_values("row_id", kind="stable").reset_index(drop=True)
    generated = pd.DataFrame({"position": synthetic.position, "nn1": row_ids[atS], "distance": dS,
                              "too_close": too, "identical": iS,
                              "altered": pS.altered if pS is not None else np.full(m, -1, dtype=np.int8),
                              "close": evS})
    return CloseCopies(alpha=alpha, k=k, threshold=t, n_generated=m, n_holdout=h, n_reference=big_r - h,
                       reference_note=note, n_too_close=x, too_close_share=x / m, too_close_ci=(float(lo), float(hi)),
                       expected_share=expected, p_too_close=p_close, n_identical=n_is, identical_share=n_is / m,
                       n_holdout_identical=n_ih, holdout_identical_share=n_ih / h, identical_excess=float(diff),
                       identical_excess_ci=(float(dlo), float(dhi)), p_identical=ident.p,
                       n_training_identical=n_loo_ident, share=share, n_candidates=int(cand.sum()),
                       rows=rows, generated=generated, holdout_distances=np.sort(dH),
                       p_rows=float(q.min()) if cand.any() else 1.0, levels=levels, identical=ident,
                       partial=parts, p_partial=p_part)


def _kth_draw(d: np.ndarray, u: np.ndarray, k: int) -> float:
    """The tie-breaking draw of the k-th row in (D, u) order."""
    return float(u[np.lexsort((u, d))[k - 1]])


def _events(identical: np.ndarray, too: np.ndarray, nn1: np.ndarray, partial, level: int):
    """(event, row it counts for): a row is a close copy when identical to a training row or too close (counted
    for its nearest training row), or equal to one in all but at most ``level`` columns (counted for that one)."""
    ev = identical | too
    at = np.asarray(nn1, dtype=np.int64).copy()
    if partial is not None and level:
        near = partial.within(level) & ~ev
        ev = ev | near
        at[near] = partial.position[near]
    return ev, at


def _row_tests(c: np.ndarray, r: np.ndarray, share: float):
    """(p, q, candidates) per row: p_i = P(Bin(c_i + r_i, share) ≥ c_i) (1 when c_i = 0); q: BH over the rows
    whose smallest attainable p, share^(c_i + r_i), is at most :data:`Q_LEVEL` (the others stay 1)."""
    n = len(c)
    tot = c + r
    p = np.ones(n)
    hit = c > 0
    p[hit] = binom_sf(c[hit], tot[hit], share)
    cand = (tot > 0) & (share ** tot.astype(float) <= Q_LEVEL)
    q = np.ones(n)
    if cand.any():
        q[cand] = bh_qvalues(p[cand])
    return p, q, cand
