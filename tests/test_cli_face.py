"""The CLI's face, as docs/cli.md states it: ``memviz --version``; an option error names its command;
``--quiet`` on every command; limits in ``--help``; a long cell cut with a mark in the report; prune's JSON
saying its lists are cut. Each failed on the code before it (no --version; ``memviz: error:``; inspect, prune,
report and study refused --quiet; a 1 MB cell quoted whole; 20 of 100 removed rows listed as if all)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from helpers import TINY_MODEL, memviz_cli

from memviz.cli import build_parser
from memviz.commands import COMMANDS
from memviz.io import VERSION
from memviz.tables.data import load_table
from memviz.warmup.run import WarmupConfig, run_warmup

SAMPLE = ROOT / "sample_data"


def test_version_is_memvizs():
    out = subprocess.run([sys.executable, "-m", "memviz", "--version"], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert (out.returncode, out.stdout, out.stderr) == (0, f"memviz {VERSION}\n", "")


def test_help_still_loads_no_numpy():
    code = ("import sys; from memviz.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass\n"
            "print('numpy' in sys.modules, 'memviz.io' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    assert out.stdout.strip().splitlines()[-1] == "False False", out


#: each command's required arguments (placeholders: the option error comes first)
REQUIRED = {"memorize": ["--train", "t", "--synthetic", "s", "--out", "o"], "warmup": ["--train", "t", "--out", "o"],
            "inspect": ["run"], "sample": ["run", "--out", "o"], "prune": ["run", "--out", "o"],
            "compare": ["--train", "t", "--test", "h", "--out", "o"], "study": ["--data-dir", "d", "--out", "o"],
            "audit": ["--train", "t", "--synthetic", "s", "--out", "o"], "report": ["run", "--out", "o"],
            "attack": ["run"], "explain": ["run", "--out", "o"]}


def test_every_command_is_probed():
    assert set(REQUIRED) == set(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_unknown_option_is_said_by_its_command(command, capsys):
    """Every required argument given: the unknown option alone is the error ('memviz: error:' before)."""
    code, _, err = memviz_cli(capsys, command, *REQUIRED[command], "--no-such-option")
    assert code == 2
    assert err == f"memviz {command}: error: unrecognized arguments: --no-such-option (see --help)\n", err


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_takes_quiet(command):
    assert "--quiet" in build_parser([command]).commands[command].format_help()


def test_limits_are_in_the_help():
    p = build_parser()
    helps = {name: " ".join(p.commands[name].format_help().split()) for name in COMMANDS}
    assert "an even number, at least 4" in helps["attack"]
    for name in ("attack", "sample", "warmup", "compare", "study"):
        assert "from 0 to 4294967295" in helps[name], name
    assert "strictly between 0 and 1" in helps["prune"] and "(k >= 1)" in helps["prune"]
    assert "1 or more" in helps["sample"] and "(default: 0)" in helps["sample"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("face")
    pd.read_csv(SAMPLE / "train.csv").iloc[:200].to_csv(d / "train.csv", index=False)
    train = load_table(d / "train.csv", SAMPLE / "meta.json")
    run_warmup(train, WarmupConfig(epochs=2, check_every=1, n_samples=60, device="cpu", model_params=TINY_MODEL),
               d / "run")
    return d / "run"


@pytest.mark.parametrize("argv", [["inspect", "{run}"], ["prune", "{run}", "--out", "{tmp}/p.csv"],
                                  ["sample", "{run}", "--rows", "5", "--out", "{tmp}/s.csv"]])
def test_quiet_leaves_the_json_line_alone(run, capsys, tmp_path, argv):
    code, line, err = memviz_cli(capsys, *[a.format(run=run, tmp=tmp_path) for a in argv], "--quiet")
    assert code == 0, err
    out = capsys.readouterr()
    assert json.loads(line) and out.out == ""


def test_prune_says_its_lists_are_cut(run, capsys, tmp_path):
    code, line, err = memviz_cli(capsys, "prune", run, "--p", 0.5, "--out", tmp_path / "p.csv")
    assert code == 0, err
    out = json.loads(line)
    assert (out["removed"], out["removed_shown"], out["removed_truncated"]) == (100, 20, True)
    assert len(out["removed_row_ids"]) == 20
    code, line, err = memviz_cli(capsys, "prune", run, "--p", 0.05, "--out", tmp_path / "p.csv")
    out = json.loads(line)
    assert (out["removed"], out["removed_shown"], out["removed_truncated"]) == (10, 10, False)


def test_a_long_cell_is_cut_with_a_mark_in_the_report(capsys, tmp_path):
    """A category of 100,000 characters, copied 30 times: the raw report quotes at most 200 of them a cell (a
    1 MB one had been quoted whole, 33 times: a 38 MB report)."""
    rng = np.random.default_rng(0)
    tr = pd.read_csv(SAMPLE / "train.csv").iloc[:200].copy()
    long = "L" * 100_000
    tr["note"] = rng.choice([long, "short", "other"], len(tr))
    tr.to_csv(tmp_path / "train.csv", index=False)
    test = pd.read_csv(SAMPLE / "test.csv")
    test.iloc[:200].assign(note=rng.choice([long, "short", "other"], 200)).to_csv(tmp_path / "hold.csv", index=False)
    idx = tr.index[tr["note"] == long][:3]
    pd.concat([tr.loc[np.repeat(idx, 30)], test.iloc[300:410].assign(note="short")], ignore_index=True).to_csv(
        tmp_path / "syn.csv", index=False)
    code, _, err = memviz_cli(capsys, "audit", "--train", tmp_path / "train.csv", "--synthetic", tmp_path / "syn.csv",
                              "--holdout", tmp_path / "hold.csv", "--out", tmp_path / "a", "--no-quality",
                              "--no-evidence", "--quiet", "--raw-report")
    assert code == 0, err
    html = (tmp_path / "a" / "report.html").read_text()
    assert max(len(m) for m in re.findall(r"L{50,}", html)) == 200
    assert "L" * 200 + "…" in html
