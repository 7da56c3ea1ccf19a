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
    floor.json             the floor of the training rows (:mod:`memviz.floor`), when the run
                           was given a hold-out; absent otherwise (and in older runs)
    floor_rows.parquet     its per-row arrays: row_id, hits, nn1, auc

Every file is written to a temporary name in the same folder and renamed, so a killed
run never leaves a half-written file. Opening a run reads JSON and Parquet, and loads
checkpoints with ``torch.load(weights_only=True)``: nothing is unpickled.
"""
from __future__ import annotations

import hashlib
import json
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .data import ROW_ID, Table
from .errors import RunError
from .io import (atomic_torch_save, atomic_write_json, atomic_write_parquet, atomic_write_text, read_json,
                 read_parquet, to_jsonable)
from .schema import Schema

FORMAT = "memviz.run/1"
MANIFEST = "manifest.json"
CANCEL = "CANCEL"
STATUSES = ("running", "finished", "cancelled", "failed")


# ------------------------------------------------------------------- helpers
def fingerprint(table: Table) -> str:
    """sha256 of the table's values and row_ids (order-sensitive), hex."""
    h = pd.util.hash_pandas_object(table.data, index=True).to_numpy()
    return hashlib.sha256(h.tobytes() + ",".join(table.data.columns).encode()).hexdigest()


def versions() -> dict:
    import sklearn
    import torch

    from . import __version__
    return {"memviz": __version__, "python": platform.python_version(), "torch": torch.__version__,
            "numpy": np.__version__, "pandas": pd.__version__, "scikit-learn": sklearn.__version__}


def table_to_frame(table: Table) -> pd.DataFrame:
    """The table with its row_id as the first column (for Parquet/CSV)."""
    return table.data.reset_index()


# ------------------------------------------------------------------- the run
class RunStore:
    """Read and write one run directory."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    # -- creation ------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, train: Table, config: dict, *, kind: str = "warmup",
               device: str = "cpu") -> "RunStore":
        store = cls(path)
        if (store.path / MANIFEST).exists():
            raise RunError(f"{store.path}: a run already exists here (use --resume, or another --out)")
        if store.path.exists() and any(store.path.iterdir()):
            raise RunError(f"{store.path}: folder is not empty and holds no run")
        store.path.mkdir(parents=True, exist_ok=True)
        atomic_write_parquet(store.path / "train.parquet", table_to_frame(train))
        manifest = {
            "format": FORMAT, "kind": kind, "run_id": store.path.name,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "status": "running",
            "config": config, "seed": config.get("seed"), "schema": train.schema.to_dict(),
            "data": {"source": train.source, "fingerprint": fingerprint(train), "n_rows": len(train)},
            "versions": versions(), "device": device, "timings": {}, "checks": [], "progress": {},
        }
        store.write_manifest(manifest)
        return store

    @classmethod
    def open(cls, path: str | Path) -> "RunStore":
        store = cls(path)
        store.manifest()  # validates
        return store

    # -- manifest --------------------------------------------------------------
    def manifest(self) -> dict:
        f = self.path / MANIFEST
        if not f.exists():
            raise RunError(f"{self.path}: not a memviz run (no {MANIFEST})")
        try:
            m = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RunError(f"{f}: manifest is not valid JSON") from None
        if not isinstance(m, dict) or m.get("format") != FORMAT:
            raise RunError(f"{f}: not a {FORMAT} manifest")
        return m

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
        return Schema.from_dict(self.manifest()["schema"], source=str(self.path / MANIFEST))

    # -- tables ----------------------------------------------------------------
    def train(self) -> Table:
        f = self.path / "train.parquet"
        if not f.exists():
            raise RunError(f"{self.path}: the run has no train.parquet")
        df = pd.read_parquet(f).set_index(ROW_ID)
        df.index = df.index.astype(np.int64)
        m = self.manifest()
        return Table(df, self.schema, m.get("data", {}).get("source", str(f)))

    def _check_file(self, folder: str, check: int) -> Path:
        return self.path / folder / f"check_{int(check):04d}.parquet"

    def write_check(self, check: int, long: pd.DataFrame, samples: pd.DataFrame | None) -> None:
        """Store one finished check: the samples first, then the long table (its presence marks the check done)."""
        if samples is not None:
            atomic_write_parquet(self._check_file("samples", check), samples)
        atomic_write_parquet(self._check_file("checks", check), long)

    def finished_checks(self) -> list[int]:
        folder = self.path / "checks"
        if not folder.exists():
            return []
        return sorted(int(p.stem.split("_")[1]) for p in folder.glob("check_*.parquet"))

    def drop_checks_after(self, check: int) -> None:
        """Forget checks newer than ``check`` (they are redone identically on resume)."""
        for c in self.finished_checks():
            if c > check:
                for folder in ("checks", "samples"):
                    self._check_file(folder, c).unlink(missing_ok=True)

    def checks(self) -> pd.DataFrame:
        """The long table of all finished checks."""
        parts = [pd.read_parquet(self._check_file("checks", c)) for c in self.finished_checks()]
        if parts:
            return pd.concat(parts, ignore_index=True)
        f = self.path / "checks.parquet"
        if f.exists():
            return pd.read_parquet(f)
        return pd.DataFrame(columns=["check", "epoch", "synthetic_id", "nn1", "nn2", "d1", "d2", "ratio", "memorized"])

    def samples(self, check: int) -> pd.DataFrame:
        f = self._check_file("samples", check)
        if not f.exists():
            raise RunError(f"{self.path}: no generated rows stored for check {check}")
        return pd.read_parquet(f)

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

    def read_floor(self) -> tuple[dict, pd.DataFrame] | None:
        """(floor.json, floor_rows.parquet), or None for a run without a floor."""
        f, rows = self.path / "floor.json", self.path / "floor_rows.parquet"
        if not f.exists():
            return None
        info = read_json(f, "floor record")
        if not rows.exists():
            raise RunError(f"{self.path}: floor.json without floor_rows.parquet")
        return info, read_parquet(rows, "floor rows")

    # -- checkpoints -------------------------------------------------------------
    def save_checkpoint(self, state: dict) -> None:
        atomic_torch_save(self.path / "checkpoints" / "model.pt", state)

    def load_checkpoint(self, map_location="cpu") -> dict | None:
        import torch

        f = self.path / "checkpoints" / "model.pt"
        if not f.exists():
            return None
        try:
            return torch.load(f, map_location=map_location, weights_only=True)
        except Exception as exc:  # a refused pickle or a corrupt file
            raise RunError(f"{f}: unreadable checkpoint ({type(exc).__name__})") from None

    # -- cancellation --------------------------------------------------------------
    def request_cancel(self) -> None:
        atomic_write_text(self.path / CANCEL, time.strftime("%Y-%m-%dT%H:%M:%S"))

    def cancel_requested(self) -> bool:
        return (self.path / CANCEL).exists()

    def clear_cancel(self) -> None:
        (self.path / CANCEL).unlink(missing_ok=True)


def list_runs(root: str | Path) -> pd.DataFrame:
    """One row per run directory directly under ``root`` (unreadable ones are skipped)."""
    rows = []
    root = Path(root)
    if root.exists():
        for d in sorted(root.iterdir()):
            if not (d / MANIFEST).exists():
                continue
            try:
                m = RunStore(d).manifest()
            except RunError:
                continue
            checks = m.get("checks", [])
            rows.append({"run_id": d.name, "path": str(d), "kind": m.get("kind"), "status": m.get("status"),
                         "created": m.get("created"), "dataset": m.get("schema", {}).get("name") or m["data"].get("source"),
                         "n_rows": m["data"].get("n_rows"), "checks": len(checks),
                         "final_mem_ratio": checks[-1]["mem_ratio"] if checks else None,
                         "preset": m.get("config", {}).get("preset"), "device": m.get("device")})
    return pd.DataFrame(rows, columns=["run_id", "path", "kind", "status", "created", "dataset", "n_rows",
                                       "checks", "final_mem_ratio", "preset", "device"])
