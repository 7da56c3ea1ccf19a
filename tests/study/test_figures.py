"""memviz.study.figures: every knob run is drawn where it belongs."""
import pandas as pd

from memviz.study.figures import knob_plot, pilot_plot


def _run(dataset, n_rows, epochs, seed, excess):
    return {"dataset": dataset, "n_rows": n_rows, "epochs": epochs, "steps": epochs * -(-n_rows // 256),
            "seed": seed, "excess": excess, "excess_low": excess - 0.02, "excess_high": excess + 0.02}


def test_knob_plot_draws_the_epoch_and_the_row_runs_on_numeric_axes():
    """Regression: the row runs were drawn at x = "500 rows" on the epochs' numeric axis, so plotly
    dropped them and the figure showed the epochs alone."""
    runs = [_run("adult", 250, e, s, 0.1 * e / 1000) for e in (1000, 2000, 4000) for s in (0, 1)]
    runs += [_run("adult", 500, 2000, 0, 0.18), _run("adult", 1000, 1000, 0, 0.06)]
    fig = knob_plot({"regime": {"knobs": runs}})
    by_axis = {}
    for tr in fig.data:
        by_axis.setdefault(tr.xaxis, []).extend(tr.x)
    assert all(isinstance(x, (int, float)) for xs in by_axis.values() for x in xs)
    assert sorted(by_axis["x"]) == [1000, 1000, 2000, 2000, 4000, 4000]      # 250 rows, against epochs
    assert sorted(by_axis["x2"]) == [250, 250, 500, 1000]                    # 4,000 steps, against rows


def test_pilot_plot_draws_one_line_per_run_and_marks_the_unfinished():
    rows = [{"n_train": n, "epochs": 8, "seed": 0, "epoch": ep, "excess": 0.01 * ep, "excess_low": 0.0,
             "excess_high": 0.2, "finished": n == 60} for n in (60, 120) for ep in (4, 8)]
    fig = pilot_plot({"pilot": {"runs": pd.DataFrame(rows)}})
    assert [tr.name for tr in fig.data] == ["60 rows × 8 epochs, seed 0", "120 rows × 8 epochs, seed 0 (unfinished)"]
    assert list(fig.data[0].y) == [4.0, 8.0] and fig.data[1].line.dash == "dot"
    assert pilot_plot({"pilot": {"runs": None}}) is None
