"""The audit on Dask (issue 40, item 2): every search of the audit through the cluster, and audit.json and
rows.csv equal to the local run's, byte for byte (the run's timings and its creation time aside)."""
from __future__ import annotations

import json
import re
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from distributed import LocalCluster  # noqa: E402

import memviz  # noqa: E402
from memviz.cli import main  # noqa: E402
from memviz.engine.distributed import DaskEngine  # noqa: E402
from memviz.errors import MemvizError  # noqa: E402
from memviz.tables.data import table_from_frame  # noqa: E402
from memviz.verdict import build  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=":0") as c:
        yield c


@pytest.fixture(scope="module")
def tables(sample):
    """(train 400, hold-out 200, synthetic 330: 300 fresh rows and 5 training rows copied 6 times each)."""
    train, test = sample
    allf = pd.concat([train.data, test.data], ignore_index=True)
    idx = np.random.default_rng(11).permutation(len(allf))
    tr = table_from_frame(allf.iloc[idx[:400]].reset_index(drop=True), train.schema, source="train", role="train")
    ho = table_from_frame(allf.iloc[idx[400:600]].reset_index(drop=True), train.schema, source="holdout", role="test")
    syn = pd.concat([allf.iloc[idx[600:900]], tr.data.iloc[np.repeat(np.arange(5), 6)]], ignore_index=True)
    return tr, ho, syn


def timeless(text: str) -> str:
    """audit.json without the run's timings (every ``"seconds"`` value), which no two runs share."""
    return re.sub(r'"seconds": [-+0-9.eE]+', '"seconds": 0', text)


@pytest.fixture
def searches(monkeypatch):
    """(query rows, k, reference rows) of every search that went through the cluster."""
    seen = []
    knn = DaskEngine.kneighbors

    def spy(self, queries, k=2, progress=None):
        seen.append((len(queries), k, self.n_reference_))
        return knn(self, queries, k, progress)

    monkeypatch.setattr(DaskEngine, "kneighbors", spy)
    monkeypatch.setattr(build, "_created", lambda: "2026-01-01T00:00:00Z")
    return seen


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_the_audit_on_dask_writes_the_local_runs_files(tables, cluster, searches, distance, tmp_path):
    tr, ho, syn = tables
    local = memviz.audit(tr, syn, ho, distance=distance)
    assert searches == []
    dask = memviz.audit(tr, syn, ho, distance=distance, backend="dask", scheduler=cluster.scheduler_address)
    N, M, H = len(tr), len(syn), len(ho)
    # the memorization pass, the closeness tests (the generated rows again under the paper distance, the
    # hold-out, the training rows leaving one out), the floor, the membership attack (training, hold-out)
    want = [(M, 2, N)] + ([(M, 1, N)] if distance == "paper" else []) + [(H, 1, N), (N, 2, N), (H, 2, N)]
    assert searches[:len(want)] == want
    # the membership attack's two searches, then the DCR share's two (balanced references of min(N, H) rows)
    assert sorted(searches[len(want):]) == sorted([(N, 1, M), (H, 1, M), (M, 1, min(N, H)), (M, 1, min(N, H))])
    assert local.verdict.code == dask.verdict.code == "copying"
    for name, a in (("local", local), ("dask", dask)):
        a.write(tmp_path / name)
    assert (tmp_path / "local" / "rows.csv").read_bytes() == (tmp_path / "dask" / "rows.csv").read_bytes()
    j_local, j_dask = ((tmp_path / n / "audit.json").read_text() for n in ("local", "dask"))
    assert timeless(j_local) == timeless(j_dask) and '"seconds"' in j_local


def test_memviz_audit_on_dask_writes_the_same_files(tables, cluster, searches, tmp_path, capsys):
    tr, ho, syn = tables
    for name, t in (("tr", tr.data), ("ho", ho.data), ("syn", syn)):
        t.to_csv(tmp_path / f"{name}.csv", index=False)
    tr.schema.save(tmp_path / "meta.json")
    common = ["audit", "--train", str(tmp_path / "tr.csv"), "--schema", str(tmp_path / "meta.json"), "--synthetic",
              str(tmp_path / "syn.csv"), "--holdout", str(tmp_path / "ho.csv"), "--quiet", "--no-quality"]
    heads = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        assert main(common + ["--out", str(tmp_path / name)] + extra) == 0
        heads[name] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert heads["local"]["backend"] == "local" and heads["dask"]["backend"] == "dask" and searches
    assert (tmp_path / "local" / "rows.csv").read_bytes() == (tmp_path / "dask" / "rows.csv").read_bytes()
    assert timeless((tmp_path / "local" / "audit.json").read_text()) == \
        timeless((tmp_path / "dask" / "audit.json").read_text())
    for key in ("ratio_test", "findings", "n_over_copied", "verdict"):
        assert heads["local"][key] == heads["dask"][key]


def test_a_bad_scheduler_or_backend_is_one_line_within_the_timeout(tables, tmp_path, capsys):
    tr, ho, syn = tables
    tr.data.to_csv(tmp_path / "tr.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    tr.schema.save(tmp_path / "meta.json")
    args = ["audit", "--train", str(tmp_path / "tr.csv"), "--schema", str(tmp_path / "meta.json"), "--synthetic",
            str(tmp_path / "syn.csv"), "--quiet", "--out", str(tmp_path / "out")]
    t0 = time.perf_counter()
    assert main(args + ["--backend", "dask", "--scheduler", "tcp://127.0.0.1:9"]) == 2          # nothing listens
    err = capsys.readouterr().err
    assert "cannot connect" in err and len(err.strip().splitlines()) == 1 and time.perf_counter() - t0 < 20
    assert not (tmp_path / "out").exists()
    assert main(args + ["--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "--backend dask" in err and len(err.strip().splitlines()) == 1
    # refused at the door: before the (missing) tables are read
    with pytest.raises(MemvizError, match="backend='spark'"):
        memviz.audit("missing.csv", "missing.csv", backend="spark")
    with pytest.raises(MemvizError, match="not HOST:PORT"):
        memviz.audit("missing.csv", "missing.csv", backend="dask", scheduler="tcp://host")
    with pytest.raises(MemvizError, match="needs the dask backend"):
        memviz.audit.from_run("missing", scheduler="tcp://127.0.0.1:9")


@pytest.mark.slow
def test_a_runs_report_on_dask_writes_the_same_files(sample, cluster, searches, tmp_path, capsys):
    from helpers import tiny_warmup

    from memviz.warmup.run import run_warmup

    train, test = sample
    small, hold = train.subset(train.row_ids[:150]), test.subset(test.row_ids[:300])
    run_warmup(small, tiny_warmup(epochs=2), tmp_path / "run", holdout=hold)
    hold.data.to_csv(tmp_path / "ho.csv", index=False)
    common = ["report", str(tmp_path / "run"), "--holdout", str(tmp_path / "ho.csv"), "--no-compare",
              "--no-quality"]
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        assert main(common + ["--out", str(tmp_path / name)] + extra) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert (len(hold), 2, len(small)) in searches and (len(small), 2, len(small)) in searches   # floor, leave one out
    assert (tmp_path / "local" / "rows.csv").read_bytes() == (tmp_path / "dask" / "rows.csv").read_bytes()
    assert timeless((tmp_path / "local" / "audit.json").read_text()) == \
        timeless((tmp_path / "dask" / "audit.json").read_text())
