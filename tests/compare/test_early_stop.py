"""Early stop as a comparison method: the warm-up's recommended epoch, retrained, beside the others."""
import json

import pandas as pd
import pytest

from memviz.compare import CompareConfig
from memviz.compare.methods import METHODS, apply_method, early_stop_epochs
from memviz.errors import MemvizError

from .stubs import TINY, grid


def test_early_stop_epochs_scale_the_recommended_share_of_the_warmup():
    assert early_stop_epochs(200, 40, 200) == 40          # TabDDPM trained as long as its warm-up
    assert early_stop_epochs(30, 40, 200) == 6            # CTGAN: the same share of its own budget
    assert early_stop_epochs(30, 1, 200) == 1             # never 0
    with pytest.raises(MemvizError):
        early_stop_epochs(30, 300, 200)


def test_early_stop_keeps_the_table_and_its_rule_is_checked(tables):
    train, _ = tables
    assert "early_stop" in METHODS
    res = apply_method("early_stop", train)
    assert res.table.data.equals(train.data) and len(res.removed) == 0 and res.method == "early_stop"
    assert CompareConfig(methods=("early_stop",)).needs_ranking
    assert CompareConfig(stop_rule={"tolerance": 0.05}).validated().stop_rule["tolerance"] == 0.05
    with pytest.raises(MemvizError, match="stop_rule"):
        CompareConfig(stop_rule={"patience": 3}).validated()
    with pytest.raises(MemvizError, match="tolerance"):
        CompareConfig(stop_rule={"tolerance": 2}).validated()


def test_early_stop_cells_train_to_the_recommended_epoch(tables, tmp_path, stub):
    train, test = tables
    kw = dict(epochs=4, device="cpu", model_params={"tabddpm": TINY}, threads=1)
    res = grid(train, test, ["baseline", "early_stop"], ["ctgan"], [0, 1], tmp_path, **kw)
    exp = json.loads((tmp_path / "experiment.json").read_text())
    stop = exp["early_stop"]
    assert stop["warmup_epochs"] == 4 and 1 <= stop["epoch"] <= 4 and stop["reason"].startswith("Check ")
    # the warm-up the comparison ran measured quality at every check (the rule used it)
    checks = json.loads((tmp_path / "warmup" / "manifest.json").read_text())["checks"]
    assert all("shape" in c for c in checks) and "quality was not measured" not in stop["reason"]
    assert (res["status"] == "ok").all()
    es, base = res[res.method == "early_stop"], res[res.method == "baseline"]
    assert (es["epochs"] == stop["epoch"]).all() and (base["epochs"] == 4).all()
    for col in ("floor", "excess", "shape", "trend", "mle", "mem_ratio_pruned"):
        assert es[col].notna().all(), col
    assert (es["n_removed"] == 0).all() and (es["mem_ratio_pruned"] == es["mem_ratio"]).all()
    # another rule, another recommended epoch: only the early-stop cells are redone
    n_fits = len(stub.fits)
    grid(train, test, ["baseline", "early_stop"], ["ctgan"], [0, 1], tmp_path,
         stop_rule={"tolerance": 1.0, "max_excess": 1.0}, **kw)
    again = json.loads((tmp_path / "experiment.json").read_text())["early_stop"]
    assert again["epoch"] == 1                               # everything eligible and passing: the first check
    assert len(stub.fits) == n_fits + (2 if stop["epoch"] != 1 else 0)
    out = pd.read_csv(tmp_path / "results.csv")
    assert (out.loc[out.method == "early_stop", "epochs"] == 1).all()


def test_early_stop_cells_shorten_a_step_budget_too(tables, tmp_path):
    """Regression: with a ``steps`` budget in the model settings (the study's equal-steps design), the
    early-stop cell trained the full steps, as the baseline did: its shortened epochs were overridden."""
    train, test = tables
    kw = dict(epochs=4, device="cpu", model_params={"tabddpm": {**TINY, "steps": 12}}, threads=1)
    res = grid(train, test, ["baseline", "early_stop"], ["tabddpm"], [0], tmp_path, **kw)
    stop = json.loads((tmp_path / "experiment.json").read_text())["early_stop"]
    es, base = res[res.method == "early_stop"], res[res.method == "baseline"]
    assert (base["steps"] == 12).all()
    assert (es["steps"] == early_stop_epochs(12, stop["epoch"], stop["warmup_epochs"])).all()
