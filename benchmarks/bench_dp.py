"""Benchmark: what DP-SGD costs in training time (issue 38), against plain training of the same network in the
same run.

TabDDPM ("cpu-quick", the study's network) on the bundled Adult sample (3,000 rows), the same optimiser steps
for every arm: plain AdamW steps, and DP-SGD (:mod:`memviz.models.privacy`: Poisson batches, ghost clipping's
two backward passes, Gaussian noise) at ε = 1 and ε = 10 (δ = 1 / (10 N), the RDP accountant). The arms are
alternated ``--repeats`` times, each fitted in this process on ``--threads`` threads; the figure is each arm's
median seconds and its ratio to plain training's, with ε spent.

Measured on the shared 2-core machine (load 2.8-5.6: a study and tests beside it), 20 epochs (240 steps),
3 repeats, one thread: plain 3.9 s; DP-SGD ε = 10 8.4 s (2.16x plain, ε spent 9.995, σ 0.977); ε = 1 9.2 s
(2.37x, ε spent 0.997, σ 5.156). The cost is the second backward pass of ghost clipping and the per-layer
norms, whatever ε (σ only scales the noise).

Usage: python benchmarks/bench_dp.py [--epochs 30] [--repeats 3] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import memviz
from memviz.models import make_model

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    train, _ = memviz.load_dataset(ROOT / "sample_data")
    arms = {"plain": None, "DP-SGD ε = 10": {"epsilon": 10}, "DP-SGD ε = 1": {"epsilon": 1}}
    times = {k: [] for k in arms}
    spent = {}
    print(f"TabDDPM cpu-quick, {len(train):,} rows, {args.epochs} epochs, {args.threads} thread(s), "
          f"{args.repeats} repeats alternated (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for r in range(args.repeats):
        for name, privacy in arms.items():
            model = make_model("tabddpm", preset="cpu-quick", epochs=args.epochs, seed=r, device="cpu",
                               n_threads=args.threads, privacy=privacy)
            t0 = time.perf_counter()
            model.fit(train)
            times[name].append(time.perf_counter() - t0)
            if model.privacy_:
                spent[name] = (model.privacy_.get("epsilon_spent"), model.privacy_.get("noise_multiplier"))
            print(f"  {name}: {times[name][-1]:.1f} s ({model.step_:,} steps)", flush=True)
    base = float(np.median(times["plain"]))
    for name, ts in times.items():
        med = float(np.median(ts))
        extra = "" if name not in spent else f"; ε spent {spent[name][0]:.3f}, noise multiplier {spent[name][1]:.3f}"
        print(f"{name}: median {med:.1f} s = {med / base:.2f}x plain training{extra}")
    print(f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
