"""Jobs are bounded, alone and clean (issue 26, items 4, 6, 7, 8): a cap on waiting jobs per runs root
and per session, a full disk as one line with nothing half-made and no zombie, no orphaned children
or temporary files, a lost comparison that can be resumed, and a worker that trusts no path."""
from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from helpers import TINY_MODEL, live_job

import memviz.io as mio
from memviz.errors import BadRunFolder, MemvizError
from memviz.io import DiskFull, export_csv, remove_stale_temps
from memviz.jobs import control as jobs
from memviz.jobs import worker
from memviz.jobs.guard import Reserve, start_watchdog
from memviz.jobs.spec import EventLog, JobSpec, read_events, run_spec, write_spec
from memviz.warmup.run import WarmupConfig, run_warmup
from memviz.warmup.store import RunStore, list_runs


@pytest.fixture(scope="module")
def tiny(sample):
    train, _ = sample
    return train.subset(train.row_ids[:120])


def _no_tmp(root: Path) -> list:
    return [p for p in root.rglob("*.tmp")]


def _fake_spawn(job, spec, queued=True, session=""):
    """Stands in for the worker: a job record whose process is this test process (alive)."""
    jobs.write_spec(job.spec_path, spec)
    jobs.atomic_write_json(job.job_dir / "job.json", {"job_id": job.job_id, "kind": job.kind, "pid": os.getpid(),
                                                      "start_ticks": jobs.proc_start_ticks(os.getpid()),
                                                      "started": time.time(), "session": session})
    return job


def _live(root, kind="warmup", session="", started=False):
    job = live_job(root, kind)
    if session:
        rec = json.loads((job.job_dir / "job.json").read_text())
        (job.job_dir / "job.json").write_text(json.dumps({**rec, "session": session}))
    EventLog(job.events_path)({"event": "started", "pid": os.getpid()} if started else {"event": "queued", "slots": 1})
    return job


# ------------------------------------------------------------------- item 4: bounds
def test_waiting_jobs_are_capped_per_runs_root(tiny, tmp_path, monkeypatch):
    """8 clicks in 4.7 s queued 7 warm-ups of about 315 MiB each; 50 would take 16 GB."""
    monkeypatch.setenv(jobs.MAX_QUEUED_ENV, "2")
    monkeypatch.setattr(jobs, "_spawn", _fake_spawn)
    _live(tmp_path), _live(tmp_path)
    before = sorted(p.name for p in (tmp_path / jobs.JOBS).iterdir() if p.is_dir())
    with pytest.raises(MemvizError, match=r"2 jobs already wait for a free slot \(at most 2 may wait"):
        jobs.start_warmup(tiny, root=tmp_path, epochs=2, device="cpu", model_params=TINY_MODEL)
    assert sorted(p.name for p in (tmp_path / jobs.JOBS).iterdir() if p.is_dir()) == before  # nothing made
    monkeypatch.setenv(jobs.MAX_QUEUED_ENV, "3")
    job = jobs.start_warmup(tiny, root=tmp_path, epochs=2, device="cpu", model_params=TINY_MODEL)
    assert job.job_dir.is_dir()


def test_running_and_finished_jobs_do_not_count_as_waiting(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv(jobs.MAX_QUEUED_ENV, "1")
    monkeypatch.setattr(jobs, "_spawn", _fake_spawn)
    _live(tmp_path, started=True)
    done = _live(tmp_path, started=True)
    EventLog(done.events_path)({"event": "finished"})
    jobs.start_warmup(tiny, root=tmp_path, epochs=2, device="cpu", model_params=TINY_MODEL)  # 0 waiting before


def test_one_session_has_at_most_its_share_of_unfinished_jobs(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(jobs, "_spawn", _fake_spawn)
    for _ in range(jobs.MAX_SESSION_JOBS):
        _live(tmp_path, session="s1", started=True)
    with pytest.raises(MemvizError, match=f"this session already has {jobs.MAX_SESSION_JOBS} unfinished jobs"):
        jobs.start_compare(tiny, tiny, root=tmp_path, models=("tvae",), session="s1")
    jobs.start_compare(tiny, tiny, root=tmp_path, models=("tvae",), session="s2")  # another session may


def test_the_queue_use_is_counted_and_said_before_any_refusal(tmp_path, monkeypatch):
    """Issue 26: the caps were stated only in the refusal; now a caption counts what is used of them."""
    monkeypatch.setenv(jobs.MAX_QUEUED_ENV, "2")
    assert jobs.queue_use(tmp_path, "s1") == jobs.QueueUse(0, 2, 0, session=True)
    _live(tmp_path, session="s1")                       # waiting, this session's
    _live(tmp_path, session="s2", started=True)         # running: another session's, no queue slot
    done = _live(tmp_path, session="s1", started=True)
    EventLog(done.events_path)({"event": "finished"})   # finished: counts nowhere
    use = jobs.queue_use(tmp_path, "s1")
    assert (use.waiting, use.max_waiting, use.session_jobs) == (1, 2, 1)
    assert use.caption() == (f"Queue: 1 of 2 queue slots used (a job waits in one while others run) · this "
                             f"session: 1 of {jobs.MAX_SESSION_JOBS} unfinished jobs")
    assert use.refusal(tmp_path) is None
    assert "this session" not in jobs.queue_use(tmp_path).caption()
    _live(tmp_path)
    full = jobs.queue_use(tmp_path, "s1")
    assert full.caption().startswith("Queue: 2 of 2") and "at most 2 may wait" in full.refusal(tmp_path)


def test_the_start_buttons_state_the_queue_use(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    monkeypatch.setenv(jobs.MAX_QUEUED_ENV, "4")
    _live(tmp_path)                                     # one job waits for a slot
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60).run()
    for page in ("screens/2_warmup.py", "screens/6_compare.py"):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(c.value.startswith("Queue: 1 of 4 queue slots used") and "this session: 0 of" in c.value
                   for c in at.caption), (page, [c.value for c in at.caption])


def test_max_queued_from_env(monkeypatch):
    monkeypatch.delenv(jobs.MAX_QUEUED_ENV, raising=False)
    assert jobs.max_queued() == 4
    monkeypatch.setenv(jobs.MAX_QUEUED_ENV, "many")
    with pytest.raises(MemvizError, match="MEMVIZ_MAX_QUEUED"):
        jobs.max_queued()


# ------------------------------------------------------------- item 6: a full disk
def _enospc(*a, **k):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_at_start_is_one_line_and_leaves_no_job_folder(tiny, tmp_path, monkeypatch):
    """Start warm-up showed a bare OSError and left a half-made job folder."""
    monkeypatch.setattr(pd.DataFrame, "to_parquet", _enospc)
    with pytest.raises(DiskFull) as info:
        jobs.start_warmup(tiny, holdout=tiny, root=tmp_path, epochs=2, device="cpu", model_params=TINY_MODEL)
    msg = str(info.value)
    assert "\n" not in msg and "no space left" in msg and str(tmp_path / jobs.JOBS) in msg
    assert [p.name for p in (tmp_path / jobs.JOBS).iterdir()] == ["start.lock"] and not _no_tmp(tmp_path)


def test_a_full_disk_after_the_worker_started_kills_and_reaps_it(tiny, tmp_path, monkeypatch):
    """A job record that cannot be written left the worker unreaped (a zombie) and its folder half-made."""
    procs = []
    real_popen, real_write = subprocess.Popen, jobs.atomic_write_json

    def popen(*a, **k):
        procs.append(real_popen(*a, **k))
        return procs[-1]

    def write(path, obj, *a, **k):
        if Path(path).name == "job.json":
            _enospc()
        return real_write(path, obj, *a, **k)

    monkeypatch.setattr(jobs.subprocess, "Popen", popen)
    monkeypatch.setattr(jobs, "atomic_write_json", write)
    with pytest.raises(DiskFull, match="no space left"):
        jobs.start_warmup(tiny, root=tmp_path, epochs=2, device="cpu", model_params=TINY_MODEL)
    (proc,) = procs
    deadline = time.monotonic() + 30
    while proc.returncode is None and time.monotonic() < deadline:  # the reaper thread collects it
        time.sleep(0.05)
    assert proc.returncode == -signal.SIGKILL
    assert not Path(f"/proc/{proc.pid}").exists() or "Z" not in Path(f"/proc/{proc.pid}/stat").read_text().split()[2]
    assert [p.name for p in (tmp_path / jobs.JOBS).iterdir()] == ["start.lock"]


def _warmup_spec(tiny, root, **cfg):
    job = jobs.Job(jobs.new_job_id("warmup"), "warmup", root)
    paths = jobs._write_inputs(job, tiny, None)
    spec = JobSpec("warmup", {"epochs": 6, "check_every": 1, "n_samples": 40, "device": "cpu",
                              "model_params": TINY_MODEL, **cfg}, paths)
    write_spec(job.spec_path, spec)
    return job


def test_a_full_disk_mid_run_fails_the_job_and_its_run_in_one_line(tiny, tmp_path, monkeypatch):
    """The worker died without a 'failed' event (the UI said 'lost'), the manifest stayed 'running'."""
    job = _warmup_spec(tiny, tmp_path)
    disk = {"full": False}
    real_mkstemp, real_free, real_write = mio.tempfile.mkstemp, Reserve.free, os.write

    def mkstemp(*a, **k):
        if disk["full"]:
            _enospc()
        return real_mkstemp(*a, **k)

    def os_write(fd, data):
        if disk["full"]:
            _enospc()
        return real_write(fd, data)

    def free(self):  # freeing the reserve makes room again, as on a real disk
        disk["full"] = False
        real_free(self)

    def emit_then_fill(spec, emit=None):
        def fill(ev):
            emit(ev)
            if ev.get("event") == "check":
                disk["full"] = True  # the disk fills after the first check
        return run_spec(spec, emit=fill)

    monkeypatch.setattr(mio.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr("memviz.jobs.spec.os.write", os_write)
    monkeypatch.setattr(Reserve, "free", free)
    monkeypatch.setattr(Reserve, "close", free)
    monkeypatch.setattr(worker, "run_spec", emit_then_fill)
    assert worker.main([str(job.spec_path), "--no-queue"]) == 2
    last = read_events(job.events_path)[-1]
    assert last["event"] == "failed" and "no space left on the disk" in last["error"] and str(job.out) in last["error"]
    m = RunStore(job.out).manifest()
    assert m["status"] == "failed" and "no space left" in m["error"]
    assert jobs.job_status(job).state == "failed"
    assert not _no_tmp(tmp_path) and not (job.job_dir / ".reserve").exists()


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


@pytest.mark.slow
def test_a_real_full_disk_fails_a_detached_warmup_cleanly(tiny, tmp_path):
    """On a real 6 MB tmpfs (needs root; skipped otherwise): the disk is filled while the job runs."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "6m"):
        pytest.skip("cannot mount a tmpfs here")
    try:
        job = jobs.start_warmup(tiny, root=disk, epochs=4000, check_every=1, n_samples=40, device="cpu",
                                model_params=TINY_MODEL)
        deadline = time.monotonic() + 240
        while not jobs.job_status(job).checks:
            assert time.monotonic() < deadline and not jobs.job_status(job).final, jobs.read_log(job)
            time.sleep(0.3)
        try:  # fill what is left (the run's own checkpoints may have filled it already)
            with open(disk / "filler", "wb") as f:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
        except OSError:
            pass
        st = jobs.wait(job, timeout=240)
        assert st.state == "failed" and "no space left on the disk" in st.message, (st.state, st.message)
        (disk / "filler").unlink(missing_ok=True)
        assert RunStore(job.out).manifest()["status"] == "failed"
        assert not _no_tmp(disk)
        pid = job.info()["pid"]
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{pid}").exists()                         # reaped, no zombie
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


# --------------------------------------------------- item 7: stuck and orphaned states
def _finished_compare(root):
    job = live_job(root, "compare")
    write_spec(job.spec_path, JobSpec("compare", {}, {"train": str(job.job_dir / "train.parquet"),
                                                      "out": str(job.out)}))
    EventLog(job.events_path)({"event": "finished"})
    return job


def test_a_missing_comparison_spec_leaves_no_details_folder_behind(tmp_path, monkeypatch):
    """The empty details folder it left blocked every later try, even after the file was restored."""
    monkeypatch.setattr(jobs, "_spawn", _fake_spawn)
    compare = _finished_compare(tmp_path)
    saved = compare.spec_path.read_bytes()
    compare.spec_path.unlink()
    with pytest.raises(BadRunFolder, match="no such job spec"):
        jobs.start_details(compare)
    assert not jobs.details_job(compare).job_dir.exists()
    compare.spec_path.write_bytes(saved)
    assert jobs.start_details(compare) is not None
    assert jobs.start_details(compare) is None                 # one details job per comparison


def test_an_abandoned_details_folder_is_cleared_after_a_grace_time(tmp_path, monkeypatch):
    monkeypatch.setattr(jobs, "_spawn", _fake_spawn)
    compare = _finished_compare(tmp_path)
    d = jobs.details_job(compare).job_dir
    d.mkdir(parents=True)                                      # what the old code left
    assert jobs.start_details(compare) is None                 # a start under way elsewhere: left alone
    old = time.time() - 120
    os.utime(d, (old, old))
    assert jobs.start_details(compare) is not None


def test_a_lost_comparison_can_be_resumed_in_its_folder(tmp_path, monkeypatch):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = jobs.proc_start_ticks(proc.pid)
    proc.wait()
    job = jobs.Job(jobs.new_job_id("compare"), "compare", tmp_path)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({"job_id": job.job_id, "kind": "compare", "pid": proc.pid,
                                                      "start_ticks": ticks, "started": 0}))
    write_spec(job.spec_path, JobSpec("compare", {"models": ["tvae"]}, {"train": "t.parquet", "out": str(job.out)}))
    log = EventLog(job.events_path)
    log({"event": "started", "pid": proc.pid})
    log({"event": "cell", "done": 1, "total": 3, "status": "ok"})
    assert jobs.job_status(job).state == "lost"
    monkeypatch.setattr(jobs, "_spawn", _fake_spawn)
    jobs.resume_compare(job)
    st = jobs.job_status(job)
    assert st.state == "starting" and (st.done, st.total) == (0, 0)    # read from the new start on
    assert json.loads((job.job_dir / "job.json").read_text())["pid"] == os.getpid()
    log({"event": "started", "pid": os.getpid()})
    log({"event": "cells", "done": 1, "total": 3})
    assert jobs.job_status(job).state == "running"
    with pytest.raises(MemvizError, match="only a lost or cancelled comparison"):
        jobs.resume_compare(job)


def test_the_watchdog_kills_the_group_when_its_worker_is_killed(tmp_path):
    """kill -9 of a comparison worker left its 2 joblib workers (about 500 MB each) computing for minutes."""
    code = ("import subprocess, sys, time; from memviz.jobs.guard import start_watchdog; "
            "watch = sys.argv[1] == '1' and start_watchdog(poll=0.05); "
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
            "print(child.pid, flush=True); time.sleep(120)")
    for watch in ("0", "1"):
        leader = subprocess.Popen([sys.executable, "-c", code, watch], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
        child = int(leader.stdout.readline())
        os.kill(leader.pid, signal.SIGKILL)
        leader.wait()
        deadline = time.monotonic() + 10
        while jobs.pid_alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        orphaned = jobs.pid_alive(child)
        if orphaned:
            os.kill(child, signal.SIGKILL)
        assert orphaned == (watch == "0")                     # without the watchdog it computes on


def test_the_watchdog_is_not_started_outside_its_own_process_group():
    assert start_watchdog() is None                           # pytest leads no group of its own here
    

def test_a_killed_writers_temp_file_is_removed_by_the_next_export(tmp_path):
    """A killed export left its partial temp file (675 KB of training rows) forever."""
    code = ("import sys, time; from pathlib import Path; from memviz.io import _atomic; "
            "_atomic(Path(sys.argv[1]), lambda tmp: (open(tmp, 'w').write('x' * 100000), print('in', flush=True), "
            "time.sleep(120)))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "pruned.csv")], stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert proc.stdout.readline().strip() == "in"
    assert len(_no_tmp(tmp_path)) == 1
    assert remove_stale_temps(tmp_path) == 0                  # its writer is alive: kept
    proc.kill()
    proc.wait()
    export_csv(tmp_path / "other.csv", pd.DataFrame({"a": [1]}))
    assert not _no_tmp(tmp_path) and (tmp_path / "other.csv").exists() and not (tmp_path / "pruned.csv").exists()


def test_sigterm_ends_the_worker_through_its_exit_path(tmp_path):
    """Temporary files are removed on every exit path but kill -9: SIGTERM included."""
    code = ("import sys, time, signal; from pathlib import Path; from memviz.io import _atomic; "
            "from memviz.jobs.worker import _sigterm; signal.signal(signal.SIGTERM, _sigterm); "
            "_atomic(Path(sys.argv[1]), lambda tmp: (print('in', flush=True), time.sleep(120)))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "x.bin")], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert proc.stdout.readline().strip() == "in" and len(_no_tmp(tmp_path)) == 1
    proc.terminate()
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert not _no_tmp(tmp_path)


# ------------------------------------------------------- item 8: defence in depth
@pytest.mark.parametrize("key", ["train", "schema", "out"])
def test_the_worker_refuses_spec_paths_outside_the_runs_root(tiny, tmp_path, key, capsys):
    """It read the system's password file when a spec named it (its first line landed in the log
    through a schema warning) and wrote a run outside the runs root."""
    root = tmp_path / "runs"
    job = _warmup_spec(tiny, root)
    spec = json.loads(job.spec_path.read_text())
    outside = {"train": "/etc/passwd", "schema": "/etc/passwd", "out": str(tmp_path / "elsewhere")}[key]
    spec["paths"][key] = outside
    job.spec_path.write_text(json.dumps(spec))
    assert worker.main([str(job.spec_path), "--no-queue"]) == 2
    last = read_events(job.events_path)[-1]
    assert last["event"] == "failed" and f"paths.{key}" in last["error"] and "outside the runs root" in last["error"]
    cap = capsys.readouterr()
    assert "root:" not in cap.out + cap.err + last["error"]
    assert not (tmp_path / "elsewhere").exists()


def test_the_worker_refuses_a_symlink_out_of_the_root(tiny, tmp_path):
    root = tmp_path / "runs"
    job = _warmup_spec(tiny, root)
    (job.job_dir / "train.parquet").unlink()
    (job.job_dir / "train.parquet").symlink_to("/etc/passwd")
    assert worker.main([str(job.spec_path), "--no-queue"]) == 2
    assert "outside the runs root" in read_events(job.events_path)[-1]["error"]


def test_the_worker_refuses_a_comparisons_run_dir_outside_the_root(tiny, tmp_path):
    root = tmp_path / "runs"
    job = jobs.Job(jobs.new_job_id("compare"), "compare", root)
    paths = jobs._write_inputs(job, tiny, tiny)
    write_spec(job.spec_path, JobSpec("compare", {"run_dir": str(tmp_path / "foreign")}, paths))
    assert worker.main([str(job.spec_path), "--no-queue"]) == 2
    assert "config.run_dir" in read_events(job.events_path)[-1]["error"]


def test_symlinks_out_of_the_root_are_neither_listed_nor_opened(tiny, tmp_path):
    outside, root = tmp_path / "outside", tmp_path / "runs"
    run_warmup(tiny, WarmupConfig(epochs=1, check_every=1, n_samples=20, device="cpu", model_params=TINY_MODEL),
               outside / "secret")
    root.mkdir()
    (root / "link").symlink_to(outside / "secret")
    assert jobs.run_dir_named("link", root) is None
    assert list_runs(root).empty
    job_link = root / jobs.JOBS / "20250101-000000-warmup-abcdef"
    job_link.parent.mkdir(parents=True)
    real = live_job(tmp_path / "other", "warmup")
    job_link.symlink_to(real.job_dir)
    assert jobs.list_jobs(root).empty
