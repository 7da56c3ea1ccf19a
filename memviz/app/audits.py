"""The dashboard's side of :mod:`memviz.audit`: which run, comparison or uploaded tables a sentence
is about, and their :class:`memviz.Audit`.

Every privacy sentence a page or the report shows comes from the ``Audit`` of the run, check or
comparison it names; this module finds that source (:class:`Source`, :func:`compare_source`)
and opens it once.
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.app import datasets
from memviz.app.comparisons import compare_token, load_compare
from memviz.app.readings import display_names, run_holdout
from memviz.app.runs import load_run, run_token
from memviz.auditing.result import Audit, audit
from memviz.auditing.stored import RUN_FOLDER, load_audit
from memviz.verdict.evidence_words import evidence_sentences
from memviz.verdict.verdict import rows_within_chance
from memviz.compare.grid import read_experiment
from memviz.compare.methods import NEEDS_SELECTION
from memviz.dynamics.dynamiccut import DEFAULTS, DynamicCutParams
from memviz.errors import MemvizError
from memviz.io import csv_bytes, read_json
from memviz.jobs.control import job_for
from memviz.jobs.spec import read_spec
from memviz.tables.data import check_same_columns, load_companion, load_table, read_frame, table_from_frame
from memviz.tables.describe import kind_of
from memviz.tables.redact import key_labels, redact
from memviz.viz.card import Card, Line, tone
from memviz.text import check_name, pct, share_digits


def pkT(p: float, k: int, T) -> str:
    """DynamicCut's settings as the report prints them: 'p=0.10, k=3, T=default'."""
    return f"p={float(p):.2f}, k={int(k)}, T={'default' if T is None else int(T) if float(T).is_integer() else T}"


@dataclass(frozen=True)
class Source:
    """What one section of a page or of the report draws on, named for a reader.

    kind : ``run`` (a warm-up run at one check), ``compare`` (a comparison) or ``tables`` (uploaded
        tables: training, hold-out, synthetic).
    name : the run id, the comparison's folder name, or the synthetic table's file name.
    run_id : the warm-up run (for a comparison: the run whose ranking DynamicCut used; None when the
        comparison ran its own warm-up or used no ranking).
    params : DynamicCut's settings (p, k, T) this source used (a run: as tuned on Tune & prune; a comparison:
        as it was started with); T None: the default window. ``p``, ``k`` and ``T`` read them.
    status : a run's status (finished, cancelled, interrupted, failed, running).
    check, epoch, epochs : a run's check the figures are from, its epoch and the run's planned epochs.
    n_checks : the run's finished checks (checks count from 0: the label names check 11 of 12 as
        "check 11 of 0–11", beside the "12 checks" of the run's progress line).
    """

    kind: str
    name: str
    run_id: str | None = None
    params: DynamicCutParams = DEFAULTS
    status: str = "finished"
    check: int | None = None
    epoch: int | None = None
    epochs: int | None = None
    run_dir: str | None = None
    ranked: bool = True
    n_checks: int | None = None

    @property
    def p(self) -> float:
        return self.params.p

    @property
    def k(self) -> int:
        return self.params.k

    @property
    def T(self) -> float | None:
        return self.params.T

    @property
    def settings(self) -> str:
        return pkT(self.p, self.k, self.T)

    def label(self) -> str:
        """'Warm-up run X (cancelled at epoch 15 of 100; check 3 of 0–3)' or 'Comparison Y (ranked on warm-up run X,
        DynamicCut p=0.10, k=3, T=default)'."""
        if self.kind == "run":
            where = []
            if self.status != "finished":
                stop = {"cancelled": "cancelled", "interrupted": "interrupted", "failed": "failed",
                        "running": "still running"}.get(self.status, self.status)
                where.append(f"{stop} at epoch {self.epoch} of {self.epochs}" if self.epoch is not None
                             and self.epochs else stop)
            if self.check is not None:
                name = check_name(self.check, self.n_checks)
                where.append(f"{name}, epoch {self.epoch}" if self.status == "finished" else name)
            return f"Warm-up run {self.name}" + (f" ({'; '.join(where)})" if where else "")
        if self.kind == "compare":
            if not self.ranked:
                return f"Comparison {self.name} (no DynamicCut ranking)"
            on = f"ranked on warm-up run {self.run_id}" if self.run_id else "ranked on its own warm-up"
            return f"Comparison {self.name} ({on}, DynamicCut {self.settings})"
        return f"Synthetic table {self.name}"


def ranked_on(compare, run_dir) -> bool:
    """Was this comparison ranked on the warm-up run in ``run_dir``?"""
    src = compare_source(compare)
    return bool(src.run_dir and run_dir and Path(src.run_dir).resolve() == Path(run_dir).resolve())


def run_source(view, p: float = DEFAULTS.p, k: int = DEFAULTS.k, T=DEFAULTS.T, *,
               params: DynamicCutParams | None = None) -> Source:
    """The :class:`Source` of a warm-up run's last check (``view``: :class:`memviz.app.runs.RunView`) at
    ``params`` (given, ``p``, ``k`` and ``T`` are not read)."""
    last = view.per_check.iloc[-1] if len(view.per_check) else None
    cfg = view.manifest.get("config") or {}
    params = params if params is not None else DynamicCutParams(float(p), int(k), T)
    return Source("run", view.run_id, view.run_id, params, view.status,
                  None if last is None else int(last["check"]), None if last is None else int(last["epoch"]),
                  int(cfg["epochs"]) if cfg.get("epochs") else None, str(view.path), n_checks=len(view.per_check))


def compare_source(compare) -> Source:
    """The :class:`Source` of a comparison (``compare``: a :class:`memviz.app.comparisons.CompareView` or
    its folder): the warm-up run and DynamicCut settings it was started with, read from its
    experiment.json (else its job spec)."""
    path = Path(getattr(compare, "path", compare))
    cfg, sel = {}, {}
    try:
        exp = read_experiment(path)
        cfg, sel = exp.get("config") or {}, exp.get("selection") or {}
    except MemvizError:
        pass
    if not cfg:
        try:
            cfg = read_json(job_for(path).spec_path, "job spec").get("config") or {}
        except (MemvizError, OSError):
            cfg = {}
    run_dir = cfg.get("run_dir") or sel.get("run_dir")
    own = run_dir is not None and Path(str(run_dir)).resolve() == (path / "warmup").resolve()
    run_id = None if run_dir is None or own else Path(str(run_dir)).name

    ranked = run_dir is not None or bool(sel) or bool(set(cfg.get("methods") or ()) & set(NEEDS_SELECTION))
    params = DynamicCutParams.unchecked(float(cfg.get("p", DEFAULTS.p)), int(cfg.get("k", DEFAULTS.k)), cfg.get("T"))
    return Source("compare", path.name, run_id, params, run_dir=None if run_dir is None else str(run_dir),
                  ranked=ranked)


# ------------------------------------------------------------------ opening audits
@functools.lru_cache(maxsize=16)
def _run_audit(run_dir: str, token: int, check: int | None):
    """The last check's audit as the worker kept it for this run state (:func:`memviz.jobs.spec.keep_audit`),
    else computed here (a run from before, another check, or a kept one that no longer reads)."""
    if check is None:
        kept = load_audit(Path(run_dir) / RUN_FOLDER, token=token)
        if kept is not None:
            return kept
    return Audit.from_run(run_dir, check)


def run_audit(view, check: int | None = None):
    """The :class:`memviz.Audit` of a run's check (default: its last), computed once per run state
    (keyed by the run's manifest time, so a live run is audited again after it writes)."""
    return _run_audit(str(view.path), run_token(view.path), None if check is None else int(check))


def compare_inputs(compare, source: Source | None = None):
    """(train, test) of a comparison: its job's input files, else the training table of the run it was
    ranked on with that run's hold-out; (None, None) when neither is there any more."""
    try:
        paths = read_spec(job_for(compare.path).spec_path).paths
        if paths.get("train") and Path(paths["train"]).is_file():
            row_id = paths.get("row_id")
            train = load_table(paths["train"], paths.get("schema"), row_id_column=row_id)
            test = (load_companion(train, paths["test"], role="test", row_id_column=row_id)
                    if paths.get("test") and Path(paths["test"]).is_file() else None)
            return train, test
    except (MemvizError, OSError):
        pass
    source = source or compare_source(compare)
    if source.run_dir and Path(source.run_dir).is_dir():
        try:
            view = load_run(source.run_dir)
        except MemvizError:
            return None, None
        return view.train, run_holdout(view)
    return None, None


@functools.lru_cache(maxsize=8)
def _compare_audit(out_dir: str, token: int, model: str):
    compare = load_compare(out_dir)
    ok = compare.ok
    base = ok[(ok["model"] == model) & (ok["method"] == "baseline")] if {"model", "method"} <= set(ok) else ok[:0]
    if base.empty or "synthetic" not in base.columns:
        return None
    train, test = compare_inputs(compare)
    if train is None:
        return None
    frames = []
    for rel in base.sort_values("seed")["synthetic"]:
        path = Path(out_dir) / str(rel)
        if not path.is_file():
            return None
        frames.append(read_frame(path)[list(train.schema.columns)])
    synthetic = table_from_frame(pd.concat(frames, ignore_index=True), train.schema,
                                 source=f"{Path(out_dir).name}: {model} without mitigation", role="synthetic")
    return tables_audit(train, synthetic, test)


def compare_audit(compare, model: str):
    """The :class:`memviz.Audit` of a comparison's unmitigated ``model``: its baseline cells'
    generated rows pooled over seeds (M = Σ_s M_s) against the comparison's training table and test
    split (the floor's hold-out); None when the cells or the inputs are not there (older folders)."""
    try:
        return _compare_audit(str(compare.path), compare_token(compare.path), str(model))
    except MemvizError:
        return None


def tables_audit(train, synthetic, holdout=None, *, distance: str = "paper"):
    """The :class:`memviz.Audit` of a synthetic table made by any generator (the Audit screen)."""
    return audit(train, synthetic, holdout, distance=distance)


def upload_tables(train_name: str, train_raw: bytes, synthetic_name: str, synthetic_raw: bytes,
                  holdout_name: str | None = None, holdout_raw: bytes | None = None, *,
                  schema_name: str | None = None, schema_raw: bytes | None = None, target: str | None = None,
                  overrides: tuple = ()):
    """(train, synthetic, holdout or None) Tables from uploaded bytes, each parsed as data only and
    capped in size (:func:`memviz.app.datasets.read_upload`); the hold-out and the synthetic table
    take the training table's schema: the uploaded one (``schema_raw``: memviz meta.json or SDV
    metadata, :func:`memviz.app.datasets.schema_from_upload`), else inferred from the training table
    with ``target`` (else a guessed label column); ``overrides``: (column, kind) pairs the user set on the
    page's schema table (:meth:`memviz.tables.schema.Schema.with_overrides`). BadTable (one line, naming the
    file and column) otherwise."""
    raw = datasets.raw_from_upload(train_name, train_raw, target=target)
    schema = raw.schema
    if schema_raw is not None:
        schema = datasets.schema_from_upload(schema_name or "schema.json", schema_raw, raw.frame,
                                             target or raw.schema.target)
    if overrides:
        schema = schema.with_overrides(dict(overrides), source=train_name)
    train, _ = datasets.build_tables(raw, schema, "none")

    synthetic = companion_table(train, synthetic_name, synthetic_raw, "synthetic")
    holdout = (companion_table(train, holdout_name or "hold-out", holdout_raw, "test")
               if holdout_raw is not None else None)
    return train, synthetic, holdout


def kind_edits(schema, edited, overrides: tuple = ()) -> tuple:
    """The page's overrides after an edit of its schema table (:func:`memviz.app.datasets.schema_editor_frame`'s
    ``kind`` column): ``overrides`` with every column whose kind the edit changed, as (column, kind) pairs in the
    order set (a column set again moves to the end)."""
    out = dict(overrides)
    for col, kind in zip(edited["column"].astype(str), edited["kind"].astype(str)):
        if kind != kind_of(schema, col):
            out.pop(col, None)
            out[col] = kind
    return tuple(out.items())


def companion_table(train, name: str, raw: bytes, role: str = "synthetic"):
    """An uploaded synthetic or hold-out table (parsed as data only, capped in size) with the training
    table's schema: its columns, values checked; BadTable naming the file and column otherwise."""
    frame = datasets.read_upload(name, raw)
    check_same_columns(train, frame, name)
    return table_from_frame(frame, train.schema, source=name, role=role)


def digests(*raw: bytes | None) -> tuple[str, ...]:
    """SHA-256 of each upload's bytes ("" for none): the cache key of its parsed table."""
    return tuple("" if r is None else hashlib.sha256(r).hexdigest() for r in raw)


#: display names of the per-row table's columns (raw names stay in rows.csv)
ROW_NAMES = {"row_id": "training row", "close_copies": "close copies", "identical_copies": "identical copies",
             "real_close": "close real rows", "expected_close": "expected from real rows", "p_value": "p-value",
             "q_value": "q-value", "over_copied": "named", "closest_level": "closest copy",
             "closest_gap": "closest copy: largest difference (spreads)", "closest_column": "closest copy: differs most in",
             "copies": "flagged by the ratio test"}


def _p(v) -> str:
    """A p- or q-value for people: '< 0.001' below it, else 3 decimals ('–' when not computed)."""
    return "–" if v is None or v != v else ("< 0.001" if v < 0.001 else f"{v:.3f}")


def over_copied_table(audit, train, *, redacted: bool = True, n: int = 200):
    """The named training rows (most close copies first, at most ``n``), each named by the user's key (its
    column first, under its own name; hashed when redacted, :func:`memviz.tables.redact.key_labels`; "training
    row", memviz's row_id, for a table without a key), with their values from ``train``, redacted unless asked
    (:func:`memviz.tables.redact.redact`: ranges of at least 10 training rows, hashed categories), columns named
    in words."""
    top = audit.frame("over_copied", row_id=True).head(n).reset_index(drop=True)
    ids = top["row_id"].to_numpy(dtype=np.int64)
    vals = train.data.loc[ids].reset_index(drop=True)
    if redacted:
        vals = pd.DataFrame(redact(vals, train.schema, reference=train.data))
    stats = top[[c for c in ROW_NAMES if c in top.columns]].copy()
    for c in ("p_value", "q_value"):
        if c in stats:
            stats[c] = [_p(v) for v in stats[c]]
    for c in ("expected_close", "closest_gap"):
        if c in stats:
            stats[c] = stats[c].round(2)
    shown = display_names(pd.concat([stats, vals], axis=1), ROW_NAMES)
    if audit.key is None:
        return shown
    if not isinstance(audit.key, str):                  # a composite key: one column per key column
        values = audit.key_of(ids)
        front = {}
        for c in audit.key_columns:
            column = c if c not in shown.columns else f"{c} (key)"
            front[column] = ([v[c] for v in values] if not redacted else
                             key_labels([v[c] for v in values], c))
        return shown.drop(columns=[ROW_NAMES["row_id"]]).assign(**front)[
            [*front, *[c for c in shown.columns if c != ROW_NAMES["row_id"]]]]
    # the row's name is the user's key (hashed when redacted), where memviz's row_id was
    names = (audit.key_of(ids) if not redacted else
             [t[len(audit.key) + 1:] for t in audit.row_names(ids, redacted=True)])
    column = audit.key if audit.key not in shown.columns else f"{audit.key} (key)"
    return shown.drop(columns=[ROW_NAMES["row_id"]]).assign(**{column: names})[
        [column, *[c for c in shown.columns if c != ROW_NAMES["row_id"]]]]


def rows_csv(audit, train=None, *, row_id: bool = False) -> bytes:
    """The per-row table as rows.csv holds it (:meth:`memviz.Audit.rows_frame`: each row named by the user's key,
    memviz's row_id after it only when asked) as CSV bytes, spreadsheet formulas neutralised
    (:func:`memviz.io.csv_bytes`)."""
    return csv_bytes(audit.rows_frame(train, row_id=row_id).reset_index(drop=True))


def download_stem(source: str) -> str:
    """A file name stem from a table's source name: letters, digits, '-' and '_' only."""
    stem = Path(str(source)).stem
    return re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_")[:60] or "synthetic"


# ------------------------------------------------------------------ the card
def next_step(audit) -> str:
    """The next step a reader should take: the Audit verdict's own (:data:`memviz.verdict.verdict.NEXT_STEPS`,
    prefixed for a run that did not finish)."""
    return audit.verdict.next_step


def card(audit, title: str = "What this shows") -> Card:
    """The dashboard's verdict card of an audit: the Audit's own verdict sentence first (verbatim), the
    over-copied rows and the per-row test's reach, then the next step (:func:`next_step`)."""
    v = audit.verdict
    lines = [Line("Verdict", v.sentence, tone(v.tone))]
    if audit.floor is not None:
        n = int(audit.n_over_copied)
        said = rows_within_chance(audit)                 # the verdict's own words: one place decides
        lines.append(Line("Named rows", (f"{n:,} training row{'s have' if n != 1 else ' has'} far more close copies "
                                         f"than real rows would give {'them' if n != 1 else 'it'}. " if n else
                                         said[:1].upper() + said[1:] + ". ")
                          + audit.row_test.sentence(), "warn" if n else "neutral"))
    lines.append(Line("Next step", next_step(audit)))
    return Card(title, tuple(lines), v.sentence)


@dataclass(frozen=True)
class HeadlineFigure:
    """One headline figure of an audit: label, value, caption (its reference and interval) and help."""

    label: str
    value: str
    caption: str
    help: str = ""


def rows_read(audit) -> str:
    """Which rows a page's verdict reads, in words: "Rows read: check 24 (epoch 200) of run adult: 3,000 generated
    rows, against 1,000 hold-out rows (test.csv)", so that two pages reading different rows say so."""
    p = audit.provenance
    what = p.rows_read or f"{p.n_synthetic:,} generated rows"
    if p.run is not None and not what.startswith("the last"):
        what = what.replace(": ", f" of run {p.run.run_id}: ", 1)
    hold = (f", against {p.n_holdout:,} hold-out rows" + (f" ({p.sources.get('holdout')})" if p.sources.get('holdout')
                                                           else "") if p.n_holdout else ", without a hold-out")
    return f"Rows read: {what}{hold}."


def headline_figures(audit, *, ratio: bool = True) -> list[HeadlineFigure]:
    """The audit's evidence as four figures for a page's headline, each read against real rows the model
    never saw: the too-close share, the identical share, the ratio test above its floor (``ratio=False``
    leaves it to a page that shows the ratio test in full), and the named rows (each with how the verdict's
    family judged it). Empty without a hold-out."""
    if audit.floor is None:
        return []
    fam = audit.family

    def held(name: str) -> str:
        m = fam.get(name)
        return "" if m is None else (" · holds" if m.holds else " · within chance")

    out = []
    c = audit.close
    if c is not None:
        tail = c.every_level
        d = share_digits(tail.expected_share) if tail is not None else 1
        out.append(HeadlineFigure("too close to a training row", pct(c.too_close_share),
                          f"fresh real rows: {pct(c.expected_share)}"
                          + (f"; nearer than any real row: {pct(tail.share, d)} vs {pct(tail.expected_share, d)}"
                             if tail is not None else "") + held('too_close'),
                          "Generated rows nearer their closest training row than all but 5 % of real rows the model "
                          "never saw are (standardized distance), read at the tail too: nearer than all but 1 % and "
                          "than every one of them; exact Beta-Binomial tests, Bonferroni over the levels."))
        ref = c.identical
        own = (f"; training rows repeating another: {pct(ref.training_share)}" if ref is not None and ref.pooled
               else "")
        out.append(HeadlineFigure("identical to a training row", pct(c.identical_share),
                          f"real rows never seen: {pct(c.holdout_identical_share)}{own}{held('identical')}",
                          "Generated rows equal to a training row in every column the distance reads, against the "
                          "same share among real rows the model never saw and, when they repeat each other as "
                          "often, among the training rows against each other (Fisher's exact test)."))
        lv = c.carrying_partial
        if lv is not None:
            top = f"; mostly '{lv.by_column[0][0]}'" if lv.by_column else ""
            but = "one column" if lv.altered == 1 else f"at most {lv.altered} columns"
            out.append(HeadlineFigure(f"equal but for {but}", pct(lv.share),
                              f"real rows: {pct(lv.reference_share)}{top}{held('partial')}",
                              "Generated rows equal to a training row in every column but one (or two), at the "
                              "data's own resolution: a copy with one cell altered (made missing, rescaled, rounded, "
                              "shifted) is far from its source by any distance, but not cell by cell. Against the "
                              "same share of real rows (Fisher's exact test, Bonferroni over the two levels)."))
    lo, hi = audit.excess_ci
    if ratio:
        out.append(HeadlineFigure("ratio test above its floor", f"{100 * audit.excess:+.1f} points",
                          f"flagged {pct(audit.mem_ratio)} vs {pct(audit.floor)} for real rows{held('ratio')}",
                          f"The paper's test (r < 1/3) on the model's rows minus the same test on real rows it "
                          f"never saw; 95 %: {100 * lo:+.1f} to {100 * hi:+.1f} points."))
    n = int(audit.n_over_copied)
    named = audit.over_copied_rows
    verbatim = int((named["identical_copies"] > 0).sum()) if n and "identical_copies" in named else 0
    rows = fam.get("rows")
    # rows are named once the family holds, by any member: "within chance" beside named rows would contradict
    # them, so only a holding per-row member is said
    out.append(HeadlineFigure("training rows named", f"{n:,}",
                      (f"{verbatim:,} with an identical copy" if n else "no row has more close copies than chance")
                      + (" · holds" if rows is not None and rows.holds else ""), audit.row_test.sentence()))
    return out


def evidence_lines(audit) -> list[tuple[str, str]]:
    """The Audit's other tests as (test, sentence) pairs for the Memorization page: the sentences of
    :func:`memviz.verdict.evidence_words.evidence_sentences`, verbatim (the report's "Other tests" prints the same)."""
    return [(name[:1].upper() + name[1:], sentence) for name, sentence in evidence_sentences(audit.evidence)]


def run_card(view) -> Card:
    """The card of a run's last check (:func:`card` of :func:`run_audit`)."""
    return card(run_audit(view), "What this run shows")


__all__ = ["Source", "rows_read", "pkT", "run_source", "compare_source", "ranked_on", "run_audit", "tables_audit", "upload_tables",
           "next_step", "card", "run_card", "evidence_lines", "headline_figures", "HeadlineFigure", "digests", "companion_table", "over_copied_table", "rows_csv", "kind_edits",
           "download_stem"]
