"""The when-to-stop frontier: each check's excess over the floor against its quality, epochs labelled."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from memviz.viz.style import BEFORE_COLOR, REST_COLOR, TOP_COLOR, add_note, new_figure

LABELS = {"quality": "Quality: (Shape + Trend) / 2", "shape": "Shape (column distributions)",
          "trend": "Trend (column pairs)"}


def frontier_plot(per_check: pd.DataFrame, recommended: int | None = None, metric: str = "quality") -> go.Figure:
    """Excess (points above the floor, 95 % interval as error bars) against quality, one marker
    per check in epoch order, the line joining them, the recommended check ringed.

    Without a floor the y axis is the mem ratio (labelled uncalibrated); without quality the
    x axis is the epoch. ``per_check``: a warm-up's per-check table
    (:func:`memviz.warmup.frontier.frontier_columns`).
    """
    pc = per_check.sort_values("check", kind="stable")
    has_q = metric in pc and pc[metric].notna().any()
    has_floor = "excess" in pc and pc["excess"].notna().any()
    x = pc[metric] if has_q else pc["epoch"]
    if has_floor:
        y = 100 * pc["excess"]
        err = dict(type="data", symmetric=False, array=100 * (pc["excess_high"] - pc["excess"]),
                   arrayminus=100 * (pc["excess"] - pc["excess_low"]), color=BEFORE_COLOR, thickness=1)
        y_title = "Excess over the floor (points, 95 % interval)"
    else:
        y, err, y_title = 100 * pc["mem_ratio"], None, "Mem ratio (%), no floor: not calibrated"
    text = ("Each marker is one check, labelled by its epoch, joined in training order. Up means more copies than "
            "real rows the model never saw get (the floor, at 0); right means better quality. A check to release "
            "from is far right and at or below 0; the ringed marker is the recommended one.")
    fig = new_figure("When to stop: privacy against quality over the warm-up",
                  LABELS.get(metric, metric) if has_q else "Epoch (quality was not measured in this run)",
                  y_title, text)
    if pc.empty:
        return add_note(fig, "No finished check yet")
    labels = [f"e{int(e)}" for e in pc["epoch"]]
    fig.add_scatter(x=x, y=y, mode="lines+markers+text", text=labels, textposition="top center",
                    error_y=err, line={"color": REST_COLOR, "width": 1}, marker={"size": 8, "color": REST_COLOR},
                    name="checks", customdata=np.stack([pc["check"], pc["epoch"]], axis=1),
                    hovertemplate="check %{customdata[0]}, epoch %{customdata[1]}<br>x %{x:.3f}<br>"
                                  "y %{y:+.1f}<extra></extra>")
    if has_floor:
        fig.add_hline(y=0, line_dash="dash", line_color="#555", annotation_text="the floor (fresh real rows)",
                      annotation_position="bottom right")
    if recommended is not None and (pc["check"] == recommended).any():
        i = pc.index[pc["check"] == recommended][0]
        fig.add_scatter(x=[x[i]], y=[y[i]], mode="markers", name=f"recommended: epoch {int(pc.loc[i, 'epoch'])}",
                        marker={"size": 18, "color": "rgba(0,0,0,0)", "line": {"color": TOP_COLOR, "width": 3}},
                        hoverinfo="skip")
    fig.update_layout(showlegend=True)
    return fig
