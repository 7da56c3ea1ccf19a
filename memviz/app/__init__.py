"""The dashboard's library side (never imports streamlit): what every page calls.

* :mod:`.datasets` — the tables on offer, uploads, schema edits, the test split;
* :mod:`.runs` — warm-up runs: listing, opening, leak inputs, pruning previews, tuned (p, k, T);
* :mod:`.comparisons` — a comparison's results, details and files;
* :mod:`.reports` — the report's figures and its HTML;
* :mod:`.spec` — the job contract (JSON spec in, JSON-lines events out) and :func:`run_spec`;
* :mod:`.jobs` — background jobs: start, queue, status, cancel;
* :mod:`.devices` — which devices a job can use.

Pages call only this package and :mod:`memviz.viz`. The path of a warm-up, by function
name: ``pages/2_warmup.py`` Start → :func:`.jobs.start_warmup` (writes ``spec.json``) →
``python -m memviz.worker`` → :func:`.spec.run_spec` → :func:`memviz.warmup.run_warmup`
(check events, the run store's check table) → :func:`.runs.load_run` →
``pages/3_memorization.py``.
"""
