"""Comparisons as the dashboard shows them: results, details, downloadable files."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.compare import METHODS, summary_table  # noqa: F401  (the pages' registry and summary)
from memviz.compare.details import (
    details_done,
    details_files,
    read_details,
    read_results,
)
from memviz.errors import DataError, MemvizError
from memviz.io import read_json
from memviz.measure.floor import Floor
from memviz.metrics import METRICS
from memviz.models import MODELS  # noqa: F401


@dataclass(frozen=True, eq=False)
class CompareView:
    """A comparison's results directory: results.csv (possibly partial) and, once computed
    by :func:`memviz.compare.details.compute_details`, the per-column Shape scores and the DCR values.

    Attributes
    ----------
    results : one row per finished cell (:data:`memviz.compare.results.COLUMNS`).
    column_shapes : DataFrame ``method, model, seed, column, metric, score`` or None.
    dcr : DataFrame ``method, model, seed, dcr_train, dcr_test`` (one row per generated row) or None.
    """

    path: Path
    results: pd.DataFrame
    column_shapes: pd.DataFrame | None = None
    dcr: pd.DataFrame | None = None

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(self.results["method"])) if "method" in self.results else []

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.results["model"])) if "model" in self.results else []

    @property
    def ok(self) -> pd.DataFrame:
        """The finished cells (status ok)."""
        r = self.results
        return r[r["status"] == "ok"] if "status" in r else r

    def shapes_for(self, model: str) -> pd.DataFrame | None:
        """``method, column, score`` of one model (seeds averaged by the plot)."""
        if self.column_shapes is None:
            return None
        cs = self.column_shapes
        return cs[cs["model"] == model][["method", "column", "score"]]

    def dcr_for(self, model: str, seed: int | None = None) -> dict[str, np.ndarray]:
        """method -> distances to the closest training row of one model's generated rows."""
        if self.dcr is None:
            return {}
        d = self.dcr[self.dcr["model"] == model]
        if seed is not None:
            d = d[d["seed"] == seed]
        return {m: g["dcr_train"].to_numpy(dtype=np.float64) for m, g in d.groupby("method", sort=False)}


def dcr_reference(view: "CompareView", model: str) -> np.ndarray | None:
    """The DCR plot's hold-out reference: the baseline's generated rows' distances to the closest
    real test row (``dcr_test``), or None when the details hold none."""
    if view.dcr is None or "dcr_test" not in view.dcr.columns:
        return None
    d = view.dcr[(view.dcr["model"] == model) & (view.dcr["method"] == "baseline")]
    return d["dcr_test"].to_numpy(dtype=np.float64) if len(d) else None


def compare_token(out_dir: str | Path) -> int:
    """Changes when results.csv or the details change (cache key)."""
    t = 0
    for f in details_files(out_dir):
        try:
            t = max(t, f.stat().st_mtime_ns)
        except OSError:
            pass
    return t


def metric_name(key: str) -> str:
    """A results column's name in words (:mod:`memviz.metrics`), or the key itself."""
    m = METRICS.get(key)
    return m.name if m is not None else key


def load_compare(out_dir: str | Path) -> CompareView:
    """Read a comparison's results (RunError when it has no results.csv yet) and its details."""
    out_dir = Path(out_dir)
    shapes, dcr = read_details(out_dir)
    return CompareView(out_dir, read_results(out_dir), shapes, dcr)


def run_floor(compare: CompareView, view) -> Floor | None:
    """The floor of the warm-up ``view`` (a :class:`memviz.app.runs.RunView`) when ``compare`` ranked
    its rows with that warm-up, so measured memorization against the same training rows, with
    the same distance; None otherwise (or when the warm-up has no floor).

    For results written before comparisons stored their own floor columns.
    """
    floor = getattr(getattr(view, "result", None), "floor", None)
    if floor is None:
        return None
    from memviz.jobs.control import job_for

    try:
        config = (read_json(job_for(compare.path).spec_path, "job spec").get("config") or {})
    except (MemvizError, OSError, AttributeError):
        return None
    same_run = config.get("run_dir") and Path(str(config["run_dir"])).resolve() == Path(view.path).resolve()
    same_distance = str(config.get("distance") or "paper") == floor.distance
    return floor if same_run and same_distance else None


def compare_outputs(out_dir: str | Path) -> dict[str, Path]:
    """Downloadable files of a comparison: results CSV and every synthetic table (by relative name)."""
    out_dir = Path(out_dir)
    files = {}
    if out_dir.is_dir():
        for p in sorted(out_dir.rglob("*")):
            if p.is_file() and p.suffix.lower() in (".csv", ".parquet", ".json") and not p.name.startswith("."):
                files[str(p.relative_to(out_dir))] = p
    return files


def synthetic_files(out_dir: str | Path) -> dict[str, Path]:
    """The synthetic tables written by a comparison (files whose path mentions 'synthetic')."""
    return {k: v for k, v in compare_outputs(out_dir).items() if "synth" in k.lower()}


def file_bytes(path: str | Path, limit: int = 200 * 2 ** 20) -> bytes:
    """The bytes of an output file for a download button (DataError when it is too large)."""
    p = Path(path)
    if p.stat().st_size > limit:
        raise DataError(f"{p.name}: {p.stat().st_size / 2**20:.0f} MB is too large to download from the browser")
    return p.read_bytes()


__all__ = ["METHODS", "MODELS", "METRICS", "metric_name", "summary_table", "CompareView", "compare_token", "load_compare", "details_done",
           "run_floor", "compare_outputs", "synthetic_files", "file_bytes"]
