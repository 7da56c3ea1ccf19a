"""``memviz.audit(train, synthetic, holdout)``: one call from tables to a frozen :class:`Audit`.

It composes the existing pieces, never a second floor or null: one
:class:`~memviz.engine.neighbors.NeighborEngine` fitted on the training table answers the
synthetic rows (:func:`~memviz.measure.memorization.memorization`) and the hold-out
(:func:`~memviz.measure.floor.holdout_floor`); one with the standardized distance (the same engine when
the audit's distance is standardized, else one sharing its encoder) gives every generated, hold-out and
training row its nearest training row for the closeness tests (:mod:`memviz.measure.tooclose`), and the same
distances to the data-copying test; the excess comes from :func:`~memviz.measure.floor.excess`, the
verdict's family from :mod:`memviz.verdict.family`, closeness in the data's units from
:mod:`memviz.measure.closeness`, the column summary from :mod:`memviz.leaks.columns`, Shape and the DCR
share from :mod:`memviz.evaluate.synthetic`. The synthetic table and the hold-out are read in the training
table's own coding first, once (:func:`memviz.verdict.inputs.audit_inputs`, whose
:class:`~memviz.verdict.inputs.AuditInputs` the rest takes as is). :func:`from_run` reads one check of a warm-up run
(its stored checks and floor; the closeness tests read that check's rows again).

On Dask (``backend="dask"``, :func:`searches`) each engine is fitted here, as in the local run, and sent
once to the cluster's workers (:class:`memviz.engine.distributed.Remote`); its searches run there in
blocks of rows, put back in order. Every row's answer is exact and depends on that row alone, so
every figure, audit.json and rows.csv equal the local run's (``tests/auditing/test_audit_dask.py``).
What goes through the cluster: the synthetic rows' memorization pass, the hold-out's floor, the
closeness tests' searches (generated, hold-out and leave-one-out training rows) and the membership
attack's searches (the training and hold-out rows against the engine on the generated rows), and the DCR
share's two searches of the generated rows (:func:`memviz.evaluate.synthetic.dcr_share`'s engines on min(N, H)
rows). What stays here: the fits; the attribute attack's searches (its engine is fitted inside
:func:`~memviz.evidence.attribute.attribute_inference`, at most 2 × 1,000 query rows); and the density-ratio
attack (kernel sums on at most 4,096 + 4,096 rows, no engine). Before any work the audit's memory estimate
(:func:`memviz.engine.budget.audit_bytes`) is checked against the machine, for either backend.
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from memviz.device import compute_device, cpu_threads
from memviz.dynamics.dynamiccut import tuned_params
from memviz.engine import budget
from memviz.engine.distributed import Remote, check_address, connect, on_cluster
from memviz.engine.encoded import EncodedTables, encode_tables
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption, MemvizError
from memviz.evaluate.synthetic import dcr_share, shape
from memviz.evidence.attribute import N_ROWS
from memviz.evidence.suite import Evidence, audit_evidence
from memviz.io import VERSION
from memviz.leaks.columns import column_match_rates
from memviz.measure.closeness import nn1_closeness
from memviz.measure.closeness import summary as close_summary
from memviz.measure.tooclose import (
    DISTANCE,
    Q_LEVEL,
    ROW_COLUMNS,
    Nearest,
    check_holdout,
    close_copy_test,
    leave_one_out,
    nearest,
)
from memviz.measure.floor import excess, excess_p_value, holdout_floor
from memviz.measure.memorization import memorization
from memviz.measure.partial import partial_matches
from memviz.tables.data import (
    Table,
    fingerprint,
)
from memviz.tables.encoding import shared_factorizations
from memviz.tables.holdout import REFERENCE, CheckedHoldout, checked_holdout
from memviz.tables.schema import UNJUDGED
from memviz.verdict.family import family
from memviz.verdict.inputs import AuditInputs, audit_inputs, read_other, with_holdout
from memviz.verdict.provenance import Provenance, RunInfo
from memviz.verdict.rowtest import row_test
from memviz.verdict.share import copy_share
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore

if TYPE_CHECKING:
    from memviz.measure.tooclose import CloseCopies
    from memviz.measure.floor import Floor


#: the per-row table's column holding the user's key of each row (:attr:`memviz.auditing.result.Audit.per_row`)
KEY = "key"


def key_part(column: str) -> str:
    """The per-row table's column holding one column of a composite key (``key:<column>``)."""
    return f"{KEY}:{column}"


# ------------------------------------------------------------------ where the searches run
#: where :func:`audit` and :func:`from_run` run their neighbour searches
BACKENDS = ("local", "dask")


def check_backend(backend: str, scheduler=None) -> None:
    """Refuse, in one line and before any table is read, a backend outside :data:`BACKENDS`, a scheduler
    without the dask backend, or a malformed scheduler address
    (:func:`memviz.engine.distributed.check_address`; an unreachable one is refused by :func:`searches`)."""
    if backend not in BACKENDS:
        raise BadOption(f"backend={backend!r}: use 'local' or 'dask'")
    if scheduler is not None and backend != "dask":
        raise BadOption("a scheduler needs the dask backend (--scheduler needs --backend dask)")
    if isinstance(scheduler, str):
        check_address(scheduler)


@contextlib.contextmanager
def searches(backend: str, scheduler=None):
    """Where the searches run: None for ``local`` (each engine answers here), else a
    :class:`~memviz.engine.distributed.Remote` on a client of ``scheduler`` (an address, a cluster or a
    client; None: a local cluster, :func:`~memviz.engine.distributed.connect`), closed on leaving. An
    unreachable scheduler is one line within ``distributed.CONNECT_TIMEOUT`` seconds."""
    if backend != "dask":
        yield None
        return

    with connect(scheduler) as client:
        yield Remote(client)


def check_memory(train: Table, n_synthetic: int, holdout: Table | None, *, distance: str, device: str,
                 evidence, dcr: bool, backend: str, scheduler=None) -> None:
    """Refuse the audit in one line, before any work, when its memory estimate
    (:func:`memviz.engine.budget.audit_bytes`) exceeds what this machine has; the refusal says what
    ``--backend dask`` would need here and on each worker (:func:`memviz.engine.budget.check_audit`)."""
    s = train.schema
    N, H = len(train), len(holdout) if holdout is not None else 0
    need = budget.audit_bytes(N, n_synthetic, H, len(s.distance_numerical), len(s.distance_categorical),
                              threads=cpu_threads(), cpu=compute_device(device).type == "cpu",
                              two_engines=distance != DISTANCE, evidence=evidence is True, dcr=dcr,
                              attack_rows=N_ROWS)
    what = f"the audit of {N:,} training × {n_synthetic:,} generated × {H:,} hold-out rows"
    local_workers = (os.cpu_count() or 1) if backend == "dask" and scheduler is None else 0
    budget.check_audit(need, what, backend=backend, local_workers=local_workers)


# ------------------------------------------------------------------ what the entry points pass down
@dataclass(frozen=True, eq=False)
class _Generated:
    """The generated rows and what the ratio test said of each: the frame (the training columns), each row's
    NN1 (training row_id), ratio and memorized flag, the distance they were measured with, and for a run's
    check the stored per-check figures (:func:`from_run`; None for :func:`audit`). The arrays are read once
    here (int64, float, bool)."""

    rows: pd.DataFrame
    nn1: np.ndarray
    ratio: np.ndarray
    memorized: np.ndarray
    distance: str
    per_check: pd.DataFrame | None = None

    def __post_init__(self):
        object.__setattr__(self, "nn1", np.asarray(self.nn1, dtype=np.int64))      # (M,)
        object.__setattr__(self, "ratio", np.asarray(self.ratio, dtype=float))
        object.__setattr__(self, "memorized", np.asarray(self.memorized, dtype=bool))


@dataclass(frozen=True, eq=False)
class _HeldOut:
    """What the hold-out gives the audit: the ratio test's floor (None without one; a run's stored floor may
    come without its rows), the :class:`~memviz.tables.holdout.CheckedHoldout` the entry point made (None
    without hold-out rows at hand), the closeness tests (:class:`ClosenessTests`, None likewise) and the tables
    the entry point encoded once (:class:`~memviz.engine.encoded.EncodedTables`, None: none), whose training
    encoder the DCR share's scale takes (not fitted again)."""

    floor: Floor | None = None
    checked: CheckedHoldout | None = None
    close: ClosenessTests | None = None
    encoded: EncodedTables | None = None


@dataclass(frozen=True)
class _Options:
    """The audit's options as the caller gave them to :func:`audit` or :func:`from_run` (checked there, at
    the door, as before: the backend by :func:`check_backend`, the distance by the engine): the device, Shape
    on or off, the DCR share on or off, the evidence (True, False or a caller's tests), the seed, and where
    the searches run (``remote``: :func:`searches`' answer, None: here)."""

    device: str
    quality: bool
    dcr: bool
    evidence: bool | Mapping[str, object]
    seed: int
    remote: Remote | None = None


# ------------------------------------------------------------------ pieces
#: per named row, how close its closest copy is in the data's own units (:mod:`memviz.measure.closeness`)
CLOSEST_COLUMNS = ("closest_level", "closest_gap", "closest_column")


def _quality(train: Table, synthetic: pd.DataFrame, held: _HeldOut, opts: _Options):
    """(Shape of the generated rows, Shape of the hold-out rows or None); (None, None) with quality off."""
    if not opts.quality:
        return None, None

    hold = held.checked.table if held.checked is not None else None
    return shape(train, synthetic), (shape(train, hold.data) if hold is not None else None)


def _created() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _version() -> str:
    return VERSION


@dataclass(frozen=True, eq=False)
class ClosenessTests:
    """The closeness tests of one audit and what they searched: the :class:`~memviz.measure.tooclose.CloseCopies`,
    the standardized engine on the training rows, and the nearest training row of every generated and
    hold-out row (reused by the data-copying test)."""

    test: CloseCopies
    engine: NeighborEngine
    synthetic: Nearest
    holdout: Nearest


def closeness_tests(train: Table, synthetic, holdout, engine, *, synthetic_near=None,
                    device: str = "auto", remote=None, encoded=None) -> ClosenessTests:
    """The closeness tests (:mod:`memviz.measure.tooclose`) of ``synthetic`` (a Table or a frame of the training
    columns) against ``holdout``: the audit's ``engine`` when its distance is the standardized one (then
    ``synthetic_near``, the memorization pass's NN1 distances and positions, is reused), else one fitted
    beside it (sharing its encoder); the training rows against each other (leave one out); the hold-out
    refused when it shares rows with the training table beyond what the training table shares with itself.
    ``holdout``: a Table, or the :class:`~memviz.tables.holdout.CheckedHoldout` (its table searched as is).
    ``engine`` is the local one; ``remote`` (:func:`searches`): the searches run on its cluster (the engine
    of the result is then the cluster's). ``encoded``: the tables encoded once
    (:class:`memviz.engine.encoded.EncodedTables`) for an engine fitted here without ``engine``."""
    holdout = holdout.table if isinstance(holdout, CheckedHoldout) else holdout
    if engine is not None and engine.distance == DISTANCE:
        local = engine
    else:
        local = NeighborEngine(distance=DISTANCE, device=device).fit(train, like=engine, encoded=encoded)
    c_engine = on_cluster(local, remote)
    syn_near = synthetic_near if synthetic_near is not None and local is engine else nearest(c_engine, synthetic)
    hold_near = nearest(c_engine, holdout)
    loo = leave_one_out(c_engine, train)
    check_holdout(hold_near, loo, holdout.source)
    s = train.schema
    partial = partial_matches(train.data, synthetic.data if isinstance(synthetic, Table) else synthetic,
                              holdout.data, s.distance_numerical, s.distance_categorical)
    return ClosenessTests(close_copy_test(c_engine.row_ids_, syn_near, hold_near, loo, partial=partial), c_engine,
                     syn_near, hold_near)


def closest_copies(train: Table, synthetic: pd.DataFrame, close) -> pd.DataFrame:
    """Per training row with a close copy: how close its closest one is in the data's units (level exact /
    near-exact / differs, the largest numerical gap in spreads, the column of the largest difference);
    indexed by row_id (:data:`CLOSEST_COLUMNS`)."""
    gen = close.generated
    ev = gen[gen["close"]]
    if ev.empty:
        return pd.DataFrame(columns=list(CLOSEST_COLUMNS), index=pd.Index([], name="row_id"))
    first = ev.sort_values(["distance"], kind="stable").drop_duplicates("nn1")       # each row's closest copy
    pairs = nn1_closeness(train, synthetic.iloc[first.index.to_numpy()].reset_index(drop=True),
                          first["nn1"].to_numpy(), distance=close_distance()).pairs
    return pd.DataFrame({"closest_level": pairs["level"].to_numpy(), "closest_gap": pairs["max_gap"].to_numpy(),
                         "closest_column": pairs["worst_column"].to_numpy()},
                        index=pd.Index(first["nn1"].to_numpy(), name="row_id"))


def close_distance() -> str:
    return DISTANCE


def _family(floor, n_mem: int, m: int, close, ev):
    """The verdict's family (:mod:`memviz.verdict.family`) from the ratio test, the closeness tests and the
    data-copying test's regions."""
    p = {}
    if floor is not None:
        p["ratio"] = excess_p_value(n_mem, m, floor.n_flagged, floor.n_holdout)
    if close is not None:
        p.update(too_close=close.p_too_close, identical=close.p_identical, partial=close.p_partial,
                 rows=close.p_rows)
    dc = ev.get("data_copying") if ev is not None else None
    if dc is not None:
        cells = dc.cells[dc.cells["included"]]
        p["local"] = float(cells["q_value"].min()) if len(cells) else None
    return family(p)


def _rows_frame(ids: np.ndarray, copies: np.ndarray, close, closest: pd.DataFrame | None, level: float) -> pd.DataFrame:
    """The per-row table: the ratio test's copies, the closeness tests' columns and over_copied (q ≤ level)."""
    rows = pd.DataFrame({"row_id": ids, "copies": copies})
    if close is None:
        rows["over_copied"] = False
        return rows
    rows = rows.merge(close.rows, on="row_id", how="left", validate="one_to_one")
    rows["over_copied"] = rows["q_value"] <= level
    if closest is not None:
        rows = rows.join(closest, on="row_id")
    cols = ["row_id", "copies", *[c for c in ROW_COLUMNS if c != "row_id"], "over_copied", *CLOSEST_COLUMNS]
    return rows[[c for c in cols if c in rows]]


def _finish(inputs: AuditInputs, generated: _Generated, held: _HeldOut, opts: _Options, provenance: dict) -> dict:
    """The audit's fields (:class:`~memviz.auditing.result.Audit`'s) from the entry point's
    :class:`~memviz.verdict.inputs.AuditInputs` (taken as is) and one set of generated rows with their ratio-test
    NN1 / ratio / flags (both entry points),
    what the hold-out gives (its floor, the :class:`~memviz.tables.holdout.CheckedHoldout` the entry point
    made and the closeness tests: each None without it) and the audit's options; ``provenance``: the
    entry point's fingerprints, sources, rows read and notices (and a run's :class:`RunInfo`)."""
    train = inputs.train
    nn1, ratio, memorized, distance = generated.nn1, generated.ratio, generated.memorized, generated.distance
    floor, holdout, close = held.floor, held.checked, held.close
    m = len(ratio)
    syn = generated.rows.reset_index(drop=True)
    pairs = nn1_closeness(train, syn, nn1, ratio=ratio, distance=distance)
    cs = close_summary(pairs, memorized)
    n_mem = int(memorized.sum())
    mem_ratio = n_mem / m
    long = pd.DataFrame({"synthetic_id": np.arange(m), "nn1": nn1, "memorized": memorized})
    columns = column_match_rates(train, syn.assign(synthetic_id=np.arange(m)), long).columns
    shape, shape_ref = _quality(train, syn, held, opts)
    ids = np.sort(train.row_ids.astype(np.int64))
    copies = np.bincount(np.searchsorted(ids, nn1[memorized]), minlength=len(ids))     # the ratio test's copies
    test = close.test if close is not None else None
    named_first = test.named(Q_LEVEL)["row_id"].to_numpy() if test is not None else None
    ev = _evidence(train, syn, held, opts, flagged=named_first)
    fam = _family(floor, n_mem, m, test, ev)
    rows = _rows_frame(ids, copies, test, closest_copies(train, syn, test) if test is not None else None,
                       fam.naming_level)
    n_over = int(rows["over_copied"].sum())
    if train.composite:                             # a composite key: one column per key column
        for i, col in enumerate(train.key_columns):
            rows.insert(i, key_part(col), train.keys[col].loc[rows["row_id"].to_numpy()].array)
    elif train.key is not None:                     # each row's own key, so that every reader names it so
        rows.insert(0, KEY, train.keys.loc[rows["row_id"].to_numpy()].array)     # its dtype kept (Int64, text)
    fl, ex, cshare, dcr_value = floor, None, None, None
    if floor is not None:
        ex = excess(mem_ratio, m, floor)
        cshare = copy_share(n_mem, m, floor.n_flagged, floor.n_holdout)
        if opts.dcr and holdout is not None:
            dcr_value = float(dcr_share(train, holdout, syn, device=opts.device, seed=opts.seed,
                                        remote=opts.remote, encoded=held.encoded).share)
    h = fl.n_holdout if fl is not None else 0
    rt = row_test(test, len(train), h, m)
    if test is not None:
        ident, hold_ident = test.identical_share, test.holdout_identical_share
    else:
        ident, hold_ident = float(cs["identical_share"]), (fl.n_identical / fl.n_holdout if fl is not None else None)
    prov = Provenance(n_train=len(train), n_synthetic=m, n_holdout=h, distance=distance, memviz_version=_version(),
                      created=_created(), target=train.schema.target, **provenance)
    per_row = pd.DataFrame({"synthetic_id": np.arange(m), "nn1": nn1, "ratio": ratio, "memorized": memorized,
                            "exact": pairs.pairs["exact"].to_numpy()})
    if test is not None:
        g = test.generated
        per_row = per_row.assign(close_nn1=g["nn1"].to_numpy(), distance=g["distance"].to_numpy(),
                                     too_close=g["too_close"].to_numpy(), close=g["close"].to_numpy())
    return dict(mem_ratio=mem_ratio, n_memorized=n_mem,
                floor=fl.floor if fl is not None else None, floor_ci=fl.ci if fl is not None else None,
                excess=ex.excess if ex is not None else None, excess_ci=ex.ci if ex is not None else None,
                copy_share=cshare[0] if cshare else None, copy_share_ci=(cshare[1], cshare[2]) if cshare else None,
                n_over_copied=n_over, identical_share=float(ident), holdout_identical_share=hold_ident,
                dcr_share=dcr_value, shape=shape, shape_reference=shape_ref, per_row=rows, columns=columns,
                row_test=rt, provenance=prov, flagged_exact_share=float(cs["flagged_exact"]), evidence=ev,
                generated=per_row, floor_detail=floor, per_check=generated.per_check, close=test, family=fam,
                key=train.key)


def _evidence(train: Table, syn: pd.DataFrame, held: _HeldOut, opts: _Options, flagged):
    """The audit's :class:`~memviz.evidence.suite.Evidence`: the tests when ``opts.evidence`` is True and there
    is a hold-out (its :class:`~memviz.tables.holdout.CheckedHoldout`, taken as is;
    :func:`~memviz.evidence.suite.audit_evidence`, the data-copying test reading the
    closeness tests' distances, the membership attack's searches on ``remote``'s cluster when given), none
    when False, a caller's own tests when a mapping."""
    evidence, holdout, close = opts.evidence, held.checked, held.close
    if evidence is True:
        if holdout is None:
            return Evidence()
        cols = list(train.schema.columns)
        frame = syn if list(syn.columns) == cols else syn[cols]         # the pass's own arrays where they fit
        near = {} if close is None else {
            "engine": close.engine, "d1_synthetic": close.synthetic.distance,
            "nn1_synthetic": close.synthetic.position, "d1_holdout": close.holdout.distance,
            "nn1_holdout": close.holdout.position}
        return audit_evidence(train, Table(frame, train.schema, "synthetic"), holdout, device=opts.device,
                              seed=opts.seed, flagged_row_ids=flagged, remote=opts.remote, **near)
    return Evidence.of(evidence or None)


# ------------------------------------------------------------------ the two entry points' work
def audit_fields(train, synthetic, holdout, *, schema, metadata, target: str | None, distance: str, device: str,
                 quality: bool, dcr: bool, evidence: bool | Mapping[str, object], seed: int, backend: str,
                 scheduler) -> dict:
    """The fields of the :class:`~memviz.auditing.result.Audit` of a synthetic table (``memviz.audit``, whose
    docstring says what each argument is, and which gives their defaults); ``train`` may instead be the
    :class:`~memviz.verdict.inputs.AuditInputs` a caller read (``memviz audit``:
    :func:`~memviz.verdict.inputs.generated_inputs`), taken as is with ``holdout`` added."""

    check_backend(backend, scheduler)
    inputs = (with_holdout(train, holdout) if isinstance(train, AuditInputs) else      # read by a caller: as is
              audit_inputs(train, synthetic, holdout, schema=schema, metadata=metadata, target=target))
    tr, syn, hold, notices = inputs.train, inputs.synthetic, inputs.holdout, inputs.notices
    check_memory(tr, len(syn), hold, distance=distance, device=device, evidence=evidence, dcr=dcr, backend=backend,
                 scheduler=scheduler)
    # the pass, the floor and the evidence encode the same frames
    with searches(backend, scheduler) as remote, shared_factorizations():
        opts = _Options(device=device, quality=quality, dcr=dcr, evidence=evidence, seed=seed, remote=remote)
        # the encoder fitted once, each table encoded once (on Dask the generated rows are searched there)
        encoded = encode_tables(tr, *((hold,) if remote is not None else (syn, hold)))
        engine = NeighborEngine(distance=distance, device=device).fit(tr, encoded=encoded)
        searcher = on_cluster(engine, remote)
        res = memorization(tr, syn, engine=searcher)
        close = (closeness_tests(tr, syn, hold, engine, synthetic_near=Nearest(res.d1, res.nn1_pos), device=device,
                                 remote=remote) if hold is not None else None)
        # the hold-out checked once, in the floor's words, for the floor, the DCR share and the evidence (after
        # the closeness tests, whose own refusals come first): columns, rows, rows hashed once, training rows
        checked = (checked_holdout(tr, hold, against=REFERENCE, encoder=encoded)
                   if hold is not None else None)
        floor = holdout_floor(tr, checked, distance=distance, engine=searcher) if hold is not None else None
        prov = {"fingerprints": {"train": floor.reference_fingerprint if floor is not None else fingerprint(tr),
                                 "synthetic": fingerprint(syn),
                                 "holdout": floor.holdout_fingerprint if floor is not None else ""},
                "sources": {"train": tr.source, "synthetic": syn.source,
                            "holdout": hold.source if hold is not None else ""},
                "rows_read": f"the synthetic table ({syn.source}): {len(syn):,} generated rows"
                if syn.source not in ("", "synthetic") else f"the synthetic table: {len(syn):,} generated rows",
                "notices": notices, "unjudged": tuple(tr.schema.extra.get(UNJUDGED, ()))}
        return _finish(inputs, _Generated(syn.data, res.nn1, res.ratio, res.memorized, distance),
                       _HeldOut(floor, checked, close, encoded), opts, prov)


def run_fields(run_dir: str | Path, check: int | None, *, holdout, window: int, p: float | None, k: int | None,
               T: int | None, quality: bool, dcr: bool, evidence: bool | Mapping[str, object], device: str,
               seed: int, backend: str, scheduler) -> dict:
    """The fields of the :class:`~memviz.auditing.result.Audit` of one check of a warm-up run
    (:meth:`memviz.auditing.result.Audit.from_run`, whose docstring says what each argument is, and which gives
    their defaults)."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise BadOption(f"window={window!r}: the checks read must be a whole number >= 1")
    tuned_params(p, k, T)                  # the one DynamicCut check: report --p nan had printed "p=nan"
    check_backend(backend, scheduler)
    if backend != "local":
        RunStore.open(run_dir)                      # a folder that is no run: refused before a cluster starts
    with searches(backend, scheduler) as remote:
        opts = _Options(device=device, quality=quality, dcr=dcr, evidence=evidence, seed=seed, remote=remote)
        return _from_run(run_dir, check, holdout=holdout, window=window, tuned={"p": p, "k": k, "T": T}, opts=opts)


def _from_run(run_dir, check, *, holdout, window: int, tuned: dict, opts: _Options) -> dict:
    """:func:`run_fields` with its searches on ``opts.remote`` (None: here); ``tuned``: the DynamicCut settings
    ``p``, ``k``, ``T`` a caller gave, carried in the run's :class:`RunInfo`."""
    store = RunStore.open(run_dir)
    wr = load_warmup(run_dir)
    train = store.train()
    long = wr.checks
    done = sorted(int(c) for c in long["check"].unique())
    check = done[-1] if check is None else int(check)
    if check not in done:
        raise BadOption(f"{store.path}: check {check} is not a finished check (finished: "
                          f"{', '.join(map(str, done))})")
    read = [c for c in done if c <= check][-window:]
    sub = long[long["check"].isin(read)].sort_values(["check", "synthetic_id"])
    samples = pd.concat([store.samples(c).set_index("synthetic_id").loc[
        sub.loc[sub["check"] == c, "synthetic_id"].to_numpy()] for c in read], ignore_index=True)
    epoch = int(long.loc[long["check"] == check, "epoch"].iloc[0])
    floor, hold, notices, encoded = _run_holdout(train, wr, holdout, store, opts)
    m = store.manifest()
    run = RunInfo(run_id=str(m.get("run_id") or store.path.name), run_dir=str(store.path), check=check, epoch=epoch,
                  status=wr.status, n_checks=len(done), epochs=int(wr.config.epochs) if wr.config.epochs else None,
                  **tuned, pooled_checks=len(read))
    syn_table = Table(samples[list(train.schema.columns)], train.schema, f"{run.run_id} check {check}")
    where = (f"check {check} (epoch {epoch})" if len(read) == 1 else
             f"the last {len(read)} checks up to check {check} (epoch {epoch}): checks {', '.join(map(str, read))}")
    prov = {"fingerprints": {"train": fingerprint(train), "synthetic": fingerprint(syn_table),
                             "holdout": floor.holdout_fingerprint if floor is not None else ""},
            "sources": {"train": (m.get("data") or {}).get("source", "train.parquet"), "synthetic": syn_table.source,
                        "holdout": floor.holdout_source if floor is not None else ""}, "run": run,
            "rows_read": f"{where}: {len(sub):,} generated rows", "notices": notices}
    with shared_factorizations():
        # the encoder fitted once, each table encoded once (the training rows and a given hold-out's at its check)
        encoded = encoded.including(syn_table, hold) if encoded else encode_tables(train, syn_table, hold)
        close = (closeness_tests(train, syn_table, hold, None, device=opts.device, remote=opts.remote,
                                 encoded=encoded) if hold is not None else None)
        checked = checked_holdout(train, hold, encoder=encoded) if hold is not None else None   # once (as is when checked)
        generated = _Generated(syn_table.data, sub["nn1"].to_numpy(), sub["ratio"].to_numpy(),
                               sub["memorized"].to_numpy(), wr.config.distance,
                               per_check=wr.per_check[wr.per_check["check"] <= check].reset_index(drop=True))
        return _finish(AuditInputs(train, syn_table, hold, notices), generated, _HeldOut(floor, checked, close, encoded),
                       opts, prov)


def _run_holdout(train: Table, wr, holdout, store, opts: _Options):
    """(floor, hold-out, notices, the tables encoded or None) of a run: with ``holdout`` given, its
    :class:`~memviz.tables.holdout.CheckedHoldout` (checked once, in the floor's words) and its own floor
    measured afresh (the run's distance, on ``opts.device``; its search on ``opts.remote``'s cluster when
    given); else the run's stored floor with the hold-out rows the run kept (holdout.parquet), or for an
    older run its source file when it still holds the same rows."""
    floor = wr.floor
    if holdout is not None:
        hold, notices = read_other(holdout, train.schema, role="test", name="holdout", train=train)
        encoded = encode_tables(train, hold)
        local = NeighborEngine(distance=wr.config.distance, device=opts.device).fit(train, encoded=encoded)
        checked = checked_holdout(train, hold, against=REFERENCE, encoder=encoded)   # once, at the door
        engine = opts.remote(local) if opts.remote is not None else local
        return (holdout_floor(train, checked, distance=wr.config.distance, device=opts.device, engine=engine),
                checked, notices, encoded)
    kept = store.holdout() if floor is not None else None
    if kept is not None and len(kept) == floor.n_holdout:
        return floor, kept, (), None
    if floor is None or not floor.holdout_source:
        return floor, None, (), None
    path = Path(floor.holdout_source)
    if not path.is_file():
        return floor, None, (), None
    try:
        t, notices = read_other(path, train.schema, role="test", name="holdout", train=train)
    except MemvizError:
        return floor, None, (), None
    return (floor, t, notices, None) if fingerprint(t) == floor.holdout_fingerprint else (floor, None, (), None)

