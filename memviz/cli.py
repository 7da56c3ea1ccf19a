"""Command line: the same pipeline as the dashboard, headless (the top floor of the house).

Every command prints, as its last stdout line, one JSON object (scripts rely on it).
A user mistake prints one line on stderr and exits with code 2. ``warmup`` and
``compare`` build the same job spec as the dashboard (:class:`memviz.app.spec.JobSpec`)
and run it here, with a progress bar on stderr drawn from the job's events. All
argparse and every progress bar live in this module.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from .compare.config import CompareConfig
from .device import DEVICES
from .dynamiccut import DEFAULT_K, DEFAULT_P
from .errors import MemvizError
from .models.presets import PRESETS
from .neighbors import DISTANCES
from .warmup import DEFAULT_CHECKS, WarmupConfig

_COMPARE = CompareConfig()
_WARMUP = WarmupConfig()


# ---------------------------------------------------------------- helpers
class Bar:
    """A one-line progress bar on stderr (no dependency, quiet when not a terminal)."""

    def __init__(self, label: str, stream=None):
        self.label, self.stream = label, stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int, text: str = "") -> None:
        now = time.monotonic()
        final = done >= total
        if not final and now - self.last < (0.1 if self.tty else 5.0):
            return
        self.last = now
        frac = done / total if total else 1.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        line = f"{self.label} [{bar}] {done}/{total} {text}"
        if self.tty:
            self.stream.write("\r" + line[:120].ljust(120) + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


class EventBars:
    """Draws a job's progress events (:mod:`memviz.app.spec`) as progress bars."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.bars = {"warm-up": Bar("warm-up"), "compare": Bar("compare")}
        self.mem = None

    def __call__(self, ev: dict) -> None:
        if self.quiet:
            return
        kind = ev.get("event")
        if kind == "check":
            self.mem = ev.get("mem_ratio")
        elif kind == "epoch":
            loss = f"loss {ev['loss']:.3f}" if ev.get("loss") is not None else ""
            mem = f" mem {self.mem:.3f}" if self.mem is not None else ""
            label = "warm-up (TabDDPM ranking)" if ev.get("phase") == "warmup" else ""
            self.bars["warm-up"](int(ev["epoch"]), int(ev["epochs"]), (label or loss + mem).strip())
        elif kind == "cell":
            what = f"mem {ev['mem_ratio']:.1%}" if ev.get("status") == "ok" else "FAILED"
            self.bars["compare"](int(ev["done"]), int(ev["total"]),
                                 f"{ev['method']}/{ev['model']}/seed {ev['seed']}: {what} ({ev.get('seconds') or 0:.0f} s)")


def _emit(obj: dict) -> None:
    """The last stdout line: strict JSON (NaN and infinities become null)."""
    from .io import dumps
    print(dumps(obj), flush=True)


def parse_model_params(text: str | None, per_model: bool) -> dict:
    """``--model-params`` JSON: ``{param: value}`` (``per_model=False``, a warm-up's TabDDPM)
    or ``{model: {param: value}}`` (a comparison). One-line MemvizError on bad JSON, on
    NaN/Infinity, or on the wrong shape."""
    if not text:
        return {}

    def refuse(const):
        raise MemvizError(f"--model-params: {const} is not a valid value (use a finite number)")

    try:
        obj = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise MemvizError(f"--model-params: not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(obj, dict):
        raise MemvizError("--model-params: expected a JSON object, e.g. '{\"layers\": [256, 256]}'")
    if per_model and not all(isinstance(v, dict) for v in obj.values()):
        raise MemvizError("--model-params: expected a JSON object {model: {param: value}}")
    return obj


def _split(text: str, what: str) -> list[str]:
    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if not items:
        raise MemvizError(f"--{what}: empty list")
    return items


def _dataset_names(text: str) -> list[str]:
    """``--datasets``: plain folder names inside ``--data-dir`` (never ``..``, a path or a hidden folder)."""
    names = _split(text, "datasets")
    for name in names:
        if name.startswith(".") or "/" in name or "\\" in name or name != Path(name).name:
            raise MemvizError(f"--datasets: {name!r} is not a folder name inside --data-dir")
    return names


def _seeds(text: str) -> list[int]:
    try:
        return [int(x) for x in _split(text, "seeds")]
    except ValueError:
        raise MemvizError(f"--seeds: expected integers separated by commas, got {text!r}") from None


# --------------------------------------------------------------- commands
def cmd_memorize(args) -> None:
    import pandas as pd

    from .closeness import nn1_closeness, summary
    from .data import load_companion, load_table
    from .io import export_csv
    from .memorization import memorization
    from .neighbors import NeighborEngine

    t0 = time.perf_counter()
    if args.rows_out and not args.holdout:
        raise MemvizError("--rows-out needs --holdout: each row's expected copies come from the hold-out's floor")
    train = load_table(args.train, args.schema)
    syn = load_companion(train, args.synthetic, role="synthetic")
    holdout = load_companion(train, args.holdout, role="test") if args.holdout else None
    engine = NeighborEngine(distance=args.distance, device=args.device).fit(train)
    res = memorization(train, syn, engine=engine, progress=Bar("memorize") if not args.quiet else None)
    close = nn1_closeness(train, syn.data.reset_index(drop=True), res.nn1, ratio=res.ratio, distance=res.distance)
    frame = pd.concat([res.to_frame(positions=True),
                       close.pairs[["exact", "near_exact", "zero_by_scaling", "max_gap"]].reset_index(drop=True)],
                      axis=1)
    out = {"mem_ratio": res.mem_ratio, "mem_auc": res.mem_auc, "mem_auc_trapezoid": res.mem_auc_trapezoid,
           "n_train": res.n_train, "n_synthetic": res.n_synthetic, "distance": res.distance,
           **{k: v for k, v in summary(close, res.memorized).items() if k != "n_pairs"}}
    rows = None
    if holdout is not None:
        from .floor import excess, holdout_floor
        from .rownull import copies_per_row, row_null

        floor = holdout_floor(train, holdout, distance=args.distance, engine=engine)
        ex = excess(res.mem_ratio, res.n_synthetic, floor)
        out.update(floor=floor.floor, floor_ci=[floor.low, floor.high], excess=ex.excess, excess_ci=[ex.low, ex.high],
                   n_holdout=floor.n_holdout, holdout_identical_share=floor.n_identical / floor.n_holdout,
                   sentence=ex.sentence())
        if args.rows_out:
            rows = row_null(floor, copies_per_row(floor, res.nn1, res.memorized), res.n_synthetic).to_frame()
            out["over_copied"] = int(rows["over_copied"].sum())
    export_csv(Path(args.out), frame, raw=args.raw_csv)
    if rows is not None:
        export_csv(Path(args.rows_out), rows, raw=args.raw_csv)
        out["rows_out"] = str(args.rows_out)
    _emit({**out, "out": str(args.out), "seconds": round(time.perf_counter() - t0, 3)})


def cmd_warmup(args) -> None:
    from .app.spec import JobSpec, run_spec

    cfg = WarmupConfig(preset=args.preset, epochs=args.epochs, check_every=args.check_every,
                       n_samples=args.n_samples, seed=args.seed, device=args.device, distance=args.distance,
                       top_frac=args.top_frac, keep_samples=not args.no_samples,
                       model_params=parse_model_params(args.model_params, per_model=False))
    paths = {"train": args.train, "schema": args.schema, "out": args.out}
    if args.holdout:
        paths["holdout"] = args.holdout
    spec = JobSpec("warmup", cfg.to_dict(), paths, resume=args.resume)
    _emit(run_spec(spec, emit=EventBars(args.quiet)))


def cmd_inspect(args) -> None:
    from .floor import excess
    from .store import RunStore
    from .warmup import load_warmup

    res = load_warmup(args.run_dir)
    m = RunStore(args.run_dir).manifest()
    out = {"run_dir": str(args.run_dir), "status": res.status, "checks": int(len(res.per_check)),
           "final_mem_ratio": res.final_mem_ratio, "config": m.get("config"), "device": m.get("device"),
           "timings": m.get("timings"), "summary": res.summary(),
           "per_check": res.per_check.to_dict(orient="list"), "floor": None, "final_excess": None}
    if res.floor is not None:  # the per-check excess is in per_check (excess, excess_low, excess_high)
        f = res.floor
        out["floor"] = {"floor": f.floor, "floor_ci": [f.low, f.high], "n_holdout": f.n_holdout,
                        "n_flagged": f.n_flagged, "distance": f.distance, "holdout_source": f.holdout_source,
                        "holdout_identical_share": f.n_identical / f.n_holdout}
        last = res.per_check.iloc[-1]
        ex = excess(float(last["mem_ratio"]), int(last["n_synthetic"]), f)
        out["final_excess"] = {"excess": ex.excess, "excess_ci": [ex.low, ex.high], "sentence": ex.sentence()}
    if not args.json:
        print(_format_summary(out))
    _emit(out)


def _format_summary(o: dict) -> str:
    s = o["summary"]
    pc = o["per_check"]
    lines = [f"run {o['run_dir']}  status {o['status']}  checks {o['checks']}  device {o['device']}",
             f"final mem ratio {o['final_mem_ratio']:.2%}"]
    if o.get("floor"):
        f = o["floor"]
        lo, hi = f["floor_ci"]
        lines += [f"floor: real rows the model never saw ({f['n_holdout']:,} hold-out rows) are flagged at "
                  f"{f['floor']:.1%} (95 % interval {lo:.1%} to {hi:.1%}) with the {f['distance']} distance",
                  o["final_excess"]["sentence"],
                  "points above the floor per check: " + ", ".join(
                      f"e{e}:{100 * x:+.1f} ({100 * a:+.1f} to {100 * b:+.1f})"
                      for e, x, a, b in zip(pc["epoch"], pc["excess"], pc["excess_low"], pc["excess_high"]))]
    else:
        lines.append("no floor: this run was given no hold-out, so the mem ratio cannot be compared with real rows "
                     "the model never saw (the test flags those too); rerun with memviz warmup --holdout")
    lines += ["mem ratio per check: " + ", ".join(f"e{e}:{r:.1%}" for e, r in zip(pc["epoch"], pc["mem_ratio"])),
              "concentration: " + ", ".join(f"top {float(k):.0%} rows -> {v:.1%} of copies"
                                            for k, v in s["concentration"].items() if v is not None),
              f"heavy tail: gini {s['heavy_tail']['gini']:.3f}, max copies of one row "
              f"{s['heavy_tail']['max_count']}, rows never copied {s['heavy_tail']['zero_share']:.1%}"]
    for g in ("top", "non_top"):
        t = s[g]
        lines.append(f"{g:8s}: rows {t['n_rows']}, memorized {t['n_memorized']}, median first epoch "
                     f"{t['median_first_epoch']}, forgetting/row {t['forgetting_rate']:.3f}, "
                     f"early Mem-AUC {t['early_mem_auc']:.4f}")
    lines.append(f"Mann-Whitney p: first epoch {s['p_first_epoch']}, forgetting {s['p_forgetting']}, "
                 f"early Mem-AUC {s['p_early_mem_auc']} (the paper's tests: Top is chosen from the same counts)")
    return "\n".join(lines)


def cmd_prune(args) -> None:
    from .dynamiccut import dynamiccut_selection
    from .io import export_csv
    from .store import RunStore, table_to_frame
    from .warmup import load_warmup

    res = load_warmup(args.run_dir)
    sel = dynamiccut_selection(res.dynamics, p=args.p, k=args.k, T=args.T)
    train = RunStore(args.run_dir).train()
    pruned = train.drop(sel.removed)
    frame = table_to_frame(pruned) if args.keep_row_id else pruned.data.reset_index(drop=True)
    export_csv(Path(args.out), frame, raw=args.raw_csv)
    if args.removed_out:
        export_csv(Path(args.removed_out), sel.to_frame(), raw=args.raw_csv)
    _emit({"removed": int(len(sel.removed)), "kept": int(len(pruned)), "p": sel.p, "k": sel.k, "T": sel.T,
           "out": str(args.out), "removed_row_ids": [int(x) for x in sel.removed[:20]]})


def cmd_compare(args) -> None:
    """Run the grid, print the summary table, list failed cells on stderr (every cell failing: exit 2)."""
    from .app.spec import JobSpec, compare_summary_text, run_spec

    cfg = CompareConfig(methods=tuple(_split(args.methods, "methods")), models=tuple(_split(args.models, "models")),
                        seeds=tuple(_seeds(args.seeds)), p=args.p, k=args.k, T=args.T, run_dir=args.run,
                        epochs=args.epochs, ratio=args.ratio, distance=args.distance,
                        model_params=parse_model_params(args.model_params, per_model=True), device=args.device,
                        n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
                        threads=args.threads).validated()
    spec = JobSpec("compare", cfg.to_dict(), {"train": args.train, "schema": args.schema, "test": args.test,
                                              "out": args.out})
    result = run_spec(spec, emit=EventBars(args.quiet))
    for line in result.pop("failed_cells", []):
        sys.stderr.write(f"memviz compare: cell {line}\n")
    sys.stdout.write(compare_summary_text(args.out) + "\n")
    sys.stdout.flush()
    _emit(result)


def cmd_study(args) -> None:
    from .study import run_study

    t0 = time.perf_counter()
    study = run_study(args.data_dir, args.out, scales=_split(args.scales, "scales"),
                      datasets=_dataset_names(args.datasets), seeds=_seeds(args.seeds) if args.seeds else None,
                      parts=_split(args.parts, "parts"), device=args.device, n_jobs=args.n_jobs,
                      markdown=args.markdown, progress=lambda m: sys.stderr.write(m + "\n"))
    md = args.markdown or str(Path(args.out) / "study.md")
    _emit({"out": str(args.out), "markdown": md, "scales": [k for k in study if k not in ("floors", "seconds")],
           "seconds": round(time.perf_counter() - t0, 1)})


# ------------------------------------------------------------------ parser
class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _Help(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help unless it has none or says it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" not in text and action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
            text += " (default: %(default)s)"
        return text


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memviz", description="Which training rows does a tabular generator copy?",
                formatter_class=_Help)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name, help_):
        return sub.add_parser(name, help=help_, description=help_, formatter_class=_Help)

    def common(sp, train=True):
        if train:
            sp.add_argument("--train", required=True, help="training table (CSV or Parquet)")
            sp.add_argument("--schema", help="schema file in the meta.json format (default: inferred from the table)")
        sp.add_argument("--device", default="auto", choices=DEVICES,
                        help="where tensors live: auto = a CUDA GPU when one is visible, else the CPU")
        sp.add_argument("--quiet", action="store_true", help="no progress bar on stderr")

    def raw_csv(sp):
        sp.add_argument("--raw-csv", action="store_true",
                        help="write text cells as they are; by default a cell or header starting with =, +, -, @, "
                             "a tab or a carriage return gets a leading ' so that a spreadsheet shows it as text "
                             "instead of running it as a formula (numbers stay numbers)")

    def distance(sp):
        sp.add_argument("--distance", default=_WARMUP.distance, choices=DISTANCES,
                        help="paper = the papers' per-row min-max scaled distance; standardized = numerical "
                             "columns divided by their training range")

    sp = command("memorize", "which synthetic rows copy a training row (r = d1/d2 < 1/3)")
    common(sp)
    sp.add_argument("--synthetic", required=True, help="generated table, same columns as the training table")
    distance(sp)
    sp.add_argument("--out", required=True, help="CSV written with one row per synthetic row (nn1, nn2, d1, d2, "
                                                 "ratio, memorized, then how close it is to its nn1: exact, "
                                                 "near_exact, zero_by_scaling, max_gap in IQRs)")
    sp.add_argument("--holdout", help="real rows the model never trained on (e.g. the test split), same columns: "
                                      "adds floor, floor_ci, excess, excess_ci and n_holdout to the JSON line "
                                      "(default: none, no floor)")
    sp.add_argument("--rows-out", help="CSV of one row per training row with --holdout: row_id, copies, "
                                       "holdout_hits, expected, excess, p_value, q_value, over_copied "
                                       "(default: none)")
    raw_csv(sp)
    sp.set_defaults(func=cmd_memorize)

    sp = command("warmup", "train TabDDPM and track memorization per training row")
    common(sp)
    sp.add_argument("--out", required=True, help="run directory to create (or to continue with --resume)")
    sp.add_argument("--holdout", help="real rows the model never trains on (e.g. the test split), same columns: "
                                      "the floor every check is compared with (default: none, no floor)")
    sp.add_argument("--preset", default=_WARMUP.preset, choices=list(PRESETS),
                    help="TabDDPM size: cpu-quick = small network, 50 diffusion steps; paper = the reference "
                         "network (needs a GPU)")
    sp.add_argument("--epochs", type=int, help="training epochs (default: the preset's)")
    sp.add_argument("--check-every", type=int,
                    help=f"epochs between memorization checks (default: epochs / {DEFAULT_CHECKS}, about "
                         f"{DEFAULT_CHECKS} checks)")
    sp.add_argument("--n-samples", type=int, help="generated rows per check (default: as many as training rows)")
    sp.add_argument("--seed", type=int, default=_WARMUP.seed, help="seeds the model, training and every check")
    distance(sp)
    sp.add_argument("--top-frac", type=float, default=_WARMUP.top_frac,
                    help="share of training rows in the Top group (most copies over the warm-up)")
    sp.add_argument("--no-samples", action="store_true",
                    help="do not store the generated rows (the leak explorer then has nothing to show)")
    sp.add_argument("--model-params", help="JSON object of TabDDPM overrides, e.g. '{\"layers\": [256, 256]}' "
                                           "(default: none)")
    sp.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    sp.set_defaults(func=cmd_warmup)

    sp = command("inspect", "summaries of a warm-up run")
    sp.add_argument("run_dir", help="a run directory made by memviz warmup")
    sp.add_argument("--json", action="store_true", help="print only the JSON line, not the text summary")
    sp.set_defaults(func=cmd_inspect)

    def dynamiccut(sp):
        sp.add_argument("--p", type=float, default=DEFAULT_P, help="share of training rows DynamicCut removes")
        sp.add_argument("--k", type=int, default=DEFAULT_K,
                        help="DynamicCut scores a row by the mean of its k largest per-check Mem-AUC values")
        sp.add_argument("--T", type=int, default=None,
                        help="last warm-up epoch scored (default: the first half of the checks)")

    sp = command("prune", "DynamicCut: drop the top-p rows of a warm-up's ranking")
    sp.add_argument("run_dir", help="a finished run directory made by memviz warmup")
    dynamiccut(sp)
    sp.add_argument("--out", required=True, help="pruned training table (CSV)")
    sp.add_argument("--removed-out", help="CSV of the whole ranking: row_id, score, rank, removed (default: none)")
    sp.add_argument("--keep-row-id", action="store_true", help="write the row_id column into --out too")
    raw_csv(sp)
    sp.set_defaults(func=cmd_prune)

    from .compare.methods import METHODS
    sp = command("compare", "mitigation methods x generators x seeds, side by side")
    common(sp)
    sp.add_argument("--test", required=True, help="real test split: MLE and DCR are measured on it, and it is the "
                                                  "hold-out of the floor every cell is compared with")
    sp.add_argument("--run", help="finished warm-up run on the same training table giving the DynamicCut ranking, "
                                  "with a floor for dynamiccut_excess (default: a warm-up is run into OUT/warmup "
                                  "when a method needs one, with the test split as its hold-out)")
    sp.add_argument("--methods", default=",".join(_COMPARE.methods),
                    help=f"comma-separated mitigation methods, from {', '.join(METHODS)} "
                         f"(default: {','.join(_COMPARE.methods)})")
    sp.add_argument("--models", default=",".join(_COMPARE.models), help="comma-separated generators")
    sp.add_argument("--seeds", default=",".join(map(str, _COMPARE.seeds)),
                    help="comma-separated seeds; each seeds the mitigation, the model and the evaluation")
    dynamiccut(sp)
    sp.add_argument("--epochs", type=int, help="training epochs of every model (default: each model's CPU preset)")
    sp.add_argument("--n-jobs", type=int, default=_COMPARE.n_jobs,
                    help="cells run in parallel (processes, one torch thread each)")
    sp.add_argument("--threads", type=int, default=None,
                    help="torch threads per cell (default: 1; parallelism comes from --n-jobs)")
    sp.add_argument("--ratio", type=float, default=_COMPARE.ratio,
                    help="rows added by TabCutMix / SMOTE, as a share of the training rows")
    sp.add_argument("--distance", default=_COMPARE.distance, choices=DISTANCES,
                    help="memorization distance of every figure, the floor's included: paper = the papers' per-row "
                         "min-max scaled distance; standardized = numerical columns divided by their training range")
    sp.add_argument("--model-params", help="JSON {model: {param: value}}, e.g. '{\"tabddpm\": {\"epochs\": 100}}' "
                                           "(default: none)")
    sp.add_argument("--backend", default=_COMPARE.backend, choices=["local", "dask"],
                    help="local = joblib processes on this machine; dask = dask.distributed")
    sp.add_argument("--scheduler", help="dask scheduler address, with --backend dask (default: a local cluster)")
    sp.add_argument("--out", required=True, help="results directory (a rerun skips its finished cells)")
    sp.set_defaults(func=cmd_compare)

    from .study.run import DATASETS, PARTS
    from .study.scales import SCALES
    sp = command("study", "the paper's findings on adult, default and shoppers, against the floor and a null")
    sp.add_argument("--data-dir", required=True, help="folder holding one sub-folder per dataset "
                                                      "(train.csv, test.csv, meta.json)")
    sp.add_argument("--out", required=True, help="output folder (a rerun reuses finished runs and cells)")
    sp.add_argument("--scales", default="cpu,regime",
                    help=f"comma-separated scales ({', '.join(SCALES)}): tiny = seconds (tests); cpu = 3,000 "
                         "rows, 200 epochs; regime = 250 rows, 4,000 epochs; paper = full, GPU")
    sp.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated dataset folders")
    sp.add_argument("--seeds", default=None, help="comma-separated seeds (default: the scale's)")
    sp.add_argument("--parts", default=",".join(PARTS),
                    help="comma-separated parts to run (the summaries and the document are always rebuilt)")
    sp.add_argument("--markdown", default=None, help="where the document goes (default: OUT/study.md)")
    sp.add_argument("--n-jobs", type=int, default=_COMPARE.n_jobs, help="runs and cells in parallel")
    sp.add_argument("--device", default="auto", choices=DEVICES,
                    help="where tensors live: auto = a CUDA GPU when one is visible, else the CPU")
    sp.set_defaults(func=cmd_study)
    return p


def _one_line_warnings(command: str):
    """A ``warnings.showwarning`` that prints ``memviz CMD: warning: MESSAGE`` on one line (no
    file, line number or source line; memviz's own warnings, e.g. a SchemaWarning, name their file)."""
    from .data import SchemaWarning

    def show(message, category, filename, lineno, file=None, line=None):
        what = "" if issubclass(category, SchemaWarning) else f"{category.__name__}: "
        text = " ".join(str(message).split())
        try:
            (file or sys.stderr).write(f"memviz {command}: warning: {what}{text}\n")
        except OSError:
            pass
    return show


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.filterwarnings("default", category=UserWarning, module="memviz")
        warnings.showwarning = _one_line_warnings(args.command)
        return _run(args)


def _run(args) -> int:
    try:
        args.func(args)
    except MemvizError as exc:
        print(f"memviz {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output path that is a folder, read-only, a full disk...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"memviz {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"memviz {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
