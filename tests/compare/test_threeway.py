"""The three-way view: privacy gain, quality change and cost per method, paired by seed, by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from memviz.compare import results_frame
from memviz.compare.threeway import three_way
from memviz.viz.compare import three_way_display
from memviz.auditing.report import results_cells
from memviz.auditing.templating import blocks


def _results():
    rows = []
    for seed, (mb, md, mc, eb, ed) in enumerate([(0.50, 0.40, 0.46, 0.25, 0.15), (0.40, 0.36, 0.38, 0.16, 0.12),
                                                 (0.45, 0.30, 0.40, 0.20, 0.05)]):
        rows += [dict(method="baseline", model="tabddpm", seed=seed, status="ok", mem_ratio=mb, excess=eb, shape=0.95,
                      trend=0.90, mle=0.88, total_seconds=100.0),
                 dict(method="dp@3", model="tabddpm", seed=seed, status="ok", mem_ratio=md, excess=ed, shape=0.85,
                      trend=0.80 - 0.01 * seed, mle=0.80, total_seconds=240.0 + seed, epsilon_spent=2.995),
                 dict(method="dynamiccut", model="tabddpm", seed=seed, status="ok", mem_ratio=mc, excess=eb - 0.02,
                      shape=0.94, trend=0.88, mle=0.87, total_seconds=90.0, row_epochs_left_out=1000.0)]
    rows.append(dict(method="random", model="tabddpm", seed=0, status="failed"))       # no finished cell: no row
    rows.append(dict(method="dp@3", model="tvae", seed=0, status="ok", mem_ratio=0.1))  # no tvae baseline: no row
    return results_frame(rows)


def test_three_way_figures_by_hand():
    t = three_way(_results()).set_index("method")
    assert list(t.index) == ["dp@3", "dynamiccut"] and (t["model"] == "tabddpm").all()
    dp = t.loc["dp@3"]
    assert dp["family"] == "differential privacy" and t.loc["dynamiccut", "family"] == "pruning"
    rel = np.array([(0.50 - 0.40) / 0.50, (0.40 - 0.36) / 0.40, (0.45 - 0.30) / 0.45])
    h = stats.t.ppf(0.975, 2) * rel.std(ddof=1) / np.sqrt(3)
    assert dp["gain_rel"] == pytest.approx(rel.mean()) and dp["n_seeds"] == 3
    assert (dp["gain_rel_low"], dp["gain_rel_high"]) == pytest.approx((rel.mean() - h, rel.mean() + h))
    assert dp["gain_points"] == pytest.approx(np.mean([0.10, 0.04, 0.15]))
    assert dp["shape_change"] == pytest.approx(-0.10) and dp["mle_change"] == pytest.approx(-0.08)
    assert dp["trend_change"] == pytest.approx(np.mean([-0.10, -0.11, -0.12]))
    assert dp["time_ratio"] == pytest.approx(np.mean([2.40, 2.41, 2.42]))
    assert dp["epsilon_spent"] == pytest.approx(2.995) and np.isnan(t.loc["dynamiccut", "epsilon_spent"])
    assert t.loc["dynamiccut", "row_epochs_left_out"] == 1000 and t.loc["dynamiccut", "gain_points"] == pytest.approx(0.02)


def test_the_display_and_the_report_show_it():
    d = three_way_display(_results())
    assert list(d["Method"]) == ["DP-SGD ε = 3", "DynamicCut"]
    row = d.iloc[0]
    assert row["(ε, δ) spent"] == "2.99" and row["Privacy gain: mem ratio reduction"].startswith("+21.1 % (")
    assert d.iloc[1]["(ε, δ) spent"] == "none" and d.iloc[1]["Row-epochs left out"] == "1,000"
    html = blocks().results(results_cells(_results()))
    assert "Privacy, quality and cost against the baseline" in html and "DP-SGD ε = 3" in html
    one_seed = _results()
    one_seed = one_seed[one_seed["seed"] == 0]
    assert "(" not in three_way_display(one_seed).iloc[0]["Shape change (points)"]     # no interval with one seed
    assert three_way(pd.DataFrame(columns=one_seed.columns)).empty
