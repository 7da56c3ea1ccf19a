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
from memviz.compare.methods import method_label
from memviz.errors import BadTable, MemvizError
from memviz.io import read_json
from memviz.jobs.control import job_for, read_spec
from memviz.measure.floor import Floor
from memviz.metrics import METRICS
from memviz.models import MODELS  # noqa: F401
from memviz.models.privacy import missing_piece
from memviz.viz.style import model_label
from memviz.text import check_name


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


def compare_label(out_dir: str | Path, table: str = "", started: str = "") -> str:
    """A comparison as a picker shows it: its methods and generators, its table and when it started,
    e.g. ``Random, DynamicCut × TabDDPM · adult · 12-02 14:05`` (the baseline, in every comparison, left out).

    Only what never changes for a job (its spec; ``table`` and ``started`` from
    :func:`memviz.jobs.control.list_jobs`): a selectbox answers with the label it showed, so a label
    must be the same on the next rerun. A spec that cannot be read gives the job's folder name.
    """
    try:
        cfg = read_spec(job_for(out_dir).spec_path).config
    except (MemvizError, OSError):
        cfg = {}
    methods = [method_label(m) for m in (cfg.get("methods") or []) if m != "baseline"] or ["baseline"]
    models = [model_label(m) for m in (cfg.get("models") or [])]
    what = ", ".join(methods) + (" × " + ", ".join(models) if models else "") if cfg else Path(out_dir).name
    when = str(started)[5:16] if started and not str(started).startswith("1970") else ""
    return " · ".join(x for x in (what, str(table), when) if x)


def compare_labels(jobs: pd.DataFrame) -> dict[str, str]:
    """{out: :func:`compare_label`} for the comparisons of :func:`memviz.jobs.control.list_jobs`; two that
    would read the same get their job id after the label (a picker must tell them apart)."""
    labels = {r.out: compare_label(r.out, r.label, r.started) for r in jobs.itertuples()}
    seen = pd.Series(list(labels.values())).value_counts()
    return {r.out: labels[r.out] + (f" · {r.job_id}" if seen[labels[r.out]] > 1 else "") for r in jobs.itertuples()}


def metric_name(key: str) -> str:
    """A results column's name in words (:mod:`memviz.metrics`), or the key itself."""
    m = METRICS.get(key)
    return m.name if m is not None else key


def load_compare(out_dir: str | Path) -> CompareView:
    """Read a comparison's results (BadRunFolder when it has no results.csv yet) and its details."""
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
    """The bytes of an output file for a download button (BadTable when it is too large)."""
    p = Path(path)
    if p.stat().st_size > limit:
        raise BadTable(f"{p.name}: {p.stat().st_size / 2**20:.0f} MB is too large to download from the browser")
    return p.read_bytes()


def failed_cells(results: pd.DataFrame) -> list[str]:
    """One line per failed cell: which arm, generator and seed, and its one-line reason (plain text: a page
    escapes it)."""
    if "status" not in results.columns:
        return []
    bad = results[results["status"] != "ok"]
    return [" ".join(f"{method_label(r['method'])} × {model_label(r['model'])}, seed {int(r['seed'])}: failed, "
                     f"{str(r.get('error') or 'no reason recorded')}".split()) for _, r in bad.iterrows()]


def offered_methods() -> tuple[str, ...]:
    """The methods the Compare page offers: every one that can run here (DP-SGD only with Opacus and OpenDP)."""
    return tuple(m for m in METHODS if m != "dp" or missing_piece() is None)


__all__ = ["METHODS", "offered_methods", "failed_cells", "MODELS", "METRICS", "metric_name", "summary_table", "CompareView", "compare_token", "load_compare", "details_done",
           "run_floor", "compare_outputs", "synthetic_files", "file_bytes", "verdicts_differ"]


#: the results' columns that are no metric, in words (unit, meaning); internal ones are left out
#: of the readable table unless asked for
OTHER_COLUMNS = {
    "method": ("Method", "", "the mitigation applied to the training table before fitting"),
    "steps": ("Optimiser steps", "steps", "the optimiser steps the cell's model took (epochs × batches per "
              "epoch); arms compared fairly take as many"),
    "model": ("Generator", "", "the generative model fitted on that table"),
    "seed": ("Seed", "", "the random start of the mitigation, the model, its sampling and the evaluation"),
    "mle_real": ("MLE of the real training data", "score", "the same predictor trained on the real training rows: "
                 "the line the MLE is read against"),
    "mle_metric": ("MLE score used", "", "the score of the MLE columns (ROC AUC for a binary target, else macro F1 "
                   "or R²)"),
    "dcr_ideal": ("DCR share ideal", "share", "the DCR share of a model that copied nobody (train rows / all real "
                  "rows)"),
    "n_train_used": ("Training rows used", "rows", "rows in the mitigated training table (removed rows out, added "
                     "rows in)"),
    "n_removed": ("Training rows removed", "rows", "rows the method took out"),
    "n_added": ("Rows added", "rows", "rows the method mixed in (augmentation)"),
    "n_synthetic": ("Generated rows", "rows", "rows sampled from the fitted model"),
    "epochs": ("Training epochs", "epochs", "how long the model trained"),
    "device": ("Device", "", "where it trained"),
    "total_seconds": ("Time taken (s)", "seconds", "wall-clock time of the cell"),
    "status": ("Status", "", "ok, or failed with the error line"),
    "error": ("Error", "", "the error line of a failed cell"),
}
INTERNAL = ("key", "synthetic", "notes", "mitigate_seconds", "fit_seconds", "sample_seconds", "memorize_seconds",
            "quality_seconds", "mle_seconds", "dcr_seconds", "evaluate_seconds", "cpu_seconds")


def data_dictionary(results: pd.DataFrame, internal: bool = False) -> pd.DataFrame:
    """One row per column of the readable results: column (its header), raw_name, unit, better, range,
    meaning. Names, goals, ranges and meanings come from :mod:`memviz.metrics`; shares are fractions
    in the raw table and percentages (0-100) in the readable one."""
    rows = []
    for c in results.columns:
        if c in INTERNAL and not internal:
            continue
        m = METRICS.get(c)
        if m is not None:
            lo = "" if m.min_value is None else (f"{100 * m.min_value:g}" if m.percent else f"{m.min_value:g}")
            hi = "" if m.max_value is None else (f"{100 * m.max_value:g}" if m.percent else f"{m.max_value:g}")
            rows.append({"column": _header(c), "raw_name": c, "unit": "%" if m.percent else "",
                         "better": m.better, "range": f"{lo} to {hi}".strip(),
                         "meaning": m.explain or m.name})
        else:
            name, unit, meaning = OTHER_COLUMNS.get(c, (c, "", ""))
            rows.append({"column": name, "raw_name": c, "unit": unit, "better": "", "range": "", "meaning": meaning})
    return pd.DataFrame(rows, columns=["column", "raw_name", "unit", "better", "range", "meaning"])


def _header(c: str) -> str:
    m = METRICS.get(c)
    if m is not None:
        return f"{m.name} (%)" if m.percent else m.name
    return OTHER_COLUMNS.get(c, (c,))[0]


def readable_results(results: pd.DataFrame, internal: bool = False) -> pd.DataFrame:
    """The results table for people and the next tool: method and generator labels, shares as
    percentages with 2 decimals, integers as integers, one readable header per column (see
    :func:`data_dictionary`); internal columns (keys, file paths, per-phase timings) only when asked."""
    out = results[[c for c in results.columns if internal or c not in INTERNAL]].copy()
    if "method" in out:
        out["method"] = out["method"].map(method_label)
    if "model" in out:
        out["model"] = out["model"].map(model_label)
    for c in out.columns:
        m = METRICS.get(c)
        if m is not None and m.percent:
            out[c] = (100 * pd.to_numeric(out[c], errors="coerce")).round(2)
        elif c in ("n_train_used", "n_removed", "n_added", "n_synthetic", "epochs", "seed", "n_flagged_removed"):
            out[c] = pd.to_numeric(out[c], errors="coerce").round().astype("Int64")
        elif c == "total_seconds":
            out[c] = pd.to_numeric(out[c], errors="coerce").round(1)
    return out.rename(columns={c: _header(c) for c in out.columns})


def verdicts_differ(run_audit, run_source, compare_audit, model: str, compare: CompareView | None = None) -> str:
    """Why a report's run and comparison read different verdicts, in one sentence ("" when their codes agree or
    either audit is missing): which generated rows each audit read (the run's check and epoch; the comparison's
    model retrained without mitigation, its seeds pooled), and how many of the training rows the run's audit
    names the comparison's names too. It says where the two audits differ, never what either concludes: their
    verdicts are each audit's own sentence (:attr:`memviz.auditing.result.Audit.verdict`).

    ``run_source``: the run's :class:`memviz.app.audits.Source`; ``compare``: the comparison (for its seeds)."""
    if run_audit is None or compare_audit is None or run_audit.verdict.code == compare_audit.verdict.code:
        return ""

    where = check_name(run_source.check, run_source.n_checks) if run_source.check is not None else "its last check"
    epoch = f" (epoch {run_source.epoch})" if run_source.epoch is not None else ""
    seeds = []
    if compare is not None and {"model", "method", "seed"} <= set(compare.ok.columns):
        ok = compare.ok
        seeds = sorted({int(s) for s in ok.loc[(ok["model"] == model) & (ok["method"] == "baseline"), "seed"]})
    pooled = (f", seed{'s' * (len(seeds) != 1)} {', '.join(map(str, seeds))} pooled" if seeds else "")
    ran = set(run_audit.frame("over_copied", row_id=True)["row_id"].tolist())
    also = len(ran & set(compare_audit.frame("over_copied", row_id=True)["row_id"].tolist()))
    n_cmp = int(compare_audit.n_over_copied)
    rows = (f"the run's audit names {len(ran):,} training row{'s' * (len(ran) != 1)}, the comparison's "
            f"{n_cmp:,}" + (f" ({also:,} of them the same)" if ran and n_cmp else ""))
    return (f"The two verdicts differ because they read different generated rows from different models: the run's "
            f"reads {run_audit.provenance.n_synthetic:,} rows of the warm-up's model at {where}{epoch}, the "
            f"comparison's {compare_audit.provenance.n_synthetic:,} rows of {model_label(model)} trained again without "
            f"mitigation{pooled}; {rows}.")
