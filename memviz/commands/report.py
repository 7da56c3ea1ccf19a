"""memviz report: the audit of a warm-up run's check and of the comparisons ranked on it.

Writes DIR/audit.json, DIR/report.html and DIR/rows.csv for the run's check; report.html then has a
section per comparison ranked on the run (found under the run's folder's parent, the dashboard's
runs root, or named with --compare), each headed by the comparison, the run it was ranked on and
the DynamicCut p/k/T it was started with. Each comparison whose tables are still there also gets
DIR/comparisons/NAME/{audit.json, report.html, rows.csv}: the audit of its unmitigated model.
"""
from __future__ import annotations

import secrets
import time
from pathlib import Path

from memviz.app import audits, comparisons
from memviz.app.audits import ranked_on
from memviz.app.compare_card import pick_model
from memviz.app.runs import load_run
from memviz.attacks.store import with_finished_attack
from memviz.verdict.build import check_backend
from memviz.auditing.html import audit_html
from memviz.auditing.result import Audit
from memviz.verdict.verdict import gate
from memviz.commands.audit import backend_help
from memviz.commands.common import add_backend, add_fail_on, add_keep_row_id, add_quiet, add_raw_csv, emit, inputs_of
from memviz.errors import BadRunFolder, MemvizError
from memviz.folders import folder_unit
from memviz.io import atomic_write_text, read_json
from memviz.jobs.status import list_jobs
from memviz.warmup.store import RunStore

#: what a report folder holds (an earlier report folder is replaced whole): the audit's files
#: (:data:`memviz.auditing.result.FILES`) and comparisons/NAME/ with the same three
AUDIT_FILES = ("audit", "report", "rows")
REPORT_FILES = ("audit.json", "report.html", "rows.csv", "comparisons")


def register(sub, command) -> None:
    sp = command("report")
    sp.add_argument("run", help="the warm-up run folder")
    sp.add_argument("--check", type=int, help="the check to audit (default: the last finished one)")
    sp.add_argument("--holdout", help="real rows the model never saw: the floor and the closeness tests are "
                                      "measured against them afresh, and audit.json names them (default: the "
                                      "hold-out the run kept)")
    sp.add_argument("--p", type=float, help="DynamicCut's p (strictly between 0 and 1), recorded with the report "
                                             "when you tuned it")
    sp.add_argument("--k", type=int, help="DynamicCut's k (1 or more), recorded with the report when you tuned it")
    sp.add_argument("--T", type=int, help="DynamicCut's T (an epoch, 1 or more), recorded with the report when you "
                                          "tuned it")
    sp.add_argument("--compare", action="append", default=None, metavar="DIR",
                    help="a comparison's folder to include (repeatable; default: every finished comparison "
                         "under the run's folder's parent that was ranked on this run)")
    sp.add_argument("--no-compare", action="store_true", help="include no comparison")
    sp.add_argument("--out", required=True, help="folder for audit.json, report.html and rows.csv")
    sp.add_argument("--raw-report", action="store_true",
                    help="show raw training values in report.html (default: redacted ranges and hashes)")
    sp.add_argument("--no-quality", action="store_true", help="skip Shape")
    sp.add_argument("--no-evidence", action="store_true",
                    help="skip the membership, data-copying and attribute tests against the hold-out")

    add_backend(sp, backend_help("the check's audit's (not the comparisons')"))
    add_raw_csv(sp)
    add_keep_row_id(sp)
    add_fail_on(sp)
    add_quiet(sp, "print nothing but the JSON line (report draws no progress bar)")
    sp.set_defaults(func=run)


def ranked_comparisons(run_dir) -> list[Path]:
    """The finished comparisons under the run's folder's parent (the runs root) ranked on ``run_dir``, oldest
    first: the dashboard's comparison jobs, and the folders ``memviz compare --out`` wrote there (a folder
    with results.csv whose experiment.json records the grid's end; a CLI comparison had been missed)."""
    root = Path(run_dir).resolve().parent
    jobs = list_jobs(root, kind="compare")
    outs = [Path(o) for o, st in zip(jobs["out"], jobs["state"]) if st == "finished"]

    def finished_folder(d: Path) -> bool:
        try:
            return (d / "results.csv").is_file() and "seconds" in read_json(d / "experiment.json", "comparison")
        except MemvizError:      # no readable experiment.json: not a comparison, or one being written
            return False

    seen = {o.resolve() for o in outs}
    plain = [d for d in sorted(root.iterdir()) if d.is_dir() and d.resolve() not in seen and finished_folder(d)]
    found = [o for o in outs if (o / "results.csv").is_file()] + plain
    found.sort(key=lambda o: (o / "results.csv").stat().st_mtime)
    return [o for o in found if ranked_on(o, run_dir)]


def open_comparisons(folders) -> list:
    """The comparisons in ``folders``, opened (:class:`memviz.app.comparisons.CompareView`); one line
    naming the folder when one cannot be opened or has no finished cell (before anything is written)."""
    out = []
    for folder in folders:
        cv = comparisons.load_compare(folder)
        if not len(cv.ok):
            raise BadRunFolder(f"{folder}: the comparison has no finished cell to report")
        out.append(cv)
    return out


def comparison_parts(view, compares, out_dir: Path, *, redacted: bool, raw_csv: bool, salt: str | None):
    """(report parts, summaries) of the opened comparisons: each one's section
    (:func:`memviz.app.reports.compare_part`) and, where its tables are there, its audit written to
    ``out_dir/comparisons/NAME``."""
    from memviz.app import reports  # lazy: loads plotly (optional)

    parts, summaries = [], []
    for cv in compares:
        sec = reports.compare_section(cv, view)
        parts.append(reports.compare_part(sec, cv, salt if redacted else None))
        src = sec.source
        info = {"comparison": cv.path.name, "path": str(cv.path), "ranked_on": src.run_id, "p": src.p, "k": src.k,
                "T": src.T, "heading": sec.heading, **reports.compare_progress(cv).to_dict()}
        model = pick_model(cv.ok)
        a = audits.compare_audit(cv, model) if model is not None else None
        if a is not None:
            paths = a.write(out_dir / "comparisons" / cv.path.name, redacted=redacted, raw_csv=raw_csv)
            # its own report names the run it was ranked on and its p/k/T too
            atomic_write_text(Path(paths["report"]), audit_html(a, redacted=redacted, sections=[parts[-1]]))
            info.update(model=model, verdict=a.verdict.code, excess=a.excess, **paths)
        summaries.append(info)
    return parts, summaries


def run(args) -> int:
    t0 = time.perf_counter()
    check_backend(args.backend, args.scheduler)            # before the folder is locked or the run read
    out = Path(args.out)
    # the whole folder (its comparisons/ too) is one unit, locked from the start: a second writer is refused
    # before any work, and a full disk or a kill leaves the earlier folder whole (memviz.folders.folder_unit)
    with folder_unit(out, names=REPORT_FILES, inputs=inputs_of(args)) as stage:
        folders = [] if args.no_compare else ([Path(c) for c in args.compare] if args.compare
                                              else ranked_comparisons(args.run))
        compares = open_comparisons(folders)
        a = Audit.from_run(args.run, args.check, holdout=args.holdout, p=args.p, k=args.k, T=args.T,
                           quality=not args.no_quality, evidence=not args.no_evidence, backend=args.backend,
                           scheduler=args.scheduler)
        if not args.no_evidence:  # the run's finished targeted attack (memviz attack), with the other tests

            a = with_finished_attack(a, args.run)
        store = RunStore.open(args.run)
        train = store.train()
        samples = store.samples(a.provenance.run.check).sort_values("synthetic_id").reset_index(drop=True)
        synthetic = samples[list(train.schema.columns)]
        redacted = not args.raw_report
        paths = a.write(stage, redacted=redacted, raw_csv=args.raw_csv, train=train, synthetic=synthetic,
                        row_id=args.keep_row_id)
        summaries = []
        if compares:
            salt = secrets.token_hex(16)
            parts, summaries = comparison_parts(load_run(args.run), compares, stage, redacted=redacted,
                                                raw_csv=args.raw_csv, salt=salt)
            atomic_write_text(Path(paths["report"]), audit_html(a, redacted=redacted, train=train,
                                                                synthetic=synthetic, sections=parts))
    paths = {k: str(out / Path(v).relative_to(stage)) for k, v in paths.items()}
    for info in summaries:  # the comparisons' paths where they now are
        info.update({k: str(out / Path(info[k]).relative_to(stage)) for k in AUDIT_FILES if k in info})
    emit({**a.headline(), "run_id": a.provenance.run.run_id, "check": a.provenance.run.check,
          "status": a.provenance.run.status, **paths, "comparisons": summaries,
          "seconds": round(time.perf_counter() - t0, 3)})

    return gate(a.verdict.code, args.fail_on)
