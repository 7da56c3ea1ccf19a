"""The run store (memviz.warmup.store): every reader validates what it reads, one BadRunFolder line each;
the writer's lock refuses a second writer and tells a live run from an interrupted one.

Each test here failed on the code as it was at commit 9a38467 (the start of the hardening
session): readers raised KeyError / AttributeError / ValueError / pyarrow tracebacks, two
writers could claim one folder, a killed run kept saying ``running``, and a kill between a
checkpoint and the manifest update left the manifest one check short.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import TINY_MODEL

import memviz.warmup.manifest as manifest_mod
import memviz.warmup.store as store_mod
from memviz.app.runs import load_run
from memviz.errors import BadRunFolder
from memviz.warmup.run import WarmupConfig, load_warmup, run_warmup
from memviz.warmup.store import RunStore, list_runs

ROOT = Path(__file__).resolve().parents[2]


def tiny(**kw) -> WarmupConfig:
    return WarmupConfig(**{**dict(epochs=6, check_every=2, seed=3, n_samples=40, device="cpu",
                                  model_params=dict(TINY_MODEL)), **kw})


@pytest.fixture(scope="module")
def finished(small_train, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("store") / "run"
    run_warmup(small_train, tiny(), run)
    return run


@pytest.fixture
def run(finished, tmp_path) -> Path:
    """A fresh copy of a finished run to break."""
    return Path(shutil.copytree(finished, tmp_path / "run"))


def one_line(exc_info, *needles) -> str:
    msg = str(exc_info.value)
    assert "\n" not in msg and "Traceback" not in msg, msg
    for n in needles:
        assert n in msg, (n, msg)
    return msg


def edit_manifest(run: Path, change) -> None:
    f = run / "manifest.json"
    m = json.loads(f.read_text())
    change(m)
    f.write_text(json.dumps(m))


def truncate(f: Path, keep: int = 300) -> None:
    f.write_bytes(f.read_bytes()[:keep])


# ------------------------------------------------------------------ the manifest
@pytest.mark.parametrize("change, needle", [
    (lambda m: m.pop("data"), "'data'"),                                      # the repro: KeyError
    (lambda m: m.update(config=[1, 2]), "'config'"),                          # AttributeError
    (lambda m: m.update(status="paused"), "'status'"),
    (lambda m: m.update(status=None), "'status'"),
    (lambda m: m["data"].update(n_rows="150"), "'data.n_rows'"),
    (lambda m: m["data"].pop("fingerprint"), "'data.fingerprint'"),
    (lambda m: m.update(checks={"0": 1}), "'checks'"),
    (lambda m: m.update(checks=["x"]), "'checks[0]'"),
    (lambda m: m["checks"][1].pop("epoch"), "'checks[1].epoch'"),
    (lambda m: m["checks"][0].update(mem_ratio="high"), "'checks[0].mem_ratio'"),
    (lambda m: m.update(schema={"numerical": "age"}), "'schema'"),
    (lambda m: m.update(progress=[]), "'progress'"),
    (lambda m: m["timings"].update(total_seconds="long"), "'timings.total_seconds'"),
    (lambda m: m["config"].update(top_frac="a lot"), "'config.top_frac'"),
    (lambda m: m["config"].update(epochs=0), "'config.epochs'"),
    (lambda m: m["config"].update(model_params=[]), "'config.model_params'"),
])
def test_a_malformed_manifest_is_one_run_error_line_naming_the_field(run, change, needle):
    edit_manifest(run, change)
    with pytest.raises(BadRunFolder) as info:
        load_warmup(run)
    one_line(info, str(run / "manifest.json"), needle)


@pytest.mark.parametrize("text, needle", [("{not json", "not valid JSON"), ("[1, 2]", "not a memviz.run/1"),
                                          ('{"format": "memviz.run/0"}', "not a memviz.run/1")])
def test_a_manifest_that_is_not_one_is_one_line(run, text, needle):
    (run / "manifest.json").write_text(text)
    with pytest.raises(BadRunFolder) as info:
        RunStore.open(run)
    one_line(info, needle)


# ----------------------------------------------------------------- the Parquet files
def _stray(run: Path) -> None:
    (run / "checks" / "check_abc.parquet").write_bytes(b"")


def _only_consolidated(run: Path) -> None:
    shutil.rmtree(run / "checks")
    truncate(run / "checks.parquet")


def _foreign_check(run: Path) -> None:
    pd.DataFrame({"x": [1]}).to_parquet(run / "checks" / "check_0001.parquet")


def _other_check(run: Path) -> None:
    shutil.copy(run / "checks" / "check_0000.parquet", run / "checks" / "check_0001.parquet")


def _short_train(run: Path) -> None:
    pd.read_parquet(run / "train.parquet").iloc[:-5].to_parquet(run / "train.parquet")


def _train_without_a_column(run: Path) -> None:
    pd.read_parquet(run / "train.parquet").drop(columns="age").to_parquet(run / "train.parquet")


@pytest.mark.parametrize("breaks, file, needle", [
    (lambda r: truncate(r / "train.parquet"), "train.parquet", "unreadable training table"),
    (lambda r: truncate(r / "checks" / "check_0002.parquet"), "check_0002.parquet", "unreadable check table"),
    (_stray, "check_abc.parquet", "not a check file name"),
    (_only_consolidated, "checks.parquet", "unreadable checks table"),
    (_foreign_check, "check_0001.parquet", "lacks column(s)"),
    (_other_check, "check_0001.parquet", "another check"),
    (_short_train, "train.parquet", "the manifest says 150"),
    (_train_without_a_column, "train.parquet", "age"),
])
def test_a_broken_parquet_file_is_one_run_error_line_naming_it(run, breaks, file, needle):
    breaks(run)
    with pytest.raises(BadRunFolder) as info:
        load_warmup(run)
    one_line(info, file, needle)


def test_a_truncated_sample_file_is_one_line(run):
    truncate(run / "samples" / "check_0001.parquet")
    with pytest.raises(BadRunFolder) as info:
        RunStore(run).samples(1)
    one_line(info, "check_0001.parquet", "unreadable")


# ------------------------------------------------------------------- the listing
def test_list_runs_shows_a_bad_folder_as_unreadable_and_keeps_the_others(finished, tmp_path):
    root = tmp_path / "runs"
    for name in ("a_good", "b_no_data", "c_config_list", "d_not_json"):
        shutil.copytree(finished, root / name)
    edit_manifest(root / "b_no_data", lambda m: m.pop("data"))
    edit_manifest(root / "c_config_list", lambda m: m.update(config=[]))
    (root / "d_not_json").joinpath("manifest.json").write_text("{")
    (root / "e_no_manifest").mkdir()
    df = list_runs(root)
    assert df["run_id"].tolist() == ["a_good", "b_no_data", "c_config_list", "d_not_json"]
    status = dict(zip(df["run_id"], df["status"]))
    assert status["a_good"] == "finished"
    assert status["b_no_data"] == "unreadable: manifest.json: manifest lacks the field 'data'"
    assert status["c_config_list"].startswith("unreadable: manifest.json: manifest field 'config'")
    assert status["d_not_json"] == "unreadable: manifest.json: manifest is not valid JSON"
    assert str(root) not in " ".join(status.values())  # the reason names the file, not the whole path


# --------------------------------------------------------------- the writer's lock
def _holder(*argv, code: str = "s = RunStore(sys.argv[1]).acquire()"):
    """Another process holding the run's lock (it prints 'ready', then sleeps until killed)."""
    script = ("import sys, time\nfrom memviz.warmup.store import RunStore\n" + code +
              "\nprint('ready', flush=True)\ntime.sleep(120)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", script, *map(str, argv)], stdout=subprocess.PIPE, env=env,
                            text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _stop(proc) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_two_writers_racing_for_one_folder_one_is_refused(small_train, tmp_path, monkeypatch):
    """The issue's race, made deterministic: writer A has made the folder and is about to write
    (its first file is slow); writer B starts then. At 9a38467, B found the folder empty and
    both wrote (a manifest from one seed over checks from the other)."""
    out = tmp_path / "out"
    small_train.data.reset_index().to_parquet(tmp_path / "train.parquet")
    small_train.schema.save(tmp_path / "schema.json")
    a = _holder(out, tmp_path / "train.parquet", tmp_path / "schema.json",
                code="import memviz.warmup.store as st\nfrom memviz.tables.data import load_table\n"
                     "train = load_table(sys.argv[2], sys.argv[3], row_id_column='row_id')\n"
                     "def paused(path, df):\n    print('ready', flush=True); time.sleep(120)\n"
                     "st.atomic_write_parquet = paused  # A stops right before its first file\n"
                     "st.RunStore.create(sys.argv[1], train, {'seed': 1})")
    try:
        monkeypatch.setattr("memviz.warmup.store.LOCK_WAIT_SECONDS", 0.2, raising=False)
        with pytest.raises(BadRunFolder) as info:
            RunStore.create(out, small_train, {"seed": 2})
        one_line(info, str(out), "another process is writing", f"pid {a.pid}")
        assert not (out / "manifest.json").exists() and out.is_dir()  # B neither wrote nor removed A's folder
    finally:
        _stop(a)


def test_resuming_a_live_run_is_refused(small_train, run, monkeypatch):
    """The lock's side of it (a live writer stands in for the run); the CLI test
    ``test_a_live_run_refuses_a_second_resume_and_says_interrupted_once_killed`` runs a real one."""
    edit_manifest(run, lambda m: m.update(status="running"))
    holder = _holder(run)
    try:
        monkeypatch.setattr("memviz.warmup.store.LOCK_WAIT_SECONDS", 0.2)
        assert RunStore(run).status() == "running"
        before = {p.name: p.stat().st_mtime_ns for p in (run / "checks").iterdir()}
        with pytest.raises(BadRunFolder) as info:
            run_warmup(small_train, tiny(), run, resume=True)
        one_line(info, "another process is writing this run", f"pid {holder.pid}")
        assert {p.name: p.stat().st_mtime_ns for p in (run / "checks").iterdir()} == before  # nothing touched
        assert json.loads((run / "manifest.json").read_text())["status"] == "running"
    finally:
        _stop(holder)
    assert RunStore(run).status() == "interrupted"     # its writer was killed
    assert load_warmup(run).status == "interrupted"


def test_a_run_is_running_while_its_writer_lives_and_interrupted_after(small_train, tmp_path):
    seen = []

    def progress(ev):
        if ev.get("event") == "check":
            seen.append((load_warmup(tmp_path / "r").status, list_runs(tmp_path)["status"].tolist()))

    run_warmup(small_train, tiny(epochs=2, check_every=1), tmp_path / "r", progress=progress)
    assert seen == [("running", ["running"])] * 2
    assert load_warmup(tmp_path / "r").status == "finished"
    edit_manifest(tmp_path / "r", lambda m: m.update(status="running"))  # what a kill -9 leaves
    assert load_warmup(tmp_path / "r").status == "interrupted"
    assert list_runs(tmp_path)["status"].tolist() == ["interrupted"]


def test_create_refuses_a_file_a_run_or_a_busy_folder_and_leaves_nothing_it_made(small_train, tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadRunFolder, match="is a file"):
        RunStore.create(tmp_path / "file", small_train, {})
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(BadRunFolder, match="not empty"):
        RunStore.create(tmp_path / "busy", small_train, {})
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["notes.txt"]  # no lock file left in it
    store = RunStore.create(tmp_path / "new", small_train, {"seed": 0})
    store.release()
    with pytest.raises(BadRunFolder, match="already exists"):
        RunStore.create(tmp_path / "new", small_train, {})


# ------------------------------------------------------ checkpoint and manifest order
class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs (not even the failure bookkeeping)."""


def test_a_kill_between_checkpoint_and_manifest_update_loses_no_check(small_train, tmp_path, monkeypatch):
    """At 9a38467 the checkpoint of a check was saved before the manifest listed it: a kill
    between the two left a checkpoint one check ahead of the manifest, the resume skipped that
    check, and the finished manifest listed 2 checks of 3."""
    full = run_warmup(small_train, tiny(), tmp_path / "full")
    real_update, real_save = RunStore.update, RunStore.save_checkpoint
    state = {"dead": False}

    def update(self, **fields):
        if state["dead"]:
            return self.manifest()       # the process is gone: nothing more is written
        if len(fields.get("checks") or []) == 2:
            state["dead"] = True         # killed right as check 1 is being recorded
            raise Killed()
        return real_update(self, **fields)

    def save(self, st):
        if state["dead"]:
            return None
        return real_save(self, st)

    monkeypatch.setattr(RunStore, "update", update)
    monkeypatch.setattr(RunStore, "save_checkpoint", save)
    with pytest.raises(Killed):
        run_warmup(small_train, tiny(), tmp_path / "part")
    monkeypatch.setattr(RunStore, "update", real_update)
    monkeypatch.setattr(RunStore, "save_checkpoint", real_save)
    resumed = run_warmup(small_train, tiny(), tmp_path / "part", resume=True)
    strip = lambda cs: [{k: v for k, v in c.items() if "seconds" not in k} for c in cs]  # noqa: E731
    assert strip(RunStore(tmp_path / "part").manifest()["checks"]) == \
        strip(RunStore(tmp_path / "full").manifest()["checks"])
    pd.testing.assert_frame_equal(resumed.checks, full.checks)
    np.testing.assert_array_equal(resumed.dynamics.counts, full.dynamics.counts)


def test_the_manifest_is_typed_and_a_run_is_opened_once(run, monkeypatch):
    """Opening a run for the dashboard parsed its manifest about six times and read
    train.parquet twice (issue 21); now once each, and readers use attributes."""
    m = RunStore(run).read()
    assert m.status == "finished" and m.kind == "warmup" and m.data.n_rows == len(RunStore(run).train())
    assert m.schema.columns == RunStore(run).train().schema.columns
    assert m.epochs == m.config["epochs"] and m.total_seconds >= 0 and m.checks[-1]["check"] == len(m.checks) - 1
    with pytest.raises(Exception):  # frozen
        m.status = "running"
    parses, reads = [], []
    real_from_dict, real_read = manifest_mod.Manifest.from_dict.__func__, store_mod.read_parquet
    monkeypatch.setattr(manifest_mod.Manifest, "from_dict",
                        classmethod(lambda cls, d, f: parses.append(f) or real_from_dict(cls, d, f)))
    monkeypatch.setattr(store_mod, "read_parquet",
                        lambda f, *a, **k: reads.append(Path(f).name) or real_read(f, *a, **k))
    view = load_run(run)
    assert len(parses) == 1
    assert reads.count("train.parquet") == 1
    assert view.result.status == "finished"
    # a writer's update is seen by the same store (the cache is keyed on the file's version)
    store = RunStore(run)
    before = store.read()
    store.write_manifest({**store.manifest(), "error": "x" * 3})
    assert store.read().error == "xxx" and before.error is None
