"""The study floor: the paper's findings regenerated on real tables, one seeded command.

* :mod:`.scales` — how big a run is (tiny / cpu / paper) and the published figures;
* :mod:`.run` — :func:`run_study`: per dataset a warm-up, its dynamics and a comparison;
* :mod:`.findings` — each claim checked by fixed criteria;
* :mod:`.markdown` — ``study.md``.

Sits above the figures (it writes an HTML report per dataset); below the dashboard and the CLI.
"""
from .findings import findings, paired_difference
from .markdown import render_markdown
from .run import dataset_study, run_study, subsample
from .scales import REFERENCE, SCALES, StudyScale

__all__ = ["run_study", "dataset_study", "subsample", "findings", "paired_difference", "render_markdown",
           "REFERENCE", "SCALES", "StudyScale"]
