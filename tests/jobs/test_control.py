"""memviz.jobs.control and the job contract: detached workers, state read from events, cancel, FIFO queue."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import TINY_MODEL, live_job

import memviz.commands.warmup as warmup_command
from memviz.auditing.result import Audit
from memviz.auditing.stored import RUN_FOLDER, load_audit
from memviz.cli import main
from memviz.errors import MemvizError
from memviz.jobs import control as jobs
from memviz.jobs.spec import EventLog, JobSpec, read_events, read_spec, run_spec
from memviz.warmup.run import WarmupConfig, load_warmup, run_warmup
from memviz.warmup.store import RunStore, list_runs, run_token


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
    with pytest.raises(MemvizError, match="kind"):
        jobs.new_job_id("train")


def test_pid_alive_knows_a_finished_process():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = jobs.proc_start_ticks(proc.pid)
    proc.wait()
    assert not jobs.pid_alive(proc.pid, ticks)
    assert jobs.pid_alive(os.getpid())
    assert not jobs.pid_alive(None)


def test_spec_round_trips_and_refuses_what_it_does_not_know(tmp_path):
    spec = JobSpec("warmup", WarmupConfig(epochs=3).to_dict(), {"train": "t.csv", "out": str(tmp_path / "r")},
                   resume=True, label="x")
    jobs.write_spec(tmp_path / "spec.json", spec)
    assert read_spec(tmp_path / "spec.json") == spec
    with pytest.raises(MemvizError, match="kind"):
        JobSpec("train", {}, {"out": "x"})
    with pytest.raises(MemvizError, match="unknown key 'model'"):
        JobSpec("warmup", {}, {"out": "x", "model": "y"})
    (tmp_path / "bad.json").write_text(json.dumps({"kind": "warmup"}))
    with pytest.raises(MemvizError, match="not a memviz.job/1 spec"):
        read_spec(tmp_path / "bad.json")


def test_events_file_skips_a_line_still_being_written(tmp_path):
    log = EventLog(tmp_path / "events.jsonl", min_interval=60)
    log({"event": "started", "pid": 1})
    log({"event": "epoch", "epoch": 1, "epochs": 9})
    log({"event": "epoch", "epoch": 2, "epochs": 9})       # throttled away
    log({"event": "epoch", "epoch": 9, "epochs": 9})       # the last epoch always comes through
    with open(tmp_path / "events.jsonl", "ab") as f:
        f.write(b'{"event": "check", "mem_ra')             # a half-written line
    events = read_events(tmp_path / "events.jsonl")
    assert [e["event"] for e in events] == ["started", "epoch", "epoch"]
    assert [e["epoch"] for e in events[1:]] == [1, 9] and all("t" in e for e in events)


def test_state_is_read_from_the_events(tmp_path):
    job = live_job(tmp_path, "compare")                    # this test process stands in for the worker
    log = EventLog(job.events_path, min_interval=0)
    assert jobs.job_status(job).state == "starting"
    log({"event": "queued", "slots": 1})
    st = jobs.job_status(job)
    assert st.state == "queued" and st.message.startswith("queued:") and not st.final
    log({"event": "started", "pid": os.getpid(), "kind": "compare"})
    log({"event": "epoch", "epoch": 3, "epochs": 10, "phase": "warmup"})
    st = jobs.job_status(job)
    assert st.state == "running" and (st.done, st.total, st.phase) == (3, 10, "warm-up")
    assert st.readout() == "running · warm-up epoch 3/10"
    log({"event": "cell", "done": 2, "total": 6, "method": "random", "model": "tvae", "seed": 0, "status": "ok",
         "mem_ratio": 0.25, "seconds": 3.0})
    st = jobs.job_status(job)
    assert (st.done, st.total, st.unit) == (2, 6, "cell") and st.message == "random/tvae/seed 0: mem 25.0%"
    log({"event": "failed", "error": "every cell failed; first error: boom"})
    st = jobs.job_status(job)
    assert st.state == "failed" and st.final and st.message == "every cell failed; first error: boom"


def test_a_warmup_auditing_its_last_check_says_so_until_it_finishes(tmp_path):
    job = live_job(tmp_path, "warmup")
    log = EventLog(job.events_path, min_interval=0)
    log({"event": "started", "pid": os.getpid(), "kind": "warmup"})
    log({"event": "epoch", "epoch": 10, "epochs": 10})
    log({"event": "auditing"})
    st = jobs.job_status(job)
    assert st.state == "running" and st.phase == "audit" and st.message == "auditing the last check"
    assert st.readout() == "running · auditing the last check · 0 checks"   # (a fake run: no manifest)
    log({"event": "finished", "status": "finished"})
    assert jobs.job_status(job).readout() == "finished · 0 checks"


def test_a_job_whose_process_died_without_a_word_is_lost(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = jobs.proc_start_ticks(proc.pid)
    proc.wait()
    job = jobs.Job(jobs.new_job_id("warmup"), "warmup", tmp_path)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({"job_id": job.job_id, "kind": "warmup", "pid": proc.pid,
                                                      "start_ticks": ticks, "started": 0}))
    EventLog(job.events_path)({"event": "started", "pid": proc.pid})
    assert jobs.job_status(job).state == "lost"


def test_a_bad_setting_is_refused_before_anything_starts(tiny, tmp_path):
    with pytest.raises(MemvizError, match="epochs=0"):
        jobs.start_warmup(tiny, root=tmp_path, epochs=0, device="cpu")
    with pytest.raises(MemvizError, match="unknown model"):
        jobs.start_compare(tiny, tiny, root=tmp_path, models=("gpt",))
    assert not (tmp_path / jobs.JOBS).exists()


def test_cli_and_dashboard_run_the_same_spec(tiny, tmp_path, monkeypatch):
    """One code path: the dashboard's job and `memviz warmup` describe the same work."""
    seen = []
    monkeypatch.setattr(warmup_command, "run_spec", lambda spec, emit=None: seen.append(spec) or {"status": "finished"})
    monkeypatch.setattr(jobs, "_spawn", lambda job, spec, queued=True, **kw: seen.append(spec) or job)
    jobs.start_warmup(tiny, root=tmp_path, epochs=4, check_every=2, seed=3, device="cpu", model_params=TINY_MODEL)
    assert main(["warmup", "--train", "t.csv", "--out", str(tmp_path / "cli"), "--epochs", "4", "--check-every",
                 "2", "--seed", "3", "--device", "cpu", "--model-params", json.dumps(TINY_MODEL), "--quiet"]) == 0
    dash, cli = seen
    assert dash.kind == cli.kind == "warmup" and dash.config == cli.config


@pytest.mark.slow
def test_warmup_job_runs_detached_and_finishes(tiny, tmp_path):
    job = jobs.start_warmup(tiny, root=tmp_path, epochs=2, check_every=1, n_samples=60, device="cpu",
                            model_params=TINY_MODEL, label="tiny")
    info = job.info()
    assert info["pid"] and info["command"][1:3] == ["-m", "memviz.jobs.worker"]
    assert read_spec(job.spec_path).kind == "warmup"
    assert os.getsid(info["pid"]) != os.getsid(0)  # own session: a closed tab or Ctrl-C does not stop it
    st = jobs.wait(job, timeout=300)
    assert st.state == "finished", st.message
    assert [c["epoch"] for c in st.checks] == [1, 2] and st.fraction == 1.0
    assert st.result["status"] == "finished" and st.result["checks"] == 2
    kinds = [e["event"] for e in read_events(job.events_path)]
    assert kinds[0] == "started" and kinds[-1] == "finished" and kinds.count("check") == 2 and "epoch" in kinds
    runs = list_runs(tmp_path)
    assert runs["run_id"].tolist() == [job.job_id] and runs["status"].iloc[0] == "finished"
    assert jobs.list_jobs(tmp_path)["state"].tolist() == ["finished"]
    # the run keeps the dashboard table's row ids
    assert (RunStore(job.out).train().row_ids == tiny.row_ids).all()


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
    with pytest.raises(MemvizError, match="MEMVIZ_MAX_JOBS"):
        jobs.max_jobs()
    monkeypatch.delenv(jobs.MAX_JOBS_ENV)
    assert jobs.max_jobs() == max(1, (os.cpu_count() or 1) // 2)


def _wait_state(job, state, timeout=300):
    deadline = time.monotonic() + timeout
    while (st := jobs.job_status(job)).state != state:
        assert time.monotonic() < deadline and not st.final, (st.state, st.message)
        time.sleep(0.3)
    return st


def _busy_slot_then_queued(tiny, root, monkeypatch, n_waiting=1):
    """With one slot: a long job ``a`` holding it, then ``n_waiting`` short jobs waiting as queued."""
    monkeypatch.setenv(jobs.MAX_JOBS_ENV, "1")
    a = jobs.start_warmup(tiny, root=root, epochs=400, check_every=1, n_samples=40, device="cpu",
                          model_params=TINY_MODEL)
    _wait_state(a, "running")                              # a holds the only slot
    waiting = []
    for seed in range(1, n_waiting + 1):
        job = jobs.start_warmup(tiny, root=root, epochs=2, check_every=1, n_samples=40, device="cpu",
                                model_params=TINY_MODEL, seed=seed)
        _wait_state(job, "queued")
        waiting.append(job)
    return a, waiting


@pytest.mark.slow
def test_queued_jobs_wait_then_run_first_in_first_out(tiny, tmp_path, monkeypatch):
    a, (b, c) = _busy_slot_then_queued(tiny, tmp_path, monkeypatch, n_waiting=2)
    st_b = jobs.job_status(b)
    assert st_b.state == "queued" and st_b.message.startswith("queued:")
    assert not (b.out / "manifest.json").exists()        # nothing started while waiting
    jobs.cancel(a)                                        # a stops and frees its slot
    assert jobs.wait(a, timeout=300).state == "cancelled"
    st_b, st_c = jobs.wait(b, timeout=300), jobs.wait(c, timeout=300)
    assert st_b.state == st_c.state == "finished"
    started = {j.job_id: next(e["t"] for e in read_events(j.events_path) if e["event"] == "started") for j in (b, c)}
    finished_b = next(e["t"] for e in read_events(b.events_path) if e["event"] == "finished")
    assert started[b.job_id] < started[c.job_id] and finished_b <= started[c.job_id]  # b first, alone
    assert [c_["epoch"] for c_ in st_b.checks] == [1, 2]


@pytest.mark.slow
def test_a_queued_job_can_be_cancelled_even_when_started_with_sigint_ignored(tiny, tmp_path, monkeypatch):
    # a dashboard started with `nohup ... &` (or CI in the background) passes SIGINT ignored to
    # its workers; regression: a queued job then ran to "finished" after Cancel
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        a, (b,) = _busy_slot_then_queued(tiny, tmp_path, monkeypatch)
    finally:
        signal.signal(signal.SIGINT, old)
    jobs.cancel(b)
    assert jobs.wait(b, timeout=120).state == "cancelled"
    assert not b.out.exists()
    jobs.cancel(a)
    jobs.wait(a, timeout=300)


def test_run_spec_runs_a_warmup_with_its_floor_in_this_process(tiny, sample, tmp_path):
    tiny.data.reset_index().to_parquet(tmp_path / "train.parquet")
    sample[1].data.iloc[:100].reset_index().to_parquet(tmp_path / "holdout.parquet")
    tiny.schema.save(tmp_path / "schema.json")
    events = []
    spec = JobSpec("warmup", WarmupConfig(epochs=2, check_every=1, n_samples=30, device="cpu",
                                          model_params=TINY_MODEL).to_dict(),
                   {"train": str(tmp_path / "train.parquet"), "schema": str(tmp_path / "schema.json"),
                    "holdout": str(tmp_path / "holdout.parquet"), "row_id": "row_id", "out": str(tmp_path / "run")})
    res = run_spec(spec, emit=events.append)
    assert res["status"] == "finished" and res["checks"] == 2
    assert [e["event"] for e in events if e["event"] != "epoch"] == ["schema", "floor", "check", "check", "done",
                                                                      "auditing"]

    # the worker kept the last check's audit for this run state: the same audit as computing it again
    kept = load_audit(tmp_path / "run" / RUN_FOLDER, token=run_token(tmp_path / "run"))
    assert kept is not None and kept.provenance.run.check == 1 and kept.provenance.run.status == "finished"
    def figures(a):  # the audit's JSON without its clock readings
        drop = lambda v: ({k: drop(x) for k, x in v.items() if k not in ("seconds", "created")}  # noqa: E731
                          if isinstance(v, dict) else [drop(x) for x in v] if isinstance(v, list) else v)
        return drop(json.loads(a.to_json()))
    assert figures(kept) == figures(Audit.from_run(tmp_path / "run"))
    run = load_warmup(tmp_path / "run")
    assert run.floor is not None and run.floor.n_holdout == 100 and "excess" in run.per_check
    # a live view reads the manifest's check summaries: they carry the floor band too
    checks = json.loads((tmp_path / "run" / "manifest.json").read_text())["checks"]
    live = jobs.JobStatus("x", "warmup", "running", checks=checks).per_check
    assert {"floor", "floor_low", "floor_high", "excess_low", "excess_high"} <= set(live.columns)
    assert (live["floor_low"] <= live["floor"]).all() and (live["floor"] <= live["floor_high"]).all()


# ------------------------------------------------------------- runs started from the CLI
def _cli_run(tiny, root, name="cli"):
    """A finished run made in this process (as the CLI makes one: no job record)."""
    run_warmup(tiny, WarmupConfig(epochs=2, check_every=1, n_samples=20, device="cpu", model_params=TINY_MODEL),
               root / name)
    return jobs.job_for(root / name)


def _set(run_dir, **fields):
    m = json.loads((run_dir / "manifest.json").read_text())
    m.update(fields)
    (run_dir / "manifest.json").write_text(json.dumps(m))


def test_a_cli_run_whose_writer_is_gone_is_lost_not_running(tiny, tmp_path):
    """At 9a38467 the manifest's ``running`` was taken at its word: a killed CLI run stayed running."""
    job = _cli_run(tiny, tmp_path)
    assert jobs.job_status(job).state == "finished"
    _set(job.out, status="running")                 # what a kill -9 leaves
    st = jobs.job_status(job)
    assert st.state == "lost" and st.final and "stopped" in st.message
    writer = RunStore(job.out).acquire()            # a live writer: running again
    try:
        assert jobs.job_status(job).state == "running"
    finally:
        writer.release()


def test_an_unreadable_cli_run_is_failed_with_its_reason(tiny, tmp_path):
    job = _cli_run(tiny, tmp_path)
    _set(job.out, config=[1])
    st = jobs.job_status(job)
    assert st.state == "failed" and "manifest field 'config'" in st.message and "\n" not in st.message


@pytest.mark.parametrize("name", ["..", ".", "../x", "a/b", "/etc", ".jobs", "compare", "", None, "missing", "x\x00"])
def test_run_dir_named_never_leaves_the_runs_root(tiny, tmp_path, name):
    """``?run=..`` opened the runs root's parent at 9a38467 (app.py's sidebar)."""
    root = tmp_path / "runs"
    _cli_run(tiny, tmp_path, "runs_parent_run")     # a run beside the root, reachable by ".." tricks
    (root / "compare").mkdir(parents=True)
    assert jobs.run_dir_named(name, root) is None


def test_run_dir_named_finds_a_run_under_the_root(tiny, tmp_path):
    _cli_run(tiny, tmp_path, "mine")
    assert jobs.run_dir_named("mine", tmp_path) == tmp_path / "mine"


def test_a_warmup_whose_checks_trail_its_training_says_it_is_measuring_them(tmp_path):
    # checks are measured beside training and the last ones after it (memviz.warmup.checkqueue):
    # "epoch 200/200" and a full bar while 8 checks are still being measured would be a lie
    job = live_job(tmp_path, "warmup")
    log = EventLog(job.events_path, min_interval=0)
    log({"event": "started", "pid": os.getpid(), "kind": "warmup"})
    log({"event": "check", "check": 0, "epoch": 8, "checks": 25, "mem_ratio": 0.3, "mem_auc": 1.0})
    log({"event": "epoch", "epoch": 200, "epochs": 200})
    st = jobs.job_status(job)
    assert st.checks_total == 25
    done = [{"check": c} for c in range(17)]
    trained = jobs.JobStatus("j", "warmup", "running", 200, 200, "epoch", "warm-up", checks=done, checks_total=25)
    assert trained.measuring_checks
    assert trained.readout() == "running · training done, measuring the checks: 17 of 25"
    assert trained.fraction == pytest.approx(18 / 25)                   # not 1.0: 8 checks are left
    ahead = jobs.JobStatus("j", "warmup", "running", 150, 200, "epoch", "warm-up", checks=done[:12], checks_total=25)
    assert not ahead.measuring_checks and ahead.readout() == "running · epoch 150/200 · 12 checks"
    assert ahead.fraction == pytest.approx(13 / 25)
    level = jobs.JobStatus("j", "warmup", "running", 20, 200, "epoch", "warm-up", checks=done[:2], checks_total=25)
    assert level.fraction == pytest.approx(20 / 200)                   # the epochs move the bar between checks
    over = jobs.JobStatus("j", "warmup", "finished", 200, 200, "epoch", checks=done + done[:8], checks_total=25)
    assert over.fraction == 1.0 and over.readout() == "finished · 25 checks"
