"""Benchmark: what private training costs (issues 38, 50): DP-SGD's training time and the private preprocessing's
(the column transforms' statistics released with OpenDP), each against plain training of the same network in the
same run.

Private preprocessing (issue 50): the arms train with Adult's bounds and categories public
(:mod:`memviz.study.public`; only the numerical histograms are released, as the study's private grid does); the
preprocessing is also timed alone, against the plain transform's fit on the same rows, with everything public and
with every bound and category released (ε = 10: at ε = 1 on 3,000 rows some column holds too few rows to release,
which is one line, reported).

TabDDPM ("cpu-quick", the study's network) on the bundled Adult sample (3,000 rows), the same optimiser steps
for every arm: plain AdamW steps, and DP-SGD (:mod:`memviz.models.privacy`: Poisson batches, ghost clipping's
two backward passes, Gaussian noise) at ε = 1 and ε = 10 (δ = 1 / (10 N), the RDP accountant). The arms are
alternated ``--repeats`` times, each fitted in this process on ``--threads`` threads; the figure is each arm's
median seconds and its ratio to plain training's, with ε spent.

Issue 50, the shared 2-core machine at load 16 (10 epochs, 120 steps, 3 repeats, one thread): plain 6.7 s; DP-SGD
1.78x at ε = 10 and at ε = 1 (Adult's bounds and categories public; ε spent 9.995 and 0.994 for the whole pipeline).
The private preprocessing alone: 137-254 ms with the bounds and categories public (6 histograms; the plain
transform's fit 15 ms: 9-17x it, but 0.02-0.04x the 10-epoch plain training and 0.01-0.02x DP-SGD's), 535 ms with
every bound and category released at ε = 10 (21 releases, 0.08x plain training); at ε = 1 with nothing public it is
refused in one line (column 'age': the threshold, 3,073 rows, exceeds the 3,000 rows).

Issue 38, measured on the shared 2-core machine (load 2.8-5.6: a study and tests beside it), 20 epochs (240 steps),
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
from memviz.errors import MemvizError
from memviz.models import make_model
from memviz.models.dpstats import private_transform
from memviz.models.privacy import PrivacyConfig
from memviz.models.transforms import TabularTransform
from memviz.study.public import ADULT

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    train, _ = memviz.load_dataset(ROOT / "sample_data")
    arms = {"plain": None, "DP-SGD ε = 10": {"epsilon": 10, **ADULT}, "DP-SGD ε = 1": {"epsilon": 1, **ADULT}}
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
    print("private preprocessing alone (the column transforms' statistics), against the plain transform's fit:")
    data = train.data.loc[:, list(train.schema.columns)]
    pre = {"plain fit (no privacy)": lambda: TabularTransform.fit(data, train.schema)}
    for eps in (1.0, 10.0):
        e_pre, d_pre, _, _ = PrivacyConfig(epsilon=eps).split(len(data))
        pre[f"ε = {eps:g}, bounds and categories public"] = (
            lambda e=e_pre, d=d_pre: private_transform(data, train.schema, epsilon=e, delta=d, **ADULT))
        pre[f"ε = {eps:g}, every bound and category released"] = (
            lambda e=e_pre, d=d_pre: private_transform(data, train.schema, epsilon=e, delta=d))
    pre_times = {}
    for name, fn in pre.items():
        ts, note = [], ""
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            try:
                out = fn()
            except MemvizError as exc:
                note = f" (refused: {exc})"
            ts.append(time.perf_counter() - t0)
            if not note and getattr(out, "privacy", None):
                note = f" ({len(out.privacy['releases'])} releases, ε spent {out.privacy['epsilon']:.3f})"
        pre_times[name] = float(np.median(ts))
        print(f"  {name}: median {pre_times[name] * 1000:.0f} ms = "
              f"{pre_times[name] / pre_times['plain fit (no privacy)']:.1f}x the plain fit, "
              f"{pre_times[name] / base:.4f}x plain training, "
              f"{pre_times[name] / float(np.median(times['DP-SGD ε = 1'])):.4f}x DP-SGD's (ε = 1){note}", flush=True)
    print(f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
