"""A foreign or damaged check checkpoint is one line in ``memviz sample`` (issue 41, item 6).

At e9efb32 a checkpoint that torch read but that was not this memviz's TabDDPM state (no parameters,
other layer sizes, an epoch that is no integer) gave a KeyError, RuntimeError or ValueError traceback.
"""
from __future__ import annotations

import copy

import pytest
import torch
from helpers import memviz_cli, tiny_warmup

from memviz.warmup import checkpoints
from memviz.warmup.run import run_warmup


@pytest.fixture(scope="module")
def run(small_train, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ckpt") / "r"
    run_warmup(small_train, tiny_warmup(epochs=4, n_samples=40), folder)
    return folder


def _crafted(state: dict) -> dict:
    wrong_layers = copy.deepcopy(state)
    wrong_layers["params"]["config"]["layers"] = [7, 7]
    no_params = {k: v for k, v in state.items() if k != "params"}
    other_weights = copy.deepcopy(state)
    other_weights["model"] = {"w": torch.zeros(3)}
    return {"wrong_layers": wrong_layers, "no_params": no_params, "other_weights": other_weights,
            "epoch_text": {**state, "epoch": "four"}, "epoch_bool": {**state, "epoch": True},
            "model_only": {"model": {}, "epoch": 1}}


@pytest.mark.parametrize("case", ["wrong_layers", "no_params", "other_weights", "epoch_text", "epoch_bool",
                                  "model_only", "garbage", "empty"])
def test_memviz_sample_of_a_foreign_checkpoint_is_one_line(run, case, tmp_path, capsys):
    f = checkpoints.path(run, 1)
    good = f.read_bytes()
    try:
        if case == "garbage":
            f.write_bytes(b"PK\x03\x04 not a zip at all" * 10)
        elif case == "empty":
            f.write_bytes(b"")
        else:
            torch.save(_crafted(checkpoints.load_checkpoint(run, 1))[case], f)
        code, _, err = memviz_cli(capsys, "sample", run, "--check", "1", "--rows", "10", "--out",
                                  tmp_path / "s.csv", "--device", "cpu")
    finally:
        f.write_bytes(good)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "check_0001.pt" in err, err
    assert not (tmp_path / "s.csv").exists()
    code, _, err = memviz_cli(capsys, "sample", run, "--check", "1", "--rows", "10", "--out", tmp_path / "s.csv",
                              "--device", "cpu")
    assert code == 0, err
