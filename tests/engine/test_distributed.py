"""Memorization and the floor on Dask equal the local run, byte for byte."""
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from distributed import LocalCluster  # noqa: E402

from memviz.cli import main  # noqa: E402
from memviz.errors import MemvizError  # noqa: E402
from memviz.engine.distributed import DaskEngine, connect  # noqa: E402
from memviz.measure.floor import holdout_floor  # noqa: E402
from memviz.measure.memorization import memorization  # noqa: E402
from memviz.engine.neighbors import NeighborEngine  # noqa: E402
from memviz.tables.data import Table  # noqa: E402
from memviz.tables.schema import Schema  # noqa: E402

ARRAYS = ("nn1", "nn2", "nn1_pos", "nn2_pos", "d1", "d2", "ratio", "memorized")


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=":0") as c:
        yield c


def assert_same(a, b):
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name


def wide_table(n, seed):
    rng = np.random.default_rng(seed)
    cols = {f"x{j}": rng.normal(0, 10.0 ** (j % 5), n) for j in range(36)}
    cols["c0"] = rng.choice(["a", "b", "c"], n).astype(object)
    df = pd.DataFrame(cols)
    df.index = pd.Index(np.arange(n) * 7 + 3, name="row_id")
    schema = Schema(numerical=tuple(c for c in cols if c[0] == "x"), categorical=("c0",), target=None, task="none")
    return Table(df, schema, "wide")


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_memorization_and_floor_on_dask_equal_the_local_run(sample, cluster, distance):
    train, test = sample
    syn = pd.concat([test.data.iloc[:500], train.data.iloc[:200]], ignore_index=True)    # fresh rows and copies
    engine = NeighborEngine(distance=distance, device="cpu").fit(train)
    local = memorization(train, syn, engine=engine)
    with connect(cluster) as client:
        remote = DaskEngine(engine, client, rows_per_task=97)                              # uneven blocks
        seen = []
        dask = memorization(train, syn, engine=remote, progress=lambda done, total: seen.append((done, total)))
        assert_same(local, dask)
        assert seen[-1] == (len(syn), len(syn)) and len(seen) == -(-len(syn) // 97)
        f_local = holdout_floor(train, test.data.iloc[500:], distance=distance, engine=engine)
        f_dask = holdout_floor(train, test.data.iloc[500:], distance=distance, engine=remote)
    assert (f_local.floor, f_local.low, f_local.high, f_local.n_holdout) == \
        (f_dask.floor, f_dask.low, f_dask.high, f_dask.n_holdout)
    for name in ("hits", "nn1", "auc"):
        assert np.asarray(getattr(f_local, name)).tobytes() == np.asarray(getattr(f_dask, name)).tobytes()


def test_a_wide_table_on_worker_processes_equals_the_local_run():
    train, queries = wide_table(600, 0), wide_table(300, 1)
    q = pd.concat([queries.data, train.data.iloc[:50]], ignore_index=True)
    engine = NeighborEngine(device="cpu").fit(train)
    assert engine.algorithm_ == "wide"
    local = memorization(train, q, engine=engine)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as c, \
            connect(c) as client:
        dask = memorization(train, q, engine=DaskEngine(engine, client, rows_per_task=64))
        faults = client.run(_page_faults)
    assert_same(local, dask)
    # the nanny's MALLOC_TRIM_THRESHOLD_ froze glibc's mmap threshold at 128 KiB: every 4 MB
    # temporary was a fresh mmap, 1024 page faults each (2x the local CPU time per query)
    assert max(faults.values()) < 4000, faults


def _page_faults() -> int:
    """Minor page faults of 20 allocations of a 4 MB array in this (worker) process."""
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        a = np.ones(1 << 19)
        del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_memorize_cli_on_dask_writes_the_same_files(sample, cluster, tmp_path, capsys):
    train, test = sample
    tr = train.data.iloc[:400].reset_index(drop=True)
    syn = pd.concat([test.data.iloc[:60], tr.iloc[[7, 3]]], ignore_index=True)
    tr.to_csv(tmp_path / "train.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    test.data.iloc[100:300].to_csv(tmp_path / "hold.csv", index=False)
    common = ["memorize", "--train", str(tmp_path / "train.csv"), "--schema", "sample_data/meta.json",
              "--synthetic", str(tmp_path / "syn.csv"), "--holdout", str(tmp_path / "hold.csv"), "--quiet"]
    outs = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        code = main(common + ["--out", str(tmp_path / f"{name}.csv"), "--rows-out", str(tmp_path / f"{name}-rows.csv")]
                    + extra)
        out, _ = capsys.readouterr()
        assert code == 0
        outs[name] = json.loads(out.strip().splitlines()[-1])
    assert (tmp_path / "local.csv").read_bytes() == (tmp_path / "dask.csv").read_bytes()
    assert (tmp_path / "local-rows.csv").read_bytes() == (tmp_path / "dask-rows.csv").read_bytes()
    assert outs["dask"]["backend"] == "dask"
    for key in ("mem_ratio", "floor", "floor_ci", "excess", "excess_ci", "ratio_above_chance"):
        assert outs["local"][key] == outs["dask"][key]


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys, sample):
    train, _ = sample
    train.data.iloc[:50].to_csv(tmp_path / "t.csv", index=False)
    code = main(["memorize", "--train", str(tmp_path / "t.csv"), "--synthetic", str(tmp_path / "t.csv"),
                 "--out", str(tmp_path / "o.csv"), "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9", "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot connect" in err and len(err.strip().splitlines()) == 1
    code = main(["memorize", "--train", str(tmp_path / "t.csv"), "--synthetic", str(tmp_path / "t.csv"),
                 "--out", str(tmp_path / "o.csv"), "--scheduler", "tcp://127.0.0.1:9", "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2 and "--backend dask" in err
    with pytest.raises(MemvizError):
        DaskEngine(NeighborEngine(device="cpu").fit(train), None, rows_per_task=0)


def test_a_worker_builds_the_dense_tensors_once_not_once_per_task(sample, cluster, monkeypatch):
    """Each task used a fresh shallow copy of the engine (to set the worker's thread count), so
    what a query builds on first use (the dense pass's tensors) was rebuilt by every task."""
    train, test = sample
    builds = []
    load = NeighborEngine._load_dense

    def counted(self):
        if not hasattr(self, "dense_"):
            builds.append(1)
        load(self)

    monkeypatch.setattr(NeighborEngine, "_load_dense", counted)
    engine = NeighborEngine(device="cpu", algorithm="dense").fit(train)
    with connect(cluster) as client:
        remote = DaskEngine(engine, client, rows_per_task=50)
        a = remote.kneighbors(test.data.iloc[:300], k=2)
        b = remote.kneighbors(test.data.iloc[300:600], k=2)
    assert len(builds) <= len(cluster.workers) < 12                  # 12 tasks
    assert engine.n_jobs is None                                     # the caller's engine is untouched
    local = engine.kneighbors(test.data.iloc[:600], k=2)
    assert np.concatenate([a.pos, b.pos]).tobytes() == local.pos.tobytes()
