"""memviz attack: the targeted shadow-model attack on a warm-up run's chosen rows (resumable)."""
from __future__ import annotations

import time

from memviz.attacks.design import ShadowConfig
from memviz.attacks.shadow import attack_run
from memviz.attacks.store import run_attack_dir
from memviz.auditing.result import Audit
from memviz.commands.common import (
    SEED_RANGE,
    Bar,
    add_dynamiccut,
    add_quiet,
    emit,
    parse_model_params,
    seed_arg,
)
from memviz.errors import BadOption, require
from memviz.folders import output_folder

#: the defaults of the command (ShadowConfig's own n_shadows; the targets per group)
N_TARGETS = 20


def register(sub, command) -> None:
    sp = command("attack")
    sp.add_argument("run", help="a warm-up run folder (made by memviz warmup)")
    sp.add_argument("--out", help="the attack folder (default: RUN/attacks/targeted, where the report and the "
                                  "dashboard find it)")
    sp.add_argument("--top", type=int, default=N_TARGETS, help="DynamicCut's highest-ranked rows to attack: 0 or more, at most the ceil(p N) rows its "
                         "ranking names (asked for more, those, said on stderr)")
    sp.add_argument("--named", type=int, default=N_TARGETS,
                    help="at most this many of the rows the audit of the check names (its over-copied rows); 0 or more")
    sp.add_argument("--random", type=int, default=N_TARGETS, help="random training rows to attack: 0 or more, at most the training rows not already targets")
    sp.add_argument("--holdout-rows", type=int, default=N_TARGETS,
                    help="hold-out rows to attack: the controls of the release reading (0: none), at most the hold-out's "
                         "rows")
    sp.add_argument("--shadows", type=int, default=ShadowConfig().n_shadows,
                    help="shadow models: an even number, at least 4; each target is in half of them")
    sp.add_argument("--check", type=int, help="the run's check whose rows are the release and whose training "
                                              "length the shadows take (default: the last)")
    sp.add_argument("--holdout", help="the run's hold-out table (default: the floor's own file when it still "
                                      "holds the same rows)")
    add_dynamiccut(sp)
    sp.add_argument("--model-params", help="JSON of TabDDPM parameters overriding the run's, e.g. '{\"steps\": 500}'")
    sp.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                    help="where the shadows train: auto = a CUDA GPU when one is visible, else the CPU")
    sp.add_argument("--seed", type=seed_arg, default=0, help=f"the targets' draws and the shadows' seeds: {SEED_RANGE}")
    sp.add_argument("--no-samples", action="store_true", help="do not keep each shadow's generated rows")
    add_quiet(sp)
    sp.set_defaults(func=run)


def audit_named_targets(run_dir, check, holdout, n: int) -> list[int]:
    """Up to ``n`` rows the audit of the run's check names (over-copied, most excess first)."""
    if n <= 0:
        return []

    a = Audit.from_run(run_dir, check, holdout=holdout, quality=False, evidence=False)
    return [int(i) for i in a.frame("over_copied", row_id=True)["row_id"].head(n)]


def run(args) -> None:
    require("torch")                        # it trains or samples: refused before a table is read

    t0 = time.perf_counter()
    if args.out is not None:
        output_folder(args.out)                                 # before any work
    for name in ("top", "named", "random", "holdout_rows"):
        if getattr(args, name) < 0:
            raise BadOption(f"--{name.replace('_', '-')}: must be 0 or more")
    named = audit_named_targets(args.run, args.check, args.holdout, args.named)
    bar = None if args.quiet else Bar("shadows")

    def progress(ev: dict) -> None:
        if bar is not None and ev.get("event") == "shadow":
            bar(int(ev["done"]), int(ev["total"]), f"shadow {ev['shadow']}: {ev['seconds']:.0f} s")

    res = attack_run(args.run, n_top=args.top, named=named, n_random=args.random, n_holdout=args.holdout_rows,
                     n_shadows=args.shadows, holdout=args.holdout, check=args.check, out=args.out, p=args.p, k=args.k,
                     T=args.T, device=args.device, seed=args.seed,
                     model_params=parse_model_params(args.model_params, per_model=False),
                     keep_samples=not args.no_samples, progress=progress)
    out = args.out or str(run_attack_dir(args.run))
    emit({"out": str(out), "n_shadows": res.n_shadows,
          "groups": {r["group"]: {"n": int(r["n"]), "auc": r["auc"], "auc_ci": [r["auc_low"], r["auc_high"]],
                                  "tpr_1pct": r["tpr_1pct"]} for r in res.groups.to_dict(orient="records")},
          "top_vs_random": res.comparison("top", "random"), "release": res.release,
          "flags_copying": res.flags_copying, "sentence": res.sentence(),
          "shadow_seconds": round(res.seconds, 3), "seconds": round(time.perf_counter() - t0, 3)})
