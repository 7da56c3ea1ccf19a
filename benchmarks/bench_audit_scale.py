"""Benchmark: the whole audit (``memviz.audit``, its defaults) as the tables grow to a million rows (issue 40,
item 3): wall time, the share of each step, and the peak memory beside the guard's estimate.

Adult-shaped tables (``bench_scale.adult_shaped``: every column drawn independently from the Adult training
split's values, 1 % near and 0.5 % exact copies planted in the synthetic rows): N training x N synthetic rows and
a hold-out of N / 10 fresh rows, one subprocess per size so that its peak RSS is its own. The steps are timed by
wrapping the functions the audit calls (in this process only): the ratio test's pass (``memorization``), the
closeness tests' searches (``closeness_tests``), the floor (``holdout_floor``), Shape (``evaluate.synthetic.shape``), the
other tests (``audit_evidence``), the DCR share (``dcr_share``); "rest" is what the audit does around them
(reading the tables, the per-row test, the verdict). "est" is :func:`memviz.engine.budget.audit_bytes` as the
audit's own guard reads it; "peak" the subprocess's peak RSS less its RSS before the audit.

Measured on the shared 2-core machine, one run (load 3-5; the study beside it), wall / CPU seconds, peak RSS
against the guard's estimate:

* 100,000 x 100,000 x 10,000: 8.3 s / 8.0 s, 781 MiB (estimate 1,571);
* 300,000 x 300,000 x 30,000: 29.1 s / 24.9 s, 1,594 MiB (3,814);
* 1,000,000 x 1,000,000 x 100,000: 122.9 s / 100.6 s, 4,332 MiB (8,002); its shares: the ratio pass 9 %,
  closeness 11 %, floor 3 %, Shape 8 %, the other tests 36 %, the DCR share 16 %, the rest 17 %.

Usage: python benchmarks/bench_audit_scale.py [--sizes 100000,300000,1000000] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

STEPS = (("memviz.measure.memorization", "memorization", "ratio pass"),
         ("memviz.verdict.build", "closeness_tests", "closeness"),
         ("memviz.measure.floor", "holdout_floor", "floor"),
         ("memviz.evaluate.synthetic", "shape", "Shape"),
         ("memviz.evidence.suite", "audit_evidence", "other tests"),
         ("memviz.evaluate.synthetic", "dcr_share", "DCR share"))


def rss(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def child(n: int, threads: int) -> dict:
    import importlib
    import warnings

    import torch

    warnings.simplefilter("ignore")
    torch.set_num_threads(threads)
    from bench_scale import adult_shaped, reset_peak

    import memviz
    from memviz.engine import budget
    from memviz.tables.data import Table

    train, syn = adult_shaped(n, 0)
    hold_t, _ = adult_shaped(n // 10, 1)
    hold = Table(hold_t.data.reset_index(drop=True), train.schema, "hold-out")
    spent: dict[str, float] = {}
    depth = [0]                                   # a step inside another (the floor's own pass) is the outer's
    for mod, name, label in STEPS:
        m = importlib.import_module(mod)
        real = getattr(m, name)

        def timed(*a, _real=real, _label=label, **k):
            depth[0] += 1
            t0 = time.perf_counter()
            try:
                return _real(*a, **k)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - t0
        setattr(m, name, timed)
    need = budget.audit_bytes(len(train), len(syn), len(hold), len(train.schema.distance_numerical),
                              len(train.schema.distance_categorical), threads=threads)
    est = need.here
    reset_peak()
    before = rss("VmRSS")
    t0 = time.perf_counter()
    c0 = time.process_time()
    a = memviz.audit(train.data.reset_index(drop=True), syn, hold.data, schema=train.schema, device="cpu")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"n": n, "wall": wall, "cpu": cpu, "steps": spent, "peak": rss("VmHWM") - before,
            "est": int(est), "verdict": a.verdict.code}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100000,300000,1000000")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), int(args.child[1]))))
        return
    print(f"the audit of Adult-shaped tables, N x N x N/10 rows, {args.threads} threads "
          f"(load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    labels = [s[2] for s in STEPS]
    print(f"{'N':>9} {'wall s':>7} {'CPU s':>7}  " + " ".join(f"{x:>11}" for x in labels)
          + f" {'rest':>6} {'peak MiB':>9} {'est MiB':>8}  verdict")
    for n in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--child", str(n), str(args.threads)], capture_output=True,
                             text=True, cwd=str(ROOT))
        if out.returncode:
            print(f"{n:>9} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        steps = r["steps"]
        shares = " ".join(f"{100 * steps.get(x, 0.0) / r['wall']:>10.0f}%" for x in labels)
        rest = r["wall"] - sum(steps.get(x, 0.0) for x in labels)
        print(f"{n:>9} {r['wall']:>7.1f} {r['cpu']:>7.1f}  {shares} {100 * max(rest, 0) / r['wall']:>5.0f}% "
              f"{r['peak'] / 2**20:>9.0f} {r['est'] / 2**20:>8.0f}  {r['verdict']} (load {os.getloadavg()[0]:.1f})",
              flush=True)


if __name__ == "__main__":
    main()
