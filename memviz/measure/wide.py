"""The exact search for wide tables (CPU): matrix-product bounds, then exact differences.

Used by :class:`memviz.measure.neighbors.NeighborEngine` (``algorithm="wide"``, what ``"auto"``
picks on a CPU above ``PRUNED_MAX_P`` numerical columns, where k-d trees and the box tree stop
pruning). Every distance it reports, and every min e and max e, comes from direct float64
differences (the engine's contract, up to the order of the p squares' sum); the matrix
product only says **which** reference rows need them. Cost: one float32 product of
2·K flops per pair (K = r + 2 <= p + 1, "Columns" below) and two reductions per pair, then
exact differences for a few blocks per query row.

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

* min e: the row with the smallest s has t <= min over blocks of (min_B t + 4·ρ(g)·ρ_B) + 2·E(g)
  (ρ_B the largest ρ(x) of block B, 0 without a rest), so only blocks with min_B t at most
  that are read exactly; max e likewise: blocks with max_B t + 4·ρ(g)·ρ_B >= max t - 2·E(g). min e and max e are then the exact formula's (sqrt is monotone).
* the k nearest: a block's rows all have e >= 2^a·fl(sqrt(max(min_B t + |G|^2 - E, 0))) and
  h >= the fewest mismatches of its tuples, so (rounding is monotone) d >= the d formula
  applied to those two lower bounds, d_lo(g, B). The rows of the k + 1 blocks of smallest
  d_lo give τ, the k-th smallest exact d among them (an upper bound of the true k-th d), and
  only blocks with d_lo <= τ can hold a row with d <= the true k-th d: they are read exactly
  and the k smallest (d, position) kept. Ties at the k-th d are all inside them.

Exact differences are taken block by block: the reference rows are stored (blocks, p, BLOCK),
so a (query row, block) pair is one gathered slab and the left-to-right sum over the p
squares is p vectorised additions over all pairs (the order of :func:`exact_sum`).

``tests/measure/test_wide.py`` checks the result bit for bit against the exact formula over
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
import torch

from memviz.measure.pruned import _topk

BLOCK = 32        # reference rows per block
TILE = 64         # blocks per matrix product (its float32 output, 128 x 2048, stays in cache)
T_MAX = 4         # tuples kept per block for its fewest mismatches (more: bound 0)
MIN_CAP = 64      # blocks read exactly per query row before it goes to the dense path
REST_FRAC = 2.0 ** -10  # share of the sum of squares the product may take through one norm
EPS = 2.0 ** -53
EPS32 = 2.0 ** -24


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
        nb = max(1, math.ceil(N / BLOCK))
        self.tile = tile = min(TILE, nb)
        self.nb = nb = math.ceil(nb / tile) * tile                                       # whole tiles
        pad = nb * BLOCK - N
        self.spos = np.concatenate([order, np.repeat(order[-1:], pad)]).astype(np.int64)  # (Np,) positions
        self.valid = np.arange(nb * BLOCK) < N                                           # (Np,) not padding
        ys = y[self.spos]                                                                 # (Np, p)
        self.ysT = np.ascontiguousarray(ys.reshape(nb, BLOCK, p).transpose(0, 2, 1))      # (nb, p, BLOCK)
        self.cs = np.ascontiguousarray(cat[self.spos], dtype=np.int32)                   # (Np, q)
        self.csT = np.ascontiguousarray(self.cs.reshape(nb, BLOCK, q).transpose(0, 2, 1))  # (nb, q, BLOCK)
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
        self.aug = torch.from_numpy(np.concatenate([-2.0 * u, nx2[:, None]], axis=1).astype(np.float32))
        self.qmax = rho.reshape(nb, BLOCK).max(axis=1) * (1 + 2.0 ** -20)                # (nb,) max ρ(x)
        # the distinct tuples (rows are sorted by tuple) and the first T of each block's
        change = np.ones(nb * BLOCK, dtype=bool)
        if q:
            change[1:] = (self.cs[1:] != self.cs[:-1]).any(axis=1)
        tid = np.cumsum(change) - 1                                                      # (Np,) tuple id
        self.utup = self.cs[change]                                                      # (U, q)
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
        """Fill pos/dist (M, k) for the rows it answers; returns the (M,) mask of those rows."""
        M = len(y)
        done = np.zeros(M, dtype=bool)
        b = rows_per_task or int(min(128, max(16, (1 << 22) // self.nb)))
        starts = list(range(0, M, b))

        def work(s):
            sl = slice(s, min(M, s + b))
            with torch.no_grad(), np.errstate(over="ignore", invalid="ignore"):    # not-ok rows
                ok, p_, d_ = self._chunk(y[sl], cat[sl], k)
            idx = np.arange(sl.start, sl.stop)[ok]
            pos[idx], dist[idx], done[idx] = p_[ok], d_[ok], True
            if progress is not None:
                progress(len(idx))

        n_jobs = min(n_jobs, len(starts))
        previous = torch.get_num_threads()
        torch.set_num_threads(1)          # one product per thread: blocks are independent
        try:
            if n_jobs > 1:
                with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                    list(pool.map(work, starts))
            else:
                for s in starts:
                    work(s)
        finally:
            torch.set_num_threads(previous)
        return done

    def _bounds(self, yq):
        """(b, nb) block minima and maxima of t, (b,) |G|^2 and (b,) E, all in the units of
        the scaled coordinates (original units times 2^-a; squares times 2^-2a)."""
        with np.errstate(over="ignore", invalid="ignore"):
            gs, rho = self._reduce(np.ldexp(yq - self.center, -self.a))                 # (b, r+1) V, (b,) ρ(g)
        g32 = gs.astype(np.float32)
        ng2 = np.square(gs).sum(axis=1)                                                  # (b,) |V|^2
        b, tile = len(g32), self.tile
        nt, rows = self.nb // tile, BLOCK * tile
        at = torch.from_numpy(np.ascontiguousarray(
            np.concatenate([g32, np.ones((b, 1), dtype=np.float32)], axis=1).T))          # (K, b)
        bmin = torch.empty((self.nb, b), dtype=torch.float32)
        bmax = torch.empty((self.nb, b), dtype=torch.float32) if self.paper else None       # max e: paper only
        out = torch.empty((rows, b), dtype=torch.float32)                                # stays in cache
        for i in range(nt):
            torch.mm(self.aug[i * rows:(i + 1) * rows], at, out=out)
            v = out.view(tile, BLOCK, b)
            torch.amin(v, dim=1, out=bmin[i * tile:(i + 1) * tile])
            if bmax is not None:
                torch.amax(v, dim=1, out=bmax[i * tile:(i + 1) * tile])
        # float32 (b, nb): every comparison and sum below upcasts it to float64 exactly
        bmin = bmin.T.contiguous().numpy()
        bmax = bmax.T.contiguous().numpy() if bmax is not None else None
        r = np.sqrt(ng2) * (1 + 2.0 ** -20)
        with np.errstate(over="ignore", invalid="ignore"):
            E = self.coef * np.square(r + self.rmax) + (self.p + 8) * 2.0 ** -120          # (b,)
        return bmin, bmax, ng2, E, rho * (1 + 2.0 ** -20)

    def _exact(self, yq, cq, qi, blk):
        """Exact s and h of every row of the (query row, block) pairs -> (pairs, BLOCK) each:
        s = sum_j fl(x_j - g_j)^2 summed left to right (the order of :func:`exact_sum`), one
        vectorised addition per column over all pairs."""
        diff = self.ysT[blk]                                                             # (pairs, p, BLOCK)
        np.subtract(diff, yq[qi][:, :, None], out=diff)
        np.square(diff, out=diff)
        s = diff[:, 0].copy()
        for j in range(1, self.p):
            s += diff[:, j]
        if not self.q:
            return s, np.zeros(s.shape, dtype=np.int64)
        h = (self.csT[blk] != cq[qi][:, :, None]).sum(axis=1)
        return s, h

    def _chunk(self, yq, cq, k):
        B, nb = len(yq), self.nb
        bmin, bmax, ng2, E, rho = self._bounds(yq)
        # (|V| + R)^2 < 2^120: every partial sum of the product is below (|V| + R)^2 (Cauchy-Schwarz),
        # far from float32's 2^128, so bmin and bmax are finite without a pass over them
        ok = E < self.coef * 2.0 ** 120
        E = np.where(ok, E, 0.0)
        ar = np.arange(B)
        emin = emax = None
        span = np.ones(B)
        if self.paper:
            # blocks that can hold the row of smallest (largest) s: min_B t - E <= min t + E
            # with a rest, t + 4·ρ(g)·ρ(x) bounds s from above (module docstring)
            slack = 4 * rho[:, None] * self.qmax if len(self.rest) else None             # (B, nb)
            lo = (bmin.min(axis=1) if slack is None else (bmin + slack).min(axis=1)) + 2 * E
            hi = bmax.max(axis=1).astype(np.float64) - 2 * E
            lo = np.where(ok, lo + 4 * EPS * (np.abs(lo) + 2 * E), -np.inf)
            hi = np.where(ok, hi - 4 * EPS * (np.abs(hi) + 2 * E), np.inf)
            emin, emax = np.full(B, np.inf), np.zeros(B)
            for m, red, fn, out in ((bmin <= lo[:, None], np.min, np.minimum, emin),
                                    ((bmax if slack is None else bmax + slack) >= hi[:, None], np.max,
                                     np.maximum, emax)):
                qi, blk = np.divmod(np.flatnonzero(m), nb)
                sq, _ = self._exact(yq, cq, qi, blk)
                fn.at(out, qi, np.sqrt(red(sq, axis=1)))                                # sqrt is monotone
            span = emax - emin
        # lower bounds of d per (query row, block)
        low = bmin + (ng2 - E * (1 + 2.0 ** -20))[:, None]                                # float64
        np.maximum(low, 0.0, out=low)
        elo = np.ldexp(np.sqrt(low, out=low), self.a, out=low)                           # (B, nb) original units
        dlo = self._d(elo, self._hmin(cq), emin[:, None] if emin is not None else None,
                      span[:, None] if emin is not None else None)
        # first k + 1 blocks of smallest bound -> tau
        kb = min(nb, k + 1)
        first = torch.topk(torch.from_numpy(dlo), kb, dim=1, largest=False).indices.numpy()  # (B, kb)
        qi1, blk1 = np.repeat(ar, kb), first.reshape(-1)
        d1 = self._pairs_d(yq, cq, qi1, blk1, emin, span)                                # (B·kb, BLOCK)
        tau = np.partition(d1.reshape(B, -1), k - 1, axis=1)[:, k - 1]                  # (B,)
        more = dlo <= tau[:, None]
        more[ar[:, None], first] = False
        ok &= more.sum(axis=1) + kb <= max(MIN_CAP, nb // 8)
        qi2, blk2 = np.divmod(np.flatnonzero(more), nb)
        keep2 = ok[qi2]
        qi2, blk2 = qi2[keep2], blk2[keep2]
        d2 = self._pairs_d(yq, cq, qi2, blk2, emin, span)
        qa = np.repeat(np.concatenate([qi1, qi2]), BLOCK)
        ra = (np.concatenate([blk1, blk2])[:, None] * BLOCK + np.arange(BLOCK)).reshape(-1)
        da = np.concatenate([d1, d2]).reshape(-1)
        keep = np.isfinite(da) & ok[qa]
        out_p, out_d = _topk(qa[keep], self.spos[ra[keep]], da[keep], B, k, self.N)
        return ok, out_p, out_d

    def _pairs_d(self, yq, cq, qi, blk, emin, span):
        """Exact d of every row of the (query row, block) pairs -> (pairs, BLOCK), inf on padding."""
        sq, h = self._exact(yq, cq, qi, blk)
        if emin is not None:
            d = self._d(np.sqrt(sq), h, emin[qi][:, None], span[qi][:, None])
        else:
            d = self._d(np.sqrt(sq), h, None, None)
        return np.where(self.valid.reshape(self.nb, BLOCK)[blk], d, np.inf)

    def _hmin(self, cq):
        """(B, nb) fewest categorical mismatches of each query row with each block's tuples
        (computed once per distinct tuple of the query rows)."""
        B = len(cq)
        if not self.q:
            return np.zeros((B, self.nb))
        radix = cq.max(axis=0).astype(np.float64) + 1 if len(cq) else np.ones(self.q)
        if np.prod(radix) < 2.0 ** 62:                                                  # one exact int64 key
            key = np.zeros(B, dtype=np.int64)
            for j in range(self.q):
                key = key * int(radix[j]) + cq[:, j]
            _, first, inv = np.unique(key, return_index=True, return_inverse=True)
            uq = cq[first]
        else:
            uq, inv = np.unique(cq, axis=0, return_inverse=True)
        hq = np.zeros((len(uq), len(self.utup)), dtype=np.int16)                         # (Uq, U)
        for j in range(self.q):
            hq += uq[:, None, j] != self.utup[None, :, j]
        out = hq[:, self.btid[:, 0]]
        for t in range(1, self.btid.shape[1]):
            np.minimum(out, hq[:, self.btid[:, t]], out=out)
        out = out.astype(np.float64)
        out[:, self.bmixed] = 0.0
        return out[inv.reshape(-1)]

    def _d(self, e, h, emin, span):
        """d = (t + h) / n as ``PrunedIndex._d`` computes it (t = e' for paper, e for standardized)."""
        if self.paper:
            t = (e - emin) / np.where(span > 0, span, 1.0)
        else:
            t = e
        return (t + h) / self.n
