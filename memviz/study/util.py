"""Small helpers of the study's tables."""
from __future__ import annotations

import math


def _float(x) -> float | None:
    """A finite float, or None (for JSON values that may be null, NaN or text)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _pct(x, signed=False) -> str:
    x = _float(x)
    if x is None:
        return "–"
    return f"{x * 100:+.1f}" if signed else f"{x * 100:.1f}"


def _pm(row: dict, key: str, signed=False) -> str:
    m, s = row.get(f"{key}_mean"), row.get(f"{key}_std")
    if _float(m) is None:
        return "–"
    return _pct(m, signed) + (f" ± {_pct(s)}" if _float(s) is not None else "")


def _num(x) -> str:
    x = _float(x)
    return "–" if x is None else f"{x:g}"


def _p(x) -> str:
    x = _float(x)
    return "–" if x is None else (f"{x:.1e}" if x < 1e-3 else f"{x:.3f}")
