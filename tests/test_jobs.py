"""memviz.jobs: detached warm-ups, their state read from disk, cancellation, no mixing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import TINY_MODEL
from memviz import jobs
from memviz.store import list_runs


@pytest.fixture(scope="module")
def tiny(sample):
    train, _ = sample
    return train.subset(train.row_ids[:80])


def test_runs_root_from_argument_env_or_default(monkeypatch, tmp_path):
    monkeypatch.delenv(jobs.RUNS_ENV, raising=False)
    assert str(jobs.runs_root()) == "runs"
    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    assert jobs.runs_root() == tmp_path
    assert jobs.runs_root(tmp_path / "x") == tmp_path / "x"


def test_job_ids_are_unique_and_kinds_checked():
    ids = {jobs.new_job_id("warmup") for _ in range(50)}
    assert len(ids) == 50
    with pytest.raises(jobs.MemvizError, match="kind"):
        jobs.new_job_id("train")


def test_log_outcome_reads_the_cli_contract():
    assert jobs._log_outcome('warm-up [###---] 3/6 loss 1.0\n{"status": "finished"}\n')[0] == "finished"
    state, msg, _ = jobs._log_outcome("warm-up [#-] 1/6\nmemviz warmup: error: epochs=0: must be at least 1\n")
    assert state == "failed" and msg == "epochs=0: must be at least 1"
    assert jobs._log_outcome("memviz compare: interrupted\n")[0] == "cancelled"
    assert jobs._log_outcome("compare [##--] 2/4 baseline/tabddpm\n")[0] is None
    assert jobs._bar_progress("warm-up [##----] 2/6 loss\nwarm-up [###---] 3/6 loss\n") == (3, 6)


def test_pid_alive_knows_a_finished_process():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = jobs._proc_start_ticks(proc.pid)
    proc.wait()
    assert not jobs.pid_alive(proc.pid, ticks)
    assert jobs.pid_alive(os.getpid())
    assert not jobs.pid_alive(None)


def test_a_bad_setting_fails_with_the_cli_one_line_message(tiny, tmp_path):
    job = jobs.start_warmup(tiny, root=tmp_path, epochs=0, device="cpu")
    st = jobs.wait(job, timeout=180)
    assert st.state == "failed" and "epochs=0" in st.message and "\n" not in st.message


@pytest.mark.slow
def test_warmup_job_runs_detached_and_finishes(tiny, tmp_path):
    job = jobs.start_warmup(tiny, root=tmp_path, epochs=2, check_every=1, n_samples=60, device="cpu",
                            model_params=TINY_MODEL, label="tiny")
    info = job.info()
    assert info["pid"] and info["command"][1:4] == ["-m", "memviz", "warmup"]
    assert os.getsid(info["pid"]) != os.getsid(0)  # own session: a closed tab or Ctrl-C does not stop it
    st = jobs.wait(job, timeout=300)
    assert st.state == "finished", st.message
    assert [c["epoch"] for c in st.checks] == [1, 2] and st.fraction == 1.0
    assert st.result["status"] == "finished"
    runs = list_runs(tmp_path)
    assert runs["run_id"].tolist() == [job.job_id] and runs["status"].iloc[0] == "finished"
    assert jobs.list_jobs(tmp_path)["state"].tolist() == ["finished"]


@pytest.mark.slow
def test_two_jobs_do_not_mix_and_cancel_keeps_finished_checks(tiny, tmp_path):
    a = jobs.start_warmup(tiny, root=tmp_path, epochs=400, check_every=1, n_samples=40, device="cpu",
                          model_params=TINY_MODEL)
    b = jobs.start_warmup(tiny, root=tmp_path, epochs=2, check_every=1, n_samples=40, device="cpu",
                          model_params=TINY_MODEL, seed=1)
    assert a.out != b.out and a.job_dir != b.job_dir
    jobs.cancel(b)  # before it created its run: interrupted, nothing left half-written
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # let a finish one check, then cancel it
        st = jobs.job_status(a)
        assert not st.final, st.message
        if st.checks:
            break
        time.sleep(0.5)
    jobs.cancel(a)
    st_a, st_b = jobs.wait(a, timeout=300), jobs.wait(b, timeout=300)
    assert st_a.state == "cancelled" and len(st_a.checks) >= 1
    assert json.loads((a.out / "manifest.json").read_text())["status"] == "cancelled"
    assert st_b.state in ("cancelled", "finished")
    assert set(jobs.list_jobs(tmp_path)["job_id"]) == {a.job_id, b.job_id}
