"""memviz audit: one audit of a synthetic table from any generator (audit.json, report.html, rows.csv)."""
from __future__ import annotations

import time
from pathlib import Path

from memviz.commands.common import (
    add_backend,
    add_common,
    add_distance,
    add_fail_on,
    add_keep_row_id,
    add_raw_csv,
    emit,
    overrides_of,
    say_schema,
    schema_of,
)


def register(sub, command) -> None:
    sp = command("audit")
    add_common(sp)
    sp.add_argument("--synthetic", required=True, help="generated table, same columns as the training table")
    sp.add_argument("--holdout", help="real rows the generator never trained on (e.g. the test split): the floor "
                                      "that tells copying from chance (default: none, and the verdict refuses)")
    add_distance(sp)
    sp.add_argument("--out", required=True, help="folder for audit.json, report.html and rows.csv")
    sp.add_argument("--raw-report", action="store_true",
                    help="show raw training values in report.html (default: redacted ranges and hashes)")
    sp.add_argument("--no-quality", action="store_true", help="skip Shape (the verdict then says quality was not "
                                                              "measured)")
    sp.add_argument("--no-evidence", action="store_true",
                    help="skip the membership, data-copying and attribute tests against the hold-out (about one "
                         "more memorization pass)")
    add_backend(sp, backend_help())
    add_raw_csv(sp)
    add_keep_row_id(sp)
    add_fail_on(sp)
    sp.set_defaults(func=run)


def backend_help(what: str = "the audit's") -> str:
    return (f"local = this process; dask = {what} neighbour searches on dask.distributed workers, each fitted engine "
            "sent to them once; the same files")


def run(args) -> int:
    from memviz.auditing.build import adapt_train, as_table, audit, check_backend
    from memviz.auditing.result import FILES
    from memviz.folders import folder_unit
    from memviz.tables.data import load_table, read_frame

    t0 = time.perf_counter()
    check_backend(args.backend, args.scheduler)            # before the folder is locked or a table read
    schema = schema_of(args)
    # the folder is locked from the start (a second writer is refused before any work) and written
    # as a unit (memviz.folders.folder_unit)
    with folder_unit(args.out, names=tuple(FILES.values())) as stage:
        train = load_table(args.train, schema, target=args.target, overrides=overrides_of(args))
        synthetic = read_frame(args.synthetic)
        train = adapt_train(train, synthetic, str(args.synthetic))   # an inferred kind the generated rows correct
        syn = as_table(synthetic, train.schema, role="synthetic", name=str(args.synthetic), train=train)
        say_schema(train, args)                    # once the tables are read, before the work
        a = audit(train, syn, args.holdout, distance=args.distance, device=args.device,
                  quality=not args.no_quality, evidence=not args.no_evidence, backend=args.backend,
                  scheduler=args.scheduler)
        a.write(stage, redacted=not args.raw_report, raw_csv=args.raw_csv, train=train, synthetic=syn,
                row_id=args.keep_row_id)
    paths = {k: str(Path(args.out) / v) for k, v in FILES.items()}
    emit({**a.headline(), **paths, "backend": args.backend, "seconds": round(time.perf_counter() - t0, 3)})
    from memviz.auditing.verdict import gate

    return gate(a.verdict.code, args.fail_on)
