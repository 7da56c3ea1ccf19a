"""Benchmark: how the memorization check grows with the table (run by hand; prints a table).

Two tables, at each size n (n training rows × n synthetic rows, one subprocess per size so
that its peak RSS is its own):

* ``adult``: Adult-shaped, every column drawn independently from the Adult training split's
  own values (with replacement, seeded), 6 numerical + 9 categorical distance columns;
* ``wide``: the wide table of ``bench_memorize.py`` (40 numerical + 2 categorical columns).

The synthetic rows are fresh draws with 1 % near copies and 0.5 % exact copies of training
rows. Per size: wall and CPU seconds of fit + query (``memorization``), the path taken, the
peak RSS of the subprocess (ru_maxrss) beside the engine's memory estimate
(:mod:`memviz.engine.budget`), and the **dense-pass bound**: the arithmetic of one dense pass,
2·n²·(p + K) flops (K one-hot categories), at the float64 matrix-product rate measured in
this run on the same threads. "peak" is the subprocess's peak RSS during the check (its peak
RSS counter reset just before; Python, torch and the tables included), "check" what the check
added to the RSS before it, "est" the guard's
estimate of the check. Then per table the fitted exponent b of seconds ~ a·n^b
(least squares on the logs).

Usage: python benchmarks/bench_scale.py [--tables adult,wide] [--sizes 10000,32561,...]
       [--wide-sizes ...] [--threads 2] [--timeout S]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DATASET = next((d for d in (ROOT.parent / "shared" / "datasets" / "adult",
                            ROOT.parent.parent / "shared" / "datasets" / "adult") if d.exists()),
               ROOT.parent / "shared" / "datasets" / "adult")


def load_avg() -> str:
    return "load {:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())


def adult_shaped(n: int, seed: int):
    """(train Table, synthetic frame): each column drawn independently from Adult's values."""
    from memviz.tables.data import Table, load_dataset

    base, _ = load_dataset(DATASET)
    rng = np.random.default_rng(seed)

    def draw(m):
        return pd.DataFrame({c: base.data[c].to_numpy()[rng.integers(0, len(base), m)] for c in base.data.columns})

    df = draw(n)
    df.index = pd.Index(np.arange(n), name="row_id")
    df = df.astype(base.data.dtypes.to_dict())
    syn = draw(n)
    n_near, n_exact = n // 100, n // 200
    slots = rng.choice(n, n_near + n_exact, replace=False)
    planted = df.iloc[rng.integers(0, n, n_near + n_exact)].reset_index(drop=True)
    planted.loc[: n_near - 1, "fnlwgt"] = planted.loc[: n_near - 1, "fnlwgt"] + 1
    syn.iloc[slots] = planted.to_numpy()
    return Table(df, base.schema, f"adult-shaped {n}"), syn.astype(df.dtypes.to_dict())


def rss(field: str) -> int:
    """A /proc/self/status figure (VmRSS now, VmHWM the peak) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> bool:
    """Reset the peak RSS (VmHWM) to the current RSS (Linux: clear_refs 5), so that the peak
    read after the check is the check's own; False where the kernel refuses."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def child(table: str, n: int, threads: int) -> None:
    import torch

    from memviz.engine import budget
    from memviz.measure.memorization import memorization
    from memviz.engine.neighbors import NeighborEngine

    torch.set_num_threads(threads)
    if table == "adult":
        train, syn = adult_shaped(n, 0)
    else:
        from bench_memorize import wide_data
        train, syn = wide_data(n, n, 0)
    base_rss = rss("VmRSS")
    reset = reset_peak()
    t0, c0 = time.perf_counter(), time.process_time()
    eng = NeighborEngine(device="cpu").fit(train)
    fit_s = time.perf_counter() - t0
    res = memorization(train, syn, engine=eng)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = rss("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    s = train.schema
    p, q = len(s.distance_numerical), len(s.distance_categorical)
    est = budget.fit_bytes(n, p, q) + budget.query_bytes(n, n, p, q, 2, eng.n_jobs_(), eng.algorithm_,
                                                         eng.chunk_elements_)
    print(json.dumps({"n": n, "wall": wall, "cpu": cpu, "fit": fit_s, "peak": peak, "before": base_rss,
                      "estimate": est, "path": eng.algorithm_, "p": p, "q": q,
                      "K": int(eng.encoder_.n_categories.sum()), "mem_ratio": res.mem_ratio,
                      "n_exhaustive": res.extra["n_exhaustive"], "load": load_avg()}))


def gemm_rate(threads: int) -> float:
    """float64 matrix-product flops per second on ``threads`` threads (a 2048 × 64 × 8192 product)."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(2048, 64, dtype=torch.float64), torch.randn(64, 8192, dtype=torch.float64)
    torch.mm(a, b)
    t0, reps = time.perf_counter(), 0
    while time.perf_counter() - t0 < 2.0:
        torch.mm(a, b)
        reps += 1
    return reps * 2 * 2048 * 64 * 8192 / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="adult,wide")
    ap.add_argument("--sizes", default="10000,32561,100000,300000,1000000", help="sizes of the adult-shaped table")
    ap.add_argument("--wide-sizes", default="10000,32561,100000", help="sizes of the wide table")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per size before it is given up")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.threads)
        return
    rate = gemm_rate(args.threads)
    print(f"machine: {os.cpu_count()} cores, {args.threads} threads; float64 matrix product {rate / 1e9:.1f} GFLOP/s "
          f"[{load_avg()}] -- shared machine: read ratios, not absolute times", flush=True)
    for table in args.tables.split(","):
        sizes = [int(x) for x in (args.sizes if table == "adult" else args.wide_sizes).split(",")]
        print(f"\n{table}: n training x n synthetic rows")
        print(f"{'n':>9} {'path':>7} {'wall s':>8} {'CPU s':>8} {'fit s':>6} {'peak MiB':>9} {'check':>6} {'est':>6} "
              f"{'bound s':>8} {'wall/bound':>10}  load", flush=True)
        done = []
        for n in sizes:
            cmd = [sys.executable, __file__, "--child", table, str(n), "--threads", str(args.threads)]
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)})
            except subprocess.TimeoutExpired:
                print(f"{n:>9} gave up after {args.timeout:.0f} s", flush=True)
                break
            if out.returncode:
                print(f"{n:>9} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
                break
            r = json.loads(out.stdout.strip().splitlines()[-1])
            bound = 2.0 * n * n * (r["p"] + r["K"]) / rate
            done.append((n, r["wall"]))
            print(f"{n:>9} {r['path']:>7} {r['wall']:8.2f} {r['cpu']:8.2f} {r['fit']:6.2f} {r['peak'] / 2**20:9.0f} "
                  f"{(r['peak'] - r['before']) / 2**20:6.0f} {r['estimate'] / 2**20:6.0f} {bound:8.2f} {r['wall'] / bound:10.1f}  {r['load']}"
                  f"  (mem {r['mem_ratio']:.4f}, dense rows {r['n_exhaustive']})", flush=True)
        if len(done) >= 2:
            x, y = np.log([d[0] for d in done]), np.log([d[1] for d in done])
            b, a = np.polyfit(x, y, 1)
            print(f"fitted exponent: seconds ~ n^{b:.2f} (a dense pass grows as n^2)")


if __name__ == "__main__":
    main()
