"""memviz prune: DynamicCut drops the top-p rows of a warm-up's ranking."""
from __future__ import annotations

from memviz.commands.common import add_dynamiccut, add_quiet, add_raw_csv, emit, output_files
from memviz.dynamics.dynamiccut import DynamicCutParams, dynamiccut_selection
from memviz.errors import BadRunFolder
from memviz.io import export_csv
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore


def register(sub, command) -> None:
    sp = command("prune")
    sp.add_argument("run_dir", help="a finished run directory made by memviz warmup")
    add_dynamiccut(sp)
    sp.add_argument("--out", required=True, help="pruned training table (CSV): your columns in your file's order, "
                                                 "your row key included")
    sp.add_argument("--removed-out", help="CSV of the whole ranking: your row key (when the table has one), row_id, "
                                          "score, rank, removed (default: none)")
    sp.add_argument("--keep-row-id", action="store_true", help="write memviz's row_id column into --out too")
    sp.add_argument("--partial", action="store_true",
                    help="prune by the checks of an unfinished run (running, interrupted, cancelled or failed); "
                         "refused without it")
    add_raw_csv(sp)
    add_quiet(sp, "print nothing but the JSON line (prune draws no progress bar)")
    sp.set_defaults(func=run)


#: the removed rows the JSON line lists (removed_row_ids, removed_keys): the first, highest score first
SHOWN = 20

#: what an unfinished run's status means for its ranking
_UNFINISHED = {"running": "is still training", "interrupted": "was interrupted (its writer is gone)",
               "cancelled": "was cancelled", "failed": "failed"}


def run(args) -> None:
    outs = output_files(args, out="--out", removed_out="--removed-out")     # before the run is read
    res = load_warmup(args.run_dir)
    # an unfinished run ranks by the checks it has: a different ranking from the finished run's
    # (T = 20 where the finished run gives T = 100). Refused, so that it is never taken for one;
    # --partial takes it knowingly, and the JSON line says so either way.
    done = int(res.per_check["epoch"].max()) if len(res.per_check) else 0
    if res.status != "finished" and not args.partial:
        raise BadRunFolder(f"{args.run_dir}: the run {_UNFINISHED.get(res.status, res.status)} with checks up to epoch "
                           f"{done} of {res.config.epochs}; its ranking would be partial (wait for it, resume it with "
                           "memviz warmup --resume, or pass --partial)")
    sel = dynamiccut_selection(res.dynamics, params=DynamicCutParams(args.p, args.k, args.T))  # checked once
    train = RunStore(args.run_dir).train()
    pruned = train.drop(sel.removed)
    export_csv(outs["out"], pruned.to_frame(row_id=args.keep_row_id), raw=args.raw_csv)   # the key kept
    if args.removed_out:
        export_csv(outs["removed_out"], train.with_keys(sel.to_frame()), raw=args.raw_csv)
    first = sel.removed[:SHOWN]
    named = {"key": train.key, "removed_keys": train.key_list(first)} if train.key is not None else {}
    emit({"removed": int(len(sel.removed)), "kept": int(len(pruned)), "p": sel.p, "k": sel.k, "T": sel.T,
           "out": str(args.out), "removed_row_ids": [int(x) for x in first], **named,
           # the lists hold the first SHOWN removed rows, highest score first: say so (every one: --removed-out)
           "removed_shown": int(len(first)), "removed_truncated": bool(len(first) < len(sel.removed)),
           "run_status": res.status, "partial": res.status != "finished", "epochs_checked": done,
           "epochs": res.config.epochs})
