"""The Audit: one frozen result behind every sentence, page, report and JSON about a synthetic table.

Made by ``memviz.audit`` (:data:`audit`: any synthetic table) or :meth:`Audit.from_run` (one check of a warm-up
run), the two entry points, both defined here; their work is :mod:`memviz.verdict.build`'s. Figures (all shares in [0, 1], the excess in share points):

* mem_ratio   p1 = flagged generated rows / M (flagged: r = d(g, NN1) / d(g, NN2) < 1/3).
* floor       p0 = flagged hold-out rows / H, 95 % Wilson interval (:mod:`memviz.measure.floor`).
* excess      p1 − p0, Newcombe's hybrid score interval (:mod:`memviz.measure.floor`).
* copy_share  c = (p1 − p0) / (1 − p0), MOVER-R interval (:mod:`memviz.verdict.share`).
* close       how close every generated row is to its nearest training row against the hold-out's rows
  (:mod:`memviz.measure.tooclose`): the too-close share, the identical share and the per-row test of close
  copies, each an exact test.
* identical_share, holdout_identical_share  share of generated / hold-out rows equal in every distance
  column to a training row (the closeness tests' counts when they ran).
* family      the verdict's evidence as one family of tests, Holm-adjusted (:mod:`memviz.verdict.family`).
* dcr_share   share of generated rows whose closest real row is a training row rather than a
  hold-out row (balanced, ideal 0.5; :func:`memviz.evaluate.synthetic.dcr_share`).
* shape, shape_reference  SDMetrics' Column Shapes of the generated rows and of the hold-out,
  each against the training table (:func:`memviz.evaluate.synthetic.quality`): the utility gate.
* rows        per training row: the ratio test's copies, and its close copies, identical copies, the real
  rows' close matches, expected, p_value, q_value, over_copied (named), how close its closest copy is;
  ``row_test`` says what the per-row test can see at these sizes.

Every row a reader meets is named by the training table's own row key (``key``, e.g. ``customer_id``: the
frames :attr:`Audit.rows`, :attr:`Audit.over_copied_rows`, :attr:`Audit.verbatim_rows`, rows.csv, audit.json's
``over_copied`` and the evidence's ``most_exposed``, the report), memviz's internal ``row_id`` only where a caller
asks for it (:meth:`Audit.frame`, ``row_id=True``); a table without a key names its rows by ``row_id``, the
row's 0-based position in the file it was read from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from memviz.auditing.html import audit_html
from memviz.auditing.notebook import audit_fragment, audit_metrics, log_mlflow
from memviz.evidence.suite import Evidence
from memviz.folders import folder_unit
from memviz.io import atomic_write_text, dumps, export_csv, to_jsonable
from memviz.measure.tooclose import CloseCopies
from memviz.tables.redact import key_labels
from memviz.verdict.evidence_words import result_record
from memviz.verdict.build import KEY, audit_fields, key_part, run_fields
from memviz.verdict.family import Family
from memviz.verdict.provenance import Provenance
from memviz.verdict.rowtest import RowTest
from memviz.verdict.verdict import Finding, Verdict, copying_region, verdict_of
from memviz.verdict.verdict import findings as findings_of

if TYPE_CHECKING:
    from memviz.measure.floor import Floor

FORMAT = "memviz.audit/3"   # 3: the verdict and its findings first, the ratio test's figures under ratio_test,
#: rows named by the user's key (``key``; ``over_copied`` records carry it)
#: the files :meth:`Audit.write` writes
FILES = {"audit": "audit.json", "report": "report.html", "rows": "rows.csv"}


@dataclass(frozen=True, eq=False)
class Audit:
    """One audit of a synthetic table against its training table (module docstring).

    ``floor``, ``floor_ci``, ``excess``, ``excess_ci``, ``copy_share``, ``copy_share_ci``,
    ``holdout_identical_share`` and ``dcr_share`` are None without a hold-out; ``shape`` and
    ``shape_reference`` are None when quality was not measured. ``per_row`` is the per-row table as memviz
    keeps it (one row per training row, by ``row_id``, with the user's key in :data:`KEY` when the training
    table has one); readers take :attr:`rows`, :attr:`over_copied_rows` and :attr:`verbatim_rows`, each named
    by the user's key (``key``: the training table's key column, None without one). ``columns`` the column
    leak summary (column, kind, memorized_rate,
    non_memorized_rate), ``evidence`` the tests beyond the ratio test
    (:class:`~memviz.evidence.suite.Evidence`: membership, data copying, attribute inference, or a
    caller's own, each with ``to_dict()`` and ``sentence()``; the data-copying test's regions enter the
    verdict's family, the others qualify it). ``close``: the closeness tests
    (:class:`~memviz.measure.tooclose.CloseCopies`; None without a hold-out at hand); ``family``: the verdict's
    evidence, Holm-adjusted (:class:`~memviz.verdict.family.Family`). ``generated``: per generated row
    synthetic_id, nn1, ratio, memorized, exact of the ratio test, and close_nn1, distance, too_close, close of the
    closeness tests (M rows); ``floor_detail``: the ratio test's :class:`~memviz.measure.floor.Floor` (pass it to
    :func:`~memviz.leaks.rows.copies_vs_null` for the copies fresh rows would give each row); ``per_check``: a
    run's per-check figures with the floor columns (None for a single table).
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
    per_row: pd.DataFrame
    columns: pd.DataFrame
    row_test: RowTest
    provenance: Provenance
    flagged_exact_share: float = math.nan
    evidence: Evidence = field(default_factory=Evidence)
    generated: pd.DataFrame | None = None
    floor_detail: Floor | None = None
    per_check: pd.DataFrame | None = None
    close: CloseCopies | None = None
    family: Family = field(default_factory=Family)
    key: str | tuple[str, ...] | None = None

    # ------------------------------------------------------------------ made from a warm-up run
    @staticmethod
    def from_run(run_dir: str | Path, check: int | None = None, *, holdout=None, window: int = 1,
                 p: float | None = None, k: int | None = None, T: int | None = None, quality: bool = True,
                 dcr: bool = True, evidence: bool | Mapping[str, object] = True, device: str = "auto",
                 seed: int = 0, backend: str = "local", scheduler=None) -> Audit:
        """The audit of one check of a warm-up run (default: its last finished check).

        Every test reads the rows generated at that check (``window`` > 1: at the last ``window`` checks up to
        it, said in the provenance and the verdict's sentence); DynamicCut's ranking keeps the whole history
        elsewhere. The ratio test's figures are the stored ones; the closeness tests and the evidence search
        those rows again against the hold-out: ``holdout`` when given (its floor is then measured afresh and
        audit.json names it), else the run's floor's source file when it still holds the same rows (without
        it the closeness tests do not run, and the verdict says so). ``p``, ``k``, ``T``: the DynamicCut
        settings a caller tuned, carried in the provenance. The run's status (finished / cancelled /
        interrupted / running / failed) and its number of checks enter the verdict. ``backend``, ``scheduler``:
        as ``memviz.audit``'s (the searches of the floor measured afresh, the closeness tests and the membership
        attack on a Dask cluster; the same files).
        """
        return Audit(**run_fields(run_dir, check, holdout=holdout, window=window, p=p, k=k, T=T, quality=quality,
                                  dcr=dcr, evidence=evidence, device=device, seed=seed, backend=backend,
                                  scheduler=scheduler))

    # ------------------------------------------------------------------ the rows, named as the user knows them
    @property
    def key_columns(self) -> tuple[str, ...]:
        """The user's key columns (one, several for a composite key; () without a key)."""
        k = self.key
        return () if k is None else (k,) if isinstance(k, str) else tuple(k)

    def _held(self) -> list[str]:
        """The per-row table's columns holding the key ([] when it holds none)."""
        if self.key is None:
            return []
        if isinstance(self.key, str):
            return [KEY] if KEY in self.per_row else []
        parts = [key_part(c) for c in self.key_columns]
        return parts if all(p in self.per_row for p in parts) else []

    @property
    def key_names(self) -> list[str]:
        """The columns of :meth:`frame` that name the rows: :attr:`key_column`, or a composite key's columns
        (each ``"<column> (key)"`` when memviz's per-row table has a column of that name)."""
        if isinstance(self.key, str) or not self._held():
            return [self.key_column]
        return [c if c not in self.per_row.columns else f"{c} (key)" for c in self.key_columns]

    def frame(self, which: str = "rows", *, row_id: bool = False) -> pd.DataFrame:
        """One of the per-row frames, each row named by the user's key: ``which`` is ``rows`` (every training
        row), ``over_copied`` (the named rows, most close copies first), ``verbatim`` (the rows with an identical
        generated row, most identical copies first) or ``near_verbatim`` (the rows a generated row equals in every
        column but one). The key's column (its own name, or ``"<key> (key)"`` when
        memviz has a column of that name) comes first; ``row_id`` (memviz's internal number of the row) is kept
        after it only when asked, or when the table has no key (then it is the row's only name: its 0-based
        position in the file it was read from)."""
        r = self.per_row
        if which == "over_copied":
            if "over_copied" not in r:
                r = r.iloc[:0]
            else:
                order = [c for c in ("close_copies", "q_value") if c in r]
                r = r[r["over_copied"]].sort_values(order, ascending=[False, True][:len(order)])
        elif which in ("verbatim", "near_verbatim"):
            col = "identical_copies" if which == "verbatim" else "near_verbatim_copies"
            r = r[r[col] > 0].sort_values(col, ascending=False, kind="stable") if col in r else r.iloc[:0]
        elif which != "rows":
            raise ValueError(f"which={which!r}: use 'rows', 'over_copied', 'verbatim' or 'near_verbatim'")
        r = r.reset_index(drop=True)
        held = self._held()
        if len(held) > 1:
            names = self.key_names
            out = r.rename(columns=dict(zip(held, names)))
            first = [*names, "row_id"] if row_id else names
            return out[first + [c for c in out.columns if c not in (*names, "row_id")]]
        if self.key is None or KEY not in r:
            return r.drop(columns=[KEY, *(key_part(c) for c in self.key_columns)], errors="ignore")
        name = self.key_column
        out = r.rename(columns={KEY: name}) if name != KEY else r
        first = [name, "row_id"] if row_id else [name]
        return out[first + [c for c in out.columns if c not in (name, "row_id")]]

    @property
    def key_column(self) -> str:
        """The column of :meth:`frame` that names the rows: the user's key (``"<key> (key)"`` when memviz's
        per-row table has a column of that name), else ``row_id``."""
        if not self._held():
            return "row_id"
        if not isinstance(self.key, str):
            return ", ".join(self.key_names)
        return self.key if self.key == KEY or self.key not in self.per_row.columns else f"{self.key} (key)"

    @property
    def rows(self) -> pd.DataFrame:
        """Every training row: the ratio test's copies, the closeness tests' columns and over_copied, named by the
        user's key (:meth:`frame`)."""
        return self.frame("rows")

    def key_of(self, row_ids) -> list:
        """The user's key of each of these training row_ids, as plain values (the row_ids themselves without a key;
        None for a missing key value)."""
        ids = np.asarray(row_ids, dtype=np.int64).reshape(-1)
        held = self._held()
        if not held:
            return [int(i) for i in ids]
        if len(held) > 1:                   # a composite key: {column: value} per row
            parts = self.per_row.set_index("row_id")[held].reindex(ids)
            return [dict(zip(self.key_columns, map(_plain, row))) for row in parts.itertuples(index=False)]
        values = self.per_row.set_index("row_id")[KEY].reindex(ids)
        return [_plain(v) for v in values.to_numpy(dtype=object)]

    def row_names(self, row_ids, *, redacted: bool = False, salt: str | None = None) -> list[str]:
        """How a reader names each of these training rows: ``"customer_id 1077"`` (the user's key, hashed when
        ``redacted``: :func:`memviz.tables.redact.key_labels` keyed by ``salt``), else ``"row 17"``."""
        ids = [int(i) for i in row_ids]
        held = self._held()
        if not held:
            return [f"row {i}" for i in ids]
        values = self.key_of(ids)
        if len(held) > 1:
            cols = self.key_columns
            parts = [key_labels([v[c] for v in values], c, salt=salt) if redacted else
                     ["missing" if v[c] is None else str(v[c]) for v in values] for c in cols]
            return [", ".join(f"{c}={t}" for c, t in zip(cols, row)) for row in zip(*parts)]
        if redacted:
            return [f"{self.key} {t}" for t in key_labels(values, self.key, salt=salt)]
        return [f"{self.key} {'missing' if v is None else v}" for v in values]

    # ------------------------------------------------------------------ reading
    @cached_property
    def verdict(self) -> Verdict:
        """The one verdict (:mod:`memviz.verdict.verdict`), derived only from this object (computed once)."""
        return verdict_of(self)

    @cached_property
    def findings(self) -> tuple[Finding, ...]:
        """The figures the verdict rests on: each member of its family with the share it reads among the generated
        rows, the share real rows give, its p and whether it holds, those that hold first
        (:func:`memviz.verdict.verdict.findings`)."""
        return findings_of(self)

    def region_distances(self):
        """(generated, hold-out, threshold, words) inside the region the data-copying test finds copying in most
        strongly: each row's distance to its nearest training row there, the region's real rows' 5 % quantile,
        and the region in the user's column names (what :func:`memviz.viz.memorization.closeness_plot` draws);
        None when no region copies."""
        cell = copying_region(self)
        dc = self.evidence.get("data_copying")
        got = dc.cell_distances(int(cell["cell"])) if cell is not None else None
        if got is None or not len(got[1]):
            return None
        g, h = got
        cols = str(cell.get("columns", "")) or f"region {int(cell['cell'])}"
        return g, h, float(np.quantile(h, 0.05)), f"the region set apart by {cols}"

    def ratio_test(self) -> dict:
        """The paper's ratio test against its floor: one member of the family, its averages (mem_ratio, floor,
        excess, copy_share and their intervals) labelled as its own."""
        return {"mem_ratio": self.mem_ratio, "n_memorized": self.n_memorized, "floor": self.floor,
                "floor_ci": _pair(self.floor_ci), "excess": self.excess, "excess_ci": _pair(self.excess_ci),
                "copy_share": self.copy_share, "copy_share_ci": _pair(self.copy_share_ci)}

    @property
    def over_copied_rows(self) -> pd.DataFrame:
        """The named training rows (more close copies than real rows give them), most close copies first, named
        by the user's key (:meth:`frame`)."""
        return self.frame("over_copied")

    @property
    def verbatim_rows(self) -> pd.DataFrame:
        """The training rows with a generated row identical to them, most identical copies first, named by the
        user's key (a reading, not a test: real rows meet a training row too, ``close.holdout_identical_share``
        of them)."""
        return self.frame("verbatim")

    @property
    def near_verbatim_rows(self) -> pd.DataFrame:
        """The training rows a generated row equals in every column but one (and not in all), most such copies
        first, named by the user's key (a reading, like :attr:`verbatim_rows`: the near-verbatim member tests it)."""
        return self.frame("near_verbatim")

    def headline(self) -> dict:
        """The figures a one-line summary carries (the CLI's last stdout line): the verdict, then the findings it
        rests on, the rows it names, and the ratio test's averages under their own name."""
        v = self.verdict
        return {"verdict": {"code": v.code, "sentence": v.sentence},
                "findings": [f.to_dict() for f in self.findings], "n_over_copied": self.n_over_copied,
                "ratio_test": self.ratio_test()}

    def to_dict(self) -> dict:
        """Every figure, the verdict, the row test, the column summary and the provenance (JSON-ready;
        the per-row table is :attr:`rows`, written beside it as rows.csv). Validates against
        :data:`memviz.auditing.json_schema.SCHEMA`."""
        v = self.verdict
        return {"format": FORMAT, "verdict": v.to_dict(), "findings": [f.to_dict() for f in self.findings],
                "n_over_copied": self.n_over_copied, "ratio_test": self.ratio_test(),
                "identical_share": self.identical_share, "holdout_identical_share": self.holdout_identical_share,
                "flagged_exact_share": self.flagged_exact_share, "dcr_share": self.dcr_share, "shape": self.shape,
                "shape_reference": self.shape_reference, "row_test": self.row_test.to_dict(),
                "key": (self.key if isinstance(self.key, str) else list(self.key_columns)) if self._held() else None,
                "over_copied": self.named_records(self.frame("over_copied", row_id=True).head(100)),
                "columns": _records(self.columns), "provenance": self.provenance.to_dict(),
                "evidence": {k: self.named_evidence(result_record(e))
                             for k, e in self.evidence.items()},
                "closeness": self.close.to_dict() if self.close is not None else None,
                "family": self.family.to_dict()}

    def to_json(self, path: str | Path | None = None, indent: int | None = 1) -> str:
        """Strict JSON of :meth:`to_dict` (NaN → null); written atomically to ``path`` when given."""
        text = dumps(self.to_dict(), indent=indent)
        if path is not None:
            atomic_write_text(Path(path), text + "\n")
        return text

    def to_html(self, path: str | Path | None = None, *, redacted: bool = True, train=None, synthetic=None) -> str:
        """Self-contained HTML report (no external requests; redacted by default); written atomically to
        ``path`` when given. ``train`` / ``synthetic`` (Tables) add the most-copied rows beside their copies."""
        text = audit_html(self, redacted=redacted, train=train, synthetic=synthetic)
        if path is not None:
            atomic_write_text(Path(path), text)
        return text

    def named_records(self, frame: pd.DataFrame) -> list[dict]:
        """``frame`` (with a ``row_id`` column) as JSON records naming each row as audit.json does: ``"key"``, the
        user's key of the row, when the table has one (its column name is audit.json's top-level ``key``), else
        ``"row_id"``."""
        recs = _records(frame)
        if not self._held():
            return recs
        names = self.key_names
        keys = self.key_of([r["row_id"] for r in recs]) if recs and "row_id" in recs[0] else None
        out = []
        for i, r in enumerate(recs):
            if keys is not None:
                rec = {"key": keys[i]}
            elif len(names) > 1:
                rec = {"key": {c: r.get(n) for c, n in zip(self.key_columns, names)}}
            else:
                rec = {"key": r.get(names[0])}
            rec.update((k, v) for k, v in r.items() if k not in ("row_id", *names))
            out.append(rec)
        return out

    def named_evidence(self, d: dict) -> dict:
        """An evidence test's JSON with each training row it names (``most_exposed``) named by the user's key."""
        rows = d.get("most_exposed")
        if self.key is None or not isinstance(rows, list) or not rows or not all(
                isinstance(r, Mapping) and "row_id" in r for r in rows):
            return d
        return {**d, "most_exposed": self.named_records(pd.DataFrame(rows))}

    def rows_frame(self, train=None, *, row_id: bool = False) -> pd.DataFrame:
        """The per-row table as rows.csv holds it: :attr:`rows`, each row named by the user's key (``row_id`` after
        it when asked). ``train``: the training Table, read for its key only when this audit carries none (an audit
        kept before keys were)."""
        if self.key is None and train is not None and getattr(train, "key", None) is not None:
            return train.with_keys(self.per_row.reset_index(drop=True), keep_row_id=row_id)
        return self.frame("rows", row_id=row_id)

    def write(self, out_dir: str | Path, *, redacted: bool = True, raw_csv: bool = False, train=None,
              synthetic=None, row_id: bool = False) -> dict:
        """DIR/audit.json, DIR/report.html and DIR/rows.csv, written as one unit (:func:`memviz.folders.folder_unit`:
        staged beside DIR with DIR/contents.json, renamed into place, under a lock); returns their paths.
        rows.csv names each row by the user's key (:meth:`rows_frame`; ``row_id``: memviz's row_id after it);
        ``train`` / ``synthetic`` add the most-copied rows beside their copies to the report."""
        out = Path(out_dir)
        with folder_unit(out, names=tuple(FILES.values())) as stage:
            export_csv(stage / FILES["rows"], self.rows_frame(train, row_id=row_id), raw=raw_csv)
            self.to_html(stage / FILES["report"], redacted=redacted, train=train, synthetic=synthetic)
            self.to_json(stage / FILES["audit"])
        return {k: str(out / v) for k, v in FILES.items()}

    # ------------------------------------------------- notebooks and trackers (memviz.auditing.notebook)
    def _repr_html_(self) -> str:
        """Jupyter's view of the audit: the verdict card and the named training rows, redacted."""
        return audit_fragment(self)

    def to_metrics(self) -> dict[str, float]:
        """Every figure as a flat ``name → number`` dictionary (for MLflow, Weights & Biases, ...)."""
        return audit_metrics(self)

    def log_mlflow(self, tracking_uri: str | None = None, *, experiment: str = "memviz", run_name: str | None = None,
                   out_dir: str | Path | None = None) -> str:
        """Log the metrics, the verdict and (``out_dir``) the audit's files into MLflow; returns the run id
        (:func:`memviz.auditing.notebook.log_mlflow`; ``pip install 'memviz[mlflow]'``)."""
        return log_mlflow(self, tracking_uri, experiment=experiment, run_name=run_name, out_dir=out_dir)


class AuditDoors:
    """``memviz.audit``: call it on a synthetic table (:meth:`__call__`), or on one check of a warm-up run
    (``memviz.audit.from_run``, which is :meth:`Audit.from_run`). A class, so that both entry points are
    defined where the :class:`Audit` is, none attached to another object afterwards."""

    from_run = staticmethod(Audit.from_run)

    def __repr__(self) -> str:
        return "memviz.audit"

    def __call__(self, train, synthetic, holdout=None, *, schema=None, metadata=None, target: str | None = None,
                 distance: str = "paper", device: str = "auto", quality: bool = True, dcr: bool = True,
                 evidence: bool | Mapping[str, object] = True, seed: int = 0, backend: str = "local",
                 scheduler=None) -> Audit:
        """Audit a synthetic table made by any generator against its training table.

        Parameters
        ----------
        train : DataFrame, :class:`~memviz.tables.data.Table` or path (CSV/Parquet): the rows the
            generator was trained on.
        synthetic : DataFrame, Table or path: the generated rows (the training table's columns), read in the
            training table's coding (:mod:`memviz.tables.align`: a category written another way is refused).
        holdout : DataFrame, Table or path, optional: **real rows the generator never saw** (a test
            split). Without it nothing tells copying from resemblance, and the verdict refuses
            (``no_holdout``); one that shares rows with the training table beyond what the training table
            shares with itself is refused (:func:`memviz.measure.tooclose.check_holdout`).
        schema : :class:`~memviz.tables.schema.Schema` or a meta.json path; ``metadata``: SDV
            single-table metadata (dict or path, :meth:`Schema.from_sdv`); neither: inferred.
        target : the label column when the schema is inferred or read from SDV metadata.
        distance : the ratio test's distance, ``paper`` or ``standardized`` (:mod:`memviz.engine.neighbors`);
            closeness is always read with the standardized one.
        device : ``auto``, ``cpu`` or ``cuda``.
        quality : measure Shape (and the hold-out's, the utility gate's reference); False leaves
            them None and the verdict says quality was not measured.
        dcr : measure the DCR share (needs the hold-out).
        evidence : True (default): run the tests beyond the ratio test against the hold-out
            (membership inference, the data-copying test, attribute inference on the target:
            :func:`memviz.evidence.suite.audit_evidence`); False skips them; a mapping gives a caller's own
            tests keyed by name (each with ``to_dict()`` and ``sentence()``). The data-copying test's regions
            enter the verdict's family; the others qualify it.
        seed : the seed of the DCR subsample and the evidence's k-means and draws.
        backend : ``local`` (default: every search in this process) or ``dask``: the neighbour searches run on
            a Dask cluster's workers, the figures and the files equal the local run's (module docstring says
            which searches stay here).
        scheduler : with ``backend="dask"``: the scheduler's address (``tcp://HOST:PORT``), a cluster or a
            ``dask.distributed.Client``; None starts a local cluster of one worker per CPU core. An address
            that does not answer is refused in one line within 10 s.

        Returns
        -------
        Audit
            Frozen; ``audit.verdict`` is the one verdict, ``audit.to_json`` / ``to_html`` / ``write`` its outputs.

        Raises
        ------
        MemvizError
            Among others: an unknown backend, a scheduler that does not answer, or tables whose audit the memory
            estimate says will not fit (:func:`memviz.verdict.build.check_memory`), in one line and before any search.
        """
        return Audit(**audit_fields(train, synthetic, holdout, schema=schema, metadata=metadata, target=target,
                                    distance=distance, device=device, quality=quality, dcr=dcr, evidence=evidence,
                                    seed=seed, backend=backend, scheduler=scheduler))


#: ``memviz.audit(train, synthetic, holdout, ...)``: the audit of a synthetic table from any generator
audit = AuditDoors()


def _pair(v):
    """[low, high], or None when absent or not finite (a floor of 100 % leaves the copy share undefined)."""
    if v is None or not all(math.isfinite(float(x)) for x in v):
        return None
    return [float(v[0]), float(v[1])]


def _records(df: pd.DataFrame) -> list[dict]:
    return to_jsonable(df.to_dict(orient="records"))


def _plain(v):
    """A key value as a plain Python value for JSON and text (int, float, str; None when missing)."""
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(v, np.generic):
        return v.item()
    return v if isinstance(v, (int, float, str)) else str(v)


