"""One progress model (issue 20 items 2 and 3): a comparison's readout moves inside a cell, says
which cells run and how long the rest takes, and a malformed line never breaks it."""
import json

import pytest
from helpers import live_job

from memviz.app import progress


def _events(job, events):
    with open(job.events_path, "a", encoding="utf-8") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")


def test_a_compare_readout_moves_with_the_running_cells_epochs(tmp_path):
    job = live_job(tmp_path, "compare")
    who = {"method": "baseline", "model": "tabddpm", "seed": 0}
    _events(job, [{"event": "started", "t": 100.0}, {"event": "cells", "done": 0, "total": 3, "t": 100.0},
                  {"event": "cell_phase", "phase": "mitigate", "epochs": None, "t": 101.0, **who},
                  {"event": "cell_phase", "phase": "fit", "epochs": None, "t": 101.0, **who},
                  {"event": "cell_epoch", "epoch": 0, "epochs": 60, "t": 101.0, **who}])
    p0 = progress.job_progress(job, now=102.0)
    assert p0.fraction == 0 and "1 cell running" in p0.readout()
    _events(job, [{"event": "cell_epoch", "epoch": 30, "epochs": 60, "t": 111.0, **who}])
    p1 = progress.job_progress(job, now=111.0)
    # half the fit of one of three cells: (0.83 / 2) / 3
    assert p1.fraction == pytest.approx(progress.FIT_SHARE / 2 / 3)
    assert p1.fraction > p0.fraction
    line = p1.cell_lines()[0]
    assert "Baseline × TabDDPM, seed 0: fitting, epoch 30/60" in line and "10 s so far" in line
    # before any cell finished, the estimate is the running cell's own pace: 10 s for 41.5 % of one cell
    assert p1.left_seconds == pytest.approx(10 / (progress.FIT_SHARE / 2) * (3 - progress.FIT_SHARE / 2))
    assert "left" in p1.readout()
    _events(job, [{"event": "cell", "done": 1, "total": 3, "status": "ok", "seconds": 20.0, "t": 121.0, **who},
                  {"event": "cell_epoch", "epoch": "?", "seed": "?", "t": 1}])   # malformed: skipped
    p2 = progress.job_progress(job, now=121.0)
    assert p2.cells == () and p2.cell_seconds == (20.0,)
    assert p2.left_seconds == pytest.approx(40.0)        # 2 cells left at 20 s each, one at a time
    assert "1 cell finished, 20 s each on average" in p2.cell_lines()


def test_a_finished_job_has_no_estimate(tmp_path):
    job = live_job(tmp_path, "compare")
    _events(job, [{"event": "started", "t": 1.0}, {"event": "cells", "done": 0, "total": 1, "t": 1.0},
                  {"event": "cell", "done": 1, "total": 1, "status": "ok", "seconds": 5.0, "t": 6.0,
                   "method": "baseline", "model": "tabddpm", "seed": 0},
                  {"event": "finished", "t": 7.0}])
    p = progress.job_progress(job)
    assert p.final and p.fraction == 1.0 and p.left_seconds is None and "left" not in p.readout()


def test_readout_of_an_unknown_folder_is_starting(tmp_path):
    assert progress.readout(str(tmp_path / "nothing-here")) == "starting"
