"""Command line: the same pipeline as the dashboard, headless.

Every command prints, as its last stdout line, one JSON object (scripts rely on it).
A user mistake prints one line on stderr and exits with code 2.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from .errors import MemvizError


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


def _emit(obj: dict) -> None:
    """The last stdout line: strict JSON (NaN and infinities become null)."""
    from .store import _jsonable
    print(json.dumps(_jsonable(obj), default=str, allow_nan=False), flush=True)


def _load_train(args):
    from .data import load_table
    return load_table(args.train, args.schema)


# --------------------------------------------------------------- commands
def cmd_memorize(args) -> None:
    from .data import load_companion
    from .memorization import memorization
    from .store import atomic_write_csv

    t0 = time.perf_counter()
    train = _load_train(args)
    syn = load_companion(train, args.synthetic, role="synthetic")
    res = memorization(train, syn, distance=args.distance, device=args.device,
                       progress=Bar("memorize") if not args.quiet else None)
    out = res.to_frame(positions=True)
    atomic_write_csv(Path(args.out), out)
    _emit({"mem_ratio": res.mem_ratio, "mem_auc": res.mem_auc, "mem_auc_trapezoid": res.mem_auc_trapezoid,
           "n_train": res.n_train, "n_synthetic": res.n_synthetic, "distance": res.distance,
           "out": str(args.out), "seconds": round(time.perf_counter() - t0, 3)})


def cmd_warmup(args) -> None:
    from .warmup import WarmupConfig, run_warmup

    t0 = time.perf_counter()
    train = _load_train(args)
    try:
        overrides = json.loads(args.model_params) if args.model_params else {}
    except json.JSONDecodeError as exc:
        raise MemvizError(f"--model-params: not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(overrides, dict):
        raise MemvizError("--model-params: expected a JSON object, e.g. '{\"layers\": [256, 256]}'")
    cfg = WarmupConfig(preset=args.preset, epochs=args.epochs, check_every=args.check_every,
                       n_samples=args.n_samples, seed=args.seed, device=args.device, distance=args.distance,
                       top_frac=args.top_frac, keep_samples=not args.no_samples, model_params=overrides)
    bar = Bar("warm-up")
    state = {"mem": None}

    def progress(ev):
        if args.quiet:
            return
        if ev["stage"] == "train":
            mem = f" mem {state['mem']:.3f}" if state["mem"] is not None else ""
            bar(ev["epoch"], ev["epochs"], f"loss {ev['loss']:.3f}{mem}" if ev.get("loss") is not None else mem)
        elif ev["stage"] == "check":
            state["mem"] = ev["mem_ratio"]

    res = run_warmup(train, cfg, args.out, resume=args.resume, progress=progress)
    _emit({"run_dir": str(args.out), "status": res.status, "checks": int(res.per_check.shape[0]),
           "final_mem_ratio": res.final_mem_ratio, "epochs": res.config.epochs,
           "seconds": round(time.perf_counter() - t0, 3)})


def cmd_inspect(args) -> None:
    from .store import RunStore
    from .warmup import load_warmup

    res = load_warmup(args.run_dir)
    summary = res.summary()
    m = RunStore(args.run_dir).manifest()
    out = {"run_dir": str(args.run_dir), "status": res.status, "checks": int(len(res.per_check)),
           "final_mem_ratio": res.final_mem_ratio, "config": m.get("config"), "device": m.get("device"),
           "timings": m.get("timings"), "summary": summary,
           "per_check": res.per_check.to_dict(orient="list")}
    if not args.json:
        print(_format_summary(out))
    _emit(out)


def _format_summary(o: dict) -> str:
    s = o["summary"]
    pc = o["per_check"]
    lines = [f"run {o['run_dir']}  status {o['status']}  checks {o['checks']}  device {o['device']}",
             f"final mem ratio {o['final_mem_ratio']:.2%}",
             "mem ratio per check: " + ", ".join(f"e{e}:{r:.1%}" for e, r in zip(pc["epoch"], pc["mem_ratio"])),
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
                 f"early Mem-AUC {s['p_early_mem_auc']}")
    return "\n".join(lines)


def cmd_prune(args) -> None:
    from .dynamiccut import dynamiccut_selection
    from .store import RunStore, atomic_write_csv, table_to_frame
    from .warmup import load_warmup

    res = load_warmup(args.run_dir)
    sel = dynamiccut_selection(res.dynamics, p=args.p, k=args.k, T=args.T)
    train = RunStore(args.run_dir).train()
    pruned = train.drop(sel.removed)
    frame = table_to_frame(pruned) if args.keep_row_id else pruned.data.reset_index(drop=True)
    atomic_write_csv(Path(args.out), frame)
    if args.removed_out:
        atomic_write_csv(Path(args.removed_out), sel.to_frame())
    _emit({"removed": int(len(sel.removed)), "kept": int(len(pruned)), "p": sel.p, "k": sel.k, "T": sel.T,
           "out": str(args.out), "removed_row_ids": [int(x) for x in sel.removed[:20]]})


def cmd_compare(args) -> None:
    from .experiment import cli_compare
    _emit(cli_compare(args))


def cmd_study(args) -> None:
    from .study import cli_study
    _emit(cli_study(args))


# ------------------------------------------------------------------ parser
class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memviz", description="Which training rows does a tabular generator copy?")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp, train=True):
        if train:
            sp.add_argument("--train", required=True, help="training table (CSV or Parquet)")
            sp.add_argument("--schema", help="schema file in the meta.json format (default: inferred)")
        sp.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
        sp.add_argument("--quiet", action="store_true", help="no progress bar")

    sp = sub.add_parser("memorize", help="which synthetic rows copy a training row")
    common(sp)
    sp.add_argument("--synthetic", required=True)
    sp.add_argument("--distance", default="paper", choices=["paper", "standardized"])
    sp.add_argument("--out", required=True, help="CSV: one row per synthetic row")
    sp.set_defaults(func=cmd_memorize)

    sp = sub.add_parser("warmup", help="train TabDDPM and track memorization per row")
    common(sp)
    sp.add_argument("--out", required=True, help="run directory")
    sp.add_argument("--preset", default="cpu-quick", choices=["cpu-quick", "paper"])
    sp.add_argument("--epochs", type=int)
    sp.add_argument("--check-every", type=int)
    sp.add_argument("--n-samples", type=int)
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--distance", default="paper", choices=["paper", "standardized"])
    sp.add_argument("--top-frac", type=float, default=0.10)
    sp.add_argument("--no-samples", action="store_true", help="do not store generated rows")
    sp.add_argument("--model-params", help="JSON object of TabDDPM overrides")
    sp.add_argument("--resume", action="store_true", help="continue the run in --out")
    sp.set_defaults(func=cmd_warmup)

    sp = sub.add_parser("inspect", help="summaries of a warm-up run")
    sp.add_argument("run_dir")
    sp.add_argument("--json", action="store_true", help="only the JSON line")
    sp.set_defaults(func=cmd_inspect)

    sp = sub.add_parser("prune", help="DynamicCut: drop the top-p rows of a warm-up's ranking")
    sp.add_argument("run_dir")
    sp.add_argument("--p", type=float, default=0.10)
    sp.add_argument("--k", type=int, default=3)
    sp.add_argument("--T", type=int, default=None, help="last epoch scored (default: half the warm-up)")
    sp.add_argument("--out", required=True, help="pruned training table (CSV)")
    sp.add_argument("--removed-out", help="CSV of the ranking (row_id, score, rank, removed)")
    sp.add_argument("--keep-row-id", action="store_true", help="write the row_id column too")
    sp.set_defaults(func=cmd_prune)

    sp = sub.add_parser("compare", help="mitigations x models x seeds, side by side")
    common(sp)
    sp.add_argument("--test", required=True)
    sp.add_argument("--run", help="warm-up run directory giving the DynamicCut ranking")
    sp.add_argument("--methods", default="baseline,dynamiccut,dynamiccutmix,tabcutmix,tabcutmixplus,smote,random")
    sp.add_argument("--models", default="tabddpm,ctgan,tvae")
    sp.add_argument("--seeds", default="0")
    sp.add_argument("--p", type=float, default=0.10)
    sp.add_argument("--k", type=int, default=3)
    sp.add_argument("--T", type=int, default=None)
    sp.add_argument("--epochs", type=int, help="training epochs of every model (default: CPU presets)")
    sp.add_argument("--n-jobs", type=int, default=2, help="cells run in parallel (processes; 1 torch thread each)")
    sp.add_argument("--threads", type=int, default=None, help="torch threads per cell (default: cores / n-jobs)")
    sp.add_argument("--ratio", type=float, default=0.3, help="augmentation size of TabCutMix/SMOTE (share of rows)")
    sp.add_argument("--model-params", help="JSON {model: {param: value}}, e.g. '{\"tabddpm\": {\"epochs\": 100}}'")
    sp.add_argument("--backend", default="local", choices=["local", "dask"])
    sp.add_argument("--scheduler", help="Dask scheduler address (with --backend dask)")
    sp.add_argument("--out", required=True, help="results directory")
    sp.set_defaults(func=cmd_compare)

    sp = sub.add_parser("study", help="the paper's findings on adult, default and shoppers")
    sp.add_argument("--data-dir", required=True)
    sp.add_argument("--out", required=True)
    sp.add_argument("--scale", default="cpu", choices=["cpu", "paper", "tiny"])
    sp.add_argument("--datasets", default="adult,default,shoppers")
    sp.add_argument("--seeds", default=None, help="comma-separated seeds (default: the scale's)")
    sp.add_argument("--n-jobs", type=int, default=2, help="comparison cells run in parallel")
    sp.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    sp.set_defaults(func=cmd_study)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.filterwarnings("default", category=UserWarning, module="memviz")
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
