"""Benchmark: the memorization check at Adult scale (run by hand; prints a table, asserts nothing).

Training rows: the full Adult training split (32,561 rows, ``--dataset``). Synthetic rows:
Adult test rows resampled with replacement (seeded) to ``--n-synthetic`` rows (default
32,561), 1 % of them replaced by planted near copies of training rows (``fnlwgt`` + 1)
and 0.5 % by exact copies. Measured side by side in one run, on the CPU:

(a) a reference-style loop: per generated row, one vectorised numpy float64 pass over all
    training rows, the way the TabCutMix reference computes the metric (raw numericals,
    min-max of e over the training rows, mismatches of the raw category values, the two
    smallest by argmin), on ``--subsample`` generated rows -> ms per generated row. Its
    arrays are extracted once (the reference re-extracts them from pandas for every row),
    so it is faster than the reference and the ratios below are conservative;
(b) ``memviz.measure.memorization.memorization`` with the engine's default (``algorithm="auto"``:
    the pruned search on CPU) on all generated rows, engine fit included, median of
    ``--repeats`` runs -> seconds, ms per row, and the ratio per generated row against (a)
    (target >= 100x);
(c) the same with the dense path (``algorithm="dense"``: numpy on the CPU, the pass CUDA runs in torch), one run;
(d) with ``--old-ref REF``: the engine of that git commit (e.g. the last one before the
    pruned search), run from ``git archive REF memviz`` in a subprocess, one run;
(e) peak RSS (ru_maxrss) of a subprocess that loads the data and runs (b) once
    (target < 1 GB), with its RSS before the check;
(f) agreement with the row-at-a-time float64 implementation ``tests/naive.py`` on the
    subsample: NaN pattern, memorized flags, NN1, max |r - r_naive| (target <= 1e-12);
(g) the worst case for the pruned search, an all-numerical table (Adult's numerical
    columns only, no category to prune by): (a), (b), (c) and (d) again.

``--wide``: the same on a wide table instead of Adult (:func:`wide_data`: 40 numerical + 2
categorical columns, 32,561 training rows, the synthetic rows fresh draws with the same
planted near and exact copies), where ``auto`` takes the wide search (matrix-product bounds,
:mod:`memviz.engine.wide`; target >= 100x the loop on 2 CPU threads).

Measured (``--wide --no-rss --no-dense --old-ref 2707697``, 2 threads, load 9.0-9.5 on the 2
cores, one run): loop 14.4 ms/row (CPU 6.2); wide search median 11.6 s wall, 4.75-5.66 s CPU
-> **40.5x** the loop by wall time, 41.3x by CPU time (target 100x: not met); the previous
engine (41 product columns) 16.5 s in the same run, so 1.4x faster; flags, NaN pattern and
ratios identical to it and to the float64 loop. The product now takes 12 columns (10 of the
40 carry all but 1.1e-4 of the sum of squares, the other 30 enter through their norm): its
arithmetic is 2·32,561·32,768·12 = 2.6e10 flops (the 41-column product: 8.7e10), about 1 s on
one thread at the ~25 GFLOP/s float32 rate of that shape measured at load 5. One thread's
stage CPU times (thread_time, all 32,561 rows, load 4): bounds (product + block min/max)
3.0 -> 1.8 s, of which the two block reductions ~1 s (0.42 ns per pair each, more than the
product now); exact differences 1.2 s (5 blocks of 32 rows per query row: 1 for min e, 1 for
max e, 3 for the k + 1 nearest blocks); the per-block bounds, selection and top-k over
(rows x 1,024 blocks) float64 arrays ~1.6 s; total 5.6-6.3 -> 4.7-4.9 s.

Quiet machine (2026-12-03, load 0.8-0.9, ``--wide --no-rss --no-dense``): loop 2.60 ms/row;
wide search median 1.35 s wall, 2.10-2.16 s CPU -> 62.8x the loop by wall time, 39.3x by CPU
time (target 100x: not met); identical to the float64 loop (max |r - r_naive| 0). After the
rows' own bounds inside the kept blocks (exact differences for ~4 rows per query row instead of
5 blocks of 32), tile-first block tests and 1,024-row tasks, the same day: 0.92 s = 104.8x and
106.2x (loop 2.97 and 3.02 ms/row) in two runs; an hour later 1.01-1.12 s = 90.6-97.3x in three
(the loop 2.97-3.11 ms/row); on the final code 0.83 s = 110.5x and 111.3x (loop 2.83 ms/row);
exact in every run. ``--no-dense --no-rss`` on Adult then: 0.43 s = 326x the loop (4.35
ms/row).

The machine may be shared: the load average is printed next to every timing, and the
ratios compare figures measured in the same run.

Usage: python benchmarks/bench_memorize.py [--n-synthetic M] [--repeats R] [--subsample S]
       [--dataset FOLDER] [--seed SEED] [--old-ref REF] [--no-rss] [--no-numeric] [--wide [--n-train N]]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
if "--child-old" not in sys.argv:      # the old engine's child imports memviz from PYTHONPATH
    sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

from memviz.measure.memorization import THRESHOLD, memorization  # noqa: E402
from memviz.tables.data import Table, load_dataset  # noqa: E402
from memviz.tables.schema import Schema  # noqa: E402

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


def numeric_only(train: Table, syn: pd.DataFrame) -> tuple[Table, pd.DataFrame]:
    """The worst case for the pruned search: the same rows, numerical columns only."""
    num = list(train.schema.numerical)
    schema = Schema(numerical=tuple(num), categorical=(), target=None, task="none")
    return Table(train.data[num].copy(), schema, train.source + " (numerical only)"), syn[num].copy()


WIDE_NUM, WIDE_CAT = 40, (9, 2)     # the wide table: 40 numerical columns, categoricals of 9 and 2 values


def wide_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """n rows of the wide table: integer columns of Adult-like ranges (ages, hours, counts,
    fnlwgt-sized) and floats of scales 1e-2 to 1e4, each column independent."""
    cols = {}
    for j in range(WIDE_NUM):
        kind = j % 4
        if kind == 0:
            cols[f"x{j}"] = rng.integers(17, 90, n).astype(float)
        elif kind == 1:
            cols[f"x{j}"] = rng.integers(10_000, 1_500_000, n).astype(float)
        elif kind == 2:
            cols[f"x{j}"] = rng.normal(0, 10.0 ** (j % 7 - 2), n)
        else:
            cols[f"x{j}"] = rng.integers(0, 100, n).astype(float)
    for j, size in enumerate(WIDE_CAT):
        cols[f"c{j}"] = np.array([f"v{v}" for v in range(size)], dtype=object)[rng.integers(0, size, n)]
    return pd.DataFrame(cols)


def wide_data(n_train: int, n_syn: int, seed: int) -> tuple[Table, pd.DataFrame]:
    """The wide table: training rows and synthetic rows (fresh draws, 1 % near copies with
    x1 + 1, 0.5 % exact copies of training rows)."""
    rng = np.random.default_rng(seed)
    df = wide_frame(n_train, rng)
    df.index = pd.Index(np.arange(n_train), name="row_id")
    schema = Schema(numerical=tuple(c for c in df if c[0] == "x"), categorical=tuple(c for c in df if c[0] == "c"),
                    target=None, task="none")
    train = Table(df, schema, "wide table")
    syn = wide_frame(n_syn, rng)
    n_near, n_exact = n_syn // 100, n_syn // 200
    slots = rng.choice(n_syn, n_near + n_exact, replace=False)
    planted = df.iloc[rng.integers(0, n_train, n_near + n_exact)].reset_index(drop=True)
    planted.loc[: n_near - 1, "x1"] = planted.loc[: n_near - 1, "x1"] + 1
    syn.iloc[slots] = planted.to_numpy()
    return train, syn.astype(df.dtypes.to_dict())


def data(args):
    if getattr(args, "wide", False):
        return wide_data(args.n_train, args.n_synthetic, args.seed)
    train, test = load_dataset(args.dataset)
    syn = make_synthetic(train, test, args.n_synthetic, args.seed)
    return (numeric_only(train, syn) if getattr(args, "numeric", False) else (train, syn))


def reference_loop(train: Table, syn: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per generated row, one vectorised float64 pass over all training rows -> (len(rows),) r."""
    s = train.schema
    num, cat = list(s.distance_numerical), list(s.distance_categorical)
    xn, xc = train.data[num].to_numpy(dtype=float), train.data[cat].to_numpy(dtype=object)
    gn, gc = syn[num].to_numpy(dtype=float), syn[cat].to_numpy(dtype=object)
    n = len(num) + len(cat)
    out = []
    for i in rows:
        d = np.zeros(len(xn))
        if num:
            e = np.sqrt(((xn - gn[i]) ** 2).sum(axis=1))
            lo, hi = e.min(), e.max()
            d += (e - lo) / (hi - lo) if hi > lo else 0.0
        if cat:
            d += (xc != gc[i]).sum(axis=1)
        d /= n
        j = np.argmin(d)
        d1 = d[j]
        d[j] = np.inf
        d2 = d.min()
        out.append(d1 / d2 if d2 > 0 else np.nan)
    return np.array(out)


def timed_check(train, syn, algorithm="auto"):
    """memorization() with a fresh engine (fit included, as without one): wall and CPU
    seconds, the result, the engine's Neighbors (its cost counts) and the path it took."""
    from memviz.engine.neighbors import NeighborEngine
    got = {}
    t0, c0 = time.perf_counter(), time.process_time()
    eng = NeighborEngine(device="cpu", algorithm=algorithm).fit(train)
    query = eng.kneighbors
    eng.kneighbors = lambda *a, **kw: got.setdefault("nb", query(*a, **kw))
    res = memorization(train, syn, engine=eng)
    return time.perf_counter() - t0, time.process_time() - c0, res, got["nb"], eng.algorithm_


def child(args) -> None:
    """--child-rss / --child-old: one full check in a fresh interpreter, JSON on stdout."""
    train, syn = data(args)
    base = rss_mib()
    t0 = time.perf_counter()
    res = memorization(train, syn, device="cpu")
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024                    # KiB on Linux
    if args.save:
        np.savez(args.save, ratio=res.ratio, nn1=res.nn1_pos, memorized=res.memorized)
    print(json.dumps({"baseline_mib": base, "peak_mib": peak, "seconds": seconds, "mem_ratio": res.mem_ratio,
                      "load": load_avg()}))


def run_child(args, flag: str, env=None, numeric=False, save=None) -> dict:
    cmd = [sys.executable, __file__, flag, "--n-synthetic", str(args.n_synthetic), "--seed", str(args.seed),
           "--dataset", str(args.dataset), "--n-train", str(args.n_train)] + (["--numeric"] if numeric else []) \
        + (["--wide"] if args.wide else []) + (["--save", save] if save else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if out.returncode:
        raise RuntimeError(f"{flag} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def old_tree(ref: str) -> Path:
    """``git archive REF memviz`` extracted into a temporary folder."""
    dest = Path(tempfile.mkdtemp(prefix="memviz-old-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "memviz"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def rss_mib() -> float:
    """Current resident set size (Linux /proc), MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def agreement(res_sub, ref) -> dict:
    r, nr = res_sub.ratio, ref["ratio"]
    nan_ok = bool(np.array_equal(np.isnan(r), np.isnan(nr)))
    fin = ~np.isnan(nr)
    max_dr = float(np.max(np.abs(r[fin] - nr[fin]))) if fin.any() else 0.0
    with np.errstate(invalid="ignore"):
        flags_ok = bool(np.array_equal(res_sub.memorized, nr < THRESHOLD))
    sep = (ref["d2"] - ref["d1"]) > 1e-6
    nn1_ok = bool(np.array_equal(res_sub.nn1_pos[sep], ref["nn1"][sep]))
    return {"nan_pattern": nan_ok, "flags": flags_ok, "nn1": nn1_ok, "max_abs_dr": max_dr,
            "all_ok": nan_ok and flags_ok and nn1_ok and max_dr <= 1e-12}


def compare_old(res, path) -> str:
    old = np.load(path)
    same_flags = np.array_equal(old["memorized"], res.memorized)
    fin = ~np.isnan(res.ratio) & ~np.isnan(old["ratio"])
    nan_same = np.array_equal(np.isnan(res.ratio), np.isnan(old["ratio"]))
    return (f"flags {'identical' if same_flags else 'DIFFER'}, NaN pattern {'identical' if nan_same else 'DIFFERS'}, "
            f"max |r - r_old| {np.max(np.abs(res.ratio[fin] - old['ratio'][fin])):.1e}")


def section(label, train, syn, args, sub, old_dir, numeric):
    """(a)-(d) (and (f) when not numeric) for one table; returns printable lines."""
    M = len(syn)
    lines = []
    loop_rows = sub[: max(1, len(sub))]
    reference_loop(train, syn, loop_rows[:2])                                           # warm-up
    la = load_avg()
    t0, c0 = time.perf_counter(), time.process_time()
    reference_loop(train, syn, loop_rows)
    loop_ms = (time.perf_counter() - t0) / len(loop_rows) * 1e3
    loop_cpu_ms = (time.process_time() - c0) / len(loop_rows) * 1e3
    lines.append(f"(a) reference-style loop, {len(loop_rows)} rows: {loop_ms:7.2f} ms/row (CPU {loop_cpu_ms:.2f}) -> "
                 f"~{loop_ms * M / 1e3:6.0f} s for all {M} rows   [{la}]")
    times, cpu = [], []
    for _ in range(args.repeats):
        t, c, res, nb, path = timed_check(train, syn)
        times.append(t)
        cpu.append(c)
    la = load_avg()
    med = float(np.median(times))
    ms = med / M * 1e3
    lines.append(f"(b) memviz auto ({path} search): median {med:6.2f} s of {args.repeats} "
                 f"({', '.join(f'{t:.2f}' for t in times)}; CPU {', '.join(f'{c:.2f}' for c in cpu)} s) -> "
                 f"{ms:7.4f} ms/row = {loop_ms / ms:6.1f}x the loop"
                 + ("" if numeric else f" (target >= 100x: {'met' if loop_ms / ms >= 100 else 'NOT met'})")
                 + f"; by CPU time {loop_cpu_ms * M / 1e3 / float(np.median(cpu)):6.1f}x (a loaded machine gives "
                   f"a multi-threaded pass a smaller share of its cores than a one-thread loop)   [{la}]")
    lines.append(f"    rows answered by the {path} search: {nb.n_pruned} of {M}, by a dense pass: "
                 f"{nb.n_exhaustive}; mem_ratio {res.mem_ratio:.4f}")
    if not args.no_dense:
        td, _, dres, _, _ = timed_check(train, syn, "dense")
        same = np.array_equal(dres.nn1_pos, res.nn1_pos) and np.array_equal(dres.d1, res.d1) \
            and np.array_equal(dres.d2, res.d2)
        lines.append(f"(c) memviz dense path: {td:6.2f} s -> {td / M * 1e3:7.4f} ms/row = {loop_ms / (td / M * 1e3):6.1f}x "
                     f"the loop; auto is {td / med:5.1f}x faster; NN1, d1, d2 "
                     f"{'bit-identical' if same else 'DIFFER'} to auto   [{load_avg()}]")
    if old_dir is not None:
        path = os.path.join(tempfile.gettempdir(), f"memviz-old-{os.getpid()}.npz")
        o = run_child(args, "--child-old", env={**os.environ, "PYTHONPATH": str(old_dir)}, numeric=numeric, save=path)
        lines.append(f"(d) old engine ({args.old_ref}): {o['seconds']:6.2f} s -> {o['seconds'] / M * 1e3:7.4f} ms/row = "
                     f"{loop_ms / (o['seconds'] / M * 1e3):6.1f}x the loop; auto is {o['seconds'] / med:5.1f}x faster "
                     f"[{o['load']}]")
        lines.append(f"    auto vs old: {compare_old(res, path)}")
        os.unlink(path)
    if not numeric:
        from naive import naive_memorization
        s = train.schema
        ref = naive_memorization(train.data.reset_index(drop=True), syn.iloc[sub].reset_index(drop=True),
                                 list(s.distance_numerical), list(s.distance_categorical))
        agree = agreement(memorization(train, syn.iloc[sub].reset_index(drop=True), device="cpu"), ref)
        lines.append(f"(f) agreement with the float64 loop (tests/naive.py) on {len(sub)} rows: NaN pattern "
                     f"{agree['nan_pattern']}, memorized flags {agree['flags']}, NN1 {agree['nn1']}, "
                     f"max |r - r_naive| {agree['max_abs_dr']:.1e} -> {'OK' if agree['all_ok'] else 'MISMATCH'}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-synthetic", type=int, default=32561)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--subsample", type=int, default=150)
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--old-ref", default=None, help="git commit of an earlier engine to time beside this one")
    ap.add_argument("--no-rss", action="store_true", help="skip the subprocess peak-RSS run")
    ap.add_argument("--no-dense", action="store_true", help="skip the dense-path run")
    ap.add_argument("--no-numeric", action="store_true", help="skip the all-numerical worst case")
    ap.add_argument("--wide", action="store_true", help="the wide table (40 numerical + 2 categorical) instead of Adult")
    ap.add_argument("--n-train", type=int, default=32561, help="training rows of the wide table")
    ap.add_argument("--child-rss", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-old", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--numeric", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--save", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_rss or args.child_old:
        child(args)
        return

    import torch
    print(f"machine: {os.cpu_count()} CPU cores, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{load_avg()} -- the machine may be shared with other jobs, timings are noisy")
    train, syn = data(args)
    s = train.schema
    print(f"data: {len(train)} training rows x {len(syn)} synthetic rows ({args.dataset.name}); "
          f"{len(s.distance_numerical)} numerical + {len(s.distance_categorical)} categorical distance columns")
    rng = np.random.default_rng(args.seed + 1)
    sub = np.sort(rng.choice(len(syn), min(args.subsample, len(syn)), replace=False))
    old_dir = old_tree(args.old_ref) if args.old_ref else None
    line = "-" * 100
    print(line)
    try:
        for out in section("mixed", train, syn, args, sub, old_dir, numeric=False):
            print(out, flush=True)
        if not args.no_rss:
            rss = run_child(args, "--child-rss")
            print(f"(e) peak RSS of the full check (subprocess): {rss['peak_mib']:.0f} MiB (RSS before the check: "
                  f"{rss['baseline_mib']:.0f} MiB; check took {rss['seconds']:.2f} s) -> "
                  f"{'under' if rss['peak_mib'] < 1024 else 'OVER'} the 1 GB target")
        if not args.no_numeric and not args.wide:
            ntrain, nsyn = numeric_only(train, syn)
            print(f"(g) worst case for the pruned search: {len(ntrain.schema.numerical)} numerical columns only")
            for out in section("numeric", ntrain, nsyn, args, sub, old_dir, numeric=True):
                print("    " + out, flush=True)
    finally:
        if old_dir is not None:
            shutil.rmtree(old_dir, ignore_errors=True)
    print(line)


if __name__ == "__main__":
    main()
