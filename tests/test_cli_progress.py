"""The CLI's progress bars (memviz.commands.common.Bar, drawn by tqdm): the same lines on a terminal and in a log;
a terminal's redrawn in place, a log's written whole with no carriage return."""
from __future__ import annotations

import io
import re

from memviz.commands.common import Bar, EventBars


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def frames(text: str) -> list[str]:
    """What a terminal showed, frame by frame: each redraw of the line, padding off, a redraw of the same frame once."""
    out = []
    for f in re.split(r"[\r\n]", text):
        f = f.rstrip()
        if f and (not out or out[-1] != f):
            out.append(f)
    return out


def draw_a_warmup(stream) -> None:
    bars = EventBars()
    bars.bars = {"warm-up": Bar("warm-up", stream), "compare": Bar("compare", stream)}
    for e in range(1, 5):
        bars({"event": "epoch", "epoch": e, "epochs": 4, "loss": 1.0 / e})
        bars.bars["warm-up"].last = 0.0                     # the lines of a real run are epochs apart
        if e % 2 == 0:
            bars({"event": "check", "check": e // 2 - 1, "checks": 2, "epoch": e, "mem_ratio": 0.1 * e})
    bars({"event": "cells", "done": 0, "total": 2})
    bars({"event": "cell", "method": "baseline", "model": "tabddpm", "seed": 0, "done": 1, "total": 2,
          "status": "ok", "mem_ratio": 0.25, "seconds": 3})
    bars({"event": "cell", "method": "dynamiccut", "model": "tabddpm", "seed": 0, "done": 2, "total": 2,
          "status": "ok", "mem_ratio": 0.2, "seconds": 4})


def test_a_terminal_and_a_log_get_the_same_lines():
    tty, log = Terminal(), io.StringIO()
    draw_a_warmup(tty)
    draw_a_warmup(log)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and log.getvalue().endswith("\n")     # a log: whole lines, no redraw
    assert frames(tty.getvalue()) == lines, (frames(tty.getvalue()), lines)
    assert tty.getvalue().count("\r") >= len(lines) and tty.getvalue().endswith("\n")   # redrawn in place, ended
    assert lines[0] == "warm-up [#######-----------------------] 1/4, loss 1.000"
    assert lines[-1].startswith("compare [##############################] 2/2, DynamicCut × TabDDPM, seed 0 done")
    assert any("mem ratio 40.0 % (check 1 of 0–1, epoch 4)" in ln for ln in lines), lines


def test_a_log_gets_a_line_at_most_every_few_seconds_a_terminal_more_often():
    log, tty = io.StringIO(), Terminal()
    for stream in (log, tty):
        bar = Bar("memorize", stream)
        for i in range(1, 50):
            bar(i, 100, f"block {i}")                         # calls well within 0.1 s of each other
        bar(100, 100, "done")
    assert log.getvalue().splitlines() == ["memorize [------------------------------] 1/100, block 1",
                                           "memorize [##############################] 100/100, done"]
    assert frames(tty.getvalue())[0] == "memorize [------------------------------] 1/100, block 1"
    assert frames(tty.getvalue())[-1] == "memorize [##############################] 100/100, done"
