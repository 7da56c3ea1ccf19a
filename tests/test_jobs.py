"""memviz.jobs: detached warm-ups, their state read from disk, cancellation, no mixing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import TINY_MODEL, live_job
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
    cmd = info["command"]
    assert info["pid"] and cmd[1:4] == ["-m", "memviz.jobs", "queued"]
    assert cmd[cmd.index("--") + 1:][:2] == ["memviz", "warmup"]
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


def test_max_jobs_from_env(monkeypatch):
    monkeypatch.setenv(jobs.MAX_JOBS_ENV, "3")
    assert jobs.max_jobs() == 3
    monkeypatch.setenv(jobs.MAX_JOBS_ENV, "0")
    assert jobs.max_jobs() == 1
    monkeypatch.setenv(jobs.MAX_JOBS_ENV, "many")
    with pytest.raises(jobs.MemvizError, match="MEMVIZ_MAX_JOBS"):
        jobs.max_jobs()
    monkeypatch.delenv(jobs.MAX_JOBS_ENV)
    assert jobs.max_jobs() == max(1, (os.cpu_count() or 1) // 2)


def _busy_slot_then_queued(tiny, root, monkeypatch):
    """With one slot: a long job ``a`` holding it, then a short job ``b`` waiting as queued."""
    monkeypatch.setenv(jobs.MAX_JOBS_ENV, "1")
    a = jobs.start_warmup(tiny, root=root, epochs=400, check_every=1, n_samples=40, device="cpu",
                          model_params=TINY_MODEL)
    deadline = time.monotonic() + 300
    while jobs.job_status(a).state != "running":         # a holds the only slot
        assert time.monotonic() < deadline and not jobs.job_status(a).final
        time.sleep(0.3)
    b = jobs.start_warmup(tiny, root=root, epochs=2, check_every=1, n_samples=40, device="cpu",
                          model_params=TINY_MODEL, seed=1)
    while "queued:" not in jobs.read_log(b):
        assert time.monotonic() < deadline and not jobs.job_status(b).final
        time.sleep(0.3)
    return a, b


@pytest.mark.slow
def test_a_job_beyond_the_slots_waits_queued_then_runs(tiny, tmp_path, monkeypatch):
    a, b = _busy_slot_then_queued(tiny, tmp_path, monkeypatch)
    st_b = jobs.job_status(b)
    assert st_b.state == "queued" and not st_b.final and st_b.message.startswith("queued:")
    assert not (b.out / "manifest.json").exists()        # nothing started while waiting
    jobs.cancel(a)                                        # a stops and frees its slot
    assert jobs.wait(a, timeout=300).state == "cancelled"
    st_b = jobs.wait(b, timeout=300)
    assert st_b.state == "finished", st_b.message
    assert [c["epoch"] for c in st_b.checks] == [1, 2]
    assert not (b.job_dir / jobs.QUEUED).exists()


@pytest.mark.slow
def test_a_queued_job_can_be_cancelled(tiny, tmp_path, monkeypatch):
    a, b = _busy_slot_then_queued(tiny, tmp_path, monkeypatch)
    jobs.cancel(b)
    assert jobs.wait(b, timeout=120).state == "cancelled"
    assert not b.out.exists()
    jobs.cancel(a)
    jobs.wait(a, timeout=300)


def test_a_comparison_that_waited_in_the_queue_reads_running_once_it_prints(tmp_path):
    job = live_job(tmp_path, "compare")                 # this test process stands in for the job
    job.log_path.write_text("queued: waiting for a free slot (1 job at a time, $MEMVIZ_MAX_JOBS)\n")
    assert jobs.job_status(job).state == "starting"       # the queue's line only: not running yet
    with open(job.log_path, "a") as f:
        f.write("compare [##--] 1/4 baseline/tabddpm/seed 0\n")
    assert jobs.job_status(job).state == "running"
