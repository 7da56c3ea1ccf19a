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
from memviz.study.findings import CLAIMS, claim_tests, null_findings, signed_rank_exact
from memviz.study.floors import floor_table, study_tables, subsample
from memviz.study.inference import FAMILIES, LABELS, adjust, holm, label
from memviz.study.run import PARTS, dataset_study, run_study
from memviz.study.scales import REFERENCE, SCALES, StudyScale

__all__ = ["run_study", "dataset_study", "PARTS", "subsample", "study_tables", "floor_table", "signed_rank_exact",
           "label", "LABELS", "CLAIMS", "FAMILIES", "adjust", "holm", "claim_tests", "null_findings", "REFERENCE",
           "SCALES", "StudyScale"]
