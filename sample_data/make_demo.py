"""Record the dashboard's ready-made demo (``sample_data/demo/``) and the Audit page's example table.

    python sample_data/make_demo.py [--out sample_data/demo] [--epochs 60] [--check-every 5]
    python sample_data/make_demo.py --audit-again      # only the kept audit, when its format changed

What a first visitor would otherwise wait minutes for, made the way the dashboard makes it: the bundled sample
read as the Data page reads it, then, through :mod:`memviz.jobs.control` (the Warm-up and Compare pages' own
calls, each in its background worker):

1. a warm-up with the Warm-up form's defaults (:data:`memviz.app.runs.UI_WARMUP_DEFAULTS`: 60 epochs, a check
   every 5), the test split as its hold-out, the last check's weights kept (so "Sample from this check" works);
   the worker audits its last check when it stops, as for any run;
2. a comparison ranked on that run (baseline, DynamicCut, random pruning and the dynamic threshold × TabDDPM,
   seed 0, trained as long as the warm-up), then its per-column details;
3. the Audit page's example: the warm-up's last generated rows with 300 of them replaced by 30 training rows
   planted 10 times each (``sample_data/example_synthetic.csv``).

The runs root is then packed by :func:`memviz.app.demo.pack` (what a page never reads left out, the folder
paths made relative) into ``--out``; the dashboard installs it into an empty runs root on its first start
(:func:`memviz.app.demo.install`) and reads it with the same code as any run. ``tests/app/test_demo.py`` fails
when the shipped folder no longer matches the code (another manifest or audit format, another sample):
run this script again then. About 5 minutes on 2 quiet cores. When only the audit changed (its stored format, a
test added to it), ``--audit-again`` installs the shipped demo into a temporary runs root, audits each run's last
check again as its worker did when it stopped (:func:`memviz.jobs.spec.keep_audit`) and packs it back: the
training, the checks and the comparison stay as recorded.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: the comparison's methods: the Compare form's defaults and the dynamic threshold beside DynamicCut
METHODS = ("baseline", "dynamiccut", "random", "dynamic_threshold")


def _wait(job, what: str):
    from memviz.app import progress
    from memviz.jobs import control as jobs

    t0 = time.monotonic()
    while True:
        pr = progress.job_progress(job)
        print(f"\r{what}: {pr.readout()}"[:150].ljust(150), end="", file=sys.stderr, flush=True)
        if pr.final:
            print(file=sys.stderr)
            break
        time.sleep(2)
    st = jobs.job_status(job)
    if st.state != "finished":
        raise SystemExit(f"{what} {st.state}: {st.message}\n{jobs.read_log(job)[-3000:]}")
    return time.monotonic() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "sample_data" / "demo"))
    ap.add_argument("--example", default=str(ROOT / "sample_data" / "example_synthetic.csv"))
    ap.add_argument("--epochs", type=int, default=None, help="default: the Warm-up form's")
    ap.add_argument("--check-every", type=int, default=None, help="default: the Warm-up form's")
    ap.add_argument("--raw", help="record into this (new) runs root and keep it (default: a temporary folder)")
    ap.add_argument("--audit-again", action="store_true",
                    help="keep the shipped runs, audit each again with today's code and pack them back")
    args = ap.parse_args(argv)
    if args.audit_again:
        return audit_again(Path(args.out))

    with tempfile.TemporaryDirectory(prefix="memviz-demo-") as tmp:
        root = Path(args.raw).resolve() if args.raw else Path(tmp) / "runs"
        os.environ["MEMVIZ_RUNS"] = str(root)      # the workers read the runs root from here
        from memviz.app import datasets, demo, runs
        from memviz.jobs import control as jobs

        raw = datasets.load_choice("sample")                       # as the Data page's first visit reads it
        train, test = datasets.build_tables(raw, raw.schema, "file")
        D = runs.UI_WARMUP_DEFAULTS
        epochs = args.epochs or int(D["epochs"])
        warm = jobs.start_warmup(train, preset=D["preset"], epochs=epochs,
                                 check_every=args.check_every or int(D["check_every"]), seed=int(D["seed"]),
                                 device="cpu", keep_checkpoints="last:1", holdout=test, label=raw.label,
                                 root=root)
        runs.save_column_order(warm.out, [str(c) for c in raw.frame.columns])
        took = {"warm-up": _wait(warm, "warm-up")}
        cmp = jobs.start_compare(train, test, root=root, run_dir=str(warm.out), methods=METHODS, models=("tabddpm",),
                                 seeds=(0,), epochs=epochs, device="cpu", label=raw.label)
        took["comparison"] = _wait(cmp, "comparison")
        details = jobs.start_details(cmp, device="cpu")
        took["details"] = _wait(details, "details")

        example = demo.planted_example(runs.load_run(warm.out))
        example.to_csv(args.example, index=False)
        size = demo.pack(root, Path(args.out))
    print(f"demo: {args.out} ({size / 2**20:.2f} MiB), example: {args.example} "
          f"({Path(args.example).stat().st_size / 2**20:.2f} MiB); "
          + ", ".join(f"{k} {v:.0f} s" for k, v in took.items()) + f"; load {os.getloadavg()[0]:.1f}")
    shutil.rmtree(Path(args.out) / "__pycache__", ignore_errors=True)


def audit_again(out: Path) -> None:
    """The shipped demo's kept audits made again by today's code (module docstring)."""
    from memviz.app import demo
    from memviz.jobs.spec import keep_audit
    from memviz.warmup.store import MANIFEST

    with tempfile.TemporaryDirectory(prefix="memviz-demo-") as tmp:
        root = Path(tmp) / "runs"
        if not demo.install(root, out):
            raise SystemExit(f"{out}: no demo to audit again (or MEMVIZ_DEMO=0)")
        (root / demo.MARK).unlink()
        t0 = time.monotonic()
        for manifest in sorted(root.glob(f"*/{MANIFEST}")):
            if not keep_audit(manifest.parent, device="cpu"):
                raise SystemExit(f"{manifest.parent.name}: the audit failed (see above)")
        size = demo.pack(root, out)
    print(f"demo: {out} ({size / 2**20:.2f} MiB), audited again in {time.monotonic() - t0:.0f} s")
    shutil.rmtree(out / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
