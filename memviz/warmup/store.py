"""The run store: a warm-up run is a directory, written atomically, reopened safely.

Layout of ``RUN_DIR``::

    manifest.json          config, seed, schema, data fingerprint, package versions,
                           device, status, timings, per-check summary
    train.parquet          the training table (with row_id) the run was trained on
    checks/check_0007.parquet   one per finished check: the long table rows of that check
    checks.parquet         all checks (check, epoch, synthetic_id, nn1, nn2, d1, d2, ratio,
                           memorized), consolidated when the run stops
    samples/check_0007.parquet  the generated rows of that check (synthetic_id + columns)
    rows.parquet           one row per training row (row_id, total_count, first_epoch,
                           forgetting_events, top, ...), written when the run stops
    row_checks.parquet     tidy per row and check: row_id, check, epoch, count, mem_auc, cumulative
    checkpoints/model.pt   latest model state (tensors and plain containers only)
    floor.json             the floor of the training rows (:mod:`memviz.measure.floor`), when the run
                           was given a hold-out; absent otherwise (and in older runs)
    floor_rows.parquet     its per-row arrays: row_id, hits, nn1, auc
    holdout.parquet        the hold-out's rows themselves, so that an audit of any check can read how close
                           the generated rows are against them (:meth:`memviz.auditing.result.Audit.from_run`)
    audit_cache/           the last check's audit and every row's copies by closeness, kept by the job
                           worker when the run stops (:mod:`memviz.auditing.stored`,
                           :func:`memviz.jobs.spec.keep_audit`), each tied to the manifest's
                           :func:`run_token`; derived, safe to delete
    writer.lock            the writer's lock (flock), held by the process writing the run for
                           its whole life: a second writer (or a second ``--resume``) is refused,
                           and a reader tells a live run from an interrupted one

Every file is written to a temporary name in the same folder and renamed, so a killed
run never leaves a half-written file. Opening a run reads JSON and Parquet, and loads
checkpoints with ``torch.load(weights_only=True)``: nothing is unpickled. Every reader
validates what it reads (the manifest's fields and types, each Parquet file and its columns,
the check file names) and raises one :class:`~memviz.errors.BadRunFolder` line naming the file
and the problem.
"""
from __future__ import annotations

import copy
import json
import platform
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from memviz.folders import WriterLock
from memviz.errors import BadRunFolder
from memviz.io import (
    VERSION,
    NonFinite,
    atomic_torch_save,
    atomic_write_json,
    atomic_write_parquet,
    atomic_write_text,
    read_json,
    read_parquet,
    strict_loads,
    to_jsonable,
)
from memviz.tables.data import ROW_ID, Table, fingerprint
from memviz.tables.schema import Schema
from memviz.warmup.manifest import FORMAT, Manifest

MANIFEST = "manifest.json"
CANCEL = "CANCEL"
LOCK = "writer.lock"
INTERRUPTED = "interrupted"
#: the long table of a check (memviz.warmup.tracking.long_table)
CHECK_COLUMNS = ("check", "epoch", "synthetic_id", "nn1", "nn2", "d1", "d2", "ratio", "memorized")
_CHECK_NAME = re.compile(r"check_(\d{4,})\.parquet")
#: how long a writer waits for the lock (a reader's probe holds it for microseconds)
LOCK_WAIT_SECONDS = 2.0


# ------------------------------------------------------------------- helpers
def versions() -> dict:
    import sklearn  # lazy: sklearn, an extra (train): a run's store is read without it
    import torch  # lazy: torch, an extra (train): a run's store is read without it

    return {"memviz": VERSION, "python": platform.python_version(), "torch": torch.__version__,
            "numpy": np.__version__, "pandas": pd.__version__, "scikit-learn": sklearn.__version__}


def table_to_frame(table: Table) -> pd.DataFrame:
    """The table with its row_id as the first column, then the user's row key when it has one (for
    Parquet/CSV: :meth:`memviz.tables.data.Table.to_frame`)."""
    return table.to_frame()


def _column_order(path: Path) -> tuple[str, ...]:
    """The columns of a Parquet file in its order, row_id aside (written in the user's order by
    :func:`table_to_frame`); () when its footer cannot be read."""
    try:
        return tuple(c for c in pq.read_schema(path).names if c != ROW_ID)
    except Exception:  # noqa: BLE001 (pyarrow raises many types; the order is only for downloads)
        return ()


# ------------------------------------------------------------------- the run
class RunStore:
    """Read and write one run directory.

    A writer (:meth:`create`, or :meth:`acquire` before resuming) holds the run's lock
    (``writer.lock``, an flock) until :meth:`release` or its process ends, however it ends:
    a second writer gets a BadRunFolder, and :meth:`status` tells a live ``running`` run from an
    interrupted one.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = WriterLock(self.path / LOCK)  # held while this object writes the run
        self._read: tuple[tuple, Manifest] | None = None  # (the file's stamp, its Manifest)
        self._train: Table | None = None

    # -- creation ------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, train: Table, config: dict, *, kind: str = "warmup",
               device: str = "cpu") -> "RunStore":
        """Create the run folder (or claim an empty one) and hold its lock; BadRunFolder when the
        folder holds a run, other files, or another writer. A failure leaves no folder it made."""
        store = cls(path)
        store._refuse_existing()
        made = not store.path.exists()
        try:
            store.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a file appeared there meanwhile
            raise BadRunFolder(f"{store.path}: is a file, not a folder") from None
        store.acquire()
        try:
            store._refuse_existing()  # again, now that no other writer can change the folder
            atomic_write_parquet(store.path / "train.parquet", table_to_frame(train))
            manifest = {
                "format": FORMAT, "kind": kind, "run_id": store.path.name,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "status": "running",
                "config": config, "seed": config.get("seed"), "schema": train.schema.to_dict(),
                "data": {"source": train.source, "fingerprint": fingerprint(train), "n_rows": len(train)},
                "versions": versions(), "device": device, "timings": {}, "checks": [], "progress": {},
            }
            store.write_manifest(manifest)
        except BaseException:
            store.release()
            if made:
                shutil.rmtree(store.path, ignore_errors=True)
            raise
        return store

    def _refuse_existing(self) -> None:
        """BadRunFolder unless ``path`` is absent or an empty folder (its lock file aside)."""
        if not self.path.exists():
            return
        if not self.path.is_dir():
            raise BadRunFolder(f"{self.path}: is a file, not a folder")
        if not self._lock.mine and self._lock.alive():
            raise BadRunFolder(f"{self.path}: another process is writing a run here{self._lock.holder()}")
        if (self.path / MANIFEST).exists():
            raise BadRunFolder(f"{self.path}: a run already exists here (use --resume, or another --out)")
        if any(p.name != LOCK for p in self.path.iterdir()):
            raise BadRunFolder(f"{self.path}: folder is not empty and holds no run")

    @classmethod
    def open(cls, path: str | Path) -> "RunStore":
        store = cls(path)
        store.read()  # validates
        return store

    # -- the writer's lock -------------------------------------------------------
    def acquire(self) -> "RunStore":
        """Hold the run's lock (:mod:`memviz.folders`) until :meth:`release` or the end of this process; BadRunFolder
        (one line) when another process holds it."""
        if not self._lock.take(wait=LOCK_WAIT_SECONDS):
            raise BadRunFolder(f"{self.path}: another process is writing this run{self._lock.holder()}; "
                               f"wait for it to stop, or cancel it")
        return self

    def release(self) -> None:
        """Let go of the run's lock (the system also frees it when the process ends)."""
        self._lock.release()

    def writer_alive(self) -> bool:
        """Does a process (this one included) hold the run's lock now?"""
        return self._lock.alive()

    def status(self, manifest: "dict | Manifest | None" = None) -> str:
        """The manifest's status, but :data:`INTERRUPTED` for a ``running`` run whose writer has
        gone (killed, or the machine restarted): no process holds its lock."""
        m = manifest if manifest is not None else self.read()
        status = m.status if isinstance(m, Manifest) else m["status"]
        return INTERRUPTED if status == "running" and self.writer_alive() is False else status

    # -- manifest --------------------------------------------------------------
    def read(self) -> Manifest:
        """The typed manifest; BadRunFolder when missing or malformed. Parsed and validated once per
        version of the file (its modification time and size), so a live run is re-read after it
        writes and a finished one is read once for this object."""
        f = self.path / MANIFEST
        try:
            st = f.stat()
        except FileNotFoundError:
            raise BadRunFolder(f"{self.path}: not a memviz run (no {MANIFEST})") from None
        except OSError as exc:
            raise BadRunFolder(f"{f}: unreadable manifest ({exc.strerror or type(exc).__name__})") from None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if self._read is not None and self._read[0] == stamp:
            return self._read[1]
        try:
            m = strict_loads(f.read_text(encoding="utf-8"))
        except NonFinite as exc:                    # Shape = inf recommended check 0 for "quality inf"
            raise BadRunFolder(exc.sentence(f, "manifest")) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadRunFolder(f"{f}: manifest is not valid JSON") from None
        except OSError as exc:
            raise BadRunFolder(f"{f}: unreadable manifest ({exc.strerror or type(exc).__name__})") from None
        typed = Manifest.from_dict(m, f)
        self._read = (stamp, typed)
        return typed

    def manifest(self) -> dict:
        """The validated manifest as a fresh dict (for writers: :meth:`update`); readers use
        :meth:`read`. BadRunFolder when missing or malformed."""
        return copy.deepcopy(dict(self.read().raw))

    def write_manifest(self, manifest: dict) -> None:
        atomic_write_text(self.path / MANIFEST, json.dumps(to_jsonable(manifest), indent=1))

    def update(self, **fields) -> dict:
        m = self.manifest()
        m.update(to_jsonable(fields))
        m["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.write_manifest(m)
        return m

    @property
    def schema(self) -> Schema:
        return self.read().schema

    # -- tables ----------------------------------------------------------------
    def train(self) -> Table:
        """The training table; BadRunFolder when train.parquet is missing, unreadable, lacks a
        schema column, or does not hold the manifest's rows (count, unique integer row_ids)."""
        if self._train is not None:  # written once, when the run is created
            return self._train
        f = self.path / "train.parquet"
        m = self.read()
        key = list(m.schema.key_columns)   # the user's row key (issue 42): one column, or several (a composite key)
        wanted = [ROW_ID, *key, *m.schema.columns]
        df = read_parquet(f, "training table", columns=wanted)
        df = df[[c for c in wanted if c in df.columns]]   # the schema's order (the file keeps the user's)
        ids = df[ROW_ID]
        if not pd.api.types.is_integer_dtype(ids) or ids.duplicated().any():
            raise BadRunFolder(f"{f}: column {ROW_ID!r}: row ids must be unique integers")
        if len(df) != m.data.n_rows:
            raise BadRunFolder(f"{f}: holds {len(df)} rows, the manifest says {m.data.n_rows}")
        for col in m.schema.numerical:    # the run wrote them as numbers: text there is a manifest edited by hand
            if not (pd.api.types.is_numeric_dtype(df[col]) or pd.api.types.is_bool_dtype(df[col])):
                raise BadRunFolder(f"{self.path / MANIFEST}: manifest field 'schema': column {col!r} is numerical there, "
                                   f"but the run's training table holds text in it ({f.name}); the manifest does not "
                                   "match the run")
        df = df.set_index(ROW_ID)
        df.index = df.index.astype(np.int64)
        keys = df.pop(key[0]) if len(key) == 1 else None
        if len(key) > 1:
            keys, df = df[key], df.drop(columns=key)
        self._train = Table(df, m.schema, m.data.source or str(f), keys, _column_order(f))
        return self._train

    def _check_file(self, folder: str, check: int) -> Path:
        return self.path / folder / f"check_{int(check):04d}.parquet"

    def write_check(self, check: int, long: pd.DataFrame, samples: pd.DataFrame | None) -> None:
        """Store one finished check: the samples first, then the long table (its presence marks the check done)."""
        if samples is not None:
            atomic_write_parquet(self._check_file("samples", check), samples)
        atomic_write_parquet(self._check_file("checks", check), long)

    def finished_checks(self) -> list[int]:
        """The numbers of the stored checks; BadRunFolder on a ``check_*.parquet`` not named
        ``check_NNNN.parquet`` (memviz's temporary files are hidden and never match)."""
        folder = self.path / "checks"
        if not folder.exists():
            return []
        out = []
        for p in folder.glob("check_*.parquet"):
            match = _CHECK_NAME.fullmatch(p.name)
            if match is None:
                raise BadRunFolder(f"{p}: not a check file name (expected check_NNNN.parquet)")
            out.append(int(match.group(1)))
        return sorted(out)

    def drop_checks_after(self, check: int) -> None:
        """Forget checks newer than ``check`` (they are redone identically on resume)."""
        for c in self.finished_checks():
            if c > check:
                for folder in ("checks", "samples"):
                    self._check_file(folder, c).unlink(missing_ok=True)

    def check_table(self, check: int) -> pd.DataFrame:
        """The long table of one stored check (BadRunFolder when unreadable, lacking a column of
        :data:`CHECK_COLUMNS`, or holding rows of another check)."""
        f = self._check_file("checks", check)
        df = read_parquet(f, "check table", columns=CHECK_COLUMNS)
        if len(df) and not (df["check"] == check).all():
            raise BadRunFolder(f"{f}: column 'check': holds rows of another check than {check}")
        return df

    def checks(self) -> pd.DataFrame:
        """The long table of all finished checks."""
        parts = [self.check_table(c) for c in self.finished_checks()]
        if parts:
            return pd.concat(parts, ignore_index=True)
        f = self.path / "checks.parquet"
        if f.exists():
            return read_parquet(f, "checks table", columns=CHECK_COLUMNS)
        return pd.DataFrame(columns=list(CHECK_COLUMNS))

    def samples(self, check: int) -> pd.DataFrame:
        f = self._check_file("samples", check)
        if not f.exists():
            raise BadRunFolder(f"{self.path}: no generated rows stored for check {check}")
        return read_parquet(f, "generated rows", columns=["synthetic_id"])

    def consolidate(self, row_frame: pd.DataFrame | None = None, row_long: pd.DataFrame | None = None) -> None:
        atomic_write_parquet(self.path / "checks.parquet", self.checks())
        if row_frame is not None:
            atomic_write_parquet(self.path / "rows.parquet", row_frame)
        if row_long is not None:
            atomic_write_parquet(self.path / "row_checks.parquet", row_long)

    # -- floor -------------------------------------------------------------------
    def write_floor(self, info: dict, rows: pd.DataFrame) -> None:
        """Store a floor: the per-row arrays first, then floor.json (its presence marks it complete)."""
        atomic_write_parquet(self.path / "floor_rows.parquet", rows)
        atomic_write_json(self.path / "floor.json", info)

    def write_holdout(self, holdout: Table) -> None:
        """Keep the hold-out's rows (holdout.parquet: the schema's columns, in its order)."""
        atomic_write_parquet(self.path / "holdout.parquet", holdout.data[list(holdout.schema.columns)]
                             .reset_index(drop=True))

    def holdout(self) -> Table | None:
        """The kept hold-out rows as a Table of the run's schema (source: the floor's source), or None
        for a run without them (no hold-out, or an older run)."""
        f = self.path / "holdout.parquet"
        if not f.exists():
            return None
        schema = self.read().schema
        df = read_parquet(f, "hold-out rows", columns=list(schema.columns))
        info = self.read_floor()
        return Table(df, schema, (info[0].get("holdout_source") if info else None) or str(f))

    def read_floor(self) -> tuple[dict, pd.DataFrame] | None:
        """(floor.json, floor_rows.parquet), or None for a run without a floor."""
        f, rows = self.path / "floor.json", self.path / "floor_rows.parquet"
        if not f.exists():
            return None
        info = read_json(f, "floor record")
        if not rows.exists():
            raise BadRunFolder(f"{self.path}: floor.json without floor_rows.parquet")
        return info, read_parquet(rows, "floor rows")

    # -- checkpoints -------------------------------------------------------------
    def save_checkpoint(self, state: dict) -> None:
        atomic_torch_save(self.path / "checkpoints" / "model.pt", state)

    def load_checkpoint(self, map_location="cpu") -> dict | None:
        import torch  # lazy: torch, an extra (train): a run's store is read without it

        f = self.path / "checkpoints" / "model.pt"
        if not f.exists():
            return None
        try:
            state = torch.load(f, map_location=map_location, weights_only=True)
        except Exception as exc:  # a refused pickle or a corrupt file
            raise BadRunFolder(f"{f}: unreadable checkpoint ({type(exc).__name__})") from None
        if not isinstance(state, dict) or not {"model", "check", "epoch"} <= set(state) \
                or not isinstance(state["check"], int) or not isinstance(state["epoch"], int):
            raise BadRunFolder(f"{f}: not a memviz checkpoint (expected model, check and epoch)")
        return state

    # -- cancellation --------------------------------------------------------------
    def request_cancel(self) -> None:
        atomic_write_text(self.path / CANCEL, time.strftime("%Y-%m-%dT%H:%M:%S"))

    def cancel_requested(self) -> bool:
        return (self.path / CANCEL).exists()

    def clear_cancel(self) -> None:
        (self.path / CANCEL).unlink(missing_ok=True)


RUN_COLUMNS = ["run_id", "path", "kind", "status", "created", "dataset", "n_rows", "checks", "final_mem_ratio",
               "preset", "device"]


def run_token(run_dir: str | Path) -> int:
    """Changes whenever the run writes its manifest: the key of whatever is computed from a run state
    (the dashboard's caches, the kept audit of :mod:`memviz.auditing.stored`); 0 if none."""
    try:
        return (Path(run_dir) / MANIFEST).stat().st_mtime_ns
    except OSError:
        return 0


def list_runs(root: str | Path) -> pd.DataFrame:
    """One row per run directory directly under ``root`` (one holding a manifest).

    A run whose manifest cannot be read is listed with status ``"unreadable: <reason>"`` and
    nothing else, so that one bad folder never hides (or breaks) the others. A ``running``
    run whose writer is gone is listed as ``interrupted`` (:meth:`RunStore.status`).
    """
    rows = []
    root = Path(root)
    if root.is_dir():
        for d in sorted(root.iterdir()):
            if not (d / MANIFEST).is_file() or d.is_symlink() or (d / MANIFEST).is_symlink():
                continue  # a link inside the root may point out of it: not listed
            store = RunStore(d)
            try:
                m = store.read()
            except BadRunFolder as exc:
                reason = str(exc).replace(f"{d}/", "").replace(f"{d}: ", "")
                rows.append({"run_id": d.name, "path": str(d), "status": f"unreadable: {reason}"})
                continue
            rows.append({"run_id": d.name, "path": str(d), "kind": m.raw.get("kind"), "status": store.status(m),
                         "created": m.created, "dataset": m.dataset, "n_rows": m.data.n_rows,
                         "checks": len(m.checks),
                         "final_mem_ratio": m.checks[-1].get("mem_ratio") if m.checks else None,
                         "preset": m.config.get("preset"), "device": m.device})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)
