"""A stop is one line, whenever it comes: Ctrl-C (SIGINT) or SIGTERM sent to a real ``memviz`` process.

Each case waits for a state, never for a time: the process is paused inside an import (a launcher puts a finder
first on ``sys.meta_path`` that writes a marker file and waits when the named module is first imported: the
command's module, pandas, torch, ...), or inside a writer (its staging folder or its run folder appearing). Then
the signal is sent. Each stop prints ``memviz CMD: interrupted`` as its one stderr line, exits 130 (SIGINT) or
143 (SIGTERM), and leaves no lock file or staging folder beside the output. Before: a full traceback at 10 s
and 25 s of start-up (the imports ran outside the CLI's guard), and SIGTERM left ``.OUT.lock`` and
``.OUT.PID.xxxxxxxx.unit`` behind.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
from conftest import ROOT

from memviz.warmup.store import RunStore

SAMPLE = ROOT / "sample_data"

#: the launcher: memviz's console script, with a finder that pauses at the first import of $MEMVIZ_PAUSE_AT
LAUNCHER = textwrap.dedent("""
    import os, sys, time
    target, marker = os.environ.get("MEMVIZ_PAUSE_AT"), os.environ.get("MEMVIZ_PAUSE_MARKER")

    class Pause:
        def find_spec(self, name, path=None, target_=None):
            if name == target:
                sys.meta_path.remove(self)
                open(marker, "w").close()
                while True:                      # paused here, inside the import, until a signal comes
                    time.sleep(0.01)
            return None

    if target:
        sys.meta_path.insert(0, Pause())
    from memviz.cli import main
    sys.exit(main())
""")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("stops")
    pd.read_csv(SAMPLE / "train.csv").iloc[:300].to_csv(d / "train.csv", index=False)
    test = pd.read_csv(SAMPLE / "test.csv")
    test.iloc[:200].to_csv(d / "hold.csv", index=False)
    test.iloc[200:500].to_csv(d / "syn.csv", index=False)
    (d / "launch.py").write_text(LAUNCHER)
    return d


def _start(data, argv, pause_at=None, cwd=None):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "MEMVIZ_PAUSE_MARKER": str(data / "paused")}
    env.pop("MEMVIZ_PAUSE_AT", None)
    if pause_at:
        env["MEMVIZ_PAUSE_AT"] = pause_at
    (data / "paused").unlink(missing_ok=True)
    return subprocess.Popen([sys.executable, str(data / "launch.py"), *map(str, argv)], cwd=cwd or data,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)      # its own process group, as a terminal's job


def _wait_for(proc, ready, what: str, limit: float = 300.0):
    """Poll until ``ready()`` holds (the state), the process ends (a failure, with its output) or ``limit`` s."""
    end = time.monotonic() + limit
    while not ready():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"ended before {what}: rc {proc.returncode}\n{out}\n{err}")
        if time.monotonic() > end:
            proc.kill()
            pytest.fail(f"never reached {what}")
        time.sleep(0.02)


def _stopped(proc, sig, command: str):
    """Send ``sig`` to the process's group (Ctrl-C in a terminal reaches every process of the job, the workers
    too; so does ``kill -TERM -PGID``) and check the one line."""
    os.killpg(proc.pid, sig)
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in err and "Warning" not in err, err
    assert err.strip().splitlines()[-1:] == [f"memviz {command}: interrupted"], err
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    return out, err


AUDIT = ["audit", "--train", "train.csv", "--synthetic", "syn.csv", "--holdout", "hold.csv", "--out", "aud",
         "--no-quality", "--no-evidence", "--quiet"]


@pytest.mark.parametrize("module", ["memviz.commands", "memviz.commands.audit", "pandas", "torch", "scipy",
                                    "memviz.verdict.build", "memviz.auditing.html"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_during_any_import_is_one_line(data, module, sig):
    """From the command's own module (parsing) to the report's builder (the audit computed, being written)."""
    proc = _start(data, AUDIT, pause_at=module)
    _wait_for(proc, (data / "paused").exists, f"the import of {module}")
    _stopped(proc, sig, "audit")
    assert not [p.name for p in data.iterdir() if p.name.startswith(".aud")], "a lock or a staging folder is left"


def test_sigterm_while_an_audit_folder_is_staged_leaves_nothing_beside_it(data):
    """The staging folder is there (the audit is being computed into it): SIGTERM removes it and the lock."""
    argv = [("aud2" if a == "aud" else a) for a in AUDIT]
    proc = _start(data, argv, pause_at="memviz.viz.memorization")     # the report's first figure, drawn in the stage
    _wait_for(proc, lambda: any(p.name.startswith(".aud2.") and p.name.endswith(".unit") for p in data.iterdir()),
              "the staging folder")
    _stopped(proc, signal.SIGTERM, "audit")
    assert not [p.name for p in data.iterdir() if p.name.startswith(".aud2")]
    assert not (data / "aud2").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_during_a_warmup_is_one_line_and_the_run_says_cancelled(data, sig):
    run = data / f"run{int(sig)}"
    proc = _start(data, ["warmup", "--train", "train.csv", "--epochs", 200, "--check-every", 1, "--out", run,
                         "--quiet"])
    _wait_for(proc, lambda: (run / "checks").is_dir() and any((run / "checks").iterdir()), "the first check")
    _stopped(proc, sig, "warmup")
    assert RunStore(run).read().status == "cancelled"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stopping_a_parallel_comparison_prints_no_worker_warnings(data, sig):
    """Two cells in joblib's worker processes: a stop while they train prints the one line, and none of loky's
    'leaked semlock' warnings (SIGTERM printed two of them, and killed the command without a word)."""
    out = data / f"cmp{int(sig)}"
    proc = _start(data, ["compare", "--train", "train.csv", "--test", "hold.csv", "--methods", "baseline",
                         "--models", "tvae", "--seeds", "0,1", "--epochs", 300, "--n-jobs", 2, "--out", out])
    # two loky workers at work (torch loaded): loky's resource tracker has "loky" in its command line too, and a
    # worker still starting its interpreter dies of the signal with a fatal error of its own
    _wait_for(proc, lambda: _training_workers(proc.pid) >= 2, "two worker processes training")
    _stopped(proc, sig, "compare")


def _training_workers(pid: int) -> int:
    """How many of ``pid``'s loky worker processes have torch loaded (past their interpreter's start-up)."""
    def has_torch(p: int) -> bool:
        try:
            return "libtorch" in open(f"/proc/{p}/maps").read()
        except OSError:
            return False

    return sum(1 for c in _descendants(pid) if "popen_loky_posix" in _cmdline(c) and has_torch(c))


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from /proc), children first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = [int(x) for x in open(f"/proc/{p}/task/{t}/children").read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def _cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
