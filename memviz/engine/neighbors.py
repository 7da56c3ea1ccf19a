"""The one nearest-neighbour engine of memviz (tracking, scoring and evaluation all use it).

Distances
---------
For a query row g and a reference row x, with p numerical and q categorical
distance columns (a class target counts as categorical, see
:attr:`Schema.distance_categorical`), n = p + q:

* ``"paper"`` (the reference papers' metric)::

      e(x)  = || g_num - x_num ||_2                 raw units, no per-column scaling
      e'(x) = (e(x) - min_x e) / (max_x e - min_x e)  over ALL reference rows, for this g
              (0 for every x when max = min)
      h(x)  = #{ j : g_cat_j != x_cat_j }
      d(x)  = (e'(x) + h(x)) / n

* ``"standardized"``: each numerical column divided by its training range first,
  ``d(x) = (|| (g_num - x_num) / range ||_2 + h(x)) / n``, no per-query min-max.

The k nearest are ordered by (d, reference position): ties go to the lowest position.

Exactness and magnitudes
------------------------
The engine returns what a row-at-a-time float64 loop over the definition returns
(``tests/naive.py``), for every finite input, up to the order in which the p squares
of one e are summed. It never forms |g|^2 - 2 g.x + |x|^2 (that expansion loses
near copies to cancellation once one value is large, issue 12): every distance it
reports, and every min e and max e, comes from direct differences in float64.

Magnitudes are handled by exact power-of-two rescaling, under which the metric does
not change:

* paper: d is unchanged when all numerical columns are multiplied by one common
  factor (the per-row min-max cancels it). The engine multiplies them by the power of
  two that brings the largest reference magnitude into [2^399, 2^400). Multiplying by
  a power of two is exact, so the result is bit-identical to the float64 loop wherever
  that loop neither overflows nor underflows, and stays exact where it would (squares
  of 1e154 overflow to NaN, squares of 1e-162 vanish).
* standardized: d is unchanged when one column is multiplied by any factor, so each
  column's minimum and range are computed after its own power-of-two rescaling
  (:class:`~memviz.tables.encoding.Encoder`); a plain ``max - min`` of values near 1e308 overflows.

The engine refuses, with one :class:`~memviz.errors.MemvizError` line naming the column
and the value, only a query value that float64 cannot place: infinite values; paper:
values more than 2^100 (about 1.3e30) times the largest reference magnitude (such a
row is farther from every reference row than their spread by 30 orders of magnitude,
so its e'(x) would be float64 rounding noise, as it already is in the float64 loop from
about 2^52); standardized: values more than 2^500 (about 3e150) training ranges
outside the training values (their squares would overflow).

Where coordinates span more than the squares of float64 can hold (a value of 1e300
beside values of 1: after the rescaling, a nonzero coordinate below 2^-450), each e is
computed as 2^a·sqrt(sum((dx_j·2^-a)^2)) with 2^a ≥ max |dx_j| per pair, which is
again exact scaling: a slower dense pass, for such query rows only, or for every row
when the reference holds such a value.

Algorithms
----------
``"dense"`` (any device, used on CUDA): query rows in blocks of ``b`` against all N
reference rows, O(b·N) memory. Per block: e by direct differences (on the CPU scipy's
``cdist``, in numpy: :mod:`memviz.engine.cpudense`; on CUDA ``torch.cdist`` without its
matrix-product shortcut: :mod:`memviz.engine.densetorch`), its exact min and max per row,
s = e' + h with h the category mismatches (counted column by column; on CUDA for many rows
q - a one-hot GEMM of matches, small integers, exact in bfloat16); the kc
smallest s per row (d = s / n is monotone in s; without categorical columns d is
monotone in e, so the selection runs on e and e' is computed for the list only), their d
ordered by (d, position); where ties at the k-th d run to the end of that list, the
lowest positions holding that d are read from the full row. Every value compared is the
float64 definition itself: correct by construction, no bound, no recomputation.

``"pruned"`` (CPU): see :mod:`memviz.engine.pruned`. Candidates come from the categorical
mismatch levels (d·n = e' + h with e' in [0, 1]: the k nearest have h <= h_(k) + 1)
found by hashing, min e and max e from exact tree searches; query rows it cannot bound
cheaply go to the dense path.

``"wide"`` (CPU): see :mod:`memviz.engine.wide`. Float32 matrix-product bounds on every
distance, with their rounding error bounded, pick the few blocks of reference rows that can
hold min e, max e and the k nearest; those get direct float64 differences. Query rows the
bounds cannot narrow go to the dense path.

``"auto"``: on CPU from ``PRUNED_MIN_N`` reference rows, pruned up to ``PRUNED_MAX_P``
numerical columns and wide above (where k-d trees stop pruning); else dense
(:func:`memviz.engine.budget.auto_algorithm`, the one rule). ``n_pruned``
counts the rows the pruned or the wide search answered. Before any work, fit and query
refuse in one line what the machine's memory cannot hold (:mod:`memviz.engine.budget`).
"""
from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from memviz.device import compute_device, cpu_threads
from memviz.engine import DISTANCES, budget
from memviz.engine.blocks import RowsDone, map_blocks
from memviz.engine.cpudense import CpuDense, tiny_rows
from memviz.engine.encoded import EncodedTables
from memviz.engine.pruned import PrunedIndex
from memviz.engine.wide import WideIndex
from memviz.errors import BadOption, BadTable
from memviz.tables.data import Table
from memviz.tables.encoding import Encoder, pow2_exponents

log = logging.getLogger(__name__)

#: one build of an engine's dense structures at a time in this process (see NeighborEngine._load_dense)
_DENSE_BUILD = threading.Lock()
ALGORITHMS = ("auto", "pruned", "wide", "dense")
SCALE_EXP = 400   # paper coordinates: the largest reference magnitude lands in [2^399, 2^400)
REACH_EXP = 100   # paper: query values may exceed the reference scale by at most 2^100
REACH_STD_EXP = 500  # standardized: query coordinates may reach 2^500 training ranges


@dataclass(frozen=True)
class Neighbors:
    """The k nearest reference rows of each query row, nearest first.

    pos : (M, k) int64 positions in the reference table.
    row_id : (M, k) int64 reference row_ids.
    dist : (M, k) float64 distances d.
    n_exhaustive : query rows answered by a pass over all reference rows (the dense
        path); a cost figure, the result is exact either way.
    n_pruned : query rows answered by the pruned (or the wide) search.
    """

    pos: np.ndarray
    row_id: np.ndarray
    dist: np.ndarray
    n_exhaustive: int = 0
    n_pruned: int = 0


class NeighborEngine:
    """Exact k-nearest reference rows under the paper's (or the standardized) distance.

    Parameters
    ----------
    distance : {"paper", "standardized"}
    device : "auto", "cpu" or "cuda"
    chunk_elements : int or None
        Dense path: size of one (query block × reference) block; bounds memory at about
        ``chunk_elements × 10`` bytes per worker whatever the table sizes (26 with the
        per-pair scaling of tables spanning extreme magnitudes). None (default):
        2**20 on CPU per thread, and on CUDA 2**27 or a 64th of the free GPU memory,
        whichever is smaller (small blocks leave a GPU idle between kernel launches).
    n_candidates : int
        Dense path: smallest distances kept per row before the tie check (≥ k + 1).
    n_jobs : int or None
        CPU worker threads (default: :func:`memviz.device.cpu_threads`).
    algorithm : {"auto", "pruned", "wide", "dense"}
        See the module docstring; all give the same result ("wide" without numerical
        columns is the dense pass).

    Attributes (after ``fit``)
    --------------------------
    encoder_ : Encoder
    n_reference_ : int
    device_ : :data:`memviz.device.CPU` or a CUDA ``torch.device`` (torch is imported only for CUDA)
    algorithm_ : "pruned", "wide" or "dense"
    """

    def __init__(self, distance: str = "paper", device: str = "auto", chunk_elements: int | None = None,
                 n_candidates: int = 8, n_jobs: int | None = None, algorithm: str = "auto"):
        if distance not in DISTANCES:
            raise BadOption(f"distance {distance!r}: unknown (use paper or standardized)")
        if algorithm not in ALGORITHMS:
            raise BadOption(f"algorithm {algorithm!r}: unknown (use auto, pruned, wide or dense)")
        self.distance = distance
        self.device = device
        self.chunk_elements = None if chunk_elements is None else int(chunk_elements)
        self.n_candidates = int(n_candidates)
        self.n_jobs = n_jobs
        self.algorithm = algorithm

    # ------------------------------------------------------------------- fit
    def fit(self, reference: Table, scale_table: Table | None = None, like: "NeighborEngine | None" = None,
            *, encoded: EncodedTables | None = None) -> "NeighborEngine":
        """Index the reference rows.

        ``scale_table`` (default: the reference) gives the means used for missing
        numericals and, for the standardized distance, the column ranges; the
        category vocabulary always comes from the reference rows. ``like``: an engine fitted
        on this same Table object (no scale table), with any distance: its encoder and its
        categorical groups are reused, and only this distance's own structures are built.
        ``encoded`` (or ``like``'s, when it has them): the tables of one audit encoded once
        (:class:`memviz.engine.encoded.EncodedTables`) with the encoder fitted on this reference,
        or on ``scale_table``: that encoder is taken as it is (not fitted again), and where the
        reference is those very rows (no scale table, or the scale table's own rows) its arrays too,
        here and in every search of a table they hold; a scale table's encoder on other reference
        rows takes their own vocabulary (fitted here), as without ``encoded``. Else (default) the rows
        are encoded here.
        """
        schema = reference.schema
        num_cols, cat_cols = schema.distance_numerical, schema.distance_categorical
        if not num_cols and not cat_cols:
            raise BadTable(f"{reference.source}: no numerical or categorical column to compare")
        budget.check(budget.fit_bytes(len(reference), len(num_cols), len(cat_cols)),
                     f"{reference.source}: indexing {len(reference):,} rows × {len(num_cols)} numerical + "
                     f"{len(cat_cols)} categorical columns")
        like = like if scale_table is None and getattr(like, "_fitted_on", _nothing)() is reference else None
        self._fitted_on = weakref.ref(reference) if scale_table is None else _nothing
        encoded = encoded if encoded is not None else getattr(like, "encoded_", None)
        scale = scale_table if scale_table is not None else reference
        shared = encoded if encoded is not None and encoded.serves(scale) else None     # the scale's encoder
        usable = shared is not None and encoded.serves(reference)         # and the reference's own vocabulary
        held = encoded.of(reference) if usable else None
        self.encoded_ = encoded if usable else None
        if self.encoded_ is not None:
            self.encoder_ = self.encoded_.encoder
        elif like is not None:
            self.encoder_ = like.encoder_
        else:
            base = shared.encoder if shared is not None else Encoder.fit(scale.data, num_cols, cat_cols)
            # the vocabulary must be the reference's; it already is unless a scale table is given
            vocab = base.vocab if scale_table is None else Encoder.fit(reference.data, (), cat_cols).vocab
            self.encoder_ = replace(base, vocab=vocab)
        self.device_ = compute_device(self.device)
        self.chunk_elements_ = self._chunk_elements()
        enc = held if self.encoded_ is not None else self.encoder_.transform(reference.data)
        self.row_ids_ = reference.row_ids
        self.n_reference_ = len(reference)
        self._check_finite(enc.num, reference.source)
        if self.distance == "paper":
            self.max_abs_ = float(np.abs(enc.num).max()) if enc.num.size else 0.0
            self.scale_exp_ = int(pow2_exponents(np.array([self.max_abs_]))[0])          # 2^S ≥ max |x|
        y = self._coords(enc.num, reference.source)                                      # (N, p)
        self.p_, self.q_ = y.shape[1], enc.cat.shape[1]
        self.tiny_ = bool(tiny_rows(y).any())
        self.algorithm_ = self._resolve_algorithm()
        self._dense_input = (y, enc.cat)       # the dense structures are built on first use on CPU
        if self.device_.type != "cpu":
            self._load_dense()
        if self.algorithm_ == "pruned":
            self.pruned_ = PrunedIndex(y, enc.cat, self.encoder_.n_categories, self.distance,
                                       groups=getattr(like, "pruned_", None))
        elif self.algorithm_ == "wide":
            self.wide_ = WideIndex(y, enc.cat, self.distance)
        return self

    def reference_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, p) float64 coordinates of the distance and (N, q) category codes of the
        reference rows, as fitted (read-only views: do not modify)."""
        return self._dense_input

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_fitted_on"] = _nothing          # a weak reference does not pickle (Dask workers)
        state["encoded_"] = None                # the whole tables stay here: the workers get slices of rows
        return state

    def _resolve_algorithm(self) -> str:
        if self.algorithm != "auto":
            if self.algorithm in ("pruned", "wide") and self.device_.type != "cpu":
                raise BadOption(f"algorithm {self.algorithm!r} runs on the CPU only (device {self.device_})")
            if self.algorithm == "wide" and not self.p_:
                return "dense"                 # no numerical column: no product to bound
            return self.algorithm
        return budget.auto_algorithm(self.n_reference_, self.p_, self.device_.type == "cpu")

    def _chunk_elements(self) -> int:
        if self.chunk_elements is not None:
            if self.chunk_elements < 1:
                raise BadOption(f"chunk_elements={self.chunk_elements}: must be at least 1")
            return self.chunk_elements
        if self.device_.type == "cuda":
            from memviz.engine.densetorch import cuda_chunk_elements  # lazy: densetorch imports torch (CUDA only)

            return cuda_chunk_elements(self.device_)
        return 1 << 20

    # ----------------------------------------------------------- coordinates
    def _check_finite(self, num: np.ndarray, source: str) -> None:
        bad = ~np.isfinite(num)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise BadTable(f"{source}: column {self.encoder_.num_cols[j]!r}: holds an infinite value "
                              f"(row {i + 1}); distances need finite numbers")

    def _coords(self, num: np.ndarray, source: str) -> np.ndarray:
        """(n, p) imputed values -> float64 coordinates of the distance (module docstring,
        "Magnitudes"); refuses values float64 cannot place."""
        limit = 2.0 ** REACH_EXP
        if self.distance == "paper":
            top = np.ldexp(1.0, self.scale_exp_ + REACH_EXP) if self.scale_exp_ + REACH_EXP < 1024 else np.inf
            self._refuse_far(np.abs(num) > top, num, source, lambda i, j: (
                f"is over 2^{REACH_EXP} (~{limit:.2g}) times the largest training magnitude ({self.max_abs_:.3g}); "
                f"memviz refuses values this far out: their min-max scaled distances would be float64 rounding"))
            return np.ldexp(num, SCALE_EXP - self.scale_exp_)
        z = self.encoder_.standardize(num)
        limit = 2.0 ** REACH_STD_EXP
        self._refuse_far(~(np.abs(z) <= limit), num, source, lambda i, j: (
            f"lies {abs(z[i, j]):.3g} training ranges outside the training values, more than the "
            f"2^{REACH_STD_EXP} (~{limit:.2g}) memviz computes exactly"))
        return z

    def _refuse_far(self, far: np.ndarray, num: np.ndarray, source: str, why) -> None:
        """One line naming the first value marked in ``far`` (n, d): its column, row and ``why(i, j)``."""
        if far.any():
            i, j = np.argwhere(far)[0]
            raise BadTable(f"{source}: column {self.encoder_.num_cols[j]!r}: value {num[i, j]:.3g} "
                              f"(row {i + 1}) {why(i, j)}")

    # ------------------------------------------------------------- dense path
    def _load_dense(self) -> None:
        """Build the dense pass's structures on first use (``dense_``: :class:`CpuDense` on the CPU,
        :class:`~memviz.engine.densetorch.TorchDense` on CUDA). Threads of one process may share an
        engine (a Dask worker's tasks): the build runs under one lock, and ``dense_`` is set when
        it is whole, so no thread sees a half-built engine."""
        if hasattr(self, "dense_"):
            return
        with _DENSE_BUILD:
            if hasattr(self, "dense_"):
                return
            y, cat = self._dense_input
            paper = self.distance == "paper"
            if self.device_.type == "cpu":
                dense = CpuDense(y, cat, paper, self.n_candidates)
            else:
                from memviz.engine.densetorch import TorchDense  # lazy: densetorch imports torch (CUDA only)

                dense = TorchDense(y, cat, self.encoder_.n_categories, paper, self.n_candidates, self.device_)
            self.dense_ = dense

    def workspace(self, b: int) -> dict:
        """Buffers reused by every block of b rows of the dense pass."""
        return self.dense_.workspace(b)

    def _dense_block(self, y: np.ndarray, cat: np.ndarray, k: int, ws,
                     hypot: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """The k nearest of a block of b query rows by the float64 definition itself
        (``hypot``: e by per-pair power-of-two scaling). Returns (b, k) positions, (b, k)
        distances, and how many rows needed the full-row tie resolution."""
        return self.dense_.block(y, cat, k, ws, hypot)

    def _dense(self, y: np.ndarray, cat: np.ndarray, k: int, pos: np.ndarray, dist: np.ndarray,
               rows: np.ndarray, progress, hypot: bool = False) -> int:
        """Dense path for the query rows ``rows``, written into pos/dist; returns the
        number of rows that needed the full-row tie resolution."""
        M, N = len(rows), self.n_reference_
        if M == 0:
            return 0
        self._load_dense()
        if hasattr(self.dense_, "prepare"):
            self.dense_.prepare(M)
        b = max(1, min(M, self.chunk_elements_ // max(N, 1)))
        starts = list(range(0, M, b))
        counter = [0]

        def block(start, ws):
            sel = rows[start:start + b]
            pos[sel], dist[sel], n_ties = self._dense_block(y[sel], cat[sel], k, ws, hypot)
            return n_ties, len(sel)

        map_blocks(self, starts, b, block, progress, counter)
        return counter[0]

    # ----------------------------------------------------------------- query
    def kneighbors(self, queries: pd.DataFrame | Table, k: int = 2,
                   progress: Callable[[int, int], None] | None = None) -> Neighbors:
        """The ``k`` nearest reference rows of every query row (``k`` ≤ number of reference rows)."""
        if not hasattr(self, "encoder_"):
            raise RuntimeError("NeighborEngine.kneighbors called before fit")
        df = queries.data if isinstance(queries, Table) else queries
        source = queries.source if isinstance(queries, Table) else "query rows"
        t0 = time.perf_counter()
        N = self.n_reference_
        if k < 1 or k > N:
            raise BadOption(f"k={k}: must be between 1 and the {N} reference rows")
        M = len(df)
        budget.check(budget.query_bytes(M, N, self.p_, self.q_, k, self.n_jobs_(), self.algorithm_,
                                        self.chunk_elements_),
                     f"{source}: {M:,} query rows against {N:,} reference rows")
        enc = self.encoded_.of(df) if getattr(self, "encoded_", None) is not None else None
        enc = enc if enc is not None else self.encoder_.transform(df)
        self._check_finite(enc.num, source)
        y = self._coords(enc.num, source)                                                  # (M, p)
        pos = np.empty((M, k), dtype=np.int64)
        dist = np.empty((M, k), dtype=np.float64)
        report = None if progress is None else RowsDone(progress, M).add
        # rows with a coordinate too small for plain squares (or all rows, when the
        # reference has one) take the dense path with per-pair scaling
        tiny = np.ones(M, dtype=bool) if self.tiny_ else tiny_rows(y)
        todo = np.flatnonzero(~tiny)
        if self.algorithm_ == "pruned" and len(todo):
            p_, d_ = pos[todo], dist[todo]
            done = self.pruned_.kneighbors(y[todo], enc.cat[todo], k, p_, d_, self.n_jobs_(), report)
            pos[todo[done]], dist[todo[done]] = p_[done], d_[done]
            todo = todo[~done]
        elif self.algorithm_ == "wide" and len(todo):
            p_, d_ = pos[todo], dist[todo]
            done = self.wide_.kneighbors(y[todo], enc.cat[todo], k, p_, d_, self.n_jobs_(), report)
            pos[todo[done]], dist[todo[done]] = p_[done], d_[done]
            todo = todo[~done]
        self._dense(y, enc.cat, k, pos, dist, todo, report)
        self._dense(y, enc.cat, k, pos, dist, np.flatnonzero(tiny), report, hypot=True)
        todo = np.concatenate([todo, np.flatnonzero(tiny)])
        log.info("%s: %d nearest of %s rows among %s (%s distance, %s search on %s): %s by the %s search, %s by a "
                 "dense pass, %.2f s", source, k, f"{M:,}", f"{N:,}", self.distance, self.algorithm_, self.device_,
                 f"{M - len(todo):,}", self.algorithm_, f"{len(todo):,}", time.perf_counter() - t0)
        return Neighbors(pos=pos, row_id=self.row_ids_[pos], dist=dist, n_exhaustive=len(todo),
                         n_pruned=M - len(todo))

    def n_jobs_(self) -> int:
        return self.n_jobs if self.n_jobs is not None else cpu_threads()


def _nothing():
    """The ``_fitted_on`` of an engine without a reference to share its encoder with."""
    return None
