"""The figures floor: one module per dashboard screen, pure functions returning plotly figures.

* :mod:`.style` — colours, template, titles, labels and :func:`caption` (shared);
* :mod:`.memorization` — copies per row, concentration, per-check curves, column leaks;
* :mod:`.dynamics` — Top vs Non-Top over the warm-up, timelines of chosen rows;
* :mod:`.tune` — early identification, class balance and column shifts of a pruning;
* :mod:`.compare` — methods side by side, privacy vs utility, breakdowns, transfer;
* :mod:`.report` — the self-contained HTML report (the one builder, :func:`memviz.viz.report.build_report`).
* :mod:`.card` — the one verdict card type (:class:`memviz.viz.card.Card`).

Reads the core and the comparison; never imports the dashboard or the CLI.
"""
from memviz.viz.compare import (
                      SHOWN_COLUMNS,
                      comparison_plot,
                      dcr_plot,
                      fractions,
                      privacy_utility_plot,
                      results_display,
                      shape_breakdown_plot,
                      transferability_plot,
)
from memviz.viz.dynamics import (
                      first_epoch_plot,
                      forgetting_plot,
                      group_band_plot,
                      row_timeline,
)
from memviz.viz.memorization import (
                      check_curves,
                      concentration_plot,
                      copies_histogram,
                      leak_heatmap,
                      top_leak_columns,
)
from memviz.viz.style import caption, method_label, model_label, wrap_title
from memviz.viz.text import count, inert, pct, plain, points, qvalue, seconds
from memviz.viz.tune import (
                      class_balance_plot,
                      column_shift_plot,
                      early_identification_plot,
)

__all__ = ["caption", "method_label", "model_label", "plain", "inert", "pct", "points", "count", "qvalue", "seconds", "wrap_title", "SHOWN_COLUMNS", "results_display", "copies_histogram", "concentration_plot",
           "check_curves", "leak_heatmap", "top_leak_columns", "first_epoch_plot", "forgetting_plot", "group_band_plot", "row_timeline",
           "early_identification_plot", "class_balance_plot", "column_shift_plot", "fractions", "comparison_plot",
           "privacy_utility_plot", "shape_breakdown_plot", "dcr_plot", "transferability_plot"]

# the floor pages (Memorization against the floor, Dynamics against the null)
from memviz.viz.dynamics import null_findings_plot  # noqa: E402
from memviz.viz.memorization import copies_null_plot  # noqa: E402

__all__ += ["copies_null_plot", "null_findings_plot"]

# when to stop (the Warm-up and Memorization screens)
from memviz.viz.frontier import frontier_plot  # noqa: E402

__all__ += ["frontier_plot"]

from memviz.viz.card import Card, Line  # noqa: E402

__all__ += ["Card", "Line"]
