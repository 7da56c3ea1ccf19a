"""memviz compare: mitigation methods x generators x seeds, side by side (the dashboard's job spec)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from memviz.commands.common import (
    COMPARE,
    SEED_RANGE,
    EventBars,
    FollowEvents,
    add_common,
    add_dynamiccut,
    emit,
    overrides_of,
    parse_model_params,
    seeds,
    split,
)
from memviz.compare.config import CompareConfig
from memviz.compare.methods import METHODS
from memviz.engine import DISTANCES
from memviz.errors import BadOption, require
from memviz.folders import output_folder
from memviz.jobs.spec import EventLog, JobSpec, compare_summary_text, run_spec


def register(sub, command) -> None:
    sp = command("compare")
    add_common(sp)
    sp.add_argument("--test", required=True, help="real test split: MLE and DCR are measured on it, and it is the "
                                                  "hold-out of the floor every cell is compared with")
    sp.add_argument("--run", help="finished warm-up run on the same training table giving the DynamicCut ranking, "
                                  "with a floor for dynamiccut_excess (default: a warm-up is run into OUT/warmup "
                                  "when a method needs one, with the test split as its hold-out)")
    sp.add_argument("--methods", default=",".join(COMPARE.methods),
                    help=f"comma-separated mitigation methods, from {', '.join(METHODS)} "
                         f"(default: {','.join(COMPARE.methods)})")
    sp.add_argument("--epsilons", default=",".join(f"{e:g}" for e in COMPARE.epsilons),
                    help="with the method dp: the privacy budgets of its DP-SGD arms, one arm each (e.g. 1,10; "
                         f"default {','.join(f'{e:g}' for e in COMPARE.epsilons)}); dp@3 in --methods names one arm. "
                         "Each is (epsilon, delta = 1/(10 N))-DP for the whole pipeline: the column transforms' "
                         "statistics (OpenDP, 0.1 of the budget, or the schema's public bounds and categories) and "
                         "DP-SGD, by basic sequential composition; the schema and N are assumed public")
    sp.add_argument("--models", default=",".join(COMPARE.models), help="comma-separated generators")
    sp.add_argument("--seeds", default=",".join(map(str, COMPARE.seeds)),
                    help=f"comma-separated seeds, each {SEED_RANGE}; each seeds the mitigation, the model and the "
                         "evaluation")
    add_dynamiccut(sp)
    sp.add_argument("--epochs", type=int, help="training epochs of every model, 1 or more (default: each model's CPU preset)")
    sp.add_argument("--n-jobs", type=int, default=COMPARE.n_jobs,
                    help="cells run in parallel (processes, one torch thread each), 1 or more")
    sp.add_argument("--threads", type=int, default=None,
                    help="torch threads per cell (default: 1; parallelism comes from --n-jobs)")
    sp.add_argument("--ratio", type=float, default=COMPARE.ratio,
                    help="rows added by TabCutMix / SMOTE, as a share of the training rows")
    sp.add_argument("--distance", default=COMPARE.distance, choices=DISTANCES,
                    help="memorization distance of every figure, the floor's included: paper = the papers' per-row "
                         "min-max scaled distance; standardized = numerical columns divided by their training range")
    sp.add_argument("--model-params", help="JSON {model: {param: value}}, e.g. '{\"tabddpm\": {\"epochs\": 100}}' "
                                           "(default: none)")
    sp.add_argument("--backend", default=COMPARE.backend, choices=["local", "dask"],
                    help="local = joblib processes on this machine; dask = dask.distributed")
    sp.add_argument("--scheduler", help="dask scheduler address, with --backend dask (default: a local cluster)")
    sp.add_argument("--out", required=True, help="results directory (a rerun skips its finished cells)")
    sp.set_defaults(func=run)


def run(args) -> None:
    """Run the grid, print the summary table, list failed cells on stderr (every cell failing: exit 2)."""
    require("torch")                        # it trains or samples: refused before a table is read

    output_folder(args.out)                                     # before any work

    cfg = CompareConfig(methods=tuple(split(args.methods, "methods")), models=tuple(split(args.models, "models")),
                        seeds=tuple(seeds(args.seeds)), p=args.p, k=args.k, T=args.T, run_dir=args.run,
                        epochs=args.epochs, ratio=args.ratio, distance=args.distance,
                        model_params=parse_model_params(args.model_params, per_model=True), device=args.device,
                        n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
                        threads=args.threads, epsilons=tuple(_epsilons(args.epsilons))).checked()
    spec = JobSpec("compare", cfg.to_dict(), {"train": args.train, "schema": args.schema,
                                              "metadata": args.metadata, "test": args.test,
                                              "out": args.out, **({"target": args.target} if args.target else {}),
                                              **({"overrides": overrides_of(args)} if overrides_of(args) else {})})
    # every event through a file: the cells run in other processes and report their epochs there; a thread draws
    # them as they come (the grid, each cell's phase and epoch, the time left)
    with tempfile.TemporaryDirectory(prefix="memviz-compare-") as tmp:
        log = EventLog(Path(tmp) / "events.jsonl")
        with FollowEvents(log.path, EventBars(args.quiet)):
            result = run_spec(spec, emit=log, config=cfg)
    for line in result.pop("failed_cells", []):
        sys.stderr.write(f"memviz compare: cell {line}\n")
    sys.stdout.write(compare_summary_text(args.out) + "\n")
    sys.stdout.flush()
    emit(result)


def _epsilons(text: str) -> list[float]:

    try:
        return [float(x) for x in split(text, "epsilons")]
    except ValueError:
        raise BadOption(f"--epsilons: expected comma-separated numbers, got {text!r}") from None
