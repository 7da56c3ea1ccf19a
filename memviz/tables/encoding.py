"""Turning table cells into the arrays of the distance: canonical categories, imputed numericals."""
from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

MISSING = "\x00<missing>"


def canonical_value(v) -> str:
    """One canonical string per category value, so that equal meanings compare equal.

    ``1``, ``1.0``, ``"1"`` and ``"1.0"`` all become ``"1"``; ``True`` and ``"True"``
    become ``"True"``; a missing value (NaN, None, pd.NA) becomes one "missing" category.
    """
    if v is None or v is pd.NA or v is pd.NaT:
        return MISSING
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return MISSING
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**63 else repr(float(v))
    s = str(v).strip()
    if s == "":
        return MISSING
    try:
        f = float(s)
    except ValueError:
        return s
    if math.isfinite(f) and f.is_integer() and s.lstrip("+-").replace(".", "", 1).isdigit():
        return str(int(f))
    return s


#: the factorizations shared inside :func:`shared_factorizations` (None outside it)
_SHARED: contextvars.ContextVar = contextvars.ContextVar("memviz_shared_factorizations", default=None)


@contextmanager
def shared_factorizations():
    """Inside this block each column is factorized once: :func:`_distinct` keeps its answer per
    column memory (the address, shape, strides and dtype of a numpy-backed column's values, the
    values themselves held so the address stays theirs), so engines fitted on and queried with the
    same frames (or frames sharing their columns' memory) each read it instead of factorizing the
    strings again. The frames must not be modified inside the block. A thread started inside it
    shares the memo when run through :func:`contextvars.copy_context` (``copy_context().run``).
    Nested blocks use the outermost one's memo."""
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _memo_key(s: pd.Series):
    """(key, values) of a column whose values are a numpy array (no copy made), else (None, None)."""
    if not isinstance(s.dtype, np.dtype):
        return None, None
    v = s.to_numpy(copy=False)
    return (v.__array_interface__["data"][0], v.shape, v.strides, v.dtype.str), v


def _distinct(s: pd.Series) -> tuple[np.ndarray, list[str]]:
    """One factorization of a column: (n,) the index of each cell's distinct value (-1: NaN,
    None, pd.NA) and the canonical value of each distinct value, in order of first appearance.
    Inside :func:`shared_factorizations`, computed once per column (the codes then read-only)."""
    memo = _SHARED.get()
    key, values = _memo_key(s) if memo is not None else (None, None)
    if key is not None and key in memo:
        _, codes, canon = memo[key]
        return codes, list(canon)
    codes, uniques = pd.factorize(s.to_numpy(dtype=object), use_na_sentinel=True)
    canon = [canonical_value(u) for u in uniques]
    if key is not None:
        codes.setflags(write=False)
        memo[key] = (values, codes, tuple(canon))
    return codes, canon


_PHI = 0x9E3779B97F4A7C15   # 2^64 / golden ratio: column j's offset j·φ


def column_salt(j: int) -> int:
    """Column j's offset j · φ mod 2⁶⁴ (φ = 2⁶⁴ / the golden ratio): what keeps equal values of two columns
    apart in a row's hash."""
    return j * _PHI % 2 ** 64


def splitmix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer, elementwise on uint64 (wrapping): a bijection that spreads nearby keys."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def canonical_series(s: pd.Series) -> np.ndarray:
    """Canonical strings of a column, computed once per distinct value."""
    codes, canon = _distinct(s)
    return np.array(canon + [MISSING], dtype=object)[codes]  # sentinel -1 picks the trailing MISSING


def _vocabulary(s: pd.Series) -> dict:
    """Canonical value -> code, codes in the order of each canonical value's first appearance
    (``pd.unique(canonical_series(s))``), from one factorization: the distinct values come in
    order of first appearance, so each canonical value's first row is that of its first
    distinct value, or the first missing cell's for the missing category."""
    codes, canon = _distinct(s)
    if len(codes) and codes.min() < 0:                                                # a missing cell: NaN, None
        at = int(np.argmax(codes < 0))
        canon.insert(len(np.unique(codes[:at])), MISSING)                             # after the values before it
    vocab: dict = {}
    for c in canon:
        vocab.setdefault(c, len(vocab))
    return vocab


@dataclass(frozen=True)
class Encoded:
    """Arrays of one table in the distance's coordinates.

    num : (n, p) float64, missing numericals replaced by the training mean.
    cat : (n, q) int64 category codes of the training vocabulary; -1 = unseen category.
    """

    num: np.ndarray
    cat: np.ndarray


def pow2_exponents(maxabs: np.ndarray) -> np.ndarray:
    """Per entry the integer a with maxabs / 2**a in [0.5, 1) (0 where maxabs is 0)."""
    m = np.asarray(maxabs, dtype=np.float64)
    _, a = np.frexp(m)
    return np.where(m > 0, a, 0).astype(np.int64)


@dataclass(frozen=True)
class Encoder:
    """Vocabulary and imputation values learnt from the training (reference) table.

    Numerical statistics are computed on each column divided by a power of two,
    ``2**exps[j]``, that brings its largest magnitude into [0.5, 1). That division is
    exact, so the figures equal the plain float64 ones wherever those are finite, and
    stay finite for any finite values (a plain mean or range of values near 1e308
    overflows).
    """

    num_cols: tuple[str, ...]
    cat_cols: tuple[str, ...]
    means: np.ndarray              # (p,) training means used for missing numericals (original units)
    exps: np.ndarray               # (p,) int: column j's statistics below are in units of 2**exps[j]
    mins: np.ndarray               # (p,) training minimum / 2**exps
    ranges: np.ndarray             # (p,) (training max - min) / 2**exps; 2**-exps (1 in original units) where 0
    vocab: tuple[dict, ...]        # per categorical column: canonical value -> code

    @classmethod
    def fit(cls, df: pd.DataFrame, num_cols, cat_cols) -> "Encoder":
        num = df.loc[:, list(num_cols)].to_numpy(dtype=np.float64) if num_cols else np.zeros((len(df), 0))
        p = num.shape[1]
        finite = np.where(np.isfinite(num), np.abs(num), 0.0)
        with np.errstate(all="ignore"):
            exps = pow2_exponents(finite.max(axis=0) if len(num) else np.zeros(p))
            u = np.ldexp(num, -exps)                                                   # (n, p) exact
            means = np.ldexp(np.nanmean(u, axis=0), exps) if p and len(num) else np.zeros(p)
        means = np.where(np.isfinite(means), means, 0.0)
        filled = np.where(np.isnan(u), np.ldexp(means, -exps), u)
        lo = filled.min(axis=0) if len(filled) else np.zeros(p)
        span = (filled.max(axis=0) - lo) if len(filled) else np.zeros(p)
        const = ~(span > 0)         # a constant column: range 1 in original units, as in the definition
        mins = np.where(const, np.ldexp(lo, exps), lo)
        exps = np.where(const, 0, exps)
        ranges = np.where(const, 1.0, span)
        vocab = tuple(_vocabulary(df[c]) for c in cat_cols)
        return cls(tuple(num_cols), tuple(cat_cols), means, exps, mins, ranges, vocab)

    @property
    def n_categories(self) -> np.ndarray:
        return np.array([len(v) for v in self.vocab], dtype=np.int64)

    def standardize(self, num: np.ndarray) -> np.ndarray:
        """(n, p) imputed values -> (value - min) / range per column (the standardized
        coordinates), computed in the scaled units so that nothing overflows on the way;
        a value too far outside the training range still gives +-inf."""
        with np.errstate(over="ignore", invalid="ignore"):
            return (np.ldexp(num, -self.exps) - self.mins) / self.ranges

    def transform(self, df: pd.DataFrame) -> Encoded:
        n = len(df)
        if self.num_cols:
            num = df.loc[:, list(self.num_cols)].to_numpy(dtype=np.float64)
            num = np.where(np.isnan(num), self.means, num)
        else:
            num = np.zeros((n, 0))
        cat = np.empty((n, len(self.cat_cols)), dtype=np.int64)
        for j, c in enumerate(self.cat_cols):
            cat[:, j] = self._codes(df[c], self.vocab[j])
        return Encoded(num, cat)

    @staticmethod
    def _codes(s: pd.Series, vocab: dict) -> np.ndarray:
        """(n,) codes of a column in ``vocab`` (-1: unseen), the canonical value and its code
        looked up once per distinct value (:func:`canonical_series`, without its (n,) strings)."""
        codes, canon = _distinct(s)
        return np.array([vocab.get(c, -1) for c in canon + [MISSING]], dtype=np.int64)[codes]  # -1: MISSING
