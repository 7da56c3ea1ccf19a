"""memviz report: the audit of a warm-up run's check (audit.json, report.html, rows.csv)."""
from __future__ import annotations

import time

from memviz.commands.common import add_raw_csv, emit


def register(sub, command) -> None:
    sp = command("report", "the audit of a warm-up run: one verdict, its report and its JSON "
                           "(writes audit.json, report.html, rows.csv)")
    sp.add_argument("run", help="the warm-up run folder")
    sp.add_argument("--check", type=int, help="the check to audit (default: the last finished one)")
    sp.add_argument("--holdout", help="the run's hold-out table, for the DCR share and the quality gate "
                                      "(default: the floor's own file when it still holds the same rows)")
    sp.add_argument("--p", type=float, help="DynamicCut's p, recorded with the report when you tuned it")
    sp.add_argument("--k", type=int, help="DynamicCut's k, recorded with the report when you tuned it")
    sp.add_argument("--T", type=int, help="DynamicCut's T, recorded with the report when you tuned it")
    sp.add_argument("--out", required=True, help="folder for audit.json, report.html and rows.csv")
    sp.add_argument("--raw-report", action="store_true",
                    help="show raw training values in report.html (default: redacted ranges and hashes)")
    sp.add_argument("--no-quality", action="store_true", help="skip Shape")
    sp.add_argument("--no-evidence", action="store_true",
                    help="skip the membership, data-copying and attribute tests against the hold-out")
    add_raw_csv(sp)
    sp.set_defaults(func=run)


def run(args) -> None:
    from memviz.audit.build import from_run
    from memviz.warmup.store import RunStore

    t0 = time.perf_counter()
    a = from_run(args.run, args.check, holdout=args.holdout, p=args.p, k=args.k, T=args.T,
                 quality=not args.no_quality, evidence=not args.no_evidence)
    store = RunStore.open(args.run)
    train = store.train()
    samples = store.samples(a.provenance.run.check).sort_values("synthetic_id").reset_index(drop=True)
    paths = a.write(args.out, redacted=not args.raw_report, raw_csv=args.raw_csv, train=train,
                    synthetic=samples[list(train.schema.columns)])
    emit({**a.headline(), "run_id": a.provenance.run.run_id, "check": a.provenance.run.check,
          "status": a.provenance.run.status, **paths, "seconds": round(time.perf_counter() - t0, 3)})
