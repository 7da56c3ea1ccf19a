"""``memviz.audit(train, synthetic, holdout)``: one call from tables to a frozen :class:`Audit`.

It composes the existing pieces, never a second engine, floor or null: one
:class:`~memviz.engine.neighbors.NeighborEngine` fitted on the training table answers the
synthetic rows (:func:`~memviz.measure.memorization.memorization`) and the hold-out
(:func:`~memviz.measure.floor.holdout_floor`); the excess and its interval come from
:func:`~memviz.measure.floor.excess`, the per-row test from :func:`~memviz.measure.rownull.row_null`,
closeness from :mod:`memviz.measure.closeness`, the column summary from :mod:`memviz.leaks.columns`,
Shape and the DCR share from :mod:`memviz.evaluate.report`. :func:`from_run` reads one check of a
warm-up run (its stored checks and floor: nothing is recomputed but quality).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from memviz.auditing.result import Audit, Provenance, RowTest, RunInfo
from memviz.auditing.share import copy_share
from memviz.errors import MemvizError
from memviz.tables.data import (
    Table,
    fingerprint,
    load_table,
    read_frame,
    table_from_frame,
)
from memviz.tables.encoding import shared_factorizations
from memviz.tables.schema import Schema

#: per-row closeness columns added to the row table
CLOSENESS_COLUMNS = ("exact_copies", "near_exact_copies", "closest_gap")


# ------------------------------------------------------------------ inputs
def resolve_schema(schema=None, metadata=None, target: str | None = None) -> Schema | None:
    """The schema from ``schema`` (a Schema or meta.json path) or ``metadata`` (SDV), never both."""
    if schema is not None and metadata is not None:
        raise MemvizError("give either schema (meta.json format) or metadata (SDV), not both")
    if metadata is not None:
        return Schema.from_sdv(metadata, target=target)
    if isinstance(schema, (str, Path)):
        return Schema.load(schema)
    return schema


def as_table(obj, schema: Schema | None, *, role: str, name: str, target: str | None = None) -> Table:
    """A Table from a Table, a DataFrame or a path (CSV/Parquet)."""
    if isinstance(obj, Table):
        return obj
    if isinstance(obj, (str, Path)):
        if role == "train":
            return load_table(obj, schema, target=target)
        df, source = read_frame(obj), str(obj)
    elif isinstance(obj, pd.DataFrame):
        if role == "train":
            return table_from_frame(obj, schema, source=name, target=target)
        df, source = obj, name
    else:
        raise MemvizError(f"{name}: expected a DataFrame, a Table or a path, got {type(obj).__name__}")
    missing = [c for c in schema.columns if c not in df.columns]
    if missing:
        raise MemvizError(f"{source}: column {missing[0]!r}: in the training table but not in this one")
    return table_from_frame(df.loc[:, list(schema.columns)], schema, source=source, role=role)


# ------------------------------------------------------------------ pieces
def row_closeness(rows_ids: np.ndarray, nn1: np.ndarray, memorized: np.ndarray, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per training row (aligned with ``rows_ids``): exact_copies, near_exact_copies and closest_gap
    (the smallest largest-gap in spreads among its flagged copies; NaN without copies)."""
    m = np.asarray(memorized, dtype=bool)
    f = pd.DataFrame({"row_id": np.asarray(nn1)[m], "exact": pairs["exact"].to_numpy()[m],
                      "near": pairs["near_exact"].to_numpy()[m], "gap": pairs["max_gap"].to_numpy()[m]})
    g = f.groupby("row_id").agg(exact_copies=("exact", "sum"), near_exact_copies=("near", "sum"),
                                closest_gap=("gap", "min"))
    g = g.reindex(rows_ids)
    g[["exact_copies", "near_exact_copies"]] = g[["exact_copies", "near_exact_copies"]].fillna(0).astype(np.int64)
    return g.reset_index(drop=True)


def shape_score(train: Table, synthetic) -> float:
    """SDMetrics' Column Shapes score of ``synthetic`` against ``train``, without the pair trends the
    full :func:`memviz.evaluate.report.quality` also computes (the gate needs Shape only): the mean
    over columns of the KS complement 1 − sup |F_R − F_S| (numerical) and the TV complement
    1 − ½ Σ_k |P_R(k) − P_S(k)| (categorical), missing values dropped, as there (equal: tested)."""
    import warnings

    from memviz.evaluate.report import _canonical_frame, synthetic_frame

    schema = train.schema
    real, syn = _canonical_frame(train.data, schema), _canonical_frame(synthetic_frame(train, synthetic), schema)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", module=r"sdmetrics(\..*)?$")
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        from sdmetrics.single_column import KSComplement, TVComplement

        scores = []
        for col in schema.columns:
            metric = KSComplement if col in schema.distance_numerical else TVComplement
            r, s_ = real[col].dropna(), syn[col].dropna()
            if len(r) and len(s_):
                scores.append(float(metric.compute(r, s_)))
    return float(np.mean(scores)) if scores else float("nan")


def _quality(train: Table, synthetic: pd.DataFrame, holdout: Table | None, enabled: bool):
    if not enabled:
        return None, None
    shape = shape_score(train, synthetic)
    ref = shape_score(train, holdout.data) if holdout is not None else None
    return shape, ref


def _created() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _version() -> str:
    from memviz.io import VERSION
    return VERSION


def _finish(train: Table, synthetic: pd.DataFrame, nn1, ratio, memorized, *, floor, holdout: Table | None,
            n_generated: int, pooled_copies=None, distance: str, device: str, quality: bool, dcr: bool,
            provenance: dict, evidence, row_test: bool, seed: int, per_check=None, engine=None, d1=None) -> Audit:
    """The audit from one set of generated rows with their NN1 / ratio / flags (both entry points); ``engine``
    and ``d1`` (the memorization pass's NN1 distances and training positions) are reused by the evidence."""
    from memviz.auditing.rowtest import assess
    from memviz.leaks.columns import column_match_rates
    from memviz.measure.closeness import nn1_closeness
    from memviz.measure.closeness import summary as close_summary
    from memviz.measure.floor import excess
    from memviz.measure.rownull import (
        ROW_COLUMNS,
        copies_per_row,
        row_null,
    )

    nn1, ratio = np.asarray(nn1, dtype=np.int64), np.asarray(ratio, dtype=float)     # (M,)
    memorized = np.asarray(memorized, dtype=bool)
    m = len(ratio)
    syn = synthetic.reset_index(drop=True)
    close = nn1_closeness(train, syn, nn1, ratio=ratio, distance=distance)
    cs = close_summary(close, memorized)
    n_mem = int(memorized.sum())
    mem_ratio = n_mem / m
    long = pd.DataFrame({"synthetic_id": np.arange(m), "nn1": nn1, "memorized": memorized})
    columns = column_match_rates(train, syn.assign(synthetic_id=np.arange(m)), long).columns
    shape, shape_ref = _quality(train, syn, holdout, quality)
    ids = np.sort(train.row_ids.astype(np.int64))
    closeness_rows = row_closeness(ids, nn1, memorized, close.pairs)
    if floor is None:
        copies = np.bincount(np.searchsorted(ids, nn1[memorized]), minlength=len(ids))
        rows = pd.DataFrame({"row_id": ids, "copies": copies})
        rows = pd.concat([rows, closeness_rows], axis=1)
        rt = RowTest("no_holdout", len(ids), 0, n_generated)
        fl = ex = cshare = None
        hold_ident = dcr_value = None
        n_over = 0
    else:
        ex = excess(mem_ratio, m, floor)
        cshare = copy_share(n_mem, m, floor.n_flagged, floor.n_holdout)
        copies = pooled_copies if pooled_copies is not None else copies_per_row(floor, nn1, memorized)
        rt = (assess(floor, n_generated, copies=copies, seed=seed) if row_test
              else RowTest("too_small", floor.n_reference, floor.n_holdout, n_generated))
        if rt.status == "too_small":
            rn_frame = pd.DataFrame({"row_id": floor.row_ids, "copies": copies, "holdout_hits": floor.hits,
                                     "expected": n_generated * floor.expected_rate})
            rn_frame["excess"] = rn_frame["copies"] - rn_frame["expected"]
            rn_frame["p_value"], rn_frame["q_value"], rn_frame["over_copied"] = np.nan, np.nan, False
            rn_frame = rn_frame[list(ROW_COLUMNS)]
        else:
            rn_frame = row_null(floor, copies, n_generated).to_frame()
        rows = pd.concat([rn_frame.reset_index(drop=True), closeness_rows], axis=1)
        n_over = int(rows["over_copied"].sum())
        fl = floor
        hold_ident = floor.n_identical / floor.n_holdout
        dcr_value = None
        if dcr and holdout is not None:
            from memviz.evaluate.report import dcr_share

            dcr_value = float(dcr_share(train, holdout, syn, device=device, seed=seed).share)
    ev = _evidence(train, syn, holdout, evidence, engine=engine, d1=d1, device=device, seed=seed,
                   flagged=rows.loc[rows["over_copied"], "row_id"].to_numpy() if "over_copied" in rows else None)
    prov = Provenance(n_train=len(train), n_synthetic=m, n_holdout=fl.n_holdout if fl is not None else 0,
                      distance=distance, memviz_version=_version(), created=_created(),
                      target=train.schema.target, **provenance)
    return Audit(mem_ratio=mem_ratio, n_memorized=n_mem,
                 floor=fl.floor if fl is not None else None, floor_ci=fl.ci if fl is not None else None,
                 excess=ex.excess if ex is not None else None, excess_ci=ex.ci if ex is not None else None,
                 copy_share=cshare[0] if cshare else None, copy_share_ci=(cshare[1], cshare[2]) if cshare else None,
                 n_over_copied=n_over, identical_share=float(cs["identical_share"]),
                 holdout_identical_share=hold_ident, dcr_share=dcr_value, shape=shape, shape_reference=shape_ref,
                 rows=rows, columns=columns, row_test=rt, provenance=prov,
                 flagged_exact_share=float(cs["flagged_exact"]), evidence=ev,
                 generated=pd.DataFrame({"synthetic_id": np.arange(m), "nn1": nn1, "ratio": ratio,
                                         "memorized": memorized, "exact": close.pairs["exact"].to_numpy()}),
                 floor_detail=floor, per_check=per_check)


def _evidence(train: Table, syn: pd.DataFrame, holdout: Table | None, evidence, *, engine, d1, device: str,
              seed: int, flagged):
    """The audit's :class:`~memviz.evidence.suite.Evidence`: the three tests when ``evidence`` is True
    and there is a hold-out (:func:`~memviz.evidence.suite.audit_evidence`, reusing the audit's
    engine and NN1 distances), none when False, a caller's own tests when a mapping."""
    from memviz.evidence.suite import Evidence, audit_evidence

    if evidence is True:
        if holdout is None:
            return Evidence()
        d1, pos = d1 if d1 is not None else (None, None)
        cols = list(train.schema.columns)
        frame = syn if list(syn.columns) == cols else syn[cols]         # the pass's own arrays where they fit
        return audit_evidence(train, Table(frame, train.schema, "synthetic"), holdout,
                              engine=engine, d1_synthetic=d1, nn1_synthetic=pos, device=device, seed=seed,
                              flagged_row_ids=flagged)
    return Evidence.of(evidence or None)


# ------------------------------------------------------------------ the one call
def audit(train, synthetic, holdout=None, *, schema=None, metadata=None, target: str | None = None,
          distance: str = "paper", device: str = "auto", quality: bool = True, dcr: bool = True,
          row_test: bool = True, evidence: bool | Mapping[str, object] = True, seed: int = 0) -> Audit:
    """Audit a synthetic table made by any generator against its training table.

    Parameters
    ----------
    train : DataFrame, :class:`~memviz.tables.data.Table` or path (CSV/Parquet): the rows the
        generator was trained on.
    synthetic : DataFrame, Table or path: the generated rows (the training table's columns).
    holdout : DataFrame, Table or path, optional: **real rows the generator never saw** (a test
        split). Without it there is no floor, and the verdict refuses (``no_holdout``).
    schema : :class:`~memviz.tables.schema.Schema` or a meta.json path; ``metadata``: SDV
        single-table metadata (dict or path, :meth:`Schema.from_sdv`); neither: inferred.
    target : the label column when the schema is inferred or read from SDV metadata.
    distance : ``paper`` or ``standardized`` (:mod:`memviz.engine.neighbors`).
    device : ``auto``, ``cpu`` or ``cuda``.
    quality : measure Shape (and the hold-out's, the utility gate's reference); False leaves
        them None and the verdict says quality was not measured.
    dcr : measure the DCR share (needs the hold-out).
    row_test : simulate the per-row test's calibration and power at these sizes
        (:mod:`memviz.auditing.rowtest`); False marks it not run.
    evidence : True (default): run the tests beyond the ratio test against the hold-out
        (membership inference, the data-copying test, attribute inference on the target:
        :func:`memviz.evidence.suite.audit_evidence`, 1.5–1.8 memorization passes at full Adult);
        False skips them; a mapping gives a caller's own tests keyed by name (each with ``to_dict()``
        and ``sentence()``). They enter the verdict only as supporting evidence.
    seed : the seed of the DCR subsample, the row test's simulation and the evidence's k-means and draws.

    Returns
    -------
    Audit
        Frozen; ``audit.verdict`` is the one verdict, ``audit.to_json`` / ``to_html`` / ``write`` its outputs.
    """
    from memviz.measure.floor import holdout_floor
    from memviz.measure.memorization import memorization
    from memviz.engine.neighbors import NeighborEngine

    sch = resolve_schema(schema, metadata, target)
    tr = as_table(train, sch, role="train", name="train", target=target)
    syn = as_table(synthetic, tr.schema, role="synthetic", name="synthetic")
    hold = as_table(holdout, tr.schema, role="test", name="holdout") if holdout is not None else None
    if len(syn) == 0:
        raise MemvizError(f"{syn.source}: the synthetic table has no rows")
    with shared_factorizations():          # the pass, the floor and the evidence encode the same frames
        engine = NeighborEngine(distance=distance, device=device).fit(tr)
        res = memorization(tr, syn, engine=engine)
        floor = holdout_floor(tr, hold, distance=distance, engine=engine) if hold is not None else None
        prov = {"fingerprints": {"train": fingerprint(tr), "synthetic": fingerprint(syn),
                                 "holdout": fingerprint(hold) if hold is not None else ""},
                "sources": {"train": tr.source, "synthetic": syn.source,
                            "holdout": hold.source if hold is not None else ""}}
        return _finish(tr, syn.data, res.nn1, res.ratio, res.memorized, floor=floor, holdout=hold,
                       n_generated=len(syn), distance=distance, device=device, quality=quality, dcr=dcr,
                       provenance=prov, evidence=evidence, row_test=row_test, seed=seed, engine=engine,
                       d1=(res.d1, res.nn1_pos))


def from_run(run_dir: str | Path, check: int | None = None, *, holdout=None, pool: bool = True,
             p: float | None = None, k: int | None = None, T: int | None = None, quality: bool = True,
             dcr: bool = True, row_test: bool = True, evidence: bool | Mapping[str, object] = True,
             device: str = "auto", seed: int = 0) -> Audit:
    """The audit of one check of a warm-up run (default: its last finished check).

    The figures (mem ratio, floor, excess, copy share, identical share, columns) are the check's;
    the per-row test pools the copies of every check up to it (``pool=True``, M = Σ_e M_e, as the
    Memorization page does) or uses that check alone. The floor is the run's stored one; the
    hold-out table itself (for the DCR share and the quality gate's reference) is ``holdout`` or,
    when the floor's source file still exists with the same fingerprint, that file. ``p``, ``k``,
    ``T``: the DynamicCut settings a caller tuned, carried in the provenance. The run's status
    (finished / cancelled / interrupted / running / failed) and its number of checks enter the verdict.
    ``evidence``: as in :func:`audit`, run on the check's generated rows when the hold-out table is at hand.
    """
    from memviz.warmup.run import load_warmup
    from memviz.warmup.store import RunStore

    store = RunStore.open(run_dir)
    wr = load_warmup(run_dir)
    train = store.train()
    long = wr.checks
    done = sorted(int(c) for c in long["check"].unique())
    check = done[-1] if check is None else int(check)
    if check not in done:
        raise MemvizError(f"{store.path}: check {check} is not a finished check (finished: "
                          f"{', '.join(map(str, done))})")
    sub = long[long["check"] == check].sort_values("synthetic_id")
    samples = store.samples(check).set_index("synthetic_id").loc[sub["synthetic_id"].to_numpy()]
    epoch = int(sub["epoch"].iloc[0])
    floor = wr.floor
    hold = _run_holdout(train, floor, holdout)
    pooled, n_gen, n_pooled = None, len(sub), 1
    if floor is not None and pool:
        from memviz.measure.rownull import copies_per_row

        upto = long[long["check"] <= check]
        pooled = copies_per_row(floor, upto["nn1"].to_numpy(np.int64), upto["memorized"].to_numpy(bool))
        n_gen, n_pooled = len(upto), int(upto["check"].nunique())
    m = store.manifest()
    run = RunInfo(run_id=str(m.get("run_id") or store.path.name), run_dir=str(store.path), check=check, epoch=epoch,
                  status=wr.status, n_checks=len(done), epochs=int(wr.config.epochs) if wr.config.epochs else None,
                  p=p, k=k, T=T, pooled_checks=n_pooled)
    syn_table = Table(samples.reset_index(drop=True)[list(train.schema.columns)], train.schema, f"{run.run_id} check {check}")
    prov = {"fingerprints": {"train": fingerprint(train), "synthetic": fingerprint(syn_table),
                             "holdout": floor.holdout_fingerprint if floor is not None else ""},
            "sources": {"train": (m.get("data") or {}).get("source", "train.parquet"), "synthetic": syn_table.source,
                        "holdout": floor.holdout_source if floor is not None else ""}, "run": run}
    return _finish(train, syn_table.data, sub["nn1"].to_numpy(), sub["ratio"].to_numpy(), sub["memorized"].to_numpy(),
                   floor=floor, holdout=hold, n_generated=n_gen, pooled_copies=pooled, distance=wr.config.distance,
                   device=device, quality=quality, dcr=dcr, provenance=prov, evidence=evidence, row_test=row_test,
                   seed=seed, per_check=wr.per_check[wr.per_check["check"] <= check].reset_index(drop=True))


def _run_holdout(train: Table, floor, holdout) -> Table | None:
    """The run's hold-out table: the one given, else the floor's source file when it still holds the same rows."""
    if holdout is not None:
        return as_table(holdout, train.schema, role="test", name="holdout")
    if floor is None or not floor.holdout_source:
        return None
    path = Path(floor.holdout_source)
    if not path.is_file():
        return None
    try:
        t = as_table(path, train.schema, role="test", name="holdout")
    except MemvizError:
        return None
    return t if fingerprint(t) == floor.holdout_fingerprint else None


audit.from_run = from_run  # memviz.audit.from_run, whether memviz.audit names the function or the package
Audit.from_run = staticmethod(from_run)  # Audit.from_run(run_dir, check): set here, so result.py imports no builder
