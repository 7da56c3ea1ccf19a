"""Benchmark and check on a CUDA GPU (run by hand on a GPU machine; prints a table).

Exits 1 when an exactness check fails, 2 when no CUDA GPU is visible. Measured in one run:

(a) the memorization engine on CUDA against the same engine on this machine's CPU:
    full Adult training split (32,561 rows) x ``--n-synthetic`` synthetic rows (Adult
    test rows resampled, 1 % planted near copies and 0.5 % exact copies, as in
    ``bench_memorize.py``). Both must give the same NaN pattern, the same copy flags,
    the same NN1 wherever d1 and d2 differ by more than 1e-6, and |Δr| <= 1e-9.
    Times: median of ``--repeats`` full checks on each device -> the GPU speed-up.
(b) a warm-up on CUDA with the ``paper`` TabDDPM network (MLP 1024-2048-2048-1024,
    T = 1000 diffusion steps, batch 4096) shortened to ``--epochs`` epochs with a check
    every ``--check-every`` epochs, each check sampling as many rows as the training
    table: training rows/s, sampling and memorization seconds per check, peak GPU
    memory; once in float32 and once with bfloat16 autocast (``amp=True``).

(c) the whole audit (``memviz.audit``, its defaults: engine, floor, closeness tests, the other tests) on
    CUDA against the CPU, the training split x the synthetic rows x the test split as the hold-out: wall
    seconds on each, and the figures that must agree (the verdict's code, the mem ratio and the floor, the
    too-close and identical shares, the named rows); exit 1 when they do not.

Usage: python benchmarks/bench_gpu.py [--dataset FOLDER] [--n-synthetic M] [--repeats R]
       [--epochs E] [--check-every C] [--skip-warmup] [--skip-audit] [--device cpu]

``--device cpu`` is a dry run of this script on a machine without a GPU (CPU against CPU,
e.g. ``--dataset sample_data --epochs 1 --n-timesteps 5``); its figures mean nothing.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_memorize import DEFAULT_DATASET, make_synthetic  # noqa: E402

from memviz.measure.memorization import memorization  # noqa: E402
from memviz.engine.neighbors import NeighborEngine  # noqa: E402
from memviz.tables.data import load_dataset  # noqa: E402
from memviz.warmup.run import WarmupConfig, run_warmup  # noqa: E402


def timed_checks(train, engine, syn, repeats: int):
    """Median wall seconds of ``repeats`` full checks (after one untimed run) and the last result."""
    res = memorization(train, syn, engine=engine)
    times = []
    for _ in range(repeats):
        if engine.device_.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        res = memorization(train, syn, engine=engine)
        if engine.device_.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), res


def compare(cpu, gpu) -> dict:
    nan_ok = bool(np.array_equal(np.isnan(cpu.ratio), np.isnan(gpu.ratio)))
    fin = ~np.isnan(cpu.ratio) & ~np.isnan(gpu.ratio)
    max_dr = float(np.max(np.abs(cpu.ratio[fin] - gpu.ratio[fin]))) if fin.any() else 0.0
    flags_ok = bool(np.array_equal(cpu.memorized, gpu.memorized))
    sep = (cpu.d2 - cpu.d1) > 1e-6
    nn1_ok = bool(np.array_equal(cpu.nn1[sep], gpu.nn1[sep]))
    return {"nan_pattern": nan_ok, "flags": flags_ok, "nn1": nn1_ok, "max_abs_dr": max_dr,
            "all_ok": nan_ok and flags_ok and nn1_ok and max_dr <= 1e-9}


def warmup_once(train, epochs: int, every: int, amp: bool, device: str, n_timesteps: int | None) -> dict:
    cuda = device == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    cfg = WarmupConfig(preset="paper", epochs=epochs, check_every=every, device=device, seed=0,
                       keep_samples=False,
                       model_params={"amp": amp, **({"n_timesteps": n_timesteps} if n_timesteps else {})})
    events = []
    res = run_warmup(train, cfg, progress=lambda e: events.append(e) if e.get("stage") == "check" else None)
    n_checks = len(events)
    # fit time = total - (sampling + memorization), from the tracker's own per-check timings
    sample_s = sum(e["sample_seconds"] for e in events)
    mem_s = sum(e["memorize_seconds"] for e in events)
    train_s = res.seconds - sample_s - mem_s
    return {"amp": amp, "checks": n_checks, "total_s": res.seconds, "train_s": train_s,
            "rows_per_s": epochs * len(train) / train_s if train_s > 0 else float("nan"),
            "sample_s_per_check": sample_s / n_checks, "memorize_s_per_check": mem_s / n_checks,
            "peak_gpu_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan"),
            "final_mem_ratio": res.final_mem_ratio, "device": str(next(res.model.model_.parameters()).device)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--n-synthetic", type=int, default=32561)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--skip-warmup", action="store_true")
    ap.add_argument("--skip-audit", action="store_true")
    ap.add_argument("--n-timesteps", type=int, default=None, help="diffusion steps (default: the preset's 1000)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench_gpu: no CUDA GPU visible; run it on a GPU machine", file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0) if args.device == "cuda" else "no GPU (dry run)"
    print(f"machine: {gpu}, {os.cpu_count()} CPU cores, torch {torch.__version__} "
          f"({torch.get_num_threads()} CPU threads)")
    train, test = load_dataset(args.dataset)
    syn = make_synthetic(train, test, args.n_synthetic, seed=0)
    print(f"data: {len(train):,} training rows x {len(syn):,} synthetic rows ({args.dataset.name})")

    # (a) engine, CUDA vs CPU
    t0 = time.perf_counter()
    gpu_engine = NeighborEngine(device=args.device).fit(train)
    fit_gpu = time.perf_counter() - t0
    cpu_engine = NeighborEngine(device="cpu").fit(train)
    t_gpu, res_gpu = timed_checks(train, gpu_engine, syn, args.repeats)
    t_cpu, res_cpu = timed_checks(train, cpu_engine, syn, max(1, args.repeats // 2))
    agree = compare(res_cpu, res_gpu)
    print("-" * 88)
    print(f"(a) engine fit on {args.device} {fit_gpu:.2f} s; full check median: {args.device} {t_gpu:.3f} s, "
          f"cpu ({torch.get_num_threads()} threads) {t_cpu:.3f} s -> {t_cpu / t_gpu:.1f}x")
    print(f"    mem ratio {args.device} {res_gpu.mem_ratio:.4%} / cpu {res_cpu.mem_ratio:.4%}; agreement {agree}")

    if not args.skip_warmup:
        for amp in (False, True):
            w = warmup_once(train, args.epochs, args.check_every, amp, args.device, args.n_timesteps)
            print(f"(b) warm-up paper net, {args.epochs} epochs, {w['checks']} checks of {len(train):,} rows, "
                  f"amp={amp}: total {w['total_s']:.1f} s; training {w['rows_per_s']:,.0f} rows/s; "
                  f"sampling {w['sample_s_per_check']:.2f} s/check; memorization "
                  f"{w['memorize_s_per_check']:.3f} s/check; peak GPU memory {w['peak_gpu_gib']:.2f} GiB; "
                  f"model on {w['device']}; final mem ratio {w['final_mem_ratio']:.4f}")
    audit_ok = True
    if not args.skip_audit:
        audit_ok = audit_part(train, test, syn, args.device)
    return 0 if agree["all_ok"] and audit_ok else 1


def audit_part(train, test, syn, device: str) -> bool:
    """(c): the audit on ``device`` against the CPU (module docstring); True when the figures agree."""
    import memviz

    out = {}
    for dev in (device, "cpu"):
        t0 = time.perf_counter()
        a = memviz.audit(train, syn, test, device=dev)
        c = a.close
        out[dev] = {"seconds": time.perf_counter() - t0, "code": a.verdict.code, "mem_ratio": a.mem_ratio,
                    "floor": a.floor, "too_close": c.too_close_share if c else None,
                    "identical": c.identical_share if c else None,
                    "named": sorted(a.over_copied_rows["row_id"].tolist())}
    g, c = out[device], out["cpu"]
    same = {k: (g[k] == c[k]) if k in ("code", "named") else abs(g[k] - c[k]) <= 1e-9
            for k in ("code", "mem_ratio", "floor", "too_close", "identical", "named")}
    print(f"(c) the audit, {len(train):,} x {len(syn):,} x {len(test):,} rows: {device} {g['seconds']:.1f} s, "
          f"cpu {c['seconds']:.1f} s -> {c['seconds'] / g['seconds']:.1f}x; verdict {g['code']}; "
          f"agreement {same}")
    return all(same.values())


if __name__ == "__main__":
    raise SystemExit(main())
