"""memviz warmup: train TabDDPM and track memorization per training row (the dashboard's job spec)."""
from __future__ import annotations

from memviz.commands.common import (
    SEED_RANGE,
    WARMUP,
    EventBars,
    add_common,
    add_distance,
    emit,
    overrides_of,
    parse_model_params,
    seed_arg,
)
from memviz.errors import BadOption, require
from memviz.folders import output_folder
from memviz.jobs.spec import JobSpec, run_spec
from memviz.models.presets import PRESETS
from memviz.warmup.run import DEFAULT_CHECKS, WarmupConfig


def register(sub, command) -> None:
    sp = command("warmup")
    add_common(sp)
    sp.add_argument("--out", required=True, help="run directory to create (or to continue with --resume)")
    sp.add_argument("--holdout", help="real rows the model never trains on (e.g. the test split), same columns: "
                                      "the floor every check is compared with (default: none, no floor)")
    sp.add_argument("--preset", default=WARMUP.preset, choices=list(PRESETS),
                    help="TabDDPM size: cpu-quick = small network, 50 diffusion steps; paper = the reference "
                         "network (needs a GPU)")
    sp.add_argument("--epochs", type=int, help="training epochs, 1 or more (default: the preset's)")
    sp.add_argument("--check-every", type=int,
                    help=f"epochs between memorization checks, 1 or more (default: epochs / {DEFAULT_CHECKS}, about "
                         f"{DEFAULT_CHECKS} checks)")
    sp.add_argument("--n-samples", type=int,
                    help="generated rows per check, 1 or more (default: as many as training rows)")
    sp.add_argument("--seed", type=seed_arg, default=WARMUP.seed,
                    help=f"seeds the model, training and every check: {SEED_RANGE}")
    add_distance(sp)
    sp.add_argument("--top-frac", type=float, default=WARMUP.top_frac,
                    help="share of training rows in the Top group (most copies over the warm-up), strictly between 0 "
                         "and 1")
    sp.add_argument("--no-samples", action="store_true",
                    help="do not store the generated rows (the leak explorer then has nothing to show)")
    sp.add_argument("--model-params", help="JSON object of TabDDPM overrides, e.g. '{\"layers\": [256, 256]}' "
                                           "(default: none)")
    sp.add_argument("--keep-checkpoints", default=WARMUP.keep_checkpoints, metavar="RULE",
                    help="which checks keep their weights, so that memviz sample can draw a table from that epoch: "
                         "all, every:K (checks 0, K, 2K... and the last), last:N, or none. Disk: about 4 bytes per "
                         "network parameter per kept check: 1.0 MB for cpu-quick on Adult, 47 MB for the paper "
                         "network (25 checks: 1.2 GB)")
    sp.add_argument("--quality-rows", type=int, default=WARMUP.quality_rows,
                    help="generated rows whose Shape and Trend every check measures, the first ones (default: all; "
                         "0: no quality per check)")
    sp.add_argument("--epsilon", type=float,
                    help="private training: (epsilon, delta)-DP for the whole pipeline, the column transforms' "
                         "statistics (OpenDP releases from 0.1 of epsilon and delta, or the schema's public bounds and "
                         "categories) and the network (DP-SGD, the rest), composed by basic sequential composition; "
                         "assumes public the schema, the number of rows and the bounds and categories given; needs "
                         "pip install 'memviz[dp]'; every check states the epsilon spent so far (default: plain "
                         "training)")
    sp.add_argument("--delta", type=float, help="with --epsilon: the delta of the whole pipeline's guarantee (default: 1/(10 N))")
    sp.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    sp.set_defaults(func=run)


def run(args) -> None:
    require("torch")                        # it trains or samples: refused before a table is read

    cfg = WarmupConfig(preset=args.preset, epochs=args.epochs, check_every=args.check_every,
                       n_samples=args.n_samples, seed=args.seed, device=args.device, distance=args.distance,
                       top_frac=args.top_frac, keep_samples=not args.no_samples,
                       keep_checkpoints=args.keep_checkpoints, quality_rows=args.quality_rows,
                       model_params=_private(parse_model_params(args.model_params, per_model=False), args))

    output_folder(args.out)                                     # before any work
    paths = {"train": args.train, "schema": args.schema, "metadata": args.metadata, "out": args.out}
    if args.holdout:
        paths["holdout"] = args.holdout
    if args.target:
        paths["target"] = args.target
    if overrides_of(args):
        paths["overrides"] = overrides_of(args)
    spec = JobSpec("warmup", cfg.to_dict(), paths, resume=args.resume)
    emit(run_spec(spec, emit=EventBars(args.quiet)))


def _private(params: dict, args) -> dict:
    """``params`` with ``privacy`` from --epsilon / --delta (a --delta alone is one line)."""

    if args.epsilon is None:
        if args.delta is not None:
            raise BadOption("--delta needs --epsilon (the privacy budget it goes with)")
        return params
    privacy = {"epsilon": args.epsilon, **({"delta": args.delta} if args.delta is not None else {})}
    return {**params, "privacy": privacy}
