"""The audit's own memory guard (issue 40, item 3): an audit too large for the machine is refused in one
line before any work, saying what ``--backend dask`` would need here and on each worker."""
import pytest

import memviz
from memviz import device
from memviz.cli import main
from memviz.engine import budget, distributed, neighbors
from memviz.errors import MemvizError

GIB = 1 << 30


def test_an_audit_too_large_is_refused_before_any_work(sample, monkeypatch):
    train, test = sample
    monkeypatch.setattr(device, "available_memory", lambda: budget.MIB)
    monkeypatch.setattr(neighbors.Encoder, "fit", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(MemvizError) as err:
        memviz.audit(train, test.data.iloc[:600], test.data.iloc[600:])
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("the audit of 3,000 training × 600 generated × 400 hold-out rows")
    assert "1.0 MiB available" in msg and "with --backend dask --scheduler ADDR it would need" in msg
    assert "MiB on each worker" in msg and "use fewer rows" in msg           # the fits alone exceed 1 MiB


def test_the_refusal_says_what_dask_would_need(sample, monkeypatch):
    train, test = sample
    need = budget.AuditNeed(here=3 * GIB, client=GIB, worker=GIB // 2)
    monkeypatch.setattr(budget, "audit_bytes", lambda *a, **k: need)
    monkeypatch.setattr(device, "available_memory", lambda: 2 * GIB)
    with pytest.raises(MemvizError) as err:
        memviz.audit(train, test.data.iloc[:600], test.data.iloc[600:])
    msg = str(err.value)
    assert "needs about 3,072 MiB of memory and this machine has 2,048 MiB available" in msg
    assert msg.endswith("about 1,024 MiB on this machine (the fitted engines and the searches that stay here) "
                        "and 512 MiB on each worker")
    # a local cluster's workers are on this machine too: 1 GiB + 4 × 512 MiB does not fit, before any worker starts
    monkeypatch.setattr(distributed, "connect", lambda *a, **k: pytest.fail("a cluster started"))
    monkeypatch.setattr("memviz.verdict.build.connect", lambda *a, **k: pytest.fail("a cluster started"))
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    with pytest.raises(MemvizError, match="on a local Dask cluster of 4 workers needs about 3,072 MiB.*--scheduler"):
        memviz.audit(train, test.data.iloc[:600], test.data.iloc[600:], backend="dask")


def test_check_audit_reads_each_backend(monkeypatch):
    need = budget.AuditNeed(here=3 * GIB, client=GIB, worker=GIB)
    for have, backend, workers, refused in ((4 * GIB, "local", 0, None), (2 * GIB, "local", 0, "--backend dask"),
                                            (2 * GIB, "dask", 0, None), (2 * GIB, "dask", 2, "local Dask cluster"),
                                            (GIB // 2, "dask", 0, "use fewer rows"), (None, "local", 0, None)):
        monkeypatch.setattr(device, "available_memory", lambda have=have: have)
        if refused is None:
            budget.check_audit(need, "the audit", backend=backend, local_workers=workers)
        else:
            with pytest.raises(MemvizError, match=refused):
                budget.check_audit(need, "the audit", backend=backend, local_workers=workers)


def test_the_estimate_grows_with_each_table_and_dask_moves_the_searches():
    small = budget.audit_bytes(10_000, 10_000, 5_000, 6, 9, threads=2)
    assert budget.audit_bytes(20_000, 10_000, 5_000, 6, 9, threads=2).here > small.here
    assert budget.audit_bytes(10_000, 20_000, 5_000, 6, 9, threads=2).here > small.here
    assert budget.audit_bytes(10_000, 10_000, 0, 6, 9, threads=2).here < small.here      # no hold-out: no second pass
    big = budget.audit_bytes(10 ** 6, 10 ** 6, 10 ** 5, 6, 9, threads=2)
    assert big.worker < big.client < big.here
    assert budget.auto_algorithm(100, 6) == "dense" and budget.auto_algorithm(10 ** 6, 6) == "pruned"
    assert budget.auto_algorithm(10 ** 6, 40) == "wide" and budget.auto_algorithm(10 ** 6, 6, cpu=False) == "dense"


def test_the_cli_refuses_the_audit_in_one_line(tmp_path, capsys, sample, monkeypatch):
    train, test = sample
    train.data.iloc[:300].to_csv(tmp_path / "t.csv", index=False)
    test.data.iloc[:200].to_csv(tmp_path / "h.csv", index=False)
    train.schema.save(tmp_path / "meta.json")
    monkeypatch.setattr(device, "available_memory", lambda: 1024)
    code = main(["audit", "--train", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "meta.json"), "--synthetic",
                 str(tmp_path / "t.csv"), "--holdout", str(tmp_path / "h.csv"), "--out", str(tmp_path / "o"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "MiB available" in err and "--backend dask" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
