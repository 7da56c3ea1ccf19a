"""What the CLI prints agrees with what it computed (issue 42, item 5): the warm-up bar's mem, the range of
inspect's early Mem-AUC, and the units of compare's excess."""
from __future__ import annotations

import re

from dash_helpers import copier_run

from memviz.cli import main
from memviz.commands.common import EventBars
from memviz.compare import format_summary, results_frame, summary_table


def test_the_warmup_bar_ends_on_the_last_checks_memorization_ratio(capsys):
    """The walk: the bar ended at "mem 0.118" where the result said 0.228. Checks are measured beside the
    training (and the last after it), so the last check's event came after the last epoch's line and was
    never drawn: the bar showed the check before it, with no epoch to say so."""
    bars = EventBars()
    bars({"event": "check", "check": 10, "epoch": 55, "mem_ratio": 0.118, "checks": 12})
    bars({"event": "epoch", "epoch": 60, "epochs": 60, "loss": 0.5})
    bars({"event": "check", "check": 11, "epoch": 60, "mem_ratio": 0.228, "checks": 12})
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "22.8 %" in last and "check 11 of 0–11" in last and "epoch 60" in last, last
    assert "0.118" not in last and "11.8" not in last


def test_inspect_states_the_range_of_the_per_row_mem_auc(capsys, tmp_path, sample):
    """The walk: "early Mem-AUC 1.3961" where Mem-AUC is described as between 0 and 1. The per-row figure is a
    sum of 1 − r over the generated rows nearest the row (memviz.dynamics.rows.RowDynamics.auc), so it is 0 and
    up, bounded by the generated rows per check, not by 1: inspect names it per-row and says so."""
    train, _ = sample
    copier_run(train.subset(train.row_ids[:200]), tmp_path / "run")
    code = main(["inspect", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert code == 0
    lines = [ln for ln in out.splitlines() if "Mem-AUC" in ln]
    assert lines and all("per-row" in ln for ln in lines), lines
    top = next(ln for ln in out.splitlines() if ln.startswith("top"))
    assert float(top.split("early per-row Mem-AUC ")[1].split()[0]) > 1          # the figure the walk saw
    assert "not 0 to 1" in out


def test_compare_prints_the_excess_in_points_not_percent():
    """The walk: `memviz compare` printed the excess over the floor (percentage points) with a % sign."""
    rec = [dict(method=m, model="m", seed=s, status="ok", mem_ratio=r, mem_ratio_pruned=r, floor=0.20,
                floor_low=0.18, floor_high=0.22, excess=r - 0.20, excess_low=r - 0.25, excess_high=r - 0.15)
           for m, s, r in [("baseline", 0, 0.30), ("baseline", 1, 0.32), ("dynamiccut", 0, 0.22),
                           ("dynamiccut", 1, 0.24)]]
    text = format_summary(summary_table(results_frame(rec)))
    head, _, *rows = text.splitlines()
    cols = re.split(r"\s{2,}", head.strip())
    assert "excess (points)" in cols, cols
    base = next(r for r in rows if "baseline" in r)
    assert "+11.0 ±1.4" in base and "+11.0%" not in base, base
    assert "31.0% ±1.4" in base                                  # shares keep their % sign
