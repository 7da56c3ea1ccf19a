"""The figures floor: one module per dashboard screen, pure functions returning plotly figures.

* :mod:`.style` — colours, template, titles, labels and :func:`caption` (shared);
* :mod:`.memorization` — copies per row, concentration, per-check curves, column leaks;
* :mod:`.dynamics` — Top vs Non-Top over the warm-up, timelines of chosen rows;
* :mod:`.tune` — early identification, class balance and column shifts of a pruning;
* :mod:`.compare` — methods side by side, privacy vs utility, breakdowns, transfer;
* :mod:`.card` — the one verdict card type (:class:`memviz.viz.card.Card`).

Reads the core and the comparison; never imports the dashboard or the CLI.
"""
from memviz.faces import lazy_face

__getattr__, __dir__ = lazy_face(__name__, {
    "SHOWN_COLUMNS": "memviz.viz.compare",
    "comparison_plot": "memviz.viz.compare",
    "dcr_plot": "memviz.viz.compare",
    "fractions": "memviz.viz.compare",
    "privacy_utility_plot": "memviz.viz.compare",
    "results_display": "memviz.viz.compare",
    "shape_breakdown_plot": "memviz.viz.compare",
    "transferability_plot": "memviz.viz.compare",
    "first_epoch_plot": "memviz.viz.dynamics",
    "forgetting_plot": "memviz.viz.dynamics",
    "group_band_plot": "memviz.viz.dynamics",
    "row_timeline": "memviz.viz.dynamics",
    "check_curves": "memviz.viz.memorization",
    "concentration_plot": "memviz.viz.memorization",
    "copies_histogram": "memviz.viz.memorization",
    "leak_heatmap": "memviz.viz.memorization",
    "top_leak_columns": "memviz.viz.memorization",
    "class_balance_plot": "memviz.viz.tune",
    "column_shift_plot": "memviz.viz.tune",
    "early_identification_plot": "memviz.viz.tune",
    "caption": "memviz.viz.style",
    "method_label": "memviz.compare.methods",
    "model_label": "memviz.viz.style",
    "wrap_title": "memviz.viz.style",
    "check_name": "memviz.text",
    "count": "memviz.text",
    "inert": "memviz.text",
    "pct": "memviz.text",
    "plain": "memviz.text",
    "points": "memviz.text",
    "qvalue": "memviz.text",
    "seconds": "memviz.text",
    "null_findings_plot": "memviz.viz.dynamics",
    "copies_null_plot": "memviz.viz.memorization",
    "frontier_plot": "memviz.viz.frontier",
    "why_plot": "memviz.viz.why",
    "Card": "memviz.viz.card",
    "Line": "memviz.viz.card",
})

__all__ = ['Card', 'Line', 'SHOWN_COLUMNS', 'caption', 'check_curves', 'check_name', 'class_balance_plot', 'column_shift_plot', 'comparison_plot', 'concentration_plot', 'copies_histogram', 'copies_null_plot', 'count', 'dcr_plot', 'early_identification_plot', 'first_epoch_plot', 'forgetting_plot', 'fractions', 'frontier_plot', 'group_band_plot', 'inert', 'leak_heatmap', 'method_label', 'model_label', 'null_findings_plot', 'pct', 'plain', 'points', 'privacy_utility_plot', 'qvalue', 'results_display', 'row_timeline', 'seconds', 'shape_breakdown_plot', 'top_leak_columns', 'transferability_plot', 'wrap_title']
