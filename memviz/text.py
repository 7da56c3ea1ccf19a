"""Numbers and user text for people: the one formatter of every share, point, number, count and q-value,
and the one path that makes user text inert, wherever memviz shows it (dashboard, figures, report, CLI).

It sits at the base, below every figure it prints, so that every layer says a number the same way.

Numbers
-------
* :func:`percent` — a share (a fraction) as a number of percent with a unit (``" %"``, ``" points"``, or
  none for a table whose header carries it); :func:`percent_pm` — a mean ± sd over seeds;
* :func:`pct` — a share as a percentage, ``0.123 -> "12.3 %"``;
* :func:`points` — a difference of shares in percentage points, ``0.041 -> "+4.1 points"``;
* :func:`number` — a plain number (an AUC, a z statistic), ``0.6149 -> "0.61"``;
* :func:`count` — an integer count with thousands separators, ``3000.0 -> "3,000"``;
* :func:`qvalue` — a p- or q-value, ``2e-20 -> "< 0.001"``, ``0.0312 -> "0.031"``;
* :func:`seconds` — a duration, ``36.4743 -> "36 s"``, ``754 -> "12 min 34 s"``;
* :func:`check_name` — a warm-up check by its number, which counts from 0 as the run's files and
  ``--check`` do: ``check_name(11, 12) -> "check 11 of 0–11"`` beside "12 checks".

Every one answers :data:`MISSING` for a missing value (None, NaN, text that is no number).

User text
---------
Column names, category values, file names, the target and error messages come from the user.
:func:`inert` is the one rule behind every place they are shown: whitespace (line and
paragraph separators included) collapses to single spaces, and a bare URL, a ``www.`` address
or an e-mail address gets a zero-width joiner inside its scheme or ``@``, so no renderer's
autolinker (GitHub-flavoured Markdown's, a mail client's) finds a link in it, and text holding a
bidirectional control is isolated (:func:`isolate`), so it cannot reverse the figures beside it.
It reads as typed.
On top of it, :func:`plain` escapes plotly's HTML subset (titles, ticks, legends, hover), the report's
templates escape HTML (jinja2's autoescape, :mod:`memviz.auditing.templating`) and the dashboard's
``screens/_ui.esc`` escapes Markdown.
"""
from __future__ import annotations

import math
import re

ZWJ = "\u200d"

#: scheme separators and address markers that autolinkers look for
_LINKY = re.compile(r"(://|(?<![\w.])www\.|@|(?i:mailto):|(?i:javascript):|(?i:data):)")

#: what a missing figure reads as, wherever memviz prints one
MISSING = "–"


def as_float(x) -> float | None:
    """``x`` as a finite float, or None (None, NaN, infinite, or text that is no number: JSON values that may be
    null, NaN or text)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _fixed(v: float, digits: int, signed: bool) -> str:
    """``v`` rounded to ``digits`` decimals, never ``-0.0``; ``signed`` adds ``+``."""
    v = round(v, digits)
    return f"{0.0 if v == 0 else v:{'+' if signed else ''}.{digits}f}"


def percent(x, digits: int = 1, *, signed: bool = False, unit: str = " %") -> str:
    """The one formatting of a share (a fraction) as a number of percent: ``100 x`` rounded to
    ``digits`` decimals, then ``unit`` (``" %"``, ``" points"`` for a difference of shares, ``""``
    for a table whose header carries the unit); ``signed`` adds ``+``. Never ``-0.0`` (a value
    that rounds to zero prints as ``0.0``); :data:`MISSING` for None, NaN or text that is no number.
    """
    v = as_float(x)
    return MISSING if v is None else _fixed(100 * v, digits, signed) + unit


def percent_pm(mean, sd, digits: int = 1, *, signed: bool = False, unit: str = " %", sep: str = " ± ") -> str:
    """A mean share and its standard deviation over seeds: ``percent(mean) + sep + percent(sd)``
    (the ± part left out when ``sd`` is missing; :data:`MISSING` when ``mean`` is)."""
    m = percent(mean, digits, signed=signed, unit=unit)
    if m == MISSING:
        return MISSING
    s = percent(sd, digits, unit="" if unit.strip() in ("%", "") else unit)
    return m if s == MISSING else f"{m}{sep}{s}"


def number(x, digits: int = 2, *, signed: bool = False) -> str:
    """A plain number (an AUC, a z statistic) with ``digits`` decimals; ``signed`` adds ``+``. Never
    ``-0.00``; :data:`MISSING` for None, NaN or text that is no number (as :func:`percent`)."""
    v = as_float(x)
    return MISSING if v is None else _fixed(v, digits, signed)


def pct(x, digits: int = 1) -> str:
    """A share as a percentage: ``100 x`` with ``digits`` decimals and a thin space, ``"12.3 %"``
    (:func:`percent`)."""
    return percent(x, digits)


def share_digits(share: float) -> int:
    """Decimals that show a small share as more than 0 in :func:`pct` (1 to 4): 2 for 0.05 % (1 / (H + 1) at
    H = 2,000), 3 for 0.001 %."""
    if not share > 0 or not math.isfinite(share):
        return 1
    return min(4, max(1, math.ceil(-math.log10(100 * share))))


def points(x, digits: int = 1, signed: bool = True) -> str:
    """A difference of two shares in percentage points: ``100 x``, signed, ``"+4.1 points"``
    (never ``"-0.0 points"``; :func:`percent`)."""
    return percent(x, digits, signed=signed, unit=" points")


def count(x) -> str:
    """An integer count with thousands separators (``3000.0 -> "3,000"``; rounded, never decimals)."""
    v = as_float(x)
    return MISSING if v is None else f"{int(round(v)):,}"


def qvalue(x) -> str:
    """A p- or q-value for people: ``"< 0.001"`` below 0.001, else 2 significant digits (at most 3 decimals)."""
    v = as_float(x)
    if v is None:
        return MISSING
    if v < 0.001:
        return "< 0.001"
    return f"{v:.3f}" if v < 0.1 else f"{v:.2f}"


def seconds(x) -> str:
    """A duration: ``"0.4 s"`` under 10 s, ``"36 s"`` under a minute, ``"12 min 34 s"``, ``"2 h 05 min"``."""
    v = as_float(x)
    if v is None or v < 0:
        return MISSING
    if v < 10:
        return f"{v:.1f} s"
    s = int(round(v))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def check_name(check, n_checks=None) -> str:
    """A warm-up check as people read it: ``"check 11"``, and with the run's number of checks
    ``"check 11 of 0–11"``. Checks are numbered from 0 (the run's files, ``memviz sample --check``,
    the report's "Audited check"), so the last of 12 checks is check 11: the range says so wherever a
    count ("12 checks") can stand beside it."""
    c = as_float(check)
    if c is None:
        return MISSING
    n = as_float(n_checks)
    return f"check {int(c)}" + (f" of 0–{int(n) - 1}" if n is not None and n >= 1 else "")


#: the most characters of one cell or row name a report quotes (a 1 MB cell had been quoted whole, several times)
CELL_CHARS = 200
#: what ends a cut text
CUT_MARK = "…"


def cut(text, limit: int = CELL_CHARS) -> str:
    """``text`` as it is when at most ``limit`` characters, else its first ``limit`` and :data:`CUT_MARK`."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + CUT_MARK


def inert(text) -> str:
    """User text on one line with every link marker broken and its direction isolated (see the module
    docstring and :func:`isolate`).

    ``inert("see http://x.org\\u2028now") == "see http:\\u200d//x.org now"``: the same characters
    to a reader, no link to a renderer.
    """
    one_line = " ".join(str(text).split())
    return isolate(_LINKY.sub(_break, one_line))


#: Unicode's explicit directional formatting characters and marks (UAX #9): LRE, RLE, PDF, LRO, RLO,
#: LRI, RLI, FSI, PDI, LRM, RLM, ALM
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
FSI, PDI = "\u2068", "\u2069"
_OPENS = frozenset("\u2066\u2067\u2068")


def isolate(text: str) -> str:
    """``text`` unable to reorder what stands beside it: when it holds a bidirectional control (a
    RIGHT-TO-LEFT OVERRIDE, U+202E, in a column name showed the next figures reversed, "95.2" as
    "2.59"), it is wrapped in FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE, whose end closes
    every embedding and override opened inside (UAX #9, rule X6a). A PDI of the text that closes no
    isolate of its own is dropped (it would end the wrapper early) and one it leaves open is closed.
    Text without such characters is returned as it is."""
    text = str(text)
    if not any(c in BIDI_CONTROLS for c in text):
        return text
    out, depth = [], 0
    for c in text:
        if c == PDI:
            if depth == 0:
                continue
            depth -= 1
        elif c in _OPENS:
            depth += 1
        out.append(c)
    return FSI + "".join(out) + PDI * (depth + 1)


def _break(m: re.Match) -> str:
    s = m.group(0)
    if s == "://":
        return ":" + ZWJ + "//"
    if s == "@":
        return ZWJ + "@"
    return s[:-1] + ZWJ + s[-1]


def plain(text) -> str:
    """User text made inert for plotly (:func:`inert`, then ``&``, ``<``, ``>`` as entities).

    Plotly renders a subset of HTML in every title, label, tick, legend entry and hover text
    (``<a href>`` becomes a live link, ``<br>`` a line break); it shows entities as the
    characters they stand for. So the text reads as typed and nothing in it acts.
    """
    return inert(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_all(values) -> list[str]:
    """:func:`plain` of each value."""
    return [plain(v) for v in values]
