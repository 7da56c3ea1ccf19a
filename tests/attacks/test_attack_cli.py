"""memviz attack from the command line at a test size: end to end (the attack, the run's report and the
Memorization page show it), and a kill -9 of the process group mid-run that a rerun resumes."""
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from conftest import ROOT
from helpers import memviz_cli, tiny_warmup

from memviz.attacks.store import SHADOWS, AttackStore, run_attack_dir
from memviz.jobs import control as jobs
from memviz.tables.data import load_companion
from memviz.warmup.run import run_warmup

#: the attack's command-line settings at a test size (TabDDPM's tiny network, a few hundred steps)
SMALL = ["--top", "3", "--named", "2", "--random", "3", "--holdout-rows", "3", "--device", "cpu", "--quiet",
         "--model-params", json.dumps({"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64,
                                       "steps": 200})]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, sample):
    """A finished tiny warm-up on 150 sample rows whose floor's hold-out file is still there."""
    root = tmp_path_factory.mktemp("attack_runs")
    train, test = sample
    train = train.subset(train.row_ids[:150])
    test.data.iloc[:300].to_csv(root / "hold.csv", index=False)
    hold = load_companion(train, root / "hold.csv", role="test")
    run_warmup(train, tiny_warmup(epochs=6, check_every=2), root / "tiny", holdout=hold)
    return root / "tiny"


@pytest.mark.slow
def test_attack_end_to_end_from_the_cli_into_the_report_and_the_page(tiny_run, tmp_path, capsys, monkeypatch):
    code, line, err = memviz_cli(capsys, "attack", tiny_run, "--shadows", "4", *SMALL)
    assert code == 0, err
    out = json.loads(line)
    assert out["out"] == str(run_attack_dir(tiny_run)) and out["n_shadows"] == 4
    assert {"top", "random", "holdout"} <= set(out["groups"]) and out["release"]["n_members"] == 3
    assert AttackStore(out["out"]).done() == [0, 1, 2, 3]
    # the run's report carries it: audit.json's evidence and the report's Other tests
    code, line, err = memviz_cli(capsys, "report", tiny_run, "--out", tmp_path / "rep", "--no-quality")
    assert code == 0, err
    doc = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert doc["evidence"]["targeted"]["sentence"] == out["sentence"]
    assert doc["evidence"]["targeted"]["groups"][0]["group"] == "top"
    assert "The targeted shadow-model attack" in (tmp_path / "rep" / "report.html").read_text()
    # the Memorization page shows the finished attack (read-only)
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tiny_run.parent))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["run"] = tiny_run.name
    at.switch_page("screens/3_memorization.py").run()
    assert not at.exception
    assert any("Targeted attack" in m.value for m in at.markdown)
    groups = next(d.value for d in at.dataframe if "TPR at 1 % FPR" in d.value.columns)
    assert list(groups["group"])[:2] == ["DynamicCut's top rows", "random training rows"]


def _committed(out) -> dict:
    """shadow -> (inode, mtime) of its meta.json, for the committed shadows."""
    return {s: ((p := out / SHADOWS / f"s{s:04d}" / "meta.json").stat().st_ino, p.stat().st_mtime_ns)
            for s in AttackStore(out).done()}


@pytest.mark.slow
def test_a_kill_9_mid_run_resumes_from_the_committed_shadows(tiny_run, tmp_path, capsys):
    out = tmp_path / "attack"
    args = ["attack", str(tiny_run), "--out", str(out), "--shadows", "10", *SMALL]
    proc = subprocess.Popen([sys.executable, "-m", "memviz", *args], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600                       # a guard only: the test waits for the state below
    try:
        while len(AttackStore(out).done()) < 2:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "no shadow committed"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)                 # the whole process group, mid-run
        proc.wait()
    before = _committed(out)
    assert 2 <= len(before) < 10 and not (out / "result.json").exists()
    assert not AttackStore(out).writer_alive()
    code, line, err = memviz_cli(capsys, "attack", *args[1:])
    assert code == 0, err
    after = _committed(out)
    assert sorted(after) == list(range(10))
    assert all(after[s] == before[s] for s in before)      # the committed shadows were reused, not retrained
    assert not [p for p in (out / SHADOWS).iterdir() if p.name.startswith(".")]
    # the same as an attack never interrupted
    code, _, err = memviz_cli(capsys, "attack", str(tiny_run), "--out", str(tmp_path / "whole"), "--shadows", "10",
                              *SMALL)
    assert code == 0, err
    a = pd.DataFrame(json.loads((out / "result.json").read_text())["targets"])
    b = pd.DataFrame(json.loads((tmp_path / "whole" / "result.json").read_text())["targets"])
    pd.testing.assert_frame_equal(a, b)
