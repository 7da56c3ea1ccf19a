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
from memviz.compare.config import CompareConfig
from memviz.compare.grid import read_experiment, run_grid
from memviz.compare.methods import DEFAULT_METHODS, METHOD_LABELS, METHODS, apply_method
from memviz.compare.results import COLUMNS, format_summary, results_frame, summary_table

__all__ = ["CompareConfig", "run_grid", "read_experiment", "METHODS", "DEFAULT_METHODS", "METHOD_LABELS",
           "apply_method", "COLUMNS", "results_frame", "summary_table", "format_summary"]
