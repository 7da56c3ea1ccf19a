"""memviz prune: DynamicCut drops the top-p rows of a warm-up's ranking."""
from __future__ import annotations

from pathlib import Path

from memviz.commands.common import add_dynamiccut, add_raw_csv, emit


def register(sub, command) -> None:
    sp = command("prune", "DynamicCut: drop the top-p rows of a warm-up's ranking")
    sp.add_argument("run_dir", help="a finished run directory made by memviz warmup")
    add_dynamiccut(sp)
    sp.add_argument("--out", required=True, help="pruned training table (CSV)")
    sp.add_argument("--removed-out", help="CSV of the whole ranking: row_id, score, rank, removed (default: none)")
    sp.add_argument("--keep-row-id", action="store_true", help="write the row_id column into --out too")
    add_raw_csv(sp)
    sp.set_defaults(func=run)


def run(args) -> None:
    from memviz.io import export_csv
    from memviz.mitigate.dynamiccut import dynamiccut_selection
    from memviz.warmup.run import load_warmup
    from memviz.warmup.store import RunStore, table_to_frame

    res = load_warmup(args.run_dir)
    sel = dynamiccut_selection(res.dynamics, p=args.p, k=args.k, T=args.T)
    train = RunStore(args.run_dir).train()
    pruned = train.drop(sel.removed)
    frame = table_to_frame(pruned) if args.keep_row_id else pruned.data.reset_index(drop=True)
    export_csv(Path(args.out), frame, raw=args.raw_csv)
    if args.removed_out:
        export_csv(Path(args.removed_out), sel.to_frame(), raw=args.raw_csv)
    emit({"removed": int(len(sel.removed)), "kept": int(len(pruned)), "p": sel.p, "k": sel.k, "T": sel.T,
           "out": str(args.out), "removed_row_ids": [int(x) for x in sel.removed[:20]]})
