"""A comparison's settings checked once and passed down typed (issue 37 item 4).

DynamicCut's (p, k, T) are checked by :class:`memviz.dynamics.dynamiccut.DynamicCutParams` when
:meth:`CompareConfig.validated` makes one (``CompareConfig.dynamiccut``); the grid, the rankings and the
cells take it and check nothing again. These tests wrap the one p check and count: a grid checked p
4 times with two ranking scores (validated, run_grid, once per score), and 2 + one per ``random`` cell
without a ranking. The cells' context holds typed, frozen settings, not dicts, and still pickles.
"""
from __future__ import annotations

import dataclasses
import json
import pickle
import typing

import pytest

import memviz.dynamics.dynamiccut as dc
from memviz.cli import main
from memviz.compare import CompareConfig, run_grid
from memviz.compare.cell import GridContext
from memviz.compare.config import CheckedCompare
from memviz.compare.methods import EarlyStop
from memviz.dynamics.dynamiccut import DynamicCutParams
from memviz.errors import MemvizError
from memviz.mitigate.dynamic import DynamicThreshold
from memviz.models.privacy import PrivacyConfig
from memviz.tables.data import sample_data_dir
from memviz.warmup.frontier import StopRule, recommend
from memviz.warmup.run import load_warmup

from .stubs import grid


@pytest.fixture
def p_checks(monkeypatch):
    """The number of times DynamicCut's p is checked (the one validator, wrapped)."""
    n = {"p": 0}
    check = dc._check_p

    def counting(p):
        n["p"] += 1
        return check(p)

    monkeypatch.setattr(dc, "_check_p", counting)
    return n


def test_a_grid_with_both_rankings_checks_p_once(tables, run_floor, tmp_path, stub, p_checks):
    train, test = tables
    res = grid(train, test, ["dynamiccut", "dynamiccut_excess", "random", "early_stop"],
               ["ctgan"], [0], tmp_path, run_dir=str(run_floor), p=0.15, k=2, T=3, epochs=2, device="cpu")
    assert (res["status"] == "ok").all(), res["error"].tolist()
    assert p_checks["p"] == 1                   # it was 4: validated, run_grid, one per ranking score
    by = res.set_index(["method", "seed"])
    assert by.loc[("dynamiccut", 0), "n_removed"] == by.loc[("random", 0), "n_removed"] == 30   # ceil(0.15 * 200)
    manifest = json.loads((tmp_path / "experiment.json").read_text())
    assert (manifest["p"], manifest["config"]["p"], manifest["config"]["k"], manifest["config"]["T"]) == (0.15, 0.15, 2, 3)
    assert set(manifest["early_stop"]) == {"epoch", "check", "warmup_epochs", "reason", "rule"}
    assert "dynamiccut" not in manifest["config"]


def test_random_cells_without_a_ranking_check_p_once(tables, tmp_path, stub, p_checks):
    train, test = tables
    res = grid(train, test, ["random"], ["ctgan"], [0, 1], tmp_path, p=0.13, device="cpu")
    assert (res["status"] == "ok").all()
    assert p_checks["p"] == 1                   # it was 4: validated, run_grid and once in each random cell
    assert set(res.loc[res["method"] == "random", "n_removed"]) == {26}   # ceil(0.13 * 200)


def test_the_cli_checks_p_once(files, tmp_path, stub, p_checks, capsys):
    """memviz compare checks its flags at the door and runs that config: it wrote the config into its job spec
    and read it back, checking p a second time (2 before)."""
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"),
                 "--schema", str(sample_data_dir() / "meta.json"), "--methods", "random", "--models", "ctgan",
                 "--seeds", "0", "--p", "0.13", "--n-jobs", "1", "--device", "cpu", "--out", str(tmp_path / "o")])
    assert code == 0, capsys.readouterr().err
    assert p_checks["p"] == 1
    assert json.loads((tmp_path / "o" / "experiment.json").read_text())["config"]["p"] == 0.13


def test_the_config_makes_the_params_once_and_never_writes_them(p_checks):
    cfg = CompareConfig(methods=("baseline", "random"), p=0.2, k=4, T=6).validated()
    assert cfg.dynamiccut == DynamicCutParams(0.2, 4, 6) and p_checks["p"] == 2    # the comparison's and this one
    p_checks["p"] = 0
    assert cfg.validated().dynamiccut is cfg.dynamiccut and p_checks["p"] == 0     # validated again: kept
    assert dataclasses.replace(cfg, p=0.3).dynamiccut is None                      # another p: made again
    assert dataclasses.replace(cfg, p=0.3).validated().dynamiccut.p == 0.3
    assert "dynamiccut" not in cfg.to_dict() and CompareConfig.from_dict(cfg.to_dict()).validated() == cfg
    with pytest.raises(MemvizError, match="unknown setting 'dynamiccut'"):
        CompareConfig.from_dict({**cfg.to_dict(), "dynamiccut": None})
    with pytest.raises(TypeError):
        CompareConfig(dynamiccut=DynamicCutParams())                               # derived, never given
    assert CompareConfig(methods=("baseline",), p=1.5).validated().dynamiccut is None   # unused: not checked


@pytest.mark.parametrize("bad, words", [({"p": 1.5}, "p must be strictly between 0 and 1, got 1.5"),
                                        ({"p": 0.0, "k": 0}, "p must be strictly between 0 and 1, got 0.0"),
                                        ({"k": 0}, "k must be an integer >= 1, got 0"),
                                        ({"T": "x"}, "T must be a number of epochs, got 'x'")])
def test_bad_params_are_one_line_in_the_words_they_had(bad, words):
    with pytest.raises(MemvizError) as exc:
        CompareConfig(methods=("dynamiccut",), **bad).validated()
    assert str(exc.value) == words


@pytest.mark.parametrize("flag, value, words", [("--p", "1.5", "p must be strictly between 0 and 1, got 1.5"),
                                                ("--k", "0", "k must be an integer >= 1, got 0")])
def test_the_cli_refuses_bad_params_in_one_line_before_any_work(files, tmp_path, capsys, flag, value, words):
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"),
                 "--methods", "baseline,random", "--models", "ctgan", flag, value, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_the_cells_context_is_typed_and_pickles(tables, run_floor):
    hints = typing.get_type_hints(GridContext)
    names = {f.name for f in dataclasses.fields(GridContext)}
    assert "p" not in names and hints["dynamiccut"] == DynamicCutParams | None
    for name, typed in (("privacy", PrivacyConfig), ("dynamic", DynamicThreshold), ("stop", EarlyStop)):
        assert hints[name] is not dict and typing.get_origin(hints[name]) is not dict, name
        assert typed in typing.get_args(hints[name]), (name, hints[name])
    for typed in (PrivacyConfig, DynamicThreshold, EarlyStop, DynamicCutParams):
        assert typed.__dataclass_params__.frozen
    train, test = tables
    res = load_warmup(run_floor)
    stop = EarlyStop(recommend(res.per_check, StopRule()), int(res.config.epochs))
    ctx = GridContext(train, test, "key", {}, DynamicCutParams(0.2, 2, 3), 0.3, 2, {}, "cpu", "paper", "kept",
                      stop=stop, privacy=(PrivacyConfig.parse({"epsilon": 2.0}),),
                      dynamic=DynamicThreshold.parse({"check_every": 1}))
    back = pickle.loads(pickle.dumps(ctx))
    assert (back.dynamiccut, back.stop, back.privacy, back.dynamic) == (ctx.dynamiccut, stop, ctx.privacy, ctx.dynamic)
    assert back.arm_privacy("dp@2") == PrivacyConfig(2.0) and stop.epochs(stop.warmup_epochs) == stop.epoch
    with pytest.raises(MemvizError, match="dp@3"):
        back.arm_privacy("dp@3")


DP_GRID = {"methods": ("baseline", "dp"), "models": ("tabddpm",), "seeds": (0,), "epsilons": (2.0,),
           "privacy": {"max_grad_norm": 2.0}, "device": "cpu", "n_jobs": 1}


def test_one_grid_checks_its_config_once_and_parses_the_privacy_settings_once(tables, tmp_path, stub, checks):
    """run_grid given a raw config checks it once at its door; its DP arm's settings are parsed once there and
    passed down typed (before: the privacy settings parsed 4 times in this grid: at the door, for the arm, for its
    check of what can train privately here, and once more there)."""
    train, test = tables
    res = run_grid(train, test, CompareConfig(**DP_GRID), tmp_path / "g")
    assert set(res["method"]) == {"baseline", "dp@2"}
    assert checks == {"config": 1, "privacy": 1}


def test_a_checked_config_is_run_as_given(tables, tmp_path, stub, checks):
    train, test = tables
    checked = CompareConfig(**DP_GRID).checked()
    assert isinstance(checked, CheckedCompare) and checks == {"config": 1, "privacy": 1}
    assert checked.arms == (PrivacyConfig(2.0, max_grad_norm=2.0),) and checked.settings.methods == ("baseline", "dp@2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        checked.arms = ()
    run_grid(train, test, checked, tmp_path / "g")
    assert checks == {"config": 1, "privacy": 1}                 # nothing checked or parsed again
    assert checked.settings.checked().settings == checked.settings   # checking a checked config changes nothing


def test_memviz_compare_checks_its_config_once_and_parses_the_privacy_settings_once(files, tmp_path, stub, checks,
                                                                                      capsys):
    """The CLI checks its flags at the door and runs that checked config (before: the config checked twice, at
    the door and again in run_grid, and the privacy settings parsed 5 times)."""
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"),
                 "--schema", str(sample_data_dir() / "meta.json"), "--methods", "baseline,dp", "--models", "tabddpm",
                 "--epsilons", "2", "--seeds", "0", "--n-jobs", "1", "--device", "cpu", "--out", str(tmp_path / "o")])
    assert code == 0, capsys.readouterr().err
    assert checks == {"config": 1, "privacy": 1}
