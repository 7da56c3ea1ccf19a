"""Benchmark: the density-ratio membership attack (memviz.evidence.densityratio) beside today's distance attack
(memviz.evidence.membership), and the cost of the attacks.

* **calibration** on three tables (adult, default, shoppers: disjoint parts of the training split, n rows each:
  train, "synthetic" = fresh real rows, hold-out), R resamples: how often each attack's AUC interval covers 0.5
  (issue 39's target: >= 90 %) and how often it flags (``flags_copying``; nominal 5 % for the density ratio,
  2.5 % for the distance attack's one-sided interval);
* **power** on planted copies: 5 % and 20 % of the synthetic rows replaced by distinct training rows (spread
  copies), and 10 training rows copied 20 times each (concentrated copies, 20 % of the synthetic rows at
  n = 1,000: the credit-table case of issue 36, where an AUC over all training rows barely moves): mean AUC,
  share of resamples flagged, TPR at 1 % FPR;
* **cost** at full Adult (32,561 training rows, 32,561 generated stand-ins, the 16,281 test rows as the hold-out):
  the density-ratio attack with the audit's limits (AUDIT_LIMITS) and with its defaults, beside one memorization
  pass measured in the same run; and the targeted attack's cost per shadow (from the study's cells).

Measured on the shared 2-core machine (load 1.9-3.4: a study run beside it), R = 50, n = 1,000 rows a part:

* calibration, fresh rows (AUC interval covers 0.5 / flags at 5 %):
  density ratio adult 44/50 / 2, default 48/50 / 5, shoppers 44/50 / 4 (pooled 136/150 = 90.7 % / 7.3 %);
  distance attack adult 48/50 / 1, default 46/50 / 3, shoppers 45/50 / 3 (pooled 139/150 = 92.7 % / 4.7 %).
* power (flagged in 50 resamples, density ratio vs distance attack): 5 % spread copies 48 / 23 (adult),
  43 / 29 (default), 50 / 23 (shoppers); 20 % spread copies 50 / 50 everywhere; 10 rows x 20 copies
  (concentrated) 29 / 2, 20 / 9, 33 / 3: the density ratio's tail test sees concentrated copies that an AUC
  over all training rows does not (mean AUC 0.50-0.51 for both).
* cost at full Adult: one memorization pass 0.25 s; the density ratio at the audit's limits 0.88 s on one
  thread (3.5 passes), 0.61 s on two; at its defaults (every training row) 4.05 s (16 passes). The targeted
  attack: 22-27 s a shadow (250 rows, 4,000 steps), 12.7-15.4 min of wall time a study cell of 32 shadows.

Usage: python benchmarks/bench_attacks.py [--data ../shared/datasets] [--resamples R] [--n N] [--skip-cost]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import memviz
from memviz.evidence.densityratio import AUDIT_LIMITS, density_ratio_attack
from memviz.evidence.membership import membership_inference
from memviz.tables.data import Table

TABLES = ("adult", "default", "shoppers")
PLANTS = (("fresh rows", None), ("5 % spread copies", ("spread", 0.05)), ("20 % spread copies", ("spread", 0.20)),
          ("10 rows x 20 copies", ("concentrated", 10, 20)))


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def three_parts(table: Table, n: int, rng) -> tuple[Table, Table, Table]:
    ids = rng.permutation(table.row_ids)[: 3 * n]
    return table.subset(ids[:n]), table.subset(ids[n:2 * n]), table.subset(ids[2 * n:])


def plant(train: Table, synth: Table, how, rng) -> pd.DataFrame:
    s = synth.data.reset_index(drop=True).copy()
    if how is None:
        return s
    if how[0] == "spread":
        k = int(round(how[1] * len(s)))
        src = rng.choice(len(train), k, replace=False)
    else:
        _, rows, copies = how
        src = np.repeat(rng.choice(len(train), rows, replace=False), copies)
        k = len(src)
    at = rng.choice(len(s), k, replace=False)
    s.iloc[at] = train.data.iloc[src].to_numpy()
    return s


def calibration_and_power(data: Path, n: int, resamples: int) -> None:
    print(f"calibration and power ({n} rows per part, {resamples} resamples; {load()}):")
    for name in TABLES:
        table, _ = memviz.load_dataset(data / name)
        for label, how in PLANTS:
            st = {k: [] for k in ("dr_auc", "dr_cover", "dr_flag", "dr_tpr", "mi_auc", "mi_cover", "mi_flag",
                                  "mi_tpr", "dr_s", "mi_s")}
            for r in range(resamples):
                rng = np.random.default_rng(1000 + r)
                tr, sy, ho = three_parts(table, n, rng)
                syn = plant(tr, sy, how, rng)
                t0 = time.perf_counter()
                dr = density_ratio_attack(tr, syn, ho, seed=r)
                st["dr_s"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                mi = membership_inference(tr, syn, ho)
                st["mi_s"].append(time.perf_counter() - t0)
                for key, res in (("dr", dr), ("mi", mi)):
                    st[f"{key}_auc"].append(res.auc)
                    st[f"{key}_cover"].append(res.auc_low <= 0.5 <= res.auc_high)
                    st[f"{key}_flag"].append(bool(res.flags_copying))
                    st[f"{key}_tpr"].append(res.tpr[0]["tpr"])
            print(f"  {name:8s} {label:20s} density ratio: AUC {np.mean(st['dr_auc']):.3f}, covers 0.5 "
                  f"{sum(st['dr_cover'])}/{resamples}, flags {sum(st['dr_flag'])}/{resamples}, TPR@1% "
                  f"{np.mean(st['dr_tpr']):.3f}, {np.mean(st['dr_s']):.2f} s | distance: AUC "
                  f"{np.mean(st['mi_auc']):.3f}, covers {sum(st['mi_cover'])}/{resamples}, flags "
                  f"{sum(st['mi_flag'])}/{resamples}, TPR@1% {np.mean(st['mi_tpr']):.3f}, {np.mean(st['mi_s']):.2f} s",
                  flush=True)


def cost(data: Path, repeats: int = 3) -> None:
    """The density ratio at full Adult, against one memorization pass in the same run."""
    import torch

    from memviz.engine.neighbors import NeighborEngine
    from memviz.measure.memorization import memorization
    from memviz.tables.data import table_from_frame

    train, test = memviz.load_dataset(data / "adult")
    rng = np.random.default_rng(0)
    frame = test.data.sample(len(train), replace=True, random_state=0).reset_index(drop=True)
    for c in train.schema.numerical:
        v = frame[c].to_numpy(dtype=float)
        frame[c] = v + rng.normal(0, 0.01 * (np.nanstd(v) or 1.0), len(v))
    synth = table_from_frame(frame, train.schema, source="synthetic", role="synthetic")
    engine = NeighborEngine(distance="paper", device="cpu").fit(train)
    passes = []

    def one_pass():
        t0 = time.perf_counter()
        memorization(train, synth, engine=engine)
        passes.append(time.perf_counter() - t0)

    one_pass()
    runs = {"audit limits (one thread)": [], "audit limits (two threads)": [], "defaults (two threads)": []}
    for _ in range(repeats):
        for name in runs:
            if name.startswith("defaults") and len(runs[name]) >= 1:
                continue                                   # once: tens of seconds
            threads = 1 if "one thread" in name else 2
            prev = torch.get_num_threads()
            torch.set_num_threads(threads)
            t0 = time.perf_counter()
            res = density_ratio_attack(train, synth, test, **(AUDIT_LIMITS if "audit" in name else {}))
            runs[name].append((time.perf_counter() - t0, res))
            torch.set_num_threads(prev)
            one_pass()
    t_pass = float(np.median(passes))
    print(f"cost at full Adult ({len(train)} train, {len(synth)} generated, {len(test)} hold-out; {load()}):")
    print(f"  one memorization pass (paper engine warm): median {t_pass:.2f} s of {len(passes)}")
    for name, rs in runs.items():
        ts = sorted(t for t, _ in rs)
        res = rs[0][1]
        kern = (res.n_members + res.n_nonmembers) * (res.n_synthetic_centres + res.n_reference_centres)
        print(f"  density ratio, {name}: median {ts[len(ts) // 2]:.2f} s of {len(ts)} = "
              f"{ts[len(ts) // 2] / t_pass:.1f} x one pass ({res.n_members:,} + {res.n_nonmembers:,} rows against "
              f"{res.n_synthetic_centres:,} + {res.n_reference_centres:,} centres: {kern:.2e} kernels)")


def shadow_cost(cells: Path) -> None:
    """Per-shadow seconds of the attack study's finished cells (docs/study/attacks)."""
    files = sorted(cells.glob("*_s*.json"))
    if not files:
        print("targeted attack: no finished study cell to read yet")
        return
    for f in files:
        r = json.loads(f.read_text())
        res = r["result"]
        print(f"  targeted attack {f.stem}: {res['n_shadows']} shadows, {res['seconds'] / 60:.1f} CPU-min "
              f"({res['seconds'] / res['n_shadows']:.0f} s a shadow: {r['n_train']} rows, 4,000 steps, "
              f"2,000 generated rows), the cell {r['seconds'] / 60:.1f} min of wall time")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    ap.add_argument("--resamples", type=int, default=20)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-calibration", action="store_true")
    args = ap.parse_args(argv)
    data = Path(args.data)
    if not args.skip_calibration:
        calibration_and_power(data, args.n, args.resamples)
    if not args.skip_cost:
        cost(data)
    shadow_cost(Path(__file__).resolve().parents[1] / "docs" / "study" / "attacks")


if __name__ == "__main__":
    main()
