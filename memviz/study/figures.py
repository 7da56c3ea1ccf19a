"""The study's figures, one self-contained HTML file (plotly.js embedded once)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memviz.io import atomic_write_text
from memviz.study.scales import SCALES
from memviz.study.tables import METHOD_NAMES


def _datasets(block: dict) -> dict:
    return {k: v for k, v in block.items() if isinstance(v, dict) and "dataset" in v}


def warmup_ratio_curves(study: dict):
    """Mem ratio per check of every warm-up, with each scale's floor band (95 % interval)."""
    import plotly.graph_objects as go  # lazy: plotly is optional (memviz[plots])
    from plotly.subplots import make_subplots  # lazy: plotly is optional (memviz[plots])

    cells = [(sc, d, s) for sc in study if sc in SCALES for d, s in _datasets(study[sc]).items() if s.get("warmups")]
    if not cells:
        return None
    fig = make_subplots(rows=1, cols=len(cells), subplot_titles=[f"{d} ({sc})" for sc, d, _ in cells])
    for i, (sc, d, s) in enumerate(cells, start=1):
        for w in s["warmups"]:
            pc = w.get("per_check") or {}
            if "floor_low" in pc and w is s["warmups"][0]:  # one band: every warm-up has the same floor
                fig.add_trace(go.Scatter(x=pc["epoch"] + pc["epoch"][::-1],
                                         y=pc["floor_high"] + pc["floor_low"][::-1], fill="toself",
                                         line={"width": 0}, fillcolor="rgba(200,80,80,0.15)",
                                         showlegend=False, hoverinfo="skip"), row=1, col=i)
            fig.add_trace(go.Scatter(x=pc.get("epoch"), y=pc.get("mem_ratio"), mode="lines",
                                     name=f"{d} {sc} seed {w['seed']}", showlegend=False,
                                     line={"width": 1}), row=1, col=i)
    fig.update_layout(title="Mem ratio per warm-up check (lines: warm-up seeds; band: the floor's 95 % interval)",
                      height=380, width=max(900, 260 * len(cells)))
    return fig


def knob_plot(study: dict):
    """Excess (95 % CI) per knob run: against epochs at the smallest row count (left), and against
    training rows at the largest number of optimisation steps (right)."""
    import plotly.graph_objects as go  # lazy: plotly is optional (memviz[plots])
    from plotly.colors import qualitative  # lazy: plotly is optional (memviz[plots])
    from plotly.subplots import make_subplots  # lazy: plotly is optional (memviz[plots])

    knobs = [r for sc in study if sc in SCALES for r in study[sc].get("knobs", [])]
    if not knobs:
        return None
    n0, steps = min(r["n_rows"] for r in knobs), max(r.get("steps", 0) for r in knobs)
    fig = make_subplots(rows=1, cols=2, subplot_titles=[f"against epochs, {n0} training rows",
                                                        f"against training rows, {steps:,} optimisation steps"])
    colors = qualitative.Plotly  # one colour per dataset in both panels
    for j, d in enumerate(sorted({r["dataset"] for r in knobs})):
        for col, sel, x in ((1, [r for r in knobs if r["dataset"] == d and r["n_rows"] == n0], "epochs"),
                            (2, [r for r in knobs if r["dataset"] == d and r.get("steps") == steps], "n_rows")):
            sel = sorted(sel, key=lambda r: (r[x], r["seed"]))
            if not sel:
                continue
            fig.add_trace(go.Scatter(
                x=[r[x] for r in sel], y=[r["excess"] * 100 for r in sel], mode="markers", name=d,
                legendgroup=d, showlegend=col == 1, marker={"color": colors[j % len(colors)]},
                error_y={"type": "data", "symmetric": False,
                         "array": [(r["excess_high"] - r["excess"]) * 100 for r in sel],
                         "arrayminus": [(r["excess"] - r["excess_low"]) * 100 for r in sel]}), row=1, col=col)
    fig.update_xaxes(title_text="epochs", row=1, col=1)
    fig.update_xaxes(title_text="training rows", type="log", row=1, col=2)
    fig.update_yaxes(title_text="excess over the floor, points (95 % CI)", row=1, col=1)
    fig.update_layout(title="Which knob: TabDDPM's excess over the floor (one dot per run and seed)", height=420,
                      width=1100)
    return fig


def mitigation_plot(study: dict, scale: str, out: Path):
    """Mem ratio against the original table per method, one dot per seed, with the floor."""
    import plotly.graph_objects as go  # lazy: plotly is optional (memviz[plots])
    from plotly.subplots import make_subplots  # lazy: plotly is optional (memviz[plots])

    ds = {d: s for d, s in _datasets(study.get(scale, {})).items()
          if (Path(out) / scale / d / "results.csv").exists()}
    if not ds:
        return None
    fig = make_subplots(rows=1, cols=len(ds), subplot_titles=list(ds))
    for i, (d, s) in enumerate(ds.items(), start=1):
        res = pd.read_csv(Path(out) / scale / d / "results.csv")
        ok = res[(res["status"] == "ok") & (res["model"] == "tabddpm")]
        fig.add_trace(go.Box(x=ok["method"].map(lambda m: METHOD_NAMES.get(m, m)), y=ok["mem_ratio"] * 100,
                             boxpoints="all", name=d, showlegend=False), row=1, col=i)
        fl = (s.get("floors") or {}).get("paper")
        if fl:
            fig.add_hline(y=fl["floor"] * 100, line_dash="dash", row=1, col=i)
    fig.update_layout(title=f"Mem ratio vs the original table, TabDDPM ({scale}); dashed: the floor", height=520,
                      width=max(900, 420 * len(ds)))
    return fig


def pilot_plot(study: dict):
    """The pilot: excess over the floor per check (95 % interval of each check), one line per run."""
    import plotly.graph_objects as go  # lazy: plotly is optional (memviz[plots])

    pilot = (study.get("pilot") or {}).get("runs")
    if pilot is None or len(pilot) == 0:
        return None
    fig = go.Figure()
    for (n, e, s), g in pilot.sort_values("epoch").groupby(["n_train", "epochs", "seed"]):
        done = bool(g["finished"].all()) if "finished" in g.columns else True
        fig.add_trace(go.Scatter(
            x=g["epoch"], y=g["excess"] * 100, mode="lines+markers",
            name=f"{n:,} rows × {e:,} epochs, seed {s}" + ("" if done else " (unfinished)"),
            line={"dash": "solid" if done else "dot"},
            error_y={"type": "data", "symmetric": False, "array": (g["excess_high"] - g["excess"]) * 100,
                     "arrayminus": (g["excess"] - g["excess_low"]) * 100}))
    fig.add_hline(y=0, line_dash="dash")
    fig.update_layout(title="The pilot across scales: TabDDPM's excess over its floor per warm-up check (adult)",
                      xaxis_title="epoch", yaxis_title="excess over the floor, points (95 % CI of the check)",
                      height=420, width=1000)
    return fig


def write_figures(study: dict, out: Path) -> None:
    """All figures into ``out/figures.html`` (plotly.js embedded in the first)."""
    figs = [f for f in (warmup_ratio_curves(study), knob_plot(study), pilot_plot(study)) if f is not None]
    figs += [f for sc in study if sc in SCALES for f in [mitigation_plot(study, sc, out)] if f is not None]
    if not figs:
        return
    # fixed div ids (plotly draws random ones), so a rerun rewrites the file byte for byte
    parts = [f.to_html(full_html=False, include_plotlyjs=(i == 0), div_id=f"study-figure-{i}")
             for i, f in enumerate(figs)]
    head = "<!DOCTYPE html><html><head><meta charset='utf-8'><title>memviz study figures</title></head><body>"
    atomic_write_text(Path(out) / "figures.html", head + "".join(parts) + "</body></html>")
