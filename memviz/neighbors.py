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

Algorithm
---------
Queries are processed in chunks of ``b`` rows against all N reference rows, so memory
is O(b·N) whatever the table sizes (``b = chunk_elements // N``). Per chunk, on CPU or GPU:

1. ``E2 = [g, |g|^2, 1] @ [-2x; 1; |x|^2]``   (b, N) float64, columns centred first;
   ``E = sqrt(max(E2, 0))``. Float64 keeps the cancellation of this expansion far
   below the tolerance even on Adult's ``fnlwgt`` (values up to 1.5e6); float32 would
   lose near copies.
2. ``M = onehot(g) @ onehot(X)^T``            (b, N) category matches, exact small
   integers in bfloat16 (float32 when q >= 256).
3. ranking key ``K = E - R·M`` with R = max E - min E (paper; R = 1 standardized): the
   same order as d, since d·n = (e - min e)/R + q - M. K is float32 (E cast after the
   float64 expansion, sqrt and the matches term in float32: half the memory traffic of
   the passes over the block); its rounding, at most 2^-21·(max e + R·q) per row with
   an 8x margin, widens the fallback test of step 4.
4. ``topk(K, n_candidates)``, then every candidate's distance is recomputed
   **exactly** (float64 direct differences), with the exact min e and max e of the
   row (themselves refined from candidates); candidates are ordered by (d, position),
   so ties go to the lowest reference position. The key's e term is at most
   ``delta = sqrt(c + rounding bound)`` above the true e, so a query whose k-th
   candidate is not ahead of ``(largest candidate key) − delta`` (ties running past the
   list, or reference rows closer together than the expansion resolves) is recomputed
   over all reference rows exactly (rare: duplicated rows, dense clusters).

The result matches a row-at-a-time float64 implementation of the definition.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from .data import Table
from .device import resolve_device
from .encoding import Encoded, Encoder
from .errors import MemvizError

DISTANCES = ("paper", "standardized")


@dataclass(frozen=True)
class Neighbors:
    """The k nearest reference rows of each query row, nearest first.

    pos : (M, k) int64 positions in the reference table.
    row_id : (M, k) int64 reference row_ids.
    dist : (M, k) float64 distances d.
    n_exhaustive : query rows whose candidates could not be proven complete and were
        recomputed over all reference rows (a cost figure; the result is exact either way).
    """

    pos: np.ndarray
    row_id: np.ndarray
    dist: np.ndarray
    n_exhaustive: int = 0


class NeighborEngine:
    """Exact k-nearest reference rows under the paper's (or the standardized) distance.

    Parameters
    ----------
    distance : {"paper", "standardized"}
    device : "auto", "cpu" or "cuda"
    chunk_elements : int or None
        Size of one (query chunk × reference) block; bounds memory at about
        ``chunk_elements × 14`` bytes whatever the table sizes. None (default): 2**20 on
        CPU per thread (32 query rows at Adult's 32,561 reference rows: 3.0–4.4 s for the
        full Adult check on 2 cores against 4.7–5.4 s with 2**19, whose many small
        blocks pay the per-block overhead twice as often), and on CUDA 2**27 or a 64th of the free
        GPU memory, whichever is smaller: small blocks leave a GPU idle between kernel
        launches (measured on an H200, full Adult: 4.5 s with 2**19 against 0.16 s).
    n_candidates : int
        Rows kept from the fast ranking before the exact recomputation (≥ k).
    n_jobs : int or None
        CPU worker threads over query chunks (default: ``torch.get_num_threads()``).

    Attributes (after ``fit``)
    --------------------------
    encoder_ : Encoder
    n_reference_ : int
    device_ : torch.device
    """

    def __init__(self, distance: str = "paper", device: str = "auto", chunk_elements: int | None = None,
                 n_candidates: int = 8, n_jobs: int | None = None):
        if distance not in DISTANCES:
            raise MemvizError(f"distance {distance!r}: unknown (use paper or standardized)")
        self.distance = distance
        self.device = device
        self.chunk_elements = None if chunk_elements is None else int(chunk_elements)
        self.n_candidates = int(n_candidates)
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------- fit
    def fit(self, reference: Table, scale_table: Table | None = None) -> "NeighborEngine":
        """Index the reference rows.

        ``scale_table`` (default: the reference) gives the means used for missing
        numericals and, for the standardized distance, the column ranges; the
        category vocabulary always comes from the reference rows.
        """
        schema = reference.schema
        num_cols, cat_cols = schema.distance_numerical, schema.distance_categorical
        if not num_cols and not cat_cols:
            raise MemvizError(f"{reference.source}: no numerical or categorical column to compare")
        base = Encoder.fit((scale_table or reference).data, num_cols, cat_cols)
        # the vocabulary must be the reference's; it already is unless a scale table is given
        vocab = base.vocab if scale_table is None else Encoder.fit(reference.data, (), cat_cols).vocab
        self.encoder_ = Encoder(base.num_cols, base.cat_cols, base.means, base.mins, base.ranges, vocab)
        self.device_ = resolve_device(self.device)
        self.chunk_elements_ = self._chunk_elements()
        enc = self.encoder_.transform(reference.data)
        self.row_ids_ = reference.row_ids
        self.n_reference_ = len(reference)
        self._load_reference(enc)
        return self

    def _chunk_elements(self) -> int:
        if self.chunk_elements is not None:
            if self.chunk_elements < 1:
                raise MemvizError(f"chunk_elements={self.chunk_elements}: must be at least 1")
            return self.chunk_elements
        if self.device_.type == "cuda":
            free, _ = torch.cuda.mem_get_info(self.device_)
            return int(max(1 << 20, min(1 << 27, free // 64)))
        return 1 << 20

    def _scale(self, num: np.ndarray) -> np.ndarray:
        if self.distance == "standardized":
            return (num - self.encoder_.mins) / self.encoder_.ranges
        return num

    def _load_reference(self, enc: Encoded) -> None:
        dev = self.device_
        num = self._scale(enc.num)
        self.p_, self.q_ = num.shape[1], enc.cat.shape[1]
        self.center_ = num.mean(axis=0) if len(num) else np.zeros(self.p_)
        x = torch.as_tensor(num - self.center_, dtype=torch.float64, device=dev)        # (N, p)
        self.x_num_ = torch.as_tensor(num, dtype=torch.float64, device=dev)             # (N, p) exact path
        ones = torch.ones(len(num), 1, dtype=torch.float64, device=dev)
        self.x_aug_ = torch.cat([-2 * x, ones, (x * x).sum(1, keepdim=True)], 1).T.contiguous()  # (p+2, N)
        # rounding bound of |g|^2 + |x|^2 - 2 g.x where it matters (g near some x, so
        # |g| ≈ |x|): (p + 2)·eps·4·max|x|^2, times a safety factor of 16
        big = float((x * x).sum(1).max()) if len(num) else 0.0
        self.margin_ = 64.0 * (self.p_ + 2) * float(np.finfo(np.float64).eps) * max(big, 1e-300)
        self.x_norm_max_ = big ** 0.5                                                    # X = max |x_c|
        self.x_cat_ = torch.as_tensor(enc.cat, dtype=torch.int64, device=dev)          # (N, q)
        sizes = self.encoder_.n_categories
        self.offsets_ = torch.as_tensor(np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else
                                        np.zeros(0, dtype=np.int64), dtype=torch.int64, device=dev)
        self.n_onehot_ = int(sizes.sum())
        # matches are small exact integers: bfloat16 holds them exactly up to 256
        # (accumulation is float32 inside the GEMM), float32 up to 2**24
        self.onehot_dtype_ = torch.bfloat16 if self.q_ < 256 else torch.float32
        self.x_onehot_t_ = self._onehot(self.x_cat_).T.contiguous()                     # (K, N)

    def _onehot(self, cat: torch.Tensor) -> torch.Tensor:
        """(n, q) codes -> (n, K) one-hot; code -1 (unseen category) matches nothing."""
        out = torch.zeros(cat.shape[0], self.n_onehot_ + 1, dtype=self.onehot_dtype_, device=cat.device)
        if self.q_:
            idx = torch.where(cat >= 0, cat + self.offsets_, torch.full_like(cat, self.n_onehot_))
            out.scatter_(1, idx, 1)
        return out[:, : self.n_onehot_]

    # ----------------------------------------------------------------- query
    def kneighbors(self, queries: pd.DataFrame | Table, k: int = 2,
                   progress: Callable[[int, int], None] | None = None) -> Neighbors:
        """The ``k`` nearest reference rows of every query row (``k`` ≤ number of reference rows)."""
        if not hasattr(self, "encoder_"):
            raise RuntimeError("NeighborEngine.kneighbors called before fit")
        df = queries.data if isinstance(queries, Table) else queries
        N = self.n_reference_
        if k < 1 or k > N:
            raise MemvizError(f"k={k}: must be between 1 and the {N} reference rows")
        enc = self.encoder_.transform(df)
        M = len(df)
        pos = np.empty((M, k), dtype=np.int64)
        dist = np.empty((M, k), dtype=np.float64)
        b = max(1, min(M, self.chunk_elements_ // max(N, 1)))
        g_num = self._scale(enc.num)
        starts = list(range(0, M, b))
        exhaustive = [0]
        if self.device_.type == "cpu" and self.n_jobs_() > 1 and len(starts) > 1:
            self._run_threads(starts, b, M, g_num, enc.cat, k, pos, dist, progress, exhaustive)
        else:
            with torch.no_grad():
                ws = self._workspace(b)
                for start in starts:
                    stop = min(M, start + b)
                    pos[start:stop], dist[start:stop], n_ex = self._chunk(g_num[start:stop], enc.cat[start:stop],
                                                                          k, ws)
                    exhaustive[0] += n_ex
                    if progress is not None:
                        progress(stop, M)
        return Neighbors(pos=pos, row_id=self.row_ids_[pos], dist=dist, n_exhaustive=int(exhaustive[0]))

    def n_jobs_(self) -> int:
        return self.n_jobs if self.n_jobs is not None else torch.get_num_threads()

    def _run_threads(self, starts, b, M, g_num, g_cat, k, pos, dist, progress, exhaustive) -> None:
        """CPU: one thread per core, each with its own cache-sized buffer and a single
        intra-op thread. Query chunks are independent, so this scales without the
        per-operation synchronisation of intra-op parallelism on small blocks."""
        import threading
        from concurrent.futures import ThreadPoolExecutor

        n_jobs = min(self.n_jobs_(), len(starts))
        local = threading.local()
        lock = threading.Lock()
        done = [0]
        if self.distance == "paper" and self.p_:
            self._exact_min_e(g_num[:1], None)  # build the KD-tree once, outside the threads

        def work(start):
            with torch.no_grad():
                if not hasattr(local, "ws"):
                    local.ws = self._workspace(b)
                stop = min(M, start + b)
                pos[start:stop], dist[start:stop], n_ex = self._chunk(g_num[start:stop], g_cat[start:stop], k,
                                                                      local.ws)
                with lock:
                    exhaustive[0] += n_ex
                    done[0] += stop - start
                    if progress is not None:
                        progress(done[0], M)

        previous = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                list(pool.map(work, starts))
        finally:
            torch.set_num_threads(previous)

    def _workspace(self, b: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The (b, N) squared-distance (float64), ranking key (float32) and matches buffers,
        reused by every chunk (fresh allocations page-fault each time)."""
        shape = (b, self.n_reference_)
        return (torch.empty(shape, dtype=torch.float64, device=self.device_),
                torch.empty(shape, dtype=torch.float32, device=self.device_),
                torch.empty(shape, dtype=self.onehot_dtype_, device=self.device_))

    def _exact_min_e(self, g_num: np.ndarray, key: torch.Tensor | None) -> torch.Tensor:
        """Exact min_x ||g - x|| per query row, float64.

        CPU: a KD-tree over the reference numericals (exact float64 distances, no pass
        over the (b, N) block). GPU: exact distances of the smallest keys of the block,
        checked against the key's rounding bound (:meth:`_min_e_from_key`), so that
        nothing leaves the device.
        """
        dev = self.device_
        if dev.type == "cpu":
            if not hasattr(self, "kdtree_"):
                from scipy.spatial import cKDTree
                self.kdtree_ = cKDTree(self.x_num_.numpy())
            dist, _ = self.kdtree_.query(g_num, k=1)
            return torch.as_tensor(np.atleast_1d(dist), dtype=torch.float64)
        return self._min_e_from_key(torch.as_tensor(g_num, dtype=torch.float64, device=dev), key)

    def _spread(self, gn: torch.Tensor) -> torch.Tensor:
        """|g_c| + X per query row (b,), X = max |x_c| (centred): at least every e of the row."""
        gc = gn - torch.as_tensor(self.center_, dtype=torch.float64, device=gn.device)
        return gc.square().sum(1).sqrt() + self.x_norm_max_

    def _key_error(self, spread: torch.Tensor) -> torch.Tensor:
        """Bound on |computed − true| of the expansion key e^2 + c, per query row (b,).

        GEMM rounding: (p+2)·eps·Σ|terms| ≤ (p+2)·eps·((|g_c| + X)^2 + c), X = max |x_c|
        (``spread`` = :meth:`_spread`); doubled for the rounding of |g|^2 and |x|^2 themselves.
        """
        return 2.0 * (self.p_ + 2) * float(np.finfo(np.float64).eps) * (spread.square() + self.margin_)

    def _min_e_from_key(self, gn: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """Exact min_x ||g - x|| from the (b, N) block key = e^2 + c (+ rounding).

        The exact e of the n_candidates smallest keys; a row outside them has
        e^2 ≥ (largest candidate key) − c − error, so when the minimum found is below
        that it is the true minimum. Otherwise (clusters of rows closer than the
        expansion's resolution) the row is recomputed over all reference rows.
        """
        N = self.n_reference_
        kc = min(N, max(self.n_candidates, 2))
        vals, idx = torch.topk(key, kc, dim=1, largest=False)                          # (b, kc)
        emin = self._exact_e(gn, idx).amin(dim=1)                                       # (b,)
        floor = vals[:, -1] - self.margin_ - self._key_error(self._spread(gn))          # (b,) lower bound of e^2 outside
        unsure = (emin.square() >= floor) & (kc < N)
        for i in torch.nonzero(unsure).flatten().tolist():
            emin[i] = self._exact_e(gn[i:i + 1], torch.arange(N, device=gn.device)[None, :]).amin()
        return emin

    def _chunk(self, g_num: np.ndarray, g_cat: np.ndarray, k: int, ws) -> tuple[np.ndarray, np.ndarray, int]:
        dev, N, p, q = self.device_, self.n_reference_, self.p_, self.q_
        n = p + q
        kc = min(N, max(self.n_candidates, k + 1))
        gn = torch.as_tensor(g_num, dtype=torch.float64, device=dev)                  # (b, p)
        gc = torch.as_tensor(g_cat, dtype=torch.int64, device=dev)                    # (b, q)
        b = gn.shape[0]
        e2, key, matches = ws[0][:b], ws[1][:b], ws[2][:b]                            # (b, N) f64, f32, onehot dtype
        scale = torch.ones(b, dtype=torch.float64, device=dev)                         # R per query row
        emin = emax = None
        if p:
            g = gn - torch.as_tensor(self.center_, dtype=torch.float64, device=dev)
            # [g, |g|^2 + c, 1] @ [-2x; 1; |x|^2] = ||g - x||^2 + c; c > 0 covers the
            # expansion's rounding so that sqrt never sees a negative number.
            g_aug = torch.cat([g, (g * g).sum(1, keepdim=True) + self.margin_,
                               torch.ones(b, 1, dtype=torch.float64, device=dev)], 1)   # (b, p+2)
            torch.mm(g_aug, self.x_aug_, out=e2)                                         # (b, N) e^2 + c, float64
            if self.distance == "paper":
                emax = (e2.amax(dim=1) - self.margin_).clamp_min_(0).sqrt_()            # (b,) max e (rel. err ~1e-12)
                emin = self._exact_min_e(g_num, e2).to(dev)                             # (b,) exact min e
                span = emax - emin
                flat = span <= 1e-12 * emax.clamp_min(1.0)                               # all e equal: e' = 0
                emax = torch.where(flat, emin, emax)
                scale = torch.where(flat, torch.ones_like(span), span)
            key.copy_(e2).sqrt_()                                                        # e (+ tiny), float32
        else:
            key.zero_()
        if q:
            # ranking key R·(e' + h) + const = e - R·matches: one GEMM, exact integer matches
            torch.mm(self._onehot(gc), self.x_onehot_t_, out=matches)                   # (b, N) exact counts
            key.addcmul_(matches, scale.to(torch.float32)[:, None], value=-1)
        kvals, cand = smallest(key, kc)                                                  # (b, kc)
        kvals = kvals.to(torch.float64)
        d = self._exact_d(gn, gc, cand, emin, emax, n)                                   # (b, kc)
        cand, d = _sort_by_d_then_pos(cand, d)
        # Is the k-th candidate surely ahead of every row outside the list? The key's e
        # term exceeds the true e by at most delta = sqrt(c + error) (0 without
        # numericals), so a row outside has a true key ≥ kvals[:, -1] − delta, while the
        # k-th candidate's true key is scale·(n·d_k − q) + emin. When it is not strictly
        # below (ties running to the end of the list, or rows closer together than the
        # expansion resolves), redo that query row over all reference rows.
        if p:
            spread = self._spread(gn)                                                    # (b,) ≥ every e of the row
            delta = (self.margin_ + self._key_error(spread)).sqrt()                      # (b,)
        else:
            delta = spread = torch.zeros(b, dtype=torch.float64, device=dev)
        # float32 key: cast + sqrt + scale·matches + the fused add, each within 2^-24 of its
        # magnitude (≤ spread + scale·q): 2^-21 of it bounds the float32 error, 8x over
        err32 = 2.0 ** -21 * (spread + scale * q + kvals[:, -1].abs())
        base = emin if emin is not None else torch.zeros_like(scale)
        t_k = scale * (n * d[:, k - 1] - q) + base                                       # (b,) true key of the k-th
        slack = 64 * (n + 2) * float(np.finfo(np.float64).eps) * (scale * (n + q) + base.abs() + delta
                                                                    + kvals[:, -1].abs())
        # 2·delta: emax (clamp of e') comes from the expansion too; 2·err32: the listed
        # k_c-th key and any key left out are both float32
        unsure = t_k + slack >= kvals[:, -1] - 2 * delta - 2 * err32
        overflow = ((d[:, -1] <= d[:, k - 1]) | unsure) & (kc < N)
        cand_np, d_np = cand[:, :k].cpu().numpy(), d[:, :k].cpu().numpy()
        redo = torch.nonzero(overflow).flatten().tolist()
        for i in redo:
            all_pos = torch.arange(N, device=dev)[None, :]
            d_all = self._exact_d(gn[i:i + 1], gc[i:i + 1], all_pos,
                                  None if emin is None else emin[i:i + 1],
                                  None if emax is None else emax[i:i + 1], n)
            c_all, d_all = _sort_by_d_then_pos(all_pos, d_all)
            cand_np[i], d_np[i] = c_all[0, :k].cpu().numpy(), d_all[0, :k].cpu().numpy()
        return cand_np, d_np, len(redo)

    def _gather(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """x[pos] for (b, c) positions -> (b, c, ...); index_select is far faster than x[pos] on CPU."""
        return x.index_select(0, pos.reshape(-1)).reshape(*pos.shape, *x.shape[1:])

    def _exact_e(self, gn: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """Exact L2 by direct differences: (b, p) queries, (b, c) positions -> (b, c)."""
        diff = gn[:, None, :] - self._gather(self.x_num_, pos)                           # (b, c, p)
        return diff.square().sum(-1).sqrt()

    def _exact_d(self, gn, gc, pos, emin, emax, n) -> torch.Tensor:
        """Exact d for (b, c) candidate positions, float64."""
        h = torch.zeros(pos.shape, dtype=torch.float64, device=pos.device)
        if self.q_:
            h = (gc[:, None, :] != self._gather(self.x_cat_, pos)).sum(-1).to(torch.float64)  # (b, c)
        if not self.p_:
            return h / n
        e = self._exact_e(gn, pos)                                                       # (b, c)
        if self.distance == "paper":
            span = (emax - emin)[:, None]
            e = torch.where(span > 0, (e - emin[:, None]) / torch.where(span > 0, span, torch.ones_like(span)),
                            torch.zeros_like(e)).clamp_(0.0, 1.0)
        return (e + h) / n


def smallest(key: torch.Tensor, kc: int, block: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``kc`` smallest values of each row and their positions, sorted (like ``topk``).

    Two stages, exact: the minimum of every block of ``block`` columns (one vectorized
    pass), ``topk`` over those minima, then ``topk`` inside the ``kc`` chosen blocks. The
    kc smallest values always lie in the kc blocks with the smallest minima: a block
    left out has kc blocks with smaller minima, hence kc smaller values, before it.
    On CPU this is several times cheaper than ``topk`` over the whole row.
    """
    b, N = key.shape
    nb = N // block
    if nb < 4 * kc:
        return torch.topk(key, kc, dim=1, largest=False)
    M = nb * block
    mins = key[:, :M].view(b, nb, block).amin(dim=2)                                     # (b, nb)
    if M < N:
        mins = torch.cat([mins, key[:, M:].amin(dim=1, keepdim=True)], 1)               # tail block
    _, blocks = torch.topk(mins, kc, dim=1, largest=False)                               # (b, kc)
    pos = blocks[..., None] * block + torch.arange(block, device=key.device)             # (b, kc, block)
    inside = pos < N
    pos = pos.clamp_max_(N - 1).reshape(b, -1)                                           # (b, kc·block)
    vals = key.gather(1, pos).masked_fill_(~inside.reshape(b, -1), float("inf"))
    v, i = torch.topk(vals, kc, dim=1, largest=False)
    return v, pos.gather(1, i)


def _sort_by_d_then_pos(pos: torch.Tensor, d: torch.Tensor):
    """Order each row by distance, ties by ascending position (two stable sorts)."""
    o = torch.argsort(pos, dim=1, stable=True)
    pos, d = torch.gather(pos, 1, o), torch.gather(d, 1, o)
    o = torch.argsort(d, dim=1, stable=True)
    return torch.gather(pos, 1, o), torch.gather(d, 1, o)
