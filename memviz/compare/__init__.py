"""The comparison floor: mitigation methods × generators × seeds, side by side.

* :mod:`.methods` — the one registry of mitigation methods and :func:`apply_method`;
* :mod:`.config` — :class:`CompareConfig`, the single source of every default;
* :mod:`.cell` — one (method, model, seed) cell: mitigate, fit, sample, evaluate;
* :mod:`.ranking` — the DynamicCut rankings (raw, excess) from a warm-up;
* :mod:`.protocol` — the floor, the excess, and the pruning cells' kept-rows figures with
  the baseline's control;
* :mod:`.backends` — where cells run (this process, joblib, dask);
* :mod:`.results` — the results table and its summaries;
* :mod:`.grid` — :func:`run_grid`, which ties them together;
* :mod:`.details` — per-column Shapes and DCR distances of a finished comparison.

Built on the core (data, memorization, warm-up, DynamicCut, mitigation, evaluation);
never imports the figures, the dashboard or the CLI.
"""
from memviz.faces import lazy_face

__getattr__, __dir__ = lazy_face(__name__, {
    "CompareConfig": "memviz.compare.config",
    "read_experiment": "memviz.compare.grid",
    "run_grid": "memviz.compare.grid",
    "DEFAULT_METHODS": "memviz.compare.methods",
    "METHOD_LABELS": "memviz.compare.methods",
    "METHODS": "memviz.compare.methods",
    "apply_method": "memviz.compare.methods",
    "COLUMNS": "memviz.compare.results",
    "format_summary": "memviz.compare.results",
    "results_frame": "memviz.compare.results",
    "summary_table": "memviz.compare.results",
})

__all__ = ['COLUMNS', 'CompareConfig', 'DEFAULT_METHODS', 'METHODS', 'METHOD_LABELS', 'apply_method', 'format_summary', 'read_experiment', 'results_frame', 'run_grid', 'summary_table']
