"""Library side of the dashboard: everything a page needs, without Streamlit.

Pages are thin (widgets -> one call here or in :mod:`memviz.plots` -> render); the
functions here take and return plain values (tables, frozen dataclasses, bytes), so
they are unit-testable and cache-friendly: loaders of runs are keyed by the run
directory and :func:`run_token` (the manifest's modification time), so a finished run
is read once and a live run is re-read only when it has written something new.

Uploads are parsed as data only: CSV with :func:`memviz.data.read_csv_bytes`, Parquet
with pyarrow from memory; nothing is unpickled or evaluated.
"""
from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .data import SchemaWarning, Table, check_same_columns, infer_schema, read_csv_bytes, read_frame, \
    sample_data_dir, table_from_frame
from .errors import DataError, MemvizError, RunError
from .schema import KINDS, Schema

DATASETS_ENV = "MEMVIZ_DATASETS"
PARQUET_MAGIC = b"PAR1"
#: the defaults of the dashboard's warm-up: one click on the sample finishes in minutes on a CPU
UI_WARMUP_DEFAULTS = {"preset": "cpu-quick", "epochs": 60, "check_every": 5, "n_samples": None, "seed": 0}


# ====================================================================== datasets
@dataclass(frozen=True)
class DatasetChoice:
    """A table the Data page offers: the bundled sample or a shared benchmark folder."""

    key: str
    label: str
    folder: Path

    @property
    def has_test(self) -> bool:
        return (self.folder / "test.csv").exists()


def shared_datasets_dir() -> Path | None:
    """``$MEMVIZ_DATASETS``, else ``../shared/datasets`` next to the repository (None if absent)."""
    env = os.environ.get(DATASETS_ENV)
    folder = Path(env) if env else sample_data_dir().parent.parent / "shared" / "datasets"
    return folder if folder.is_dir() else None


def dataset_choices() -> list[DatasetChoice]:
    """The sample first, then every shared benchmark folder holding a train.csv."""
    out = [DatasetChoice("sample", "Bundled sample (UCI Adult)", sample_data_dir())]
    shared = shared_datasets_dir()
    if shared is not None:
        for d in sorted(shared.iterdir()):
            if (d / "train.csv").exists():
                out.append(DatasetChoice(f"shared:{d.name}", f"Benchmark: {d.name}", d))
    return out


def choice_by_key(key: str) -> DatasetChoice:
    for c in dataset_choices():
        if c.key == key:
            return c
    raise DataError(f"dataset {key!r}: not available here")


@dataclass(frozen=True)
class RawData:
    """A table as read, before the schema is applied (what the schema editor works on).

    ``test`` is the companion test file when the source has one; ``schema`` is the
    shipped schema (meta.json) or the inferred one; ``notes`` are inference warnings.
    """

    frame: pd.DataFrame
    test: pd.DataFrame | None
    schema: Schema
    source: str
    label: str
    notes: tuple[str, ...] = ()


def load_choice(choice: DatasetChoice | str) -> RawData:
    """Read a dataset folder: train.csv, test.csv when present, meta.json or an inferred schema."""
    if isinstance(choice, str):
        choice = choice_by_key(choice)
    frame = read_frame(choice.folder / "train.csv")
    test = read_frame(choice.folder / "test.csv") if choice.has_test else None
    meta = choice.folder / "meta.json"
    if meta.exists():
        schema, notes = Schema.load(meta), ()
        if not schema.name:
            schema = Schema.from_dict({**schema.to_dict(), "name": choice.folder.name})
    else:
        schema, notes = _infer(frame, None, str(choice.folder / "train.csv"))
    return RawData(frame, test, schema, str(choice.folder / "train.csv"), choice.label, notes)


def read_upload(name: str, raw: bytes) -> pd.DataFrame:
    """Parse an uploaded CSV or Parquet file (data only; one-line DataError on a bad file)."""
    if raw[:4] == PARQUET_MAGIC or name.lower().endswith((".parquet", ".pq")):
        if raw[:4] != PARQUET_MAGIC:
            raise DataError(f"{name}: not a Parquet file (no PAR1 magic bytes)")
        try:
            import pyarrow.parquet as pq

            df = pq.read_table(io.BytesIO(raw)).to_pandas()
        except Exception as exc:  # pyarrow raises many types
            raise DataError(f"{name}: not a readable Parquet file ({type(exc).__name__})") from None
        df.columns = [str(c) for c in df.columns]
        if df.columns.duplicated().any():
            dup = df.columns[df.columns.duplicated()][0]
            raise DataError(f"{name}: column {dup!r}: duplicate column name")
        if df.shape[1] == 0:
            raise DataError(f"{name}: the table has no columns")
        if len(df) == 0:
            raise DataError(f"{name}: the table has a header but no rows")
        return df.reset_index(drop=True)
    return read_csv_bytes(raw, name)


def _infer(frame: pd.DataFrame, target: str | None, source: str) -> tuple[Schema, tuple[str, ...]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)
        schema = infer_schema(frame, target=target, source=source)
    name = Path(source).stem
    schema = Schema.from_dict({**schema.to_dict(), "name": name})
    return schema, tuple(str(w.message) for w in caught if issubclass(w.category, SchemaWarning))


def raw_from_upload(name: str, raw: bytes, test_name: str | None = None, test_raw: bytes | None = None,
                    target: str | None = None) -> RawData:
    """An uploaded table (and optional test file) with an inferred schema.

    ``target`` defaults to a column named like a label (``income``, ``target``, ``label``,
    ``class``, ``y``) when there is one, else the last column with 2 to 20 distinct values.
    """
    frame = read_upload(name, raw)
    test = read_upload(test_name or "test", test_raw) if test_raw is not None else None
    if target is None:
        target = guess_target(frame)
    schema, notes = _infer(frame, target, name)
    return RawData(frame, test, schema, name, f"Upload: {name}", notes)


def guess_target(frame: pd.DataFrame) -> str | None:
    """A likely label column (see :func:`raw_from_upload`), or None."""
    names = {str(c).strip().lower(): c for c in frame.columns}
    for cand in ("target", "label", "class", "income", "y", "outcome"):
        if cand in names:
            return names[cand]
    for col in reversed(list(frame.columns)):
        k = frame[col].nunique(dropna=True)
        if 2 <= k <= 20:
            return col
    return None


# ================================================================ schema editing
def schema_editor_frame(schema: Schema, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per file column: column, kind (numerical | categorical | target | excluded),
    dtype, distinct values, missing share and an example value (for ``st.data_editor``)."""
    cols = list(frame.columns) if frame is not None else list(schema.columns) + list(schema.excluded)
    rows = []
    for c in cols:
        try:
            kind = schema.kind_of(c)
        except KeyError:
            kind = "excluded"
        row = {"column": c, "kind": kind}
        if frame is not None:
            s = frame[c]
            row.update({"dtype": str(s.dtype), "distinct": int(s.nunique(dropna=True)),
                        "missing %": round(100.0 * float(s.isna().mean()), 2),
                        "example": "" if s.dropna().empty else str(s.dropna().iloc[0])[:40]})
        rows.append(row)
    return pd.DataFrame(rows)


def target_task(series: pd.Series) -> str:
    """binary / multiclass / regression for a target column (as :func:`infer_schema` decides)."""
    return infer_schema(series.to_frame(), target=series.name).task


def apply_schema_edits(schema: Schema, edited: pd.DataFrame, frame: pd.DataFrame | None = None,
                       source: str = "schema editor") -> Schema:
    """The schema after the user's edits of :func:`schema_editor_frame` (kind column).

    Raises DataError naming the column: unknown kind, more than one target, or no
    feature column left.
    """
    kinds = dict(zip(edited["column"].astype(str), edited["kind"]))
    for col, kind in kinds.items():
        if kind not in KINDS:
            raise DataError(f"{source}: column {col!r}: unknown type {kind!r} (use {', '.join(KINDS)})")
    targets = [c for c, k in kinds.items() if k == "target"]
    if len(targets) > 1:
        raise DataError(f"{source}: column {targets[1]!r}: only one column can be the target "
                        f"(also {targets[0]!r})")
    num = [c for c, k in kinds.items() if k == "numerical"]
    cat = [c for c, k in kinds.items() if k == "categorical"]
    exc = [c for c, k in kinds.items() if k == "excluded"]
    if not num and not cat:
        raise DataError(f"{source}: no feature column left (mark at least one numerical or categorical)")
    target = targets[0] if targets else None
    task = "none"
    if target is not None:
        if target == schema.target:
            task = schema.task
        elif frame is not None and target in frame.columns:
            task = target_task(frame[target])
        else:
            task = "binary"
    return Schema(numerical=tuple(num), categorical=tuple(cat), target=target, task=task, excluded=tuple(exc),
                  name=schema.name, extra=dict(schema.extra))


def build_tables(raw: RawData, schema: Schema, split: str = "file", test_share: float = 0.25,
                 seed: int = 0) -> tuple[Table, Table | None]:
    """Validate the raw data against ``schema`` and pick the test split.

    split : ``"file"`` (the companion test file), ``"random"`` (hold out ``test_share`` of
        the rows, seeded; the training rows are renumbered 0..n-1 so that their row_id is
        their position, as in a warm-up run) or ``"none"``.
    """
    if split == "random":
        if not 0.0 < test_share < 0.9:
            raise DataError(f"test share {test_share}: choose between 0 and 0.9")
        rng = np.random.default_rng(seed)
        n = len(raw.frame)
        n_test = int(round(test_share * n))
        if n_test < 1 or n - n_test < 10:
            raise DataError(f"{raw.source}: {n} rows are too few to hold out {test_share:.0%} as a test split")
        perm = rng.permutation(n)
        test_pos, train_pos = np.sort(perm[:n_test]), np.sort(perm[n_test:])
        train = table_from_frame(raw.frame.iloc[train_pos].reset_index(drop=True), schema, source=raw.source)
        test = table_from_frame(raw.frame.iloc[test_pos].reset_index(drop=True), schema,
                                source=f"{raw.source} (held-out {test_share:.0%})", role="test")
        return train, test
    train = table_from_frame(raw.frame, schema, source=raw.source)
    if split == "file" and raw.test is not None:
        src = f"{raw.source} (test)"
        check_same_columns(train, raw.test, src)
        return train, table_from_frame(raw.test, schema, source=src, role="test")
    if split not in ("file", "none"):
        raise DataError(f"split {split!r}: use file, random or none")
    return train, None


def data_summary(train: Table, test: Table | None) -> dict:
    """Headline facts for the sidebar and the Data page."""
    s = train.schema
    out = {"rows": len(train), "test rows": len(test) if test is not None else 0,
           "numerical": len(s.numerical), "categorical": len(s.categorical), "target": s.target or "none",
           "task": s.task}
    if s.target_is_categorical:
        shares = train.data[s.target].astype(str).value_counts(normalize=True)
        out["classes"] = ", ".join(f"{k}: {v:.0%}" for k, v in shares.head(5).items())
    return out


# ========================================================================= runs
def run_token(run_dir: str | Path) -> int:
    """Changes whenever the run writes its manifest (cache key for live runs); 0 if none."""
    try:
        return (Path(run_dir) / "manifest.json").stat().st_mtime_ns
    except OSError:
        return 0


def runs_table(root: str | Path | None = None) -> pd.DataFrame:
    """Saved warm-up runs under the runs root, newest first, with a display label.

    The label holds only what never changes for a run (id, dataset): a picker showing it
    must find the same label on the next rerun (see ``pages/_ui.run_labels``).
    """
    from .jobs import runs_root
    from .store import list_runs

    df = list_runs(runs_root(root))
    df = df[df["kind"].fillna("warmup") == "warmup"].sort_values("created", ascending=False, kind="stable")
    df = df.assign(label=df["run_id"] + " · " + df["dataset"].astype(str))
    return df.reset_index(drop=True)


def same_table(view: "RunView", train: Table | None) -> bool:
    """Was this run trained on ``train`` (same rows, values and row_ids)?"""
    from .store import fingerprint
    return train is not None and view.manifest.get("data", {}).get("fingerprint") == fingerprint(train)


@dataclass(frozen=True, eq=False)
class RunView:
    """A warm-up run opened for display (read-only; share it across reruns and sessions)."""

    run_id: str
    path: Path
    manifest: dict
    result: object          # memviz.warmup.WarmupResult
    train: Table

    @property
    def dynamics(self):
        return self.result.dynamics

    @property
    def per_check(self) -> pd.DataFrame:
        return self.result.per_check

    @property
    def status(self) -> str:
        return self.manifest.get("status", "unknown")

    @property
    def epochs(self) -> list[int]:
        return [int(e) for e in self.dynamics.epochs]

    def settings(self) -> dict:
        """Flat settings for display and the report."""
        cfg = self.manifest.get("config", {})
        return {"run": self.run_id, "dataset": self.manifest.get("schema", {}).get("name") or
                self.manifest.get("data", {}).get("source"), "rows": self.manifest.get("data", {}).get("n_rows"),
                "preset": cfg.get("preset"), "epochs": cfg.get("epochs"), "check every": cfg.get("check_every"),
                "samples per check": cfg.get("n_samples"), "seed": cfg.get("seed"), "distance": cfg.get("distance"),
                "device": self.manifest.get("device"), "status": self.status,
                "seconds": (self.manifest.get("timings") or {}).get("total_seconds")}


def load_run(run_dir: str | Path) -> RunView:
    """Open a warm-up run with at least one finished check (RunError otherwise)."""
    from .store import RunStore
    from .warmup import load_warmup

    store = RunStore.open(run_dir)
    result = load_warmup(run_dir)
    return RunView(Path(run_dir).name, Path(run_dir), store.manifest(), result, store.train())


def most_copied_table(view: RunView, n: int = 20) -> pd.DataFrame:
    """The n most-copied training rows with their values (row_id first)."""
    from .leaks import most_copied

    top = most_copied(view.dynamics, n=n)
    vals = view.train.data.loc[top["row_id"].to_numpy(dtype=np.int64)].reset_index(drop=True)
    return pd.concat([top.reset_index(drop=True), vals], axis=1)


def check_inputs(view: RunView, check: int | None = None) -> tuple[int, pd.DataFrame | None, pd.DataFrame]:
    """(check, its generated rows or None when not stored, its long-table rows); default: last check."""
    checks = view.result.checks
    c = int(checks["check"].max()) if check is None else int(check)
    long = checks[checks["check"] == c].reset_index(drop=True)
    from .store import RunStore

    try:
        samples = RunStore(view.path).samples(c)
    except RunError:
        samples = None
    return c, samples, long


def column_leaks(view: RunView, check: int | None = None):
    """:func:`memviz.leaks.column_match_rates` at a check (default the last); None without stored rows."""
    from .leaks import column_match_rates

    c, samples, long = check_inputs(view, check)
    if samples is None:
        return None
    return column_match_rates(view.train, samples, long)


@dataclass(frozen=True, eq=False)
class PrunePreview:
    """What DynamicCut at (p, k, T) would remove from the run's training table."""

    selection: object        # memviz.dynamiccut.Selection
    removed: pd.DataFrame    # rank, row_id, score, then the row's values
    n_rows: int

    @property
    def n_remove(self) -> int:
        return int(self.selection.n_remove)


def prune_preview(view: RunView, p: float, k: int, T: int | None) -> PrunePreview:
    """Rescore the run (milliseconds) and list the rows that would go, best-scored first."""
    from .dynamiccut import dynamiccut_selection

    sel = dynamiccut_selection(view.dynamics, p=p, k=k, T=T)
    frame = sel.to_frame()
    gone = frame[frame["removed"]].drop(columns="removed")
    vals = view.train.data.loc[gone["row_id"].to_numpy(dtype=np.int64)].reset_index(drop=True)
    removed = pd.concat([gone[["rank", "row_id", "score"]].reset_index(drop=True), vals], axis=1)
    return PrunePreview(sel, removed, view.dynamics.n_rows)


def pruned_csv(view: RunView, removed_ids, keep_row_id: bool = True) -> bytes:
    """The training table without ``removed_ids`` as CSV bytes (row_id kept as first column)."""
    pruned = view.train.drop(removed_ids)
    frame = pruned.data.reset_index() if keep_row_id else pruned.data.reset_index(drop=True)
    return frame.to_csv(index=False).encode("utf-8")


# ==================================================================== comparisons
DETAILS = "details"


@dataclass(frozen=True, eq=False)
class CompareView:
    """A comparison's results directory: results.csv (possibly partial) and, once computed
    by :func:`compute_compare_details`, the per-column Shape scores and the DCR values.

    Attributes
    ----------
    results : one row per finished cell (memviz.experiment.COLUMNS).
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


def compare_token(out_dir: str | Path) -> int:
    """Changes when results.csv or the details change (cache key)."""
    out_dir = Path(out_dir)
    t = 0
    for f in (out_dir / "results.csv", out_dir / DETAILS / "column_shapes.csv", out_dir / DETAILS / "dcr.parquet"):
        try:
            t = max(t, f.stat().st_mtime_ns)
        except OSError:
            pass
    return t


def load_compare(out_dir: str | Path) -> CompareView:
    """Read a comparison's results (RunError when it has no results.csv yet) and its details."""
    out_dir = Path(out_dir)
    f = out_dir / "results.csv"
    if not f.exists():
        raise RunError(f"{out_dir}: no results.csv yet")
    shapes = out_dir / DETAILS / "column_shapes.csv"
    dcr = out_dir / DETAILS / "dcr.parquet"
    return CompareView(out_dir, pd.read_csv(f), pd.read_csv(shapes) if shapes.exists() else None,
                       pd.read_parquet(dcr) if dcr.exists() else None)


def details_done(out_dir: str | Path) -> bool:
    return (Path(out_dir) / DETAILS / "dcr.parquet").exists()


def compute_compare_details(out_dir: str | Path, train: Table, test: Table | None, device: str = "auto") -> dict:
    """Per-column Shape scores and DCR values of every synthetic table of a comparison.

    For each finished cell with a stored synthetic table (``synthetic/{method}_{model}_{seed}.parquet``):
    :func:`memviz.evaluate.quality` against ``train`` gives the column shapes (KS / TV
    complement per column) and :func:`memviz.evaluate.dcr_share` against ``train`` and
    ``test`` gives DCR_train(g) = min_x d(g, x) per generated row (standardized distance,
    balanced references, seeded with the cell's seed). Written to ``OUT/details/`` (atomic);
    heavy (torch, SDMetrics): run it in a background job, not in the dashboard.
    """
    from .evaluate import dcr_share, quality
    from .store import atomic_write_csv, atomic_write_parquet

    out_dir = Path(out_dir)
    view = load_compare(out_dir)
    shapes, dcrs = [], []
    for _, r in view.ok.iterrows():
        syn_path = r.get("synthetic")
        if not isinstance(syn_path, str) or not (out_dir / syn_path).exists():
            continue
        syn = pd.read_parquet(out_dir / syn_path)
        key = {"method": r["method"], "model": r["model"], "seed": int(r["seed"])}
        q = quality(train, syn)
        cs = q.column_shapes
        shapes.append(pd.DataFrame({**key, "column": cs["column"].to_numpy(),
                                    "metric": cs["metric"].to_numpy() if "metric" in cs else "",
                                    "score": cs["score"].to_numpy(dtype=float)}))
        if test is not None:
            d = dcr_share(train, test, syn, device=device, seed=int(r["seed"]))
            dcrs.append(pd.DataFrame({**key, "dcr_train": d.dcr_train, "dcr_test": d.dcr_test}))
    shapes_df = pd.concat(shapes, ignore_index=True) if shapes else pd.DataFrame(
        columns=["method", "model", "seed", "column", "metric", "score"])
    dcr_df = pd.concat(dcrs, ignore_index=True) if dcrs else pd.DataFrame(
        columns=["method", "model", "seed", "dcr_train", "dcr_test"])
    atomic_write_csv(out_dir / DETAILS / "column_shapes.csv", shapes_df)
    atomic_write_parquet(out_dir / DETAILS / "dcr.parquet", dcr_df)
    return {"out": str(out_dir), "cells": len(shapes), "dcr_cells": len(dcrs)}


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


# ======================================================================== report
def report_figures(view: RunView | None, compare: CompareView | None = None, p: float = 0.10, k: int = 3,
                   T: int | None = None) -> list:
    """The figures of the report: the run's memorization and dynamics, DynamicCut at (p, k, T),
    and the comparison's when given."""
    from . import plots
    from .dynamiccut import dynamiccut_selection, early_identification_curve

    figs = []
    if view is not None:
        dyn = view.dynamics
        figs += [plots.copies_histogram(dyn), plots.concentration_plot(dyn), plots.check_curves(view.per_check),
                 plots.first_epoch_plot(dyn), plots.forgetting_plot(dyn), plots.group_band_plot(dyn, "mem_auc")]
        sel = dynamiccut_selection(dyn, p=p, k=k, T=T)
        figs += [plots.early_identification_plot(early_identification_curve(dyn, p=p, k=k)),
                 plots.class_balance_plot(view.train, sel.removed)]
    if compare is not None and len(compare.ok):
        res = compare.ok
        figs += [plots.comparison_plot(res, "mem_ratio"), plots.privacy_utility_plot(res, "mle")]
        if {"dynamiccut", "random"} & set(res["method"]):
            figs.append(plots.transferability_plot(res))
        if compare.column_shapes is not None and len(compare.models):
            figs.append(plots.shape_breakdown_plot(compare.shapes_for(compare.models[0])))
        if compare.dcr is not None and len(compare.models):
            figs.append(plots.dcr_plot(compare.dcr_for(compare.models[0])))
    return figs


def report_html(view: RunView | None, compare: CompareView | None = None, *, p: float = 0.10, k: int = 3,
                T: int | None = None, redacted: bool = True, n_leaks: int = 3) -> str:
    """The self-contained HTML report (:func:`memviz.report.build_report`) of a run and a comparison."""
    from .dynamics import summarize
    from .leaks import copies_of, most_copied
    from .report import build_report

    if view is None and compare is None:
        raise MemvizError("nothing to report: open a warm-up run or a comparison first")
    summary, settings, leak_views = {}, {}, []
    if view is not None:
        summary = {"run": view.run_id, **summarize(view.dynamics).to_dict()}
        settings = dict(view.settings())
        settings.update({"DynamicCut p": p, "DynamicCut k": k, "DynamicCut T": T if T is not None else "default"})
        if view.path is not None and n_leaks:
            for rid in most_copied(view.dynamics, n=n_leaks)["row_id"]:
                try:
                    leak_views.append(copies_of(view.result, int(rid), limit=5, checks=view.result.checks,
                                                train=view.train))
                except MemvizError:
                    break
    if compare is not None:
        settings["comparison"] = str(compare.path.name)
    title = f"memviz report · {view.run_id}" if view is not None else f"memviz report · {compare.path.name}"
    return build_report(summary, report_figures(view, compare, p, k, T), compare.results if compare else None,
                        settings, redacted=redacted, title=title, leaks=leak_views)


def table_csv(path: str | Path) -> bytes:
    """An output table (CSV or Parquet) as CSV bytes."""
    return read_frame(path).to_csv(index=False).encode("utf-8")


__all__ = ["DatasetChoice", "RawData", "RunView", "PrunePreview", "CompareView", "UI_WARMUP_DEFAULTS",
           "dataset_choices", "choice_by_key", "load_choice", "read_upload", "raw_from_upload", "guess_target",
           "schema_editor_frame", "apply_schema_edits", "build_tables", "data_summary", "run_token", "runs_table",
           "load_run", "most_copied_table", "check_inputs", "column_leaks", "prune_preview", "pruned_csv",
           "load_compare", "compare_token", "details_done", "compute_compare_details", "compare_outputs",
           "synthetic_files", "report_figures", "report_html", "table_csv", "file_bytes"]
