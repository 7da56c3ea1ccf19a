"""The dense exact pass on the CPU, in numpy: query rows in blocks against all N reference rows.

The same pass as the CUDA one (:mod:`memviz.engine.densetorch`, the module docstring of
:mod:`memviz.engine.neighbors`), without torch, so that a CPU audit needs no deep-learning
library. Per block of b query rows, in a (b, N) float64 buffer:

    e(x)  = sqrt(sum_j (g_j - x_j)^2)      scipy's ``cdist``: direct differences, the p squares
                                            summed left to right (the float64 loop's order)
    e'(x) = (e - min e) / (max e - min e)  paper distance, 0 / 1 where max = min
    s(x)  = e'(x) + h(x)                   h: category mismatches, counted column by column
    d(x)  = s(x) / n

then the kc smallest s per row (two stages: block minima, then inside the kc chosen blocks),
ordered by (d, position), with ties at the k-th d resolved from the full row. Where coordinates
span more than float64's squares hold, e = 2^a·sqrt(sum_j ((g_j - x_j)·2^-a)^2) with
2^a ≥ max_j |g_j - x_j| per pair (:func:`scaled_e`): exact power-of-two scaling.

Shapes in comments: b query rows, N reference rows, k neighbours kept, kc candidates per row.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

TINY_EXP = -450   # a nonzero coordinate below 2^-450 may lose its square to underflow


def tiny_rows(y: np.ndarray) -> np.ndarray:
    """(n,) rows with a nonzero coordinate below 2^TINY_EXP. Where neither row of a pair
    has one, distinct coordinates differ by at least 2^(TINY_EXP - 52), so no square of a
    difference underflows (and none overflows: coordinates stay below 2^501), and the
    plain sum of squares is exact to float64 rounding."""
    a = np.abs(y)
    return ((a > 0) & (a < 2.0 ** TINY_EXP)).any(axis=1)


def codes_by_column(cat: np.ndarray) -> np.ndarray:
    """(N, q) category codes -> (q, N) contiguous, in int16 where they fit (else int32)."""
    small = np.int16 if cat.size == 0 or cat.max() < 2 ** 15 else np.int32
    return np.ascontiguousarray(cat.T, dtype=small)


def count_mismatches(x: np.ndarray, g: np.ndarray, out: np.ndarray | None = None,
                     scratch: np.ndarray | None = None) -> np.ndarray:
    """(b, N) h[i, n] = #{j : g_ij != x_jn}: category mismatches of b query rows (codes (b, q))
    against N reference rows (codes (q, N), small integers, all >= 0), counted one column at a
    time into a (b, N) uint8 (int16 from 256 columns); code -1 (a category unseen in the
    reference) matches nothing, since no reference code is -1. On 2 cores about 4x a float32
    one-hot product of the same counts."""
    q, N = x.shape
    b = g.shape[0]
    dtype = np.uint8 if q < 256 else np.int16
    h = np.zeros((b, N), dtype=dtype) if out is None or out.dtype != dtype else out[:b]
    h[...] = 0
    m = np.empty((b, N), dtype=bool) if scratch is None else scratch[:b]
    g = g.astype(x.dtype, copy=False)
    for j in range(q):
        np.not_equal(x[j][None, :], g[:, j:j + 1], out=m)
        np.add(h, m, out=h, casting="unsafe")
    return h


def scaled_e(g: np.ndarray, x_t: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> None:
    """e = 2^a · sqrt(sum_j ((g_j - x_j) · 2^-a)^2) with 2^a ≥ max_j |g_j - x_j| per pair
    (b, N), written into ``out``: powers of two scale exactly, so this equals the plain
    sum wherever that neither underflows nor overflows, and stays exact where it would
    (coordinates spanning more than float64's squares can hold, e.g. 1e300 beside 1)."""
    p = x_t.shape[0]
    np.abs(np.subtract(g[:, :1], x_t[0], out=out), out=out)
    for j in range(1, p):
        np.maximum(out, np.abs(np.subtract(g[:, j:j + 1], x_t[j], out=tmp), out=tmp), out=out)
    _, a = np.frexp(out)                                                                 # (b, N) int32
    inv = np.ldexp(1.0, -a)                                                              # 2^-a, exact
    out[...] = 0.0
    for j in range(p):
        np.multiply(np.subtract(g[:, j:j + 1], x_t[j], out=tmp), inv, out=tmp)
        np.add(out, np.square(tmp, out=tmp), out=out)
    np.multiply(np.sqrt(out, out=out), np.ldexp(1.0, a), out=out)


def to_unit(e: np.ndarray, emin: np.ndarray, span: np.ndarray) -> np.ndarray:
    """e' = (e - min e) / (max e - min e) in place, rows (r, c) with (r, 1) min and span;
    where max = min every e equals min e, so e - min e = 0 and e' = 0 / 1."""
    np.subtract(e, emin, out=e)
    return np.divide(e, np.where(span > 0, span, 1.0), out=e)


def smallest(key: np.ndarray, kc: int, block: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The ``kc`` smallest values of each row and their positions, sorted by value.

    Two stages, exact: the minimum of every block of ``block`` columns (one vectorized
    pass), the kc smallest of those minima, then the kc smallest inside the kc chosen
    blocks. The kc smallest values always lie in the kc blocks with the smallest minima: a
    block left out has kc blocks with smaller minima, hence kc smaller values, before it.
    Which of several equal values is returned is unspecified (the caller resolves ties).
    """
    b, N = key.shape
    nb = N // block
    if nb < 4 * kc:
        pos = np.argpartition(key, kc - 1, axis=1)[:, :kc] if kc < N else np.broadcast_to(np.arange(N), (b, N))
        vals = np.take_along_axis(key, pos, axis=1)
    else:
        M = nb * block
        mins = key[:, :M].reshape(b, nb, block).min(axis=2)                              # (b, nb)
        if M < N:
            mins = np.concatenate([mins, key[:, M:].min(axis=1, keepdims=True)], axis=1)  # tail block
        blocks = np.argpartition(mins, kc - 1, axis=1)[:, :kc]                           # (b, kc)
        pos = (blocks[..., None] * block + np.arange(block)).reshape(b, -1)              # (b, kc·block)
        inside = pos < N
        np.minimum(pos, N - 1, out=pos)
        vals = np.where(inside, np.take_along_axis(key, pos, axis=1), np.inf)
        i = np.argpartition(vals, kc - 1, axis=1)[:, :kc]
        vals, pos = np.take_along_axis(vals, i, axis=1), np.take_along_axis(pos, i, axis=1)
    o = np.argsort(vals, axis=1, kind="stable")
    return np.take_along_axis(vals, o, axis=1), np.take_along_axis(pos, o, axis=1)


def sort_by_d_then_pos(pos: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order each row by distance, ties by ascending position (two stable sorts)."""
    o = np.argsort(pos, axis=1, kind="stable")
    pos, d = np.take_along_axis(pos, o, axis=1), np.take_along_axis(d, o, axis=1)
    o = np.argsort(d, axis=1, kind="stable")
    return np.take_along_axis(pos, o, axis=1), np.take_along_axis(d, o, axis=1)


def resolve_ties(d: np.ndarray, cand: np.ndarray, vals: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact first k (position, d) of rows whose value at rank k ties past their
    candidate list: the candidates strictly below that value (all of them are listed),
    then the lowest positions holding it, read from the full (r, N) rows ``d``."""
    r, N = d.shape
    t = vals[:, k - 1:k]                                                                 # (r, 1) the tied value
    n_less = (vals[:, :k] < t).sum(axis=1, keepdims=True)                                # (r, 1)
    eq = np.where(d == t, np.arange(N), N)                                               # (r, N)
    eq_pos = np.sort(np.partition(eq, k - 1, axis=1)[:, :k] if k < N else eq, axis=1)    # (r, k) lowest
    j = np.arange(k)[None, :]                                                            # (1, k)
    from_eq = j >= n_less
    eq_idx = np.maximum(j - n_less, 0)
    pos = np.where(from_eq, np.take_along_axis(eq_pos, eq_idx, axis=1), cand[:, :k])
    val = np.where(from_eq, t, vals[:, :k])
    return pos, val


class CpuDense:
    """The reference rows laid out for the dense pass on the CPU.

    Parameters
    ----------
    y : (N, p) float64 coordinates of the distance (``NeighborEngine._coords``).
    cat : (N, q) int category codes (>= 0).
    paper : the paper distance (per-row min-max of e) rather than the standardized one.
    n_candidates : smallest values kept per row before the tie check (>= k + 1 is used).
    """

    def __init__(self, y: np.ndarray, cat: np.ndarray, paper: bool, n_candidates: int):
        self.y = np.ascontiguousarray(y, dtype=np.float64)                               # (N, p)
        self.y_t = np.ascontiguousarray(self.y.T)                                        # (p, N)
        self.x_cat_t = codes_by_column(cat)                                              # (q, N)
        self.N, self.p = self.y.shape
        self.q = self.x_cat_t.shape[0]
        self.paper, self.n_candidates = paper, int(n_candidates)

    def workspace(self, b: int) -> dict:
        """Buffers reused by every block of b rows (fresh allocations page-fault each time)."""
        return {"b": b}

    def _buffer(self, ws: dict, name: str, b: int, dtype=np.float64) -> np.ndarray:
        if name not in ws:
            ws[name] = np.empty((ws["b"], self.N), dtype=dtype)
        return ws[name][:b]

    def block(self, y: np.ndarray, cat: np.ndarray, k: int, ws: dict,
              hypot: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """The k nearest of a block of b query rows by the float64 definition itself.

        ``hypot``: e by per-pair power-of-two scaling (:func:`scaled_e`). Returns (b, k)
        positions, (b, k) distances, and how many rows needed the full-row tie resolution.
        """
        N, p, q = self.N, self.p, self.q
        n = p + q
        g = np.ascontiguousarray(y, dtype=np.float64)                                    # (b, p)
        b = len(g)
        s = self._buffer(ws, "d", b)                                                     # (b, N)
        emin = span = None
        if p:
            if hypot:
                scaled_e(g, self.y_t, s, self._buffer(ws, "tmp", b))                     # e
            else:
                cdist(g, self.y, "euclidean", out=s)                                     # e, direct differences
            if self.paper:
                emin = s.min(axis=1, keepdims=True)                                      # (b, 1)
                span = s.max(axis=1, keepdims=True) - emin
                if q:
                    to_unit(s, emin, span)                                               # e'
        else:
            s[...] = 0.0
        if q:
            h = count_mismatches(self.x_cat_t, np.asarray(cat), self._buffer(ws, "h", b, np.uint8),
                                 self._buffer(ws, "m", b, bool))
            np.add(s, h, out=s)                                                          # s = e' + h
        # d is a monotone function of s (s / n; without categories, of e itself): the kc
        # smallest s hold the kc smallest d, and a row outside the list has d ≥ the list's last d
        kc = min(N, max(self.n_candidates, k + 1))
        vals, cand = smallest(s, kc)                                                     # (b, kc)
        if emin is not None and not q:
            vals = to_unit(vals, emin, span)
        cand, vals = sort_by_d_then_pos(cand, vals / n)
        ties = np.flatnonzero((vals[:, -1] == vals[:, k - 1]) & (kc < N))
        if len(ties):
            row = s[ties] if emin is None or q else to_unit(s[ties], emin[ties], span[ties])
            cand[ties, :k], vals[ties, :k] = resolve_ties(row / n, cand[ties], vals[ties], k)
        return np.ascontiguousarray(cand[:, :k]), np.ascontiguousarray(vals[:, :k]), len(ties)
