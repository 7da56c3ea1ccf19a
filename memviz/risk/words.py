"""Why a row is at risk, and what carries memorization, in the user's words (values redacted on request).

A factor is named for a row when the row is among the riskiest :data:`RISKIEST` of the table on it (its
percentile in the factor's risky direction), so "rare" and "isolated" are measured against the table itself:

* isolation: "4.1× as isolated as a typical row (its 5th-nearest other row 4.1× as far as the median row's);
  more isolated than 99 % of rows";
* rare pair: "rare combination: occupation = Armed-Forces with native-country = Cuba (1 of 250 rows)";
* rare value: "rare value: native-country = Holand-Netherlands (1 of 250 rows)";
* extreme number: "extreme value: capital-gain = 99,999 (the highest 0.4 % of rows)";
* duplicates (said whenever present): "2 exact duplicates in the table (the ratio test cannot single out a copy of
  it: its two nearest training rows are equally near)".

Redacted (:mod:`memviz.tables.redact`): categories become their keyed hashes and numbers the training table's
ranges, as everywhere else a row is shown.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memviz.risk.factors import RiskFactors
from memviz.tables.data import Table
from memviz.tables.redact import redact, redaction_bins

#: a factor is named for a row in the riskiest 10 % of the table on it
RISKIEST = 0.10


def _risk_pct(values: pd.Series, larger_is_riskier: bool) -> pd.Series:
    """Share of rows strictly less risky than each row (1 − share at least as risky)."""
    v = values.to_numpy(dtype=np.float64)
    s = np.sort(v)
    if larger_is_riskier:
        less = np.searchsorted(s, v, side="left")
    else:
        less = len(s) - np.searchsorted(s, v, side="right")
    return pd.Series(less / len(v), index=values.index)


def _shown_values(train: Table, row_id: int, redacted: bool, salt: str | None, bins: dict | None) -> pd.Series:
    """The row's values as the page shows them: raw, or redacted with the whole table's ranges."""
    cols = list(train.schema.columns)
    row = train.data.loc[[int(row_id)], cols]
    if redacted:
        row = redact(row, train.schema, bins=bins if bins is not None else redaction_bins(train.data, train.schema),
                     salt=salt)
    out = row.iloc[0]
    return out.map(_value_text)


def _value_text(v) -> str:
    if not isinstance(v, str) and pd.isna(v):
        return "missing"
    if isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer()
                                            and abs(v) < 1e15):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


def row_reasons(train: Table, factors: RiskFactors, row_id: int, *, redacted: bool = False, salt: str | None = None,
                bins: dict | None = None) -> list[str]:
    """Why this row is at risk (module docstring), riskiest reason first; [] when nothing stands out."""
    f = factors.frame
    row_id = int(row_id)
    if row_id not in f.index:
        raise KeyError(row_id)
    n = len(f)
    r = f.loc[row_id]
    vals = _shown_values(train, row_id, redacted, salt, bins)
    reasons = []
    iso = _risk_pct(f["isolation"], True).loc[row_id]
    if iso >= 1 - RISKIEST:
        ratio = r["isolation_ratio"]
        times = f"{ratio:.1f}×" if np.isfinite(ratio) else "far more"
        reasons.append((iso, f"{times} as isolated as a typical row (its {factors.k}{_th(factors.k)}-nearest other "
                             f"row {times} as far as the median row's); more isolated than {_share(iso, down=True)} of rows"))
    pair = _risk_pct(f["pair_rarity"], False).loc[row_id]
    if r["rarest_pair"] and pair >= 1 - RISKIEST:
        a, b = str(r["rarest_pair"]).split(" | ")
        k = int(round(r["pair_rarity"] * n))
        reasons.append((pair, f"rare combination: {a} = {vals[a]} with {b} = {vals[b]} ({k:,} of {n:,} rows)"))
    val = _risk_pct(f["value_rarity"], False).loc[row_id]
    if r["rarest_value_column"] and val >= 1 - RISKIEST:
        c = str(r["rarest_value_column"])
        k = int(round(r["value_rarity"] * n))
        reasons.append((val, f"rare value: {c} = {vals[c]} ({k:,} of {n:,} rows)"))
    ext = _risk_pct(f["extremeness"], False).loc[row_id]
    if r["extreme_column"] and ext >= 1 - RISKIEST:
        c = str(r["extreme_column"])
        x = pd.to_numeric(train.data[c], errors="coerce")
        side = "highest" if x.loc[row_id] >= x.median() else "lowest"
        reasons.append((ext, f"extreme value: {c} = {vals[c]} (the {side} {_share(r['extremeness'])} of rows)"))
    reasons.sort(key=lambda t: -t[0])
    out = [text for _, text in reasons]
    e = int(r["exact_duplicates"])
    if e:
        out.append(f"{e} exact duplicate{'s' * (e != 1)} in the table (the ratio test cannot single out a copy of "
                   "it: its two nearest training rows are equally near)")
    return out


def row_sentence(train: Table, factors: RiskFactors, row_id: int, **kw) -> str:
    """:func:`row_reasons` joined: "At risk: ...; ..." or that nothing stands out."""
    reasons = row_reasons(train, factors, row_id, **kw)
    if not reasons:
        return ("Nothing in the table alone sets this row apart: it is not among the 10 % most isolated, rarest or "
                "most extreme rows.")
    return "At risk: " + "; ".join(reasons) + "."


def _th(k: int) -> str:
    return {1: "st", 2: "nd", 3: "rd"}.get(k if k < 20 else k % 10, "th")


def _share(x: float, down: bool = False) -> str:
    """A share in words: "99 %", "0.4 %" (``down``: never rounded up, so 99.6 % of rows reads "99 %")."""
    p = 100 * float(x)
    if p >= 10 or p == int(p):
        return f"{math.floor(p) if down else round(p):.0f} %"
    return f"{p:.1g} %"
