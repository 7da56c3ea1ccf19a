"""User text never becomes live content in a figure (issue 26 item 1).

Column names, category values (the target's too) and method names made of Markdown, HTML,
bare URLs, e-mail addresses and Streamlit colour directives go through every figure of
:mod:`memviz.viz`; no string of any figure's JSON (titles, ticks, legends, hover, annotations)
may hold a tag, an entity-free ``<``, or a URL an autolinker would find.
"""
import re

import numpy as np
import pandas as pd
import pytest
from planted import planted_run

from memviz import viz
from memviz.dynamics.dynamiccut import early_identification_curve
from memviz.leaks.columns import column_match_rates  # noqa: F401 (the heatmap's input format)
from memviz.tables.data import Table
from memviz.tables.schema import Schema
from memviz.text import ZWJ, inert, plain
from memviz.warmup.run import load_warmup

HOSTILE = {
    "c1": '<a href="http://127.0.0.1:9/x">link</a>',
    "c2": "![i](http://127.0.0.1:9/beacon.png)",
    "a": "**T** :red[red] <b>bold</b>",
    "b": "www.example.org <img src=x onerror=alert(1)>",
}
VALUES = ["<b>yes</b>", "http://127.0.0.1:9/x", "mail me@example.org", ":red[no]"]
LIVE = re.compile(r"<\s*(a|b|img|span|i|script|iframe)\b|https?://|www\.|\w@\w", re.I)
OURS = re.compile(r"<br>|</?extra>|<sup>|</sup>")   # the figures' own markup


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, (list, tuple)):
        return [s for v in obj for s in _strings(v)]
    if isinstance(obj, np.ndarray) and obj.dtype == object:
        return [s for v in obj.ravel() for s in _strings(v)]
    return []


def assert_inert(fig, name):
    for text in _strings(fig.to_plotly_json()):
        bad = LIVE.search(OURS.sub("", text))
        assert bad is None, f"{name}: live user text {bad.group(0)!r} in {text!r}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    store = planted_run(tmp_path_factory.mktemp("hostile") / "run")
    res, train = load_warmup(store.path), store.train()
    t = train.data.copy()
    t["y"] = np.asarray(VALUES * (len(t) // len(VALUES) + 1))[:len(t)]
    t["c1"] = np.asarray(VALUES[::-1] * (len(t) // len(VALUES) + 1))[:len(t)]
    t = t.rename(columns=HOSTILE)
    s = train.schema
    schema = Schema(numerical=tuple(HOSTILE.get(c, c) for c in s.numerical),
                    categorical=tuple(HOSTILE.get(c, c) for c in s.categorical), target="y", task="multiclass")
    return res, Table(t, schema, "hostile")


def test_plain_and_inert_break_every_link_marker():
    assert inert("see http://x.org\u2028now") == f"see http:{ZWJ}//x.org now"
    assert inert("a@b.org www.x.org") == f"a{ZWJ}@b.org www{ZWJ}.x.org"
    assert inert("javascript:alert(1)").startswith(f"javascript{ZWJ}:")
    assert plain("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;"
    # a reader sees the same characters
    assert inert("http://x.org a@b").replace(ZWJ, "") == "http://x.org a@b"
    assert inert("plain text, 3 < 4") == "plain text, 3 < 4"


def test_every_figure_keeps_user_text_inert(hostile):
    res, bad = hostile
    dyn = res.dynamics
    cols = list(bad.schema.columns)
    removed = bad.data.index[:5]
    evil_method = HOSTILE["c1"]
    results = pd.DataFrame([{"method": m, "model": mo, "seed": s, "mem_ratio": 0.3, "mem_ratio_pruned": 0.29,
                             "mem_auc": 0.3, "shape": 0.9, "trend": 0.9, "mle": 0.8, "mle_real": 0.85,
                             "dcr_share": 0.55, "relative_reduction": 0.1, "floor": 0.25, "floor_low": 0.2,
                             "floor_high": 0.3, "excess": 0.05}
                            for m in ("baseline", "dynamiccut", "random", evil_method)
                            for mo in ("tabddpm", "<b>gen</b>") for s in (0, 1)])
    rates = pd.DataFrame({"column": cols, "memorized_rate": np.linspace(0.1, 0.9, len(cols)),
                          "non_memorized_rate": np.linspace(0.05, 0.5, len(cols))})
    pairs = pd.DataFrame(np.full((len(cols), len(cols)), 0.2), index=cols, columns=cols)
    shapes = {m: pd.DataFrame({"column": cols, "score": np.linspace(0.8, 1.0, len(cols))})
              for m in ("baseline", evil_method)}
    rng = np.random.default_rng(0)
    figs = {
        "class_balance": viz.class_balance_plot(bad, removed),
        "leak_heatmap": viz.leak_heatmap(rates, {"memorized": pairs}),
        "shape_breakdown": viz.shape_breakdown_plot(shapes),
        "dcr": viz.dcr_plot({"baseline": rng.gamma(2, 0.02, 100), evil_method: rng.gamma(2, 0.03, 100)}),
        "comparison": viz.comparison_plot(results, "mem_ratio"),
        "privacy_utility": viz.privacy_utility_plot(results),
        "transferability": viz.transferability_plot(results),
        "early_id": viz.early_identification_plot(early_identification_curve(dyn, p=0.1, k=2)),
        "timeline": viz.row_timeline(dyn, dyn.row_ids[:3]),
        "check_curves": viz.check_curves(res.per_check),
    }
    for c in cols:
        figs[f"column_shift {c}"] = viz.column_shift_plot(bad, removed, c)
    for name, fig in figs.items():
        assert_inert(fig, name)
    # and the text is still there, as text
    heat = figs["leak_heatmap"]
    assert plain(HOSTILE["c1"]) in list(heat.data[0].y)
