"""Shared look of every memviz figure: colours, template, titles, labels, captions.

Every figure function (one module per dashboard screen: :mod:`.memorization`,
:mod:`.dynamics`, :mod:`.tune`, :mod:`.compare`) returns a
:class:`plotly.graph_objects.Figure` with a title, axis titles with units, formatted hover
numbers, and a one-sentence reading guide (what is good, what is bad) in
``fig.layout.meta["caption"]``; :func:`caption` reads it back.

Data are aggregated with numpy before they reach plotly (a histogram is a bar per bin,
a curve over 32k rows is thinned to a few hundred points), so a figure of an
Adult-size run (32,561 rows x 25 checks) builds in milliseconds and a slider move
sends kilobytes, not the raw rows.

Shares are given to plotly as fractions and shown as percentages. Names, goals and
ranges of the comparison's figures come from :mod:`memviz.metrics`; method and model
labels from their registries (:data:`memviz.compare.methods.METHOD_LABELS`,
:data:`memviz.models.MODEL_LABELS`).
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from memviz.compare.methods import METHOD_LABELS
from memviz.dynamics.rows import RowDynamics
from memviz.errors import BadOption
from memviz.models import MODEL_LABELS

if TYPE_CHECKING:
    import plotly.graph_objects as go  # imported where a figure is made: the audit's report needs no plotly

TOP_COLOR, REST_COLOR = "#d62728", "#1f77b4"
BEFORE_COLOR, AFTER_COLOR, REMOVED_COLOR = "#9e9e9e", "#1f77b4", "#d62728"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
MAX_CURVE_POINTS = 400


# ---------------------------------------------------------------------------- helpers
def caption(fig: go.Figure) -> str:
    """The one-sentence reading guide stored in ``fig.layout.meta["caption"]`` ("" if none)."""
    meta = fig.layout.meta
    return str(meta.get("caption", "")) if isinstance(meta, Mapping) else ""


#: a small white template (plotly's "plotly_white" costs ~50 ms per figure to copy)
TEMPLATE = {"layout": {
    "paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}, "hovermode": "closest",
    "colorway": list(PALETTE), "hoverlabel": {"align": "left", "namelength": -1},
    "xaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "automargin": True,
              "title": {"standoff": 15}},
    "yaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "automargin": True,
              "title": {"standoff": 15}},
}}


#: title characters per line: a half-width dashboard column at 1280 px (about 440 px) holds ~50 of
#: the 15 px title font
TITLE_WIDTH = 50


def wrap_title(title: str, width: int = TITLE_WIDTH) -> str:
    """Break a long title into lines of at most ``width`` characters (plotly ``<br>``);
    plotly never wraps a title and cuts it at the figure's edge."""
    if len(title) <= width or "<br>" in title:
        return title
    glued = title.replace(" = ", "\x00=\x00")  # "p = 10%" stays on one line
    lines = textwrap.wrap(glued, width, break_long_words=False, break_on_hyphens=False)
    # the space stays at the end of each line: the title's text (a screen reader, a search, a copy) read
    # "real<br>rows" as "realrows"
    return " <br>".join(lines).replace("\x00", " ")


def base_layout(title: str, text: str, **layout) -> dict:
    # the toolbar (modebar) stands upright in the right margin, so it never covers the title
    base = dict(title={"text": wrap_title(title), "x": 0.01, "xanchor": "left", "yref": "container", "y": 0.98,
                       "yanchor": "top", "font": {"size": 15}},
                modebar={"orientation": "v"},
                template=TEMPLATE, meta={"caption": text}, margin={"t": 100, "r": 40, "l": 60, "b": 60},
                legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"})
    base.update(layout)
    return base


def new_figure(title: str, x_title: str, y_title: str, text: str, **layout) -> go.Figure:
    """An empty figure with title, axis titles and the caption in ``layout.meta``."""
    import plotly.graph_objects as go  # lazy: plotly, an optional extra (memviz[plots]): the style's constants load without it

    return go.Figure(layout=base_layout(title, text, xaxis={"title": {"text": x_title}},
                                    yaxis={"title": {"text": y_title}}, **layout))


def add_note(fig: go.Figure, text: str) -> go.Figure:
    """A centred message for figures without data (no copies, no rows chosen...)."""
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False,
                       font={"size": 14, "color": "#555"})
    return fig


def pct_axis(fig: go.Figure, axis: str, lo: float, hi: float, pad: float = 0.05) -> None:
    """A percent axis (values are fractions) over [lo, hi] with a margin, ticks without repeats.

    Tick labels use d3's ``~`` format (trailing zeros trimmed, up to 2 decimals), so two
    ticks never print the same text unless they are less than 0.01 point apart.
    """
    span = max(hi - lo, 1e-9)
    rng = [lo - pad * span if lo < 0 else lo, hi + pad * span]
    getattr(fig, f"update_{axis}axes")(range=rng, tickformat=".2~%")


def name_key(name) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def model_label(name) -> str:
    return MODEL_LABELS.get(str(name), MODEL_LABELS.get(name_key(name), str(name)))


def method_order(names) -> list:
    rank = {m: i for i, m in enumerate(METHOD_LABELS)}
    return sorted(names, key=lambda n: (rank.get(name_key(str(n).split("@")[0]), len(rank)), str(n)))


def model_order(names) -> list:
    rank = {m: i for i, m in enumerate(MODEL_LABELS)}
    return sorted(names, key=lambda n: (rank.get(name_key(n), len(rank)), str(n)))


def row_positions(dyn: RowDynamics, row_ids) -> np.ndarray:
    ids = np.asarray(list(row_ids), dtype=np.int64)
    pos = np.searchsorted(dyn.row_ids, ids)
    bad = (pos >= dyn.n_rows) | (dyn.row_ids[np.minimum(pos, dyn.n_rows - 1)] != ids)
    if bad.any():
        raise BadOption(f"row_id {ids[bad][0]} is not a training row of this run")
    return pos


def check_labels(dyn: RowDynamics) -> list[str]:
    """One x label per check: its epoch (check index added where epochs repeat)."""
    ep = [str(int(e)) for e in dyn.epochs]
    dup = {e for e in ep if ep.count(e) > 1}
    return [f"{e} (check {int(c)})" if e in dup else e for e, c in zip(ep, dyn.checks)]


def top_groups(dyn: RowDynamics):
    share = f"{100 * dyn.top_frac:g}%"
    return ((f"Top {share}", dyn.top, TOP_COLOR), (f"Non-Top {100 - 100 * dyn.top_frac:g}%", ~dyn.top, REST_COLOR))


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"
