"""The frontier figure: excess with its interval against quality, epochs labelled, the recommendation ringed."""
import numpy as np
import pandas as pd

from memviz.viz import caption, frontier_plot


def _pc():
    return pd.DataFrame({"check": [0, 1, 2], "epoch": [10, 20, 30], "mem_ratio": [0.2, 0.3, 0.4],
                         "quality": [0.7, 0.85, 0.9], "shape": [0.8, 0.9, 0.95], "trend": [0.6, 0.8, 0.85],
                         "excess": [-0.01, 0.02, 0.08], "excess_low": [-0.04, -0.01, 0.05],
                         "excess_high": [0.02, 0.05, 0.11]})


def test_points_are_the_checks_with_their_intervals_and_epochs():
    fig = frontier_plot(_pc(), recommended=1)
    pts = fig.data[0]
    np.testing.assert_allclose(pts.x, [0.7, 0.85, 0.9])
    np.testing.assert_allclose(pts.y, [-1, 2, 8])
    np.testing.assert_allclose(pts.error_y.array, [3, 3, 3])
    np.testing.assert_allclose(pts.error_y.arrayminus, [3, 3, 3])
    assert list(pts.text) == ["e10", "e20", "e30"]
    ring = fig.data[1]
    assert ring.name == "recommended: epoch 20" and list(ring.x) == [0.85]
    assert caption(fig)


def test_without_floor_or_quality_the_axes_say_so():
    pc = _pc().drop(columns=["excess", "excess_low", "excess_high"])
    fig = frontier_plot(pc, metric="shape")
    np.testing.assert_allclose(fig.data[0].y, [20, 30, 40])
    assert "no floor" in fig.layout.yaxis.title.text and "Shape" in fig.layout.xaxis.title.text
    fig = frontier_plot(_pc().drop(columns=["quality", "shape", "trend"]))
    assert list(fig.data[0].x) == [10, 20, 30] and "not measured" in fig.layout.xaxis.title.text
