"""The floor: how often the metric flags real rows the model never saw, and what is above it.

The ratio test r = d(g, NN1) / d(g, NN2) < 1/3 is relative: it also flags real rows that
no model has seen (docs/method.md §7). Memorization is what a model adds **above** that floor,
against the same reference rows R and the same distance.

Notation: reference rows i = 1..N (the training table, or the kept rows after pruning;
arrays are aligned with their row_ids sorted ascending), H hold-out rows j (real rows
**not** in R: the test split, or a hold-out), r_j their ratio, NN1(j) their nearest
reference row, f_j = [r_j < 1/3] (NaN is not flagged); M generated rows.

Floor and excess
----------------
* floor        p0 = K / H,  K = Σ_j f_j, with a 95 % **Wilson score** interval
               (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = Φ⁻¹(0.975).
* excess       δ = p1 − p0, p1 = X / M the mem ratio, with **Newcombe's hybrid score**
               interval (Newcombe 1998, method 10), (l, u) the Wilson limits of each:
               L = δ − sqrt((p1 − l1)² + (u0 − p0)²),  U = δ + sqrt((u1 − p1)² + (p0 − l0)²).
  Given R (and the model), hold-out flags and generated flags are two independent binomial
  samples. Newcombe's interval accounts for both, keeps the Wilson asymmetry near 0 and 1,
  stays inside [−1, 1], and covered close to 95 % in his comparison of eleven methods over
  small, unequal samples (the Wald interval under-covers there); it is closed form and
  vectorises over checks.

Per reference row (from the hold-out)
-------------------------------------
* hits   h_i = #{j : NN1(j) = i, f_j}           flagged hold-out rows attributed to i
* nn1    n_i = #{j : NN1(j) = i}                 all hold-out rows attributed to i
* auc    a_i = Σ_{j : NN1(j) = i, r_j finite} (1 − r_j)   (per-row Mem-AUC, docs/method.md §2;
         each term rounded to a multiple of 2⁻³⁰ as in :mod:`memviz.dynamics.rows`)

The per-row null built on a floor (expected copies, p- and q-values, the expected Mem-AUC
rate) is in :mod:`memviz.measure.rownull`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadRunFolder, BadTable
from memviz.measure.nullfit import NullFit, fit_null
from memviz.measure.memorization import auc_terms
from memviz.tables.data import Table
from memviz.tables.holdout import REFERENCE, CheckedHoldout, checked_holdout

#: z for a two-sided 95 % interval, Φ⁻¹(0.975)
Z95 = 1.959963984540054
FORMAT = "memviz.measure.floor/1"


# ------------------------------------------------------------------ intervals
def wilson_interval(k, n, z: float = Z95):
    """Wilson score interval of a binomial proportion k / n (arrays broadcast), as (low, high)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * np.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))      # exact ends, not rounding residue
    high = np.where(k == n, 1.0, np.clip(centre + half, 0.0, 1.0))
    return low, high


def newcombe_interval(x1, n1, x0, n0, z: float = Z95):
    """Difference p1 − p0 of two independent proportions with Newcombe's hybrid score
    interval (module docstring), as (difference, low, high); arrays broadcast."""
    p1, p0 = np.asarray(x1, float) / np.asarray(n1, float), np.asarray(x0, float) / np.asarray(n0, float)
    l1, u1 = wilson_interval(x1, n1, z)
    l0, u0 = wilson_interval(x0, n0, z)
    d = p1 - p0
    return d, d - np.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2), d + np.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2)


@dataclass(frozen=True, eq=False)
class Floor:
    """The non-member baseline of one reference set and one distance.

    Attributes
    ----------
    distance : ``paper`` or ``standardized``.
    n_reference, n_holdout : N and H.
    n_flagged : K, flagged hold-out rows.
    floor, low, high : K / H and its 95 % Wilson interval.
    row_ids : (N,) int64 reference row_ids, ascending; the arrays below are aligned to it.
    hits, nn1 : (N,) int64 h_i and n_i.
    auc : (N,) float64 a_i.
    auc_sq_sum : Σ_j (1 − r_j)² over hold-out rows with finite r (for the credibility weight).
    null : the fitted :class:`NullFit`.
    n_identical : hold-out rows identical (in the distance's columns) to a reference row,
        natural duplicates of the population (0.1–1.4 % on the three tables).
    holdout_source, holdout_fingerprint, reference_fingerprint : provenance.
    seconds : time of the engine pass and fit.
    """

    distance: str
    n_reference: int
    n_holdout: int
    n_flagged: int
    floor: float
    low: float
    high: float
    row_ids: np.ndarray
    hits: np.ndarray
    nn1: np.ndarray
    auc: np.ndarray
    auc_sq_sum: float
    null: NullFit
    n_identical: int = 0
    holdout_source: str = ""
    holdout_fingerprint: str = ""
    reference_fingerprint: str = ""
    seconds: float = 0.0
    interval: str = "wilson"

    @property
    def ci(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def expected_rate(self) -> np.ndarray:
        """(N,) posterior mean E[π_i | h_i] = Σ_k w_k (α_k + h_i) / b_k."""
        a, b, w = self.null.components(self.n_holdout)                    # (K,) each
        return ((a[:, None] + self.hits) / b[:, None] * w[:, None]).sum(axis=0)

    @property
    def expected_auc_rate(self) -> np.ndarray:
        """(N,) τ_i, expected per-row Mem-AUC per generated row under the null (module docstring)."""
        z = self.null.auc_weight
        return z * self.auc / self.n_holdout + (1 - z) * self.null.auc_mean

    def to_dict(self) -> dict:
        """The figures (JSON-ready, no per-row arrays)."""
        return {"format": FORMAT, "distance": self.distance, "n_reference": self.n_reference,
                "n_holdout": self.n_holdout, "n_flagged": self.n_flagged, "floor": self.floor,
                "floor_ci": [self.low, self.high], "interval": self.interval, "n_identical": self.n_identical,
                "auc_sq_sum": self.auc_sq_sum, "null": self.null.to_dict(), "holdout_source": self.holdout_source,
                "holdout_fingerprint": self.holdout_fingerprint,
                "reference_fingerprint": self.reference_fingerprint, "seconds": self.seconds}

    def to_frame(self) -> pd.DataFrame:
        """Per reference row: row_id, hits, nn1, auc."""
        return pd.DataFrame({"row_id": self.row_ids, "hits": self.hits, "nn1": self.nn1, "auc": self.auc})

    @classmethod
    def from_stored(cls, info: dict, rows: pd.DataFrame) -> "Floor":
        """Rebuild from :meth:`to_dict` and :meth:`to_frame` (the stored null is reused as is)."""
        if info.get("format") != FORMAT:
            raise BadRunFolder(f"floor: not a {FORMAT} record")
        low, high = info["floor_ci"]
        return cls(info["distance"], int(info["n_reference"]), int(info["n_holdout"]), int(info["n_flagged"]),
                   float(info["floor"]), float(low), float(high), _frozen(rows["row_id"], np.int64),
                   _frozen(rows["hits"], np.int64), _frozen(rows["nn1"], np.int64), _frozen(rows["auc"], float),
                   float(info["auc_sq_sum"]), _null_fit(info["null"]), int(info.get("n_identical", 0)),
                   info.get("holdout_source", ""), info.get("holdout_fingerprint", ""),
                   info.get("reference_fingerprint", ""), float(info.get("seconds", 0.0)),
                   info.get("interval", "wilson"))


def positions(row_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Positions of ``ids`` in the sorted ``row_ids``."""
    pos = np.searchsorted(row_ids, ids)
    if np.any(row_ids[np.minimum(pos, len(row_ids) - 1)] != ids):
        raise BadOption("nearest-row ids that are not reference row_ids")
    return pos


def _null_fit(d: dict) -> NullFit:
    return NullFit(**{**d, "alphas": tuple(d["alphas"]), "weights": tuple(d["weights"])})


def _frozen(values, dtype) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(values, dtype=dtype))
    a.setflags(write=False)
    return a


def floor_from_attributions(reference_row_ids, nn1, ratio, *, distance: str, **provenance) -> Floor:
    """A :class:`Floor` from the hold-out rows' NN1 row_ids (H,) and ratios (H,).

    ``provenance``: n_identical, holdout_source, holdout_fingerprint, reference_fingerprint, seconds.
    """
    row_ids = np.sort(np.asarray(reference_row_ids, dtype=np.int64))          # (N,)
    ratio = np.asarray(ratio, dtype=float)                                     # (H,)
    h_total = len(ratio)
    if h_total == 0:
        raise BadTable("hold-out: no rows; the floor needs real rows outside the reference")
    pos = positions(row_ids, np.asarray(nn1, dtype=np.int64))                 # (H,)
    with np.errstate(invalid="ignore"):
        flagged = ratio < 1.0 / 3.0                                            # NaN is not flagged
    closeness = auc_terms(ratio)                                               # (H,)
    n = len(row_ids)
    hits = np.bincount(pos[flagged], minlength=n)                              # (N,)
    nn1_counts = np.bincount(pos, minlength=n)                                 # (N,)
    auc = np.bincount(pos, weights=closeness, minlength=n)                     # (N,)
    auc_sq_sum = float(np.sum(closeness ** 2))
    k = int(flagged.sum())
    low, high = wilson_interval(k, h_total)
    return Floor(distance, n, h_total, k, k / h_total, float(low), float(high), _frozen(row_ids, np.int64),
                 _frozen(hits, np.int64), _frozen(nn1_counts, np.int64), _frozen(auc, float), auc_sq_sum,
                 fit_null(hits, auc, auc_sq_sum, h_total), **provenance)


def holdout_floor(reference: Table, holdout: CheckedHoldout | Table | pd.DataFrame, *, distance: str = "paper",
                  engine=None, device: str = "auto") -> Floor:
    """The floor of ``reference``: the metric's flagged share of real rows outside it.

    Parameters
    ----------
    reference : the reference rows R (the training table, or the kept rows after pruning).
    holdout : **real rows the model never trained on** (the test split, or a hold-out cut
        from the data before training), with the reference's columns: a
        :class:`~memviz.tables.holdout.CheckedHoldout` checked against ``reference`` (used as is: its
        identical rows and fingerprints are read from it), else checked here by
        :func:`~memviz.tables.holdout.checked_holdout` in the floor's words. Never pass training
        rows: the floor would then measure the model's own training data. The obvious misuse
        (the reference itself, or a hold-out mostly made of reference rows) is refused.
    distance : ``paper`` or ``standardized``.
    engine : a :class:`~memviz.engine.neighbors.NeighborEngine` already fitted on ``reference``
        (the warm-up's), so that a floor costs one query pass and no second fit.
    device : for a new engine.

    Returns
    -------
    Floor
        K / H with its Wilson interval, per-row hits / nn1 / auc and the fitted null.

    Raises
    ------
    MemvizError
        An empty hold-out, missing or other columns, an engine of another reference or
        distance, or a hold-out that is the reference.
    """
    from memviz.engine.neighbors import NeighborEngine  # lazy: reading a run loads this module, not scipy
    from memviz.measure.memorization import memorization  # lazy: it loads the engine (scipy), as above

    t0 = time.perf_counter()
    if not (isinstance(holdout, CheckedHoldout) and holdout.train is reference and holdout.fingerprint):
        if engine is None:                                 # the distance's encoder: the door hashes with it
            engine = NeighborEngine(distance=distance, device=device).fit(reference)
        holdout = checked_holdout(reference, holdout, against=REFERENCE, encoder=engine.encoder_)
    hold = holdout.table
    if engine is None:
        engine = NeighborEngine(distance=distance, device=device).fit(reference)
    elif engine.distance != distance:
        raise BadOption(f"engine: uses the {engine.distance} distance, the floor asked for {distance}")
    elif engine.n_reference_ != len(reference) or not np.array_equal(engine.row_ids_, reference.row_ids):
        raise BadOption("engine: fitted on other rows than the reference")
    res = memorization(reference, hold, engine=engine)
    return floor_from_attributions(reference.row_ids, res.nn1, res.ratio, distance=distance,
                                   n_identical=holdout.n_identical, holdout_source=hold.source,
                                   holdout_fingerprint=holdout.fingerprint,
                                   reference_fingerprint=holdout.train_fingerprint,
                                   seconds=time.perf_counter() - t0)


# ------------------------------------------------------------------ excess
@dataclass(frozen=True)
class Excess:
    """Mem ratio above the floor: δ = p1 − p0 with Newcombe's hybrid score 95 % interval.

    mem_ratio : p1 = n_memorized / n_synthetic.  floor, floor_low, floor_high : p0 and its interval.
    excess, low, high : δ and its interval.
    """

    mem_ratio: float
    n_synthetic: int
    n_memorized: int
    floor: float
    floor_low: float
    floor_high: float
    n_holdout: int
    excess: float
    low: float
    high: float

    @property
    def ci(self) -> tuple[float, float]:
        return self.low, self.high

    def figures(self) -> dict:
        """The plain sentence's numbers (:func:`memviz.verdict.words.excess_sentence`), in percent and percentage
        points (1 decimal)."""
        pct = lambda v: round(100.0 * v, 1)                                    # noqa: E731
        return {"floor_pct": pct(self.floor), "floor_ci_pct": [pct(self.floor_low), pct(self.floor_high)],
                "mem_pct": pct(self.mem_ratio), "excess_points": pct(self.excess),
                "excess_ci_points": [pct(self.low), pct(self.high)], "n_holdout": self.n_holdout,
                "n_synthetic": self.n_synthetic}


def excess(mem_ratio: float, n_synthetic: int, floor: Floor) -> Excess:
    """Excess of a mem ratio over the floor (X = round(mem_ratio · n_synthetic) memorized rows)."""
    n = int(n_synthetic)
    if n < 1:
        raise BadOption(f"n_synthetic={n}: at least one generated row is needed")
    if not 0.0 <= float(mem_ratio) <= 1.0:
        raise BadOption(f"mem_ratio={mem_ratio}: must be between 0 and 1")
    x = int(round(float(mem_ratio) * n))
    d, lo, hi = newcombe_interval(x, n, floor.n_flagged, floor.n_holdout)
    return Excess(x / n, n, x, floor.floor, floor.low, floor.high, floor.n_holdout, float(d), float(lo), float(hi))


def excess_p_value(x1: int, n1: int, x0: int, n0: int) -> float:
    """One-sided p of "p1 = x1/n1 exceeds p0 = x0/n0" by Fisher's exact test: given the x = x1 + x0 flagged
    rows of the n1 + n0, x1 is hypergeometric under p1 = p0, and
    p = P(X1 >= x1) = Σ_{j >= x1} C(n1, j) C(n0, x − j) / C(n1 + n0, x)
    (1 when nothing or everything is flagged: no difference is possible). Exact, so it keeps its level where
    the score test's normal approximation did not: with almost every real row flagged (floor 99.7 %, H = 300)
    that test rejected 6.9 % of null tables at 5 % (``tests/measure/test_floor.py``)."""
    from scipy.stats import hypergeom  # lazy: reading a run (memviz.warmup.run) loads this module, not scipy

    x = x1 + x0
    if x <= 0 or x >= n1 + n0:
        return 1.0
    return float(min(1.0, hypergeom.sf(x1 - 1, n1 + n0, x, n1)))


def excess_columns(per_check: pd.DataFrame, floor: Floor) -> pd.DataFrame:
    """``per_check`` (with n_synthetic and n_memorized, as :func:`~memviz.dynamics.rows.check_summary`)
    plus floor, floor_low, floor_high, excess, excess_low, excess_high per check."""
    out = per_check.copy()
    d, lo, hi = newcombe_interval(per_check["n_memorized"].to_numpy(float), per_check["n_synthetic"].to_numpy(float),
                                  floor.n_flagged, floor.n_holdout)
    out["floor"], out["floor_low"], out["floor_high"] = floor.floor, floor.low, floor.high
    out["excess"], out["excess_low"], out["excess_high"] = d, lo, hi
    return out
