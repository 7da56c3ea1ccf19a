"""memviz audit: one audit of a synthetic table from any generator (audit.json, report.html, rows.csv)."""
from __future__ import annotations

import time
from pathlib import Path

from memviz.verdict.build import check_backend
from memviz.verdict.inputs import generated_inputs
from memviz.auditing.junit import write_junit
from memviz.auditing.result import FILES, audit
from memviz.verdict.thresholds import EXIT_THRESHOLD, FIGURES, Threshold, read_thresholds, threshold_exit
from memviz.verdict.verdict import gate
from memviz.commands.common import (
    add_backend,
    add_common,
    add_distance,
    add_fail_on,
    add_keep_row_id,
    add_raw_csv,
    emit,
    inputs_of,
    overrides_of,
    say_schema,
    schema_of,
)
from memviz.errors import BadOption
from memviz.folders import folder_unit
from memviz.tables.data import load_table


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
    add_ci_options(sp)
    sp.set_defaults(func=run)


def add_ci_options(sp) -> None:
    """The CI gate's numeric thresholds (:mod:`memviz.verdict.thresholds`), ``--junit`` and ``--mlflow``."""
    for name, f in FIGURES.items():
        sp.add_argument(f"--max-{name}", type=float, metavar="SHARE" if f.share else "N",
                        help=f"exit with code {EXIT_THRESHOLD} when {f.words} is above this "
                             + ("share (0 to 1)" if f.share else "count")
                             + " and the verdict's gate passed; code 4 when the audit could not measure it")
    sp.add_argument("--junit", metavar="FILE",
                    help="also write a JUnit XML report for CI: one test case per test of the verdict's family "
                         "(failing where it finds copying, with the verdict's sentence) and per --max-... threshold")
    sp.add_argument("--mlflow", metavar="URI",
                    help="also log the figures, the verdict and the files into a new MLflow run at this tracking URI "
                         "(e.g. file:./mlruns; needs pip install 'memviz[mlflow]')")
    sp.add_argument("--mlflow-experiment", default="memviz", help="the MLflow experiment of --mlflow")


def thresholds_of(args) -> tuple:
    """The ``--max-...`` options given, each checked at the door (:class:`~memviz.verdict.thresholds.Threshold`)."""
    return tuple(Threshold(name, getattr(args, "max_" + name.replace("-", "_")))
                 for name in FIGURES if getattr(args, "max_" + name.replace("-", "_"), None) is not None)


def check_junit_path(junit: str | None, out: str) -> None:
    """A JUnit file inside the output folder is refused (that folder is written as a unit, its contents listed)."""
    if junit is None:
        return

    j, o = Path(junit).resolve(), Path(out).resolve()
    if j == o or o in j.parents:
        raise BadOption(f"--junit {junit}: lies inside --out {out}, a folder written as a unit; put it beside it")
    if j.is_dir():
        raise BadOption(f"--junit {junit}: is a folder; give a file name (e.g. audit-junit.xml)")


def backend_help(what: str = "the audit's") -> str:
    return (f"local = this process; dask = {what} neighbour searches on dask.distributed workers, each fitted engine "
            "sent to them once; the same files")


def run(args) -> int:

    t0 = time.perf_counter()
    check_backend(args.backend, args.scheduler)            # before the folder is locked or a table read
    thresholds = thresholds_of(args)
    check_junit_path(args.junit, args.out)
    schema = schema_of(args)
    # the folder is locked from the start (a second writer is refused before any work) and written
    # as a unit (memviz.folders.folder_unit)
    with folder_unit(args.out, names=tuple(FILES.values()), inputs=inputs_of(args)) as stage:
        train = load_table(args.train, schema, target=args.target, overrides=overrides_of(args))
        # read and aligned once, taken as is by the audit (an inferred kind the generated rows correct, said)
        inputs = generated_inputs(train, args.synthetic)
        train, syn = inputs.train, inputs.synthetic
        say_schema(train, args)                    # once the tables are read, before the work
        a = audit(inputs, None, args.holdout, distance=args.distance, device=args.device,
                  quality=not args.no_quality, evidence=not args.no_evidence, backend=args.backend,
                  scheduler=args.scheduler)
        a.write(stage, redacted=not args.raw_report, raw_csv=args.raw_csv, train=train, synthetic=syn,
                row_id=args.keep_row_id)
    paths = {k: str(Path(args.out) / v) for k, v in FILES.items()}

    readings = read_thresholds(a, thresholds)
    code = threshold_exit(gate(a.verdict.code, args.fail_on), readings)
    extra = {}
    if readings:
        extra["thresholds"] = [{"option": r.threshold.option, "limit": r.threshold.limit, "value": r.value,
                                "passes": r.passes} for r in readings]
    if args.junit:
        extra["junit"] = str(write_junit(args.junit, a, readings, time.perf_counter() - t0, source=str(args.synthetic)))
    if args.mlflow:
        extra["mlflow_run"] = a.log_mlflow(args.mlflow, experiment=args.mlflow_experiment, out_dir=args.out)
    emit({**a.headline(), **paths, **extra, "backend": args.backend, "exit_code": code,
          "seconds": round(time.perf_counter() - t0, 3)})
    return code
