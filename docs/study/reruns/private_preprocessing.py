"""Issue 50's reduced rerun of the private grid with the private preprocessing (scale ``mid``, DP arms only).

    python docs/study/reruns/private_preprocessing.py ../shared/datasets OUT SEED...

Each seed's DP-SGD arms (ε = 1 and 10, the whole pipeline's; Adult's bounds and categories public:
:mod:`memviz.study.public`) run as the study's ``private`` grid runs them (same rows, steps, TabDDPM settings) into
``OUT/private_pre_s{seed}`` (resumable); the finished cells are written to
``docs/study/mid/adult/private_preprocessing.csv``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from memviz.compare import CompareConfig, run_grid
from memviz.study.floors import study_tables
from memviz.study.mitigation import tabddpm_params
from memviz.study.public import PUBLIC
from memviz.study.scales import SCALES

COLUMNS = ["seed", "method", "status", "mem_ratio", "shape", "trend", "mle",
           "epsilon", "epsilon_spent", "epsilon_preprocessing", "epsilon_sgd", "delta", "delta_spent",
           "noise_multiplier", "steps", "fit_seconds", "total_seconds"]


def main(data: str, out: str, seeds: list[int]) -> None:
    scale = SCALES["mid"]
    train, test, _ = study_tables(Path(data) / "adult", scale)
    frames = []
    for seed in seeds:
        cfg = CompareConfig(methods=("dp@1", "dp@10"), models=("tabddpm",), seeds=(seed,), device="cpu", n_jobs=1,
                            model_params={"tabddpm": tabddpm_params(scale, len(train))}, privacy=dict(PUBLIC["adult"]))
        res = run_grid(train, test, cfg, Path(out) / f"private_pre_s{seed}",
                       progress=lambda ev: print(ev, flush=True) if ev.get("event") == "cell" else None)
        frames.append(res)
    table = pd.concat(frames, ignore_index=True)
    dest = Path("docs/study/mid/adult/private_preprocessing.csv")
    old = pd.read_csv(dest) if dest.exists() else None
    table = table.loc[:, [c for c in COLUMNS if c in table.columns]]
    if old is not None:
        table = pd.concat([old[~old["seed"].isin(seeds)], table], ignore_index=True).sort_values(["seed", "method"])
    table.to_csv(dest, index=False)
    print(table.to_string())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]])
