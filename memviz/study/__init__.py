"""The study floor: the paper's findings re-read with a floor, a null model and paired tests.

* :mod:`.scales` — how big a run is (tiny / cpu / regime / paper) and the published figures;
* :mod:`.floors` — the study's tables and the floor table (part 1);
* :mod:`.knobs` — separate runs: excess against a knob, generators' MLE against epochs;
* :mod:`.warmups` — warm-ups per seed, dynamics against the null, selections and their overlap;
* :mod:`.mitigation` — the mitigation grid, one warm-up's ranking per seed;
* :mod:`.pilot` — the pilot across scales (training rows × epochs, a few seeds);
* :mod:`.findings` — the claims and their exact paired tests;
* :mod:`.inference` — claim families, Holm within each, effects with intervals over seeds, power;
* :mod:`.markdown`, :mod:`.figures` — ``study.md`` and ``figures.html``;
* :mod:`.run` — :func:`run_study`, the one command.

Sits above the figures; below the dashboard and the CLI.
"""
from memviz.faces import lazy_face

__getattr__, __dir__ = lazy_face(__name__, {
    "CLAIMS": "memviz.study.findings",
    "claim_tests": "memviz.study.findings",
    "null_findings": "memviz.study.findings",
    "signed_rank_exact": "memviz.study.findings",
    "floor_table": "memviz.study.floors",
    "study_tables": "memviz.study.floors",
    "subsample": "memviz.study.floors",
    "FAMILIES": "memviz.study.inference",
    "LABELS": "memviz.study.inference",
    "adjust": "memviz.study.inference",
    "holm": "memviz.study.inference",
    "label": "memviz.study.inference",
    "PARTS": "memviz.study.run",
    "dataset_study": "memviz.study.run",
    "run_study": "memviz.study.run",
    "REFERENCE": "memviz.study.scales",
    "SCALES": "memviz.study.scales",
    "StudyScale": "memviz.study.scales",
})

__all__ = ['CLAIMS', 'FAMILIES', 'LABELS', 'PARTS', 'REFERENCE', 'SCALES', 'StudyScale', 'adjust', 'claim_tests', 'dataset_study', 'floor_table', 'holm', 'label', 'null_findings', 'run_study', 'signed_rank_exact', 'study_tables', 'subsample']
