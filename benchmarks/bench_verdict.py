"""Benchmark: the audit's verdict (issue 36) at full size: calibrated on fresh rows, powerful on planted
copies, not masked by an under-fitting generator, and what it costs against the previous audit.

Parts (``--parts``, default all):

* ``null``: fresh real rows as the "synthetic" table. Per table (adult, default, shoppers, and default's 14
  numerical columns alone), 3,000 reference rows drawn from train + test (seeded), the rest the fresh pool;
  each resample draws H hold-out rows and M generated rows from the pool **without replacement**, for the
  three size designs (M, H) = (3,000, 300), (3,000, 1,233), (3,000, 3,000). Reported: the share of resamples
  whose verdict is not ``no_copying`` (any member of the family holds: the ratio test, too close,
  identical, the data-copying test's regions, the per-row test; Holm at 5 %; target ≤ 5 %), and each
  member's own rate at 5 %. The engines are fitted once per table and the family read from the same
  functions :func:`memviz.audit` calls (:mod:`memviz.measure.tooclose`, :func:`memviz.measure.floor.excess_p_value`,
  :func:`memviz.evidence.datacopying.data_copying_test`, :mod:`memviz.verdict.family`).
* ``rows``: named rows at the earlier grid, N = 3,000, M ∈ {3,000, 60,000}, H ∈ {300, 1,233, 3,000}: the
  share of resamples with any named row (rows are named once the family holds, q ≤ 5 %; target ≤ 5 %),
  and, for information, how often the per-row test with the training rows as reference would name one
  ungated. M = 60,000 exceeds every pool, so those generated rows are drawn with replacement (a fresh row
  drawn twice is two generated rows), as the previous benchmark did.
* ``power``: N = 4,000, M = 1,800 (1,500 fresh rows and 60 training rows copied exactly 5 times each),
  H = 1,500: the share of the 60 rows named (target ≥ 90 %) and resamples with a false named row; and a row
  with 20 exact copies beside one hold-out row equal to it (named in every resample: target 100 %).
* ``masking``: the credit table of ``tests/unseen.py`` (3,563 training, 891 hold-out rows); SDV's
  GaussianCopula fitted on the training rows, 3,000 rows, 600 of them 30 training rows copied 20 times
  each (and the independent-columns generator, the same way): the verdict and the named rows, with and
  without the copies.
* ``cases`` (issue 47): N = 3,000, M = 3,000, H = 1,233 per table: 150 training rows with one cell altered (made
  missing, times 1,000, rounded, moved half a spread), 15 verbatim rows, 3 rows x 10 copies beside a hold-out row
  tied with a training row, 1 row x 10: the share of resamples whose family holds, and of planted rows named.
* ``models``: honest samples (memviz's TabDDPM, cpu-quick, and SDV's GaussianCopula on 3,000 rows of each table,
  3 seeds): the verdict and the members that hold; how often a region alone would carry the verdict.
* ``cost``: :func:`memviz.audit` at full Adult (32,561 training rows, 32,561 generated stand-ins: test rows
  with a little noise, 16,281 hold-out rows) with its defaults, against the previous audit run from another
  checkout (``--old PATH``, e.g. ``git worktree add /tmp/old e9efb32``) in the same run, alternated, each
  in its own process; target ≤ 1.3x.

Measured on the shared 2-core machine (load 2-6: a study run beside it):

* null, 200 resamples a cell: a verdict other than ``no_copying`` in 0.5-5.0 % of resamples in each of the 12
  cells (worst shoppers 3,000/3,000, 5.0 %, 2.7-9.0), 3.4 % pooled over the 2,400 audits;
* rows, 100 resamples: a named row in 0-3 % of null resamples in all 24 cells (ungated: up to 21 %);
* power, 20 resamples: 100 % of the 60 planted rows named on all four tables; the row with 20 copies beside one
  real match named in 20 of 20; a false named row beside the true ones in 0-25 % of resamples (FDR at 5 %);
* masking (credit table): independent columns and SDV's GaussianCopula with 20 % copies of 30 rows ->
  ``copying`` (too close, identical, rows), the 30 rows named; without copies -> ``no_copying``, none named;
  with 5 % near copies of 25 rows (Income + 100: α's too-close quota, 5.00 % against 4.93 % expected, p 0.46)
  -> ``copying``, carried by the tail (nearer than every real row: 5.00 % against 0.11 %), the 25 rows named
  (before the tail was read: ``no_copying``, none named);
* null again with the tail (100 resamples a cell, load 1.2): a verdict other than ``no_copying`` in 0-5.0 % per
  cell (worst shoppers 3,000/3,000, 5.0 %, 2.2-11.2), 2.6 % pooled over 1,200 audits; the too-close member
  alone at 5 % in 63 of 1,200 (5.3 %);
* cost at full Adult, 5 runs alternated: 5.2-5.4 s against 3.5-3.6 s for the previous audit (e9efb32), 1.42-1.51x;
  without issue 39's density-ratio attack, which the previous audit did not run, 2.6-2.7 s (0.76x: the
  evidence reuses the closeness tests' searches).

Issue 47's members (near-verbatim, the pooled identical reference, ties by seeded draws, the per-row member that
names), measured at load 8-15 on the shared 2 cores:

* null, 100 resamples a cell: a verdict other than ``no_copying`` in 1.0-4.0 % per cell, 2.2 % pooled over 1,200
  audits; the members alone at 5 %: near-verbatim 0-4 %, identical 0-5 %, too close 2-10 % (5.7 % pooled), rows 0-8 %;
* cases, 60 resamples a table: 150 rows with one cell altered found in 100 % (adult, default, shoppers, numeric);
  15 verbatim rows in 100 / 100 / 37 / 83 % (shoppers' and default's numerical rows repeat each other, which the
  reference says); 3 rows x 10 beside a tied real row: 100 %, the rows named 100 %; 1 row x 10: 97-100 %, named
  97-100 %;
* models, 3 seeds: 17 of 18 honest samples ``no_copying``, one TabDDPM sample on shoppers ``rows_over_copied`` (one
  row named); the regions held in none;
* cost at full Adult, 3 runs alternated (load 7): 7.1 s against 7.7 s for 54e3f85's audit (0.92x; 0.68x without the
  density-ratio attack): the near-verbatim matching costs about 1.7-2.8 s, the numpy CPU engine (issue 54) saves more.
  With singling out and linkability in the audit: 1.23x (load 12) while singling out re-read its columns at every
  try; once it read them once, 10.5 s against 11.3 s (0.93x; 0.70x without the density-ratio attack; load 7.7).

Usage: python benchmarks/bench_verdict.py [--parts null,rows,power,masking,cost] [--resamples R]
       [--data ../shared/datasets] [--old /tmp/old]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import memviz
from memviz.verdict.family import ALPHA, family
from memviz.engine.neighbors import NeighborEngine
from memviz.evidence.datacopying import data_copying_test
from memviz.measure.tooclose import close_copy_test, leave_one_out, nearest
from memviz.measure.floor import excess_p_value
from memviz.measure.memorization import memorization
from memviz.measure.partial import PartialIndex, PartialSet
from memviz.tables.data import Table, table_from_frame
from memviz.tables.schema import Schema

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("adult", "default", "shoppers", "numeric")
DESIGNS = ((3000, 300), (3000, 1233), (3000, 3000))


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def wilson(k: int, n: int) -> str:
    from memviz.measure.floor import wilson_interval

    lo, hi = wilson_interval(k, n)
    return f"{100 * k / n:.1f} % ({100 * float(lo):.1f}-{100 * float(hi):.1f})"


# ------------------------------------------------------------------ a table's fresh pool, searched once
class Pool:
    """Reference rows and a fresh pool of one table, with every search the family reads done once."""

    def __init__(self, data: Path, name: str, n_ref: int, seed: int = 0):
        if name == "numeric":
            train, test = memviz.load_dataset(data / "default")
            cols = list(train.schema.distance_numerical)
            schema = Schema(numerical=tuple(cols), categorical=(), target=None)
            allf = pd.concat([train.data[cols], test.data[cols]], ignore_index=True)
        else:
            train, test = memviz.load_dataset(data / name)
            schema = train.schema
            allf = pd.concat([train.data, test.data], ignore_index=True)[list(schema.columns)]
        idx = np.random.default_rng(seed).permutation(len(allf))
        self.name = name
        self.ref = table_from_frame(allf.iloc[idx[:n_ref]].reset_index(drop=True), schema, source="reference")
        self.pool = allf.iloc[idx[n_ref:]].reset_index(drop=True)
        t0 = time.perf_counter()
        paper = NeighborEngine(distance="paper", device="cpu").fit(self.ref)
        self.flag = memorization(self.ref, self.pool, engine=paper).memorized           # (P,) the ratio test
        self.std = NeighborEngine(distance="standardized", device="cpu").fit(self.ref, like=paper)
        self.near = nearest(self.std, self.pool)                                        # (P,) D and NN1
        self.loo = leave_one_out(self.std, self.ref)
        s = self.ref.schema
        self.index = PartialIndex(self.ref.data, s.distance_numerical, s.distance_categorical)
        self.partial = self.index.match(self.pool)                                      # (P,) A and its match
        self.partial_loo = self.index.leave_one_out()
        self.ref_partial = self.index.match(self.ref.data)                             # a row's copy: A = 0
        print(f"{name}: {len(self.ref):,} reference rows, {len(self.pool):,} fresh rows searched in "
              f"{time.perf_counter() - t0:.1f} s; fresh rows flagged by the ratio test {self.flag.mean():.1%}",
              flush=True)

    def partial_set(self, g, h, extra=None) -> PartialSet:
        """The near-verbatim matches of generated pool rows ``g`` (then ``extra``'s) and hold-out pool rows ``h``."""
        syn = self.partial.take(g)
        return PartialSet(syn if extra is None else syn.concat(extra), self.partial.take(h), self.partial_loo)

    def family(self, g: np.ndarray, h: np.ndarray, local: bool = True):
        """The verdict's family of generated pool rows ``g`` against hold-out pool rows ``h``."""
        close = close_copy_test(self.std.row_ids_, self.near.take(g), self.near.take(h), self.loo,
                                partial=self.partial_set(g, h))
        p = {"ratio": excess_p_value(int(self.flag[g].sum()), len(g), int(self.flag[h].sum()), len(h)),
             "too_close": close.p_too_close, "identical": close.p_identical, "partial": close.p_partial,
             "rows": close.p_rows}
        if local:
            dc = data_copying_test(self.ref, Table(self.pool.iloc[g].reset_index(drop=True), self.ref.schema, "g"),
                                   Table(self.pool.iloc[h].reset_index(drop=True), self.ref.schema, "h"),
                                   engine=self.std, distances=(self.near.distance[g], self.near.distance[h]),
                                   positions=(self.near.position[g], self.near.position[h]))
            cells = dc.cells[dc.cells["included"]]
            p["local"] = float(cells["q_value"].min()) if len(cells) else None
        return family(p), close, p


def part_null(data: Path, resamples: int):
    print(f"\nnull: fresh rows as the synthetic table, {resamples} resamples per table and design ({load()})")
    print("table      M      H      verdict not no_copying (95 %)   members at 5 %: ratio / too close / identical / "
          "near-verbatim / local / rows")
    worst = 0.0
    for name in TABLES:
        pool = Pool(data, name, 3000)
        rng = np.random.default_rng(1)
        for m, h in DESIGNS:
            bad, member = 0, dict.fromkeys(("ratio", "too_close", "identical", "partial", "local", "rows"), 0)
            for _ in range(resamples):
                perm = rng.permutation(len(pool.pool))
                fam, _, p = pool.family(perm[h:h + m], perm[:h])
                bad += bool(fam.holding)
                for k, v in p.items():
                    member[k] += v is not None and v <= ALPHA
            worst = max(worst, bad / resamples)
            print(f"{name:<10} {m:<6,} {h:<6,} {wilson(bad, resamples):<31} "
                  + " / ".join(f"{100 * v / resamples:.0f} %" for v in member.values()), flush=True)
    print(f"worst: {100 * worst:.1f} % (target <= 5 %)")


def part_rows(data: Path, resamples: int):
    print(f"\nrows: named rows with fresh rows as the synthetic table, {resamples} resamples ({load()}); named: "
          "q <= 5 % once the family holds (the data-copying regions left out here: one member fewer); ungated: "
          "q <= 5 % whatever the family")
    print("table      M        H      resamples with a named row   ungated   copies a lone row needs")
    for name in TABLES:
        pool = Pool(data, name, 3000)
        rng = np.random.default_rng(2)
        for m in (3000, 60000):
            for h in (300, 1233, 3000):
                named, ungated, need = 0, 0, []
                for _ in range(resamples):
                    perm = rng.permutation(len(pool.pool))
                    rest = perm[h:]
                    g = rest[:m] if m <= len(rest) else rest[rng.integers(0, len(rest), m)]
                    fam, close, _ = pool.family(g, perm[:h], local=False)
                    named += fam.naming_level > 0 and len(close.named(fam.naming_level)) > 0
                    ungated += len(close.named(ALPHA)) > 0
                    need.append(close.copies_needed(ALPHA) or -1)
                print(f"{name:<10} {m:<8,} {h:<6,} {wilson(named, resamples):<28} {100 * ungated / resamples:5.0f} %   "
                      f"{int(np.median(need))}", flush=True)


def part_power(data: Path, resamples: int):
    print(f"\npower: N = 4,000, M = 1,800 (1,500 fresh + 60 rows x 5 exact copies), H = 1,500, {resamples} "
          f"resamples ({load()})")
    for name in TABLES:
        pool = Pool(data, name, 4000)
        rng = np.random.default_rng(3)
        found, false, twenty = [], 0, 0
        ref_near = nearest(pool.std, pool.ref)                               # a training row's copy: itself, D = 0
        for _ in range(resamples):
            perm = rng.permutation(len(pool.pool))
            h, g = perm[:1500], perm[1500:3000]
            planted = rng.choice(len(pool.ref), 60, replace=False)
            near = _concat(pool.near.take(g), ref_near.take(np.repeat(planted, 5)))
            hold = pool.near.take(h)
            fam, close = _family_of(pool, near, hold, pool.partial_set(g, h, pool.ref_partial.take(
                np.repeat(planted, 5))))
            named = set(close.named(fam.naming_level)["row_id"]) if fam.naming_level else set()
            want = set(pool.std.row_ids_[_record(pool, planted)])           # a planted row's twin is its record
            found.append(len(named & want) / 60)
            false += bool(named - want)
            # a row with 20 exact copies and one hold-out row equal to it
            one = rng.integers(len(pool.ref))
            near20 = _concat(pool.near.take(perm[1500:3000]), ref_near.take(np.repeat([one], 20)))
            hold1 = _concat(pool.near.take(h[:-1]), ref_near.take([one]))
            p20 = PartialSet(pool.partial.take(perm[1500:3000]).concat(pool.ref_partial.take(np.repeat([one], 20))),
                             pool.partial.take(h[:-1]).concat(pool.ref_partial.take([one])), pool.partial_loo)
            fam20, close20 = _family_of(pool, near20, hold1, p20)
            twenty += fam20.naming_level > 0 and pool.std.row_ids_[_record(pool, one)] in set(
                close20.named(fam20.naming_level)["row_id"])
        print(f"{name:<10} planted rows named {100 * np.mean(found):.1f} % (min {100 * min(found):.0f} %; target >= 90 %); "
              f"resamples with a false named row {wilson(false, resamples)}; 20 copies beside one real match named "
              f"in {twenty} of {resamples}", flush=True)


def _record(pool: Pool, positions):
    """The positions of the records (the lowest of identical training rows) that ``positions`` belong to."""
    loo = pool.loo
    rep = np.arange(len(loo))
    twin = loo.distance == 0
    rep[twin] = np.minimum(rep[twin], loo.position[twin])
    return rep[np.asarray(positions)]


def _concat(a, b):
    from memviz.measure.tooclose import Nearest

    return Nearest(np.r_[a.distance, b.distance], np.r_[a.position, b.position])


def _family_of(pool: Pool, near, hold, partial=None):
    close = close_copy_test(pool.std.row_ids_, near, hold, pool.loo, partial=partial)
    # the ratio test and the regions as members that never hold: the per-row test faces the audit's m = 6
    return family({"ratio": 1.0, "local": 1.0, "too_close": close.p_too_close, "identical": close.p_identical,
                   "partial": close.p_partial, "rows": close.p_rows}), close


def part_masking():
    sys.path.insert(0, str(ROOT / "tests"))
    from unseen import credit_table, independent_columns, with_copies

    schema = Schema(numerical=("Seniority", "Age", "Income", "Debt"),
                    categorical=("Home", "Marital", "Records", "Job", "Trend"), target="Status", task="binary")
    df = credit_table(4454, seed=3).drop(columns="rownames")
    train, hold = df.iloc[:3563].reset_index(drop=True), df.iloc[3563:].reset_index(drop=True)
    print(f"\nmasking: a credit table, 3,563 training and 891 hold-out rows ({load()})")
    gens = {"independent columns": independent_columns(train, 3000, seed=1)}
    try:
        import warnings

        from sdv.metadata import Metadata
        from sdv.single_table import GaussianCopulaSynthesizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cols = {**{c: {"sdtype": "numerical"} for c in schema.numerical},
                    **{c: {"sdtype": "categorical"} for c in (*schema.categorical, schema.target)}}
            meta = Metadata.load_from_dict({"tables": {"credit": {"columns": cols}}})
            gc = GaussianCopulaSynthesizer(meta)
            gc.fit({"credit": train})                      # SDV 2: one table, by its name
            gens["SDV GaussianCopula"] = gc.sample(3000)["credit"][list(train.columns)]
    except ImportError as exc:
        print(f"  GaussianCopula not available: {exc}")
    for label, gen in gens.items():
        syn, src = with_copies(gen, train, 30, 20, seed=2)
        near, near_src = with_copies(gen, train, 25, 6, seed=2)          # 5 % of the rows: α's too-close quota
        near.loc[: 25 * 6 - 1, "Income"] += 100.0                        # near, not identical
        for what, frame, planted in (("20 % copies of 30 rows", syn, src),
                                     ("5 % near copies of 25 rows (Income + 100)", near, near_src),
                                     ("no copies", gen, None)):
            t0 = time.perf_counter()
            a = memviz.audit(train, frame, hold, schema=schema)
            named = set(a.over_copied_rows["row_id"])
            levels = ", ".join(f"k={lv.k}: {lv.share:.2%} vs {lv.expected_share:.2%} (p {lv.p:.2g})"
                               for lv in a.close.levels)
            print(f"  {label}, {what}: {a.verdict.code} ({time.perf_counter() - t0:.1f} s); flagged {a.mem_ratio:.1%} "
                  f"against a floor of {a.floor:.1%}; family holding {', '.join(a.family.holding) or 'none'}; named "
                  f"{len(named)} rows" + (f", {len(named & set(planted))} of the {len(planted)} copied"
                                          if planted is not None else "") + f"; too close at {levels}")
            print(f"    {a.verdict.sentence}")


# ------------------------------------------------------------------ issue 47's cases
def _altered(pool: Pool, rows: np.ndarray, rng) -> pd.DataFrame:
    """Training rows ``rows`` with one cell each altered the ways a person still sees through: made missing,
    times 1,000, rounded to 2 significant digits, or moved by half the column's spread (a categorical: missing)."""
    df = pool.ref.data.iloc[rows].reset_index(drop=True).copy()
    num = list(pool.ref.schema.distance_numerical)
    cat = list(pool.ref.schema.distance_categorical)
    for i in range(len(df)):
        how = rng.integers(4)
        if num and (how > 0 or not cat):
            c = num[rng.integers(len(num))]
            v = float(df.at[i, c])
            df.at[i, c] = {1: v * 1000 + 1, 2: float(f"{v:.2g}") + 0.5, 3: v + 0.5 * float(pool.ref.data[c].std())
                           }.get(int(how), np.nan)
        else:
            df.at[i, cat[rng.integers(len(cat))]] = None
    return df


def _audit_family(pool: Pool, g: np.ndarray, h: np.ndarray, extra: pd.DataFrame | None = None):
    """The family (no regions) of pool rows ``g`` plus the rows of ``extra`` (searched here) against pool rows ``h``."""
    near, part = pool.near.take(g), pool.partial.take(g)
    if extra is not None and len(extra):
        near = _concat(near, nearest(pool.std, extra))
        part = part.concat(pool.index.match(extra))
    return _family_of(pool, near, pool.near.take(h), PartialSet(part, pool.partial.take(h), pool.partial_loo))


def part_cases(data: Path, resamples: int):
    print(f"\ncases (issue 47): N = 3,000 reference rows, M = 3,000 generated (fresh rows and the planted ones), "
          f"H = 1,233 hold-out rows, {resamples} resamples a table ({load()}); share of resamples whose family holds "
          "(the table copies or rows are named), and of the planted rows named")
    print("table      150 rows, 1 cell altered   15 verbatim rows   3 rows x 10 + 1 tied real row   1 row x 10")
    for name in TABLES:
        pool = Pool(data, name, 3000)
        rng = np.random.default_rng(4)
        ref_near = nearest(pool.std, pool.ref)
        hits = {k: [] for k in ("partial", "verbatim", "ties", "one")}
        named = {k: [] for k in hits}
        for _ in range(resamples):
            perm = rng.permutation(len(pool.pool))
            h, g = perm[:1233], perm[1233:1233 + 3000]
            src = rng.choice(len(pool.ref), 150, replace=False)
            fam, close = _audit_family(pool, g[:2850], h, _altered(pool, src, rng))
            hits["partial"].append(bool(fam.holding) and "partial" in fam.holding)
            fam, close = _audit_family(pool, g[:2985], h, pool.ref.data.iloc[src[:15]].reset_index(drop=True))
            hits["verbatim"].append(bool(fam.holding))
            three = src[:3]
            tied = _concat(pool.near.take(h[:-1]), ref_near.take([src[3]]))      # one real row equal to a training row
            near = _concat(pool.near.take(g[:2970]), ref_near.take(np.repeat(three, 10)))
            part = PartialSet(pool.partial.take(g[:2970]).concat(pool.ref_partial.take(np.repeat(three, 10))),
                              pool.partial.take(h[:-1]).concat(pool.ref_partial.take([src[3]])), pool.partial_loo)
            fam, close = _family_of(pool, near, tied, part)
            want = set(pool.std.row_ids_[_record(pool, three)])
            got = set(close.named(fam.naming_level)["row_id"]) if fam.naming_level else set()
            hits["ties"].append(bool(fam.holding))
            named["ties"].append(len(got & want) / 3)
            one = src[:1]
            near = _concat(pool.near.take(g[:2990]), ref_near.take(np.repeat(one, 10)))
            part = PartialSet(pool.partial.take(g[:2990]).concat(pool.ref_partial.take(np.repeat(one, 10))),
                              pool.partial.take(h), pool.partial_loo)
            fam, close = _family_of(pool, near, pool.near.take(h), part)
            got = set(close.named(fam.naming_level)["row_id"]) if fam.naming_level else set()
            hits["one"].append(bool(fam.holding))
            named["one"].append(float(pool.std.row_ids_[_record(pool, one)][0] in got))
        print(f"{name:<10} {100 * np.mean(hits['partial']):5.0f} %                    "
              f"{100 * np.mean(hits['verbatim']):5.0f} %           "
              f"{100 * np.mean(hits['ties']):5.0f} % (rows named {100 * np.mean(named['ties']):.0f} %)        "
              f"{100 * np.mean(hits['one']):5.0f} % (named {100 * np.mean(named['one']):.0f} %)", flush=True)


def part_models(data: Path, seeds: int):
    """Honest model samples: what the verdict says of TabDDPM (memviz's own, cpu-quick preset) and SDV's
    GaussianCopula trained on 3,000 rows of each table, audited against 1,233 real rows they never saw."""
    import warnings

    from memviz.models.tabddpm import TabDDPM

    print(f"\nmodels: honest samples, N = 3,000 training rows, M = 3,000 generated, H = 1,233 hold-out rows, "
          f"{seeds} seeds ({load()}); the verdict and the members that hold")
    for name in TABLES:
        if name == "numeric":
            continue
        train, test = memviz.load_dataset(data / name)
        for seed in range(seeds):
            rng = np.random.default_rng(100 + seed)
            tr = train.subset(rng.choice(train.row_ids, 3000, replace=False))
            hold = test.data.iloc[rng.choice(len(test), min(1233, len(test)), replace=False)]
            gens = {}
            t0 = time.perf_counter()
            model = TabDDPM("cpu-quick", seed=seed, device="cpu").fit(tr)
            gens["TabDDPM"] = model.sample(3000, seed=seed)
            tabddpm_s = time.perf_counter() - t0
            try:
                from sdv.metadata import Metadata
                from sdv.single_table import GaussianCopulaSynthesizer

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    s = tr.schema
                    cols = {**{c: {"sdtype": "numerical"} for c in s.numerical},
                            **{c: {"sdtype": "categorical"} for c in (*s.categorical, *([s.target] if s.target
                                                                                        else []))}}
                    meta = Metadata.load_from_dict({"tables": {"t": {"columns": cols}}})
                    gc = GaussianCopulaSynthesizer(meta)
                    gc.fit({"t": tr.data[list(cols)]})
                    gens["GaussianCopula"] = gc.sample(3000)["t"][list(tr.schema.columns)]
            except ImportError:
                pass
            for label, syn in gens.items():
                a = memviz.audit(tr, syn, hold, schema=tr.schema, quality=False, device="cpu")
                local = a.family.get("local")
                print(f"  {name:<9} seed {seed} {label:<15} {a.verdict.code:<17} holding: "
                      f"{', '.join(a.family.holding) or 'none'}; regions' Holm p "
                      f"{local.p_adjusted if local else float('nan'):.3f}; named {a.n_over_copied}"
                      + (f" (TabDDPM fit {tabddpm_s:.0f} s)" if label == "TabDDPM" else ""), flush=True)


COST = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import pandas as pd, memviz
if sys.argv[2] == "no-dr":   # the same audit without issue 39's density-ratio attack (not in the previous audit)
    import memviz.evidence.suite as suite
    suite.density_ratio_attack = lambda *a, **k: None
train, syn, hold = (pd.read_parquet(sys.argv[1] + f"/{n}.parquet") for n in ("train", "syn", "hold"))
schema = sys.argv[1] + "/meta.json"
t0 = time.perf_counter()
a = memviz.audit(train, syn, hold, schema=schema, device="cpu")
print(json.dumps({"seconds": time.perf_counter() - t0, "code": a.verdict.code, "file": memviz.__file__}))
"""


def part_cost(data: Path, old: Path | None, repeats: int):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_evidence import noisy

    train, test = memviz.load_dataset(data / "adult")
    rng = np.random.default_rng(0)
    syn = noisy(test.data, train.schema, len(train), rng)
    with tempfile.TemporaryDirectory() as d:
        train.data.to_parquet(Path(d) / "train.parquet")
        syn.to_parquet(Path(d) / "syn.parquet")
        test.data.to_parquet(Path(d) / "hold.parquet")
        train.schema.save(Path(d) / "meta.json")
        codes = {"new": (ROOT, "all"), "new without the density-ratio attack": (ROOT, "no-dr")} | (
            {"old": (old, "all")} if old else {})
        times = {k: [] for k in codes}
        print(f"\ncost: memviz.audit at full Adult ({len(train):,} training, {len(syn):,} generated, "
              f"{len(test):,} hold-out rows), defaults, {repeats} runs each alternated ({load()})")
        for _ in range(repeats):
            for k, (path, what) in codes.items():
                env = dict(os.environ, PYTHONPATH=str(path))
                out = subprocess.run([sys.executable, "-c", COST, d, what], capture_output=True, text=True, env=env,
                                     cwd=str(path))
                if out.returncode:
                    raise SystemExit(out.stderr[-2000:])
                r = json.loads(out.stdout.strip().splitlines()[-1])
                times[k].append(r["seconds"])
                print(f"  {k}: {r['seconds']:.1f} s, verdict {r['code']} ({r['file']})", flush=True)
        med = {k: float(np.median(v)) for k, v in times.items()}
        line = ", ".join(f"{k} median {v:.1f} s" for k, v in med.items())
        if "old" in med:
            line += (f": {med['new'] / med['old']:.2f}x the previous audit, {med[list(codes)[1]] / med['old']:.2f}x "
                     "without the density-ratio attack (issue 36's target: <= 1.3x)")
        print(f"  {line} ({load()})")


def main():
    global TABLES
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--parts", default="null,rows,power,masking,cases,models,cost")
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--old", help="a checkout of the previous code, for the cost part")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=3, help="the models part's seeds per table")
    ap.add_argument("--tables", default="adult,default,shoppers,numeric", help="the tables of null, rows and power")
    args = ap.parse_args()
    data, parts = Path(args.data), args.parts.split(",")
    TABLES = tuple(args.tables.split(","))
    if "null" in parts:
        part_null(data, args.resamples)
    if "rows" in parts:
        part_rows(data, args.resamples)
    if "power" in parts:
        part_power(data, max(1, args.resamples // 5))
    if "masking" in parts:
        part_masking()
    if "cases" in parts:
        part_cases(data, args.resamples)
    if "models" in parts:
        part_models(data, args.seeds)
    if "cost" in parts:
        part_cost(data, Path(args.old) if args.old else None, args.repeats)


if __name__ == "__main__":
    main()
