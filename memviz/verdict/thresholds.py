"""Numeric release thresholds on the figures the verdict reads (``memviz audit --max-…``).

The verdict's gate (``--fail-on``) stops a release on the verdict's code; a threshold stops it on one
figure, at a level the team chose, whatever the test says (a team that tolerates no identical row at
all sets ``--max-identical-share 0``). Each reads one figure of the :class:`~memviz.auditing.result.Audit`:

=========================  ==================================================================================
option                     the figure (at most the limit passes)
=========================  ==================================================================================
``--max-identical-share``  share of generated rows equal to a training row in every distance column
``--max-too-close-share``  share of generated rows nearer their training row than all but 5 % of the real
                           rows it never saw are (needs a hold-out)
``--max-near-verbatim-share``  share of generated rows equal to a training row in every column but one (needs
                           a hold-out)
``--max-excess``           the ratio test's flagged share less the hold-out's (its floor), as a share
                           (0.02 = 2 points; needs a hold-out)
``--max-copy-share``       the copy share c = excess / (1 − floor) (needs a hold-out)
``--max-named-rows``       training rows the per-row test names (rows.csv's ``over_copied``)
=========================  ==================================================================================

A figure the audit could not measure (no hold-out) fails its threshold as *not measured*: a gate never
passes on a figure it did not see. Exit codes: :data:`EXIT_THRESHOLD` when a measured figure is above
its limit and the verdict's gate passed; a figure not measured is the gate's refusal
(:data:`memviz.verdict.verdict.EXIT_REFUSED`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from memviz.errors import BadOption
from memviz.verdict.verdict import EXIT_PASSED, EXIT_REFUSED, AuditFigures

#: a measured figure above its limit (the verdict's own gate passed)
EXIT_THRESHOLD = 5


@dataclass(frozen=True)
class Figure:
    """A figure a threshold reads: its words, whether it is a share, and how to read it from an audit."""

    words: str
    share: bool
    read: Callable[[AuditFigures], float | None]


def _too_close(a: AuditFigures) -> float | None:
    return None if a.close is None else a.close.too_close_share


def _near_verbatim(a: AuditFigures) -> float | None:
    lv = next((lv for lv in a.close.partial if lv.altered == 1), None) if a.close is not None else None
    return None if lv is None else lv.share


#: option name (without ``--max-``) → the figure it bounds
FIGURES = {
    "identical-share": Figure("the identical share", True, lambda a: a.identical_share),
    "too-close-share": Figure("the too-close share", True, _too_close),
    "near-verbatim-share": Figure("the near-verbatim share (equal but for one column)", True, _near_verbatim),
    "excess": Figure("the ratio test's excess over its floor", True, lambda a: a.excess),
    "copy-share": Figure("the copy share", True, lambda a: a.copy_share),
    "named-rows": Figure("the count of named training rows", False, lambda a: a.n_over_copied),
}


@dataclass(frozen=True)
class Threshold:
    """``figure`` (a key of :data:`FIGURES`) at most ``limit``."""

    figure: str
    limit: float

    def __post_init__(self):
        if self.figure not in FIGURES:
            raise BadOption(f"threshold {self.figure!r}: unknown (use {', '.join(FIGURES)})")
        f = FIGURES[self.figure]
        ok = isinstance(self.limit, (int, float)) and not isinstance(self.limit, bool) and math.isfinite(self.limit)
        if not ok or self.limit < 0 or (f.share and self.limit > 1):
            raise BadOption(f"--max-{self.figure} {self.limit!r}: must be "
                              + ("a share between 0 and 1" if f.share else "a count of at least 0"))

    @property
    def option(self) -> str:
        return f"--max-{self.figure}"


@dataclass(frozen=True)
class Reading:
    """One threshold read on one audit: the figure's value (None: not measured) and whether it passes."""

    threshold: Threshold
    value: float | None

    @property
    def measured(self) -> bool:
        return self.value is not None

    @property
    def passes(self) -> bool:
        return self.measured and self.value <= self.threshold.limit

    def sentence(self) -> str:
        """Plain text: the figure, its value and the limit (callers escape it)."""
        f = FIGURES[self.threshold.figure]
        words = f.words[0].upper() + f.words[1:]
        if not self.measured:
            return f"{words}: not measured (no hold-out), so {self.threshold.option} cannot pass"
        value, limit = (_share(self.value), _share(self.threshold.limit)) if f.share else \
            (f"{self.value:,.0f}", f"{self.threshold.limit:g}")
        return f"{words}, {value}, {'is at most' if self.passes else 'is above'} the limit {limit} ({self.threshold.option})"


def _share(x: float) -> str:
    """A share in percent with the digits that keep a nonzero share from reading as 0 (2 significant)."""
    if x == 0:
        return "0 %"
    return f"{100 * x:.2g} %" if abs(x) < 0.01 else f"{100 * x:.1f} %"


def read_thresholds(a: AuditFigures, thresholds) -> tuple[Reading, ...]:
    """Each threshold read on ``a`` (NaN reads as not measured)."""
    out = []
    for t in thresholds:
        v = FIGURES[t.figure].read(a)
        v = None if v is None or not math.isfinite(float(v)) else float(v)
        out.append(Reading(t, v))
    return tuple(out)


def threshold_exit(gate_code: int, readings) -> int:
    """The exit code once the thresholds are read: the verdict's gate first (a failing or refusing gate
    keeps its code), then :data:`EXIT_THRESHOLD` when a measured figure is above its limit, then
    :data:`~memviz.verdict.verdict.EXIT_REFUSED` when a figure was not measured."""
    if gate_code != EXIT_PASSED:
        return gate_code
    if any(r.measured and not r.passes for r in readings):
        return EXIT_THRESHOLD
    if any(not r.measured for r in readings):
        return EXIT_REFUSED
    return EXIT_PASSED
