"""memviz sample: draw a synthetic table from a warm-up's checkpoint of one check (release from it)."""
from __future__ import annotations

import time

from memviz.commands.common import SEED_RANGE, add_quiet, add_raw_csv, emit, output_files, seed_arg
from memviz.commands.inspect import add_stop_rule, recommendation
from memviz.device import DEVICES
from memviz.errors import BadOption, require
from memviz.io import export_csv
from memviz.warmup import checkpoints
from memviz.warmup.run import load_warmup


def register(sub, command) -> None:
    sp = command("sample")
    sp.add_argument("run_dir", help="a run directory made by memviz warmup")
    sp.add_argument("--check", type=int, help="the check to sample from (default: the recommended one, see "
                                              "memviz inspect); memviz inspect --json lists kept_checkpoints")
    sp.add_argument("--rows", type=int, help="rows to draw, 1 or more, as many as the machine's memory holds (refused before any work "
                         "beyond that; default: the run's rows per check)")
    sp.add_argument("--seed", type=seed_arg, default=0,
                    help=f"seeds the draw ({SEED_RANGE}): the same run, check, rows, seed and device kind give the "
                         "same table")
    sp.add_argument("--out", required=True, help="CSV file to write (the schema's columns)")
    sp.add_argument("--device", default="auto", choices=DEVICES, help="where to sample (a GPU-trained run samples "
                                                                      "on a CPU too)")
    add_stop_rule(sp)
    add_raw_csv(sp)
    add_quiet(sp, "print nothing but the JSON line (sample draws no progress bar)")
    sp.set_defaults(func=run)


def run(args) -> None:
    require("torch")                        # it trains or samples: refused before a table is read

    t0 = time.perf_counter()
    outs = output_files(args, out="--out")     # before the run is read
    res = load_warmup(args.run_dir)
    pc = res.per_check
    check, why = args.check, None
    if check is None:
        rec = recommendation(res, args)
        check, why = rec["recommended_check"], rec["recommendation"]
    rows = res.config.n_samples if args.rows is None else int(args.rows)
    if rows < 1:
        raise BadOption(f"--rows {rows}: must be at least 1")
    syn, epoch = checkpoints.sample_check(res.run_dir, check, rows, seed=args.seed, device=args.device)
    export_csv(outs["out"], syn, raw=args.raw_csv)
    out = {"run_dir": str(args.run_dir), "check": int(check), "epoch": epoch, "rows": int(len(syn)),
           "seed": int(args.seed), "out": str(args.out), "recommendation": why}
    row = pc[pc["check"] == check]
    if len(row):  # the figures measured at that check, to compare with memviz memorize of the table
        r = row.iloc[0]
        out["check_figures"] = {k: float(r[k]) for k in ("mem_ratio", "excess", "excess_low", "excess_high", "shape",
                                                         "trend") if k in r and r[k] == r[k]}
    emit({**out, "seconds": round(time.perf_counter() - t0, 3)})
