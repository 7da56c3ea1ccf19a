"""Tables for the tests beyond the ratio test: three disjoint parts of a real table, planted copies,
an all-numerical table where the ratio test is blind."""
import numpy as np
import pandas as pd

from memviz.tables.data import Table
from memviz.tables.schema import Schema


def three_parts(table: Table, n: int, seed: int) -> tuple[Table, Table, Table]:
    """Train, "synthetic" (fresh real rows) and hold-out: n rows each, disjoint, seeded."""
    ids = np.random.default_rng(seed).permutation(table.row_ids)[: 3 * n]
    return table.subset(ids[:n]), table.subset(ids[n:2 * n]), table.subset(ids[2 * n:])


def plant(train: Table, synth: Table, share: float, seed: int, source_pos=None) -> tuple[pd.DataFrame, np.ndarray]:
    """``synth`` with ``share`` of its rows replaced by training rows (from ``source_pos`` when given);
    returns the frame and the row_ids of the copied training rows."""
    rng = np.random.default_rng(seed)
    s = synth.data.reset_index(drop=True).copy()
    k = int(round(share * len(s)))
    at = rng.choice(len(s), k, replace=False)
    pool = np.arange(len(train)) if source_pos is None else np.asarray(source_pos)
    src = rng.choice(pool, min(k, len(pool)), replace=False)
    s.iloc[at[: len(src)]] = train.data.iloc[src].to_numpy()
    return s, train.row_ids[src]


def numeric_table(n_rows: int, seed: int = 0) -> Table:
    """6 numerical columns (a correlated Gaussian mixture) and no categorical one: the paper's
    distance flags fresh rows at > 80 % here."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, (4, 6))
    lab = rng.integers(0, 4, n_rows)
    x = centres[lab] + rng.normal(0, 1, (n_rows, 6)) @ rng.normal(0, 0.5, (6, 6))
    df = pd.DataFrame(x, columns=[f"x{j}" for j in range(6)])
    df.index = pd.Index(np.arange(n_rows, dtype=np.int64) * 7 + 3, name="row_id")   # non-contiguous ids
    return Table(df, Schema(numerical=tuple(df.columns), categorical=(), target=None), "numeric")


def shuffled_table(table: Table, seed: int = 0) -> Table:
    """The table with its columns in another order (schema reordered too) and row_ids shifted."""
    s = table.schema
    rng = np.random.default_rng(seed)
    num, cat = tuple(rng.permutation(list(s.numerical))), tuple(rng.permutation(list(s.categorical)))
    schema = Schema(numerical=num, categorical=cat, target=s.target, task=s.task)
    df = table.data.loc[:, list(schema.columns)].copy()
    df.index = pd.Index(df.index.to_numpy() + 10_000, name="row_id")
    return Table(df, schema, "shuffled")
