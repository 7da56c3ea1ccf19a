"""Copies with one or two altered columns: rows equal to a training row in every column but one or two.

A generator that copies a training row and alters one cell (a missing value, a unit change, a rounding, a
shift) moves it far from that row under any distance: a cell multiplied by 1,000 or made missing puts the
copy nearer other rows than its source, so no distance-based test sees it (5 % verbatim copies with one
altered cell read "no copying"). A person sees it at once: the row matches its source cell for cell but one.
This module reads exactly that.

Notation: the distance columns j = 1..d (numerical and categorical, the target included), and per column a
**key** κ_j(x): for a categorical column its category (missing is a category of its own; a category the
training table lacks matches nothing); for a numerical column round(x / s_j), s_j its **resolution**, the
largest step 10^-e (e = 0..:data:`MAX_DECIMALS`) of which every training value is a multiple (1 for whole
numbers, 0.01 for cents), or the value itself when the training values have finer steps; a missing value is a
key of its own. Two rows are equal in column j when their keys are equal, so equality is read at the data's own
resolution (a generator's 37.0000001 equals 37).

For a row x, A(x) = min over training rows t of #{j : κ_j(x) ≠ κ_j(t)}: the fewest columns in which x differs
from a training row (0: equal to one at the data's resolution), found only up to :data:`MAX_ALTERED`. With one
64-bit hash per row, h(x) = Σ_j m(κ_j(x) + j·φ) (mod 2⁶⁴, m the splitmix64 finalizer), the hash without the
columns of a set S is h(x) − Σ_{j∈S} m(κ_j(x) + j·φ); x equals some training row outside S exactly when that
hash is among the training rows' hashes without S (then checked cell by cell, so a collision never counts).
So A(x) ≤ L costs Σ_{l ≤ L} C(d, l) sorted lookups, not a search over every training row. Level L is read only
when the table has at least :data:`MIN_COLUMNS` [L] distance columns (equal in all but two of four columns
means little); the position of the matched training row is the lowest one, the differing column the first
set S (in column order) that matched.

The training rows are read against each other too (:meth:`PartialIndex.leave_one_out`): A of training row i
among the other N − 1 rows (an exact twin gives 0), which tells how often real rows nearly repeat each other.
The test of the verdict's family (:func:`memviz.measure.tooclose.close_copy_test`) compares the share of generated
rows with 1 ≤ A ≤ L (and not identical) with the same share of real rows the model never saw.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.tables.encoding import canonical_series, column_salt, splitmix64

#: A is read up to this many differing columns
MAX_ALTERED = 2
#: level L (equal in all but L columns) is read only on tables with at least this many distance columns
MIN_COLUMNS = {1: 3, 2: 6}
#: a numerical column's resolution is searched down to 10^-MAX_DECIMALS
MAX_DECIMALS = 6
#: level 2 is left out when its lookups, C(d, 2) × (all rows searched), would exceed this (very wide tables)
MAX_LOOKUPS = 60_000_000
#: the key of a missing numerical value (no rounded value reaches it)
_MISSING_KEY = np.int64(-(2 ** 63))


def resolution(values: np.ndarray) -> float | None:
    """The largest step 10^-e, e = 0..:data:`MAX_DECIMALS`, of which every finite value is a multiple (within
    1e-9 of a step, relative), or None when the values are finer (they are then compared as they are)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if not len(v):
        return 1.0
    for e in range(MAX_DECIMALS + 1):
        step = 10.0 ** -e
        q = v / step
        if np.all(np.abs(q - np.round(q)) <= 1e-9 * np.maximum(1.0, np.abs(q))) and np.all(np.abs(q) < 2.0 ** 52):
            return step
    return None


def numeric_keys(values: np.ndarray, step: float | None) -> np.ndarray:
    """(n,) int64 key of each value at resolution ``step`` (module docstring): round(x / step), or the value's
    bits (None: compared as it is); missing values one key of their own, infinities theirs."""
    v = np.asarray(values, dtype=np.float64) + 0.0                                  # -0.0 -> 0.0
    miss = np.isnan(v)
    if step is None:
        out = np.where(miss, 0.0, v).view(np.int64).copy()
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            q = np.round(v / step)
        big = ~(np.abs(q) < 2.0 ** 62)                                              # also ±inf: their own bits
        out = np.where(big | miss, 0, q).astype(np.int64)
        out[big & ~miss] = v[big & ~miss].view(np.int64) | np.int64(1)              # never a small rounded key
    out[miss] = _MISSING_KEY
    return out


@dataclass(frozen=True, eq=False)
class PartialMatches:
    """What each query row is to the training rows (module docstring).

    altered : (n,) int8 A(x): 0 equal to a training row at the data's resolution, 1..:data:`MAX_ALTERED` equal
        in all but that many columns, −1 farther (or a level not read on this table).
    position : (n,) int64 the matched training row's position (−1: none).
    column : (n,) int64 the first differing column's index in :attr:`columns` (−1: none, or A = 0).
    columns : the distance columns, in key order.
    levels : the levels L read on this table (a subset of 1..:data:`MAX_ALTERED`).
    """

    altered: np.ndarray
    position: np.ndarray
    column: np.ndarray
    columns: tuple[str, ...]
    levels: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.altered)

    def take(self, rows) -> "PartialMatches":
        """The matches of these rows (positions into this set), in their order."""
        rows = np.asarray(rows)
        return PartialMatches(self.altered[rows], self.position[rows], self.column[rows], self.columns, self.levels)

    def concat(self, other: "PartialMatches") -> "PartialMatches":
        """These rows, then ``other``'s (matched against the same training rows)."""
        return PartialMatches(np.r_[self.altered, other.altered], np.r_[self.position, other.position],
                              np.r_[self.column, other.column], self.columns,
                              tuple(L for L in self.levels if L in other.levels))

    def within(self, level: int) -> np.ndarray:
        """(n,) bool: 1 ≤ A ≤ ``level`` (equal in all but at most ``level`` columns, and not in all)."""
        return (self.altered >= 1) & (self.altered <= level)


class PartialIndex:
    """The training rows' keys and hashes, ready to read A(x) of other rows (module docstring).

    Parameters
    ----------
    train : DataFrame of the training rows (the distance columns at least), in position order.
    numerical, categorical : the distance columns of each kind.
    """

    def __init__(self, train: pd.DataFrame, numerical, categorical):
        self.numerical, self.categorical = tuple(numerical), tuple(categorical)
        self.columns = self.numerical + self.categorical
        self.steps = tuple(resolution(pd.to_numeric(train[c], errors="coerce").to_numpy(dtype=np.float64))
                           for c in self.numerical)
        self.vocab = []
        for c in self.categorical:
            canon = pd.unique(canonical_series(train[c]))
            self.vocab.append({v: i for i, v in enumerate(canon)})
        self.keys = self.keys_of(train)                                             # (N, d)
        self.parts = self._parts(self.keys)                                         # (N, d) uint64
        self.hash = self.parts.sum(axis=1, dtype=np.uint64)                         # (N,) wraps mod 2^64
        d = len(self.columns)
        self.levels = tuple(L for L in range(1, MAX_ALTERED + 1) if d >= MIN_COLUMNS[L])

    def keys_of(self, frame: pd.DataFrame) -> np.ndarray:
        """(n, d) int64 keys of ``frame``'s rows (module docstring); a category the training rows lack is −1
        (it equals no training row)."""
        n = len(frame)
        out = np.empty((n, len(self.columns)), dtype=np.int64)
        for j, (c, step) in enumerate(zip(self.numerical, self.steps)):
            out[:, j] = numeric_keys(pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64), step)
        o = len(self.numerical)
        for j, (c, vocab) in enumerate(zip(self.categorical, self.vocab)):
            canon = canonical_series(frame[c])
            out[:, o + j] = pd.Series(canon).map(vocab).fillna(-1).to_numpy(dtype=np.int64)
        return out

    @staticmethod
    def _parts(keys: np.ndarray) -> np.ndarray:
        """(n, d) m(κ_j + j·φ): each cell's share of the row hash."""
        salts = np.array([column_salt(j) for j in range(keys.shape[1])], dtype=np.uint64)
        with np.errstate(over="ignore"):
            return splitmix64(keys.view(np.uint64) + salts[None, :])

    def levels_for(self, n_rows: int) -> tuple[int, ...]:
        """The levels read when ``n_rows`` rows are matched: :attr:`levels` less those whose lookups would
        exceed :data:`MAX_LOOKUPS`."""
        d = len(self.columns)
        return tuple(L for L in self.levels if math.comb(d, L) * (n_rows + len(self.hash)) <= MAX_LOOKUPS)

    def _subsets(self, levels):
        """The column sets S left out, level by level: () first, then every set of each level."""
        yield 0, ()
        for L in levels:
            for S in itertools.combinations(range(len(self.columns)), L):
                yield L, S

    def match(self, frame: pd.DataFrame) -> PartialMatches:
        """A(x) of every row of ``frame`` against the training rows (module docstring)."""
        return self.match_all([frame], loo=False)[0]

    def leave_one_out(self) -> PartialMatches:
        """A of each training row against the other training rows (an exact twin gives 0)."""
        return self.match_all([], loo=True)[0]

    def match_all(self, frames, loo: bool = False) -> list[PartialMatches]:
        """:meth:`match` of each frame, then :meth:`leave_one_out` when ``loo``, in one pass over the column sets:
        per set S, one hash table (``pandas.factorize``) of the training rows' hashes without S and every unmatched
        query row's, so that a query row's code below the training rows' count of distinct hashes is a hit."""
        queries = []
        for frame in frames:
            keys = self.keys_of(frame)
            queries.append(_Query(keys, self._parts(keys), exclude_self=False))
        if loo:
            queries.append(_Query(self.keys, self.parts, exclude_self=True))
        levels = self.levels_for(sum(len(q.keys) for q in queries))
        n = len(self.hash)
        for L, S in self._subsets(levels):
            live = [q for q in queries if len(q.todo)]
            if not live:
                break
            cols = list(S)
            with np.errstate(over="ignore"):
                pooled = [self.hash.copy()] + [q.hash[q.todo].copy() for q in live]
                for j in cols:                                                  # each hash without the cells of S
                    pooled[0] -= self.parts[:, j]
                    for h, q in zip(pooled[1:], live):
                        h -= q.parts[q.todo, j]
            codes, _ = pd.factorize(np.concatenate(pooled))
            table = _Table(codes[:n])
            start = n
            for q, h in zip(live, pooled[1:]):
                self._look_up(q, L, cols, table, codes[start:start + len(h)])
                start += len(h)
        return [PartialMatches(q.altered, q.position, q.column, self.columns, levels) for q in queries]

    def _look_up(self, q: "_Query", L: int, cols: list[int], table: "_Table", codes: np.ndarray) -> None:
        """Match ``q``'s unmatched rows (their hash codes ``codes`` without ``cols``) against the training rows'."""
        todo = q.todo
        present = codes < table.k
        c = np.where(present, codes, 0)
        first = table.first[c]
        if q.exclude_self:                                  # the row itself is among them: take another
            present &= table.count[c] >= 2
            first = np.where(first == todo, table.second[c], first)
        cand = np.flatnonzero(present)
        if not len(cand):
            return
        keep = np.ones(q.keys.shape[1], dtype=bool)
        keep[cols] = False
        ok = np.all(q.keys[todo[cand]][:, keep] == self.keys[first[cand]][:, keep], axis=1)   # no collision
        for i in np.flatnonzero(~ok):   # a 64-bit collision (about 2^-64 a pair): the other rows of equal hash
            row = int(todo[cand[i]])
            for t in np.flatnonzero(table.codes == codes[cand[i]]):
                if (t != row or not q.exclude_self) and np.array_equal(q.keys[row, keep], self.keys[t, keep]):
                    first[cand[i]], ok[i] = t, True
                    break
        hit = cand[ok]
        rows = todo[hit]
        q.altered[rows] = L
        q.position[rows] = first[hit]
        if L:
            q.column[rows] = cols[0] if L == 1 else self._first_differing(q.keys[rows], first[hit], cols)
        q.todo = np.delete(todo, hit)

    def _first_differing(self, keys: np.ndarray, positions: np.ndarray, cols: list[int]) -> np.ndarray:
        """The first column of ``cols`` in which each row differs from its matched training row."""
        diff = keys[:, cols] != self.keys[positions][:, cols]
        return np.asarray(cols)[np.argmax(diff, axis=1)]


class _Table:
    """The training rows' hash codes without one column set (codes 0..k−1, numbered in order of first appearance),
    with each code's first and second row (−1: none) and its count of rows."""

    def __init__(self, codes: np.ndarray):
        n = len(codes)
        self.codes = codes
        self.k = int(codes.max()) + 1 if n else 0
        new = np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]] if n else np.zeros(0, dtype=bool)
        self.first = np.flatnonzero(new)                                        # code i first appears there
        self.count = np.bincount(codes, minlength=self.k)
        rest = np.flatnonzero(~new)
        second = np.full(self.k, n, dtype=np.int64)
        np.minimum.at(second, codes[rest], rest)                                # the earliest other row
        self.second = np.where(second < n, second, -1)


class _Query:
    """One set of rows being matched: their keys, cell hashes and row hashes, what is found so far, and the rows
    still unmatched (``todo``)."""

    def __init__(self, keys: np.ndarray, parts: np.ndarray, exclude_self: bool):
        n = len(keys)
        self.keys, self.parts, self.exclude_self = keys, parts, exclude_self
        self.hash = parts.sum(axis=1, dtype=np.uint64)
        self.altered = np.full(n, -1, dtype=np.int8)
        self.position = np.full(n, -1, dtype=np.int64)
        self.column = np.full(n, -1, dtype=np.int64)
        self.todo = np.arange(n)


@dataclass(frozen=True, eq=False)
class PartialSet:
    """A(x) of the generated rows, of the hold-out's rows and of the training rows against each other
    (None: not read), against one :class:`PartialIndex`."""

    synthetic: PartialMatches
    holdout: PartialMatches
    loo: PartialMatches | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return self.synthetic.columns

    @property
    def levels(self) -> tuple[int, ...]:
        """The levels read for every set (a level left out for one is left out for all)."""
        sets = [self.synthetic, self.holdout] + ([self.loo] if self.loo is not None else [])
        return tuple(L for L in self.synthetic.levels if all(L in s.levels for s in sets))


def partial_matches(train: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, numerical, categorical,
                    loo: bool = True) -> PartialSet:
    """:class:`PartialSet` of ``synthetic`` and ``holdout`` against ``train`` (frames of the distance columns,
    ``train`` in position order), with the training rows against each other when ``loo``."""
    index = PartialIndex(train, numerical, categorical)
    found = index.match_all([synthetic, holdout], loo=loo)
    return PartialSet(found[0], found[1], found[2] if loo else None)
