"""memviz explain: why a warm-up run's copied rows are the ones it copies (risk factors, a model, SHAP).

Writes OUT/factors.csv (one row per training row, keyed by the user's row key: its risk factors, whether the
warm-up put it in the Top group, the model's out-of-fold score and why it is at risk), OUT/shap.csv (each row's
SHAP value per feature) and OUT/explanation.json (the model's held-out AUC with its interval and its strength in
words, what carries it, and the column values that carry memorization). The folder is written as a unit.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.app import why
from memviz.app.runs import load_run
from memviz.commands.common import add_quiet, add_raw_csv, emit
from memviz.folders import folder_unit
from memviz.io import atomic_write_json, export_csv, to_jsonable
from memviz.risk.explanation import value_attributions
from memviz.verdict.words import explanation_sentence, with_sentence

FILES = ("factors.csv", "shap.csv", "explanation.json")


def register(sub, command) -> None:
    sp = command("explain")
    sp.add_argument("run", help="the warm-up run folder")
    sp.add_argument("--out", required=True, help="folder for factors.csv, shap.csv and explanation.json")
    add_quiet(sp, "print nothing but the JSON line (explain draws no progress bar)")
    sp.add_argument("--raw-values", action="store_true",
                    help="name the rows' values in the reasons and the value table (default: redacted ranges and "
                         "hashes, as in the report)")
    sp.add_argument("--factors-only", action="store_true",
                    help="the risk factors alone (from the training table; no model, no SHAP)")
    add_raw_csv(sp)
    sp.set_defaults(func=run)


def run(args) -> None:
    t0 = time.perf_counter()
    view = load_run(args.run)
    redacted = not args.raw_values
    factors = why.run_factors(view)
    wv = why.WhyView(factors, None, "not asked (--factors-only)") if args.factors_only else why.why_of(view, factors)
    ex = wv.explanation
    train = view.train
    dyn = view.dynamics
    frame = factors.frame.reset_index()
    frame["top"] = pd.Series(np.asarray(dyn.top, dtype=bool), index=np.asarray(dyn.row_ids)).reindex(
        frame["row_id"]).to_numpy()
    if ex is not None:
        frame["model_score"] = ex.oof.reindex(frame["row_id"]).to_numpy()
    frame["why"] = [why.row_risk_sentence(view, factors, int(i), redacted=redacted) for i in frame["row_id"]]
    riskiest = frame.sort_values("model_score" if ex is not None else "isolation", ascending=False,
                                 kind="stable").head(5)
    names = train.key_texts(riskiest["row_id"].to_numpy(), redacted=redacted)
    frame = train.with_keys(frame, keep_row_id=train.key is None)
    out = Path(args.out)
    with folder_unit(out, names=FILES) as stage:
        export_csv(stage / "factors.csv", frame, raw=args.raw_csv)
        record = {"run": str(args.run), "n_rows": len(train), "k": factors.k, "distance": factors.distance,
                  "factors_seconds": factors.seconds, "explanation": None, "reason": wv.error or None}
        if ex is not None:
            shap = train.with_keys(ex.shap.reset_index(), keep_row_id=train.key is None)
            export_csv(stage / "shap.csv", shap, raw=args.raw_csv)
            values = value_attributions(train, ex, redacted=redacted).head(20)
            record["explanation"] = {**with_sentence(ex.to_dict(), explanation_sentence(ex), "importance"), "features_in_words": why.feature_lines(ex),
                                     "values": values.to_dict(orient="records"), "seconds": ex.seconds}
        atomic_write_json(stage / "explanation.json", to_jsonable(record))
    emit({"run": str(args.run), "out": str(out), "auc": None if ex is None else ex.auc,
          "auc_low": None if ex is None else ex.auc_low, "auc_high": None if ex is None else ex.auc_high,
          "strength": None if ex is None else ex.strength, "reason": wv.error or None,
          "sentence": None if ex is None else explanation_sentence(ex),
          "features": [] if ex is None else ex.importance.head(5)["feature"].tolist(),
          "riskiest": [{"row": name, "why": w} for name, w in zip(names, riskiest["why"])],
          "files": {f: str(out / f) for f in FILES if ex is not None or f != "shap.csv"},
          "seconds": round(time.perf_counter() - t0, 3)})
