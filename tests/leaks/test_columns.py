"""The column heatmap's match rates (memviz.leaks.columns) on the planted run (tests/planted.py)."""

import numpy as np
import pandas as pd
import pytest
from planted import COPIES, N_GEN, SCHEMA, planted_finished

from memviz.errors import MemvizError
from memviz.leaks.columns import ColumnLeak, column_match_rates, run_column_match_rates


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return planted_finished(tmp_path_factory)


# ------------------------------------------------------------------------ column rates
def test_column_match_rates_planted(run):
    store, res = run
    train = store.train()
    long = res.checks[res.checks["check"] == 2]
    leak = column_match_rates(train, store.samples(2), long)
    assert isinstance(leak, ColumnLeak)
    rates = leak.columns.set_index("column")
    assert list(rates.index) == list(SCHEMA.columns)
    assert rates.loc["a", "memorized_rate"] == 1.0 and rates.loc["c1", "memorized_rate"] == 1.0
    assert rates.loc["b", "memorized_rate"] == 0.0 and rates.loc["b", "non_memorized_rate"] == 0.0
    assert rates.loc["a", "non_memorized_rate"] == 0.0 and rates.loc["c1", "non_memorized_rate"] == 0.0
    n_mem = sum(COPIES[2].values())
    assert leak.n_memorized == n_mem and leak.n_non_memorized == N_GEN - n_mem
    pm = leak.pairs_memorized
    assert pm.loc["a", "c1"] == 1.0 and pm.loc["a", "b"] == 0.0
    np.testing.assert_allclose(np.diag(pm), rates["memorized_rate"])
    np.testing.assert_allclose(np.diag(leak.pairs_non_memorized), rates["non_memorized_rate"])
    np.testing.assert_allclose(pm, pm.T)
    assert pm.attrs["group"] == "memorized rows" and leak.pairs_non_memorized.attrs["group"] == "non-memorized rows"
    assert pm.loc["c1", "c2"] == rates.loc["c2", "memorized_rate"]
    # same answer through the run helper, and with the rows shuffled
    assert run_column_match_rates(store).columns.equals(leak.columns)
    shuffled = column_match_rates(train, store.samples(2).sample(frac=1, random_state=1), long.iloc[::-1])
    pd.testing.assert_frame_equal(shuffled.columns, leak.columns)


def test_column_match_rates_several_checks_and_errors(run):
    store, res = run
    train = store.train()
    samples = pd.concat([store.samples(c).assign(check=c) for c in range(3)], ignore_index=True)
    leak = column_match_rates(train, samples, res.checks)
    assert leak.n_memorized == sum(sum(c.values()) for c in COPIES)
    assert leak.columns.set_index("column").loc["a", "memorized_rate"] == 1.0
    with pytest.raises(MemvizError, match="several checks"):
        column_match_rates(train, store.samples(0), res.checks)
    with pytest.raises(MemvizError, match="not in samples"):
        column_match_rates(train, store.samples(0).iloc[:10], res.checks[res.checks["check"] == 0])
    no_mem = res.checks[res.checks["check"] == 0].assign(memorized=False)
    empty = column_match_rates(train, store.samples(0), no_mem)
    assert empty.columns["memorized_rate"].isna().all() and empty.n_memorized == 0
