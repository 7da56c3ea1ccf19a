"""The pruned nearest-neighbour search (CPU): candidates by categorical mismatch level.

Used by :class:`memviz.engine.neighbors.NeighborEngine` (``algorithm="pruned"``); same result
as its dense path. Notation as there: d·n = t(x) + h(x), with t = e' ∈ [0, 1] (paper)
or t = e ≥ 0 (standardized) and h the integer count of categorical mismatches.

Levels. Let h_(k) be the k-th smallest h over the reference rows (with repeats) and
L* = h_(k). The k rows of smallest h have d·n ≤ h_(k) + t, so with τ the k-th smallest
d·n among the rows of levels ≤ L*, a row of level L > L* can only enter the k nearest
when L + t(x) ≤ τ: for the paper distance, t ≤ 1 gives L ≤ L* + 1, and in practice
τ < L* + 1, so no row above L* counts. The rows of a level are found by hashing the
categorical tuples of the distinct reference tuples (groups): level 0 by the full tuple,
level 1 by the tuple with one column left out (q tables), level 2 with two left out
(q(q-1)/2 tables, when small); a hash match is verified on the codes. Rows above L* are
needed only when some L ≤ τ; they are then the rows within a numerical ball
(t(x) ≤ τ - L* - 1), found by a k-d tree and filtered by h.

Inside a level every row of a group has the same h, so only its k numerically nearest
can count: groups of at least ``BIG`` rows are searched by k-d tree (scipy's cKDTree)
for k + 1 rows, the list being complete when its last distance, less its rounding,
exceeds the k-th exact e; smaller groups are taken whole. The big groups share one
tree, each group lifted apart from the others by one more coordinate, so that one call
answers every (query row, big group) pair (``_big_tree``).

min e and max e (paper). min e: a k-d tree over all reference rows, the exact e of the
returned rows, complete under the same test. max e: a tree of boxes (median splits,
leaves of ~32 rows); a box is searched only where its farthest corner is at least the
best exact e found so far, starting from a few extreme rows. The bound needs no margin:
float64 rounding is monotone, so sum_j fl(x_j - g_j)^2 ≤ sum_j max(fl(lo_j - g_j)^2,
fl(hi_j - g_j)^2) when both sums run in the same order, which numpy's reduction over
the last axis of equal-shaped arrays does.

Every distance is then computed exactly as on the dense path (direct differences,
float64, squares summed over the last axis), so ties are exact. Query rows this search
cannot settle cheaply (h_(k) > 2, too many rows at the levels it needs, near ties among
the numerically nearest rows beyond ``cap`` rows (smaller ties are settled by a ball of the
k-d tree), max e spread over many boxes as in high-dimensional data)
are returned as not done and go to the dense path; once most rows of the finished
chunks have failed (the first ``PROBE`` rows are tried alone), the remaining chunks are
left to it as well.
"""
from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from memviz.engine.boxtree import BoxTree

BIG = 64          # groups with at least this many rows are searched by k-d tree (_big_tree)
CHUNK = 16384     # most query rows per task (fewer, larger tasks: fewer per-group calls per row)
CHUNK_MIN = 2048  # fewest query rows per task, unless fewer are left
PROBE = 256       # the first rows, tried alone: if most fail, the dense path takes all
LEAF = 32         # rows per leaf of the max-e box tree
#: build the level-2 tables when q(q-1)/2 · groups stays below this (about 24 bytes each: 384 MB at the
#: bound, 170 MB for 1,000,000 Adult-shaped rows, whose 195,901 groups had passed the earlier bound of
#: 4,000,000 and sent every query row two mismatches from its k nearest to the dense pass)
MAX_LEVEL2 = 16_000_000


class PrunedIndex:
    """The reference rows indexed for the pruned search.

    Parameters
    ----------
    y : (N, p) float64 coordinates of the distance (see ``NeighborEngine._coords``).
    cat : (N, q) int64 category codes (0 .. n_categories - 1).
    n_categories : (q,) category counts.
    distance : "paper" or "standardized".
    """

    def __init__(self, y: np.ndarray, cat: np.ndarray, n_categories: np.ndarray, distance: str,
                 groups: "PrunedIndex | None" = None):
        self.y = np.ascontiguousarray(y, dtype=np.float64)                              # (N, p)
        self.yT = np.ascontiguousarray(self.y.T)                                         # (p, N)
        self.N, self.p = self.y.shape
        self.q = cat.shape[1]
        self.n = self.p + self.q
        self.paper = distance == "paper"
        self.cat = np.ascontiguousarray(cat, dtype=np.int32)                            # (N, q)
        self.unseen = np.asarray(n_categories, dtype=np.int64)                          # code of an unseen value
        if groups is not None and groups.N == self.N and np.array_equal(groups.cat, self.cat):
            # the same rows' categorical groups and tables (another distance's index): shared
            for a in ("gcat", "rows", "gsize", "gstart", "mult", "tables", "max_level"):
                setattr(self, a, getattr(groups, a))
        else:
            self._groups()
        if self.p:
            self._big_tree()
            self.tree = cKDTree(self.y)                                                  # all rows
            if self.paper:
                self.boxes = BoxTree(self.y, LEAF)
        # rounding between cKDTree's distances and ours, relative (both within (p+2)·u of the truth)
        self.delta = 4.0 * (self.p + 4) * float(np.finfo(np.float64).eps)
        self.cap = max(1024, self.N // 8)                                                # rows per query, else dense

    # ------------------------------------------------------------ structures
    def _groups(self) -> None:
        """Groups: the distinct tuples and their rows in ascending position; the hash tables of
        the tuples with 0, 1 and 2 columns left out."""
        tuples, inverse = distinct_rows(self.cat, self.unseen)
        self.gcat = tuples                                                               # (U, q)
        self.rows = np.argsort(inverse, kind="stable")                                   # (N,) rows by group
        self.gsize = np.bincount(inverse, minlength=len(tuples))                         # (U,)
        self.gstart = np.concatenate([[0], np.cumsum(self.gsize)[:-1]])                  # (U,)
        rng = np.random.default_rng(0x5EED)
        self.mult = rng.integers(1, 2**63, self.q, dtype=np.uint64) * np.uint64(2) + np.uint64(1)  # odd
        gkey = self._keys(self.gcat)                                                     # (U,)
        self.tables = [self._table(gkey, ())]
        self.tables += [self._table(gkey, (j,)) for j in range(self.q)]
        if self.q >= 2 and self.q * (self.q - 1) // 2 * len(tuples) <= MAX_LEVEL2:
            self.tables += [self._table(gkey, (j, l)) for j in range(self.q) for l in range(j + 1, self.q)]
        self.max_level = max(len(t.cols) for t in self.tables)

    def _keys(self, codes: np.ndarray) -> np.ndarray:
        """(n, q) codes -> (n,) uint64 sum_j codes_j · mult_j (mod 2^64)."""
        with np.errstate(over="ignore"):
            return (codes.astype(np.uint64) * self.mult).sum(axis=1, dtype=np.uint64)

    def _drop(self, key: np.ndarray, codes: np.ndarray, cols) -> np.ndarray:
        """The key of the tuple with the columns ``cols`` left out."""
        with np.errstate(over="ignore"):
            for j in cols:
                key = key - codes[:, j].astype(np.uint64) * self.mult[j]
        return key

    def _table(self, gkey: np.ndarray, cols: tuple) -> "_Table":
        k = self._drop(gkey, self.gcat, cols)
        # groups by key; the order of groups sharing a key changes no result (candidates are
        # verified on the codes, and the k smallest (d, position) do not depend on their order),
        # and numpy's default sort is ~5x its stable one on 64-bit keys
        order = np.argsort(k)
        ks = k[order]
        start = np.flatnonzero(np.concatenate([[True], ks[1:] != ks[:-1]]))
        keys = ks[start]
        end = np.append(start[1:], len(order))
        rows = np.add.reduceat(self.gsize[order], start) if len(start) else np.zeros(0, dtype=np.int64)
        small = np.int32 if self.N < 2**31 else np.int64          # positions and counts: half the memory
        return _Table(cols, keys, start.astype(small), end.astype(small), rows.astype(small), order.astype(small))

    def _big_tree(self) -> None:
        """One k-d tree over the rows of every big group, each lifted by its group's own value
        of one more coordinate, b·LIFT (b: the group's rank among the big ones): two rows of one
        group share it exactly, so their distance is the plain one, while rows of two groups lie
        at least LIFT apart, more than any distance inside a group of finite coordinates near the
        reference rows'. So a query lifted by its group's value finds that group's nearest rows in
        one call for every (query row, big group) pair; a row of another group in its answer
        (a query row far outside the reference rows) is seen and that pair searched whole."""
        big = np.flatnonzero(self.gsize >= BIG)                                          # (G,)
        self.big_rank = np.full(len(self.gsize), -1, dtype=np.int64)
        self.big_rank[big] = np.arange(len(big))
        self.big_rows = (np.concatenate([self._group_rows(g) for g in big]) if len(big)
                         else np.zeros(0, dtype=np.int64))                               # (Nb,) by group
        self.big_group = np.repeat(big, self.gsize[big])                                 # (Nb,)
        self.lift = 4.0 * math.sqrt(self.p + 1) * (float(np.abs(self.y).max()) + 1.0)
        if len(big):
            self.big_kd = cKDTree(np.column_stack([self.y[self.big_rows], self._lifted(self.big_group)]))

    def _lifted(self, groups: np.ndarray) -> np.ndarray:
        return self.big_rank[groups].astype(np.float64) * self.lift

    def _group_rows(self, g: int) -> np.ndarray:
        return self.rows[self.gstart[g]:self.gstart[g] + self.gsize[g]]

    # --------------------------------------------------------------- search
    def kneighbors(self, y, cat, k, pos, dist, n_jobs, progress):
        """Fill pos/dist (M, k) for the query rows this search answers and return the (M,)
        mask of those rows. When most rows of the finished chunks fail (tables where the
        levels or the trees do not prune), the remaining chunks are left to the dense path."""
        M = len(y)
        done = np.zeros(M, dtype=bool)
        seen = [0, 0]                                                                    # rows tried, rows answered
        lock = threading.Lock()
        probe = min(M, PROBE)                                                            # tried first, alone
        # the rest in one task per thread, within [CHUNK_MIN, CHUNK] rows: each task's Python
        # steps (one tree query per group it meets) serve more rows, and threads share the GIL less
        chunk = min(CHUNK, max(CHUNK_MIN, -(-(M - probe) // max(1, n_jobs))))
        starts = [0] + list(range(probe, M, chunk))
        ends = starts[1:] + [M]

        def work(i):
            with lock:
                if seen[0] and seen[1] < seen[0] / 2:
                    return
            sl = slice(starts[i], ends[i])
            ok, p_, d_ = self._chunk(y[sl], cat[sl], k)
            idx = np.arange(sl.start, sl.stop)[ok]
            pos[idx], dist[idx], done[idx] = p_, d_, True
            with lock:
                seen[0] += sl.stop - sl.start
                seen[1] += len(idx)
            if progress is not None:
                progress(len(idx))

        work(0)
        if n_jobs > 1 and len(starts) > 2:
            with ThreadPoolExecutor(max_workers=min(n_jobs, len(starts) - 1)) as pool:
                list(pool.map(work, range(1, len(starts))))
        else:
            for i in range(1, len(starts)):
                work(i)
        return done

    def _e(self, g: np.ndarray, rows: np.ndarray, at: np.ndarray | None = None) -> np.ndarray:
        """Exact e for (n, p) query coordinates (or ``g[at]``) against reference rows (n,):
        sqrt of the sum over the last axis of the squared differences (the one formula used
        everywhere)."""
        return np.sqrt(self.squared_distances(g, rows, at))

    def squared_distances(self, g: np.ndarray, rows: np.ndarray, at: np.ndarray | None = None) -> np.ndarray:
        """Σ_j (y[rows, j] − g_j)², summed in numpy's own order (the box tree's leaves read it too)."""
        if self.p >= 8:                      # numpy's pairwise order over the last axis
            diff = self.y[rows] - (g if at is None else g[at])                           # (n, p)
            return np.square(diff, out=diff).sum(axis=-1)
        # below 8 terms numpy sums a row left to right: the same order, one column at a time
        # (contiguous gathers from the (p, N) copy, no (n, p) temporaries)
        s = None
        for j in range(self.p):
            d = self.yT[j][rows]
            d -= g[:, j] if at is None else g[at, j]
            np.square(d, out=d)
            if s is None:
                s = d
            else:
                s += d
        return s

    def _chunk(self, yq, cq, k):
        B, q = len(yq), self.q
        cq = np.where(cq >= 0, cq, self.unseen).astype(np.int32)                         # unseen: matches nothing
        # 1. rows per mismatch level from the tables, looked up only for the rows needing that level
        qkey = self._keys(cq)
        look = {}                                                                        # cols -> (rows, lo, hi), (B,)

        def lookup(t, idx):
            out = [np.zeros(B, dtype=np.int64) for _ in range(3)]
            for o, v in zip(out, t.lookup(self._drop(qkey[idx], cq[idx], t.cols))):
                o[idx] = v
            look[t.cols] = out

        lookup(self.tables[0], np.arange(B))
        c0 = look[()][0]
        have = c0.copy()                                                                 # rows at levels <= L
        lstar = np.where(have >= k, 0, -1)                                               # L* = h_(k)
        for L in (1, 2):
            need = np.flatnonzero(lstar < 0)
            if L > self.max_level or not len(need):
                break
            for t in self.tables:
                if len(t.cols) == L:
                    lookup(t, need)
            # a row of level L' appears in every table dropping its L' mismatching columns among others
            if L == 1:
                extra = sum(look[(j,)][0] - c0 for j in range(q))
            else:
                extra = sum(look[(j, l)][0] - look[(j,)][0] - look[(l,)][0] + c0
                            for j in range(q) for l in range(j + 1, q))
            have[need] += extra[need]
            lstar[need[have[need] >= k]] = L
        ok = (lstar >= 0) & (have <= 64 * self.cap)                                      # hopeless: dense
        # 2. groups at levels <= L*, verified on the codes
        qi, grp, h = [], [], []
        for t in self.tables:
            want = ok & (lstar >= len(t.cols))
            if not want.any():
                continue
            _, lo, hi = look[t.cols]
            owner, idx = _expand(lo[want], hi[want])
            if not len(owner):
                continue
            qs, gs = np.flatnonzero(want)[owner], t.order[idx]
            mism = self.gcat[gs] != cq[qs]                                               # (m, q)
            hh = mism.sum(axis=1)
            keep = hh == len(t.cols)
            for j in t.cols:
                keep &= mism[:, j]
            qi.append(qs[keep]), grp.append(gs[keep]), h.append(hh[keep])
        qi = np.concatenate(qi) if qi else np.zeros(0, dtype=np.int64)
        grp = np.concatenate(grp) if grp else np.zeros(0, dtype=np.int64)
        h = np.concatenate(h) if h else np.zeros(0, dtype=np.int64)
        sizes = self.gsize[grp]
        have = np.bincount(qi, weights=sizes, minlength=B)
        big = sizes >= max(BIG, k + 1) if self.p else np.zeros(len(grp), dtype=bool)
        work = np.bincount(qi, weights=np.where(big, 4 * (k + 1), sizes), minlength=B)
        ok &= (have >= k) & (work <= self.cap)
        sel = ok[qi]
        qi, grp, h, big = qi[sel], grp[sel], h[sel], big[sel]
        # 3. candidate rows: small groups whole (p = 0: their k lowest positions), big ones by k-d tree
        cand_q, cand_r, cand_h, cand_e = [], [], [], []
        small = ~big
        take = self.gsize[grp[small]] if self.p else np.minimum(self.gsize[grp[small]], k)
        owner, off = _expand(np.zeros(small.sum(), dtype=np.int64), take)
        sq = qi[small][owner]
        cand_q.append(sq), cand_r.append(self.rows[self.gstart[grp[small]][owner] + off])
        cand_h.append(h[small][owner])
        if self.p:
            cand_e.append(self._e(yq, cand_r[-1], at=sq))
        if big.any():
            qs, gs, hs = qi[big], grp[big], h[big]                                        # (m,) big pairs
            kk = k + 1                                                                   # ≤ BIG rows: every big group has them
            kd, ki = self.big_kd.query(np.column_stack([yq[qs], self._lifted(gs)]), k=kk)
            kd, ki = kd.reshape(len(qs), kk), ki.reshape(len(qs), kk)
            ki = np.minimum(ki, len(self.big_rows) - 1)                                  # (missing rows: Nb, none here)
            r = self.big_rows[ki]                                                        # (m, kk)
            e = self._e(np.repeat(yq[qs], kk, axis=0), r.reshape(-1)).reshape(len(qs), kk)
            kth = np.sort(e, axis=1)[:, k - 1]
            sure = (self.big_group[ki] == gs[:, None]).all(axis=1) & (kd[:, -1] * (1 - self.delta) > kth)
            cand_q.append(np.repeat(qs[sure], kk)), cand_r.append(r[sure].reshape(-1))
            cand_h.append(np.repeat(hs[sure], kk)), cand_e.append(e[sure].reshape(-1))
            for i in np.flatnonzero(~sure):                                              # near ties: the whole group
                rows_g = self._group_rows(gs[i])
                cand_q.append(np.full(len(rows_g), qs[i])), cand_r.append(rows_g)
                cand_h.append(np.full(len(rows_g), hs[i])), cand_e.append(self._e(yq[qs[i]][None, :], rows_g))
        cq_, cr, ch = np.concatenate(cand_q), np.concatenate(cand_r), np.concatenate(cand_h)
        ce = np.concatenate(cand_e) if self.p else np.zeros(len(cq_))
        # 4. min e and max e over all reference rows (paper)
        emin = emax = None
        if self.p and self.paper:
            emin, emax, unsure = self._extremes(yq, np.flatnonzero(ok), cq_, ce, B)
            ok[unsure] = False                                                           # the dense path does them
        # 5. exact d of the candidates, the k smallest (d, position) per query row; then the
        # rows above L* where the k-th d leaves room, and the k smallest again where any came
        d = self._d(ce, ch, cq_, emin, emax)
        out_p, out_d = smallest_k(cq_, cr, d, B, k, self.N)
        more_q, more_r, more_d = self._above(yq, cq, k, lstar, ok, out_d[:, k - 1], emin, emax)
        if len(more_q):
            at = np.unique(more_q)
            redo = np.isin(cq_, at)
            q2 = np.concatenate([cq_[redo], more_q])
            p2, d2 = smallest_k(q2, np.concatenate([cr[redo], more_r]), np.concatenate([d[redo], more_d]), B, k, self.N)
            out_p[at], out_d[at] = p2[at], d2[at]
        return ok, out_p[ok], out_d[ok]

    def _d(self, e, h, qi, emin, emax):
        """d = (t + h) / n for candidate pairs, exactly as the dense path computes it."""
        if not self.p:
            return h / self.n
        if self.paper:
            span = (emax - emin)[qi]
            t = (e - emin[qi]) / np.where(span > 0, span, 1.0)
        else:
            t = e
        return (t + h) / self.n

    def _extremes(self, yq, rows_ok, cand_q, cand_e, B):
        """Exact min e and max e (B,) of the query rows ``rows_ok`` over all reference
        rows, and the rows for which neither search could prove its answer (near ties of
        the nearest rows, or max e spread over too many boxes: high-dimensional data)."""
        emin = np.full(B, np.inf)
        emax = np.zeros(B)
        if not len(rows_ok):
            return emin, emax, 0
        np.minimum.at(emin, cand_q, cand_e)
        g = yq[rows_ok]
        kk = min(4, self.N)
        kd, ki = self.tree.query(g, k=kk)
        kd, ki = kd.reshape(len(g), kk), ki.reshape(len(g), kk)
        e = self._e(np.repeat(g, kk, axis=0), ki.reshape(-1)).reshape(len(g), kk)
        lo = np.minimum(emin[rows_ok], e.min(axis=1))
        sure = (lo == 0) | (kk == self.N) | (kd[:, -1] * (1 - self.delta) > lo)
        # near ties: the kk nearest are as near as the nearest (many reference rows share its numbers, as
        # they do by the million). Every row whose exact e could be below lo lies within lo·(1 + δ) by the
        # tree's own distance, so the rows of that ball settle min e; a ball beyond the cap goes dense
        tie = np.flatnonzero(~sure)
        if len(tie):
            balls = self.tree.query_ball_point(g[tie], lo[tie] * (1 + 2 * self.delta))
            for i, ball in zip(tie, balls):
                if len(ball) <= self.cap:
                    if len(ball):
                        lo[i] = min(lo[i], float(self._e(g[i][None, :], np.asarray(ball, dtype=np.int64)).min()))
                    sure[i] = True
        hi, hard = self.boxes.farthest(self, g)
        emin[rows_ok], emax[rows_ok] = lo, hi
        return emin, emax, rows_ok[~sure | hard]

    def _above(self, yq, cq, k, lstar, ok, dk, emin, emax):
        """The rows of levels above L* that can still enter the k nearest, as (query row,
        reference row, d): level L counts only where fl(L / n) ≤ d_k (the k-th d so far),
        and then only rows with t ≤ n·d_k - L, inside a numerical ball around the query row."""
        none = np.zeros(0, dtype=np.int64)
        L = lstar + 1
        need = ok & (L <= self.q) & (L / self.n <= dk)
        if not need.any():
            return none, none, np.zeros(0)
        idx = np.flatnonzero(need)
        top = self.n * dk[idx]
        eps = float(np.finfo(np.float64).eps)
        room = np.maximum(top - L[idx] + 8 * eps * (top + L[idx]), 0.0) * (1 + 1e-9)      # t allowed above L*
        if self.p:
            r = room * (emax[idx] - emin[idx]) + emin[idx] if self.paper else room
            balls = self.tree.query_ball_point(yq[idx], r * (1 + self.delta) + 1e-300)
            eq = np.repeat(idx, [len(b) for b in balls])
            er = np.concatenate([np.asarray(b, dtype=np.int64) for b in balls])
        else:                                                                            # e = 0: every row
            eq, er = np.repeat(idx, self.N), np.tile(np.arange(self.N), len(idx))
        eh = (self.cat[er] != cq[eq]).sum(axis=1)
        keep = eh > lstar[eq]
        eq, er, eh = eq[keep], er[keep], eh[keep]
        ee = self._e(yq[eq], er) if self.p else np.zeros(len(eq))
        return eq, er, self._d(ee, eh, eq, emin, emax)


def smallest_k(qi: np.ndarray, pos: np.ndarray, d: np.ndarray, B: int, k: int, N: int):
    """The k smallest (d, position) per query row from candidate triples, each reference
    row at most once per query row: k rounds of per-row minima. (B, k) positions and d
    (-1 / inf where a row has fewer than k candidates)."""
    out_p = np.full((B, k), -1, dtype=np.int64)
    out_d = np.full((B, k), np.inf)
    alive = np.ones(len(d), dtype=bool)
    for r in range(k):
        best = np.full(B, np.inf)
        np.minimum.at(best, qi[alive], d[alive])
        tie = alive & (d == best[qi])
        first = np.full(B, N, dtype=np.int64)
        np.minimum.at(first, qi[tie], pos[tie])
        alive &= ~(tie & (pos == first[qi]))
        out_d[:, r] = best
        out_p[:, r] = np.where(first < N, first, -1)
    return out_p, out_d


def distinct_rows(cat: np.ndarray, sizes: np.ndarray):
    """(U, q) distinct rows of the codes (sorted) and (N,) the index of each row's."""
    n, q = cat.shape
    if not q:
        return np.zeros((1, 0), dtype=cat.dtype), np.zeros(n, dtype=np.int64)
    radix = sizes.astype(np.float64) + 1
    if np.prod(radix) < 2.0 ** 62:                                                      # one exact int64 key
        key = np.zeros(n, dtype=np.int64)
        for j in range(q):
            key = key * int(radix[j]) + cat[:, j]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return cat[first], inverse.reshape(-1)
    tuples, inverse = np.unique(cat, axis=0, return_inverse=True)
    return tuples, inverse.reshape(-1)


@dataclass(frozen=True)
class _Table:
    """Groups by the key of their tuple with the columns ``cols`` left out.

    keys : (V,) sorted distinct keys; start, end : (V,) the range of ``order`` (groups)
    holding each key; rows : (V,) reference rows in those groups.
    """

    cols: tuple
    keys: np.ndarray
    start: np.ndarray
    end: np.ndarray
    rows: np.ndarray
    order: np.ndarray

    def lookup(self, qk: np.ndarray):
        """(rows, lo, hi) per query key: rows with that key and their groups order[lo:hi]."""
        i = np.minimum(np.searchsorted(self.keys, qk), len(self.keys) - 1)
        found = self.keys[i] == qk
        return tuple(np.where(found, a[i], 0).astype(np.int64) for a in (self.rows, self.start, self.end))


def _expand(lo: np.ndarray, hi: np.ndarray):
    """Ranges [lo_i, hi_i) -> flat (owner i, element index) arrays."""
    n = hi - lo
    owner = np.repeat(np.arange(len(lo)), n)
    idx = np.arange(int(n.sum())) + np.repeat(lo - (np.cumsum(n) - n), n)
    return owner, idx
