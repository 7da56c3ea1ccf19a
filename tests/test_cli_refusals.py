"""Wrong inputs are one line, and what is accepted is right: the probes of the fourth hardening round, from the
command line, each failing on the code before it.

* the training table as a hold-out or a control: refused by every command with the audit's message (``attack``
  read it as "no better than chance (AUC 0.50)"); a low-cardinality table's genuine hold-out and a one-column
  table accepted (the flat 50 % refused them);
* numbers hand-edited into a run folder (Infinity, NaN, 1e999): one line naming the file and the field;
* seeds: one range, 0 to 2³² − 1, on every command (tracebacks in scikit-learn and numpy before);
* ``sample --rows`` beyond the memory, ``report --p nan / --k 0 / --T -3``, ``attack --top`` beyond the ranking,
  ``report --compare`` on an unfinished comparison, a manifest swapping a numerical and a categorical column.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from helpers import TINY_MODEL, memviz_cli

from memviz.app.bounds import DEFAULT_SAMPLE_ROWS_MAX
from memviz.attacks.design import shadow_seed
from memviz.engine.budget import sample_bytes
from memviz.tables.data import load_companion, load_table
from memviz.warmup.run import WarmupConfig, run_warmup

SAMPLE = ROOT / "sample_data"
#: the seed range's end every command states (memviz.errors.SEED_MAX)
SEED_MAX = 2**32 - 1
SMALL_ATTACK = ["--shadows", "4", "--named", "0", "--random", "2", "--holdout-rows", "2", "--device", "cpu",
                "--quiet", "--model-params", json.dumps({**TINY_MODEL, "steps": 20})]


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    """train.csv (200 sample rows), syn.csv, hold.csv and a finished tiny run with a floor (run/)."""
    d = tmp_path_factory.mktemp("refusals")
    pd.read_csv(SAMPLE / "train.csv").iloc[:200].to_csv(d / "train.csv", index=False)
    te = pd.read_csv(SAMPLE / "test.csv")
    te.iloc[:150].to_csv(d / "syn.csv", index=False)
    te.iloc[200:400].to_csv(d / "hold.csv", index=False)
    train = load_table(d / "train.csv", SAMPLE / "meta.json")
    hold = load_companion(train, d / "hold.csv", role="test")
    run_warmup(train, WarmupConfig(epochs=2, check_every=1, n_samples=60, device="cpu", model_params=TINY_MODEL),
               d / "run", holdout=hold)
    return d


def _one_line(err: str, command: str) -> str:
    """The error of ``err``'s one error line (no traceback), after 'memviz COMMAND: error: '."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ": error: " in ln]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"memviz {command}: error: "), err
    return lines[0].split(": error: ", 1)[1]


def _copy_run(d, name):
    out = d / name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(d / "run", out, ignore=shutil.ignore_patterns("writer.lock"))
    return out


# ------------------------------------------------------------------ the training table as a hold-out
def test_every_command_refuses_the_training_table_as_a_holdout_with_the_audits_words(d, capsys, tmp_path):
    train = d / "train.csv"
    code, _, err = memviz_cli(capsys, "audit", "--train", train, "--synthetic", d / "syn.csv", "--holdout", train,
                              "--out", tmp_path / "a", "--no-quality", "--no-evidence", "--quiet")
    assert code == 2
    said = _one_line(err, "audit")
    assert said.startswith(f"{train}: 200 of its 200 rows (100.0 %) are rows of the training table"), said
    runs = {
        "attack": ["attack", d / "run", "--holdout", train, "--out", tmp_path / "att", *SMALL_ATTACK],
        "report": ["report", d / "run", "--holdout", train, "--out", tmp_path / "r", "--no-quality",
                   "--no-evidence"],
        "memorize": ["memorize", "--train", train, "--synthetic", d / "syn.csv", "--holdout", train, "--out",
                     tmp_path / "m.csv", "--quiet"],
        "warmup": ["warmup", "--train", train, "--holdout", train, "--epochs", 1, "--out", tmp_path / "w", "--quiet"],
    }
    for command, argv in runs.items():
        code, _, err = memviz_cli(capsys, *argv)
        assert code == 2, (command, err)
        assert _one_line(err, command) == said, command
    assert not (tmp_path / "att").exists()               # before any shadow


def _low_cardinality(n, seed, columns):
    """``n`` rows of categorical columns of few levels (level j drawn with weight 2^-j): most rows repeat."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, levels in columns:
        w = 0.5 ** np.arange(levels)
        out[name] = [f"{name}{v}" for v in rng.choice(levels, n, p=w / w.sum())]
    return pd.DataFrame(out)


@pytest.mark.parametrize("columns", [(("day", 7), ("plan", 3), ("region", 4)), (("kind", 3),)],
                         ids=["three-columns", "one-column"])
def test_a_low_cardinality_tables_genuine_holdout_is_audited(columns, capsys, tmp_path):
    """Most of its rows meet a training row, as the training rows meet each other: audited, not refused."""
    _low_cardinality(800, 0, columns).to_csv(tmp_path / "train.csv", index=False)
    _low_cardinality(400, 1, columns).to_csv(tmp_path / "hold.csv", index=False)
    _low_cardinality(400, 2, columns).to_csv(tmp_path / "syn.csv", index=False)
    code, line, err = memviz_cli(capsys, "audit", "--train", tmp_path / "train.csv", "--synthetic",
                                 tmp_path / "syn.csv", "--holdout", tmp_path / "hold.csv", "--out", tmp_path / "a",
                                 "--no-quality", "--no-evidence", "--quiet")
    assert code == 0, err
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert doc["holdout_identical_share"] > 0.5


# ------------------------------------------------------------------ numbers read from a run folder
@pytest.mark.parametrize("file, where, value, token", [
    ("manifest.json", ("checks", 0, "shape"), math.inf, "Infinity"),
    ("manifest.json", ("checks", 1, "mem_ratio"), -math.inf, "-Infinity"),
    ("floor.json", ("floor",), math.nan, "NaN"),
    ("floor.json", ("floor_ci", 0), "1e999", "1e999"),
])
@pytest.mark.parametrize("command", ["inspect", "report", "sample"])
def test_a_hand_edited_number_that_is_not_finite_is_one_line(d, capsys, tmp_path, file, where, value, token,
                                                             command):
    run = _copy_run(d, "edited")
    doc = json.loads((run / file).read_text())
    node = doc
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = value if not isinstance(value, str) else 0.125
    text = json.dumps(doc)
    if isinstance(value, str):
        text = text.replace("0.125", value, 1)
    (run / file).write_text(text)
    argv = {"inspect": ["inspect", run, "--json"], "report": ["report", run, "--out", tmp_path / "r", "--no-quality",
                                                              "--no-evidence"],
            "sample": ["sample", run, "--rows", 5, "--out", tmp_path / "s.csv"]}[command]
    code, _, err = memviz_cli(capsys, *argv)
    assert code == 2, err
    field = "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else k) for i, k in enumerate(where))
    assert _one_line(err, command) == (f"{run / file}: {'manifest' if file == 'manifest.json' else 'floor record'} "
                                       f"field {field!r} is {token}, not a finite number (memviz writes null where "
                                       "it has none: the file was edited)")


# ------------------------------------------------------------------ seeds
@pytest.mark.parametrize("argv", [
    ["warmup", "--train", "{d}/train.csv", "--epochs", "1", "--out", "{tmp}/w", "--quiet", "--seed", "-1"],
    ["warmup", "--train", "{d}/train.csv", "--epochs", "1", "--out", "{tmp}/w", "--quiet", "--seed", "4294967296"],
    ["compare", "--train", "{d}/train.csv", "--test", "{d}/hold.csv", "--methods", "baseline", "--models", "tvae",
     "--seeds", "0,4294967296", "--epochs", "1", "--out", "{tmp}/c", "--quiet"],
    ["compare", "--train", "{d}/train.csv", "--test", "{d}/hold.csv", "--methods", "baseline", "--models", "tvae",
     "--seeds", "-1", "--epochs", "1", "--out", "{tmp}/c", "--quiet"],
    ["sample", "{d}/run", "--rows", "5", "--out", "{tmp}/s.csv", "--seed", "100000000000000000000000"],
    ["sample", "{d}/run", "--rows", "5", "--out", "{tmp}/s.csv", "--seed", "1e23"],
    ["sample", "{d}/run", "--rows", "5", "--out", "{tmp}/s.csv", "--seed", "-1"],
    ["attack", "{d}/run", "--out", "{tmp}/att", "--quiet", "--shadows", "4", "--top", "1", "--named", "0", "--random",
     "1", "--holdout-rows", "0", "--model-params", '{"steps": 2, "layers": [8]}', "--seed", "4294967296"],
    ["study", "--data-dir", "{d}", "--out", "{tmp}/st", "--seeds", "4294967296"],
], ids=["warmup-neg", "warmup-2**32", "compare-2**32", "compare-neg", "sample-1e23-digits", "sample-1e23",
        "sample-neg", "attack-2**32", "study-2**32"])
def test_every_seed_option_takes_one_range(d, capsys, tmp_path, argv):
    argv = [a.replace("{d}", str(d)).replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = memviz_cli(capsys, *argv)
    assert code == 2, err
    said = _one_line(err, argv[0])
    assert "is not a seed" in said and str(SEED_MAX) in said, said
    assert not any(tmp_path.iterdir()), "written before the refusal"


def test_the_largest_seed_runs_a_warmup_a_draw_and_an_attack(d, capsys, tmp_path):
    """2**32 - 1 everywhere; an attack's shadows take their seeds from numpy's SeedSequence (seed 20261207 was
    multiplied by 10,000 and traced in scikit-learn)."""
    code, _, err = memviz_cli(capsys, "warmup", "--train", d / "train.csv", "--epochs", 1, "--out", tmp_path / "w",
                              "--quiet", "--seed", SEED_MAX, "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    code, _, err = memviz_cli(capsys, "sample", d / "run", "--rows", 5, "--out", tmp_path / "s.csv", "--seed", SEED_MAX)
    assert code == 0, err
    code, line, err = memviz_cli(capsys, "attack", d / "run", "--holdout", d / "hold.csv", "--top", 2, "--out",
                                 tmp_path / "att", "--seed", 20261207, *SMALL_ATTACK)
    assert code == 0, err
    assert json.loads(line)["n_shadows"] == 4


def test_a_shadows_seed_stays_in_range():
    seeds = [shadow_seed(SEED_MAX, s) for s in range(64)] + [shadow_seed(20261207, s) for s in range(64)]
    assert all(0 <= s <= SEED_MAX for s in seeds) and len(set(seeds)) == len(seeds)
    assert shadow_seed(3, 5) == shadow_seed(3, 5) != shadow_seed(3, 6)


# ------------------------------------------------------------------ bounded and checked
def test_sample_checks_the_memory_before_any_work(d, tmp_path):
    """In a process of its own: before, the draw of 10**20 rows began and ran on, silently."""
    try:
        done = subprocess.run([sys.executable, "-m", "memviz", "sample", str(d / "run"), "--rows", str(10 ** 20),
                               "--out", str(tmp_path / "s.csv")], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        pytest.fail("sample --rows 10**20 was still drawing after 300 s")
    assert done.returncode == 2
    said = _one_line(done.stderr, "sample")
    assert said.startswith("drawing 100,000,000,000,000,000,000 rows of 15 columns needs about"), said
    assert not (tmp_path / "s.csv").exists()


def test_sample_bytes_is_the_dashboards_rule_too():
    """One rule: the engine's memory guard estimates a draw; the dashboard's cap (a time bound) comes on top."""
    assert sample_bytes(200_000, 15) == 200_000 * (32 * 15 + 64)
    assert sample_bytes(DEFAULT_SAMPLE_ROWS_MAX, 15) < 2**30


@pytest.mark.parametrize("option, value, words", [("--p", "nan", "p must be strictly between 0 and 1, got nan"),
                                                  ("--k", "0", "k must be an integer >= 1, got 0"),
                                                  ("--T", "-3", "T must be an epoch, 1 or more")])
def test_report_checks_p_k_and_t_once(d, capsys, tmp_path, option, value, words):
    code, _, err = memviz_cli(capsys, "report", d / "run", "--out", tmp_path / "r", option, value, "--no-quality",
                              "--no-evidence", "--no-compare")
    assert code == 2
    assert _one_line(err, "report").startswith(words)
    assert not (tmp_path / "r").exists()


def test_attack_top_beyond_the_ranking_says_so(d, capsys, tmp_path):
    code, line, err = memviz_cli(capsys, "attack", d / "run", "--holdout", d / "hold.csv", "--top", 1000000,
                                 "--out", tmp_path / "att", *SMALL_ATTACK)
    assert code == 0, err
    n = math.ceil(0.1 * 200)
    assert (f"memviz attack: warning: 1,000,000 top targets asked, and DynamicCut's ranking at p=0.1 names {n} of "
            f"the 200 training rows") in err
    assert json.loads(line)["groups"]["top"]["n"] == n


def test_report_says_a_comparison_is_unfinished(d, capsys, tmp_path):
    """The comparison as it stands mid-run: experiment.json without its end, results.csv with 2 of 4 cells."""
    cmp = tmp_path / "cmp"
    code, _, err = memviz_cli(capsys, "compare", "--train", d / "train.csv", "--schema", SAMPLE / "meta.json",
                              "--test", d / "hold.csv", "--methods", "baseline,random", "--models", "tvae",
                              "--seeds", "0,1", "--epochs", 1, "--run", d / "run", "--out", cmp, "--quiet",
                              "--n-jobs", 1)
    assert code == 0, err
    doc = json.loads((cmp / "experiment.json").read_text())
    for k in ("seconds", "cells", "ran", "failed"):
        doc.pop(k)
    (cmp / "experiment.json").write_text(json.dumps(doc))
    res = pd.read_csv(cmp / "results.csv")
    res.iloc[:2].to_csv(cmp / "results.csv", index=False)
    code, line, err = memviz_cli(capsys, "report", d / "run", "--compare", cmp, "--out", tmp_path / "r",
                                 "--no-quality", "--no-evidence")
    assert code == 0, err
    (summary,) = json.loads(line)["comparisons"]
    assert (summary["cells_done"], summary["cells_total"], summary["finished"]) == (2, 4, False)
    html = (tmp_path / "r" / "report.html").read_text()
    said = "This comparison is unfinished: 2 of its 4 cells are done"
    short = html.index("<h2>In short</h2>")
    assert short < html.index(said) < html.index("<h2>", short + 10)      # on the first screen, under In short


@pytest.mark.parametrize("command", ["report", "attack", "sample", "prune"])
def test_a_manifest_swapping_a_numerical_and_a_categorical_column_is_one_line(d, capsys, tmp_path, command):
    run = _copy_run(d, "swapped")
    doc = json.loads((run / "manifest.json").read_text())
    s = doc["schema"]
    s["numerical"][0], s["categorical"][0] = s["categorical"][0], s["numerical"][0]
    (run / "manifest.json").write_text(json.dumps(doc))
    argv = {"report": ["report", run, "--out", tmp_path / "r", "--no-quality", "--no-evidence"],
            "attack": ["attack", run, "--out", tmp_path / "att", *SMALL_ATTACK],
            "sample": ["sample", run, "--rows", 5, "--out", tmp_path / "s.csv"],
            "prune": ["prune", run, "--out", tmp_path / "p.csv"]}[command]
    code, _, err = memviz_cli(capsys, *argv)
    assert code == 2, err
    assert _one_line(err, command) == (
        f"{run / 'manifest.json'}: manifest field 'schema': column {s['numerical'][0]!r} is numerical there, but "
        "the run's training table holds text in it (train.parquet); the manifest does not match the run")
