"""Small shared settings for the tests (import as ``from helpers import ...``)."""
from memviz.models.callbacks import Callback

#: a TabDDPM that trains in well under a second per epoch on a few hundred rows
TINY_MODEL = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}


def tiny_warmup(**kw):
    """A warm-up config of TINY_MODEL: 6 epochs, a check every 2, seed 3, on the CPU; ``kw`` overrides."""
    from memviz.warmup.run import WarmupConfig

    return WarmupConfig(**{**dict(epochs=6, check_every=2, seed=3, device="cpu", model_params=dict(TINY_MODEL)),
                           **kw})


class Crash(Callback):
    """A training callback that raises at epoch ``at`` (a killed run)."""

    def __init__(self, at):
        self.at = at

    def on_epoch_end(self, model, epoch, logs):
        if epoch == self.at:
            raise RuntimeError("killed")


def near_copies(train, fresh, src, distances, column: str = "fnlwgt"):
    """``fresh`` (a frame) with its first rows replaced by copies of training rows ``src`` (positions in
    ``train.data``'s index, repeated to the length of ``distances``), each moved on ``column`` alone so that
    its standardized distance to its source is about the one given: D = |Δ| / range / (distance columns)."""
    import numpy as np

    syn = fresh.reset_index(drop=True).copy()
    s = train.schema
    width = (len(s.distance_numerical) + len(s.distance_categorical)) * np.ptp(train.data[column].to_numpy())
    near = train.data.loc[np.repeat(src, len(distances) // len(src))].reset_index(drop=True)
    near[column] = near[column] + np.maximum(1, np.round(np.asarray(distances) * width)).astype(np.int64)
    syn.iloc[: len(near)] = near[syn.columns].to_numpy()
    return syn


def live_job(root, kind: str):
    """A job record whose process is this test process (alive for as long as the test runs)."""
    import json
    import os

    from memviz.jobs import control as jobs

    job = jobs.Job(jobs.new_job_id(kind), kind, root)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({
        "job_id": job.job_id, "kind": kind, "pid": os.getpid(), "start_ticks": jobs.proc_start_ticks(os.getpid()),
        "started": 0, "out": str(job.out)}))
    return job


# ------------------------------------------------------------------ a real dashboard server
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def memviz_cli(capsys, *args):
    """(exit code, last stdout line, stderr) of ``memviz ARGS`` run in this process (argparse's usage
    errors give their exit code, not an exception)."""
    from memviz.cli import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out.strip().splitlines()[-1] if out.strip() else "", err


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


# ------------------------------------------------------------------ driving it from Chromium (Playwright)
#: the one bound of every browser wait, in ms: each wait is for a state (a heading, a script run over, a figure
#: drawn), never for a time, and this bound only stops a test that would wait forever. Generous: at load 14–38 a
#: page took minutes where a quiet machine takes a second (issue 51: a 30 s bound failed the README's command)
WAIT_MS = int(__import__("os").environ.get("MEMVIZ_TEST_WAIT_MS", 600_000))   # lower it to debug a test that hangs


def launch_chromium(pw):
    """Debian's headless Chromium, launched by Playwright (no browser download), offline-minded flags."""
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


#: the app's script is not running (Streamlit sets ``data-test-script-state`` on its root; its "Running…" widget is
#: drawn only after 0.5 s and not at all in some setups, so its absence proved nothing)
NOT_RUNNING_JS = "() => !!document.querySelector(\"[data-test-script-state='notRunning']\")"
#: what the last script run drew is in place: nothing left of the run before (``data-stale``), no element still
#: loading its code (``stSkeleton``: a figure's plotly, a table's grid)
IN_PLACE_JS = ("() => !!document.querySelector(\"[data-test-script-state='notRunning']\") && "
               "!document.querySelector(\"[data-stale='true']\") && !document.querySelector(\"[data-testid='stSkeleton']\")")


#: :data:`IN_PLACE_JS`, and every plotly figure has its SVG
DRAWN_JS = ("() => (" + IN_PLACE_JS + ")() && [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
            ".every(c => c.querySelector('.main-svg'))")


def idle(page, timeout=WAIT_MS) -> None:
    """Wait until the script run is over (the app's script state reads notRunning). The 200 ms first let a run the
    page has just asked for start (a pause, never a bound: nothing fails on it)."""
    page.wait_for_timeout(200)
    page.wait_for_function(NOT_RUNNING_JS, timeout=timeout)


def settled(page, timeout=WAIT_MS) -> None:
    """:func:`idle`, and what the run drew in place: no element of the previous run left (Streamlit keeps them,
    marked ``data-stale``, until the new run has drawn its own) and none still loading its code (a skeleton)."""
    idle(page, timeout)
    page.wait_for_function(IN_PLACE_JS, timeout=timeout)


def drawn(page, timeout=WAIT_MS) -> None:
    """:func:`settled`, and every plotly figure on the page drawn (its SVG in place): plotly draws after the
    script run, in the browser."""
    settled(page, timeout)
    page.wait_for_function(DRAWN_JS, timeout=timeout)


def no_exception(page) -> None:
    """No Streamlit error box on the page (its text is the assertion's message)."""
    boxes = page.locator("[data-testid='stException']")
    assert boxes.count() == 0, boxes.first.inner_text()


def toggle_on(page, label: str) -> bool:
    """Is the toggle with this label on (Streamlit draws a checkbox input inside its stCheckbox box)?"""
    box = page.locator("[data-testid='stCheckbox']").filter(has_text=label).first
    box.wait_for(timeout=WAIT_MS)
    return box.locator("input[type='checkbox']").first.is_checked()


def goto(page, title: str) -> float:
    """Click a page in the sidebar navigation; seconds until its script run is over.

    A click that lands while the app reruns by itself (a run has just ended) can be lost:
    it is repeated (see below)."""
    import time

    t0 = time.perf_counter()
    link = page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True)
    heading = page.locator("h1").filter(has_text=title).first
    link.click()
    # the click is repeated when the app has sat idle without the page for 5 s (a click lost to a rerun of its
    # own); the page's state is polled, and nothing fails but past the one bound, WAIT_MS
    deadline, idle_since = time.monotonic() + WAIT_MS / 1000, None
    running = page.locator("[data-test-script-state='running']")
    while not heading.count():
        now = time.monotonic()
        if now > deadline:
            raise TimeoutError(f"page {title!r} not reached in {WAIT_MS / 1000:.0f} s")
        if running.count():
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since > 5:
            link.click()
            idle_since = None
        page.wait_for_timeout(50)                                   # the polling interval
    heading.wait_for(timeout=WAIT_MS)
    idle(page)
    return time.perf_counter() - t0


def upload(page, label: str, path) -> None:
    """Put the file at ``path`` into the file uploader labelled ``label``, and wait until the page has
    read it (its name is listed under the uploader and the script run it started is over).

    The uploader is found by its label: ``input[type='file']`` alone can be another uploader, or one
    still on the page from the previous script run (the Data page's schema uploader, before a click on
    "Upload a CSV or Parquet file" has been drawn), which then silently swallows the file."""
    box = page.locator("[data-testid='stFileUploader']").filter(has_text=label).first
    box.wait_for(timeout=WAIT_MS)
    box.locator("input[type='file']").set_input_files(str(path))
    # the uploader lists the file in place of its drop zone's instructions (a long name is shortened
    # in the middle, "t [l](h...le.org.csv", so the name itself is no thing to wait for)
    box.locator("[data-testid='stFileUploaderDropzoneInstructions']").wait_for(state="hidden", timeout=WAIT_MS)
    settled(page)


def with_public_knowledge(table):
    """``table`` with every column's bounds and categories declared public in its schema (``"public"``, read
    here from the data: the test's assumption, as a user who knows them would write them into meta.json), so
    a private TabDDPM spends its preprocessing budget on the histograms only."""
    from dataclasses import replace

    import numpy as np

    s = table.schema
    data = table.data
    bounds = {c: [float(np.nanmin(data[c])), float(np.nanmax(data[c]))] for c in s.distance_numerical}
    cats = {c: [None if v != v else (v.item() if hasattr(v, "item") else v) for v in data[c].astype(object).unique()]
            for c in s.distance_categorical}
    return replace(table, schema=replace(s, extra={**s.extra, "public": {"bounds": bounds, "categories": cats}}))
