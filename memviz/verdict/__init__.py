"""The verdict's room: the audit's inputs read and aligned once, its tests run, read together (Holm) and turned
into one verdict, below the figures and the writers that show it (:mod:`memviz.viz`, :mod:`memviz.auditing`).

* :mod:`.inputs` — the training, generated and hold-out tables read and aligned once;
* :mod:`.build` — the inputs in, the audit's fields out;
* :mod:`.provenance` — what was audited, where it came from;
* :mod:`.share` — the copy share;
* :mod:`.rowtest` — what the per-row test can see at these sizes;
* :mod:`.family` — the tests as one family (Holm);
* :mod:`.verdict` — codes, qualifiers, the sentence and the release gate;
* :mod:`.thresholds` — the CI gate's ``--max-…`` options.

It imports nothing from viz: the result that carries the verdict (:class:`memviz.auditing.result.Audit`) and its
writers sit above viz, in :mod:`memviz.auditing`.
"""
