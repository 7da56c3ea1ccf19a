"""One formatter of shares (issue 21's leftovers): every layer prints a share the same way (memviz.text, at the base)."""
from __future__ import annotations

import math

import pandas as pd

from memviz import text


def test_pct_and_points_are_the_base_layers_percent():
    assert text.pct(0.1234) == "12.3 %" == text.percent(0.1234)
    assert text.points(0.041) == "+4.1 points" == text.percent(0.041, signed=True, unit=" points")
    assert text.percent(0.5, unit="") == "50.0"


def test_a_difference_that_rounds_to_zero_is_never_minus_zero():
    """The app's old points formatter said '-0.0 points' for -0.0001 on some paths, +0.0 on others."""
    assert text.points(-0.0001) == "+0.0 points"
    assert text.percent(-0.0004, signed=True, unit="") == "+0.0"


def test_missing_values_read_the_same_everywhere():
    for v in (None, math.nan, float("inf"), "x", pd.NA):
        assert text.pct(v) == text.points(v) == text.MISSING


def test_mean_and_spread():
    assert text.percent_pm(0.123, 0.012) == "12.3 % ± 1.2"
    assert text.percent_pm(0.123, math.nan) == "12.3 %"
    assert text.percent_pm(-0.02, 0.01, signed=True, unit="%", sep=" ±") == "-2.0% ±1.0"
    assert text.percent_pm(None, 0.01) == text.MISSING


def test_no_other_percent_formatter_is_left():
    """The four private formatters of issue 21 are gone: their modules print through the one formatter."""
    from memviz.app import compare_card, reports
    from memviz.study import util
    from memviz.verdict import verdict as averdict

    for mod in (reports, compare_card, averdict, util):
        assert not hasattr(mod, "_pct"), mod.__name__
    assert not hasattr(util, "_pm")


def test_kinds_cancel_and_the_warmup_defaults_are_defined_once():
    """Issue 21's leftovers: KINDS and CANCEL were defined in two modules each, and the dashboard's warm-up
    defaults restated WarmupConfig's preset, n_samples and seed."""
    from memviz.app import runs
    from memviz.jobs import spec, status
    from memviz.warmup import store
    from memviz.warmup.run import WarmupConfig

    assert status.KINDS is spec.KINDS and status.CANCEL is store.CANCEL
    cfg = WarmupConfig()
    for k in ("preset", "n_samples", "seed"):
        assert runs.UI_WARMUP_DEFAULTS[k] == getattr(cfg, k) and k not in runs.UI_WARMUP_OVERRIDES


def test_a_small_expected_share_shows_as_more_than_zero():
    """1 / (H + 1) at H = 2,000 is 0.05 %: one decimal would print '0.0 %' beside a share it is compared with."""
    assert text.pct(1 / 2001, text.share_digits(1 / 2001)) == "0.05 %"
    assert text.share_digits(1e-5) == 3 and text.share_digits(1e-9) == 4      # at most 4 decimals
    assert text.share_digits(0.05) == 1 and text.share_digits(0.0) == 1 and text.share_digits(math.nan) == 1
