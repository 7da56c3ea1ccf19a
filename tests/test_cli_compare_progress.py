"""Issue 51 item 3: `memviz compare` said nothing for its first 9.5 minutes (its line moved only when a cell
finished, 354–484 s each on a busy machine). It now says the grid at once and, while a cell runs, its phase,
its epoch and the time left, read from the events its cells write (the Compare page's own figures)."""
from __future__ import annotations

import io
import json
import time

from helpers import TINY_MODEL

from memviz.cli import main
from memviz.commands.common import EventBars, FollowEvents
from memviz.jobs.spec import EventLog
from memviz.tables.data import sample_data_dir

SAMPLE = sample_data_dir()


def lines_of(bars: EventBars) -> list[str]:
    return bars.bars["compare"].stream.getvalue().splitlines()


def test_the_line_says_each_running_cells_epoch_and_the_time_left():
    bars = EventBars()
    bars.bars["compare"].stream = io.StringIO()
    t0 = time.time() - 60
    bars({"event": "cells", "done": 0, "total": 3, "t": t0})
    assert "0/3" in lines_of(bars)[-1] and "starting the first cell" in lines_of(bars)[-1]
    cell = {"method": "dynamiccut", "model": "tabddpm", "seed": 0}
    bars({"event": "cell_phase", **cell, "phase": "fit", "epochs": 60, "t": t0})
    bars.bars["compare"].last = 0.0                    # its lines are a few seconds apart (off a terminal: 5 s)
    bars({"event": "cell_epoch", **cell, "epoch": 30, "epochs": 60, "t": t0 + 60})
    last = lines_of(bars)[-1]
    assert "DynamicCut × TabDDPM, seed 0: fitting, epoch 30/60" in last, last
    assert "left" in last and "0/3" in last, last
    bars({"event": "cell", **cell, "done": 1, "total": 3, "status": "ok", "mem_ratio": 0.2, "seconds": 80,
          "t": t0 + 80})                              # a finished cell is said at once, never throttled away
    assert "1/3" in lines_of(bars)[-1] and "mem 20.0 %" in lines_of(bars)[-1]


def test_the_events_other_processes_append_are_drawn_as_they_come(tmp_path):
    log = EventLog(tmp_path / "events.jsonl", min_interval=0)
    seen = []
    follow = FollowEvents(log.path, seen.append, poll=0.05)
    with follow:
        log({"event": "cells", "done": 0, "total": 2})
        deadline = time.monotonic() + 60
        while not seen and time.monotonic() < deadline:     # a state, with one generous bound
            time.sleep(0.05)
        assert [e["event"] for e in seen] == ["cells"]        # drawn while the job still runs
        with open(log.path, "ab") as f:                      # a line half written when the thread reads
            f.write(b'{"event": "cell_epoch", "method": "baseline", "model": "tabddpm", "seed": 0, ')
    assert [e["event"] for e in seen] == ["cells"]            # not drawn half
    with open(log.path, "ab") as f:
        f.write(b'"epoch": 1, "epochs": 2, "t": 1.0}\n')
    follow._read()
    assert [e["event"] for e in seen] == ["cells", "cell_epoch"] and seen[1]["epoch"] == 1   # whole, once


def test_the_cli_draws_the_cells_epochs_before_the_first_cell_ends(capsys, tmp_path, monkeypatch):
    drawn = []
    original = EventBars.__call__

    def record(self, ev):
        drawn.append(ev["event"])
        original(self, ev)

    monkeypatch.setattr(EventBars, "__call__", record)
    code = main(["compare", "--train", str(SAMPLE / "train.csv"), "--test", str(SAMPLE / "test.csv"), "--schema",
                 str(SAMPLE / "meta.json"), "--methods", "baseline", "--models", "tabddpm", "--seeds", "0",
                 "--epochs", "3", "--device", "cpu", "--model-params", json.dumps({"tabddpm": TINY_MODEL}),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    assert "cells" in drawn and "cell_epoch" in drawn and "cell" in drawn, drawn
    assert drawn.index("cells") < drawn.index("cell_epoch") < drawn.index("cell")
    assert "starting the first cell" in err
