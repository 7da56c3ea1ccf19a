"""The wide search's tests on its (blocks × query rows) bounds (:mod:`memviz.engine.wide`).

The bounds arrive as (nb, B) float32 arrays, block minima (or maxima) of t per block and
query row, with their (nt, B) extremes over tiles of nb / nt consecutive blocks. A test
against a per-query threshold runs on the tiles first and reads blocks only inside the tiles
that pass; thresholds are rounded outwards to float32 (:func:`f32`), so a test keeps every
entry the float64 test keeps. Results are keys query·nb + block, sorted.
"""
from __future__ import annotations

import numpy as np


def select(bt, bk, thr, nb, below):
    """Sorted keys query·nb + block of the (block, query) entries of bk (nb, B) at most
    (``below``) or at least thr (B,) float32, read only in the tiles whose extreme bt
    (nt, B) passes the test."""
    nt, B = bt.shape
    tile = bk.shape[0] // nt
    ti, qi = np.nonzero(bt <= thr if below else bt >= thr)
    sub = bk.reshape(-1, tile, B)[ti, :, qi]                                 # (P, tile)
    pi, j = np.nonzero(sub <= thr[qi, None] if below else sub >= thr[qi, None])
    return np.sort(qi[pi] * nb + ti[pi] * tile + j)


def tile_mismatches(hq, inv, nt):
    """(nt, B) the fewest mismatches of each query row's tuple (``inv`` into the (Uq, nb) block
    minima ``hq``) over each tile's blocks."""
    return hq.reshape(len(hq), nt, -1).min(axis=2)[inv].T


def select_h(bt, bk, thr, hq, inv, h_t):
    """Sorted keys query·nb + block of the entries of bk (nb, B) at most thr[h, query]
    ((q + 1, B) float64), h the block's fewest mismatches with the query row's tuple; read
    only in the tiles whose minimum bt (nt, B) is at most the threshold of the tile's
    fewest mismatches h_t (:func:`tile_mismatches`; float32, rounded up)."""
    nt, B = bt.shape
    tile = bk.shape[0] // nt
    ar = np.arange(B)
    th_t = f32(thr, up=True)[h_t, ar[None, :]]                                      # (nt, B)
    ti, qi = np.nonzero(bt <= th_t)
    blk = ti[:, None] * tile + np.arange(tile)                                       # (P, tile)
    sub = bk.reshape(-1, tile, B)[ti, :, qi]                                 # (P, tile) float32
    pi, j = np.nonzero(sub <= thr[hq[inv[qi][:, None], blk], qi[:, None]])           # float64, exact
    return np.sort(qi[pi] * tile * nt + blk[pi, j])


def first_blocks(bmin, bmin_t, ng2, w, hq, inv, h_t, kb):
    """Keys query·nb + block of kb blocks per query row of small estimated d lower bound,
    e_lo·w + h (their choice decides only how fast): the kb best tiles by the estimate
    from the tile's smallest t and fewest mismatches h_t (:func:`tile_mismatches`), then the
    kb best of their blocks."""
    nb, B = bmin.shape
    nt = bmin_t.shape[0]
    tile = nb // nt
    ar = np.arange(B)
    e_t = np.sqrt(np.maximum(bmin_t + ng2, 0.0)) * w                         # (nt, B)
    kt = min(nt, kb)
    best = np.argpartition(np.ascontiguousarray((e_t + h_t).T), kt - 1, axis=1)[:, :kt] if kt < nt else \
        np.broadcast_to(np.arange(nt)[None, :], (B, nt))                             # (B, kt) tiles
    ti = best.reshape(-1)                                                            # (B·kt,) query-major
    qi = np.repeat(ar, kt)
    blk = (ti[:, None] * tile + np.arange(tile)).reshape(B, kt * tile)               # (B, kt·tile)
    sub = bmin.reshape(nt, tile, B)[ti, :, qi].reshape(B, kt * tile)
    score = np.sqrt(np.maximum(sub + ng2[:, None], 0.0)) * w[:, None] + hq[inv[:, None], blk]
    m = min(kb, kt * tile)
    j = np.argpartition(score, m - 1, axis=1)[:, :m] if m < kt * tile else np.broadcast_to(np.arange(m), (B, m))
    return (ar[:, None] * nb + np.take_along_axis(blk, j, axis=1)).reshape(-1)


def f32(x: np.ndarray, up: bool) -> np.ndarray:
    """float64 -> float32 rounded up (``up``) or down: a float32 test against it keeps every
    float32 value the float64 test keeps."""
    y = x.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        bad = (y.astype(np.float64) < x) if up else (y.astype(np.float64) > x)
    return np.where(bad, np.nextafter(y, np.float32(np.inf if up else -np.inf)), y)


def kth(d: np.ndarray, qi: np.ndarray, B: int, k: int) -> np.ndarray:
    """(B,) the k-th smallest of the (P, m) values d of each query row (rows of d grouped by
    their sorted qi); inf where a query row has fewer than k."""
    cnt = np.bincount(qi, minlength=B)
    starts = np.cumsum(cnt) - cnt
    pad = np.full((B, max(1, int(cnt.max(initial=0))), d.shape[1]), np.inf)
    pad[qi, np.arange(len(qi)) - starts[qi]] = d
    pad = pad.reshape(B, -1)
    if pad.shape[1] < k:
        return np.full(B, np.inf)
    return np.partition(pad, k - 1, axis=1)[:, k - 1]
