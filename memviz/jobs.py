"""Background jobs for the dashboard: warm-ups and comparisons as detached processes.

A job is the CLI (``python -m memviz warmup ...`` or ``python -m memviz compare ...``)
started in its own session (``start_new_session=True``), so a page refresh, a closed
tab, a second user or a restart of the dashboard neither stops it nor mixes it with
another job. Every job has a unique id ``YYYYmmdd-HHMMSS-<kind>-<6 hex>`` and its own
folders under the runs root (``$MEMVIZ_RUNS``, default ``./runs``)::

    <root>/<job_id>/                 warm-up: the run directory (memviz.store.RunStore)
    <root>/compare/<job_id>/         comparison: the ``--out`` results directory
    <root>/.jobs/<job_id>/job.json   what was started: kind, pid, command, start time
    <root>/.jobs/<job_id>/log.txt    the process' stdout and stderr
    <root>/.jobs/<job_id>/train.parquet, test.parquet, schema.json   its inputs

The state of a job is read, never held in memory: the run store's manifest (status,
finished checks), the log (the CLI's progress bar and its last line: a JSON object on
success, ``memviz <cmd>: error: ...`` on a user error) and whether the process lives.
At most ``$MEMVIZ_MAX_JOBS`` warm-ups and comparisons run at once under a runs root
(default: half the CPU cores, at least 1): a job beyond that waits, in state
``queued``, for a slot (a lock file under ``<root>/.jobs/slots/`` held by the running
process, so a crashed job frees its slot). Two users on a 2-core server thus get two
runs one after the other at full speed instead of two at a fraction each.
Cancelling a warm-up writes the run store's cancel marker (the run stops at the end of
the epoch and keeps its finished checks); a job that has not created its run yet, or a
comparison, gets SIGINT (the CLI exits with "interrupted").

This module never imports torch: whether a GPU is present is asked of a short
subprocess (:func:`available_devices`), so the dashboard process stays light.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pandas as pd

from .data import Table
from .errors import MemvizError, RunError
from .store import MANIFEST, RunStore, _mixed_object_columns, atomic_write_parquet, atomic_write_text

RUNS_ENV = "MEMVIZ_RUNS"
JOBS = ".jobs"
COMPARE = "compare"
KINDS = ("warmup", "compare", "details")
DETAILS_SUFFIX = "-details"
#: states a job can be in; the last four are final
STATES = ("queued", "starting", "running", "finished", "cancelled", "failed", "lost")
MAX_JOBS_ENV = "MEMVIZ_MAX_JOBS"
QUEUED = "QUEUED"
FINAL = ("finished", "cancelled", "failed", "lost")
_BAR = re.compile(r"\[[#-]*\]\s+(\d+)/(\d+)")


def runs_root(root: str | Path | None = None) -> Path:
    """The runs root: ``root`` if given, else ``$MEMVIZ_RUNS``, else ``./runs``."""
    return Path(root if root is not None else os.environ.get(RUNS_ENV) or "runs").expanduser()


def max_jobs() -> int:
    """Jobs that may run at once under one runs root: ``$MEMVIZ_MAX_JOBS``, else half the cores."""
    raw = os.environ.get(MAX_JOBS_ENV, "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            raise MemvizError(f"${MAX_JOBS_ENV}={raw!r}: expected a whole number of jobs") from None
    return max(1, (os.cpu_count() or 1) // 2)


def new_job_id(kind: str) -> str:
    """A unique, sortable id: ``20250101-120000-warmup-a1b2c3``."""
    if kind not in KINDS:
        raise MemvizError(f"job kind {kind!r}: unknown (use {', '.join(KINDS)})")
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{kind}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Job:
    """Where a job lives. ``out`` is the run directory (warm-up) or results directory (compare)."""

    job_id: str
    kind: str
    root: Path

    @property
    def job_dir(self) -> Path:
        return self.root / JOBS / self.job_id

    @property
    def out(self) -> Path:
        if self.kind == "warmup":
            return self.root / self.job_id
        return self.root / COMPARE / self.job_id.removesuffix(DETAILS_SUFFIX)

    @property
    def log_path(self) -> Path:
        return self.job_dir / "log.txt"

    def info(self) -> dict:
        """The job.json record ({} when missing or unreadable)."""
        try:
            return json.loads((self.job_dir / "job.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            return {}


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of a job, read from disk.

    Attributes
    ----------
    state : one of :data:`STATES`; ``lost`` = the process died without a final word
        (killed, machine restarted).
    done, total : progress in epochs (warm-up) or units reported by the CLI bar.
    checks : the finished checks' summaries (warm-up: check, epoch, mem_ratio, mem_auc, ...).
    message : the error line for failed jobs, else the last log line.
    result : the CLI's final JSON object when it finished.
    """

    job_id: str
    kind: str
    state: str
    done: int = 0
    total: int = 0
    checks: list = field(default_factory=list)
    message: str = ""
    result: dict | None = None
    alive: bool = False
    started: float | None = None

    @property
    def final(self) -> bool:
        return self.state in FINAL

    @property
    def fraction(self) -> float:
        """done / total in [0, 1] (0 when unknown; 1 when finished)."""
        if self.state == "finished":
            return 1.0
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def per_check(self) -> pd.DataFrame:
        cols = ["check", "epoch", "mem_ratio", "mem_auc"]
        df = pd.DataFrame(self.checks)
        return df[[c for c in cols if c in df.columns]] if len(df) else pd.DataFrame(columns=cols)


# ------------------------------------------------------------------- processes
def _proc_start_ticks(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot (Linux), None elsewhere or if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] == "Z":  # a zombie has finished
        return None
    return int(fields[19])


def pid_alive(pid: int | None, start_ticks: int | None = None) -> bool:
    """True when ``pid`` runs and (on Linux) is the same process that was started."""
    if not pid:
        return False
    if Path("/proc").is_dir():
        ticks = _proc_start_ticks(int(pid))
        return ticks is not None and (start_ticks is None or ticks == start_ticks)
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _spawn(job: Job, args: list[str], extra: dict, module: str = "memviz", queued: bool = True) -> Job:
    """Start ``python -m <module> <args>`` detached, logging to the job's log; record job.json.

    ``queued``: the process first waits for one of :func:`max_jobs` slots (see the module
    docstring), then runs the command in the same process.
    """
    cmd = [sys.executable, "-m", module, *args]
    if queued:
        cmd = [sys.executable, "-m", "memviz.jobs", "queued", str(job.root), str(max_jobs()), str(job.job_dir),
               "--", module, *args]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # the package must be importable from the child whatever the dashboard's cwd
    pkg_parent = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH", "")) if p)
    with open(job.log_path, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True, close_fds=True)
    info = {"job_id": job.job_id, "kind": job.kind, "pid": proc.pid, "start_ticks": _proc_start_ticks(proc.pid),
            "started": time.time(), "command": cmd, "out": str(job.out), **extra}
    atomic_write_text(job.job_dir / "job.json", json.dumps(info, indent=1, default=str))

    def reap():  # no zombie while the dashboard lives; record the exit code
        rc = proc.wait()
        atomic_write_text(job.job_dir / "exit_code", str(rc))

    threading.Thread(target=reap, name=f"memviz-reap-{job.job_id}", daemon=True).start()
    return job


def _write_inputs(job: Job, train: Table, test: Table | None) -> None:
    job.job_dir.mkdir(parents=True, exist_ok=False)
    # row_id is dropped: the CLI numbers rows by position, which the run keeps as its row_id
    atomic_write_parquet(job.job_dir / "train.parquet", _mixed_object_columns(train.data.reset_index(drop=True)))
    if test is not None:
        atomic_write_parquet(job.job_dir / "test.parquet", _mixed_object_columns(test.data.reset_index(drop=True)))
    train.schema.save(job.job_dir / "schema.json")


# ---------------------------------------------------------------- starting jobs
def start_warmup(train: Table, *, root: str | Path | None = None, preset: str = "cpu-quick",
                 epochs: int | None = None, check_every: int | None = None, n_samples: int | None = None,
                 seed: int = 0, device: str = "auto", distance: str = "paper", top_frac: float = 0.10,
                 model_params: dict | None = None, label: str = "") -> Job:
    """Start a warm-up of ``train`` in the background; its run directory is ``job.out``.

    The settings are those of :class:`memviz.warmup.WarmupConfig` (None: the preset's /
    the warm-up's defaults). Returns at once; follow it with :func:`job_status`.
    """
    job = Job(new_job_id("warmup"), "warmup", runs_root(root))
    _write_inputs(job, train, None)
    args = ["warmup", "--train", str(job.job_dir / "train.parquet"), "--schema", str(job.job_dir / "schema.json"),
            "--out", str(job.out), "--preset", preset, "--seed", str(int(seed)), "--device", device,
            "--distance", distance, "--top-frac", str(float(top_frac))]
    for flag, value in (("--epochs", epochs), ("--check-every", check_every), ("--n-samples", n_samples)):
        if value is not None:
            args += [flag, str(int(value))]
    if model_params:
        args += ["--model-params", json.dumps(model_params)]
    return _spawn(job, args, {"label": label or train.source, "n_rows": len(train)})


def start_compare(train: Table, test: Table, *, root: str | Path | None = None, run_dir: str | Path | None = None,
                  methods=("baseline", "dynamiccut"), models=("tabddpm",), seeds=(0,), p: float = 0.10,
                  k: int = 3, T: int | None = None, epochs: int | None = None, device: str = "auto",
                  label: str = "") -> Job:
    """Start ``memviz compare`` in the background; its results directory is ``job.out``.

    ``run_dir`` is the warm-up run whose ranking DynamicCut uses; the warm-up was trained on
    the same table, so ``train`` should be that run's training table.
    """
    if not methods:
        raise MemvizError("compare: choose at least one method")
    if not models:
        raise MemvizError("compare: choose at least one model")
    job = Job(new_job_id("compare"), "compare", runs_root(root))
    _write_inputs(job, train, test)
    args = ["compare", "--train", str(job.job_dir / "train.parquet"), "--schema", str(job.job_dir / "schema.json"),
            "--test", str(job.job_dir / "test.parquet"), "--methods", ",".join(methods),
            "--models", ",".join(models), "--seeds", ",".join(str(int(s)) for s in seeds),
            "--p", str(float(p)), "--k", str(int(k)), "--device", device, "--out", str(job.out)]
    if run_dir is not None:
        args += ["--run", str(run_dir)]
    if T is not None:
        args += ["--T", str(int(T))]
    if epochs is not None:
        args += ["--epochs", str(int(epochs))]
    job.out.parent.mkdir(parents=True, exist_ok=True)
    return _spawn(job, args, {"label": label or train.source, "run_dir": str(run_dir) if run_dir else None,
                              "methods": list(methods), "models": list(models), "seeds": [int(s) for s in seeds]})


def start_details(compare: Job, device: str = "auto") -> Job | None:
    """Compute per-column Shapes and DCR values of a finished comparison in the background.

    At most one such job per comparison: the job folder is created exclusively, so two
    tabs asking at once start one job (the other gets None).
    """
    if compare.kind != "compare":
        raise MemvizError(f"job {compare.job_id}: details are computed for comparisons only")
    job = details_job(compare)
    try:
        job.job_dir.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        return None
    src = compare.job_dir
    args = ["details", str(compare.out), "--train", str(src / "train.parquet"), "--schema", str(src / "schema.json"),
            "--test", str(src / "test.parquet"), "--device", device]
    # short, and asked for by the page showing the results: not queued behind long runs
    return _spawn(job, args, {"label": f"details of {compare.job_id}"}, module="memviz.jobs", queued=False)


def details_job(compare: Job) -> Job:
    return Job(compare.job_id + DETAILS_SUFFIX, "details", compare.root)


# ------------------------------------------------------------------ reading jobs
def job_for(run_dir: str | Path) -> Job:
    """The job of a warm-up run directory (or of a compare results directory)."""
    run_dir = Path(run_dir)
    if run_dir.parent.name == COMPARE:
        return Job(run_dir.name, "compare", run_dir.parent.parent)
    return Job(run_dir.name, "warmup", run_dir.parent)


def open_job(job_id: str, root: str | Path | None = None) -> Job:
    """The job with this id under the runs root (raises RunError when unknown)."""
    root = runs_root(root)
    info = Job(job_id, "warmup", root).info()
    if not info:
        if (root / job_id / MANIFEST).exists():
            return Job(job_id, "warmup", root)
        raise RunError(f"{root / JOBS / job_id}: no such job")
    return Job(job_id, info.get("kind", "warmup"), root)


def read_log(job: Job, max_bytes: int = 64_000) -> str:
    """The last ``max_bytes`` of the job's log ('' when none)."""
    try:
        with open(job.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _log_outcome(text: str) -> tuple[str | None, str, dict | None]:
    """From the log tail: (final state or None, last meaningful line, final JSON)."""
    lines = [ln.strip() for ln in text.replace("\r", "\n").splitlines() if ln.strip()]
    if not lines:
        return None, "", None
    last = lines[-1]
    if last.startswith("{"):
        try:
            return "finished", last, json.loads(last)
        except json.JSONDecodeError:
            pass
    for ln in reversed(lines[-5:]):
        if ln.startswith("memviz ") and ": error: " in ln:
            return "failed", ln.split(": error: ", 1)[1], None
        if ln.startswith("memviz ") and ln.endswith(": interrupted"):
            return "cancelled", "cancelled", None
    if lines[-1].startswith("Traceback") or any(ln.startswith("Traceback") for ln in lines[-40:]):
        return "failed", last, None
    return None, last, None


def _bar_progress(text: str) -> tuple[int, int]:
    found = _BAR.findall(text[-4000:])
    return (int(found[-1][0]), int(found[-1][1])) if found else (0, 0)


def job_status(job: Job) -> JobStatus:
    """Read the state of a job from its manifest, log and process (cheap: a few small reads)."""
    info = job.info()
    alive = pid_alive(info.get("pid"), info.get("start_ticks")) if info else False
    text = read_log(job)
    log_state, line, result = _log_outcome(text)
    done, total = _bar_progress(text)
    cancel_asked = (job.job_dir / "CANCEL").exists()
    checks: list = []
    state = None
    if job.kind == "warmup" and (job.out / MANIFEST).exists():
        try:
            m = RunStore(job.out).manifest()
        except RunError as exc:
            m = {"status": "failed", "error": str(exc)}
        checks = m.get("checks", []) or []
        total = total or int((m.get("config") or {}).get("epochs") or 0)
        done = max(done, int((m.get("progress") or {}).get("epoch") or 0))
        status = m.get("status", "running")
        if status == "running":
            if alive:
                state = "running"
            elif log_state in ("failed", "cancelled"):
                state = "cancelled" if (cancel_asked or (job.out / "CANCEL").exists()) else log_state
            else:
                state = "lost" if info else "running"  # a run from the CLI has no job record
        else:
            state = status
            if status == "failed" and m.get("error"):
                line = m["error"]
        if state == "finished":
            done = total
    elif alive and (job.job_dir / QUEUED).exists():
        state = "queued"
    elif alive:
        # a comparison runs once it printed anything besides the queue's own line
        said = any(ln.strip() and not ln.startswith("queued:") for ln in text.splitlines())
        state = "running" if (job.kind != "warmup" and said) else "starting"
    elif info:
        state = log_state or ("finished" if _compare_finished(job) else "lost")
        if cancel_asked and state != "finished":
            state = "cancelled"  # interrupted anywhere, even while importing
    else:
        raise RunError(f"{job.job_dir}: no such job")
    if state == "finished" and job.kind != "warmup":
        done = total = total or 1
    message = line if state != "finished" or not line.startswith("{") else "finished"
    return JobStatus(job.job_id, job.kind, state, int(done), int(total), checks, message, result, alive,
                     info.get("started"))


def _compare_finished(job: Job) -> bool:
    """A comparison whose experiment.json has its final timing (written last by run_grid)."""
    if job.kind != "compare":
        return False
    try:
        return "seconds" in json.loads((job.out / "experiment.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return False


def cancel(job: Job) -> None:
    """Ask a job to stop. A warm-up with a run store stops after the current epoch and keeps its checks."""
    info = job.info()
    atomic_write_text(job.job_dir / "CANCEL", time.strftime("%Y-%m-%dT%H:%M:%S"))
    if job.kind == "warmup" and (job.out / MANIFEST).exists():
        RunStore(job.out).request_cancel()
        return
    pid = info.get("pid")
    if pid and pid_alive(pid, info.get("start_ticks")):
        try:
            os.kill(int(pid), signal.SIGINT)  # the CLI turns it into a clean "interrupted" exit
        except ProcessLookupError:
            pass


def wait(job: Job, timeout: float = 600.0, poll: float = 0.5) -> JobStatus:
    """Block until the job reaches a final state (tests, scripts); raises RunError on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        st = job_status(job)
        if st.final:
            return st
        if time.monotonic() > deadline:
            raise RunError(f"job {job.job_id}: still {st.state} after {timeout:.0f} s")
        time.sleep(poll)


def list_jobs(root: str | Path | None = None, kind: str | None = None) -> pd.DataFrame:
    """One row per job started from the dashboard under the root, newest first."""
    root = runs_root(root)
    rows = []
    folder = root / JOBS
    if folder.is_dir():
        for d in sorted(folder.iterdir(), reverse=True):
            info = Job(d.name, "warmup", root).info()
            if not info or (kind and info.get("kind") != kind):
                continue
            job = Job(d.name, info["kind"], root)
            try:
                st = job_status(job)
            except RunError:
                continue
            rows.append({"job_id": job.job_id, "kind": job.kind, "state": st.state, "label": info.get("label"),
                         "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("started", 0))),
                         "out": str(job.out), "run_dir": info.get("run_dir")})
    return pd.DataFrame(rows, columns=["job_id", "kind", "state", "label", "started", "out", "run_dir"])


# ---------------------------------------------------------------------- devices
_PROBE = ("import json, torch; ok = torch.cuda.is_available(); "
          "print(json.dumps({'cuda': ok, 'name': torch.cuda.get_device_name(0) if ok else None}))")


@lru_cache(maxsize=1)
def gpu_name() -> str | None:
    """The CUDA GPU's name when one is usable, else None (asked of a subprocess, once per process)."""
    if not (Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia").exists() or os.environ.get("CUDA_VISIBLE_DEVICES")):
        return None
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
        d = json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, OSError, ValueError, IndexError):
        return None
    return d.get("name") if d.get("cuda") else None


def available_devices() -> dict[str, str]:
    """Device choices for a job: {value: label}, e.g. {"auto": ..., "cpu": ..., "cuda": ...}."""
    name = gpu_name()
    cores = os.cpu_count() or 1
    out = {"auto": f"auto ({'GPU: ' + name if name else 'CPU'})", "cpu": f"CPU ({cores} cores)"}
    if name:
        out["cuda"] = f"GPU: {name}"
    return out


# ------------------------------------------------------------------- the queue
_SLOT = None  # the open lock file of this process' slot, held until it exits


def _take_slot(root: Path, slots: int, job_dir: Path, poll: float = 1.0) -> None:
    """Block until one of ``slots`` lock files under ``root/.jobs/slots`` is ours.

    flock locks belong to the open file: the kernel frees the slot when the process ends,
    however it ends. Without fcntl (Windows) there is no queue.
    """
    global _SLOT
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        return
    folder = root / JOBS / "slots"
    folder.mkdir(parents=True, exist_ok=True)
    announced = False
    while True:
        for i in range(slots):
            f = open(folder / f"{i}.lock", "a")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                continue
            _SLOT = f
            (job_dir / QUEUED).unlink(missing_ok=True)
            return
        if not announced:
            atomic_write_text(job_dir / QUEUED, time.strftime("%Y-%m-%dT%H:%M:%S"))
            print(f"queued: waiting for a free slot ({slots} job{'s' if slots > 1 else ''} at a time, "
                  f"${MAX_JOBS_ENV})", flush=True)
            announced = True
        time.sleep(poll)


def _queued_main(argv: list[str]) -> int:
    """``python -m memviz.jobs queued ROOT SLOTS JOB_DIR -- MODULE ARGS...``: wait for a slot, then
    run ``python -m MODULE ARGS...`` in this process (same pid, same log)."""
    import runpy

    root, slots, job_dir, sep, module, *args = argv
    if sep != "--":
        print("memviz.jobs queued: expected ROOT SLOTS JOB_DIR -- MODULE ARGS", file=sys.stderr)
        return 2
    try:
        _take_slot(Path(root), max(1, int(slots)), Path(job_dir))
    except KeyboardInterrupt:
        (Path(job_dir) / QUEUED).unlink(missing_ok=True)
        print(f"memviz {args[0] if args else module}: interrupted", file=sys.stderr, flush=True)
        return 130
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


# ------------------------------------------------------------ the details worker
def _details_main(argv=None) -> int:
    """``python -m memviz.jobs details OUT --train --schema --test [--device]`` (see :func:`start_details`)."""
    import argparse

    from .dashboard import compute_compare_details
    from .data import load_companion, load_table

    ap = argparse.ArgumentParser(prog="memviz.jobs")
    ap.add_argument("command", choices=["details"])
    ap.add_argument("out")
    ap.add_argument("--train", required=True)
    ap.add_argument("--schema")
    ap.add_argument("--test")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args(argv)
    try:
        train = load_table(args.train, args.schema)
        test = load_companion(train, args.test, role="test") if args.test and Path(args.test).exists() else None
        res = compute_compare_details(args.out, train, test, device=args.device)
    except MemvizError as exc:
        print(f"memviz details: error: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print("memviz details: interrupted", file=sys.stderr, flush=True)
        return 130
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_queued_main(sys.argv[2:]) if sys.argv[1:2] == ["queued"] else _details_main())
