"""The engine's memory guard: a table too large for the machine is refused, with its
estimate, in one line and before any work."""
import pytest

from memviz import device
from memviz.cli import main
from memviz.errors import MemvizError
from memviz.engine import budget, neighbors
from memviz.engine.neighbors import NeighborEngine


def test_a_reference_too_large_is_refused_before_any_work(sample, monkeypatch):
    train, _ = sample
    monkeypatch.setattr(device, "available_memory", lambda: budget.MIB // 2)
    monkeypatch.setattr(neighbors.Encoder, "fit", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(MemvizError) as err:
        NeighborEngine(device="cpu").fit(train)
    msg = str(err.value)
    need = budget.fit_bytes(len(train), len(train.schema.distance_numerical), len(train.schema.distance_categorical))
    assert "\n" not in msg and "3,000 rows" in msg and f"{budget.mib(need)} MiB" in msg and "0.5 MiB" in msg


def test_a_query_too_large_is_refused_before_encoding(sample, monkeypatch):
    train, test = sample
    eng = NeighborEngine(device="cpu").fit(train)
    need = budget.query_bytes(len(test), len(train), eng.p_, eng.q_, 2, eng.n_jobs_(), eng.algorithm_,
                              eng.chunk_elements_)
    monkeypatch.setattr(device, "available_memory", lambda: need - 1)
    monkeypatch.setattr(eng.encoder_.__class__, "transform", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(MemvizError, match="1,000 query rows against 3,000 reference rows"):
        eng.kneighbors(test.data, 2)


def test_enough_memory_or_an_unknown_figure_lets_it_run(sample, monkeypatch):
    train, test = sample
    for have in (None, 1 << 40):
        monkeypatch.setattr(device, "available_memory", lambda have=have: have)
        nb = NeighborEngine(device="cpu").fit(train).kneighbors(test.data.iloc[:10], 2)
        assert nb.pos.shape == (10, 2)


def test_estimates_grow_with_the_table_and_the_machine_figure_is_sane():
    assert budget.fit_bytes(2_000_000, 6, 1) == 2 * budget.fit_bytes(1_000_000, 6, 1)
    # with two categorical columns or more, the level-2 tables, bounded by pruned.MAX_LEVEL2
    assert budget.fit_bytes(2_000_000, 6, 9) > budget.fit_bytes(1_000_000, 6, 9) > budget.fit_bytes(300_000, 6, 9)
    from memviz.engine.pruned import MAX_LEVEL2
    assert budget.fit_bytes(10**6, 6, 9) - 10**6 * (96 * 6 + 24 * 9 + 256) == 48 * MAX_LEVEL2
    assert budget.query_bytes(10, 10**6, 40, 2, 2, 2, "wide", 1 << 20) > budget.query_bytes(
        10, 10**6, 40, 2, 2, 1, "wide", 1 << 20)
    have = device.available_memory()
    assert have is None or 0 < have < 1 << 50


def test_the_cli_refuses_in_one_line(tmp_path, capsys, sample, monkeypatch):
    train, _ = sample
    train.data.iloc[:300].to_csv(tmp_path / "t.csv", index=False)
    monkeypatch.setattr(device, "available_memory", lambda: 1024)
    code = main(["memorize", "--train", str(tmp_path / "t.csv"), "--synthetic", str(tmp_path / "t.csv"),
                 "--out", str(tmp_path / "o.csv"), "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2 and "MiB available" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()
