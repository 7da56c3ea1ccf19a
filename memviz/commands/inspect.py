"""memviz inspect: a warm-up run's summaries, its floor and the excess per check."""
from __future__ import annotations

from memviz.commands.common import add_quiet, emit
from memviz.measure.floor import excess
from memviz.verdict.words import excess_sentence
from memviz.warmup import checkpoints
from memviz.warmup.frontier import METRICS, StopRule, recommend
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore

RULE = StopRule()


def add_stop_rule(sp) -> None:
    """The recommended check's rule (:mod:`memviz.warmup.frontier`), for inspect and sample."""
    sp.add_argument("--tolerance", type=float, default=RULE.tolerance,
                    help="recommend among the checks whose quality is within this of the best (0.02 = 2 points)")
    sp.add_argument("--metric", default=RULE.metric, choices=METRICS,
                    help="the quality the tolerance applies to: quality = (Shape + Trend) / 2")
    sp.add_argument("--max-excess", type=float, default=RULE.max_excess,
                    help="a check passes when the lower end of its excess interval is at most this (0: not "
                         "significantly above the floor); the earliest passing check is recommended")


def recommendation(res, args) -> dict:
    """``recommended_check``, ``recommended_epoch``, ``recommendation`` (the reason), the rule and
    the kept checkpoints of a loaded warm-up."""
    kept = checkpoints.kept(res.run_dir)
    rule = StopRule(args.tolerance, args.metric, args.max_excess)
    rec = recommend(res.per_check, rule, available=kept or None)
    return {**rec.to_dict(), "kept_checkpoints": kept}


def register(sub, command) -> None:
    sp = command("inspect")
    sp.add_argument("run_dir", help="a run directory made by memviz warmup")
    sp.add_argument("--json", action="store_true", help="print only the JSON line, not the text summary")
    add_quiet(sp, "print only the JSON line, as --json")
    add_stop_rule(sp)
    sp.set_defaults(func=run)


def run(args) -> None:
    res = load_warmup(args.run_dir)
    m = RunStore(args.run_dir).read()
    out = {"run_dir": str(args.run_dir), "status": res.status, "checks": int(len(res.per_check)),
           "final_mem_ratio": res.final_mem_ratio, "config": dict(m.config), "device": m.device,
           "timings": dict(m.timings), "summary": res.summary(),
           "per_check": res.per_check.to_dict(orient="list"), "floor": None, "final_excess": None}
    if res.floor is not None:  # the per-check excess is in per_check (excess, excess_low, excess_high)
        f = res.floor
        out["floor"] = {"floor": f.floor, "floor_ci": [f.low, f.high], "n_holdout": f.n_holdout,
                        "n_flagged": f.n_flagged, "distance": f.distance, "holdout_source": f.holdout_source,
                        "holdout_identical_share": f.n_identical / f.n_holdout}
        last = res.per_check.iloc[-1]
        ex = excess(float(last["mem_ratio"]), int(last["n_synthetic"]), f)
        out["final_excess"] = {"excess": ex.excess, "excess_ci": [ex.low, ex.high], "sentence": excess_sentence(ex)}
    out.update(recommendation(res, args))
    if not (args.json or args.quiet):
        print(format_run_summary(out))
    emit(out)


def format_run_summary(o: dict) -> str:
    s = o["summary"]
    pc = o["per_check"]
    lines = [f"run {o['run_dir']}  status {o['status']}  checks {o['checks']}  device {o['device']}",
             f"final mem ratio {o['final_mem_ratio']:.2%}"]
    if "shape" in pc:
        lines.append("Shape / Trend per check: " + ", ".join(
            f"e{e}:{a:.3f}/{b:.3f}" for e, a, b in zip(pc["epoch"], pc["shape"], pc["trend"])))
    lines.append(f"when to stop: {o['recommendation']}")
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
                     f"early per-row Mem-AUC {t['early_mem_auc']:.4f}")
    lines.append(f"  (per-row Mem-AUC: a row's sum of 1 - r over the generated rows nearest it at a check, 0 and up "
                 f"to the generated rows per check, not 0 to 1 as the run's Mem-AUC; early: its mean over the first "
                 f"{s['early_checks']} check{'s' * (s['early_checks'] != 1)}, averaged over the group's rows)")
    lines.append(f"Mann-Whitney p: first epoch {s['p_first_epoch']}, forgetting {s['p_forgetting']}, "
                 f"early per-row Mem-AUC {s['p_early_mem_auc']} (the paper's tests: Top is chosen from the same "
                 "counts)")
    return "\n".join(lines)
