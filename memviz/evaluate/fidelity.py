"""Per-column fidelity beside Shape, and Trend as SDMetrics' QualityReport ships it.

Per column c of the schema (real values R = the training column, synthetic values S), missing
values dropped for numericals and a category of their own for categoricals:

* numerical: the 1-Wasserstein distance **on the training column's range**::

      W(c) = W₁(R, S) / (max R − min R),   W₁(R, S) = ∫ |F_R(x) − F_S(x)| dx

  (``scipy.stats.wasserstein_distance`` of the raw values, divided by the training range; a
  constant training column is divided by 1). W = 0.1 means the synthetic values would have to
  move a tenth of the training range on average to match; it can exceed 1.
* categorical: the Jensen–Shannon divergence in bits::

      JSD(c) = ½ KL(P_R ‖ M) + ½ KL(P_S ‖ M),  M = ½ (P_R + P_S)   ∈ [0, 1]

  (``scipy.spatial.distance.jensenshannon(P_R, P_S, base=2) ** 2``: scipy returns the
  distance, its square root), over the union of the categories seen in either table.

:data:`REFERENCE` holds the lines the DynamicCut write-up draws (0.1 and 0.05): references
to read a column against, not verdicts; memviz never calls a column good or bad by them.
The table-level figures of a comparison are the mean and the largest over the columns
(:func:`fidelity_figures`).

**Trend as shipped.** memviz's ``trend`` averages every column pair, as the papers' SDMetrics
did. SDMetrics' QualityReport since 0.20 (0.32 installed) averages only the pairs whose real
association is strong: |Pearson ρ| above 0.5 for two numericals, Cramér's V above 0.3
otherwise (``real_correlation_threshold``, ``real_association_threshold``); the weak pairs,
which score lowest, are left out, so its Trend reads higher. Fresh real rows (1,000 test rows
scored against 3,000 training rows): default (credit) 0.967 as shipped against 0.885 over all
pairs, shoppers 0.967 against 0.950, the Adult sample 0.939 against 0.931. :func:`report_trend`
is the shipped figure, from the report itself with its own thresholds (NaN when no pair meets
them: a table of independent columns); results tables carry it as ``trend_report`` beside
``trend``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.spatial.distance import jensenshannon
from scipy.stats import wasserstein_distance

from memviz.evaluate.synthetic import canonical_frame, synthetic_frame
from memviz.tables.data import Table

#: the write-up's reference lines, per kind of column
REFERENCE = {"wasserstein": 0.1, "jsd": 0.05}
FIDELITY_COLUMNS = ["column", "kind", "metric", "value", "reference"]


def column_fidelity(train: Table, synthetic) -> pd.DataFrame:
    """One row per column: ``column, kind (numerical / categorical), metric (wasserstein / jsd),
    value, reference`` (module docstring), in schema order."""
    schema = train.schema
    real = canonical_frame(train.data, schema)
    syn = canonical_frame(synthetic_frame(train, synthetic), schema)
    numerical, categorical = set(schema.distance_numerical), set(schema.distance_categorical)
    rows = []
    for c in schema.columns:
        if c in numerical:
            r = real[c].to_numpy(np.float64)
            s = syn[c].to_numpy(np.float64)
            r, s = r[np.isfinite(r)], s[np.isfinite(s)]
            if r.size == 0 or s.size == 0:
                value = np.nan
            else:
                span = float(r.max() - r.min()) or 1.0
                value = float(wasserstein_distance(r, s)) / span
            rows.append((c, "numerical", "wasserstein", value, REFERENCE["wasserstein"]))
        elif c in categorical:
            pr = real[c].fillna("\0missing").value_counts()
            ps = syn[c].fillna("\0missing").value_counts()
            cats = pr.index.union(ps.index)
            p = pr.reindex(cats, fill_value=0).to_numpy(np.float64)
            q = ps.reindex(cats, fill_value=0).to_numpy(np.float64)
            value = float(jensenshannon(p, q, base=2) ** 2) if p.sum() and q.sum() else np.nan
            rows.append((c, "categorical", "jsd", value, REFERENCE["jsd"]))
    return pd.DataFrame(rows, columns=FIDELITY_COLUMNS)


def fidelity_figures(per_column: pd.DataFrame) -> dict:
    """``wasserstein_mean``, ``wasserstein_max``, ``jsd_mean``, ``jsd_max`` (NaN where the table has
    no column of that kind) and ``fidelity_worst``: the column with the largest value relative to
    its reference (its name, for people; "" when none)."""
    out = {}
    for metric in ("wasserstein", "jsd"):
        v = per_column.loc[per_column["metric"] == metric, "value"].to_numpy(np.float64)
        v = v[np.isfinite(v)]
        out[f"{metric}_mean"] = float(v.mean()) if v.size else np.nan
        out[f"{metric}_max"] = float(v.max()) if v.size else np.nan
    rel = per_column["value"].to_numpy(np.float64) / per_column["reference"].to_numpy(np.float64)
    ok = np.isfinite(rel)
    out["fidelity_worst"] = str(per_column["column"].to_numpy()[ok][np.argmax(rel[ok])]) if ok.any() else ""
    return out


def report_trend(train: Table, synthetic) -> float:
    """Column Pair Trends of SDMetrics' QualityReport with its shipped thresholds (module docstring)."""
    schema = train.schema
    real = canonical_frame(train.data, schema)
    syn = canonical_frame(synthetic_frame(train, synthetic), schema)
    columns = {c: {"sdtype": "numerical"} for c in schema.distance_numerical}
    columns.update({c: {"sdtype": "categorical"} for c in schema.distance_categorical})
    metadata = {"columns": {c: columns[c] for c in schema.columns if c in columns}}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", module=r"sdmetrics(\..*)?$")
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        from sdmetrics.reports.single_table import QualityReport  # lazy: sdmetrics, an extra (sdv)

        report = QualityReport()                    # its own thresholds, untouched
        report.generate(real, syn, metadata, verbose=False)
        props = report.get_properties().set_index("Property")["Score"]
    return float(props.get("Column Pair Trends", np.nan))
