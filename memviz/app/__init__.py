"""The dashboard's library side (never imports streamlit): what every page calls.

* :mod:`.datasets` — the tables on offer, uploads, the target, schema edits, the test split, and the
  uploads and tables in use kept with the runs;
* :mod:`.runs` — warm-up runs: listing, opening, leak inputs, pruning previews, tuned (p, k, T);
* :mod:`.comparisons` — a comparison's results, details and files;
* :mod:`.reports` — the report's figures, facts in words and its HTML;
* :mod:`.verdict` — the verdict card (flagged output against the floor, pruning, utility, next step);
* :mod:`.glossary` — the words of the dashboard and the report, explained once;
* :mod:`.devices` — which devices a job can use.

The job contract and background jobs (start, queue, status, cancel) live in :mod:`memviz.jobs`,
shared with the CLI. Screens call only this package, :mod:`memviz.jobs` and :mod:`memviz.viz`.
The path of a warm-up, by function name: ``screens/2_warmup.py`` Start →
:func:`memviz.jobs.control.start_warmup` (writes ``spec.json``) → ``python -m memviz.jobs.worker``
→ :func:`memviz.jobs.spec.run_spec` → :func:`memviz.warmup.run.run_warmup` (check events, the run
store's check table) → :func:`.runs.load_run` → ``screens/3_memorization.py``.
"""
