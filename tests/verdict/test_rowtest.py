"""What the audit states of its per-row test (memviz.verdict.rowtest) is what the test does."""
import numpy as np

from memviz.measure.tooclose import Nearest, close_copy_test
from memviz.verdict.family import ALPHA
from memviz.verdict.rowtest import row_test


def _test(copies: int, m=1800, h=1500, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    dS, pS = rng.exponential(1.0, m) + 1e-3, rng.integers(0, n, m)
    dS[:copies], pS[:copies] = 0.0, 11
    dH, pH = rng.exponential(1.0, h) + 1e-3, rng.integers(0, n, h)
    dL, pL = rng.exponential(1.0, n) + 1e-3, rng.integers(0, n, n)
    return close_copy_test(np.arange(n), Nearest(dS, pS), Nearest(dH, pH), Nearest(dL, pL))


def test_the_stated_number_of_copies_names_a_row_at_the_naming_level():
    probe = _test(0)
    rt = row_test(probe, 4000, 1500, 1800)
    need = rt.copies_needed
    assert rt.status == "exact" and need is not None and need <= 20
    level = ALPHA
    at = _test(need + 1)                      # the planted row and one more candidate: itself
    assert 11 in at.named(level)["row_id"].tolist()
    below = _test(max(1, need - 2))
    assert 11 not in below.named(level)["row_id"].tolist()
    assert f"at least {need} close copies" in rt.sentence() and "4,000 training rows" in rt.sentence()


def test_many_generated_rows_against_few_real_ones_is_low_power():
    rng = np.random.default_rng(1)
    m, h = 60_000, 300
    c = close_copy_test(np.arange(50), Nearest(rng.random(m), rng.integers(0, 50, m)),
                        Nearest(rng.random(h), rng.integers(0, 50, h)))
    rt = row_test(c, 50, h, m)
    assert rt.status == "low_power" and "little" not in rt.sentence()
    assert row_test(None, 50, 0, m).status == "no_holdout" and row_test(None, 50, h, m).status == "untested"
