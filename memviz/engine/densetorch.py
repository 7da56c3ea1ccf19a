"""The dense exact pass in torch: what the engine runs on a CUDA GPU.

The same pass as the CPU's numpy one (:mod:`memviz.engine.cpudense`; the algorithm in the module
docstring of :mod:`memviz.engine.neighbors`), with the category mismatches of many query rows
counted by one GEMM: h = q - (one-hot codes of the query rows) · (one-hot codes of the reference)^T,
small integers, exact in bfloat16 up to 256 columns. It runs on CPU tensors too (the tests compare
it there with the numpy pass, bit for bit). Imported only where a CUDA device is used.
"""
from __future__ import annotations

import threading

import numpy as np
import torch

from memviz.engine.kernels import (
    codes_by_column,
    mismatch_counts,
    resolve_ties,
    scaled_e,
    scaled_to_unit,
    smallest,
    sort_by_d_then_pos,
)

#: up to this many dense-path rows per query set, h is counted directly (no one-hot (K, N) table to build)
DIRECT_H_ROWS = 256


class TorchDense:
    """The reference rows as torch tensors on ``device`` for the dense pass.

    Parameters
    ----------
    y : (N, p) float64 coordinates of the distance; cat : (N, q) category codes (>= 0).
    n_categories : (q,) categories per column (the one-hot widths).
    paper : the paper distance (per-row min-max of e); n_candidates : as :class:`CpuDense`.
    device : a ``torch.device``.
    """

    def __init__(self, y: np.ndarray, cat: np.ndarray, n_categories: np.ndarray, paper: bool,
                 n_candidates: int, device):
        dev = self.device = device
        self.y = torch.as_tensor(np.ascontiguousarray(y), dtype=torch.float64, device=dev)    # (N, p)
        self.y_t = self.y.T.contiguous()                                                      # (p, N)
        self.x_cat_t = torch.as_tensor(codes_by_column(cat), device=dev)                      # (q, N)
        self.N, self.p = y.shape
        self.q = cat.shape[1]
        self.paper, self.n_candidates = paper, int(n_candidates)
        sizes = np.asarray(n_categories)
        self.offsets = torch.as_tensor(np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else
                                       np.zeros(0, dtype=np.int64), dtype=torch.int64, device=dev)
        self.n_onehot = int(sizes.sum())
        # h and matches are small exact integers: bfloat16 holds them exactly up to 256,
        # float32 up to 2**24. bfloat16 only on CUDA: a CPU without native bfloat16 (AVX2)
        # runs its GEMM ~10x slower than float32's (benchmarks/bench_evidence.py)
        self.onehot_dtype = torch.bfloat16 if self.q < 256 and dev.type == "cuda" else torch.float32
        self.q_full = torch.full((1, 1), float(self.q), dtype=self.onehot_dtype, device=dev)
        self._lock = threading.Lock()

    def prepare(self, m: int) -> None:
        """Before a query set sends ``m`` rows here: the reference's one-hot codes for the
        category GEMM, built once when m exceeds :data:`DIRECT_H_ROWS` (``x_onehot_t`` set last)."""
        if m <= DIRECT_H_ROWS or hasattr(self, "x_onehot_t"):
            return
        with self._lock:
            if not hasattr(self, "x_onehot_t"):
                self.x_onehot_t = self.onehot(self.x_cat_t.T.long()).T.contiguous()           # (K, N)

    def onehot(self, cat: torch.Tensor) -> torch.Tensor:
        """(n, q) codes -> (n, K) one-hot; code -1 (unseen category) matches nothing."""
        out = torch.zeros(cat.shape[0], self.n_onehot + 1, dtype=self.onehot_dtype, device=cat.device)
        if self.q:
            idx = torch.where(cat >= 0, cat + self.offsets, torch.full_like(cat, self.n_onehot))
            out.scatter_(1, idx, 1)
        return out[:, : self.n_onehot]

    def workspace(self, b: int) -> dict:
        """Buffers reused by every block of b rows (fresh allocations page-fault each time):
        the (b, N) h buffer now, float64 ones on first need (per-pair scaling, p = 0)."""
        return {"b": b, "h": torch.empty((b, self.N), dtype=self.onehot_dtype, device=self.device)}

    def _buffer(self, ws: dict, name: str, b: int) -> torch.Tensor:
        if name not in ws:
            ws[name] = torch.empty((ws["b"], self.N), dtype=torch.float64, device=self.device)
        return ws[name][:b]

    def block(self, y: np.ndarray, cat: np.ndarray, k: int, ws: dict,
              hypot: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """The k nearest of a block of b query rows by the float64 definition itself.

        ``hypot``: e by per-pair power-of-two scaling (:func:`scaled_e`). Returns (b, k)
        positions, (b, k) distances, and how many rows needed the full-row tie resolution.
        """
        with torch.no_grad():
            return self._block(y, cat, k, ws, hypot)

    def _block(self, y, cat, k, ws, hypot):
        dev, N, p, q = self.device, self.N, self.p, self.q
        n = p + q
        g = torch.as_tensor(y, dtype=torch.float64, device=dev)                             # (b, p)
        b = g.shape[0]
        s = self._buffer(ws, "d", b).zero_() if not p else None                             # (b, N)
        emin = span = None
        if p:
            if hypot:
                s = self._buffer(ws, "d", b)
                scaled_e(g, self.y_t, s, self._buffer(ws, "tmp", b))                       # e
            else:
                # e = sqrt(sum_j (g_j - x_j)^2) by direct differences in one kernel (no GEMM)
                s = torch.cdist(g[None], self.y[None], compute_mode="donot_use_mm_for_euclid_dist")[0]
            if self.paper:
                emin = s.amin(dim=1, keepdim=True)                                          # (b, 1)
                span = s.amax(dim=1, keepdim=True) - emin
                if q:
                    s = scaled_to_unit(s, emin, span)                                      # e'
        if q:
            gc = torch.as_tensor(cat, dtype=torch.int64, device=dev)                       # (b, q)
            if hasattr(self, "x_onehot_t"):   # h = q - matches in one GEMM: small integers, exact in bfloat16
                h = torch.addmm(self.q_full, self.onehot(gc).neg_(), self.x_onehot_t, out=ws["h"][:b])
            else:                             # few rows: counted directly, no one-hot table
                h = mismatch_counts(self.x_cat_t, gc)                                       # (b, N)
            s.add_(h)                                                                       # s = e' + h
        # d is a monotone function of s (s / n; without categories, of e itself): the kc
        # smallest s hold the kc smallest d, and a row outside the list has d ≥ the list's last d
        kc = min(N, max(self.n_candidates, k + 1))
        vals, cand = smallest(s, kc)                                                        # (b, kc)
        if emin is not None and not q:
            vals = scaled_to_unit(vals, emin, span)
        cand, vals = sort_by_d_then_pos(cand, vals / n)
        ties = torch.nonzero((vals[:, -1] == vals[:, k - 1]) & (kc < N)).flatten()
        if len(ties):
            row = s[ties] if emin is None or q else scaled_to_unit(s[ties].clone(), emin[ties], span[ties])
            cand[ties, :k], vals[ties, :k] = resolve_ties(row / n, cand[ties], vals[ties], k)
        return cand[:, :k].cpu().numpy(), vals[:, :k].cpu().numpy(), len(ties)


def cuda_chunk_elements(device) -> int:
    """Elements of one (query block × reference) block on a GPU: 2**27 or a 64th of its free
    memory, whichever is smaller (small blocks leave a GPU idle between kernel launches)."""
    free, _ = torch.cuda.mem_get_info(device)
    return int(max(1 << 20, min(1 << 27, free // 64)))
