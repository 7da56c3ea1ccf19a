"""The exact tails (memviz.measure.tails) against sums at 60 digits: every p the verdict reads keeps its relative
precision far into the tail, and none reads 0."""
from __future__ import annotations

import math

import mpmath as mp
import pytest
from scipy import stats

from memviz.measure.tails import SMALLEST, betabinom_sf, binom_sf, hypergeom_sf

mp.mp.dps = 60


def _betabinom_sf(x, n, a, b):
    return mp.fsum(mp.binomial(n, j) * mp.beta(j + a, n - j + b) / mp.beta(a, b) for j in range(x, n + 1))


@pytest.mark.parametrize("x,n,a,b", [(1, 10, 1, 1), (5, 300, 3, 50), (30, 3000, 1, 1409), (100, 3000, 1, 1409),
                                     (150, 3000, 1, 2000), (160, 3000, 150, 2850), (40, 300, 15, 286)])
def test_the_beta_binomial_tail_holds_twelve_digits_where_scipy_loses_them(x, n, a, b):
    want = _betabinom_sf(x, n, a, b)
    got = betabinom_sf(x, n, a, b)
    assert got > 0 and abs(got - want) / want < 1e-10, (got, float(want))


def test_scipys_own_tail_is_what_this_module_replaces():
    """scipy's 1 − cdf: 16 % low at 1.6e-11 and 0 from 1.5e-12 down (issue 47); ours: the sum."""
    want = float(_betabinom_sf(64, 3000, 1, 1409))
    assert 1e-11 < want < 2e-11
    assert (want - stats.betabinom.sf(63, 3000, 1, 1409)) / want > 0.1
    assert stats.betabinom.sf(99, 3000, 1, 1409) == 0.0 and betabinom_sf(100, 3000, 1, 1409) > 1e-18


def test_a_tail_below_the_smallest_double_is_reported_as_it_never_as_zero():
    assert betabinom_sf(3000, 3000, 1, 5000) == SMALLEST
    assert hypergeom_sf(3000, 6000, 3000, 3000) == SMALLEST
    assert binom_sf([3000], [3000], 1e-3)[0] == SMALLEST
    assert betabinom_sf(0, 10, 1, 1) == 1.0 and hypergeom_sf(0, 10, 3, 5) == 1.0 and binom_sf([0], [5], 0.5)[0] == 1


def test_the_hypergeometric_and_binomial_tails_equal_exact_sums():
    want = mp.fsum(mp.binomial(30, j) * mp.binomial(4379, 34 - j) for j in range(30, 35)) / mp.binomial(4409, 34)
    assert hypergeom_sf(30, 4409, 34, 30) == pytest.approx(float(want), rel=1e-10)
    want = mp.fsum(mp.binomial(60, j) * mp.mpf("0.3") ** j * mp.mpf("0.7") ** (60 - j) for j in range(55, 61))
    assert binom_sf([55], [60], 0.3)[0] == pytest.approx(float(want), rel=1e-10)
    assert math.isclose(hypergeom_sf(1, 10, 1, 1), 0.1)
