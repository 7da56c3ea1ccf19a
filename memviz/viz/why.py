"""The "why these rows" figure: which features carry the model of the Top group (mean |SHAP| per feature)."""
from __future__ import annotations

import plotly.graph_objects as go

from memviz.risk.explanation import feature_label
from memviz.text import inert


def why_plot(importance, top: int = 12) -> go.Figure:
    """Horizontal bars: each feature's share of the mean |SHAP| (largest at the top), risk factors and the row's
    columns in two colours; the hover says which way the feature pushes (Spearman ρ of its value and SHAP)."""
    imp = importance.head(top).iloc[::-1]
    fig = go.Figure()
    for kind, color, name in (("factor", "#d62728", "risk factor (from the table alone)"),
                              ("column", "#1f77b4", "the row's column")):
        sel = imp[imp["kind"] == kind]
        fig.add_trace(go.Bar(x=100 * sel["share"], y=[inert(feature_label(f, kind)) for f in sel["feature"]],
                             orientation="h",
                             marker_color=color, name=name,
                             customdata=sel["direction"].fillna(0.0),
                             hovertemplate="%{y}: %{x:.0f} % of the attributions<br>ρ(value, SHAP) = "
                                           "%{customdata:+.2f}<extra></extra>"))
    fig.update_layout(title="What carries the model of the Top group (share of mean |SHAP|)",
                      xaxis_title="% of the attributions", barmode="overlay", height=120 + 26 * len(imp),
                      legend={"orientation": "h", "y": -0.25}, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig
