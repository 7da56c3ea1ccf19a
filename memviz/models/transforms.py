"""Column transforms of TabDDPM: table -> model space -> table.

Numerical columns (a regression target included)
    1. a missing value is replaced by the column mean over the training rows
       (``x̃ = mean(x[observed])``), as the reference TabDDPM pipeline does;
    2. a quantile transform to a standard normal (scikit-learn ``QuantileTransformer``,
       ``n_quantiles = max(min(N // 30, 1000), 10)``, ``output_distribution="normal"``,
       no subsampling): ``z = Φ⁻¹(F̂(x̃))`` with ``F̂`` the piecewise-linear empirical CDF;
    3. back: ``x = F̂⁻¹(Φ(z))``, clipped to the training range ``[min, max]``; integer
       columns (an integer dtype, or a float column whose training values are all whole
       numbers) are rounded, and the original dtype is restored.

Categorical columns (a classification target first, then ``schema.categorical``)
    Ordinal codes ``0..K-1`` over the sorted observed values; when the training column
    has missing values, "missing" is one more category (the last code), sampled back as
    NaN. Values come back with their original Python types and the column's dtype
    (integer-coded categories as ints, strings as strings, a pandas ``category`` dtype
    with its categories).

The fitted state is plain data (lists, numbers, strings and float64 tensors), so it
can be stored with ``torch.save`` and read with ``torch.load(weights_only=True)``; no
scikit-learn object is ever pickled.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.preprocessing import QuantileTransformer

from memviz.errors import BadTable
from memviz.tables.schema import Schema


def n_quantiles_for(n_rows: int) -> int:
    """``max(min(N // 30, 1000), 10)``, the reference TabDDPM choice."""
    return max(min(n_rows // 30, 1000), 10)


def _plain(value):
    """A numpy scalar as the Python scalar it holds (JSON-able); other values unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def _odd_dtype(s: pd.Series) -> bool:
    """Dates, durations, periods and intervals: not storable as plain category values."""
    return bool(pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s)
                or isinstance(s.dtype, (pd.PeriodDtype, pd.IntervalDtype)))


def _sorted_values(values: list) -> list:
    try:
        return sorted(values)
    except TypeError:  # mixed types in an object column
        return sorted(values, key=lambda v: (type(v).__name__, repr(v)))


def _quantile_transformer(quantiles: np.ndarray, references: np.ndarray) -> QuantileTransformer:
    """A fitted ``QuantileTransformer`` rebuilt from its two arrays (no pickling)."""
    qt = QuantileTransformer(n_quantiles=len(references), output_distribution="normal")
    qt.quantiles_ = np.asarray(quantiles, dtype=np.float64)      # [n_quantiles, n_num]
    qt.references_ = np.asarray(references, dtype=np.float64)    # [n_quantiles]
    qt.n_quantiles_ = len(references)
    qt.n_features_in_ = qt.quantiles_.shape[1]
    return qt


def categorical_columns(schema: Schema) -> list[str]:
    """The categorical columns of the model: a classification target first, then ``schema.categorical``."""
    return ([schema.target] if schema.target_is_categorical else []) + list(schema.categorical)


def numerical_spec(s: pd.Series, col: str) -> tuple[dict, np.ndarray]:
    """A numerical column's spec (``name``, ``dtype``, ``integer``, ``min``, ``max``, ``mean`` of the values
    read as they are) and its observed values; a one-line BadTable for a column that is not numbers."""
    if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        raise BadTable(f"TabDDPM: column {col!r}: numerical column of dtype {s.dtype} is not numeric")
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    obs = v[~np.isnan(v)]
    if len(obs) == 0:
        raise BadTable(f"TabDDPM: column {col!r}: all values are missing")
    integer = bool(pd.api.types.is_integer_dtype(s) or np.all(obs == np.round(obs)))
    return {"name": col, "dtype": str(s.dtype), "integer": integer, "min": float(obs.min()),
            "max": float(obs.max()), "mean": float(obs.mean())}, obs


def categorical_spec(s: pd.Series, col: str, values: list, missing: bool) -> dict:
    """A categorical column's spec from its categories ``values`` (sorted here) and whether missing is one."""
    odd = [v for v in values if not isinstance(v, (str, int, float, bool))]
    if _odd_dtype(s) or odd:
        kind = type(odd[0]).__name__ if odd else str(s.dtype)
        raise BadTable(f"TabDDPM: column {col!r}: categories of type {kind} are not supported "
                       "(use text, numbers or booleans)")
    spec = {"name": col, "dtype": str(s.dtype), "missing": bool(missing), "values": _sorted_values(values)}
    if isinstance(s.dtype, pd.CategoricalDtype):
        spec["categories"] = [_plain(v) for v in s.dtype.categories]
        spec["ordered"] = bool(s.dtype.ordered)
    return spec


@dataclass(frozen=True)
class TabularTransform:
    """Fitted column transforms (build with :meth:`fit` or :meth:`from_state`).

    Attributes
    ----------
    numerical : tuple of dict
        Per numerical column: ``name``, ``dtype`` (str), ``integer`` (bool), ``min``,
        ``max``, ``mean``.
    categorical : tuple of dict
        Per categorical column: ``name``, ``dtype`` (str), ``values`` (observed values,
        sorted), ``missing`` (bool: one more category for missing values), and for a
        pandas ``category`` dtype ``categories`` and ``ordered``.
    quantiles, references : numpy.ndarray
        The fitted quantile transform: ``[n_quantiles, n_num]`` and ``[n_quantiles]``.
    columns : tuple of str
        The table's columns (``schema.columns``), the order of :meth:`inverse`'s output.
    privacy : dict or None
        A private transform's releases (:func:`memviz.models.dpstats.private_transform`): ``epsilon``,
        ``delta`` (their sums), ``releases``, ``public``; its numerical specs have ``clip`` (values outside
        ``[min, max]`` are clipped before the model sees them) and its released categorical specs ``fallback``
        (the category a value that was not released is given). None: fitted on the rows as they are.
    """

    numerical: tuple
    categorical: tuple
    quantiles: np.ndarray
    references: np.ndarray
    columns: tuple
    privacy: dict | None = None

    # ------------------------------------------------------------------ shapes
    @property
    def n_num(self) -> int:
        return len(self.numerical)

    @property
    def category_sizes(self) -> tuple[int, ...]:
        """K_c, the number of classes of each categorical column (missing included)."""
        return tuple(len(c["values"]) + int(c["missing"]) for c in self.categorical)

    # --------------------------------------------------------------------- fit
    @classmethod
    def fit(cls, data: pd.DataFrame, schema: Schema, seed: int = 0) -> "TabularTransform":
        """Fit on the training rows ``data`` (columns ``schema.columns``), reading them as they are (a private
        model's transform: :func:`memviz.models.dpstats.private_transform`)."""
        numerical = [numerical_spec(data[col], col)[0] for col in schema.distance_numerical]
        categorical = []
        for col in categorical_columns(schema):
            s = data[col]
            values = [] if _odd_dtype(s) else [_plain(v) for v in pd.unique(s.dropna())]
            categorical.append(categorical_spec(s, col, values, bool(s.isna().any())))
        if numerical:
            x = cls._imputed(data, numerical)
            qt = QuantileTransformer(n_quantiles=n_quantiles_for(len(data)), output_distribution="normal",
                                     subsample=10**9, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # n_quantiles > n_samples on tiny tables
                qt.fit(x)
            quantiles, references = qt.quantiles_, qt.references_
        else:
            quantiles, references = np.zeros((0, 0)), np.zeros(0)
        return cls(tuple(numerical), tuple(categorical), np.asarray(quantiles, dtype=np.float64),
                   np.asarray(references, dtype=np.float64), tuple(schema.columns))

    @staticmethod
    def _imputed(data: pd.DataFrame, numerical) -> np.ndarray:
        cols = [data[c["name"]].to_numpy(dtype=np.float64, na_value=np.nan) for c in numerical]
        x = np.stack(cols, axis=1)  # [N, n_num]
        for j, c in enumerate(numerical):
            x[np.isnan(x[:, j]), j] = c["mean"]
            if c.get("clip"):   # a private transform: no value outside the released bounds reaches the model
                x[:, j] = np.clip(x[:, j], c["min"], c["max"])
        return x

    # --------------------------------------------------------------- forward
    def transform(self, data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Rows -> (``x_num`` float32 ``[N, n_num]``, ``codes`` int64 ``[N, n_cat]``)."""
        n = len(data)
        if self.numerical:
            qt = _quantile_transformer(self.quantiles, self.references)
            x_num = qt.transform(self._imputed(data, self.numerical)).astype(np.float32)
        else:
            x_num = np.zeros((n, 0), dtype=np.float32)
        codes = np.zeros((n, len(self.categorical)), dtype=np.int64)
        for j, c in enumerate(self.categorical):
            s = data[c["name"]]
            values = s.astype(object).where(s.notna(), None)
            code = pd.Categorical(values, categories=pd.Index(c["values"], dtype=object)).codes.astype(np.int64)
            if "fallback" in c:   # a private transform: a category not released is given the released mode
                fb = (len(c["values"]) if c["fallback"] is None
                      else int(pd.Index(c["values"], dtype=object).get_loc(c["fallback"])))
                code[(code < 0) & (s.notna().to_numpy() | (not c["missing"]))] = fb
            unseen = (code < 0) & s.notna().to_numpy()
            if unseen.any():
                bad = s[unseen].iloc[0]
                raise BadTable(f"TabDDPM: column {c['name']!r}: value {bad!r} was not in the training table")
            missing = code < 0
            if missing.any() and not c["missing"]:
                raise BadTable(f"TabDDPM: column {c['name']!r}: missing values, none in the training table")
            code[missing] = len(c["values"])
            codes[:, j] = code
        return x_num, codes

    # --------------------------------------------------------------- inverse
    def inverse(self, x_num: np.ndarray, codes: np.ndarray) -> pd.DataFrame:
        """(``x_num`` ``[n, n_num]`` in model space, ``codes`` ``[n, n_cat]``) -> table rows."""
        n = len(codes)
        out: dict[str, pd.Series] = {}
        if self.numerical:
            x = np.asarray(x_num, dtype=np.float64)                                          # [n, n_num]
            if n:
                x = _quantile_transformer(self.quantiles, self.references).inverse_transform(x)
            for j, c in enumerate(self.numerical):
                v = np.clip(np.nan_to_num(x[:, j], nan=c["mean"]), c["min"], c["max"])
                if c["integer"]:
                    v = np.round(v)
                out[c["name"]] = _as_dtype(pd.Series(v), c["dtype"])
        for j, c in enumerate(self.categorical):
            table = np.empty(len(c["values"]) + 1, dtype=object)
            table[:len(c["values"])] = c["values"]
            table[-1] = np.nan
            out[c["name"]] = _categorical_series(table[codes[:, j]], c)
        return pd.DataFrame({col: out[col] for col in self.columns}, index=pd.RangeIndex(n))

    # ----------------------------------------------------------------- state
    def to_state(self) -> dict:
        """Plain data for ``torch.save`` (loadable with ``weights_only=True``)."""
        return {"numerical": [dict(c) for c in self.numerical],
                "categorical": [dict(c) for c in self.categorical],
                "quantiles": torch.from_numpy(np.ascontiguousarray(self.quantiles)),
                "references": torch.from_numpy(np.ascontiguousarray(self.references)),
                "columns": list(self.columns), **({"privacy": self.privacy} if self.privacy is not None else {})}

    @classmethod
    def from_state(cls, state: dict) -> "TabularTransform":
        return cls(tuple(dict(c) for c in state["numerical"]), tuple(dict(c) for c in state["categorical"]),
                   np.asarray(state["quantiles"], dtype=np.float64),
                   np.asarray(state["references"], dtype=np.float64), tuple(state["columns"]), state.get("privacy"))


def _as_dtype(s: pd.Series, dtype: str) -> pd.Series:
    try:
        return s.astype(dtype)
    except (TypeError, ValueError):
        return s


def _categorical_series(values: np.ndarray, spec: dict) -> pd.Series:
    """Object values -> a Series with the training column's dtype."""
    if "categories" in spec:
        return pd.Series(pd.Categorical(values, categories=spec["categories"], ordered=spec["ordered"]))
    s = pd.Series(values, dtype=object)
    if spec["dtype"] == "object":
        return s
    return _as_dtype(s, spec["dtype"])
