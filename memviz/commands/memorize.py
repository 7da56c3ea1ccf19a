"""memviz memorize: which synthetic rows copy a training row, beside the hold-out's floor."""
from __future__ import annotations

import time

import pandas as pd

from memviz.commands.common import (
    Bar,
    add_backend,
    add_common,
    add_distance,
    add_raw_csv,
    emit,
    output_files,
    overrides_of,
    say_schema,
    schema_of,
)
from memviz.engine.distributed import DaskEngine, connect
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption
from memviz.io import export_csv
from memviz.measure.closeness import nn1_closeness, summary
from memviz.measure.floor import excess, holdout_floor
from memviz.measure.memorization import memorization
from memviz.measure.rownull import copies_per_row, row_null
from memviz.tables.data import load_companion, load_table
from memviz.verdict.words import excess_sentence


def register(sub, command) -> None:
    sp = command("memorize")
    add_common(sp)
    sp.add_argument("--synthetic", required=True, help="generated table, same columns as the training table")
    add_distance(sp)
    sp.add_argument("--out", required=True, help="CSV written with one row per synthetic row (nn1, nn2, d1, d2, "
                                                 "ratio, memorized, then how close it is to its nn1: exact, "
                                                 "near_exact, zero_by_scaling, max_gap in IQRs)")
    sp.add_argument("--holdout", help="real rows the model never trained on (e.g. the test split), same columns: "
                                      "adds floor, floor_ci, excess, excess_ci and n_holdout to the JSON line "
                                      "(default: none, no floor)")
    sp.add_argument("--rows-out", help="CSV of one row per training row with --holdout: the ratio test's count "
                                       "per row against its floor: row_id, copies, holdout_hits, expected, excess, "
                                       "p_value, q_value, above_chance (more ratio-test copies than fresh rows give, "
                                       "q < 5 %%). Not the audit's named rows: memviz audit names those by how close "
                                       "every row is (default: none)")
    add_backend(sp, "local = this process; dask = blocks of synthetic (and hold-out) rows on dask.distributed "
                    "workers, the fitted engine sent to each once; same output")
    add_raw_csv(sp)
    sp.set_defaults(func=run)


def run(args) -> None:
    t0 = time.perf_counter()
    if args.rows_out and not args.holdout:
        raise BadOption("--rows-out needs --holdout: each row's expected copies come from the hold-out's floor")
    if args.scheduler is not None and args.backend != "dask":
        raise BadOption("--scheduler needs --backend dask")
    outs = output_files(args, out="--out", rows_out="--rows-out")     # before any work
    if args.backend == "dask":
        with connect(args.scheduler) as client:
            _run(args, t0, client, outs)
    else:
        _run(args, t0, None, outs)


def _run(args, t0, client, outs) -> None:
    train = load_table(args.train, schema_of(args), target=args.target, suggest=False,  # it reads no target
                       overrides=overrides_of(args))
    syn = load_companion(train, args.synthetic, role="synthetic")
    holdout = load_companion(train, args.holdout, role="test") if args.holdout else None
    say_schema(train, args)                        # once the tables are read, before the work
    engine = NeighborEngine(distance=args.distance, device=args.device).fit(train)
    if client is not None:
        engine = DaskEngine(engine, client)
    res = memorization(train, syn, engine=engine, progress=Bar("memorize") if not args.quiet else None)
    close = nn1_closeness(train, syn.data.reset_index(drop=True), res.nn1, ratio=res.ratio, distance=res.distance)
    frame = pd.concat([res.to_frame(positions=True),
                       close.pairs[["exact", "near_exact", "zero_by_scaling", "max_gap"]].reset_index(drop=True)],
                      axis=1)
    out = {"mem_ratio": res.mem_ratio, "mem_auc": res.mem_auc, "mem_auc_trapezoid": res.mem_auc_trapezoid,
           "n_train": res.n_train, "n_synthetic": res.n_synthetic, "distance": res.distance,
           **{k: v for k, v in summary(close, res.memorized).items() if k != "n_pairs"}}
    rows = None
    if holdout is not None:
        floor = holdout_floor(train, holdout, distance=args.distance, engine=engine)
        ex = excess(res.mem_ratio, res.n_synthetic, floor)
        out.update(floor=floor.floor, floor_ci=[floor.low, floor.high], excess=ex.excess, excess_ci=[ex.low, ex.high],
                   n_holdout=floor.n_holdout, holdout_identical_share=floor.n_identical / floor.n_holdout,
                   sentence=excess_sentence(ex))
        if args.rows_out:
            rows = row_null(floor, copies_per_row(floor, res.nn1, res.memorized), res.n_synthetic).to_frame()
            out["ratio_above_chance"] = int(rows["above_chance"].sum())
    export_csv(outs["out"], frame, raw=args.raw_csv)
    if rows is not None:
        export_csv(outs["rows_out"], rows, raw=args.raw_csv)
        out["rows_out"] = str(args.rows_out)
    emit({**out, "out": str(args.out), "backend": args.backend, "seconds": round(time.perf_counter() - t0, 3)})
