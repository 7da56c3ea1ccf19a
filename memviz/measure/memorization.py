"""The memorization metric of the reference papers.

A generated row g is a **copy** (memorized) of its nearest training row when

    r(g) = d(g, NN1) / d(g, NN2) < 1/3            (strict)

with d the paper's distance (see :mod:`memviz.engine.neighbors`). 0/0 (g equals a training
row that is duplicated) gives r = NaN: not memorized. d1 = 0 < d2 gives r = 0: memorized.

Summary figures over the M generated rows:

    mem_ratio = (1/M) · #{g : r(g) < 1/3}
    mem_auc   = ∫_0^1 MemRatio(τ) dτ = (1/M) · Σ_g (1 − r(g))   (non-finite r counts 0)
    mem_auc_trapezoid: the papers' approximation, the trapezoid rule on
              MemRatio(τ) = mean(r < τ) at τ ∈ linspace(0, 1, 10)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadTable
from memviz.tables.data import Table

THRESHOLD = 1.0 / 3.0


def ratio_from_distances(d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """r = d1 / d2 with 0/0 = NaN (d2 ≥ d1 ≥ 0, so d2 = 0 only when d1 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d2 > 0, d1 / np.where(d2 > 0, d2, 1.0), np.nan)


def is_memorized(ratio: np.ndarray, threshold: float = THRESHOLD) -> np.ndarray:
    """r < threshold, NaN is False."""
    with np.errstate(invalid="ignore"):
        return np.asarray(ratio < threshold)


def mem_auc(ratio: np.ndarray) -> float:
    """∫_0^1 MemRatio(τ) dτ = mean(1 − r), non-finite r counted as 0 (r ∈ [0, 1])."""
    r = np.asarray(ratio, dtype=float)
    if r.size == 0:
        return float("nan")
    return float(np.where(np.isfinite(r), 1.0 - r, 0.0).mean())


#: per-term Mem-AUC contributions are rounded to multiples of 1 / AUC_QUANTUM_INV (about 1e-9)
AUC_QUANTUM_INV = float(2 ** 30)


def auc_terms(ratio: np.ndarray) -> np.ndarray:
    """The Mem-AUC term of each generated row: ``1 - r``, 0 where r is NaN, on a 2**-30 grid.

    Mem-AUC(x) = sum over checks c and generated rows g with NN1(g) = x of (1 - r_c(g)).
    Quantized to multiples of 2**-30, every sum of up to 2**23 terms is exact in float64,
    hence independent of the order of the rows (ties rank the same). Shape: (S,) -> (S,).
    """
    ratio = np.asarray(ratio, dtype=np.float64)
    one_minus_r = np.where(np.isfinite(ratio), 1.0 - ratio, 0.0)
    return np.round(one_minus_r * AUC_QUANTUM_INV) / AUC_QUANTUM_INV


def mem_auc_trapezoid(ratio: np.ndarray, points: int = 10) -> float:
    """The papers' approximation: trapezoid of mean(r < τ) over τ = linspace(0, 1, points)."""
    r = np.asarray(ratio, dtype=float)
    if r.size == 0:
        return float("nan")
    taus = np.linspace(0.0, 1.0, points)
    with np.errstate(invalid="ignore"):
        curve = np.array([(r < t).mean() for t in taus])
    return float(np.sum((curve[1:] + curve[:-1]) * np.diff(taus) / 2.0))


@dataclass(frozen=True)
class MemorizationResult:
    """Per generated row (arrays of length M, in input order) and summary figures.

    nn1, nn2 : training row_ids of the nearest and second nearest rows.
    nn1_pos, nn2_pos : their 0-based positions in the training table.
    d1, d2, ratio, memorized : distances, r = d1 / d2 (NaN for 0/0), r < 1/3.
    """

    nn1: np.ndarray
    nn2: np.ndarray
    nn1_pos: np.ndarray
    nn2_pos: np.ndarray
    d1: np.ndarray
    d2: np.ndarray
    ratio: np.ndarray
    memorized: np.ndarray
    distance: str = "paper"
    n_train: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def n_synthetic(self) -> int:
        return len(self.ratio)

    @property
    def mem_ratio(self) -> float:
        return float(self.memorized.mean()) if len(self.memorized) else float("nan")

    @property
    def mem_auc(self) -> float:
        return mem_auc(self.ratio)

    @property
    def mem_auc_trapezoid(self) -> float:
        return mem_auc_trapezoid(self.ratio)

    def summary(self) -> dict:
        return {"mem_ratio": self.mem_ratio, "mem_auc": self.mem_auc,
                "mem_auc_trapezoid": self.mem_auc_trapezoid, "n_train": self.n_train,
                "n_synthetic": self.n_synthetic, "distance": self.distance, "seconds": self.seconds}

    def to_frame(self, positions: bool = False) -> pd.DataFrame:
        """One row per generated row; ``positions=True`` reports nn1/nn2 as training positions."""
        return pd.DataFrame({
            "nn1": self.nn1_pos if positions else self.nn1,
            "nn2": self.nn2_pos if positions else self.nn2,
            "d1": self.d1, "d2": self.d2, "ratio": self.ratio, "memorized": self.memorized,
        })


def memorization(train: Table, synthetic: pd.DataFrame | Table, *, distance: str = "paper",
                 device: str = "auto", engine: NeighborEngine | None = None,
                 progress: Callable[[int, int], None] | None = None) -> MemorizationResult:
    """Measure which generated rows copy a training row.

    Parameters
    ----------
    train : the training table (its row_ids are reported in ``nn1``/``nn2``).
    synthetic : generated rows with the training schema's columns (original units).
    distance : ``"paper"`` (default) or ``"standardized"``.
    engine : a fitted :class:`NeighborEngine` on ``train`` to reuse across calls
        (the warm-up tracker fits one and reuses it at every check).
    """
    t0 = time.perf_counter()
    if engine is None:
        engine = NeighborEngine(distance=distance, device=device).fit(train)
    if len(train) < 2:
        raise BadTable(f"{train.source}: at least 2 training rows are needed for NN1 and NN2")
    nb = engine.kneighbors(synthetic, k=2, progress=progress)
    d1, d2 = nb.dist[:, 0], nb.dist[:, 1]
    ratio = ratio_from_distances(d1, d2)
    return MemorizationResult(nn1=nb.row_id[:, 0], nn2=nb.row_id[:, 1], nn1_pos=nb.pos[:, 0],
                              nn2_pos=nb.pos[:, 1], d1=d1, d2=d2, ratio=ratio,
                              memorized=is_memorized(ratio), distance=engine.distance,
                              n_train=engine.n_reference_, seconds=time.perf_counter() - t0,
                              extra={"n_exhaustive": nb.n_exhaustive})
