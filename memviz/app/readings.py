"""Memorization and Dynamics as a privacy officer reads them: the floor (real rows the model
never saw), the excess above it, each row's copies beside what the floor expects, how close a
copy really is, both distances, and the dynamics findings beside their null.

Every function takes the :class:`memviz.app.runs.RunView` of an opened run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memviz.app.runs import RunView
from memviz.auditing.stored import RUN_FOLDER, load_kept_table
from memviz.dynamics.nullmodel import DEFAULT_REPLICATES as NULL_REPLICATES
from memviz.dynamics.nullmodel import compare_to_null
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadRunFolder, MemvizError
from memviz.jobs.control import job_for
from memviz.jobs.spec import ROW_CLOSENESS, read_spec
from memviz.leaks.rows import closeness_by_row, copies_vs_null, flagged_closeness, rank_rows
from memviz.measure.closeness import nn1_closeness, summary
from memviz.measure.floor import excess, holdout_floor
from memviz.measure.memorization import memorization
from memviz.measure.rownull import row_null
from memviz.tables.data import Table, fingerprint, load_companion
from memviz.text import count, pct
from memviz.warmup.store import RunStore, run_token

if TYPE_CHECKING:
    from memviz.measure.floor import Excess, Floor

DISTANCE_LABELS = {"paper": "the papers' distance (numbers rescaled for each generated row)",
                   "standardized": "the standardized distance (each number divided by its column's training range)"}


def last_excess(view: RunView):
    """The last check's :class:`memviz.measure.floor.Excess` over the run's floor; None without a floor."""
    floor = view.result.floor
    if floor is None or view.per_check.empty:
        return None

    last = view.per_check.iloc[-1]
    return excess(float(last["mem_ratio"]), int(last["n_synthetic"]), floor)


def run_row_null(view: RunView):
    """Each training row's copies over the whole warm-up beside the copies fresh real rows would
    give it (:func:`memviz.measure.rownull.row_null` at M = Σ_e M_e); None without a floor."""
    floor = view.result.floor
    if floor is None:
        return None

    return row_null(floor, view.dynamics.total, view.per_check["n_synthetic"].to_numpy())


def copies_null_table(view: RunView, null=None) -> pd.DataFrame | None:
    """Training rows by copies, observed and expected from fresh real rows
    (:func:`memviz.leaks.rows.copies_vs_null`); None without a floor."""
    floor = view.result.floor
    if floor is None:
        return None

    return copies_vs_null(floor, view.dynamics.total, view.per_check["n_synthetic"].to_numpy())


def _samples_loader(view: RunView):
    store = RunStore(view.path)
    return store.samples


def run_closeness(view: RunView, row_ids=None) -> pd.DataFrame | None:
    """How close every flagged generated row of the run (or only those credited to ``row_ids``)
    is to its NN1 training row (:func:`memviz.leaks.rows.flagged_closeness` over all checks); None
    when the run kept no generated rows."""
    long = view.result.checks
    if row_ids is not None:
        long = long[long["nn1"].isin(np.asarray(row_ids, dtype=np.int64))]
    try:
        return flagged_closeness(view.train, long, _samples_loader(view), distance=view.result.config.distance)
    except BadRunFolder:
        return None


def check_closeness(view: RunView, check: int | None = None) -> dict | None:
    """At one check (default the last): the share of generated rows identical to a training row
    (mostlyai-qa's IMS), how close the flagged ones are, and the same share among the hold-out
    rows as its reference (``holdout_identical_share``, None without a floor)
    (:func:`memviz.measure.closeness.summary`); None when the run kept no generated rows."""
    long = view.result.checks
    check = int(long["check"].max()) if check is None else int(check)
    sub = long[long["check"] == check]
    try:
        gen = _samples_loader(view)(check)
    except BadRunFolder:
        return None
    pos = pd.Index(gen["synthetic_id"].to_numpy()).get_indexer(sub["synthetic_id"].to_numpy())
    g = gen.iloc[pos].reset_index(drop=True)
    c = nn1_closeness(view.train, g, sub["nn1"].to_numpy(), ratio=sub["ratio"].to_numpy(),
                      distance=view.result.config.distance)
    out = summary(c, sub["memorized"].to_numpy(dtype=bool))
    floor = view.result.floor
    out["check"] = check
    out["holdout_identical_share"] = None if floor is None else floor.n_identical / floor.n_holdout
    return out


def kept_row_closeness(view: RunView) -> pd.DataFrame | None:
    """Every training row's copies by closeness over all checks, as the job worker kept them for this run
    state (:func:`memviz.jobs.spec.keep_audit`); None when it did not."""
    return load_kept_table(Path(view.path) / RUN_FOLDER, ROW_CLOSENESS, run_token(view.path))


def leak_ranking(view: RunView, by: str = "excess", n: int = 20, null=None, closeness: bool = True) -> pd.DataFrame:
    """The leak explorer's ranking (:func:`memviz.leaks.rows.rank_rows`) with the rows' values.

    ``by="excess"`` (the default, needs the floor: pass ``null`` = :func:`run_row_null`) or
    ``"copies"``; ``closeness`` adds how many of each listed row's copies are exact, near-exact
    or differ (:func:`memviz.leaks.rows.closeness_by_row`: the table the job worker kept for every
    row, :func:`kept_row_closeness`, else measured here for the listed rows' copies only, which reads
    every check's generated rows: about 1 s at Adult size), unless the run kept no generated rows.
    """
    top = rank_rows(view.dynamics, null, by=by, n=n)
    rows = kept_row_closeness(view) if closeness and len(top) else None
    if rows is None and closeness and len(top):
        flagged = run_closeness(view, top["row_id"].to_numpy())
        rows = closeness_by_row(flagged) if flagged is not None else None
    if rows is not None:
        top = rank_rows(view.dynamics, null, by=by, n=n, closeness_rows=rows)
    vals = view.train.data.loc[top["row_id"].to_numpy(dtype=np.int64)].reset_index(drop=True)
    return pd.concat([top.reset_index(drop=True), vals], axis=1)


def run_holdout(view: RunView, candidates=()) -> Table | None:
    """The real rows the run's floor was measured on, found again; None when none is at hand.

    Looks at, in order: the hold-out file of the job that ran the warm-up (its spec's
    ``paths.holdout``), the file the floor names as its source, then ``candidates``
    (e.g. the Data page's test split). A table is returned only when its fingerprint equals
    the floor's hold-out fingerprint, so a floor is never re-measured on other rows.
    """
    floor = view.result.floor
    if floor is None:
        return None
    want = floor.holdout_fingerprint

    def loaded():
        try:
            spec = read_spec(job_for(view.path).spec_path)
            if spec.paths.get("holdout"):
                yield lambda: load_companion(view.train, spec.paths["holdout"], role="test",
                                             row_id_column=spec.paths.get("row_id"))
        except (BadRunFolder, MemvizError, OSError):
            pass
        src = Path(str(floor.holdout_source))
        if floor.holdout_source and src.is_file():
            yield lambda: load_companion(view.train, src, role="test")
        for c in candidates:
            if c is not None:
                yield lambda c=c: c

    for make in loaded():
        try:
            table = make()
        except (MemvizError, OSError):
            continue
        if fingerprint(table) == want:
            return table
    return None


@dataclass(frozen=True)
class DistanceReading:
    """The last check measured with one distance: its mem ratio, its own floor and the excess.

    floor and excess are None without a hold-out; ``stored`` is True for the run's own distance
    (read from the run), False for one measured on demand (:func:`measure_distance`).
    """

    distance: str
    check: int
    mem_ratio: float
    n_synthetic: int
    floor: Floor | None = None
    excess: Excess | None = None
    stored: bool = True
    seconds: float = 0.0

    def row(self) -> dict:
        """One display row (shares as fractions; None where there is no floor)."""
        f, e = self.floor, self.excess
        return {"distance": {"paper": "paper's", "standardized": "standardized"}.get(self.distance, self.distance),
                "mem ratio (last check)": self.mem_ratio,
                "floor": None if f is None else f.floor,
                "floor 95 % interval": None if f is None else f"{f.low:.1%} – {f.high:.1%}",
                "excess (points)": None if e is None else 100 * e.excess,
                "excess 95 % interval": None if e is None else f"{100 * e.low:+.1f} to {100 * e.high:+.1f}",
                "how": "stored with the run" if self.stored else f"measured now ({self.seconds:.1f} s)"}


def stored_distance(view: RunView) -> DistanceReading:
    """The run's own distance at its last check (stored figures, no computation)."""
    last = view.per_check.iloc[-1]
    return DistanceReading(view.result.config.distance, int(last["check"]), float(last["mem_ratio"]),
                           int(last["n_synthetic"]), view.result.floor, last_excess(view), True)


def measure_distance(view: RunView, distance: str, holdout: Table | None = None) -> DistanceReading:
    """The last check's generated rows and the hold-out measured with ``distance``: one engine
    fit on the training rows, then one query pass each (the stored samples are the generated
    rows). BadRunFolder when the run kept no generated rows."""
    t0 = time.perf_counter()
    check = int(view.per_check["check"].iloc[-1])
    try:
        gen = _samples_loader(view)(check)
    except BadRunFolder:
        raise BadRunFolder(f"{view.run_id}: the run kept no generated rows; the other distance cannot be "
                           "measured") from None
    engine = NeighborEngine(distance=distance, device="auto").fit(view.train)
    res = memorization(view.train, gen[list(view.train.schema.columns)], engine=engine)
    floor = ex = None
    if holdout is not None:
        floor = holdout_floor(view.train, holdout, distance=distance, engine=engine)
        ex = excess(res.mem_ratio, res.n_synthetic, floor)
    return DistanceReading(distance, check, res.mem_ratio, res.n_synthetic, floor, ex, False,
                           time.perf_counter() - t0)


def null_comparison(view: RunView, replicates: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Every Top vs Non-Top statistic of the run beside its null value
    (:func:`memviz.dynamics.nullmodel.compare_to_null`'s frame), the paper's circular statistics first.

    Columns: name, label, circular, direction, value, baseline, observed (the effect),
    p_naive, naive_holds, null_median, null_low, null_high, p_null, naive_null_share,
    verdict. MemvizError when the run has fewer checks than the split-half statistics need.
    """
    cmp = compare_to_null(view.result.checks, view.train.row_ids,
                          replicates=NULL_REPLICATES if replicates is None else replicates, seed=seed,
                          top_frac=view.dynamics.top_frac)
    frame = cmp.to_frame()
    frame.attrs.update(n_replicates=cmp.n_replicates, T=cmp.T, early_checks=cmp.early_checks)
    return frame


def distance_table(readings) -> pd.DataFrame:
    """One display row per :class:`DistanceReading` (shares formatted as percent)."""
    rows = []
    for r in readings:
        d = r.row()
        d["mem ratio (last check)"] = f"{d['mem ratio (last check)']:.1%}"
        d["floor"] = "no hold-out" if d["floor"] is None else f"{d['floor']:.1%}"
        d["excess (points)"] = "–" if d["excess (points)"] is None else f"{d['excess (points)']:+.1f}"
        d["floor 95 % interval"] = d["floor 95 % interval"] or "–"
        d["excess 95 % interval"] = d["excess 95 % interval"] or "–"
        rows.append(d)
    return pd.DataFrame(rows)


def display_names(frame: pd.DataFrame, names: dict) -> pd.DataFrame:
    """``frame`` with its computed columns renamed for display (``names``); a user column whose
    name is taken gets `` (column)`` appended, so every name stays unique."""
    out, seen = [], set()
    for c in frame.columns:
        label = names.get(c, c) if c in names else str(c)
        while label in seen:
            label += " (column)"
        seen.add(label)
        out.append(label)
    return frame.set_axis(out, axis=1)


def findings_table(findings: pd.DataFrame) -> pd.DataFrame:
    """:func:`null_comparison`'s frame for display: definition (the paper's, circular, or
    non-circular), statistic, verdict, observed effect, null median, null 2.5–97.5 %, Top
    and Non-Top values; numbers to 4 significant digits."""
    def g(v) -> str:
        return "–" if v is None or not np.isfinite(v) else f"{v:.4g}"

    return pd.DataFrame({
        "kind": np.where(findings["circular"], "paper's (circular)", "non-circular"),
        "label": findings["label"], "verdict": findings["verdict"], "observed": findings["observed"].map(g),
        "null_median": findings["null_median"].map(g),
        "null_range": [f"{g(a)} to {g(b)}" for a, b in zip(findings["null_low"], findings["null_high"])],
        "value": findings["value"].map(g), "baseline": findings["baseline"].map(g)})


def parse_row_ids(text: str, row_ids) -> tuple[list[int], list[str]]:
    """Row_ids typed by the user ("13, 27"): (the known ones, as ints, in order; the other items
    as typed). Each item is matched exactly: "13" is row 13, never rows 130-139."""
    known = set(np.asarray(row_ids).tolist())
    good, bad = [], []
    for item in (t.strip() for t in str(text or "").replace(";", ",").split(",")):
        if not item:
            continue
        try:
            value = int(item)
        except ValueError:
            bad.append(item[:40])
            continue
        (good if value in known else bad).append(value if value in known else item[:40])
    return good, bad


def parse_rows(text: str, train: Table, row_ids) -> tuple[list[int], list[str]]:
    """Training rows typed by the user ("1077, 2705"): (their row_ids among ``row_ids``, in the order typed; the
    items that name no such row, as typed). Each item is the user's key of a row when the table has one
    (matched exactly as text: "1077" is the key 1077, or "C-17" the key "C-17"; every row holding that key), else
    a row_id ("13" is row 13, never rows 130-139)."""
    if train.key is None:
        return parse_row_ids(text, row_ids)
    if train.composite:
        return _parse_composite(text, train, row_ids)
    ids = np.asarray(row_ids, dtype=np.int64)
    by_key: dict[str, list[int]] = {}
    for rid, text_key in zip(ids.tolist(), train.key_texts(ids)):
        by_key.setdefault(text_key, []).append(int(rid))
    good, bad = [], []
    for item in (t.strip() for t in str(text or "").replace(";", ",").split(",")):
        if not item:
            continue
        found = by_key.get(item)
        if found is None and item.endswith(".0"):          # "1077.0" typed for the integer key 1077
            found = by_key.get(item[:-2])
        if found and item != "missing":
            good += found
        else:
            bad.append(item[:40])
    return list(dict.fromkeys(good)), bad


def _parse_composite(text: str, train: Table, row_ids) -> tuple[list[int], list[str]]:
    """:func:`parse_rows` for a composite key, typed as the pages show it: ``branch=North, account_no=17`` (rows
    separated by ``;`` or by the next ``branch=``; each part matched exactly as text, spaces around ``=`` and
    ``,`` ignored)."""
    cols = train.key_columns
    ids = np.asarray(row_ids, dtype=np.int64)
    by_key: dict[tuple, list[int]] = {}
    for rid, parts in zip(ids.tolist(), zip(*[train.key_part_texts(train.key_of(ids), i, c, redacted=False,
                                                                     salt=None) for i, c in enumerate(cols)])):
        by_key.setdefault(tuple(parts), []).append(int(rid))
    groups: list[dict[str, str] | str] = []
    for chunk in str(text or "").split(";"):
        current: dict[str, str] | None = None
        for item in (t.strip() for t in chunk.split(",")):
            if not item:
                continue
            col, eq, value = item.partition("=")
            col, value = col.strip(), value.strip()
            if not eq or col not in cols:
                groups.append(item)
                current = None
                continue
            if current is None or col in current:
                current = {}
                groups.append(current)
            current[col] = value
    good, bad = [], []
    for g in groups:
        found = by_key.get(tuple(g.get(c) for c in cols)) if isinstance(g, dict) else None
        if found and "missing" not in g.values():
            good += found
        else:
            bad.append((g if isinstance(g, str) else ", ".join(f"{c}={v}" for c, v in g.items()))[:80])
    return list(dict.fromkeys(good)), bad


#: the Dynamics page tests against the null without asking up to this many generated rows over all
#: checks (the sample's default warm-up: 36,000, about 1 s; cost grows linearly)
NULL_AUTO_EVENTS = 60_000


def null_is_quick(view: RunView) -> bool:
    """Is the run small enough for the null comparison to run on a page visit without asking?"""
    return len(view.result.checks) <= NULL_AUTO_EVENTS


def dynamics_sentence(dyn, findings=None) -> str:
    """The Dynamics page's plain one-line summary, for someone who has not read the papers.

    Top share = sum of the Top rows' copies / all copies; the first epochs are medians over the
    rows ever copied (a row never copied has none). With ``findings`` (the null comparison's
    frame), how many of the non-circular statistics hold against the null.
    """
    total = float(dyn.total.sum())
    if total <= 0:
        return "No training row was copied at any check, so there are no dynamics to read."
    top = np.asarray(dyn.top, dtype=bool)
    ever = np.asarray(dyn.ever_memorized, dtype=bool)
    first = np.asarray(dyn.first_epoch, dtype=float)
    parts = [f"The {pct(dyn.top_frac, 0)} most-copied training rows ({count(top.sum())} rows) hold "
             f"{pct(dyn.total[top].sum() / total)} of all {count(total)} copies, and {count(ever.sum())} of "
             f"{count(dyn.n_rows)} rows were copied at least once"]
    t, o = first[top & ever], first[~top & ever]
    if len(t) and len(o):
        parts.append(f"; the Top rows were first copied at epoch {count(np.median(t))} (median), the other copied "
                     f"rows at epoch {count(np.median(o))}")
    text = "".join(parts) + "."
    if findings is not None and len(findings) and {"circular", "verdict"} <= set(findings.columns):
        fair = findings[~findings["circular"].astype(bool)]
        if len(fair):
            held = int((fair["verdict"] == "holds").sum())
            text += (f" Against a null where nothing changes during training, {held} of {len(fair)} fair "
                     "(non-circular) tests show the paper's dynamics.")
    return text
