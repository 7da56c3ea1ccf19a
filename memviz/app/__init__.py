"""The dashboard's library side (never imports streamlit): what every page calls.

* :mod:`.datasets` — the tables on offer, uploads, the target, schema edits, the test split, and the
  uploads and tables in use kept with the runs;
* :mod:`.runs` — warm-up runs: listing, opening, leak inputs, pruning previews, tuned (p, k, T);
* :mod:`.comparisons` — a comparison's results, details and files;
* :mod:`.reports` — the report's figures, facts in words and its HTML;
* :mod:`.verdict` — the verdict card (flagged output against the floor, pruning, utility, next step);
* :mod:`.glossary` — the words of the dashboard and the report, explained once;
* :mod:`.spec` — the job contract (JSON spec in, JSON-lines events out) and :func:`run_spec`;
* :mod:`.jobs` — background jobs: start, queue, status, cancel;
* :mod:`.devices` — which devices a job can use.

Pages call only this package and :mod:`memviz.viz`. The path of a warm-up, by function
name: ``pages/2_warmup.py`` Start → :func:`.jobs.start_warmup` (writes ``spec.json``) →
``python -m memviz.worker`` → :func:`.spec.run_spec` → :func:`memviz.warmup.run_warmup`
(check events, the run store's check table) → :func:`.runs.load_run` →
``pages/3_memorization.py``.
"""
