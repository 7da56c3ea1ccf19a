"""In-cell progress (issue 20 item 3): every cell reports its phases and its fit's epochs from the
process that runs it, into the job's event log, so the dashboard's progress moves inside a cell."""
import pytest

from memviz.compare import CompareConfig, run_grid
from memviz.jobs.spec import EventLog, read_events

from .stubs import TINY


@pytest.mark.slow
def test_cells_in_worker_processes_write_their_phases_and_epochs(tables, tmp_path):
    train, test = tables
    log = EventLog(tmp_path / "events.jsonl")
    cfg = CompareConfig(methods=("baseline", "random"), models=("tabddpm",), seeds=(0,), epochs=4, p=0.1,
                        model_params={"tabddpm": TINY}, device="cpu", n_jobs=2)
    res = run_grid(train, test, cfg, tmp_path / "out", progress=log, cell_progress=log)
    assert (res["status"] == "ok").all()
    events = read_events(tmp_path / "events.jsonl")
    for method in ("baseline", "random"):
        mine = [e for e in events if e.get("method") == method and e["event"] in ("cell_phase", "cell_epoch", "cell")]
        phases = [e["phase"] for e in mine if e["event"] == "cell_phase"]
        assert phases == ["mitigate", "fit", "sample", "evaluate"], phases
        epochs = [e for e in mine if e["event"] == "cell_epoch"]
        assert epochs[0]["epoch"] == 0 and epochs[-1]["epoch"] == 4 and all(e["epochs"] == 4 for e in epochs)
        assert [e["epoch"] for e in epochs] == sorted(e["epoch"] for e in epochs)
        assert mine[-1]["event"] == "cell"              # the finished cell comes after its own progress
        assert mine[0]["t"] <= epochs[0]["t"] <= mine[-1]["t"]


def test_without_a_cell_log_cells_stay_silent(tables, tmp_path, stub):
    train, test = tables
    seen = []
    cfg = CompareConfig(methods=("baseline",), models=("tabddpm",), seeds=(0,), epochs=2, device="cpu", n_jobs=1)
    run_grid(train, test, cfg, tmp_path / "out", progress=seen.append)
    assert not [e for e in seen if e["event"].startswith("cell_")]
    seen2 = []
    run_grid(train, test, cfg, tmp_path / "out2", progress=seen2.append, cell_progress=seen2.append)
    assert [e["phase"] for e in seen2 if e["event"] == "cell_phase"] == ["mitigate", "fit", "sample", "evaluate"]
