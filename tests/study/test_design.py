"""The study's design: equal optimiser steps per scale, early stop's own budget, the pilot opt-in,
and committed seeds that a rerun does not redo."""
import json

import pandas as pd
import pytest

import memviz.study.run as run
from memviz.cli import main
from memviz.compare.methods import apply_method
from memviz.models import make_model
from memviz.study.claim_tables import _budget
from memviz.study.findings import CLAIMS
from memviz.study.mitigation import available_methods, baseline_steps, grid_specs, stop_warmup_dir
from memviz.study.run import DEFAULT_PARTS, PARTS, committed_seeds, stop_frontier
from memviz.study.scales import SCALES
from memviz.warmup.run import WarmupConfig, run_warmup


def _n_train(sc):
    return sc.max_train or 32561


@pytest.mark.parametrize("name", sorted(SCALES))
def test_every_arm_of_a_scale_gets_the_baselines_steps(name, tmp_path):
    """Issue 22: every TabDDPM arm of a scale's grids (all but early stop's) trains S = E · ⌈N / min(B, N)⌉
    optimiser steps, N the scale's training rows, whatever rows its method adds or removes."""
    sc = SCALES[name]
    n = _n_train(sc)
    specs = grid_specs(sc, "adult", 0, {f"{f:g}": 1 for f in sc.T_fracs}, tmp_path, "cpu", 1, n)
    want = baseline_steps(sc, n)
    assert want >= sc.epochs if sc.epochs else want > 0
    for grid, cfg in specs.items():
        if grid in ("stop", "transfer"):  # early stop trains fewer steps by design; transfer models have no steps
            continue
        assert cfg.model_params["tabddpm"]["steps"] == want, (name, grid)


def test_a_steps_budget_is_the_same_for_tables_of_different_sizes(sample):
    """The design's premise, measured: with the baseline's ``steps`` the arms' tables (pruned: fewer rows,
    augmented: more) all take the same optimiser steps; with epochs alone they would not."""
    sc = SCALES["tiny"]
    train = sample[0].subset(sample[0].row_ids[:200])
    params = {"preset": sc.preset, **sc.tabddpm_params, "epochs": sc.epochs}
    steps = baseline_steps(sc, len(train))
    tables = {m: apply_method(m, train, seed=0).table for m in ("baseline", "random", "tabcutmix")}
    assert len({len(t) for t in tables.values()}) == 3
    with_budget = {m: make_model("tabddpm", seed=0, steps=steps, **params).fit(t).step_ for m, t in tables.items()}
    assert set(with_budget.values()) == {steps}
    by_epochs = {m: make_model("tabddpm", seed=0, **params).fit(t).step_ for m, t in tables.items()}
    assert len(set(by_epochs.values())) > 1                             # what the second edition's cells did


def test_the_stop_grid_leaves_the_epochs_to_early_stop(tmp_path):
    """Early stop's cells are retrained for the warm-up's recommended epoch: a steps budget in their model
    parameters would override those epochs and train them as long as the baseline."""
    sc = SCALES["regime"]
    specs = grid_specs(sc, "adult", 0, {"0.25": 960, "0.5": 1920}, tmp_path, "cpu", 1, 250)
    assert specs["stop"].methods == ("early_stop",)
    assert "steps" not in specs["stop"].model_params["tabddpm"]
    assert "stop" not in grid_specs(sc, "default", 0, {"0.25": 960, "0.5": 1920}, tmp_path, "cpu", 1, 250)
    assert "early_stop" not in specs["main"].methods


def test_a_plain_study_leaves_the_pilot_out(capsys):
    """Issue 22: a plain `memviz study` ran the pilot (hours); it is opt-in now, named in --help."""
    assert "pilot" in PARTS and "pilot" not in DEFAULT_PARTS
    assert set(DEFAULT_PARTS) == set(PARTS) - {"pilot"}
    with pytest.raises(SystemExit):
        main(["study", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: every part but pilot" in text and "--parts pilot" in text


def test_a_plain_study_call_does_not_run_the_pilot(tmp_path, monkeypatch):
    def no_pilot(*a, **k):
        raise AssertionError("the pilot ran without being named")

    monkeypatch.setattr(run, "run_pilot", no_pilot)
    monkeypatch.setattr(run, "dataset_study", lambda name, *a, **k: {"dataset": name})
    for part in ("floor_table", "knob_table", "budget_table"):
        monkeypatch.setattr(run, part, lambda *a, **k: [])
    monkeypatch.setattr(run, "write_figures", lambda study, out: None)
    monkeypatch.setattr(run, "render_markdown", lambda study, out, md: "")
    data = tmp_path / "data" / "adult"
    data.mkdir(parents=True)
    (data / "train.csv").write_text("a\n1\n")
    assert main(["study", "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "o"), "--scales", "tiny",
                 "--datasets", "adult", "--device", "cpu"]) == 0


def test_committed_seeds_are_those_with_a_warmup_and_every_cell(tmp_path):
    """A seed is skipped by a rerun only when the committed files hold its warm-up and every cell asked for."""
    prev = {"warmups": [{"seed": 0}, {"seed": 1}, {"seed": 2}]}
    rows = [{"grid": "main", "method": m, "seed": s, "status": "ok"} for s in (0, 1, 3) for m in ("baseline", "random")]
    rows[3]["status"] = "failed"                                         # seed 1's random cell failed
    rows += [{"grid": "early", "method": "dynamiccut_q", "seed": 0, "status": "ok"}]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    grids = {"main": ("baseline", "random")}
    assert committed_seeds(prev, tmp_path / "results.csv", grids, (0, 1, 2, 3)) == {0}
    assert committed_seeds(prev, tmp_path / "results.csv", {**grids, "early": ("dynamiccut",)}, (0, 1)) == {0}
    assert committed_seeds(prev, tmp_path / "results.csv", {**grids, "stop": ("early_stop",)}, (0, 1)) == set()
    assert committed_seeds(prev, tmp_path / "nope.csv", grids, (0, 1)) == set()
    assert json.dumps(sorted(committed_seeds(prev, tmp_path / "nope.csv", {}, (0, 1, 5)))) == "[0, 1]"


def test_early_stops_fewer_steps_are_its_treatment_not_a_confound():
    assert "confounded" in _budget({"a": "tabcutmix", "b": "baseline", "steps_a": 8000, "steps_b": 4000})
    es = _budget({"a": "early_stop", "b": "baseline", "steps_a": 3680, "steps_b": 4000})
    assert "confounded" not in es and "by design" in es and "3,680" in es
    assert _budget({"a": "random", "b": "baseline", "steps_a": 4000, "steps_b": 4000}) == ""


def test_the_stop_frontier_skips_a_warmup_still_running(tmp_path, small_train):
    """An early-stop warm-up that has not finished (a lane's, mid-run) is left out of stop_per_check.csv.
    (The crash this guards against, "the run has no finished check yet" while rendering during a run, came
    from a run with no check on disk; this test's run has one, so it checks the rule, not that crash.)"""
    cfg = WarmupConfig(preset="cpu-quick", epochs=4, n_samples=20, seed=0, device="cpu",
                       model_params=dict(SCALES["tiny"].tabddpm_params))
    run_warmup(small_train, cfg, stop_warmup_dir(tmp_path, 0), should_stop=lambda: True)
    m = stop_warmup_dir(tmp_path, 0) / "manifest.json"               # as a lane's warm-up looks mid-run
    m.write_text(json.dumps({**json.loads(m.read_text()), "status": "running", "checks": []}))
    stop_frontier(tmp_path, tmp_path, (0,))
    assert not (tmp_path / "stop_per_check.csv").exists()


def test_a_committed_cell_trained_for_other_steps_than_the_budget_is_rerun(tmp_path):
    """The regime's augmented cells were trained for 8,000 steps against the baseline's 4,000: a rerun
    under the equal-steps budget must not skip their seed, and a grid with no budget (stop) is not held to one."""
    prev = {"warmups": [{"seed": 0}, {"seed": 1}]}
    rows = [{"grid": "main", "method": m, "seed": s, "status": "ok", "model": "tabddpm",
             "steps": 8000 if (m == "tabcutmix" and s == 1) else 4000} for s in (0, 1) for m in ("baseline", "tabcutmix")]
    rows += [{"grid": "stop", "method": "early_stop", "seed": s, "status": "ok", "model": "tabddpm", "steps": 3040}
             for s in (0, 1)]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    grids = {"main": ("baseline", "tabcutmix"), "stop": ("early_stop",)}
    assert committed_seeds(prev, tmp_path / "results.csv", grids, (0, 1)) == {0, 1}      # no budget asked: both
    budget = {"main": 4000, "stop": None}
    assert committed_seeds(prev, tmp_path / "results.csv", grids, (0, 1), steps=budget) == {0}
    assert committed_seeds(prev, tmp_path / "results.csv", grids, (0, 1), steps={"main": 8000}) == set()


def test_the_private_grid_runs_dp_and_the_dynamic_threshold_without_a_warmup(tmp_path):
    """Issue 38: the mid scale's ``private`` grid holds DP-SGD at ε = 1 and 10 and the dynamic threshold, at the
    baseline's optimiser steps (the parametrized test above), with no warm-up (neither ranks rows by one), its
    checks drawing the scale's rows; its claims are declared beside the others, before its runs."""
    sc = SCALES["mid"]
    specs = grid_specs(sc, "adult", 0, {f"{f:g}": 1 for f in sc.T_fracs}, tmp_path, "cpu", 1, _n_train(sc))
    private = specs["private"]
    assert private.methods == ("dp@1", "dp@10", "dynamic_threshold") and private.run_dir is None
    assert private.dynamic == {"n_samples": sc.warmup_samples}
    assert available_methods(("dp@3", "nope"))[1] == ("nope",)
    assert "private" not in grid_specs(SCALES["regime"], "adult", 0, {"0.25": 960, "0.5": 1920}, tmp_path, "cpu", 1,
                                       250)
    arms = {c[4] for c in CLAIMS} | {c[6] for c in CLAIMS}
    assert {"dp@1", "dp@10", "dynamic_threshold"} <= arms
    assert "private" in PARTS and "private" in DEFAULT_PARTS
