"""Benchmark: the memorization check at Adult scale (run by hand; prints a table, asserts nothing).

Training rows: the full Adult training split (32,561 rows, ``--dataset``). Synthetic rows:
Adult test rows resampled with replacement (seeded) to ``--n-synthetic`` rows (default
32,561), 1 % of them replaced by planted near copies of training rows (``fnlwgt`` + 1)
and 0.5 % by exact copies. Measured in one run:

(a) the naive row-at-a-time float64 implementation (``tests/naive.py``: one synthetic row
    at a time, vectorized over the training rows only, as the papers' reference code) on
    ``--subsample`` synthetic rows -> ms per synthetic row (set-up timed apart);
(b) ``memviz.memorization.memorization`` on all synthetic rows, median of ``--repeats``
    runs -> seconds and ms per row; the speed-up per synthetic row (target >= 50x) and
    whether the full check takes <= 3 s;
(c) the machine's matmul throughput (float64 and float32 torch GEMM, GFLOP/s) and the
    fraction of it the engine achieves, counting its useful flops as
    2·M·N·(p+2) (distance GEMM) + 2·M·N·K (one-hot GEMM, K one-hot columns);
(d) peak RSS (ru_maxrss) of a subprocess that loads the data and runs the full check,
    against the 2 GB target;
(e) agreement of memviz with the naive results on the subsample (the exactness contract).

The machine may be shared: the load average is printed next to every timing.

Usage: python benchmarks/bench_memorize.py [--n-synthetic M] [--repeats R] [--device cpu|cuda|auto]
       [--subsample S] [--dataset FOLDER] [--seed SEED]
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
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from memviz.data import load_dataset  # noqa: E402
from memviz.memorization import THRESHOLD, memorization  # noqa: E402
from memviz.neighbors import NeighborEngine  # noqa: E402
from naive import naive_memorization  # noqa: E402

DEFAULT_DATASET = ROOT.parent / "shared" / "datasets" / "adult"


def load_avg() -> str:
    return "load avg {:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


def make_synthetic(train, test, n: int, seed: int) -> pd.DataFrame:
    """Test rows resampled with replacement, with planted near (fnlwgt + 1) and exact copies."""
    rng = np.random.default_rng(seed)
    syn = test.data.iloc[rng.integers(0, len(test), n)].reset_index(drop=True)
    n_near, n_exact = n // 100, n // 200
    slots = rng.choice(n, n_near + n_exact, replace=False)
    src = rng.integers(0, len(train), n_near + n_exact)
    planted = train.data.iloc[src].reset_index(drop=True)
    if "fnlwgt" in planted.columns:
        planted.loc[: n_near - 1, "fnlwgt"] = planted.loc[: n_near - 1, "fnlwgt"] + 1
    syn.iloc[slots] = planted.to_numpy()
    return syn.astype(train.data.dtypes.to_dict())


def rss_mib() -> float:
    """Current resident set size (Linux /proc), MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def gemm_gflops(dtype: torch.dtype, device: torch.device, size: int = 2048, reps: int = 5) -> float:
    a = torch.randn(size, size, dtype=dtype, device=device)
    b = torch.randn(size, size, dtype=dtype, device=device)
    torch.mm(a, b)  # warm-up
    times = []
    for _ in range(reps):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.mm(a, b)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return 2 * size**3 / float(np.median(times)) / 1e9


def child_peak_rss(args) -> dict:
    """Run the full check in a fresh interpreter; return its peak RSS and baseline."""
    cmd = [sys.executable, __file__, "--child", "--n-synthetic", str(args.n_synthetic), "--seed", str(args.seed),
           "--device", args.device, "--dataset", str(args.dataset)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def child_main(args) -> None:
    train, test = load_dataset(args.dataset)
    syn = make_synthetic(train, test, args.n_synthetic, args.seed)
    base = rss_mib()
    t0 = time.perf_counter()
    res = memorization(train, syn, device=args.device)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"baseline_mib": base, "peak_mib": peak / 1024, "seconds": seconds,
                      "mem_ratio": res.mem_ratio}))


def agreement(res_sub, ref) -> dict:
    r, nr = res_sub.ratio, ref["ratio"]
    nan_ok = bool(np.array_equal(np.isnan(r), np.isnan(nr)))
    fin = ~np.isnan(nr)
    max_dr = float(np.max(np.abs(r[fin] - nr[fin]))) if fin.any() else 0.0
    with np.errstate(invalid="ignore"):
        clear = ~(np.abs(nr - THRESHOLD) <= 1e-5)
        flags_ok = bool(np.array_equal(res_sub.memorized[clear], (nr < THRESHOLD)[clear]))
    sep = (ref["d2"] - ref["d1"]) > 1e-6
    nn1_ok = bool(np.array_equal(res_sub.nn1_pos[sep], ref["nn1"][sep]))
    return {"nan_pattern": nan_ok, "flags": flags_ok, "nn1": nn1_ok, "max_abs_dr": max_dr,
            "all_ok": nan_ok and flags_ok and nn1_ok and max_dr <= 1e-5}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-synthetic", type=int, default=32561)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--subsample", type=int, default=150)
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-rss", action="store_true", help="skip the subprocess peak-RSS run")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_main(args)
        return

    print(f"machine: {os.cpu_count()} CPU cores, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{load_avg()} -- the machine is shared with other jobs, timings are noisy")
    train, test = load_dataset(args.dataset)
    syn = make_synthetic(train, test, args.n_synthetic, args.seed)
    schema = train.schema
    num, cat = list(schema.distance_numerical), list(schema.distance_categorical)
    N, M = len(train), len(syn)
    print(f"data: {N} training rows x {M} synthetic rows ({args.dataset.name}); "
          f"{len(num)} numerical + {len(cat)} categorical distance columns")

    # (a) naive, on a subsample
    rng = np.random.default_rng(args.seed + 1)
    sub = np.sort(rng.choice(M, min(args.subsample, M), replace=False))
    syn_sub = syn.iloc[sub].reset_index(drop=True)
    tr = train.data.reset_index(drop=True)
    t0 = time.perf_counter()
    naive_memorization(tr, syn_sub.iloc[:0], num, cat)
    t_setup = time.perf_counter() - t0
    la_naive = load_avg()
    t0, c0 = time.perf_counter(), time.process_time()
    ref = naive_memorization(tr, syn_sub, num, cat)
    t_naive, c_naive = time.perf_counter() - t0, time.process_time() - c0
    naive_ms = (t_naive - t_setup) / len(sub) * 1e3

    # (b) memviz, all rows
    times, cpu, res = [], [], None
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        res = memorization(train, syn, device=args.device)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    la_memviz = load_avg()
    med = float(np.median(times))
    memviz_ms = med / M * 1e3
    engine = NeighborEngine(device=args.device).fit(train)
    t0 = time.perf_counter()
    engine.kneighbors(syn, k=2)
    t_query = time.perf_counter() - t0

    # (c) throughput
    dev = engine.device_
    g64, g32 = gemm_gflops(torch.float64, dev), gemm_gflops(torch.float32, dev)
    p, K = engine.p_, engine.n_onehot_
    flops = 2.0 * M * N * (p + 2) + 2.0 * M * N * K
    achieved = flops / med / 1e9

    # (e) agreement on the subsample
    res_sub = memorization(train, syn_sub, device=args.device)
    agree = agreement(res_sub, ref)

    # (d) peak RSS in a subprocess
    rss = None if args.no_rss else child_peak_rss(args)

    line = "-" * 96
    print(line)
    print(f"(a) naive row-at-a-time  {len(sub)} rows: {t_naive:7.2f} s (set-up {t_setup:.2f} s) "
          f"-> {naive_ms:8.2f} ms/row (CPU time {c_naive:.2f} s)   [{la_naive}]")
    print(f"(b) memviz {args.device:>4}  {M} rows: median {med:6.2f} s of {args.repeats} "
          f"({', '.join(f'{t:.2f}' for t in times)}) -> {memviz_ms:8.4f} ms/row   [{la_memviz}]")
    print(f"    CPU time (all threads) per run: {', '.join(f'{c:.2f}' for c in cpu)} s")
    print(f"    of which kneighbors alone (fitted engine): {t_query:.2f} s; mem_ratio {res.mem_ratio:.4f}, "
          f"mem_auc {res.mem_auc:.4f}; rows recomputed over all training rows: "
          f"{res.extra.get('n_exhaustive', 0)} of {M}")
    print(f"    speed-up per synthetic row: {naive_ms / memviz_ms:8.1f}x   (target >= 50x: "
          f"{'met' if naive_ms / memviz_ms >= 50 else 'NOT met'})")
    print(f"    full check <= 3 s: {'yes' if med <= 3.0 else 'NO'} ({med:.2f} s; naive would take "
          f"~{naive_ms * M / 1e3 / 60:.1f} min for all {M} rows)")
    print(f"(c) GEMM throughput on {dev}: float64 {g64:8.1f} GFLOP/s, float32 {g32:8.1f} GFLOP/s   [{load_avg()}]")
    print(f"    engine useful flops 2MN(p+2) + 2MNK = {flops / 1e9:.1f} GFLOP (p={p}, K={K}) -> {achieved:.1f} GFLOP/s "
          f"= {achieved / g64:.1%} of float64 GEMM, {achieved / g32:.1%} of float32 GEMM")
    if rss is not None:
        print(f"(d) peak RSS of the full check (subprocess): {rss['peak_mib']:.0f} MiB (RSS before the check: "
              f"{rss['baseline_mib']:.0f} MiB; check took {rss['seconds']:.2f} s) -> "
              f"{'under' if rss['peak_mib'] < 2048 else 'OVER'} the 2 GB target")
    print(f"(e) agreement with naive on {len(sub)} rows: NaN pattern {agree['nan_pattern']}, memorized flags "
          f"{agree['flags']}, NN1 {agree['nn1']}, max |r - r_naive| {agree['max_abs_dr']:.2e} -> "
          f"{'OK' if agree['all_ok'] else 'MISMATCH'}")
    print(line)


if __name__ == "__main__":
    main()
