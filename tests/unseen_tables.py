"""Tables memviz was not designed on (issue 42): a credit-scoring-like table whose first column is an
integer key with gaps (a sample of a keyed table), whose label is ``Status`` (not named like Adult's
``income``; the table also has an ``Income`` feature), with missing values in a feature and in the label."""
from __future__ import annotations

import numpy as np
import pandas as pd


def credit_like(n: int = 400, seed: int = 0, *, key: str = "rownames", missing_label: float = 0.05) -> pd.DataFrame:
    """``n`` rows: ``key`` (unique integers with gaps, shuffled), ``Status`` (good/bad, ``missing_label`` of it
    missing), ``Seniority`` (integers), ``Home`` (5 categories, some missing), ``Age``, ``Income`` (floats, 8 %
    missing), ``Amount`` (integers in steps of 50), ``Records`` (yes/no), ``Job`` (4 categories)."""
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.choice(np.arange(1, int(n * 1.25) + 1), n, replace=False))   # gaps: a sample of ids
    status = rng.choice(["good", "bad"], n, p=[0.7, 0.3]).astype(object)
    status[rng.random(n) < missing_label] = None
    home = rng.choice(["rent", "owner", "parents", "priv", "other"], n).astype(object)
    home[rng.random(n) < 0.03] = None
    income = np.round(rng.gamma(4.0, 35.0, n), 1)
    income[rng.random(n) < 0.08] = np.nan
    df = pd.DataFrame({key: keys, "Status": status, "Seniority": rng.integers(0, 40, n), "Home": home,
                       "Age": rng.integers(18, 70, n), "Records": rng.choice(["no", "yes"], n, p=[0.8, 0.2]),
                       "Job": rng.choice(["fixed", "partime", "freelance", "others"], n), "Income": income,
                       "Amount": 50 * rng.integers(2, 60, n), "Price": np.round(rng.gamma(6.0, 250.0, n), 2)})
    return df.iloc[rng.permutation(n)].reset_index(drop=True)


def credit_composite(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """:func:`credit_like` whose rows are named by two columns together: ``branch`` (4 branches) and ``account_no``
    (integers with gaps, each held by two branches), neither unique alone; the key columns sit apart (``branch``
    first, ``account_no`` in the middle) and the rows are shuffled."""
    rng = np.random.default_rng(seed + 101)
    df = credit_like(n, seed, key="rownames").drop(columns="rownames")
    half = (n + 1) // 2
    accounts = np.sort(rng.choice(np.arange(3, 4 * half, 3), half, replace=False))          # gaps of 3 and more
    branches = np.array(["North", "South", "East", "West"])
    pairs = [(b, int(a)) for a in accounts for b in rng.choice(branches, 2, replace=False)][:n]
    order = rng.permutation(n)
    df.insert(0, "branch", [pairs[i][0] for i in order])
    df.insert(4, "account_no", [pairs[i][1] for i in order])
    return df
