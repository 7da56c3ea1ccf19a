"""Warm-up runs as the dashboard shows them: listing, opening, the leak explorer's inputs, pruning.

Loaders are keyed by the run directory and :func:`run_token` (the manifest's modification
time), so a finished run is read once and a live run is re-read only when it has written
something new.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.dynamics.dynamiccut import (
    DEFAULTS,
    DynamicCutParams,
    Ranking,
    Selection,
    dynamiccut_ranking,
    dynamiccut_rankings,
    dynamiccut_selection,
    early_identification_curve,
)
from memviz.dynamics.summaries import concentration, heavy_tail
from memviz.errors import BadRunFolder, MemvizError
from memviz.io import atomic_write_json, csv_bytes, read_json
from memviz.jobs.control import job_for, runs_root
from memviz.leaks.columns import run_column_match_rates
from memviz.leaks.rows import LeakView, copies_of, most_copied, style_matches
from memviz.tables.data import Table, fingerprint, load_companion
from memviz.tables.redact import redact
from memviz.warmup.run import WarmupConfig, WarmupResult, load_warmup
from memviz.warmup.store import RunStore, list_runs, run_token  # noqa: F401  (run_token: the pages' cache key)

#: the dashboard's own choices for its warm-up form, the only values it does not take from
#: :class:`memviz.warmup.run.WarmupConfig`: fewer epochs (one click on the sample finishes in minutes on
#: a CPU) with a check every 5 of them (12 checks)
UI_WARMUP_OVERRIDES = {"epochs": 60, "check_every": 5}
#: the warm-up form's defaults: WarmupConfig's (preset, n_samples, seed) with :data:`UI_WARMUP_OVERRIDES`
UI_WARMUP_DEFAULTS = {**{k: getattr(WarmupConfig(), k) for k in ("preset", "epochs", "check_every", "n_samples",
                                                                   "seed")}, **UI_WARMUP_OVERRIDES}


def runs_table(root: str | Path | None = None) -> pd.DataFrame:
    """Saved warm-up runs under the runs root, newest first, with a display label.

    The label holds only what never changes for a run (id, dataset): a picker showing it
    must find the same label on the next rerun (see ``screens/_ui.run_labels``). A folder whose
    manifest cannot be read is listed last, labelled ``unreadable``, with the reason in its
    status (:func:`memviz.warmup.store.list_runs`); opening it gives that BadRunFolder line.
    """
    df = list_runs(runs_root(root))
    df = df[df["kind"].fillna("warmup") == "warmup"].sort_values("created", ascending=False, kind="stable",
                                                                  na_position="last")
    dataset = df["dataset"].where(df["dataset"].notna(), "unreadable").astype(str)
    df = df.assign(label=df["run_id"] + " · " + dataset)
    return df.reset_index(drop=True)


def same_table(view: "RunView", train: Table | None) -> bool:
    """Was this run trained on ``train`` (same rows, values and row_ids)?"""
    return train is not None and (view.manifest.get("data") or {}).get("fingerprint") == fingerprint(train)


@dataclass(frozen=True, eq=False)
class RunView:
    """A warm-up run opened for display (read-only; share it across reruns and sessions)."""

    run_id: str
    path: Path
    manifest: dict
    result: WarmupResult
    train: Table

    @property
    def dynamics(self):
        return self.result.dynamics

    @property
    def per_check(self) -> pd.DataFrame:
        return self.result.per_check

    @property
    def status(self) -> str:
        """The run's status as read (``interrupted`` when it says running but its writer is gone)."""
        return self.result.status

    @property
    def epochs(self) -> list[int]:
        return [int(e) for e in self.dynamics.epochs]

    def settings(self) -> dict:
        """Flat settings for display and the report."""
        cfg = self.manifest.get("config") or {}
        data = self.manifest.get("data") or {}
        return {"run": self.run_id, "dataset": (self.manifest.get("schema") or {}).get("name") or data.get("source"),
                "rows": data.get("n_rows"), "preset": cfg.get("preset"), "epochs": cfg.get("epochs"),
                "check every": cfg.get("check_every"), "samples per check": cfg.get("n_samples"),
                "seed": cfg.get("seed"), "distance": cfg.get("distance"), "device": self.manifest.get("device"),
                "status": self.status, "seconds": (self.manifest.get("timings") or {}).get("total_seconds")}


def load_run(run_dir: str | Path) -> RunView:
    """Open a warm-up run with at least one finished check (BadRunFolder otherwise)."""
    store = RunStore.open(run_dir)  # the manifest parsed once, train.parquet read once, for all below
    result = load_warmup(store)
    return RunView(Path(run_dir).name, Path(run_dir), store.manifest(), result, store.train())


#: the pages' range of p (Tune & prune's slider, Compare's field): (lowest, highest, step)
P_RANGE = (0.01, 0.50, 0.01)


def ui_p(p: float) -> float:
    """``p`` rounded to the pages' step and bounded to :data:`P_RANGE` (what their p widgets can show)."""
    lo, hi, _ = P_RANGE
    return min(hi, max(lo, round(float(p), 2)))


@dataclass(frozen=True)
class PruneParams:
    """DynamicCut's (p, k, T) as tuned on the Tune & prune page for one run (T None: default).

    Checked once, when made: ``dc`` is the :class:`memviz.dynamics.dynamiccut.DynamicCutParams` every
    function below takes (nothing checks p, k or T again); a bad value is its one-line MemvizError.
    """

    run_id: str | None = None
    p: float = DEFAULTS.p
    k: int = DEFAULTS.k
    T: int | None = None
    dc: DynamicCutParams = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        dc = DEFAULTS if (self.p, self.k, self.T) == (DEFAULTS.p, DEFAULTS.k, DEFAULTS.T) \
            else DynamicCutParams(self.p, self.k, self.T)
        for name in ("p", "k", "T"):
            object.__setattr__(self, name, getattr(dc, name))
        object.__setattr__(self, "dc", dc)

    def to_dict(self) -> dict:
        """The form kept in the session and with the run (``tuning.json``)."""
        return {"run": self.run_id, "p": self.p, "k": self.k, "T": self.T}

    def to_query(self) -> dict:
        """The form kept in the page's address (T set: the Tune page always has one)."""
        return {"p": f"{self.p:.2f}", "k": str(int(self.k)), "T": str(int(self.T))}


TUNING = "tuning.json"
COLUMN_ORDER = "columns.json"   # in the job's folder: the training file's column order


def run_form_settings(run_dir: str | Path | None) -> dict:
    """The Warm-up form's fields as the run at ``run_dir`` was started ({} without a readable run):
    preset, epochs, check_every, n_samples (0 = as many as training rows) and seed."""
    if not run_dir:
        return {}
    try:
        cfg = RunStore(run_dir).manifest().get("config") or {}
    except (MemvizError, OSError, AttributeError):
        return {}
    out = {k: cfg.get(k) for k in ("preset", "epochs", "check_every", "n_samples", "seed")}
    out["n_samples"] = int(out["n_samples"] or 0)
    return {k: v for k, v in out.items() if v is not None}


def save_column_order(run_dir: str | Path, columns) -> None:
    """Keep the user's column order of the table a dashboard warm-up trains on (the run's own
    copy is in schema order), so its downloads come back in the user's order."""
    job = job_for(run_dir)
    if job.job_dir.is_dir():
        atomic_write_json(job.job_dir / COLUMN_ORDER, {"columns": [str(c) for c in columns]})


def column_order(run_dir: str | Path) -> list[str]:
    """The user's column order kept by :func:`save_column_order` ([] when none)."""
    try:
        cols = read_json(job_for(run_dir).job_dir / COLUMN_ORDER, "column order").get("columns")
    except (MemvizError, OSError):
        return []
    return [str(c) for c in cols] if isinstance(cols, list) else []


def run_tables(run_dir: str | Path) -> tuple[Table, Table | None, str]:
    """(train, hold-out or None, label) of the table a run was trained on, read from the run itself.

    The training rows are the run's own copy (``train.parquet`` in the run folder); the hold-out
    is the one its job measured the floor on (the job's ``holdout.parquet``), when it is still there.
    """
    store = RunStore.open(run_dir)
    train = store.train()
    m = store.manifest()
    label = str((m.get("schema") or {}).get("name") or (m.get("data") or {}).get("source") or Path(run_dir).name)
    holdout = None
    try:
        spec = read_json(job_for(run_dir).spec_path, "job spec")
        path = (spec.get("paths") or {}).get("holdout")
        if path and Path(path).is_file():
            holdout = load_companion(train, path, role="test", row_id_column=(spec.get("paths") or {}).get("row_id"))
    except (MemvizError, OSError, AttributeError):
        holdout = None
    return train, holdout, label


def checks_until(view: "RunView", T: int | None) -> int:
    """How many checks lie at or before epoch T (all of them for T None): k's upper bound."""
    if T is None:
        return int(view.dynamics.n_checks)
    return int(sum(1 for e in view.epochs if e <= int(T)))


def bounded_k(view: "RunView", k: int, T: int | None) -> tuple[int, str]:
    """``k`` clipped to the checks at or before T, and the one-line reason when it was ("" if not)."""
    n = max(1, checks_until(view, T))
    if int(k) <= n:
        return max(1, int(k)), ""
    return n, (f"k = {int(k)} is more than the {n} check{'s' * (n != 1)} at or before T = {int(T) if T is not None else '–'}: "
               f"k is {n} (DynamicCut averages a row's k largest checks up to T).")


def save_tuning(view: "RunView", params: PruneParams) -> None:
    """Keep (p, k, T) with the run (``RUN/tuning.json``), so a reload or another tab finds them."""
    try:
        atomic_write_json(Path(view.path) / TUNING, params.to_dict())
    except OSError:
        pass  # a read-only runs folder: the URL still carries them


def saved_tuning(view: "RunView") -> dict | None:
    """The (p, k, T) kept with the run ({"run", "p", "k", "T"}), or None."""
    try:
        d = read_json(Path(view.path) / TUNING, "tuning")
    except (MemvizError, OSError):
        return None
    return d if isinstance(d, dict) and d.get("run") == view.run_id else None


def saved_prune_params(saved: dict | None, run_id: str | None) -> PruneParams:
    """The (p, k, T) tuned for ``run_id``, or the defaults when ``saved`` belongs to another run.

    ``saved`` is what the Tune & prune page stored (:meth:`PruneParams.to_dict`, or the strings of
    :meth:`PruneParams.to_query`); p, k and T tuned on one run say nothing about another one's checks.
    The one place they are parsed.
    """
    if not saved or run_id is None or saved.get("run") != run_id:
        return PruneParams(run_id)
    T = saved.get("T")
    try:
        return PruneParams(run_id, float(saved.get("p", DEFAULTS.p)), int(saved.get("k", DEFAULTS.k)),
                           None if T in (None, "") else int(T))
    except (TypeError, ValueError, MemvizError):  # a hand-edited URL or file: the defaults
        return PruneParams(run_id)


def current_tuning(session: dict | None, view: "RunView | None") -> PruneParams:
    """The (p, k, T) in force for ``view``: this session's (Tune & prune's sliders, when they were set on
    this run), else the ones kept with the run (:func:`saved_tuning`: a reload, another tab), else the
    defaults. Every page that uses p, k or T reads them here, so none pairs a run with another's."""
    run_id = view.run_id if view is not None else None
    if view is not None and (not session or session.get("run") != run_id):
        session = saved_tuning(view)
    return saved_prune_params(session, run_id)


def most_copied_table(view: RunView, n: int = 20) -> pd.DataFrame:
    """The n most-copied training rows with their values (row_id first)."""
    top = most_copied(view.dynamics, n=n)
    vals = view.train.data.loc[top["row_id"].to_numpy(dtype=np.int64)].reset_index(drop=True)
    return pd.concat([top.reset_index(drop=True), vals], axis=1)


def copy_spread(view: RunView) -> dict:
    """How copies spread over training rows, for the page's cards: Mem-AUC aside, the share of
    all copies held by the top 1 % of rows, the share never copied and the most copies of one row."""
    ht = heavy_tail(view.dynamics)
    return {"top1_share": concentration(view.dynamics, 0.01), "zero_share": ht.zero_share,
            "max_count": ht.max_count}


# ------------------------------------------------------------------ rows named as the user knows them
def named_rows(train: Table, frame: pd.DataFrame, *, redacted: bool = False, column: str = "row_id") -> pd.DataFrame:
    """``frame`` (whose ``column`` holds training row_ids) for a reader: the user's key in place of memviz's row_id,
    under the key's own name (hashed when ``redacted``: :func:`memviz.tables.redact.key_labels`); unchanged when
    the table has no key (row_id, the row's 0-based position in its file, is then its name)."""
    return train.with_keys(frame, column, keep_row_id=False, redacted=redacted)


def row_label(train: Table, row_id: int, *, redacted: bool = False) -> str:
    """One training row's name for a reader: ``customer_id 1077`` (hashed when ``redacted``), else ``row 17``."""
    return train.row_names([int(row_id)], redacted=redacted)[0]


def redacted_rows(view: RunView, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its schema columns redacted (:func:`memviz.tables.redact.redact`, ranges from the
    whole training table); other columns (row ids, counts) untouched."""
    cols = list(view.train.schema.columns)
    return frame.assign(**redact(frame[cols], view.train.schema, reference=view.train.data))


#: the leak explorer's headers for its own columns (:meth:`memviz.leaks.rows.LeakView.table`)
LEAK_NAMES = {"check": "check", "epoch": "epoch", "ratio": "ratio r (nearest ÷ second nearest)",
              "how close": "how close", "largest difference": "largest difference",
              "r ≈ 0 from scaling": "looks identical only after rescaling", "synthetic_id": "generated row no."}


def styled_copies(lv: LeakView, redacted: bool, color: str = "#ffe08a"):
    """A leak view's table with the cells equal to the training row highlighted (redacted when asked),
    its own columns under readable headers (:data:`LEAK_NAMES`)."""
    return style_matches(lv, redacted=redacted, color=color, names=LEAK_NAMES)


def leak_view(view: RunView, row_id: int, limit: int = 20) -> LeakView:
    """A training row beside the generated rows credited to it (:func:`memviz.leaks.rows.copies_of`)."""
    return copies_of(view.result, int(row_id), limit=limit, checks=view.result.checks, train=view.train)


def ranking(view: RunView, params: DynamicCutParams = DEFAULTS) -> Ranking:
    """The run's rows ranked by DynamicCut's score at (k, T) of ``params``:
    :func:`memviz.dynamics.dynamiccut.dynamiccut_ranking` (a p move on Tune & prune is then a slice of it,
    not a rescoring)."""
    return dynamiccut_ranking(view.dynamics, params=params)


def rankings(view: RunView, k: int = DEFAULTS.k) -> dict:
    """{T: :class:`~memviz.dynamics.dynamiccut.Ranking`} at every check epoch of the run
    (:func:`memviz.dynamics.dynamiccut.dynamiccut_rankings`): what the early-identification
    curve needs for every p (computed once per run and k)."""
    return dynamiccut_rankings(view.dynamics, k)


def early_curve(view: RunView, p: float = DEFAULTS.p, k: int = DEFAULTS.k, ranked: dict | None = None, *,
                params: DynamicCutParams | None = None) -> pd.DataFrame:
    """Precision / recall / Jaccard of DynamicCut at every check epoch vs the final Top group:
    :func:`memviz.dynamics.dynamiccut.early_identification_curve` (its defaults: the raw score,
    the final Top group), read from ``ranked`` (:func:`rankings` at this k) when given. ``params``: p
    and k checked when made (given, ``p`` and ``k`` are not read).

    With S the rows removed at T and Top the final Top group, precision = |S ∩ Top| / |S|,
    recall = |S ∩ Top| / |Top|, jaccard = |S ∩ Top| / |S ∪ Top|; the random references are
    |Top| / N and |S| / N.
    """
    return early_identification_curve(view.dynamics, rankings=ranked, params=params or DynamicCutParams(p, k))


def column_leaks(view: RunView, check: int | None = None):
    """:func:`memviz.leaks.columns.run_column_match_rates` at a check (default the last); None when the
    run did not store its generated rows."""
    try:
        return run_column_match_rates(RunStore(view.path), check, checks=view.result.checks, train=view.train)
    except BadRunFolder:
        return None


@dataclass(frozen=True, eq=False)
class PrunePreview:
    """What DynamicCut at (p, k, T) would remove from the run's training table."""

    selection: Selection
    removed: pd.DataFrame    # rank, row_id, score, then the row's values
    n_rows: int

    @property
    def n_remove(self) -> int:
        return int(self.selection.n_remove)


def prune_preview(view: RunView, p: float | None = None, k: int | None = None, T: int | None = None,
                  ranked: Ranking | dict | None = None, values: pd.DataFrame | None = None, *,
                  params: DynamicCutParams | None = None) -> PrunePreview:
    """The rows DynamicCut at (p, k, T) would remove, best-scored first, with their values.

    ``params``: (p, k, T) checked when made (given, ``p``, ``k`` and ``T`` are not read; nothing is
    checked again); ``ranked``: the :class:`~memviz.dynamics.dynamiccut.Ranking` at (k, T), or the
    {T: Ranking} of :func:`rankings` at k, when the caller keeps them (a p move then rescores
    nothing); ``values``: the table the values are taken from (default the training rows; e.g.
    :func:`redacted_table` for a redacted view), indexed by row_id.
    """
    dyn = view.dynamics
    params = params if params is not None else DynamicCutParams(p, k, T)
    if isinstance(ranked, dict):
        ranked = ranked.get(params.window(dyn))
    ranked = ranked if ranked is not None else ranking(view, params)
    sel = dynamiccut_selection(dyn, ranking=ranked, params=params)
    pos = ranked.order[:sel.n_remove]
    gone = pd.DataFrame({"rank": sel.ranks[pos], "row_id": dyn.row_ids[pos], "score": sel.scores[pos]})
    vals = (view.train.data if values is None else values).loc[gone["row_id"].to_numpy(dtype=np.int64)]
    removed = pd.concat([gone, vals.reset_index(drop=True)], axis=1)
    return PrunePreview(sel, removed, dyn.n_rows)


def redacted_table(view: RunView) -> pd.DataFrame:
    """The whole training table redacted (:func:`memviz.tables.redact.redact`, ranges from itself):
    a redacted view of any of its rows is a lookup in it (row i's redaction depends only on row i
    and the training table)."""
    return redact(view.train.data[list(view.train.schema.columns)], view.train.schema, reference=view.train.data)


def pruned_csv(view: RunView, removed_ids, keep_row_id: bool = False, raw: bool = False) -> bytes:
    """The training table without ``removed_ids`` as CSV bytes, ready for the next tool: the
    user's columns in the order of the training file (kept with the dashboard's job, else the
    run's own file's; the schema's order when neither knows it), the user's row key included, no
    ``row_id`` unless ``keep_row_id`` (then first); spreadsheet formulas neutralised unless ``raw``
    (:func:`memviz.io.csv_bytes`)."""
    pruned = view.train.drop(removed_ids)
    frame = pruned.to_frame(order=column_order(view.path) or None, row_id=keep_row_id)
    return csv_bytes(frame, raw=raw)


def pruned_file_name(view: RunView, p: float, k: int, T: int) -> str:
    """A readable download name: ``adult_pruned_10pct_k3_T50.csv`` (the dataset's name, made file-safe)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(view.settings().get("dataset") or view.run_id)).strip("._") or "table"
    return f"{name[:60]}_pruned_{round(100 * p):d}pct_k{int(k)}_T{int(T)}.csv"
