"""The exact search for wide tables (CPU): matrix-product bounds, then exact differences.

Used by :class:`memviz.engine.neighbors.NeighborEngine` (``algorithm="wide"``, what ``"auto"``
picks on a CPU above ``PRUNED_MAX_P`` numerical columns, where k-d trees and the box tree stop
pruning). Every distance it reports, and every min e and max e, comes from direct float64
differences (the engine's contract, up to the order of the p squares' sum); the matrix
product only says **which** reference rows need them. Cost: one float32 product of
2·K flops per pair (K = r + 2 <= p + 1, "Columns" below) and two reductions per pair, then
exact differences for a few rows per query row.

Layout. The reference rows are sorted by their categorical tuple (so a block holds one or a
few tuples), padded to whole tiles of ``TILE`` blocks of ``BLOCK`` rows with copies of the
last row (never reported). Per query row g and block B the pass needs only the smallest and
the largest over the block's rows of

    t(x) = |X|^2 - 2 G.X      X = fl32(2^-a·fl(x - c)), G = fl32(2^-a·fl(g - c))

with c the reference mean and 2^a >= max |x_j - c_j| (exact scaling into float32's range).
Columns. X and G here are U = [X_sel, |X_rest|] and V = [G_sel, |G_rest|] (r + 1 entries):
the r columns of largest sum of squares one by one, the others (holding at most
``REST_FRAC`` of the sum of squares; raw units, where a few wide-range columns such as
weights or incomes carry nearly all of e) through the norm of their part, ρ(x) = |X_rest|,
ρ(g) = |G_rest| (without such a rest, U = X: all p columns). By the triangle inequality
(|G_rest| - |X_rest|)^2 <= |G_rest - X_rest|^2 <= (|G_rest| + |X_rest|)^2, so
|V - U|^2 <= 2^-2a·s(x) <= |V - U|^2 + 4·ρ(g)·ρ(x): a product of length r + 2 instead of
p + 1 (12 instead of 41 on the benchmark's wide table) bounds s from both sides:
one float32 matrix product of [-2X, fl32(|X|^2)] (BLOCK·TILE, K) with [G, 1]^T (K, b) (K = r + 2) per
tile, read as (TILE, BLOCK, b) so that the block minima and maxima are reductions over a
cache-sized buffer (the maxima only for the paper distance, which needs max e). s̃(x) = t(x) + |G|^2 approximates 2^-2a·s(x), where
s(x) is the sum the exact formula forms: s(x) = sum_j fl(x_j - g_j)^2, summed left to right
(:func:`exact_sum`), in float64.

The bound. In the scaled units write r = |G| and R = max over the reference rows of |X|
(float64 sums, inflated by 2^-20 for their own rounding), v = 2^-24 (float32) and u = 2^-53.
For every reference row x (R_B <= R below is the largest |X| of x's block)

    |2^-2a·s(x) - s̃(x)| <= E(g) = 2·(p + 8)·v·(r + R)^2·(1 + 2^-20) + (p + 8)·2^-120

(one E per query row: a per-block R_B would be tighter only for blocks far from the mean,
and costs a (rows × blocks) array of its own)

because (i) the float32 dot product of length p + 1 errs by at most
γ_{p+1}·(2·r·R_B + |X|^2) (γ_m = m·v / (1 - m·v)) whatever the order and blocking of its
sums (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1), and rounding |X|^2 to
float32 by v·R_B^2; (ii) rounding G and X to float32 moves each coordinate by at most v times
itself, so |G - X| is within v·(r + R_B) of |g' - x'| and its square within
(2v + v^2)·(r + R_B)^2; (iii) centering in float64 moves every difference by at most
u·(|g_j - c_j| + |x_j - c_j|), and the exact formula's own sum errs by at most
γ^{(53)}_{p+2}·s(x): together below (2p + 8)·u·(r + R_B)^2; (iv) forming s̃ and the bounds
below adds a few float64 roundings of at most u·(r + R_B)^2 each. The sum,
((p + 1)·v + 3v)·(1 + 10^-5)·(r + R_B)^2 plus the float64 terms, is below half of E; the
last term of E covers float32 underflow (at most 2^-149 per operation, p + 8 operations).
The rest's norms add float64 roundings of relative size p·u, and 4·ρ(g)·ρ_B is formed from
the float32 ρ inflated by 2^-20 (more than their rounding): both far inside the other half.
Every comparison below allows E on both sides, so the sets it keeps hold every row that can
matter, whatever the rounding of the product:

* min e: the row with the smallest s has t <= min over rows of (t + 4·ρ(g)·ρ(x)) + 2·E(g)
  (ρ(x) = 0 without a rest), so only blocks with min_B t at most min t + 4·ρ(g)·max ρ_B + 2E
  can hold it; max e likewise: blocks with max_B t >= max t - 2·E(g) - 4·ρ(g)·max ρ_B. In
  those blocks t is formed again row by row (a float32 product of K per row: another order
  of the same sums, within the same E), the same two tests, now against the rows' own t,
  keep a few rows, and their exact differences give min e and max e (sqrt is monotone).
* the k nearest: a row has e >= 2^a·fl(sqrt(max(t + |G|^2 - E, 0))) and d >= the d formula
  applied to that and its mismatches h (rounding is monotone), d_lo; with t + 4·ρ(g)·ρ(x) + E
  in place of t - E the same formula gives an estimate from above, d_up. In the ``FIRST``
  blocks of smallest estimated d_lo (block minima, fewest mismatches of the block's tuples),
  the rows whose d_lo is at most the k-th smallest d_up get exact d; their k-th smallest, τ,
  bounds the true k-th d from above (the rows of these blocks with d_lo <= τ are all read).
  Only the other blocks whose d_lo (from min_B t and the fewest mismatches, the threshold on
  min_B t per mismatch count formed backwards from τ with a margin of 2^-30) is at most τ can
  hold a row with d <= the true k-th d: their rows with d_lo <= τ get exact d, and the k
  smallest (d, position) are kept. Ties at the k-th d are all inside them.

Every test on the (blocks × query rows) bounds runs in float32 against thresholds rounded
outwards (so it keeps at least what the float64 test keeps), first on the tiles' extremes
and then inside the tiles that pass: the bounds are passed over a few times per task, the
rows a few hundred times fewer. Exact differences are taken row by row, left to right over
the p squares (the order of :func:`exact_sum`), for a few rows per query row (about 4 on the
benchmark's wide table, against 5 blocks of 32 rows before the rows' own bounds).

``tests/engine/test_wide.py`` checks the result bit for bit against the exact formula over
all rows (copies, one-ulp neighbours, ties, duplicated rows, magnitudes from 1e-300 to 1e300,
an outlier), and that switching E off gives wrong rows on a cluster finer than float32.

Query rows for which the bound would overflow, or that would need more than
``max(MIN_CAP, blocks / 8)`` blocks read exactly (coordinates spanning many orders of
magnitude make E large against the distances), are returned as not done: the dense path
answers them.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from memviz.engine.blocks import one_blas_thread
from memviz.engine.pruned import distinct_rows, smallest_k
from memviz.engine.wideselect import (
    f32,
    first_blocks,
    kth,
    select,
    select_h,
    tile_mismatches,
)

BLOCK = 32        # reference rows per block
TILE = 64         # most blocks per matrix product
PAIRS = 1 << 20   # (query row, block) pairs per task
OUT = 1 << 18     # floats of one product's output (1 MiB: stays in cache)
T_MAX = 4         # tuples kept per block for its fewest mismatches (more: bound 0)
MIN_CAP = 64      # blocks read exactly per query row before it goes to the dense path
FIRST = 3         # blocks of smallest estimated d read first, for tau
REST_FRAC = 2.0 ** -10  # share of the sum of squares the product may take through one norm
EPS = 2.0 ** -53
EPS32 = 2.0 ** -24


def task_rows(nb: int) -> int:
    """Query rows per task for nb blocks: about ``PAIRS`` (query row, block) pairs."""
    return int(min(1024, max(16, PAIRS // max(1, nb))))


def exact_sum(sq: np.ndarray) -> np.ndarray:
    """(n, p) squares -> (n,) their sums, left to right along each row: one fixed order,
    whatever n (numpy's ``sum`` may order a row's terms differently for different array
    shapes, and the same pair must get the same e in every call and every block of rows)."""
    return np.add.accumulate(sq, axis=1, out=sq)[:, -1].copy() if sq.shape[1] else np.zeros(len(sq))


class WideIndex:
    """The reference rows indexed for the wide search.

    Parameters
    ----------
    y : (N, p) float64 coordinates of the distance (``NeighborEngine._coords``), p >= 1.
    cat : (N, q) int64 category codes (>= 0).
    distance : "paper" or "standardized".
    """

    def __init__(self, y: np.ndarray, cat: np.ndarray, distance: str):
        N, p = y.shape
        q = cat.shape[1]
        self.N, self.p, self.q, self.n = N, p, q, p + q
        self.paper = distance == "paper"
        order = np.lexsort(cat.T[::-1]) if q else np.arange(N)                          # by tuple, stable
        self.nb_real = nb = max(1, math.ceil(N / BLOCK))                                 # blocks holding rows
        # query rows per task: about PAIRS (query row, block) pairs, so that the per-task
        # Python steps are few against the arithmetic; blocks per product: its float32 output
        # (BLOCK·tile, b) about OUT floats, in cache
        self.b = task_rows(nb)
        self.tile = tile = max(1, min(TILE, nb, OUT // (BLOCK * self.b)))
        self.nb = nb = math.ceil(nb / tile) * tile                                       # whole tiles
        pad = nb * BLOCK - N
        self.spos = np.concatenate([order, np.repeat(order[-1:], pad)]).astype(np.int64)  # (Np,) positions
        self.valid = np.arange(nb * BLOCK) < N                                           # (Np,) not padding
        ys = y[self.spos]                                                                 # (Np, p)
        self.ys = np.ascontiguousarray(ys)                                               # (Np, p)
        cs = np.ascontiguousarray(cat[self.spos], dtype=np.int32)                        # (Np, q)
        self.center = y.mean(axis=0)                                                     # (p,)
        xc = ys - self.center                                                            # (Np, p) x'
        top = float(np.abs(xc).max())
        # the product runs on x'·2^-a in float32, 2^a >= max |x'_j|: exact scaling, in range
        self.a = int(np.frexp(top)[1]) if top > 0 else 0
        xc = np.ldexp(xc, -self.a, out=xc)
        self.sel, self.rest = self._split(xc[:N])
        u, rho = self._reduce(xc)                                                        # (Np, r+1) U, (Np,) ρ
        nx2 = np.square(u).sum(axis=1)                                                   # (Np,) |U|^2
        self.rmax = float(np.sqrt(nx2).max()) * (1 + 2.0 ** -20)                         # R
        # [-2U, fl32(|U|^2)] row-major, one row per reference row: a tile's product with
        # [V, 1]^T is (BLOCK·tile, b), read as (tile, BLOCK, b) for the block minima and maxima
        self.aug_np = np.concatenate([-2.0 * u, nx2[:, None]], axis=1).astype(np.float32)  # (Np, K)
        self.rhox = rho * (1 + 2.0 ** -20)                                               # (Np,) ρ(x)
        self.qmax = self.rhox.reshape(nb, BLOCK).max(axis=1)                             # (nb,) max ρ(x)
        # the distinct tuples (rows are sorted by tuple) and the first T of each block's
        change = np.ones(nb * BLOCK, dtype=bool)
        if q:
            change[1:] = (cs[1:] != cs[:-1]).any(axis=1)
        self.tid = tid = np.cumsum(change) - 1                                           # (Np,) tuple id
        self.utup = cs[change]                                                           # (U, q)
        first_in_block = change.reshape(nb, BLOCK).copy()
        first_in_block[:, 0] = True
        n_tup = first_in_block.sum(axis=1)                                               # (nb,)
        t_eff = int(min(T_MAX, n_tup.max()))
        idx = np.argsort(~first_in_block, axis=1, kind="stable")[:, :t_eff]              # (nb, T) first rows
        idx = np.where(np.arange(t_eff)[None, :] < n_tup[:, None], idx, 0)
        self.btid = np.take_along_axis(tid.reshape(nb, BLOCK), idx, axis=1)              # (nb, T) tuple ids
        self.bmixed = n_tup > t_eff                                                      # (nb,) bound 0
        self.coef = 2.0 * (p + 8) * EPS32 * (1 + 2.0 ** -20)                             # module docstring

    @staticmethod
    def _split(xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns the product takes one by one (the largest sums of squares) and the
        rest, taken through their norm: the fewest leading columns whose rest holds at most
        ``REST_FRAC`` of the total sum of squares (raw units, where a few wide-range columns
        carry nearly all of e, leave few); none when that saves under two columns."""
        energy = np.square(xc).sum(axis=0)                                               # (p,)
        order = np.argsort(-energy, kind="stable")
        tail = np.cumsum(energy[order][::-1])[::-1]                                      # tail[i]: columns i..p-1
        r = int(np.argmax(np.append(tail, 0.0) <= REST_FRAC * energy.sum()))
        if r > len(order) - 2:
            return np.arange(len(order)), np.arange(0)
        return np.sort(order[:r]), np.sort(order[r:])

    def _reduce(self, xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scaled coordinates (n, p) -> the product's vectors U = fl32([X_sel, |X_rest|]) as
        float64 (n, r + 1) (or (n, p) without a rest) and (n,) ρ = their |X_rest| entry (0
        without a rest)."""
        u = xc[:, self.sel].astype(np.float32)
        if not len(self.rest):
            return u.astype(np.float64), np.zeros(len(xc))
        rest = np.sqrt(np.square(xc[:, self.rest]).sum(axis=1)).astype(np.float32)
        u = np.concatenate([u, rest[:, None]], axis=1).astype(np.float64)
        return u, u[:, -1].copy()

    # ---------------------------------------------------------------- search
    def kneighbors(self, y, cat, k, pos, dist, n_jobs, progress, rows_per_task=None):
        """Fill pos/dist (M, k) for the rows it answers; returns the (M,) mask of those rows.
        Query rows go to the tasks in the order of their categorical tuple, so that a task
        holds few distinct tuples."""
        M = len(y)
        done = np.zeros(M, dtype=bool)
        b = rows_per_task or self.b
        order = np.lexsort(cat.T[::-1]) if self.q and M else np.arange(M)
        starts = list(range(0, M, b))

        def work(s):
            rows = order[s:s + b]
            with np.errstate(over="ignore", invalid="ignore"):                      # not-ok rows
                ok, p_, d_ = self._chunk(y[rows], cat[rows], k)
            idx = rows[ok]
            pos[idx], dist[idx], done[idx] = p_[ok], d_[ok], True
            if progress is not None:
                progress(len(idx))

        n_jobs = min(n_jobs, len(starts))
        with one_blas_thread():           # one product per thread: blocks are independent
            if n_jobs > 1:
                with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                    list(pool.map(work, starts))
            else:
                for s in starts:
                    work(s)
        return done

    def _bounds(self, yq):
        """(nb, b) block minima and maxima of t (float32), (b,) |G|^2, (b,) E, (b,)
        ρ(g) and the (b, K) float32 query vectors [V, 1], all in the units of the scaled
        coordinates (original units times 2^-a; squares times 2^-2a)."""
        with np.errstate(over="ignore", invalid="ignore"):
            gs, rho = self._reduce(np.ldexp(yq - self.center, -self.a))                 # (b, r+1) V, (b,) ρ(g)
        g32 = gs.astype(np.float32)
        ng2 = np.square(gs).sum(axis=1)                                                  # (b,) |V|^2
        b, tile = len(g32), self.tile
        nt, rows = self.nb // tile, BLOCK * tile
        at = np.ascontiguousarray(np.concatenate([g32, np.ones((b, 1), dtype=np.float32)], axis=1).T)  # (K, b)
        bmin = np.empty((self.nb, b), dtype=np.float32)
        bmax = np.empty((self.nb, b), dtype=np.float32) if self.paper else None          # max e: paper only
        out = np.empty((rows, b), dtype=np.float32)                                      # stays in cache
        for i in range(nt):
            np.matmul(self.aug_np[i * rows:(i + 1) * rows], at, out=out)
            v = out.reshape(tile, BLOCK, b)
            np.min(v, axis=1, out=bmin[i * tile:(i + 1) * tile])
            if bmax is not None:
                np.max(v, axis=1, out=bmax[i * tile:(i + 1) * tile])
        bmin[self.nb_real:] = np.inf                    # blocks of padding only: never read
        if bmax is not None:
            bmax[self.nb_real:] = -np.inf
        r = np.sqrt(ng2) * (1 + 2.0 ** -20)
        with np.errstate(over="ignore", invalid="ignore"):
            E = self.coef * np.square(r + self.rmax) + (self.p + 8) * 2.0 ** -120          # (b,)
        return bmin, bmax, ng2, E, rho * (1 + 2.0 ** -20), at.T

    def _rows_t(self, at, qi, blk):
        """t of every row of the (query row, block) pairs -> (pairs, BLOCK) float64 (a float32
        product of its own, within E of the true t like the pass's, whatever the order of its
        sums)."""
        a3 = self.aug_np.reshape(self.nb, BLOCK, -1)[blk]                                # (P, BLOCK, K)
        v = at[qi]                                                                       # (P, K) float32
        return np.matmul(a3, v[:, :, None])[:, :, 0].astype(np.float64)

    def _exact(self, yq, qi, rows):
        """Exact s of (query row, reference row) pairs -> (R,): s = sum_j fl(x_j - g_j)^2
        summed left to right (:func:`exact_sum`)."""
        diff = self.ys[rows]                                                             # (R, p)
        np.subtract(diff, yq[qi], out=diff)
        return exact_sum(np.square(diff, out=diff))

    def _chunk(self, yq, cq, k):
        """(B,) answered, (B, k) positions and d for B query rows.

        The (nb, B) block bounds are only compared with per-query thresholds, in float32
        rounded outwards (supersets of the float64 tests of the module docstring). The
        blocks that can hold min e or max e and the ``FIRST`` blocks of smallest estimated d
        then get t row by row (a float32 product of K per row), the same tests narrow them to
        rows, and only those rows get exact differences: min e and max e, then the rows whose
        lower bound of d is at most the k-th smallest upper bound, which give tau. The other
        blocks whose bound is at most tau are read the same way."""
        B, nb = len(yq), self.nb
        bmin, bmax, ng2, E, rho, at = self._bounds(yq)                                   # (nb, B) float32
        # (|V| + R)^2 < 2^120: every partial sum of the product is below (|V| + R)^2 (Cauchy-Schwarz),
        # far from float32's 2^128, so bmin and bmax are finite without a pass over them
        ok = E < self.coef * 2.0 ** 120
        E = np.where(ok, E, 0.0)
        hq, hu, inv = self._hmin(cq)                                                     # (Uq, nb), (Uq, U), (B,)
        rest = len(self.rest) > 0
        tile, nt = self.tile, nb // self.tile
        bmin_t = bmin.reshape(nt, tile, B).min(axis=1)                                   # (nt, B) per tile
        sets, w = [], np.full(B, 2.0 ** self.a)
        if self.paper:
            bmax_t = bmax.reshape(nt, tile, B).max(axis=1)
            tmin = bmin_t.min(axis=0).astype(np.float64)                                 # (B,) smallest t
            tmax = bmax_t.max(axis=0).astype(np.float64)                                 # (B,) largest t
            # min e: the row of smallest s has t <= min over blocks of (min_B t + 4·ρ(g)·ρ_B) + 2E
            # <= min t + 4·ρ(g)·max ρ_B + 2E (the slack is 0 without a rest)
            slack = 4 * rho * float(self.qmax.max()) if rest else 0.0
            lo = tmin + slack + 2 * E
            lo = np.where(ok, lo + 4 * EPS * (np.abs(lo) + 2 * E), -np.inf)
            # max e: blocks with max_B t + 4·ρ(g)·ρ_B >= max t - 2E, and ρ_B <= max ρ_B
            hi = tmax - 2 * E
            hi = np.where(ok, hi - 4 * EPS * (np.abs(hi) + 2 * E), np.inf) - slack
            sets.append(select(bmin_t, bmin, f32(lo, up=True), nb, below=True))
            sets.append(select(bmax_t, bmax, f32(hi, up=False), nb, below=False))
            # the first blocks' order only decides how fast, not what: e and span from the bounds
            ea = np.sqrt(np.maximum(np.stack([tmin, tmax]) + ng2, 0.0)) * 2.0 ** self.a
            span_a = ea[1] - ea[0]
            w = np.where(span_a > 0, w / np.where(span_a > 0, span_a, 1.0), w)
        emin = span = None
        if self.paper:
            # the same two tests row by row, against the rows' own bounds (padding: a copy of a
            # row): min e and max e from the exact differences of the rows they keep
            qe, be = np.divmod(np.unique(np.concatenate(sets)), nb)
            rows_e = be[:, None] * BLOCK + np.arange(BLOCK)                              # (Pe, BLOCK)
            te = self._rows_t(at, qe, be)
            slack_e = 4 * rho[qe, None] * self.rhox[rows_e] if rest else 0.0
            lo_r = np.full(B, np.inf)
            np.minimum.at(lo_r, qe, (te + slack_e).min(axis=1))
            lo_r = lo_r + 2 * E
            lo_r = np.where(ok, lo_r + 4 * EPS * (np.abs(lo_r) + 2 * E), -np.inf)
            hi_r = np.full(B, -np.inf)
            np.maximum.at(hi_r, qe, te.max(axis=1))
            hi_r = hi_r - 2 * E
            hi_r = np.where(ok, hi_r - 4 * EPS * (np.abs(hi_r) + 2 * E), np.inf)
            emin, emax = np.full(B, np.inf), np.zeros(B)
            for c, fn, out in ((te <= lo_r[qe, None], np.minimum, emin),
                               (te + slack_e >= hi_r[qe, None], np.maximum, emax)):
                pi, ri = np.nonzero(c & self.valid[rows_e])
                fn.at(out, qe[pi], np.sqrt(self._exact(yq, qe[pi], rows_e[pi, ri])))     # sqrt is monotone
            span = emax - emin
        kb = min(nb, FIRST)
        h_t = tile_mismatches(hq, inv, nt)                                               # (nt, B)
        key1 = first_blocks(bmin, bmin_t, ng2, w, hq, inv, h_t, kb)                       # query-major
        qi1, blk1 = np.divmod(key1, nb)
        rows1, t1, h1, valid1 = self._pair_rows(at, hu, inv, qi1, blk1)                  # (P1, BLOCK) each
        slack1 = 4 * rho[qi1, None] * self.rhox[rows1] if rest else 0.0
        # rows of these blocks: lower and upper bounds of d, then exact d where d_lo <= the
        # k-th smallest d_up (it holds at least k rows, so their k-th exact d bounds the true one)
        dlo1 = self._dbound(t1, -E, ng2, qi1, h1, emin, span, valid1)
        dup1 = self._dbound(t1 + slack1, E, ng2, qi1, h1, emin, span, valid1)
        tau_up = kth(dup1, qi1, B, k)
        c1 = dlo1 <= tau_up[qi1, None]
        qa, ra, da = self._exact_d(yq, qi1, rows1, h1, c1, emin, span)
        tau = kth(da[:, None], qa, B, k)                                                # (B,)
        c1b = (dlo1 <= tau[qi1, None]) & ~c1                                             # tau_up not an upper bound
        if c1b.any():
            q2, r2, d2 = self._exact_d(yq, qi1, rows1, h1, c1b, emin, span)
            qa, ra, da = np.concatenate([qa, q2]), np.concatenate([ra, r2]), np.concatenate([da, d2])
        # only the other blocks with d_lo <= tau can hold a row with d <= the true k-th d
        thr = self._thresholds(tau, ng2, E, emin, span)                                  # (q + 1, B)
        key2 = select_h(bmin_t, bmin, thr, hq, inv, h_t)
        key2 = key2[~np.isin(key2, key1)]
        qi2, blk2 = np.divmod(key2, nb)
        ok &= np.bincount(qi2, minlength=B) + kb <= max(MIN_CAP, nb // 8)
        keep2 = ok[qi2]
        qi2, blk2 = qi2[keep2], blk2[keep2]
        if len(qi2):
            rows2, t2, h2, valid2 = self._pair_rows(at, hu, inv, qi2, blk2)
            c2 = self._dbound(t2, -E, ng2, qi2, h2, emin, span, valid2) <= tau[qi2, None]
            q2, r2, d2 = self._exact_d(yq, qi2, rows2, h2, c2, emin, span)
            qa, ra, da = np.concatenate([qa, q2]), np.concatenate([ra, r2]), np.concatenate([da, d2])
        keep = ok[qa]
        out_p, out_d = smallest_k(qa[keep], self.spos[ra[keep]], da[keep], B, k, self.N)
        return ok, out_p, out_d

    def _pair_rows(self, at, hu, inv, qi, blk):
        """The rows of (query row, block) pairs, (P, BLOCK) each: their sorted positions, their
        t (:meth:`_rows_t`), their categorical mismatches (read from the (Uq, U) table of the
        distinct query tuples against the reference's) and whether they are rows, not padding."""
        rows = blk[:, None] * BLOCK + np.arange(BLOCK)
        return rows, self._rows_t(at, qi, blk), hu[inv[qi][:, None], self.tid[rows]], self.valid[rows]

    def _dbound(self, t, sE, ng2, qi, h, emin, span, valid):
        """d from a bound of t: e = 2^a·sqrt(max(t + |G|^2 + sE·(1 + 2^-20), 0)) (sE = -E: a lower
        bound of e, as for the blocks; +E with the slack in t: an estimate from above), inf on
        padding."""
        with np.errstate(over="ignore", invalid="ignore"):
            low = t + (ng2 + sE * (1 + 2.0 ** -20))[qi, None]
            np.maximum(low, 0.0, out=low)
            e = np.ldexp(np.sqrt(low, out=low), self.a, out=low)
            d = self._d(e, h, *(() if emin is None else (emin[qi, None], span[qi, None])))
        return np.where(valid, d, np.inf)

    def _exact_d(self, yq, qi, rows, h, c, emin, span):
        """Exact d of the rows of the pairs where c holds -> (R,) query rows, positions in the
        sorted reference, d."""
        pi, ri = np.nonzero(c)
        q, r = qi[pi], rows[pi, ri]
        e = np.sqrt(self._exact(yq, q, r))
        d = self._d(e, h[pi, ri], *(() if emin is None else (emin[q], span[q])))
        return q, r, d

    def _thresholds(self, tau, ng2, E, emin, span):
        """(q + 1, B) float64 thresholds on min_B t: a block whose fewest mismatches are h
        and whose d_lo (module docstring) is at most tau has min_B t <= thr[h]. From
        d_lo <= tau: e_lo <= L_h = emin + span·(tau·n - h) (paper; emin = 0, span = 1 for
        standardized), then t >= the lower bound's argument. Each step widened by 2^-30 of its
        magnitudes, far beyond the float64 roundings of the forward formula."""
        h = np.arange(self.q + 1, dtype=np.float64)[:, None]                            # (q+1, 1)
        if self.paper:
            sp = np.where(span > 0, span, 1.0)
            base = emin
        else:
            sp, base = 1.0, 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            L = base + sp * (tau * self.n - h)                                           # (q+1, B) e units
            L = L + 2.0 ** -30 * (np.abs(base) + sp * (np.abs(tau) * self.n + h + 1))
            Ls = np.ldexp(np.maximum(L, 0.0), -self.a)
            thr = np.square(Ls) - ng2 + E * (1 + 2.0 ** -20)
            thr = thr + 2.0 ** -30 * (np.square(Ls) + np.abs(ng2) + E) + 2.0 ** -140
        thr = np.where(L < 0, -np.inf, thr)
        return np.where(np.isnan(thr), np.inf, thr)

    def _hmin(self, cq):
        """(Uq, nb) int16 fewest categorical mismatches of each distinct query tuple with each
        block's tuples (0 on blocks of more than ``T_MAX`` tuples), (Uq, U) the mismatches
        with each reference tuple and (B,) each query row's tuple."""
        B = len(cq)
        if not self.q:
            return (np.zeros((1, self.nb), dtype=np.int16), np.zeros((1, len(self.utup)), dtype=np.int16),
                    np.zeros(B, dtype=np.int64))
        shifted = cq + 1                                                                 # >= 0: unseen is -1
        uq, inv = distinct_rows(shifted, shifted.max(axis=0))
        uq = uq - 1
        hq = np.zeros((len(uq), len(self.utup)), dtype=np.int16)                         # (Uq, U)
        for j in range(self.q):
            hq += uq[:, None, j] != self.utup[None, :, j]
        out = hq[:, self.btid[:, 0]]
        for t in range(1, self.btid.shape[1]):
            np.minimum(out, hq[:, self.btid[:, t]], out=out)
        out[:, self.bmixed] = 0
        return out, hq, inv.astype(np.int64)

    def _d(self, e, h, emin=None, span=None):
        """d = (t + h) / n as ``PrunedIndex._d`` computes it (t = e' for paper, e for standardized)."""
        if self.paper:
            t = (e - emin) / np.where(span > 0, span, 1.0)
        else:
            t = e
        return (t + h) / self.n
