"""Benchmark: singling out and linkability (memviz.evidence.article29) on fresh real rows and on planted copies,
and their cost beside the audit.

* null: per table (adult, default, shoppers), 3,000 reference rows drawn from train + test (seeded), the rest a
  fresh pool; each resample draws 1,233 hold-out rows and 3,000 "generated" rows from the pool: the share of
  resamples each attack flags (its exact test at 5 %; target <= 5 %).
* power: the same with 10 % of the generated rows replaced by reference rows (verbatim copies): the share flagged.
* cost: both attacks at full Adult (32,561 training, 16,000 generated, 16,281 hold-out rows), against one
  memviz.audit of the same tables, in the same run.

Measured (load 3.5-4 on the shared 2 cores), 50 resamples a table:

* null (fresh rows; a calibrated test flags 5 %, and 5 of 50 or more happens with chance 0.10): singling out
  10 % / 4 % / 4 % (adult / default / shoppers), linkability 0 % on all three;
* power with 10 % verbatim copies: linkability 100 % on all three; singling out 12 % / 16 % / 8 %: a predicate
  that singles out one of 1,233 synthetic rows rarely picks out exactly one of as many training rows, so it is the
  weak one of the two (anonymeter's paper says as much of univariate predicates);
* cost at full Adult, the "generated" rows being the test split itself (so the control, the same rows, is singled
  out 100 %): singling out 4.60 s and linkability 0.05 s on their own; the whole audit, which runs both with the
  columns factorized once for all its tests, 3.5 s.

Usage: python benchmarks/bench_article29.py [--resamples R] [--data ../shared/datasets]
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import memviz
from memviz.evidence.article29 import linkability, singling_out
from memviz.tables.data import table_from_frame
from memviz.verdict.evidence_words import article29_sentence

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def part_null_power(data: Path, resamples: int) -> None:
    print(f"null and power: N = 3,000, M = 3,000, H = 1,233, {resamples} resamples a table ({load()})")
    print("table      fresh rows flagged: singling out / linkability    10 % copies flagged: singling out / linkability")
    for name in ("adult", "default", "shoppers"):
        train, test = memviz.load_dataset(data / name)
        allf = pd.concat([train.data, test.data], ignore_index=True)[list(train.schema.columns)]
        idx = np.random.default_rng(0).permutation(len(allf))
        ref = table_from_frame(allf.iloc[idx[:3000]].reset_index(drop=True), train.schema, source="ref")
        pool = allf.iloc[idx[3000:]].reset_index(drop=True)
        rng = np.random.default_rng(1)
        null = {"so": 0, "lk": 0}
        power = {"so": 0, "lk": 0}
        for i in range(resamples):
            perm = rng.permutation(len(pool))
            hold = table_from_frame(pool.iloc[perm[:1233]].reset_index(drop=True), ref.schema, source="h", role="test")
            gen = pool.iloc[perm[1233:4233]].reset_index(drop=True)
            syn = table_from_frame(gen, ref.schema, source="s", role="synthetic")
            null["so"] += singling_out(ref, syn, hold, seed=i).flags_risk
            null["lk"] += linkability(ref, syn, hold, seed=i).flags_risk
            copied = gen.copy()
            copied.iloc[:300] = ref.data.iloc[rng.choice(3000, 300, replace=False)][gen.columns].to_numpy()
            syn = table_from_frame(copied, ref.schema, source="c", role="synthetic")
            power["so"] += singling_out(ref, syn, hold, seed=i).flags_risk
            power["lk"] += linkability(ref, syn, hold, seed=i).flags_risk
        print(f"{name:<10} {100 * null['so'] / resamples:5.0f} % / {100 * null['lk'] / resamples:3.0f} %"
              f"                               {100 * power['so'] / resamples:5.0f} % / "
              f"{100 * power['lk'] / resamples:3.0f} %", flush=True)


def part_cost(data: Path) -> None:
    train, test = memviz.load_dataset(data / "adult")
    syn = table_from_frame(test.data.iloc[:16000].reset_index(drop=True), train.schema, source="s", role="synthetic")
    t0 = time.perf_counter()
    so = singling_out(train, syn, test)
    t1 = time.perf_counter()
    lk = linkability(train, syn, test)
    t2 = time.perf_counter()
    a = memviz.audit(train, syn.data, test, device="cpu")
    t3 = time.perf_counter()
    print(f"\ncost at full Adult ({load()}): singling out {t1 - t0:.2f} s, linkability {t2 - t1:.2f} s, the whole "
          f"audit (with both) {t3 - t2:.1f} s: {(t2 - t0) / (t3 - t2):.2f}x of it (singling out: {article29_sentence(so)} linkability: {article29_sentence(lk)} "
          f"verdict {a.verdict.code})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--resamples", type=int, default=50)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    part_null_power(Path(args.data), args.resamples)
    part_cost(Path(args.data))


if __name__ == "__main__":
    main()
