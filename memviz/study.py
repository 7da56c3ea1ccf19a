"""The paper's findings on real tables: one seeded command that regenerates the evidence.

For each dataset folder (``train.csv``, ``test.csv``, ``meta.json``) under ``data_dir``:

1. **heavy tail**: a TabDDPM warm-up; the distribution of copies per training row and the
   share of all copies from the top 1 / 5 / 10 % rows (plus the Gini coefficient);
2. **Top vs Non-Top**: first-memorization epoch, forgetting events and early Mem-AUC,
   each with a two-sided Mann–Whitney U test;
3. **early identification**: precision / recall of the DynamicCut set scored on the
   first T epochs against the final Top group, for several T;
4. **comparison**: baseline, DynamicCut, DynamicCutMix, TabCutMix, TabCutMixPlus, SMOTE
   and random pruning × TabDDPM, CTGAN, TVAE over seeds (mean ± std): mem ratio,
   relative reduction, Shape, Trend, MLE and the real-data MLE line;
5. **transferability**: the TabDDPM ranking pruning CTGAN's and TVAE's data, against
   their own random-pruning control.

Scales (rows are subsampled with a fixed seed, keeping the original row positions as
``row_id``):

* ``tiny``  — seconds; what the tests run so that the command cannot silently break;
* ``cpu``   — a few hours on 2 CPU cores: 3,000 training rows and at most 1,000 test rows
  per dataset, the ``cpu-quick`` TabDDPM, CPU epochs for CTGAN/TVAE, 3 seeds;
* ``paper`` — the reference configuration for a GPU: full splits, the ``paper`` TabDDPM
  preset, 5 seeds.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .data import Table, load_dataset
from .errors import MemvizError
from .store import atomic_write_text

#: Published figures (TabCutMix paper Table 1 and 9; full scale on a GPU, mean of 5 runs), in %.
REFERENCE = {
    "adult": {"tabddpm_mem": 31.01, "tabcutmix_mem": 27.55, "tabcutmixplus_mem": 26.10, "mle": 91.09,
              "shape": 98.84, "trend": 97.78, "ctgan_mem": 21.68, "tvae_mem": 30.78},
    "default": {"tabddpm_mem": 19.33, "tabcutmix_mem": 16.76, "tabcutmixplus_mem": 18.00, "mle": 76.79,
                "shape": 97.58, "trend": 94.46, "ctgan_mem": 12.83, "tvae_mem": 17.22},
    "shoppers": {"tabddpm_mem": 31.37, "tabcutmix_mem": 25.56, "tabcutmixplus_mem": 28.51, "mle": 92.17,
                 "shape": 97.08, "trend": 92.92, "ctgan_mem": 19.80, "tvae_mem": 23.17},
}
METHODS = ("baseline", "dynamiccut", "dynamiccutmix", "tabcutmix", "tabcutmixplus", "smote", "random")


@dataclass(frozen=True)
class StudyScale:
    """How big one study run is."""

    name: str
    max_train: int | None
    max_test: int | None
    preset: str
    warmup_epochs: int | None
    check_every: int | None
    seeds: tuple
    models: tuple = ("tabddpm", "ctgan", "tvae")
    methods: tuple = METHODS
    model_epochs: int | None = None          # None: each model's preset
    model_params: dict = field(default_factory=dict)   # {model: {param: value}}
    p: float = 0.10
    k: int = 3
    T_fracs: tuple = (0.1, 0.25, 0.5, 1.0)


_TINY_DDPM = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}
SCALES = {
    "tiny": StudyScale("tiny", 200, 100, "cpu-quick", 6, 2, (0,), models=("tabddpm", "tvae"),
                       methods=("baseline", "dynamiccut", "random"), model_epochs=2,
                       model_params={"tabddpm": _TINY_DDPM}),
    "cpu": StudyScale("cpu", 3000, 1000, "cpu-quick", None, None, (0, 1, 2)),
    "paper": StudyScale("paper", None, None, "paper", None, None, (0, 1, 2, 3, 4)),
}


def subsample(table: Table, n: int | None, seed: int = 0) -> Table:
    """``n`` rows drawn without replacement (seeded), in their original order; ids kept."""
    if n is None or n >= len(table):
        return table
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(table.row_ids, size=n, replace=False))
    return table.subset(ids)


def _float(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _T_values(epochs: np.ndarray, fracs) -> list[int]:
    """Check epochs closest to (and at most) each fraction of the warm-up."""
    out = []
    for f in fracs:
        target = f * epochs.max()
        ok = epochs[epochs <= target + 1e-9]
        out.append(int(ok.max() if ok.size else epochs.min()))
    return sorted(set(out))


def dataset_study(name: str, folder: Path, out: Path, scale: StudyScale, device: str = "auto",
                  progress: Callable[[str], None] | None = None, n_jobs: int = 2) -> dict:
    """Run the five parts of the study on one dataset; returns a JSON-able dict (also saved)."""
    from .dynamiccut import early_identification
    from .dynamics import summarize
    from .experiment import run_grid, summary_table
    from .warmup import WarmupConfig, load_warmup, run_warmup

    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    train_full, test_full = load_dataset(folder)
    if test_full is None:
        raise MemvizError(f"{folder}: the study needs a test.csv beside train.csv")
    train = subsample(train_full, scale.max_train, seed=0)
    test = subsample(test_full, scale.max_test, seed=1)
    out.mkdir(parents=True, exist_ok=True)

    # 1-3: warm-up and dynamics -------------------------------------------------------
    run_dir = out / "warmup"
    cfg = WarmupConfig(preset=scale.preset, epochs=scale.warmup_epochs, check_every=scale.check_every, seed=0,
                       device=device, model_params=dict(scale.model_params.get("tabddpm", {})))
    if (run_dir / "manifest.json").exists():
        from .store import RunStore
        status = RunStore(run_dir).manifest().get("status")
        wres = load_warmup(run_dir) if status == "finished" else run_warmup(train, cfg, run_dir, resume=True)
    else:
        say(f"{name}: warm-up on {len(train)} rows")
        wres = run_warmup(train, cfg, run_dir)
    dyn = wres.dynamics
    summ = summarize(dyn).to_dict()
    totals = np.asarray(dyn.total)
    hist_edges = [0, 1, 2, 3, 5, 10, 20, 50, 100, 1000, 10 ** 9]
    hist = np.histogram(totals, bins=hist_edges)[0].tolist()
    Ts = _T_values(np.asarray(dyn.epochs), scale.T_fracs)
    early = [asdict(early_identification(dyn, p=scale.p, k=scale.k, T=T)) for T in Ts]

    # 4-5: comparison grid ---------------------------------------------------------------
    say(f"{name}: comparison grid {len(scale.methods)} methods x {len(scale.models)} models x "
        f"{len(scale.seeds)} seeds")
    results = run_grid(train, test, scale.methods, scale.models, scale.seeds, out / "compare", run_dir=run_dir,
                       p=scale.p, k=scale.k, epochs=scale.model_epochs, device=device,
                       model_params=scale.model_params or None, n_jobs=n_jobs,
                       progress=lambda d, t, m: say(f"{name}: {d}/{t} {m}"))
    summary = summary_table(results)
    # the ranking's transfer: each model's DynamicCut and random rows of the summary
    by_cell = summary.set_index(["model", "method"])
    transfer = []
    for model in scale.models:
        row = {"model": model}
        for method in ("dynamiccut", "random"):
            cell = by_cell.loc[(model, method)] if (model, method) in by_cell.index else None
            row[f"{method}_mean"] = None if cell is None else _float(cell["relative_reduction_mean"])
            row[f"{method}_std"] = None if cell is None else _float(cell["relative_reduction_std"])
        transfer.append(row)

    paired = [paired_difference(results, model, a, b) for model in scale.models
              for a, b in PAIRS if {a, b} <= set(scale.methods)]
    study = {
        "dataset": name, "scale": asdict(scale), "n_train": len(train), "n_train_full": len(train_full),
        "n_test": len(test), "warmup": {"run_dir": str(run_dir), "config": wres.config.to_dict(),
                                        "checks": int(len(wres.per_check)), "seconds": wres.seconds,
                                        "per_check": wres.per_check.to_dict(orient="list")},
        "heavy_tail": {"summary": summ, "histogram": {"edges": hist_edges, "counts": hist}},
        "early_identification": early,
        "comparison": summary.to_dict(orient="records"),
        "transferability": transfer,
        "paired": paired,
        "reference": REFERENCE.get(name),
        "seconds": time.perf_counter() - t0,           # this invocation (reused parts cost nothing)
        # what the results cost to compute, whenever they were computed: the warm-up's
        # wall time and the sum of the comparison cells' wall times (n_jobs run at once)
        "compute_seconds": {"warmup": float(wres.seconds),
                            "cells": float(pd.to_numeric(results.loc[results["status"] == "ok", "total_seconds"],
                                                         errors="coerce").sum()),
                            "n_cells": int((results["status"] == "ok").sum()), "n_jobs": int(n_jobs)},
    }
    from .store import _jsonable
    atomic_write_text(out / "study.json", json.dumps(_jsonable(study), indent=1))
    _write_report(out, name, wres, results)
    return study


#: method pairs compared seed by seed (the first should reduce memorization more)
PAIRS = (("dynamiccut", "random"), ("dynamiccutmix", "tabcutmix"))


def paired_difference(results: pd.DataFrame, model: str, a: str, b: str) -> dict:
    """Seed-by-seed difference of the relative reduction of method ``a`` and method ``b``.

    Both are measured against the baseline of the same model and seed, so the difference
    per seed, Δ_s = red_a(s) − red_b(s), removes the seed's own variation. Returned: the
    seeds, mean and std (ddof = 1) of Δ, how many seeds have Δ > 0, and a two-sided paired
    t-test p-value (None below 2 seeds; with 3 seeds it can only flag large effects).
    """
    ok = results[(results["status"] == "ok") & (results["model"] == model)]
    red = ok.pivot_table(index="seed", columns="method", values="relative_reduction", aggfunc="first")
    out = {"model": model, "a": a, "b": b, "seeds": [], "mean": None, "std": None, "n_positive": 0, "p": None}
    if a not in red.columns or b not in red.columns:
        return out
    d = (red[a] - red[b]).dropna()
    out.update(seeds=[int(x) for x in d.index], n_positive=int((d > 0).sum()), mean=_float(d.mean()) if len(d) else None,
               std=_float(d.std(ddof=1)) if len(d) > 1 else None)
    if len(d) > 1 and (_float(d.std(ddof=1)) or 0.0) > 1e-12:  # no t-test on constant differences
        from scipy.stats import ttest_1samp
        out["p"] = _float(ttest_1samp(d.to_numpy(dtype=float), 0.0).pvalue)
    return out


def _verdict_pair(pr: dict) -> tuple[str, str]:
    """holds: Δ > 0 in every seed (at least 3); not shown: mixed signs; reversed: Δ < 0 in every seed."""
    n, pos = len(pr["seeds"]), pr["n_positive"]
    if n == 0 or pr["mean"] is None:
        return "not measured", ""
    num = (f"Δ = {pr['mean'] * 100:+.1f} ± {(pr['std'] or 0) * 100:.1f} pts, better in {pos}/{n} seeds"
           + (f", paired t p = {_p(pr['p'])}" if pr["p"] is not None else ""))
    if n >= 3 and pos == n:
        return "holds", num
    if n >= 3 and pos == 0:
        return "reversed", num
    return "not shown", num


def findings(study: dict) -> list[dict]:
    """The paper's claims checked on one dataset's study, each with a verdict and its numbers.

    Criteria (fixed before looking at the results, documented here so the verdicts can be
    checked by hand):

    * heavy tail — the top 10 % of rows produce at least 30 % of all copies (3x uniform);
    * Top memorized earlier / more erratically / with higher early Mem-AUC — the Top median
      (first epoch) or mean (forgetting events, early Mem-AUC) is on the paper's side and
      the two-sided Mann–Whitney p < 0.01;
    * early identification — precision of the DynamicCut set from the first half of the
      warm-up is at least twice the random precision p;
    * DynamicCut beats random pruning, DynamicCutMix beats TabCutMix, and the ranking
      transfers to CTGAN / TVAE — the paired difference of relative reductions is positive
      in every seed (at least 3 seeds); "reversed" when negative in every seed;
    * quality holds — DynamicCut's mean Shape, Trend and MLE are at most 1 point below the
      baseline's (TabDDPM).
    """
    out = []
    summ = study["heavy_tail"]["summary"]
    top10 = _float(summ["concentration"].get("0.1", summ["concentration"].get(0.1)))
    out.append({"claim": "heavy tail: a small Top group gets most copies",
                "verdict": "holds" if top10 is not None and top10 >= 0.30 else "does not hold",
                "numbers": f"top 10 % of rows → {_pct(top10)} % of copies; Gini {_float(summ['heavy_tail']['gini']) or 0:.2f}"})
    top, non = summ["top"], summ["non_top"]
    for claim, key, pkey, better, fmt in (
            ("Top rows are memorized earlier", "median_first_epoch", "p_first_epoch", lambda a, b: a < b, "{:g}"),
            ("Top rows are memorized more erratically (forgetting events)", "forgetting_rate", "p_forgetting",
             lambda a, b: a > b, "{:.2f}"),
            ("Top rows have a higher early Mem-AUC", "early_mem_auc", "p_early_mem_auc", lambda a, b: a > b, "{:.3f}")):
        a, b, pv = _float(top[key]), _float(non[key]), _float(summ[pkey])
        ok = a is not None and b is not None and pv is not None and better(a, b) and pv < 0.01
        out.append({"claim": claim, "verdict": "holds" if ok else "does not hold",
                    "numbers": f"Top {fmt.format(a) if a is not None else '–'} vs Non-Top "
                               f"{fmt.format(b) if b is not None else '–'}, Mann–Whitney p = {_p(pv)}"})
    early = study["early_identification"]
    epochs = study["warmup"]["config"]["epochs"]
    half = [e for e in early if e["T"] <= epochs / 2] or early[:1]
    if half:
        e = half[-1]
        prec, rnd = _float(e["precision"]) or 0.0, _float(e["random_precision"]) or 0.0
        out.append({"claim": "the first half of the warm-up identifies the final Top group",
                    "verdict": "holds" if rnd and prec >= 2 * rnd else "does not hold",
                    "numbers": f"T = {e['T']:g}: precision {prec:.2f} vs {rnd:.2f} at random"})
    pairs = {(pr["model"], pr["a"], pr["b"]): pr for pr in study.get("paired", [])}
    for key, claim in ((("tabddpm", "dynamiccut", "random"), "DynamicCut reduces TabDDPM memorization more than "
                                                             "random pruning of as many rows"),
                       (("tabddpm", "dynamiccutmix", "tabcutmix"), "DynamicCutMix beats TabCutMix (TabDDPM)"),
                       (("ctgan", "dynamiccut", "random"), "the TabDDPM ranking transfers to CTGAN (vs random)"),
                       (("tvae", "dynamiccut", "random"), "the TabDDPM ranking transfers to TVAE (vs random)")):
        if key in pairs:
            verdict, numbers = _verdict_pair(pairs[key])
            out.append({"claim": claim, "verdict": verdict, "numbers": numbers})
    rows = {(r["model"], r["method"]): r for r in study["comparison"]}
    base, dc = rows.get(("tabddpm", "baseline")), rows.get(("tabddpm", "dynamiccut"))
    if base and dc:
        deltas = {m: (_float(dc[f"{m}_mean"]) or 0) - (_float(base[f"{m}_mean"]) or 0) for m in ("shape", "trend", "mle")}
        out.append({"claim": "DynamicCut keeps TabDDPM's quality (Shape, Trend, MLE)",
                    "verdict": "holds" if all(v >= -0.01 for v in deltas.values()) else "does not hold",
                    "numbers": ", ".join(f"{m} {v * 100:+.1f} pts" for m, v in deltas.items())})
    return out


def _write_report(out: Path, name: str, wres, results: pd.DataFrame) -> None:
    """A self-contained HTML report of one dataset's study (figures + results)."""
    from . import plots
    from .dynamiccut import early_identification_curve
    from .report import build_report

    dyn = wres.dynamics
    figs = [plots.copies_histogram(dyn), plots.concentration_plot(dyn), plots.check_curves(wres.per_check),
            plots.first_epoch_plot(dyn), plots.forgetting_plot(dyn), plots.group_band_plot(dyn, "mem_auc"),
            plots.early_identification_plot(early_identification_curve(dyn))]
    ok = results[results["status"] == "ok"]
    if len(ok):
        figs += [plots.comparison_plot(ok, "mem_ratio"), plots.privacy_utility_plot(ok),
                 plots.transferability_plot(ok)]
    html = build_report({"dataset": name, **{k: v for k, v in wres.summary().items() if k != "concentration"}},
                        figs, ok, {"dataset": name, **wres.config.to_dict()}, redacted=True,
                        title=f"memviz study: {name}")
    atomic_write_text(out / "report.html", html)


def run_study(data_dir: str | Path, out: str | Path, scale: str = "cpu", datasets=("adult", "default", "shoppers"),
              seeds=None, device: str = "auto", progress: Callable[[str], None] | None = None,
              n_jobs: int = 2) -> dict:
    """Run the study on every dataset; writes ``OUT/<dataset>/...``, ``OUT/study.json`` and ``OUT/study.md``.

    ``n_jobs`` comparison cells run in parallel (processes, one torch thread each). A rerun
    of the same command reuses the finished warm-ups and cells (e.g. to add seeds).
    """
    if scale not in SCALES:
        raise MemvizError(f"scale {scale!r}: unknown (use {', '.join(SCALES)})")
    sc = SCALES[scale]
    if seeds is not None:
        sc = StudyScale(**{**asdict(sc), "seeds": tuple(seeds)})
    data_dir, out = Path(data_dir), Path(out)
    if not data_dir.is_dir():
        raise MemvizError(f"{data_dir}: data folder not found")
    studies = {}
    for name in datasets:
        folder = data_dir / name
        if not (folder / "train.csv").exists():
            raise MemvizError(f"{folder}: no train.csv (dataset {name!r} not in {data_dir})")
        studies[name] = dataset_study(name, folder, out / name, sc, device=device, progress=progress, n_jobs=n_jobs)
    from .store import _jsonable
    atomic_write_text(out / "study.json", json.dumps(_jsonable(studies), indent=1))
    atomic_write_text(out / "study.md", render_markdown(studies, sc))
    return studies


# ------------------------------------------------------------------- markdown
def _pct(x, signed=False) -> str:
    x = _float(x)
    if x is None:
        return "–"
    return f"{x * 100:+.1f}" if signed else f"{x * 100:.1f}"


def _pm(row: dict, key: str, signed=False) -> str:
    m, s = row.get(f"{key}_mean"), row.get(f"{key}_std")
    if _float(m) is None:
        return "–"
    return _pct(m, signed) + (f" ± {_pct(s)}" if _float(s) is not None else "")


def _num(x) -> str:
    x = _float(x)
    return "–" if x is None else f"{x:g}"


def _p(x) -> str:
    x = _float(x)
    return "–" if x is None else (f"{x:.1e}" if x < 1e-3 else f"{x:.3f}")


def render_markdown(studies: dict, scale: StudyScale) -> str:
    """The study as Markdown: configuration, then the five parts per dataset, with the published figures."""
    L = ["# memviz study: memorization in TabDDPM on adult, default and shoppers", "",
         f"Scale **{scale.name}**: training rows per dataset "
         f"{'all' if scale.max_train is None else f'subsampled to {scale.max_train:,} (seed 0)'}, test rows "
         f"{'all' if scale.max_test is None else f'at most {scale.max_test:,} (seed 1)'}; TabDDPM preset "
         f"`{scale.preset}`; seeds {list(scale.seeds)}; DynamicCut p = {scale.p}, k = {scale.k}. "
         "Regenerate with `memviz study --data-dir ../shared/datasets --out study --scale "
         f"{scale.name}`. Published reference figures are TabDDPM at full scale on a GPU (TabCutMix "
         "paper, mean of 5 runs); CPU-scale runs are not expected to match them.", ""]
    verdicts = {name: findings(s) for name, s in studies.items()}
    if verdicts:
        names = list(verdicts)
        claims = list(dict.fromkeys(f["claim"] for v in verdicts.values() for f in v))
        L += ["## Which of the paper's findings hold at this scale", "",
              "Verdicts follow fixed criteria (`memviz.study.findings`); the numbers behind each are in the "
              "dataset sections below.", "",
              "| finding | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for c in claims:
            cells = []
            for n in names:
                f = next((f for f in verdicts[n] if f["claim"] == c), None)
                cells.append(f["verdict"] if f else "–")
            L.append(f"| {c} | " + " | ".join(cells) + " |")
        L.append("")
    for name, s in studies.items():
        summ = s["heavy_tail"]["summary"]
        L += [f"## {name}", "",
              f"{s['n_train']:,} of {s['n_train_full']:,} training rows, {s['n_test']:,} test rows; warm-up "
              f"{s['warmup']['config']['epochs']} epochs, {s['warmup']['checks']} checks of "
              f"{s['warmup']['config']['n_samples']:,} generated rows; {_cost(s)}. "
              f"Figures: [report.html]({name}/report.html).", ""]
        pc = s["warmup"]["per_check"]
        ref = s.get("reference") or {}
        L += ["### 1. Heavy tail", "",
              f"Final mem ratio {_pct(pc['mem_ratio'][-1])} % (published, full scale: "
              f"{ref.get('tabddpm_mem', '–')} %). Copies per training row over all checks:", "",
              "| copies | " + " | ".join(_bin_labels(s["heavy_tail"]["histogram"]["edges"])) + " |",
              "|---|" + "---|" * len(s["heavy_tail"]["histogram"]["counts"]),
              "| rows | " + " | ".join(f"{c:,}" for c in s["heavy_tail"]["histogram"]["counts"]) + " |", "",
              "| top share of rows | share of all copies |", "|---|---|"]
        for k, v in summ["concentration"].items():
            L.append(f"| {float(k) * 100:.0f} % | {_pct(v)} % |")
        ht = summ["heavy_tail"]
        L += ["", f"Gini of copy counts {_float(ht['gini']) or 0:.3f}; {_pct(ht['zero_share'])} % of rows never "
                  f"copied; the most-copied row has {ht['max_count']} copies.", "",
              "### 2. Top vs Non-Top", "",
              "| group | rows | ever memorized | median first epoch | forgetting events / row | early Mem-AUC |",
              "|---|---|---|---|---|---|"]
        for g in ("top", "non_top"):
            t = summ[g]
            L.append(f"| {g.replace('_', '-')} | {t['n_rows']:,} | {t['n_memorized']:,} | "
                     f"{_num(t['median_first_epoch'])} | "
                     f"{_float(t['forgetting_rate']) or 0:.3f} | {_float(t['early_mem_auc']) or 0:.4f} |")
        L += ["", f"Mann–Whitney U (two-sided) p-values: first epoch {_p(summ['p_first_epoch'])}, forgetting "
                  f"events {_p(summ['p_forgetting'])}, early Mem-AUC {_p(summ['p_early_mem_auc'])}.", "",
              "### 3. Early identification (DynamicCut set from the first T epochs vs the final Top group)", "",
              "| T (epochs) | checks used | precision | recall | Jaccard | random precision |", "|---|---|---|---|---|---|"]
        for e in s["early_identification"]:
            L.append(f"| {e['T']:g} | {e['n_checks_used']} | {_float(e['precision']) or 0:.3f} | "
                     f"{_float(e['recall']) or 0:.3f} | {_float(e['jaccard']) or 0:.3f} | "
                     f"{_float(e['random_precision']) or 0:.3f} |")
        L += ["", f"### 4. Comparison (mean ± std over seeds {list(scale.seeds)}, in %)", "",
              "| model | method | mem ratio | rel. reduction | mem vs kept rows | Shape | Trend | MLE | MLE real |",
              "|---|---|---|---|---|---|---|---|---|"]
        for r in s["comparison"]:
            L.append(f"| {r['model']} | {r['method']} | {_pm(r, 'mem_ratio')} | "
                     f"{'' if r['method'] == 'baseline' else _pm(r, 'relative_reduction', True)} | "
                     f"{_pm(r, 'mem_ratio_pruned')} | {_pm(r, 'shape')} | {_pm(r, 'trend')} | "
                     f"{_pm(r, 'mle')} | {_pct(r.get('mle_real_mean'))} |")
        if ref:
            L += ["", f"Published (TabDDPM, full scale): mem {ref['tabddpm_mem']} %, + TabCutMix "
                      f"{ref['tabcutmix_mem']} %, + TabCutMixPlus {ref['tabcutmixplus_mem']} %; MLE / Shape / Trend "
                      f"{ref['mle']} / {ref['shape']} / {ref['trend']}; CTGAN / TVAE mem {ref['ctgan_mem']} / "
                      f"{ref['tvae_mem']} %."]
        L += ["", "### 5. Transferability of the TabDDPM ranking (relative reduction of the mem ratio, %)", "",
              "| model | DynamicCut ranking | random pruning (same count) |", "|---|---|---|"]
        for t in s["transferability"]:
            L.append(f"| {t['model']} | {_pm(t, 'dynamiccut', True)} | {_pm(t, 'random', True)} |")
        L += ["", "### Findings", "", "| finding | verdict | numbers |", "|---|---|---|"]
        for f in verdicts[name]:
            L.append(f"| {f['claim']} | **{f['verdict']}** | {f['numbers']} |")
        L.append("")
    return "\n".join(L)


def _cost(s: dict) -> str:
    c = s.get("compute_seconds")
    if not c:
        return f"study time {s['seconds'] / 60:.1f} min"
    return (f"compute: warm-up {c['warmup'] / 60:.1f} min, {c['n_cells']} comparison cells "
            f"{c['cells'] / 60:.1f} min summed, {c.get('n_jobs', 2)} at a time")


def _bin_labels(edges) -> list[str]:
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        out.append(str(a) if b == a + 1 else (f"{a}+" if b >= 10 ** 9 else f"{a}–{b - 1}"))
    return out


def cli_study(args) -> dict:
    """``memviz study``: run it, print where the outputs are."""
    import sys

    t0 = time.perf_counter()
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()] if args.seeds else None
    except ValueError:
        raise MemvizError(f"--seeds: expected integers separated by commas, got {args.seeds!r}") from None
    studies = run_study(args.data_dir, args.out, scale=args.scale, datasets=datasets, seeds=seeds,
                        device=args.device, progress=lambda m: sys.stderr.write(m + "\n"),
                        n_jobs=getattr(args, "n_jobs", 2))
    return {"out": str(args.out), "markdown": str(Path(args.out) / "study.md"), "datasets": list(studies),
            "final_mem_ratio": {k: v["warmup"]["per_check"]["mem_ratio"][-1] for k, v in studies.items()},
            "seconds": round(time.perf_counter() - t0, 1)}
