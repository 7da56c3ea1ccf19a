"""Benchmark: what the package's face costs (issue 37: `memviz --help` under 1 s, no torch on import).

Times whole processes, the median of ``--repeats`` runs each, in one run and alternated: a bare
``python -c pass`` (the interpreter's own start, the baseline), ``python -c "import memviz"``,
``memviz --help`` and one subcommand's ``--help`` (``memviz audit --help``, which imports that command
and what its defaults need). Target: ``memviz --help`` < 1 s.

Usage: python benchmarks/bench_cli.py [--repeats 9]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    memviz = shutil.which("memviz") or "memviz"
    cmds = {"python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import memviz'": [sys.executable, "-c", "import memviz"],
            "memviz --help": [memviz, "--help"],
            "memviz audit --help": [memviz, "audit", "--help"]}
    times = {k: [] for k in cmds}
    for _ in range(args.repeats):
        for k, c in cmds.items():
            times[k].append(timed(c))
    base = statistics.median(times["python -c pass"])
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {args.repeats} runs each, alternated")
    for k, v in times.items():
        m = statistics.median(v)
        print(f"  {k:<28} {m:6.3f} s  ({m / base:4.1f}x a bare interpreter; {min(v):.3f} to {max(v):.3f})")
    print(f"memviz --help: {statistics.median(times['memviz --help']):.3f} s (target < 1 s)")


if __name__ == "__main__":
    main()
