"""memviz study: the papers' findings on three tables, against the floor and a null."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from memviz.commands.common import COMPARE, SEED_RANGE, add_quiet, dataset_names, emit, output_files, seeds, split
from memviz.device import DEVICES
from memviz.errors import require
from memviz.folders import output_folder
from memviz.study import run_study
from memviz.study.run import DATASETS, DEFAULT_PARTS, PARTS
from memviz.study.scales import SCALES


def register(sub, command) -> None:
    sp = command("study")
    sp.add_argument("--data-dir", required=True, help="folder holding one sub-folder per dataset "
                                                      "(train.csv, test.csv, meta.json)")
    sp.add_argument("--out", required=True, help="output folder (a rerun reuses finished runs and cells)")
    sp.add_argument("--scales", default="cpu,regime,mid,large",
                    help=f"comma-separated scales ({', '.join(SCALES)}; default: the four the document holds): "
                         "tiny = seconds (tests); cpu = 3,000 rows, 200 epochs; regime = 250 rows, 4,000 epochs; "
                         "mid = 1,000 rows, 4,000 epochs, 10 seeds, adult; large = 3,000 rows, 4,000 epochs, 10 "
                         "seeds, adult (the test the pilot's rule asks for); paper = full, GPU")
    sp.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated dataset folders")
    sp.add_argument("--seeds", default=None, help=f"comma-separated seeds, each {SEED_RANGE} (default: the scale's)")
    sp.add_argument("--parts", default=",".join(DEFAULT_PARTS),
                    help=f"comma-separated parts to run, of {', '.join(PARTS)} (default: every part but pilot; the "
                         "pilot across scales takes hours on a CPU and runs only when named, e.g. --parts pilot). "
                         "The summaries and the document are always rebuilt, from the committed tables and any run "
                         "folders: --parts floors only renders")
    sp.add_argument("--markdown", default=None, help="where the document goes (default: OUT/study.md)")
    sp.add_argument("--n-jobs", type=int, default=COMPARE.n_jobs, help="runs and cells in parallel")
    sp.add_argument("--device", default="auto", choices=DEVICES,
                    help="where tensors live: auto = a CUDA GPU when one is visible, else the CPU")
    add_quiet(sp, "no progress lines on stderr")
    sp.set_defaults(func=run)


def run(args) -> None:
    require("torch")                        # it trains or samples: refused before a table is read

    t0 = time.perf_counter()
    output_folder(args.out)                                     # before any work
    outs = output_files(args, markdown="--markdown")
    study = run_study(args.data_dir, args.out, scales=split(args.scales, "scales"),
                      datasets=dataset_names(args.datasets), seeds=seeds(args.seeds) if args.seeds else None,
                      parts=split(args.parts, "parts"), device=args.device, n_jobs=args.n_jobs,
                      markdown=outs.get("markdown"), progress=None if args.quiet else lambda m: sys.stderr.write(m + "\n"))
    md = args.markdown or str(Path(args.out) / "study.md")
    emit({"out": str(args.out), "markdown": md, "scales": [k for k in study if k not in ("floors", "pilot", "seconds")],
           "seconds": round(time.perf_counter() - t0, 1)})
