"""Differentially private statistics of TabDDPM's column transforms, with OpenDP (``pip install 'memviz[dp]'``).

A private TabDDPM (:mod:`memviz.models.privacy`) never fits its column transforms on the raw rows: every statistic
the transforms need is either **public** (given by the user: a numerical column's bounds, a categorical column's
categories) or released here by an OpenDP measurement, each under the add/remove-one-row neighbouring relation
(OpenDP's ``symmetric_distance`` with ``d_in = 1``, the relation of DP-SGD's Poisson-sampled RDP accountant):

``range`` (a numerical column without public bounds)
    a **thresholded histogram of magnitudes** (OpenDP ``make_count_by`` then ``make_laplace_threshold``,
    Rogers 2023): each value is counted in its bucket ``sign · [b^k, b^(k+1))`` (b = √2, :data:`LOG_BASE`; ``|x| <
    2^-20`` is the bucket 0), Laplace noise of scale ``1 / ε_q`` is added to every count and only buckets whose
    noisy count reaches the threshold ``τ`` are released; the bounds ``[lo, hi]`` are the outer edges of the
    released buckets (``⌊lo⌋``, ``⌈hi⌉`` for an integer column). A bucket holding one row is released with
    probability at most ``δ_q`` (``τ ≈ 1 + ln(1 / (2 δ_q)) / ε_q``): **an outlying value never sets a bound**; the
    training values are clipped to ``[lo, hi]`` before the model sees them.
``histogram`` (every numerical column)
    the counts of ``m`` equal-width bins over ``[lo, hi]`` (OpenDP ``make_find_bin``, ``make_count_by_categories``,
    ``make_laplace`` of scale ``1 / ε_q``: pure ε_q-DP), ``m = clip(⌊N ε_q / 10⌋, 1, 200)`` (few bins when the
    noise would swamp many); negative noisy counts become 0, the bins share a floor of 0.1 % of the total so the CDF
    increases strictly, and the quantile transform's quantiles are the inverse of that piecewise-linear CDF at its
    references. The imputed value of a missing number is its 0.5 quantile (the DP median), not the mean.
``categories`` (a categorical column without public categories)
    a thresholded histogram of its values (missing counted as one more value), as for ``range``: a **category held
    by fewer than about τ rows is never released**; a training row holding one is given the released category of
    the largest noisy count (the column's DP mode) before the model sees it.

**Budget.** The preprocessing gets ``ε_pre = share · ε`` and ``δ_pre = share · δ`` of the total (ε, δ)
(``share``: ``PrivacyConfig.preprocessing``, default :data:`PREPROCESSING_SHARE`); DP-SGD gets the rest. ε_pre is
split equally over the queries above (one per statistic and column), δ_pre equally over the thresholded ones.
Every query's (ε, δ) is OpenDP's own privacy map at ``d_in = 1`` (checked to stay within its share). By **basic
sequential composition** the release of every statistic is (Σ ε_q, Σ δ_q)-DP, and with DP-SGD's
(ε_sgd, δ_sgd) the model is (ε_pre + ε_sgd, δ_pre + δ_sgd)-DP: the one ε and δ reported
(:func:`memviz.models.privacy.epsilon_spent`). Mapping a row through the released transform (clipping, the mode
for a rare category) is a per-row function, so the table DP-SGD trains on is neighbouring whenever the raw tables
are. With ``share = 0`` nothing is spent here and every column must be public: numbers then use a uniform CDF over
their public bounds (a min-max map) and are imputed with the bounds' midpoint.

**Assumed public** (not protected): the column names, kinds and dtypes (the schema), the number of training rows N
(as DP-SGD's sample rate ``B / N`` assumes), the bounds and categories the user gives, and these fixed rules
(b, τ's formula, m's formula). An integer column is one of an integer dtype (the data are not read for it).
OpenDP draws its noise from the operating system's cryptographic generator: it is never seeded, not even by
``noise_seed``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadTable, MissingExtra

#: the share of the total (ε, δ) the preprocessing spends when none is given
PREPROCESSING_SHARE = 0.1
#: the ratio of consecutive magnitude buckets of the ``range`` release
LOG_BASE = math.sqrt(2.0)
#: magnitudes below this are the bucket 0
ZERO = 2.0 ** -20
#: the most bins of a ``histogram`` release
MAX_BINS = 200
#: each bin's floor, as a share of the histogram's total (the CDF then increases strictly)
BIN_FLOOR = 1e-3
MISSING_KEY = "\x00missing"
COMPOSITION = "basic sequential composition: ε = ε_pre + ε_sgd, δ = δ_pre + δ_sgd"


@dataclass(frozen=True)
class Release:
    """One differentially private query of the preprocessing."""

    column: str
    statistic: str      # "range", "histogram" or "categories"
    mechanism: str
    epsilon: float      # OpenDP's privacy map at d_in = 1
    delta: float
    detail: str = ""    # the threshold, the bins

    def to_dict(self) -> dict:
        return {"column": self.column, "statistic": self.statistic, "mechanism": self.mechanism,
                "epsilon": self.epsilon, "delta": self.delta, "detail": self.detail}


def opendp():
    """OpenDP's prelude with its ``contrib`` features on, or a one-line MemvizError."""
    try:
        import opendp.prelude as dp  # lazy: opendp, an extra (dp)
    except ImportError:
        raise MissingExtra("privacy: the private preprocessing needs OpenDP (pip install 'memviz[dp]')") from None
    dp.enable_features("contrib")
    return dp


def value_key(v) -> str:
    """The text a category is counted under (its type and value; missing: :data:`MISSING_KEY`)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
        return MISSING_KEY
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return f"bool:{v}"
    if isinstance(v, (int, float)):
        f = float(v)
        return f"num:{int(f)}" if f.is_integer() else f"num:{f!r}"
    return f"{type(v).__name__}:{v}"


def threshold_for(epsilon: float, delta: float) -> int:
    """The smallest threshold τ at which OpenDP's Laplace threshold of scale ``1 / epsilon`` on a count-by
    (one row in one key) is (``epsilon``, ≤ ``delta``)-DP."""
    dp = opendp()
    scale = 1.0 / epsilon
    meas = dp.t.make_count_by(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance(), TV=int)
    tau = max(2, int(math.ceil(1 + scale * math.log(1 / (2 * delta)))) - 2)
    while (meas >> dp.m.then_laplace_threshold(scale=scale, threshold=tau)).map(1)[1] > delta:
        tau += 1
    return tau


def thresholded_counts(keys: list[str], epsilon: float, delta: float) -> tuple[dict, Release]:
    """The keys whose Laplace-noised count reaches the threshold, with their noisy counts (module docstring)."""
    dp = opendp()
    tau = threshold_for(epsilon, delta)
    meas = (dp.t.make_count_by(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance(), TV=int)
            >> dp.m.then_laplace_threshold(scale=1.0 / epsilon, threshold=tau))
    eps, dlt = meas.map(1)
    _within(eps, epsilon, dlt, delta)
    return dict(meas(list(keys))), Release("", "", "Laplace threshold on counts by key (OpenDP)", float(eps),
                                           float(dlt), f"threshold {tau} rows, noise scale {1 / epsilon:.4g}")


def bucket_key(x: float) -> str:
    """The magnitude bucket of ``x``: ``"0"``, ``"+k"`` for ``[b^k, b^(k+1))``, ``"-k"`` for ``(-b^(k+1), -b^k]``."""
    if abs(x) < ZERO:
        return "0"
    k = math.floor(math.log(abs(x)) / math.log(LOG_BASE))
    return f"{'+' if x > 0 else '-'}{k}"


def bucket_edges(key: str) -> tuple[float, float]:
    """The interval ``[low, high]`` of a bucket key."""
    if key == "0":
        return 0.0, 0.0
    k = int(key[1:])
    a, b = LOG_BASE ** k, LOG_BASE ** (k + 1)
    return (a, b) if key[0] == "+" else (-b, -a)


def private_range(column: str, x: np.ndarray, integer: bool, epsilon: float, delta: float) -> tuple[float, float, Release]:
    """``(lo, hi)`` from the thresholded histogram of magnitudes of the observed values ``x`` (module docstring)."""
    counts, rel = thresholded_counts([bucket_key(float(v)) for v in x], epsilon, delta)
    if not counts:
        raise BadTable(f"privacy: column {column!r}: no range of values holds enough rows to be released at "
                       f"ε = {epsilon:.3g} ({rel.detail}); give its bounds as public knowledge (privacy bounds) "
                       "or raise ε or the preprocessing share")
    edges = [bucket_edges(k) for k in counts]
    lo, hi = min(e[0] for e in edges), max(e[1] for e in edges)
    if integer:
        lo, hi = float(math.floor(lo)), float(math.ceil(hi))
    return lo, hi, Release(column, "range", rel.mechanism, rel.epsilon, rel.delta, rel.detail)


def n_bins(n_rows: int, epsilon: float) -> int:
    """``m = clip(⌊N ε / 10⌋, 1, MAX_BINS)``: bins a histogram of noise scale 1/ε can afford on N rows."""
    return int(min(MAX_BINS, max(1, math.floor(n_rows * epsilon / 10))))


def private_histogram(column: str, x: np.ndarray, lo: float, hi: float, n_rows: int,
                      epsilon: float) -> tuple[np.ndarray, np.ndarray, Release]:
    """``(edges [m + 1], noisy counts [m])`` of ``x`` clipped to ``[lo, hi]`` (module docstring)."""
    dp = opendp()
    m = n_bins(n_rows, epsilon)
    edges = np.linspace(lo, hi, m + 1) if hi > lo else np.array([lo, hi])
    meas = (dp.t.make_find_bin(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(),
                               edges=[float(e) for e in edges[1:-1]])
            >> dp.t.then_count_by_categories(categories=list(range(len(edges) - 1)), null_category=False)
            >> dp.m.then_laplace(scale=1.0 / epsilon))
    eps = meas.map(1)
    _within(eps, epsilon, 0.0, 0.0)
    counts = np.asarray(meas([float(v) for v in np.clip(x, lo, hi)]), dtype=np.float64)
    return edges, counts, Release(column, "histogram", "Laplace noise on bin counts (OpenDP)", float(eps), 0.0,
                                  f"{len(edges) - 1} bins over [{lo:g}, {hi:g}], noise scale {1 / epsilon:.4g}")


def cdf_quantiles(edges: np.ndarray, counts: np.ndarray | None, references: np.ndarray) -> np.ndarray:
    """The quantiles at ``references`` of the piecewise-linear CDF of a (noisy) histogram; None counts: uniform."""
    if edges[-1] <= edges[0]:
        return np.full(len(references), float(edges[0]))
    c = np.ones(len(edges) - 1) if counts is None else np.clip(counts, 0, None)
    total = c.sum()
    c = c + BIN_FLOOR * max(total, 1.0) / len(c)
    cdf = np.concatenate([[0.0], np.cumsum(c)]) / (c.sum())
    return np.interp(references, cdf, edges)


def split_budget(epsilon: float, delta: float, n_queries: int, n_thresholded: int) -> tuple[float, float]:
    """(ε per query, δ per thresholded query) of a preprocessing budget (ε, δ) over its queries."""
    return epsilon / max(n_queries, 1), delta / max(n_thresholded, 1)


def _within(eps: float, epsilon: float, dlt: float, delta: float) -> None:
    """OpenDP's map stays within the query's share (a relative float slack of 1e-9)."""
    if eps > epsilon * (1 + 1e-9) or dlt > delta * (1 + 1e-9):
        raise BadOption(f"privacy: a preprocessing query spends ({eps:g}, {dlt:g}) over its share "
                        f"({epsilon:g}, {delta:g})")


def check_releasable(schema, n_rows: int, *, epsilon: float, delta: float, bounds: dict | None = None,
                     categories: dict | None = None) -> None:
    """Before any work or release, from public facts only (the schema, N, the budget): a column whose range or
    categories would have to be released with a threshold above N (nothing could ever be released) is one
    line naming it."""
    from memviz.models.transforms import categorical_columns  # lazy: torch, sklearn; the privacy settings load dpstats without them

    bounds, categories = dict(bounds or {}), dict(categories or {})
    num_cols, cat_cols = list(schema.distance_numerical), categorical_columns(schema)
    ranges = [c for c in num_cols if c not in bounds]
    discovered = [c for c in cat_cols if c not in categories]
    if not (ranges or discovered):
        return
    if epsilon <= 0:
        missing = (ranges + discovered)[0]
        raise BadOption(f"privacy: preprocessing share 0 needs every column public: column {missing!r} has no "
                        f"public {'bounds' if missing in ranges else 'categories'}")
    eps_q, delta_q = split_budget(epsilon, delta, len(ranges) + len(num_cols) + len(discovered),
                                  len(ranges) + len(discovered))
    tau = threshold_for(eps_q, delta_q)
    if tau > n_rows:
        col = (ranges + discovered)[0]
        what = "bounds" if col in ranges else "categories"
        raise BadTable(f"privacy: column {col!r}: releasing its {'range' if what == 'bounds' else what} at "
                       f"ε = {eps_q:.3g} needs at least {tau:,} rows holding it, more than the {n_rows:,} "
                       f"training rows; give the {what} of {col!r} (and of the other columns) as public in the "
                       "schema, or raise ε or the preprocessing share")


def public_report(numerical: list, categorical: list, bounds: dict, categories: dict) -> dict:
    """What the preprocessing takes as public: the schema, N, and the columns whose bounds or categories were given."""
    return {"schema": "column names, kinds and dtypes; the number of training rows N",
            "bounds": [c for c in numerical if c in bounds],
            "categories": [c for c in categorical if c in categories]}


def private_transform(data: pd.DataFrame, schema, *, epsilon: float, delta: float, bounds: dict | None = None,
                      categories: dict | None = None):
    """A :class:`memviz.models.transforms.TabularTransform` whose statistics are public or released with
    (≤ ``epsilon``, ≤ ``delta``)-DP (module docstring); its ``privacy`` holds every release and their sums."""
    from memviz.models.transforms import (  # lazy: torch, sklearn; the privacy settings load dpstats without them
        TabularTransform,
        categorical_columns,
        n_quantiles_for,
        numerical_spec,
    )

    bounds, categories = dict(bounds or {}), dict(categories or {})
    num_cols = list(schema.distance_numerical)
    cat_cols = categorical_columns(schema)
    for col in [*bounds, *categories]:
        if col not in num_cols and col not in cat_cols:
            raise BadOption(f"privacy: public {'bounds' if col in bounds else 'categories'} for column {col!r}, "
                            "which the model does not train on (a numerical column takes bounds, a categorical "
                            "one categories)")
    for col in bounds:
        if col not in num_cols:
            raise BadOption(f"privacy: column {col!r} is categorical: give it categories, not bounds")
    for col in categories:
        if col not in cat_cols:
            raise BadOption(f"privacy: column {col!r} is numerical: give it bounds, not categories")
    n = len(data)
    ranges = [c for c in num_cols if c not in bounds]
    discovered = [c for c in cat_cols if c not in categories]
    n_queries = (len(ranges) + len(num_cols) + len(discovered)) if epsilon > 0 else 0
    if epsilon <= 0 and (ranges or discovered):
        missing = (ranges + discovered)[0]
        raise BadOption(f"privacy: preprocessing share 0 needs every column public: column {missing!r} has no "
                        f"public {'bounds' if missing in ranges else 'categories'}")
    eps_q, delta_q = split_budget(epsilon, delta, n_queries, len(ranges) + len(discovered))
    releases: list[Release] = []
    references = np.linspace(0, 1, n_quantiles_for(n))
    numerical, quantiles = [], []
    for col in num_cols:
        spec, obs = numerical_spec(data[col], col)
        spec["integer"] = bool(pd.api.types.is_integer_dtype(data[col]))      # the dtype, not the values
        if col in bounds:
            lo, hi = bounds[col]
        else:
            lo, hi, rel = private_range(col, obs, spec["integer"], eps_q, delta_q)
            releases.append(rel)
        if epsilon > 0:
            edges, counts, rel = private_histogram(col, obs, lo, hi, n, eps_q)
            releases.append(rel)
        else:
            edges, counts = np.array([lo, hi], dtype=np.float64), None
        q = cdf_quantiles(edges, counts, references)
        spec.update(min=float(lo), max=float(hi), mean=float(np.interp(0.5, references, q)), clip=True)
        numerical.append(spec)
        quantiles.append(q)
    categorical = []
    for col in cat_cols:
        s = data[col]
        keys = [value_key(v) for v in s.astype(object)]
        by_key = {k: v for k, v in zip(keys, s.astype(object))}
        if col in categories:
            allowed = {value_key(v): v for v in categories[col]}
            bad = next((v for k, v in zip(keys, s.astype(object)) if k not in allowed), None)
            if any(k not in allowed for k in keys):
                raise BadTable(f"privacy: column {col!r}: value {bad!r} is not among the categories given as "
                               "public (add it, or null for missing values)")
            kept = {k: allowed[k] for k in allowed}
            fallback = None
        else:
            counts, rel = thresholded_counts(keys, eps_q, delta_q)
            releases.append(Release(col, "categories", rel.mechanism, rel.epsilon, rel.delta, rel.detail))
            if not counts:
                raise BadTable(f"privacy: column {col!r}: no category holds enough rows to be released at "
                               f"ε = {eps_q:.3g} ({rel.detail}); give its categories as public knowledge "
                               "(privacy categories) or raise ε or the preprocessing share")
            kept = {k: by_key[k] for k in counts}
            fallback = max(counts, key=lambda k: (counts[k], k))
        missing = MISSING_KEY in kept
        values = [v for k, v in kept.items() if k != MISSING_KEY]
        spec = _categorical_spec(s, col, values, missing)
        if fallback is not None:
            spec["fallback"] = None if fallback == MISSING_KEY else _plain(kept[fallback])
        categorical.append(spec)
    q = np.stack(quantiles, axis=1) if quantiles else np.zeros((0, 0))
    record = {"epsilon": float(sum(r.epsilon for r in releases)), "delta": float(sum(r.delta for r in releases)),
              "releases": [r.to_dict() for r in releases],
              "public": public_report(num_cols, cat_cols, bounds, categories)}
    return TabularTransform(tuple(numerical), tuple(categorical), np.asarray(q, dtype=np.float64),
                            np.asarray(references if quantiles else np.zeros(0), dtype=np.float64),
                            tuple(schema.columns), record)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _categorical_spec(s: pd.Series, col: str, values: list, missing: bool) -> dict:
    from memviz.models.transforms import categorical_spec  # lazy: torch, sklearn; the privacy settings load dpstats without them

    return categorical_spec(s, col, [_plain(v) for v in values], missing)
