"""The pilot across scales: where between 250 and 32,561 rows does TabDDPM copy on a CPU?

A grid of (training rows N, epochs E) on one dataset, a few seeds, one TabDDPM warm-up per
cell of the grid and seed (the scale's preset, ``n_samples`` generated rows per check, the
first ``max_test`` test rows as the floor's hold-out). The warm-up is the study's own
(:func:`memviz.warmup.run.ensure_warmup`): resumable from its last check, reused when finished,
so a later 10-seed test at the chosen (N, E) reuses the pilot's seeds. Runs go in the
design's order (``runs``): the first seed of each question first (does the excess stay
positive with more rows? with more epochs?), then second seeds, the costliest setting last,
so a stopped pilot leaves the most informative runs behind.

What is read from each run (``pilot.csv``, one line per check, committed):

    excess = mem ratio − floor (95 % Newcombe interval, :func:`memviz.measure.floor.excess`),
    copy share c = excess / (1 − floor)

(c: the share of the rows that fresh real rows would *not* have flagged that the model's rows
do flag; it lets runs whose floors differ, as they do with N, be compared). ``design.json``
holds the grid, the order and every setting tried.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from memviz.device import torch_threads
from memviz.io import atomic_write_csv, atomic_write_json, read_json
from memviz.models.presets import PRESETS
from memviz.study.floors import subsample
from memviz.tables.data import load_dataset
from memviz.warmup.run import WarmupConfig, ensure_warmup, load_warmup

#: per-check columns kept in pilot.csv
COLUMNS = ("check", "epoch", "n_synthetic", "mem_ratio", "floor", "floor_low", "floor_high", "excess",
           "excess_low", "excess_high")


@dataclass(frozen=True)
class PilotDesign:
    """The pilot's grid (module docstring).

    Parameters
    ----------
    dataset : the dataset folder's name.
    runs : (training rows N, epochs E, seed) in run order (N drawn from the training split with
        seed 0, as every scale's).
    preset : TabDDPM preset; ``tabddpm_params`` overrides it.
    n_samples : generated rows per check.
    max_test : test rows (seed 1), the floor's hold-out.
    """

    dataset: str = "adult"
    runs: tuple = ((1000, 4000, 0), (3000, 4000, 0), (1000, 4000, 1), (1000, 8000, 0), (3000, 4000, 1),
                   (1000, 8000, 1), (3000, 8000, 0))
    preset: str = "cpu-quick"
    n_samples: int = 2000
    max_test: int = 5000
    tabddpm_params: dict = field(default_factory=dict)

    def order(self) -> list[tuple[int, int, int]]:
        """(N, E, seed) in run order."""
        return [tuple(int(x) for x in r) for r in self.runs]

    def settings(self) -> list[tuple[int, int]]:
        """The (N, E) settings, in order of first appearance."""
        return list(dict.fromkeys((n, e) for n, e, _ in self.order()))


PILOT = PilotDesign()


def run_dir(out: Path, design: PilotDesign, n: int, e: int, seed: int) -> Path:
    return Path(out) / "pilot" / design.dataset / "runs" / f"n{n}_e{e}" / f"warmup_s{seed}"


def pilot_frame(out: Path, design: PilotDesign = PILOT) -> pd.DataFrame:
    """Every pilot warm-up's checks so far, from the run folders, with ``finished`` (no run: an empty frame)."""
    frames = []
    for n, e, s in design.order():
        d = run_dir(out, design, n, e, s)
        try:
            w = load_warmup(d)
        except Exception:  # noqa: BLE001 - not started, unfinished or unreadable: not in the table yet
            continue
        if not len(w.per_check):
            continue
        pc = w.per_check[[c for c in COLUMNS if c in w.per_check.columns]].copy()
        steps = int(w.config.epochs) * int(np.ceil(n / min(n, int(_batch(design)))))
        pc.insert(0, "seed", s)
        pc.insert(0, "epochs", e)
        pc.insert(0, "n_train", n)
        pc["steps"] = steps
        pc["seconds"] = float(w.seconds)
        pc["finished"] = w.status == "finished"   # an unfinished run's checks so far (it resumes from the last)
        frames.append(pc)
    if not frames:
        return pd.DataFrame(columns=["n_train", "epochs", "seed", *COLUMNS, "steps", "seconds", "finished", "copy_share"])
    out_f = pd.concat(frames, ignore_index=True)
    out_f["copy_share"] = out_f["excess"] / (1.0 - out_f["floor"])
    return out_f


def _batch(design: PilotDesign) -> int:
    return int(design.tabddpm_params.get("batch_size", PRESETS[design.preset].batch_size))


def run_pilot(data_dir: Path, out: Path, design: PilotDesign = PILOT, device: str = "cpu",
              progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run (resume, reuse) every pilot warm-up in order; rewrite ``OUT/pilot/pilot.csv`` after each."""
    say = progress or (lambda msg: None)
    train_full, test_full = load_dataset(Path(data_dir) / design.dataset)
    test = subsample(test_full, design.max_test, seed=1)
    folder = Path(out) / "pilot"
    atomic_write_json(folder / "design.json", {**asdict(design), "order": design.order(), "batch_size": _batch(design)})
    for n, e, s in design.order():
        train = subsample(train_full, n, seed=0)
        cfg = WarmupConfig(preset=design.preset, epochs=e, n_samples=design.n_samples, seed=s, device=device,
                           model_params=dict(design.tabddpm_params))
        t0 = time.perf_counter()
        say(f"pilot: {design.dataset} N={n:,} E={e:,} seed {s}")
        with torch_threads(1):
            w = ensure_warmup(train, cfg, run_dir(out, design, n, e, s), holdout=test)
        say(f"pilot: N={n:,} E={e:,} seed {s}: excess {w.per_check['excess'].iloc[-1]:+.3f} "
            f"({time.perf_counter() - t0:.0f} s)")
        atomic_write_csv(folder / "pilot.csv", pilot_frame(out, design))
    return stored_pilot(out)


def refresh_pilot(out: Path, design: PilotDesign = PILOT) -> None:
    """Rewrite ``OUT/pilot/pilot.csv`` from the run folders when they are here (not committed: else a no-op)."""
    if (Path(out) / "pilot" / design.dataset / "runs").is_dir():
        frame = pilot_frame(out, design)
        if len(frame):
            atomic_write_csv(Path(out) / "pilot" / "pilot.csv", frame)


def stored_pilot(out: Path) -> pd.DataFrame | None:
    """The committed ``OUT/pilot/pilot.csv`` (None when absent)."""
    f = Path(out) / "pilot" / "pilot.csv"
    return pd.read_csv(f) if f.is_file() else None


def stored_design(out: Path) -> dict | None:
    f = Path(out) / "pilot" / "design.json"
    return read_json(f, "pilot design") if f.is_file() else None


if __name__ == "__main__":  # python -m memviz.study.pilot DATA_DIR OUT
    import sys

    run_pilot(Path(sys.argv[1]), Path(sys.argv[2]), PILOT, "cpu", lambda m: print(m, flush=True))
