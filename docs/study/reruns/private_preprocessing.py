"""Issue 50's reduced rerun of the private grid with the private preprocessing (scale ``mid``, DP arms only).

    python docs/study/reruns/private_preprocessing.py ../shared/datasets OUT SEED...
    python docs/study/reruns/private_preprocessing.py read      # the private family's claims read again

Each seed's DP-SGD arms (ε = 1 and 10, the whole pipeline's; Adult's bounds and categories public:
:mod:`memviz.study.public`) run as the study's ``private`` grid runs them (same rows, steps, TabDDPM settings) into
``OUT/private_pre_s{seed}`` (resumable); the finished cells are written to
``docs/study/mid/adult/private_preprocessing.csv``. ``read`` puts those cells' figures in place of the old DP cells
of ``docs/study/mid/adult/results.csv`` and tests the private family's claims again (:func:`memviz.study.findings.
claim_tests`, Holm within the family: :func:`memviz.study.inference.adjust`), beside the old pipeline's reading.
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


def read(results: str = "docs/study/mid/adult/results.csv",
         cells: str = "docs/study/mid/adult/private_preprocessing.csv") -> pd.DataFrame:
    """The private family's claims on the committed cells and with the private pipeline's DP cells in their place."""
    from memviz.study.findings import claim_tests
    from memviz.study.inference import adjust

    old, new = pd.read_csv(results), pd.read_csv(cells)
    private = old.copy()
    for r in new.itertuples():
        at = (private["method"] == r.method) & (private["seed"] == r.seed) & (private["model"] == "tabddpm")
        if at.sum() != 1:
            raise SystemExit(f"{results}: no one cell for {r.method}, seed {r.seed}")
        for f in ("mem_ratio", "shape", "trend", "mle"):
            private.loc[at, f] = getattr(r, f)
    rows = []
    for name, table in (("old pipeline", old), ("private pipeline", private)):
        tests = adjust([t for t in claim_tests(table) if t["family"] == "private"])
        rows += [{"pipeline": name, "claim": t["key"], "seeds": t["n"], "effect": 100 * t["effect"],
                  "low": 100 * t["effect_low"], "high": 100 * t["effect_high"], "p_adj": t["p_adj"],
                  "label": t["label"]} for t in tests]
    return pd.DataFrame(rows)


if __name__ == "__main__":
    if sys.argv[1:] == ["read"]:
        print(read().round(3).to_string(index=False))
    else:
        main(sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]])
