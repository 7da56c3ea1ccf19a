"""The dense exact pass's kernels in torch (what CUDA runs; they run on CPU tensors too, and the
tests compare them there with the numpy pass of :mod:`memviz.engine.cpudense`): per-pair scaled
distances, min-max scaling, a two-stage exact top-k and exact tie resolution. Shapes in comments:
b query rows, N reference rows, k neighbours kept, kc candidates per row."""
from __future__ import annotations

import torch

from memviz.engine.cpudense import TINY_EXP, codes_by_column, count_mismatches, tiny_rows  # noqa: F401


def scaled_to_unit(e: torch.Tensor, emin: torch.Tensor, span: torch.Tensor) -> torch.Tensor:
    """e' = (e - min e) / (max e - min e) in place, rows (r, c) with (r, 1) min and span;
    where max = min every e equals min e, so e - min e = 0 and e' = 0 / 1."""
    return e.sub_(emin).div_(torch.where(span > 0, span, torch.ones_like(span)))


def scaled_e(g: torch.Tensor, x_t: torch.Tensor, out: torch.Tensor, tmp: torch.Tensor) -> None:
    """e = 2^a · sqrt(sum_j ((g_j - x_j) · 2^-a)^2) with 2^a ≥ max_j |g_j - x_j| per pair
    (b, N), written into ``out``: powers of two scale exactly, so this equals the plain
    sum wherever that neither underflows nor overflows, and stays exact where it would
    (coordinates spanning more than float64's squares can hold, e.g. 1e300 beside 1)."""
    p = x_t.shape[0]
    torch.sub(g[:, :1], x_t[0], out=out).abs_()
    for j in range(1, p):
        torch.maximum(out, torch.sub(g[:, j:j + 1], x_t[j], out=tmp).abs_(), out=out)
    _, a = torch.frexp(out)                                                              # (b, N) int32
    inv = torch.ldexp(torch.ones_like(out), -a)                                          # 2^-a, exact
    out.zero_()
    for j in range(p):
        torch.sub(g[:, j:j + 1], x_t[j], out=tmp).mul_(inv)
        out.add_(tmp.square_())
    out.sqrt_().mul_(torch.ldexp(torch.ones_like(out), a))


def mismatch_counts(x_cat_t: torch.Tensor, g_cat: torch.Tensor) -> torch.Tensor:
    """(b, N) h[i, n] = #{j : g_ij != x_jn}: category mismatches of b query rows (codes (b, q))
    against N reference rows (codes (q, N), small integers, all >= 0), counted directly one
    column at a time into a (b, N) uint8 (int16 from 256 columns); code -1 (a category unseen
    in the reference) matches nothing, since no reference code is -1. On CPU in numpy (about
    20x torch's int64 form on 2 cores)."""
    q, N = x_cat_t.shape
    b = g_cat.shape[0]
    if x_cat_t.device.type == "cpu":
        return torch.from_numpy(count_mismatches(x_cat_t.numpy(), g_cat.cpu().numpy()))
    g = g_cat.to(x_cat_t.dtype)
    h = torch.zeros((b, N), dtype=torch.uint8 if q < 256 else torch.int16, device=x_cat_t.device)
    for j in range(q):
        h.add_(x_cat_t[j][None, :] != g[:, j:j + 1])
    return h


def smallest(key: torch.Tensor, kc: int, block: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``kc`` smallest values of each row and their positions, sorted (like ``topk``).

    Two stages, exact: the minimum of every block of ``block`` columns (one vectorized
    pass), ``topk`` over those minima, then ``topk`` inside the ``kc`` chosen blocks. The
    kc smallest values always lie in the kc blocks with the smallest minima: a block
    left out has kc blocks with smaller minima, hence kc smaller values, before it.
    On CPU this is several times cheaper than ``topk`` over the whole row. Which of
    several equal values is returned is unspecified (the caller resolves ties).
    """
    b, N = key.shape
    nb = N // block
    if nb < 4 * kc:
        return torch.topk(key, kc, dim=1, largest=False)
    M = nb * block
    mins = key[:, :M].view(b, nb, block).amin(dim=2)                                     # (b, nb)
    if M < N:
        mins = torch.cat([mins, key[:, M:].amin(dim=1, keepdim=True)], 1)               # tail block
    _, blocks = torch.topk(mins, kc, dim=1, largest=False)                               # (b, kc)
    pos = blocks[..., None] * block + torch.arange(block, device=key.device)             # (b, kc, block)
    inside = pos < N
    pos = pos.clamp_max_(N - 1).reshape(b, -1)                                           # (b, kc·block)
    vals = key.gather(1, pos).masked_fill_(~inside.reshape(b, -1), float("inf"))
    v, i = torch.topk(vals, kc, dim=1, largest=False)
    return v, pos.gather(1, i)


def sort_by_d_then_pos(pos: torch.Tensor, d: torch.Tensor):
    """Order each row by distance, ties by ascending position (two stable sorts)."""
    o = torch.argsort(pos, dim=1, stable=True)
    pos, d = torch.gather(pos, 1, o), torch.gather(d, 1, o)
    o = torch.argsort(d, dim=1, stable=True)
    return torch.gather(pos, 1, o), torch.gather(d, 1, o)


def resolve_ties(d: torch.Tensor, cand: torch.Tensor, vals: torch.Tensor, k: int):
    """The exact first k (d, position) of rows whose value at rank k ties past their
    candidate list: the candidates strictly below that value (all of them are listed),
    then the lowest positions holding it, read from the full (r, N) rows ``d``."""
    r, N = d.shape
    t = vals[:, k - 1:k]                                                                 # (r, 1) the tied value
    n_less = (vals[:, :k] < t).sum(1, keepdim=True)                                      # (r, 1)
    ar = torch.arange(N, device=d.device)
    eq_pos, _ = torch.topk(torch.where(d == t, ar, N), k, dim=1, largest=False)          # (r, k) lowest positions
    j = torch.arange(k, device=d.device)[None, :]                                        # (1, k)
    from_eq = j >= n_less
    eq_idx = (j - n_less).clamp_min(0)
    pos = torch.where(from_eq, eq_pos.gather(1, eq_idx), cand[:, :k])
    val = torch.where(from_eq, t.expand(-1, k), vals[:, :k])
    return pos, val
