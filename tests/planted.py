"""A planted run for the leak tests: who is copied and which cells match are known by construction.

``planted_run`` writes a finished run through the RunStore API (no model): 40 training
rows with non-contiguous row_ids, 3 checks of 40 generated rows whose NN1 and memorized
flags are planted. Memorized rows copy ``a`` (up to 1e-12 relative) and ``c1`` verbatim,
never ``b``, and ``c2`` (as float codes, 1 vs 1.0) in exactly half of them.
"""
import numpy as np
import pandas as pd
import pytest

from memviz.tables.data import Table
from memviz.tables.schema import Schema
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore

SCHEMA = Schema(numerical=("a", "b"), categorical=("c1", "c2"), target="y", task="binary", name="planted")
N_TRAIN, N_GEN, EPOCHS = 40, 40, (2, 4, 6)
#: planted attribution per check: training position -> number of memorized copies
COPIES = [{0: 6, 1: 2, 2: 1}, {0: 5, 1: 3}, {0: 7, 3: 1, 2: 2}]


def planted_train(seed: int = 0) -> Table:
    rng = np.random.default_rng(seed)
    ids = (100 + 3 * np.arange(N_TRAIN)).astype(np.int64)[::-1]  # non-contiguous, descending
    df = pd.DataFrame({
        "a": np.round(rng.uniform(10_000, 99_999, N_TRAIN), 3) + 0.123,
        "b": rng.integers(0, 50, N_TRAIN).astype(np.int64),
        "c1": [f"SECRET-{i:02d}" for i in range(N_TRAIN)],
        "c2": rng.integers(1, 4, N_TRAIN).astype(np.int64),
        "y": rng.choice(["<=50K", ">50K"], N_TRAIN),
    }, index=pd.Index(ids, name="row_id"))
    return Table(df, SCHEMA, "planted")


def planted_check(train: Table, c: int, rng) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One check's (long table, samples)."""
    d = train.data
    nn1, mem = [], []
    for pos, k in COPIES[c].items():
        nn1 += [pos] * k
        mem += [True] * k
    rest = N_GEN - len(nn1)
    nn1 += list(rng.integers(0, N_TRAIN, rest))
    mem += [False] * rest
    nn1[len(mem) - 1] = 0  # one non-memorized row attributed to the most-copied row
    nn1, mem = np.asarray(nn1), np.asarray(mem)
    src = d.iloc[nn1].reset_index(drop=True)
    gen = pd.DataFrame({
        "a": np.where(mem, src["a"] * (1 + 1e-12), src["a"] + 0.5),
        "b": src["b"] + 1,
        "c1": np.where(mem, src["c1"], "other"),
        "c2": np.where(mem & (np.arange(N_GEN) % 2 == 0), src["c2"], src["c2"] % 3 + 1).astype(np.float64),
        "y": src["y"],
    })
    order = rng.permutation(N_GEN)  # synthetic ids not in attribution order
    gen = gen.iloc[order].reset_index(drop=True)
    nn1, mem = nn1[order], mem[order]
    ratio = np.where(mem, rng.uniform(0.0, 0.3, N_GEN), rng.uniform(0.4, 1.0, N_GEN))
    long = pd.DataFrame({"check": c, "epoch": EPOCHS[c], "synthetic_id": np.arange(N_GEN),
                         "nn1": d.index.to_numpy()[nn1], "nn2": d.index.to_numpy()[(nn1 + 1) % N_TRAIN],
                         "d1": ratio, "d2": 1.0, "ratio": ratio, "memorized": mem})
    gen.insert(0, "synthetic_id", np.arange(N_GEN))
    return long, gen


def planted_run(path, seed: int = 0, n_checks: int = 3) -> RunStore:
    """A finished run directory with planted checks (see the module docstring)."""
    train = planted_train(seed)
    rng = np.random.default_rng(seed + 1)
    with pytest.MonkeyPatch.context() as mp:  # package versions would import torch (seconds)
        mp.setattr("memviz.warmup.store.versions", lambda: {})
        store = RunStore.create(path, train, {"top_frac": 0.1, "epochs": EPOCHS[n_checks - 1], "check_every": 2})
    for c in range(n_checks):
        long, gen = planted_check(train, c, rng)
        store.write_check(c, long, gen)
    store.update(status="finished")
    return store


def planted_finished(tmp_path_factory, name: str = "leaks"):
    """A planted run and its loaded :class:`memviz.warmup.run.WarmupResult` (the leak tests' module fixture)."""
    store = planted_run(tmp_path_factory.mktemp(name) / "run")
    return store, load_warmup(store.path)
