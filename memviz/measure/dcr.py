"""How close every generated row is to the training rows, read against real rows the model never saw.

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
  verdict's family (:mod:`memviz.auditing.family`).
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

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import MemvizError
from memviz.measure.floor import newcombe_interval, wilson_interval
from memviz.measure.multiplicity import bh_qvalues, bonferroni

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
ROW_COLUMNS = ("row_id", "close_copies", "identical_copies", "real_close", "expected_close", "p_value",
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
            raise MemvizError("nearest: distances and positions must be two arrays of one length")

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
        raise MemvizError(f"engine: uses the {engine.distance} distance; closeness is read with the {DISTANCE} one")


# ------------------------------------------------------------------ the hold-out at the door
def identical_excess_p(n_a: int, size_a: int, n_b: int, size_b: int) -> float:
    """One-sided Fisher exact p that sample a's share of identical rows exceeds sample b's:
    P(X ≥ n_a), X ~ Hypergeometric(size_a + size_b, n_a + n_b, size_a)."""
    from scipy import stats

    if n_a == 0:
        return 1.0
    return float(stats.hypergeom.sf(n_a - 1, size_a + size_b, n_a + n_b, size_a))


def check_holdout(holdout: Nearest, loo: Nearest, source: str) -> None:
    """Refuse a hold-out that shares rows with the training table beyond what the training table shares
    with itself, in the one rule and the one line of every command
    (:func:`memviz.tables.holdout.refuse_shared_rows`), the identical shares read here from the standardized
    distances (the hold-out's nearest training row, each training row's nearest other one). Without hold-out
    rows, or without training rows to compare, nothing is refused."""
    from memviz.tables.holdout import refuse_shared_rows

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
    k, threshold : k = max(1, ⌊q (H + 1)⌋) and t = D_(k), the k-th smallest hold-out distance.
    n_too_close, share : X = #{g : D(g) < t} and X / M.  expected_share : k / (H + 1).
    p : P(X' ≥ X), X' ~ Beta-Binomial(M, k, H − k + 1) (1 when X = 0).
    """

    quantile: float
    k: int
    threshold: float
    n_too_close: int
    share: float
    expected_share: float
    p: float

    @property
    def every(self) -> bool:
        """Whether this level reads "nearer than every hold-out row" (k = 1)."""
        return self.k == 1

    @property
    def than(self) -> str:
        """What a too-close row is nearer its training row than: "any real row" or "99 % of real rows"."""
        return "any real row" if self.every else f"{100 * (1 - self.quantile):.0f} % of real rows"

    def to_dict(self) -> dict:
        from memviz.io import to_jsonable

        return to_jsonable({"quantile": self.quantile, "k": self.k, "threshold": self.threshold,
                            "n_too_close": self.n_too_close, "share": self.share,
                            "expected_share": self.expected_share, "p": self.p})


def close_levels(synthetic_distance: np.ndarray, holdout_distance: np.ndarray,
                 alpha: float = CLOSE_QUANTILE) -> tuple[CloseLevel, ...]:
    """The too-close test's levels, α first, then :data:`TAIL_QUANTILES`, then k = 1, each k once; () when
    ⌊α (H + 1)⌋ < 1 (too few hold-out rows for α: no too-close test)."""
    from scipy import stats

    dS, dH = np.asarray(synthetic_distance, dtype=np.float64), np.sort(np.asarray(holdout_distance, dtype=np.float64))
    m, h = len(dS), len(dH)
    if math.floor(alpha * (h + 1)) < 1:
        return ()
    out, seen = [], set()
    for q in (alpha, *(q for q in TAIL_QUANTILES if q < alpha), 0.0):
        k = max(1, math.floor(q * (h + 1)))
        if k in seen:
            continue
        seen.add(k)
        t = float(dH[k - 1])
        x = int(np.sum(dS < t))
        p = float(stats.betabinom.sf(x - 1, m, k, h - k + 1)) if x else 1.0
        out.append(CloseLevel(q, k, t, x, x / m, k / (h + 1), p))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class CloseCopies:
    """The closeness tests of a generated table (module docstring).

    alpha, k, threshold : α, k = ⌊α (H + 1)⌋ and t = D_(k) (NaN when H < 1/α − 1: no too-close test).
    n_generated, n_holdout, n_reference : M, H and the training rows in the per-row reference (0: hold-out only).
    reference_note : why the training rows are not in the reference ("" when they are, or N = 0).
    n_too_close, too_close_share, too_close_ci : X, X / M and its Wilson interval.
    expected_share : k / (H + 1), the share fresh rows give.
    p_too_close : the too-close member's p, Bonferroni over :attr:`levels` (NaN: no test).
    levels : the too-close test's :class:`CloseLevel` s, α first (empty: no test).
    n_identical, identical_share : I_S, I_S / M.  n_holdout_identical, holdout_identical_share : I_H, I_H / H.
    identical_excess, identical_excess_ci : I_S / M − I_H / H and Newcombe's interval.  p_identical : Fisher p.
    n_training_identical : training rows equal to another training row (the training table's own repeats).
    share : M / (M + R), the per-row test's binomial probability.  n_candidates : rows that entered BH.
    rows : per training row (:data:`ROW_COLUMNS`, aligned with the training table's row_ids ascending).
    generated : per generated row position, distance, too_close, identical, close (event), nn1 (row_id).
    holdout_distances : (H,) the hold-out rows' D, ascending (what the generated rows are read against).
    p_rows : Simes' p of "some training row has more close copies than real rows give it", from the exact
        per-row test against the hold-out alone (the smallest of its q-values): the verdict family's member.
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

    @property
    def every_level(self) -> CloseLevel | None:
        """The level "nearer than every hold-out row" (k = 1) when it is not α's own; None otherwise."""
        return self.levels[-1] if len(self.levels) > 1 and self.levels[-1].every else None

    @property
    def carrying_level(self) -> CloseLevel | None:
        """The level with the smallest p (the first, α's, among equals): what the too-close member reads."""
        return min(self.levels, key=lambda lv: lv.p) if self.levels else None

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
        from memviz.io import to_jsonable

        keep = ("alpha", "k", "threshold", "n_generated", "n_holdout", "n_reference", "reference_note", "n_too_close",
                "too_close_share", "expected_share", "p_too_close", "n_identical", "identical_share",
                "n_holdout_identical", "holdout_identical_share", "identical_excess", "p_identical",
                "n_training_identical", "share", "n_candidates")
        out = {k: getattr(self, k) for k in keep}
        out["too_close_ci"] = list(self.too_close_ci)
        out["identical_excess_ci"] = list(self.identical_excess_ci)
        out["p_rows"] = self.p_rows
        out["levels"] = [lv.to_dict() for lv in self.levels]
        out["distance"] = DISTANCE
        return to_jsonable(out)


def comparable(holdout_events: int, h: int, loo_events: int, n: int) -> bool:
    """Whether the training rows' events (one kind: identical, or too close) are not rarer than the
    hold-out's: the one-sided exact p of "the hold-out's share exceeds theirs" is at least
    :data:`COMPARABLE_P`."""
    return identical_excess_p(holdout_events, h, loo_events, n) >= COMPARABLE_P


def close_copy_test(row_ids, synthetic: Nearest, holdout: Nearest, loo: Nearest | None = None, *,
                    alpha: float = CLOSE_QUANTILE) -> CloseCopies:
    """The closeness tests of the module docstring.

    Parameters
    ----------
    row_ids : (N,) the training table's row_ids in engine position order (``engine.row_ids_``).
    synthetic, holdout : :class:`Nearest` of the generated and the hold-out rows.
    loo : :func:`leave_one_out` of the training rows (None: the hold-out alone is the reference).
    alpha : :data:`CLOSE_QUANTILE`.

    Returns
    -------
    CloseCopies
    """
    if not 0 < alpha < 1:
        raise MemvizError(f"alpha={alpha}: must be between 0 and 1")
    row_ids = np.asarray(row_ids, dtype=np.int64)
    n, m, h = len(row_ids), len(synthetic), len(holdout)
    if m == 0 or h == 0:
        raise MemvizError("closeness: needs at least one generated and one hold-out row")
    dS, dH = synthetic.distance, holdout.distance
    levels = close_levels(dS, dH, alpha)
    k = levels[0].k if levels else 0
    if levels:
        main = levels[0]
        t, too, x, expected = main.threshold, dS < main.threshold, main.n_too_close, main.expected_share
    else:                                        # H < 1/α − 1: no quantile to read
        t, too, x, expected = math.nan, np.zeros(m, dtype=bool), 0, math.nan
    p_close = bonferroni([lv.p for lv in levels])
    lo, hi = wilson_interval(x, m)
    iS, iH = dS == 0, dH == 0
    n_is, n_ih = int(iS.sum()), int(iH.sum())
    diff, dlo, dhi = newcombe_interval(n_is, m, n_ih, h)
    p_ident = identical_excess_p(n_is, m, n_ih, h)
    # per training row: close copies against the reference rows' close matches. Identical training rows
    # (twins) are one record: a generated row equal to them goes to the lowest position, and so does every
    # count here (each twin's own leave-one-out match is the other twin)
    rep = np.arange(n)
    if loo is not None and len(loo):
        twin = loo.distance == 0
        rep[twin] = np.minimum(rep[twin], loo.position[twin])
    evS = too | iS
    evH = (dH < t) | iH if k >= 1 else iH
    c = np.bincount(rep[synthetic.position[evS]], minlength=n)                # (N,)
    ident = np.bincount(rep[synthetic.position[iS]], minlength=n)
    r_h = np.bincount(rep[holdout.position[evH]], minlength=n)
    r, big_r, note, n_loo_ident = r_h, h, "", 0
    if loo is not None and len(loo):
        iL = loo.distance == 0
        n_loo_ident = int(iL.sum())
        tooL = loo.distance < t if k >= 1 else np.zeros(len(loo), dtype=bool)
        ok_ident = comparable(n_ih, h, n_loo_ident, len(loo))
        ok_close = k < 1 or comparable(int(np.sum(dH < t)), h, int(tooL.sum()), len(loo))
        if ok_ident and ok_close:
            r = r_h + np.bincount(rep[loo.position[tooL | iL]], minlength=n)
            big_r += len(loo)
        else:
            what = "identical" if not ok_ident else "close"
            note = (f"the training rows repeat each other less often than real rows meet them ({what} rows: "
                    f"{100 * np.mean(iL if not ok_ident else tooL):.1f} % against "
                    f"{100 * np.mean(iH if not ok_ident else dH < t):.1f} % of the hold-out), so rows are named "
                    "against the hold-out alone")
    # the family's member: the hold-out alone as reference (exchangeable with the generated rows given the
    # training table, so exact); naming: the training rows added as reference (far more power, exchangeable
    # only on average over training tables: used after the family has found copying, module docstring)
    _, q_exact, cand_exact = _row_tests(c, r_h, m / (m + h))
    share = m / (m + big_r)
    p, q, cand = _row_tests(c, r, share)
    closest = np.full(n, np.inf)
    np.minimum.at(closest, synthetic.position[evS], dS[evS])                # each row's closest close copy
    closest[np.isinf(closest)] = np.nan
    rows = pd.DataFrame({"row_id": row_ids, "close_copies": c, "identical_copies": ident, "real_close": r,
                         "expected_close": m * r / big_r, "p_value": p, "q_value": q,
                         "closest_distance": closest}, columns=list(ROW_COLUMNS))
    rows = rows.sort_values("row_id", kind="stable").reset_index(drop=True)
    generated = pd.DataFrame({"position": synthetic.position, "nn1": row_ids[synthetic.position],
                              "distance": dS, "too_close": too, "identical": iS, "close": evS})
    return CloseCopies(alpha=alpha, k=k, threshold=t, n_generated=m, n_holdout=h, n_reference=big_r - h,
                       reference_note=note, n_too_close=x, too_close_share=x / m, too_close_ci=(float(lo), float(hi)),
                       expected_share=expected, p_too_close=p_close, n_identical=n_is, identical_share=n_is / m,
                       n_holdout_identical=n_ih, holdout_identical_share=n_ih / h, identical_excess=float(diff),
                       identical_excess_ci=(float(dlo), float(dhi)), p_identical=p_ident,
                       n_training_identical=n_loo_ident, share=share, n_candidates=int(cand.sum()),
                       rows=rows, generated=generated, holdout_distances=np.sort(dH),
                       p_rows=float(q_exact.min()) if cand_exact.any() else 1.0, levels=levels)


def _row_tests(c: np.ndarray, r: np.ndarray, share: float):
    """(p, q, candidates) per row: p_i = P(Bin(c_i + r_i, share) ≥ c_i) (1 when c_i = 0); q: BH over the rows
    whose smallest attainable p, share^(c_i + r_i), is at most :data:`Q_LEVEL` (the others stay 1)."""
    from scipy import stats

    n = len(c)
    tot = c + r
    p = np.ones(n)
    hit = c > 0
    p[hit] = stats.binom.sf(c[hit] - 1, tot[hit], share)
    cand = (tot > 0) & (share ** tot.astype(float) <= Q_LEVEL)
    q = np.ones(n)
    if cand.any():
        q[cand] = bh_qvalues(p[cand])
    return p, q, cand
