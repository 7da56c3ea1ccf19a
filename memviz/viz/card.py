"""The one verdict card: a title and lines of (topic, text, tone), shown by every page and report.

The Compare page's card (:func:`memviz.app.compare_card.compare_verdict`), a run's or a table's card
(:func:`memviz.app.audits.card`) and the audit's report (:mod:`memviz.auditing.html`) are all a
:class:`Card`; the report draws it in HTML (its `card` block, memviz/templates/blocks.html.j2), the dashboard's
``screens/_ui.verdict_card`` in Streamlit. Plain text only (no Markdown, no HTML): callers escape it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

#: a line's tone; anything else is drawn as neutral (:func:`tone`)
Tone = Literal["good", "bad", "warn", "neutral"]
#: the tones a line may have, in that order
TONES: tuple[Tone, ...] = get_args(Tone)


def tone(value) -> Tone:
    """``value`` when it is one of :data:`TONES`, else ``"neutral"``."""
    return value if value in TONES else "neutral"


@dataclass(frozen=True)
class Line:
    """One line of the card: its topic, its text and its tone (one of :data:`TONES`)."""

    topic: str
    text: str
    tone: Tone = "neutral"


@dataclass(frozen=True)
class Card:
    """A verdict card.

    title : what it is about ("TabDDPM, DynamicCut against no mitigation").
    lines : the card's lines, in order (e.g. flagged output, pruning, utility, next step).
    sentence : the plain sentence that opens a report about it ("" when none).
    n_seeds : seeds behind a comparison's pruning figures (0: none).
    indicative : fewer seeds than a clear statement needs.
    notes : extra plain sentences.
    tone : the tone of the card as a whole (one of :data:`TONES`): the report colours its box by it, as the
        pages colour the verdict's line.
    """

    title: str
    lines: tuple[Line, ...] = ()
    sentence: str = ""
    n_seeds: int = 0
    indicative: bool = False
    notes: tuple[str, ...] = field(default=())
    tone: str = "neutral"

    def text(self) -> str:
        """The card as plain text (title, then one 'topic: text' line each)."""
        return "\n".join([self.title, *(f"{ln.topic}: {ln.text}" for ln in self.lines)])


__all__ = ["Tone", "TONES", "tone", "Line", "Card"]
