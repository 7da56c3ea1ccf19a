"""The tree of boxes that gives the pruned search's exact max e (:mod:`memviz.engine.pruned`).

Median splits over the reference rows, leaves of about ``leaf`` rows; a box is searched only
where its farthest corner is at least the best exact e found so far (the bound and why it
needs no margin: the pruned module's docstring, "min e and max e").
"""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np


class ReferenceRows(Protocol):
    """What :meth:`BoxTree.farthest` reads of the index it serves (:class:`memviz.engine.pruned.PrunedIndex`
    is one): the reference rows' coordinates ``y`` (N, p) and their exact squared distances to query rows."""

    y: np.ndarray

    def squared_distances(self, g: np.ndarray, rows: np.ndarray) -> np.ndarray: ...


def _last_axis(x: np.ndarray, fn) -> np.ndarray:
    """fn-reduction over the last axis by halving (numpy reduces short last axes slowly)."""
    while x.shape[-1] > 1:
        w, h = x.shape[-1], x.shape[-1] // 2
        y = fn(x[..., :h], x[..., h:2 * h])
        if w % 2:
            y[..., :1] = fn(y[..., :1], x[..., -1:])
        x = y
    return x[..., 0]


class BoxTree:
    """Median-split boxes over the reference rows, for the exact max e of query rows."""

    def __init__(self, y: np.ndarray, leaf: int):
        N, p = y.shape
        self.depth = max(0, math.ceil(math.log2(max(N / leaf, 1))))
        self.leaf = math.ceil(N / 2 ** self.depth)
        perm = np.arange(2 ** self.depth * self.leaf) % N                              # padded with repeats
        yt = np.ascontiguousarray(y.T)                                                   # (p, N)
        for level in range(self.depth):                                                  # median splits
            seg = perm.reshape(2 ** level, -1)                                           # (segments, w)
            pts = yt[:, seg]                                                             # (p, segments, w)
            spread = _last_axis(pts, np.maximum) - _last_axis(pts, np.minimum)             # (p, segments)
            dim = np.argmax(spread, axis=0) if p else np.zeros(len(seg), dtype=int)
            vals = pts[dim, np.arange(len(seg))] if p else np.zeros(seg.shape)           # (segments, w)
            half = np.argpartition(vals, seg.shape[1] // 2 - 1, axis=1)
            perm = np.take_along_axis(seg, half, axis=1).reshape(-1)
        self.perm = perm
        self.levels = sorted({min(self.depth, 4)} | set(range(min(self.depth, 4), self.depth + 1, 3))
                             | {self.depth})
        self.lo, self.hi = {}, {}
        ordered = yt[:, perm]                                                            # (p, N')
        for t in self.levels:
            blocks = ordered.reshape(p, 2 ** t, -1)
            self.lo[t] = np.ascontiguousarray(_last_axis(blocks, np.minimum).T)          # (2^t, p)
            self.hi[t] = np.ascontiguousarray(_last_axis(blocks, np.maximum).T)
        # seeds: rows at the extremes of each coordinate and of a few directions, and the
        # rows farthest from the mean; their exact e starts the search
        rng = np.random.default_rng(1)
        dirs = np.concatenate([np.eye(p), -np.eye(p), rng.normal(size=(16, p))]) if p else np.zeros((0, 0))
        c = y - y.mean(axis=0)
        seeds = np.argmax(c @ dirs.T, axis=0) if p else np.zeros(0, dtype=np.int64)
        r2 = (c * c).sum(axis=1)
        far = np.argpartition(-r2, min(8, N) - 1)[:8]
        self.seeds = np.unique(np.concatenate([seeds, far]))
        self.max_pairs = 64                                                              # boxes per query row

    def farthest(self, index: ReferenceRows, g: np.ndarray):
        """(m,) exact max e of the query rows g (m, p), and the (m,) rows it gave up on
        (more than ``max_pairs`` boxes left at some level: the caller does a full pass)."""
        m, p = g.shape
        diff = index.y[self.seeds][None, :, :] - g[:, None, :]                          # (m, seeds, p)
        best = np.square(diff, out=diff).sum(axis=-1).max(axis=1)                        # (m,) sum of squares
        hard = np.zeros(m, dtype=bool)
        t0 = self.levels[0]
        a = np.square(self.lo[t0][None, :, :] - g[:, None, :])                           # (m, 2^t0, p)
        b = np.square(self.hi[t0][None, :, :] - g[:, None, :])
        bound = np.maximum(a, b, out=a).sum(axis=-1)                                     # ≥ every s in the box
        qi, node = np.nonzero(bound >= best[:, None])
        prev = t0
        for t in self.levels[1:]:
            fan = 2 ** (t - prev)
            qi = np.repeat(qi, fan)
            node = (np.repeat(node, fan) << (t - prev)) + np.tile(np.arange(fan), len(node))
            prev = t
            gq = g[qi]
            a = np.square(self.lo[t][node] - gq)
            b = np.square(self.hi[t][node] - gq)
            bound = np.maximum(a, b, out=a).sum(axis=-1)
            keep = bound >= best[qi]
            qi, node = qi[keep], node[keep]
            many = np.bincount(qi, minlength=m) > self.max_pairs
            if many.any():
                hard |= many
                drop = many[qi]
                qi, node = qi[~drop], node[~drop]
        # leaves: the exact e of their rows
        rows = self.perm[(node[:, None] * self.leaf + np.arange(self.leaf)).reshape(-1)]
        s = index.squared_distances(np.repeat(g[qi], self.leaf, axis=0), rows)
        np.maximum.at(best, np.repeat(qi, self.leaf), s)
        return np.sqrt(best), hard
