"""The served dashboard's Streamlit settings (.streamlit/config.toml) that tests elsewhere cannot see."""
from pathlib import Path

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
