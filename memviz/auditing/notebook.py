"""An audit where its users already look: a notebook's output cell and an experiment tracker.

* :func:`audit_fragment`: the audit as an HTML fragment (what ``Audit._repr_html_`` shows in Jupyter):
  the verdict card and the named training rows, redacted by default, drawn by the report's own blocks
  (``memviz/templates/notebook.html.j2``, autoescaped: :mod:`memviz.auditing.templating`).
* :func:`audit_metrics`: every figure of the audit as a flat ``name → number`` dictionary
  (``Audit.to_metrics()``), what a tracker (MLflow, Weights & Biases) logs as metrics: the figures of
  audit.json, the family's p-values and outcomes (1 holds, 0 not), the supporting tests' headline figures;
  absent and not-a-number figures left out.
* :func:`log_mlflow`: the metrics, the verdict (tags ``memviz_verdict``, ``memviz_sentence``) and, when an
  output folder is given, audit.json, report.html and rows.csv as artifacts, into an MLflow run
  (``Audit.log_mlflow()``, ``memviz audit --mlflow URI``). MLflow is an extra
  (``pip install 'memviz[mlflow]'``).
"""
from __future__ import annotations

import math
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from memviz.auditing.html import audit_card, row_names
from memviz.auditing.report import table_cells
from memviz.auditing.templating import render
from memviz.errors import BadOption, install_hint
from memviz.verdict.verdict import CODES, REFUSALS

if TYPE_CHECKING:
    from memviz.auditing.result import Audit

#: named rows a notebook shows (the report shows 50, rows.csv all)
NOTEBOOK_ROWS = 20


def audit_fragment(a: "Audit", *, train=None, redacted: bool = True, max_rows: int = NOTEBOOK_ROWS) -> str:
    """The verdict card and the first ``max_rows`` named training rows as one HTML fragment (no script,
    every text escaped). Rows are named by the training table's key when ``train`` (a Table with a key)
    is given, hashed when ``redacted``; else by memviz's row number."""
    over = a.frame("over_copied", row_id=True)
    rows, more = None, ""
    if len(over):
        shown = over.head(max_rows)
        names = row_names(train, shown["row_id"], redacted=redacted, salt=secrets.token_hex(16), audit=a)
        cols = [c for c in ("close_copies", "expected_close", "identical_copies", "q_value") if c in shown]
        table = pd.DataFrame({c.replace("_", " "): shown[c].to_numpy() for c in cols},
                             index=pd.Index(names, name="named training row"))
        more = f" (first {max_rows} of {len(over):,}; all in rows.csv)" if len(over) > max_rows else ""
        rows = table_cells(table)
    return render("notebook.html.j2", card=audit_card(a, redacted), rows=rows, more=more)


def _put(out: dict, name: str, value) -> None:
    """``out[name] = float(value)`` for a finite number or a bool (1 / 0); anything else left out."""
    if isinstance(value, bool):
        out[name] = 1.0 if value else 0.0
        return
    try:
        v = float(value)
    except (TypeError, ValueError):
        return
    if math.isfinite(v):
        out[name] = v


def audit_metrics(a: "Audit") -> dict[str, float]:
    """Every figure of ``a`` as ``name → number`` (module docstring); names are stable, dotted, and
    valid MLflow metric keys."""
    out: dict[str, float] = {}
    for f in a.findings:                         # what the verdict rests on, as audit.json's findings
        _put(out, f"findings.{f.member}.observed", f.observed)
        _put(out, f"findings.{f.member}.expected", f.expected)
        _put(out, f"findings.{f.member}.holds", bool(f.holds))
    for name, value in a.ratio_test().items():   # the ratio test's averages under its own name
        if isinstance(value, (list, tuple)):
            _put(out, f"ratio_test.{name}.low", value[0])
            _put(out, f"ratio_test.{name}.high", value[1])
        else:
            _put(out, f"ratio_test.{name}", value)
    for name in ("n_over_copied", "identical_share", "holdout_identical_share", "flagged_exact_share", "dcr_share",
                 "shape", "shape_reference"):
        _put(out, name, getattr(a, name))
    c = a.close
    if c is not None:
        for name in ("too_close_share", "expected_share", "p_too_close", "n_too_close", "n_identical",
                     "p_identical", "identical_excess", "p_rows", "threshold", "p_partial"):
            _put(out, f"closeness.{name}", getattr(c, name, None))
    for m in a.family.members:
        _put(out, f"family.{m.name}.p", m.p)
        _put(out, f"family.{m.name}.p_adjusted", m.p_adjusted)
        _put(out, f"family.{m.name}.holds", bool(m.holds))
    v = a.verdict

    for code in CODES:
        if code not in REFUSALS:
            _put(out, f"verdict.{code}", v.code == code)
    _put(out, "verdict.refused", v.code in REFUSALS)
    for key, e in a.evidence.items():
        figures = getattr(e, "figures", None)
        if callable(figures):
            for fk, fv in figures().items():
                _put(out, f"evidence.{key}.{fk}", fv)
    return out


def log_mlflow(a: "Audit", tracking_uri: str | None = None, *, experiment: str = "memviz",
               run_name: str | None = None, out_dir: str | Path | None = None) -> str:
    """Log ``a`` into MLflow and return the run's id.

    Into the active run (``mlflow.start_run()`` around the call) when there is one and no
    ``tracking_uri`` is given; else into a new run of ``experiment`` at ``tracking_uri`` (default:
    MLflow's own, e.g. ``MLFLOW_TRACKING_URI``), ended before returning. Logs :func:`audit_metrics` as
    metrics, the verdict's code and sentence as tags, and the files of ``out_dir`` (an audit's output
    folder: audit.json, report.html, rows.csv) as artifacts under ``memviz/``."""
    try:
        import mlflow  # lazy: mlflow, an optional extra (memviz[mlflow]): only log_mlflow needs it
        from mlflow.entities import (  # lazy: mlflow, an optional extra (memviz[mlflow]): only log_mlflow needs it
            Metric,
            RunTag,
        )
        from mlflow.tracking import MlflowClient  # lazy: mlflow, an optional extra (memviz[mlflow])
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(f"MLflow logging needs mlflow: {install_hint('mlflow')}", name="mlflow") from exc

    from mlflow.exceptions import MlflowException  # lazy: mlflow, an optional extra (memviz[mlflow])

    v = a.verdict
    try:
        client = MlflowClient(tracking_uri)
        active = mlflow.active_run() if tracking_uri is None else None
        if active is not None:
            run_id, own = active.info.run_id, False
        else:
            exp = client.get_experiment_by_name(experiment)
            exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
            run_id, own = client.create_run(exp_id, run_name=run_name or "memviz audit").info.run_id, True
    except MlflowException as exc:         # a tracking URI MLflow cannot use: one line naming it
        raise BadOption(f"MLflow tracking URI {tracking_uri or '(MLflow default)'}: {exc.message}") from None
    try:
        now = int(time.time() * 1000)
        metrics = [Metric(k, val, now, 0) for k, val in audit_metrics(a).items()]
        tags = [RunTag("memviz_verdict", v.code), RunTag("memviz_sentence", v.sentence[:4900]),
                RunTag("memviz_version", a.provenance.memviz_version)]
        client.log_batch(run_id, metrics=metrics, tags=tags)
        if out_dir is not None:                      # the folder's files: audit.json, report.html, rows.csv, ...
            for path in sorted(Path(out_dir).iterdir()):
                if path.is_file() and not path.name.startswith("."):
                    client.log_artifact(run_id, str(path), artifact_path="memviz")
    except BaseException:
        if own:
            client.set_terminated(run_id, status="FAILED")
        raise
    if own:
        client.set_terminated(run_id)
    return run_id
