"""What one browser session may ask of the server is bounded and said (issue 41, item 3).

At e9efb32: "Sample from this check" accepted 10,000,000 rows, drawn inside the server (1-3 CPU-hours,
on after the tab closed); the warm-up form accepted 100,000 epochs with a check every epoch and said
nothing of the disk (about 110 GB, more than the disk); kept uploads had no total quota.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import tiny_warmup

from memviz.app import bounds, uploads
from memviz.errors import BadOption, MemvizError, TooLarge
from memviz.jobs import control as jobs
from memviz.warmup.run import run_warmup

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


@pytest.fixture(scope="module")
def root(small_train, tmp_path_factory):
    """A runs root with one finished tiny run that kept its per-check checkpoints."""
    root = tmp_path_factory.mktemp("bounded")
    run_warmup(small_train, tiny_warmup(epochs=4, check_every=2, n_samples=40), root / "tiny")
    return root


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_the_disk_estimate_errs_high_but_not_far(root, small_train):
    cfg = tiny_warmup(epochs=4, check_every=2, n_samples=40)
    est = bounds.warmup_disk(small_train, preset=cfg.preset, epochs=4, check_every=2, n_samples=40,
                             model_params=cfg.model_params)
    actual = _bytes(root / "tiny")
    assert est.checks == 2 and actual <= est.total <= 3 * actual, (actual, est)
    big = bounds.warmup_disk(small_train, preset="cpu-quick", epochs=100_000, check_every=1)
    assert big.checks == 100_000 and big.total > 50e9                    # the issue's ~110 GB form
    with pytest.raises(MemvizError, match="would write about .* above the"):
        bounds.check_warmup_disk(big, root)


def test_a_run_larger_than_the_free_space_is_refused(root, small_train, monkeypatch):
    est = bounds.warmup_disk(small_train, preset="cpu-quick", epochs=10, check_every=1)
    bounds.check_warmup_disk(est, root)
    monkeypatch.setattr(bounds, "free_bytes", lambda _root: bounds.DISK_RESERVE + est.total // 2)
    with pytest.raises(MemvizError, match="free") as e:
        bounds.check_warmup_disk(est, root)
    assert "\n" not in str(e.value)


@pytest.fixture
def app(root, monkeypatch):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    started = []
    monkeypatch.setattr(jobs, "start_warmup", lambda *a, **k: started.append(k) or pytest.fail("a run started"))

    def make():
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["run"] = "tiny"
        return at
    make.started = started
    return make


def test_the_warmup_form_states_the_disk_and_refuses_100000_checks(app):
    at = app().run()
    at.switch_page("screens/2_warmup.py").run()
    assert any(c.value.startswith("Disk: these settings write about") for c in at.caption)
    at.number_input(key="wu_epochs").set_value(100_000)
    at.number_input(key="wu_every").set_value(1)
    next(b for b in at.button if b.label == "Start warm-up").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert app.started == []
    errors = [e.value for e in at.error]
    assert any("would write about" in e and "100,000 checks" in e for e in errors), errors


def test_sampling_from_a_check_is_capped_and_says_so(app):
    at = app().run()
    at.switch_page("screens/2_warmup.py").run()
    field = at.number_input(key="warmup_rows")
    cap = bounds.sample_rows_max()
    assert field.max == cap < 10_000_000
    assert re.search(rf"At most {cap:,} rows", field.help)
    assert any(f"At most {cap:,} rows are drawn here" in c.value for c in at.caption)
    with pytest.raises(MemvizError):
        bounds.check_sample_rows(10_000_000)


def test_the_row_cap_says_which_kind_of_mistake_it_refuses():
    """Above the cap the machine's limit (TooLarge), below one row a bad value (BadOption): one line each, the same
    words."""
    cap = bounds.sample_rows_max()
    with pytest.raises(TooLarge, match=rf"^{cap + 1:,} rows: the dashboard draws 1 to {cap:,} rows"):
        bounds.check_sample_rows(cap + 1)
    with pytest.raises(BadOption, match=rf"^0 rows: the dashboard draws 1 to {cap:,} rows"):
        bounds.check_sample_rows(0)
    assert bounds.check_sample_rows(cap) == cap


def test_the_caps_read_their_environment_in_one_line(monkeypatch):
    monkeypatch.setenv(bounds.SAMPLE_ROWS_ENV, "1000")
    assert bounds.sample_rows_max() == 1000
    monkeypatch.setenv(bounds.RUN_DISK_ENV, "lots")
    with pytest.raises(MemvizError, match=bounds.RUN_DISK_ENV):
        bounds.run_disk_bytes()


# ------------------------------------------------------------------ one byte budget for every cache
def _frame(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "s": [f"text-{i}" for i in rng.integers(0, 10**9, n)]})


def test_every_cache_of_tables_and_audits_shares_one_byte_budget(monkeypatch):
    """Four 72 MB uploads took the server to 4.2 GB: the Audit page's caches were bounded by entries (8),
    each on its own."""
    one = uploads.nbytes(_frame(20_000))
    monkeypatch.setenv(uploads.UPLOAD_CACHE_ENV, str(int(2.5 * one)))
    a = uploads.ByteCache(lambda name: _frame(20_000, seed=hash(name) % 1000))
    b = uploads.ByteCache(lambda name, _big: _frame(20_000, seed=hash(name) % 997))
    for name in ("a", "b", "c", "d"):
        a(name)
        b(name, object())                       # a parameter named _... is not part of the key
        assert a.total_bytes + b.total_bytes <= int(2.5 * one)
        assert uploads.cache_bytes() <= uploads.upload_cache_bytes()
    assert len(a) + len(b) == 2
    calls = []
    c = uploads.ByteCache(lambda name, _t: calls.append(name) or 1)
    c("x", object()), c("x", object())
    assert calls == ["x"]


def test_the_dashboards_table_and_audit_caches_are_on_the_budget():
    sys.path.insert(0, str(ROOT))
    from screens import _ui  # lazy: screens/_ui imports streamlit (optional, memviz[app])

    for name in ("raw_choice", "raw_upload", "raw_kept", "kept_tables", "run_view", "run_tables", "redacted_table",
                 "tables_of", "audit_of"):
        fn = getattr(_ui, name)
        assert isinstance(fn, uploads.ByteCache) and fn._pool is uploads.SHARED, name
    page = (ROOT / "screens" / "8_audit.py").read_text()
    assert "cache_resource" not in page                          # nothing of the page's own, outside the budget


# ------------------------------------------------------------------ kept uploads: a total quota
def test_kept_uploads_stay_within_their_quota_oldest_first(tmp_path, monkeypatch):
    raw = [(f"t{i}.csv", ("a,b\n" + "".join(f"{i},{j}\n" for j in range(20_000))).encode()) for i in range(4)]
    size = len(raw[0][1])
    monkeypatch.setenv(bounds.UPLOAD_QUOTA_ENV, str(int(2.5 * size)))
    kept = []
    for n, (name, data) in enumerate(raw):
        kept.append(uploads.save_upload(tmp_path, name, data))
        os.utime(kept[-1].folder, (n + 1, n + 1)) if n < 3 else None   # saved one after another
    left = {u.name for u in uploads.list_uploads(tmp_path)}
    assert left == {"t2.csv", "t3.csv"}, left                         # the newest two: 2.5 uploads' quota
    assert sum(n for _, n, _ in bounds.kept_folders(tmp_path / uploads.UPLOADS)) <= int(2.5 * size)
    with pytest.raises(MemvizError, match="kept uploads may take"):
        uploads.save_upload(tmp_path, "big.csv", b"x" * (3 * size))
    assert bounds.uploads_caption(tmp_path / uploads.UPLOADS).startswith("Uploads are kept under")
