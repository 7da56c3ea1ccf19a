"""The served dashboard's Streamlit settings (.streamlit/config.toml) that tests elsewhere cannot see."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_the_server_watches_no_files():
    """With the README's install (a .venv inside the repository) Streamlit's file watcher put an inotify
    watch on each of the venv's 7,087 folders, and the first page took 46-64 s instead of 28-33 s on a
    loaded 2-core machine (the Data page's Upload click 20-28 s instead of 13 s): the upload step of the
    browser tests timed out in a fresh clone. The app never reloads its own source, so no watcher."""
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["fileWatcherType"] == "none"
    assert cfg["server"]["runOnSave"] is False


@pytest.mark.slow
def test_the_apps_settings_apply_when_started_from_another_folder(tmp_path):
    """Issue 51: whether .streamlit/config.toml applies when `streamlit run` starts from another folder was not
    said. Streamlit reads the one beside app.py over the starting folder's own (and ~/.streamlit's): started from
    a folder whose config listens on every address, the server still listens on 127.0.0.1 alone."""
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text('[server]\naddress = "0.0.0.0"\n')
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port",
                                 str(port)], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=dict(os.environ, MEMVIZ_RUNS=str(tmp_path / "runs")))
        try:
            deadline = time.monotonic() + 600           # a state (the server says where it listens), one bound
            while "URL:" not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            text = log.read_text()
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    assert f"URL: http://127.0.0.1:{port}" in text and "Network URL" not in text, text
