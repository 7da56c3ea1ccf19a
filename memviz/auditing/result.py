"""The Audit: one frozen result behind every sentence, page, report and JSON about a synthetic table.

Built by :func:`memviz.auditing.build.audit` (any synthetic table) or :func:`memviz.auditing.build.from_run`
(one check of a warm-up run). Figures (all shares in [0, 1], the excess in share points):

* mem_ratio   p1 = flagged generated rows / M (flagged: r = d(g, NN1) / d(g, NN2) < 1/3).
* floor       p0 = flagged hold-out rows / H, 95 % Wilson interval (:mod:`memviz.measure.floor`).
* excess      p1 − p0, Newcombe's hybrid score interval (:mod:`memviz.measure.floor`).
* copy_share  c = (p1 − p0) / (1 − p0), MOVER-R interval (:mod:`memviz.auditing.share`).
* identical_share, holdout_identical_share  share of generated / hold-out rows equal in every
  column to their nearest training row (:func:`memviz.measure.closeness.closeness`).
* dcr_share   share of generated rows whose closest real row is a training row rather than a
  hold-out row (balanced, ideal 0.5; :func:`memviz.evaluate.report.dcr_share`).
* shape, shape_reference  SDMetrics' Column Shapes of the generated rows and of the hold-out,
  each against the training table (:func:`memviz.evaluate.report.quality`): the utility gate.
* rows        per training row: copies, expected, p_value, q_value, over_copied, closeness
  (:mod:`memviz.measure.rownull`), and ``row_test`` its calibration and power at these sizes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pandas as pd

from memviz.auditing.verdict import Verdict, verdict_of
from memviz.evidence.suite import Evidence

FORMAT = "memviz.audit/1"
#: the files :meth:`Audit.write` writes
FILES = {"audit": "audit.json", "report": "report.html", "rows": "rows.csv"}


@dataclass(frozen=True)
class RunInfo:
    """Where an audit of a warm-up check comes from.

    run_id, run_dir : the run folder's name and path. check, epoch : the audited check.
    status : finished, cancelled, interrupted, running or failed. n_checks : finished checks.
    epochs : the run's planned epochs. p, k, T : DynamicCut's settings when a caller tuned them (else None).
    pooled_checks : how many checks the per-row test pooled (M = Σ M_e over them).
    """

    run_id: str
    run_dir: str
    check: int
    epoch: int
    status: str
    n_checks: int
    epochs: int | None = None
    p: float | None = None
    k: int | None = None
    T: int | None = None
    pooled_checks: int = 1

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Provenance:
    """Which tables, sizes, distance and code produced the audit.

    fingerprints : {train, synthetic, holdout}: sha256 of each table's values and row ids
        (:func:`memviz.tables.data.fingerprint`; holdout "" without one).
    sources : {train, synthetic, holdout}: where each table came from (a path or "frame").
    n_train, n_synthetic, n_holdout : N, M (the audited rows) and H (0 without a hold-out).
    distance, memviz_version, created (UTC, ISO 8601), target, run (a :class:`RunInfo` or None).
    """

    fingerprints: Mapping[str, str]
    sources: Mapping[str, str]
    n_train: int
    n_synthetic: int
    n_holdout: int
    distance: str
    memviz_version: str
    created: str
    target: str | None = None
    run: RunInfo | None = None

    def to_dict(self) -> dict:
        return {"fingerprints": dict(self.fingerprints), "sources": dict(self.sources), "n_train": self.n_train,
                "n_synthetic": self.n_synthetic, "n_holdout": self.n_holdout, "distance": self.distance,
                "memviz_version": self.memviz_version, "created": self.created, "target": self.target,
                "run": self.run.to_dict() if self.run is not None else None}


@dataclass(frozen=True)
class RowTest:
    """The per-row test's calibration and power at these sizes (:mod:`memviz.auditing.rowtest`).

    status : ``calibrated``, ``low_power``, ``uncalibrated``, ``too_small`` (not run) or ``no_holdout``.
    n_reference, n_holdout, n_generated : N, H and M of the test.
    false_alarm : share of simulated null resamples with at least one false over-copied row (BH
        promises ≤ 5 %); NaN when not simulated.
    power : {extra copies per planted row: share of the planted rows found}.
    n_planted, n_resamples : planted rows per resample and resamples simulated.
    """

    status: str
    n_reference: int
    n_holdout: int
    n_generated: int
    false_alarm: float = math.nan
    power: Mapping[int, float] = field(default_factory=dict)
    n_planted: int = 0
    n_resamples: int = 0

    def sentence(self) -> str:
        if self.status == "no_holdout":
            return "The per-row test needs a hold-out."
        if self.status == "too_small":
            return (f"The per-row test is not run: {self.n_holdout:,} hold-out rows are too few to estimate "
                    "each training row's chance copies.")
        found = ", ".join(f"{100 * v:.0f} % of rows copied {k} extra times" for k, v in sorted(self.power.items()))
        return (f"Per-row test at N = {self.n_reference:,}, M = {self.n_generated:,}, H = {self.n_holdout:,}: "
                f"any false over-copied row in {100 * self.false_alarm:.0f} % of {self.n_resamples} simulated "
                f"copy-free resamples; it finds {found}.")

    def to_dict(self) -> dict:
        return {"status": self.status, "n_reference": self.n_reference, "n_holdout": self.n_holdout,
                "n_generated": self.n_generated, "false_alarm": self.false_alarm,
                "power": {str(k): v for k, v in sorted(self.power.items())}, "n_planted": self.n_planted,
                "n_resamples": self.n_resamples, "sentence": self.sentence()}


@dataclass(frozen=True, eq=False)
class Audit:
    """One audit of a synthetic table against its training table (module docstring).

    ``floor``, ``floor_ci``, ``excess``, ``excess_ci``, ``copy_share``, ``copy_share_ci``,
    ``holdout_identical_share`` and ``dcr_share`` are None without a hold-out; ``shape`` and
    ``shape_reference`` are None when quality was not measured. ``rows`` is a DataFrame (one row
    per training row), ``columns`` the column leak summary (column, kind, memorized_rate,
    non_memorized_rate), ``evidence`` the tests beyond the ratio test
    (:class:`~memviz.evidence.suite.Evidence`: membership, data copying, attribute inference, or a
    caller's own, each with ``to_dict()`` and ``sentence()``; consulted by the verdict only as
    supporting evidence). ``generated``: per
    generated row synthetic_id, nn1, ratio, memorized, exact (M rows); ``floor_detail``: the
    :class:`~memviz.measure.floor.Floor` with the null the per-row test used
    (:func:`~memviz.measure.rownull.joint_floor`: pass it to
    :func:`~memviz.leaks.rows.copies_vs_null` for the expected counts of the same test); ``per_check``: a run's per-check
    figures with the floor columns (None for a single table).
    """

    mem_ratio: float
    n_memorized: int
    floor: float | None
    floor_ci: tuple[float, float] | None
    excess: float | None
    excess_ci: tuple[float, float] | None
    copy_share: float | None
    copy_share_ci: tuple[float, float] | None
    n_over_copied: int
    identical_share: float
    holdout_identical_share: float | None
    dcr_share: float | None
    shape: float | None
    shape_reference: float | None
    rows: pd.DataFrame
    columns: pd.DataFrame
    row_test: RowTest
    provenance: Provenance
    flagged_exact_share: float = math.nan
    evidence: Evidence = field(default_factory=Evidence)
    generated: pd.DataFrame | None = None
    floor_detail: object = None
    per_check: pd.DataFrame | None = None

    # ------------------------------------------------------------------ reading
    @property
    def verdict(self) -> Verdict:
        """The one verdict (:mod:`memviz.auditing.verdict`), derived only from this object."""
        return verdict_of(self)

    @property
    def over_copied_rows(self) -> pd.DataFrame:
        """The over-copied training rows, most excess first."""
        r = self.rows
        return r[r["over_copied"]].sort_values("excess", ascending=False) if "over_copied" in r else r.iloc[:0]

    def headline(self) -> dict:
        """The figures a one-line summary carries (the CLI's last stdout line)."""
        v = self.verdict
        return {"mem_ratio": self.mem_ratio, "floor": self.floor, "floor_ci": _pair(self.floor_ci),
                "excess": self.excess, "excess_ci": _pair(self.excess_ci), "copy_share": self.copy_share,
                "copy_share_ci": _pair(self.copy_share_ci), "n_over_copied": self.n_over_copied,
                "verdict": {"code": v.code, "sentence": v.sentence}}

    def to_dict(self) -> dict:
        """Every figure, the verdict, the row test, the column summary and the provenance (JSON-ready;
        the per-row table is :attr:`rows`, written beside it as rows.csv). Validates against
        :data:`memviz.auditing.schema.SCHEMA`."""
        v = self.verdict
        return {"format": FORMAT, "mem_ratio": self.mem_ratio, "n_memorized": self.n_memorized,
                "floor": self.floor, "floor_ci": _pair(self.floor_ci), "excess": self.excess,
                "excess_ci": _pair(self.excess_ci), "copy_share": self.copy_share,
                "copy_share_ci": _pair(self.copy_share_ci), "n_over_copied": self.n_over_copied,
                "identical_share": self.identical_share, "holdout_identical_share": self.holdout_identical_share,
                "flagged_exact_share": self.flagged_exact_share, "dcr_share": self.dcr_share, "shape": self.shape,
                "shape_reference": self.shape_reference, "verdict": v.to_dict(), "row_test": self.row_test.to_dict(),
                "over_copied": _records(self.over_copied_rows.head(100)),
                "columns": _records(self.columns), "provenance": self.provenance.to_dict(),
                "evidence": {k: {**_as_dict(e), "sentence": str(e.sentence())} for k, e in self.evidence.items()}}

    def to_json(self, path: str | Path | None = None, indent: int | None = 1) -> str:
        """Strict JSON of :meth:`to_dict` (NaN → null); written atomically to ``path`` when given."""
        from memviz.io import atomic_write_text, dumps

        text = dumps(self.to_dict(), indent=indent)
        if path is not None:
            atomic_write_text(Path(path), text + "\n")
        return text

    def to_html(self, path: str | Path | None = None, *, redacted: bool = True, train=None, synthetic=None) -> str:
        """Self-contained HTML report (no external requests; redacted by default); written atomically to
        ``path`` when given. ``train`` / ``synthetic`` (Tables) add the most-copied rows beside their copies."""
        from memviz.auditing.html import audit_html
        from memviz.io import atomic_write_text

        text = audit_html(self, redacted=redacted, train=train, synthetic=synthetic)
        if path is not None:
            atomic_write_text(Path(path), text)
        return text

    def write(self, out_dir: str | Path, *, redacted: bool = True, raw_csv: bool = False, train=None,
              synthetic=None) -> dict:
        """DIR/audit.json, DIR/report.html and DIR/rows.csv, written as one unit (:func:`memviz.folders.folder_unit`:
        staged beside DIR with DIR/contents.json, renamed into place, under a lock); returns their paths."""
        from memviz.folders import folder_unit
        from memviz.io import export_csv

        out = Path(out_dir)
        with folder_unit(out, names=tuple(FILES.values())) as stage:
            export_csv(stage / FILES["rows"], self.rows, raw=raw_csv)
            self.to_html(stage / FILES["report"], redacted=redacted, train=train, synthetic=synthetic)
            self.to_json(stage / FILES["audit"])
        return {k: str(out / v) for k, v in FILES.items()}


def _pair(v):
    """[low, high], or None when absent or not finite (a floor of 100 % leaves the copy share undefined)."""
    if v is None or not all(math.isfinite(float(x)) for x in v):
        return None
    return [float(v[0]), float(v[1])]


def _records(df: pd.DataFrame) -> list[dict]:
    from memviz.io import to_jsonable

    return to_jsonable(df.to_dict(orient="records"))


def _as_dict(e) -> dict:
    d = e.to_dict()
    return dict(d) if isinstance(d, Mapping) else {"value": d}
