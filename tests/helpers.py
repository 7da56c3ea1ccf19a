"""Small shared settings for the tests (import as ``from helpers import ...``)."""

#: a TabDDPM that trains in well under a second per epoch on a few hundred rows
TINY_MODEL = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}


def live_job(root, kind: str):
    """A job record whose process is this test process (alive for as long as the test runs)."""
    import json
    import os

    from memviz.jobs import control as jobs

    job = jobs.Job(jobs.new_job_id(kind), kind, root)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({
        "job_id": job.job_id, "kind": kind, "pid": os.getpid(), "start_ticks": jobs._proc_start_ticks(os.getpid()),
        "started": 0, "out": str(job.out)}))
    return job


# ------------------------------------------------------------------ a real dashboard server
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def need_browser():
    """Skip unless Playwright's Python package and Debian's chromium are there (no browser download)."""
    import os
    import shutil

    import pytest

    pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")


def serve_dashboard(runs, *extra_args):
    """``streamlit run app.py`` on 127.0.0.1 with ``MEMVIZ_RUNS=runs``, as a context manager
    yielding its URL once healthy (its log in ``runs/server.log``); stopped on exit."""
    import contextlib
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent

    @contextlib.contextmanager
    def served():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        log = open(runs / "server.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                 *extra_args], cwd=root, env=dict(os.environ, MEMVIZ_RUNS=str(runs)), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not start:\n" + (runs / "server.log").read_text()[-2000:])
                time.sleep(0.5)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()

    return served()
