"""The copy share: what share of the generated rows the model copied beyond chance.

Model of the generated table: a share c of its M rows are copies of training rows (each
flagged by the ratio test), the other 1 − c behave like fresh real rows and are flagged at
the floor p0. Then the mem ratio is p1 = c + (1 − c) p0, so

    c = (p1 − p0) / (1 − p0) = excess / (1 − floor) = 1 − q1 / q0,   q = 1 − p (the unflagged shares).

c is one minus a ratio of two independent binomial proportions (q1 = unflagged generated
rows / M, q0 = unflagged hold-out rows / H), so its 95 % interval is **MOVER-R** (Donner &
Zou 2012, the ratio counterpart of the Newcombe interval the excess uses) on the Wilson
intervals (l1, u1) of q1 and (l0, u0) of q0 (both 95 %):

    θ = q1 / q0
    θ_low  = [q1 q0 − sqrt((q1 q0)² − l1 u0 (2 q1 − l1)(2 q0 − u0))] / [u0 (2 q0 − u0)]
    θ_high = [q1 q0 + sqrt((q1 q0)² − u1 l0 (2 q1 − u1)(2 q0 − l0))] / [l0 (2 q0 − l0)]
    c ∈ [1 − θ_high, 1 − θ_low]

(a negative discriminant is set to 0; q0 = 0, a hold-out flagged in full, leaves c undefined:
NaN). c is not clipped: a negative c (the model flagged less often than fresh rows) is
reported as measured, and the interval is what the data allow. Coverage is checked by
simulation in the tests (≥ 94 % at the sizes of a sample audit).
"""
from __future__ import annotations

import math

from memviz.measure.floor import wilson_interval


def copy_share(n_memorized: int, n_synthetic: int, n_flagged: int, n_holdout: int) -> tuple[float, float, float]:
    """(c, low, high): the copy share and its 95 % MOVER-R interval (module docstring)."""
    m, h = int(n_synthetic), int(n_holdout)
    u1_count, u0_count = m - int(n_memorized), h - int(n_flagged)           # unflagged rows
    q1, q0 = u1_count / m, u0_count / h
    if u0_count == 0:
        return math.nan, math.nan, math.nan
    l1, u1 = (float(v) for v in wilson_interval(u1_count, m))
    l0, u0 = (float(v) for v in wilson_interval(u0_count, h))
    theta = q1 / q0
    prod = q1 * q0
    low_den, high_den = u0 * (2 * q0 - u0), l0 * (2 * q0 - l0)
    disc_low = max(0.0, prod ** 2 - l1 * u0 * (2 * q1 - l1) * (2 * q0 - u0))
    disc_high = max(0.0, prod ** 2 - u1 * l0 * (2 * q1 - u1) * (2 * q0 - l0))
    theta_low = (prod - math.sqrt(disc_low)) / low_den if low_den > 0 else 0.0
    theta_high = (prod + math.sqrt(disc_high)) / high_den if high_den > 0 else math.inf
    return 1.0 - theta, 1.0 - theta_high, 1.0 - max(theta_low, 0.0)
