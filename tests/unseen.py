"""Tables memviz was not designed for, and generators that under-fit most rows and copy a few.

* :func:`credit_table`: a credit-scoring table (integer key with gaps, a label named ``Status`` with
  missing values, categories that start with ``-``, ``+`` and ``=``, numbers on very different scales),
  drawn from a small latent model so that its rows are neither independent columns nor Adult.
* :func:`independent_columns`: a generator that draws every column on its own from the training
  marginals: it under-fits every row (its rows sit far from the training rows), the masking case of
  issue 36.
* :func:`with_copies`: ``k`` training rows copied ``times`` times each into a generated table.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def credit_table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    risk, wealth = rng.normal(size=n), rng.normal(size=n)             # two latent traits tie the columns
    income = np.round(np.exp(10.3 + 0.5 * wealth - 0.2 * risk), -2)
    debt = np.round(np.clip(income * (0.3 + 0.15 * risk + 0.1 * rng.normal(size=n)), 0, None), 0)
    age = np.clip(np.round(45 - 6 * risk + 8 * wealth + 8 * rng.normal(size=n)), 18, 90)
    seniority = np.clip(np.round((age - 18) * rng.uniform(0, 0.6, n)), 0, None)
    home = np.where(wealth > 0.8, "owner", np.where(age < 28, "parents", np.where(wealth < -1, "other", "rent")))
    trend = np.where(risk > 0.7, "-", np.where(risk < -0.7, "+", "="))
    job = np.where(seniority > 15, "fixed", np.where(wealth < -0.5, "others",
                                                       np.where(age < 30, "partime", "freelance")))
    marital = np.where(age < 30, "single", np.where(wealth > 0, "married", np.where(risk > 0.5, "separated", "widow")))
    records = np.where(risk + 0.3 * rng.normal(size=n) > 1.0, "yes", "no")
    status = np.where(risk + 0.5 * rng.normal(size=n) > 0.6, "bad", "good").astype(object)
    status[rng.random(n) < 0.08] = None                                  # 8 % of labels missing
    key = np.sort(rng.choice(np.arange(1, 4 * n), n, replace=False))    # an integer key with gaps
    return pd.DataFrame({"rownames": key, "Seniority": seniority, "Home": home, "Age": age, "Marital": marital,
                         "Records": records, "Job": job, "Income": income, "Debt": debt, "Trend": trend,
                         "Status": status})


def independent_columns(train: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` rows, each column drawn on its own from the training column (with replacement)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: train[c].to_numpy()[rng.integers(0, len(train), n)] for c in train.columns})


def with_copies(generated: pd.DataFrame, train: pd.DataFrame, k: int, times: int, seed: int = 0):
    """``generated`` with its first ``k * times`` rows replaced by ``k`` training rows, ``times`` each;
    returns (frame, the positions in ``train`` of the copied rows)."""
    rng = np.random.default_rng(seed)
    src = np.sort(rng.choice(len(train), k, replace=False))
    out = generated.reset_index(drop=True).copy()
    out.iloc[: k * times] = train.iloc[np.repeat(src, times)][out.columns].to_numpy()
    return out, src
