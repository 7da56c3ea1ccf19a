"""Benchmark: what the hardened readers save on hostile tables (issue 26, item 2).

1. **A 99 %-unique ID column** on the 3,000-row sample (2,970 distinct ``ID-…`` strings): a 2-epoch
   warm-up with the schema this tree infers (the ID left out) against the same warm-up with the ID
   kept as a categorical (what main inferred), each in its own process: wall seconds and peak
   resident memory (``ru_maxrss``).
2. **A 110,000-column header** (3.4 MB, one data row): seconds from ``read_frame`` to its one-line
   error, in this tree and, with ``--baseline TREE``, in another checkout (e.g. main's; its
   refusal took minutes).

Usage::

    python benchmarks/bench_hostile.py [--baseline /path/to/main/checkout] [--epochs 2]

Every case runs in a fresh subprocess; ratios are taken within one run, beside the load average.
The last stdout line is a JSON object with every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

ID_CASE = r'''
import json, resource, sys, time, warnings
import numpy as np, pandas as pd
from memviz.tables.data import load_table, sample_data_dir, table_from_frame, infer_schema
from memviz.warmup.run import WarmupConfig, run_warmup
keep_id, epochs, out = sys.argv[1] == "1", int(sys.argv[2]), sys.argv[3]
df = pd.read_csv(sample_data_dir() / "train.csv")
n = len(df); k = int(0.99 * n)
rng = np.random.default_rng(0)
ids = [f"ID-{i:06d}" for i in range(k)] + [f"ID-{i % k:06d}" for i in range(n - k)]
df.insert(0, "customer", rng.permutation(ids))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    schema = infer_schema(df, target="income", source="t.csv")
if keep_id and "customer" not in schema.categorical:
    import memviz.tables.data as D
    D.MAX_CATEGORIES = 10**9  # main's behaviour: no cap on categories
    schema = schema.with_overrides({"customer": "categorical"})
table = table_from_frame(df, schema, source="t.csv")
t0 = time.perf_counter()
run_warmup(table, WarmupConfig(epochs=epochs, check_every=epochs, device="cpu", preset="cpu-quick"), out)
print(json.dumps({"seconds": time.perf_counter() - t0, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "id_used": "customer" in schema.categorical, "n_categorical": len(schema.categorical)}))
'''

WIDE_CASE = r'''
import json, sys, time
from memviz.errors import MemvizError
from memviz.tables.data import read_frame
t0 = time.perf_counter()
try:
    read_frame(sys.argv[1]); msg = None
except MemvizError as exc:
    msg = str(exc)
print(json.dumps({"seconds": time.perf_counter() - t0, "error": msg}))
'''


def _run(code: str, tree: Path, *args, timeout: float = 3600) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=tree)
    if r.returncode != 0:
        return {"failed": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, help="another checkout for the wide header's 'before'")
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    load0 = os.getloadavg()
    out: dict = {}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        res = {}
        for keep in (0, 1):
            res["with_id" if keep else "id_left_out"] = _run(ID_CASE, HERE, keep, args.epochs, d / f"run{keep}")
        out["id_column"] = res
        a, b = res["with_id"], res["id_left_out"]
        if "seconds" in a and "seconds" in b:
            out["id_column"]["time_ratio"] = a["seconds"] / b["seconds"]
            out["id_column"]["memory_ratio"] = a["peak_mb"] / b["peak_mb"]
        print(f"ID column, {args.epochs} epochs: kept as categorical {a} | left out {b}", flush=True)

        n = 110_000
        wide = d / "wide.csv"
        wide.write_text(",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("1" for _ in range(n)) + "\n")
        out["wide_header"] = {"bytes": wide.stat().st_size, "this_tree": _run(WIDE_CASE, HERE, wide)}
        if args.baseline:
            out["wide_header"]["baseline"] = _run(WIDE_CASE, args.baseline, wide)
            bs, ts = out["wide_header"]["baseline"].get("seconds"), out["wide_header"]["this_tree"].get("seconds")
            if bs and ts:
                out["wide_header"]["ratio"] = bs / ts
        print(f"110k-column header: {out['wide_header']}", flush=True)
    out["load_before"], out["load_after"] = load0, os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
