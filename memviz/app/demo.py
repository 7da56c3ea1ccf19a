"""The ready-made demo: a finished run of the bundled sample, shown on the dashboard's first start.

``sample_data/demo/`` is a runs root recorded by ``sample_data/make_demo.py`` through the dashboard's own
job calls (a warm-up with the Warm-up form's defaults, a comparison ranked on it, its details) and packed
by :func:`pack`: what no page reads is left out (process logs, locks, the job's pid), and every path under
the runs root is written relative to it (:data:`ROOT_MARK`). :func:`install` copies it into an empty runs
root on the first start (``$MEMVIZ_DEMO=0``: never) and puts the paths back: the pages then read it with
the same code as any run (:func:`memviz.app.runs.load_run`, :func:`memviz.jobs.control.list_jobs`), and a
user may delete it like any run (it is not installed again: :data:`MARK`).

A run's cache key is its manifest's modification time (:func:`memviz.warmup.store.run_token`), which git
does not keep; the recorded token is in the kept audit's index, and the copy's manifest gets that time
back, so the audit the worker kept is read, not computed again (and a stale one is simply recomputed).

The Audit page's example (:func:`example_files`): the bundled sample's training table, its test split as the
hold-out, and ``sample_data/example_synthetic.csv``: the demo warm-up's last generated rows with 300 of them
replaced by 30 training rows planted 10 times each (:func:`planted_example`).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.app.runs import column_order
from memviz.jobs.status import JOBS
from memviz.tables.data import sample_data_dir
from memviz.warmup.store import MANIFEST, RunStore

DEMO_ENV = "MEMVIZ_DEMO"
#: what a packed path under the runs root starts with instead of the recording machine's folder
ROOT_MARK = "@MEMVIZ_RUNS@"
#: written into a runs root once the demo was installed there (deleted runs are not brought back)
MARK = ".demo-installed"
#: the packed files that hold paths (JSON text): the job records and specs, the manifests, experiment.json
PATH_FILES = ("*.json", "*.jsonl")
#: left out of the packed folder: process state and logs no page reads
SKIP = ("writer.lock", "log.txt", "exit_code", "slots", "queue", "__pycache__", "server.log")
#: the example: training rows planted, and how many times each
PLANTED_ROWS, PLANTED_TIMES = 30, 10
EXAMPLE = "example_synthetic.csv"


def demo_dir() -> Path:
    """The packed demo runs root (``sample_data/demo``)."""
    return sample_data_dir() / "demo"


def enabled() -> bool:
    """Is the demo installed on a first start (``$MEMVIZ_DEMO`` unset, or anything but 0/false/no/off)?"""
    return os.environ.get(DEMO_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _text_files(folder: Path):
    for pattern in PATH_FILES:
        yield from (p for p in folder.rglob(pattern) if p.is_file() and not p.is_symlink())


def _swap(folder: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in every JSON file under ``folder`` (as JSON text: the strings escaped)."""
    old_j, new_j = json.dumps(old)[1:-1], json.dumps(new)[1:-1]
    for p in _text_files(folder):
        text = p.read_text(encoding="utf-8")
        if old_j in text:
            tmp = p.with_name(p.name + ".tmp")
            tmp.write_text(text.replace(old_j, new_j), encoding="utf-8")
            os.replace(tmp, p)


def _restore_tokens(root: Path) -> None:
    """Each run's manifest gets the modification time its kept audit was made for (module docstring)."""
    for index in root.glob("*/audit_cache/index.json"):
        try:
            token = json.loads(index.read_text(encoding="utf-8")).get("token")
        except (OSError, ValueError):
            continue
        manifest = index.parent.parent / "manifest.json"
        if isinstance(token, int) and token > 0 and manifest.is_file():
            os.utime(manifest, ns=(token, token))


def _slim(run: Path) -> None:
    """What a finished run keeps only to resume: its per-check tables once consolidated (``checks.parquet``
    holds them all; :meth:`memviz.warmup.store.RunStore.checks` reads it), the latest training state
    (``checkpoints/model.pt``; the per-check weights stay, for "Sample from this check")."""
    if (run / "checks.parquet").is_file():
        shutil.rmtree(run / "checks", ignore_errors=True)
    (run / "checkpoints" / "model.pt").unlink(missing_ok=True)


def pack(root: str | Path, out: str | Path) -> int:
    """Copy the runs root ``root`` into ``out`` (replaced whole) without :data:`SKIP`, paths made relative and
    the job records' pids dropped; returns the bytes written."""
    root, out = Path(root).resolve(), Path(out)
    tmp = out.with_name(out.name + ".new")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(root, tmp, ignore=shutil.ignore_patterns(*SKIP))
    for run in tmp.glob("*/manifest.json"):
        _slim(run.parent)
    _swap(tmp, str(root), ROOT_MARK)
    for rec in tmp.glob(".jobs/*/job.json"):            # a finished job: no process to look for
        d = json.loads(rec.read_text(encoding="utf-8"))
        d.update(pid=None, start_ticks=None, session="")
        d.pop("command", None)                          # the recording machine's interpreter
        rec.write_text(json.dumps(d) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    _restore_tokens(out)
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def _has_work(root: Path) -> bool:
    if any((p / MANIFEST).is_file() for p in root.iterdir() if p.is_dir()):
        return True
    jobs = root / JOBS
    return jobs.is_dir() and any(p.name not in ("slots", "queue") for p in jobs.iterdir())


def install(root: str | Path, source: str | Path | None = None) -> bool:
    """Copy the packed demo (``source``, default :func:`demo_dir`) into the runs root ``root`` when the demo is
    :func:`enabled`, there is one to copy, and ``root`` holds no run or job and was never given it
    (:data:`MARK`). Returns whether it was installed. Never raises for a full disk or a read-only root: the
    dashboard then starts without it."""
    root, source = Path(root), Path(source) if source is not None else demo_dir()
    if not enabled() or not (source / "manifest.json").exists() and not any(source.glob("*/manifest.json")):
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)
        if (root / MARK).exists() or _has_work(root):
            return False
        stage = root / ".demo-installing"
        shutil.rmtree(stage, ignore_errors=True)
        shutil.copytree(source, stage, ignore=shutil.ignore_patterns(*SKIP))
        _swap(stage, ROOT_MARK, str(root.resolve()))
        for item in sorted(stage.iterdir()):      # the job records last: a listed job finds its folder
            target = root / item.name
            if item.name == ".jobs":
                continue
            if not target.exists():
                os.replace(item, target)
        jobs_src = stage / ".jobs"
        if jobs_src.is_dir():
            (root / ".jobs").mkdir(exist_ok=True)
            for item in jobs_src.iterdir():
                if not (root / ".jobs" / item.name).exists():
                    os.replace(item, root / ".jobs" / item.name)
        shutil.rmtree(stage, ignore_errors=True)
        _restore_tokens(root)
        (root / MARK).write_text("the bundled sample's demo run was installed here once\n", encoding="utf-8")
        return True
    except OSError:
        return False


# ------------------------------------------------------------------ the Audit page's example
def planted_example(view, seed: int = 0) -> pd.DataFrame:
    """The last check's generated rows of a run (``view``: :class:`memviz.app.runs.RunView`) with
    :data:`PLANTED_ROWS` × :data:`PLANTED_TIMES` of them replaced by verbatim copies of as many training rows
    (drawn with ``seed``), in the training file's column order; without ``row_id``."""
    store = RunStore(view.path)
    last = int(view.per_check["check"].iloc[-1])
    syn = store.samples(last).drop(columns=["synthetic_id"], errors="ignore").reset_index(drop=True)
    rng = np.random.default_rng(seed)
    train = view.train.data
    src = rng.choice(len(train), size=PLANTED_ROWS, replace=False)
    planted = train.iloc[np.repeat(src, PLANTED_TIMES)][syn.columns].reset_index(drop=True)
    where = rng.choice(len(syn), size=len(planted), replace=False)
    syn.iloc[where] = planted.to_numpy()
    syn = syn.astype(train[syn.columns].dtypes.to_dict())

    order = [c for c in column_order(view.path) if c in syn.columns]
    return syn[order + [c for c in syn.columns if c not in order]]


def example_files() -> dict[str, tuple[str, bytes]]:
    """The Audit page's example as uploads: {"train", "synthetic", "holdout", "schema"}: (file name, bytes)."""
    folder = sample_data_dir()
    names = {"train": "train.csv", "synthetic": EXAMPLE, "holdout": "test.csv", "schema": "meta.json"}
    return {k: (name, (folder / name).read_bytes()) for k, name in names.items()}


def has_example() -> bool:
    return (sample_data_dir() / EXAMPLE).is_file()
