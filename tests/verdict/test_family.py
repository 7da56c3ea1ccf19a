"""The verdict's family (memviz.verdict.family): Holm's step-down, the level each member was tested at, and
the chance that any member holds when every one is null."""
import math

import numpy as np
import pytest

from memviz.verdict.family import ALPHA, family


def test_levels_follow_holms_step_down():
    f = family({"ratio": 0.30, "too_close": 0.004, "identical": 0.012, "rows": 0.02, "local": None})
    assert [m.name for m in f.members] == ["ratio", "too_close", "identical", "rows"]       # local did not run
    level = {m.name: m.level for m in f.members}
    assert level["too_close"] == ALPHA / 4 and level["identical"] == ALPHA / 3 and level["rows"] == ALPHA / 2
    assert level["ratio"] == ALPHA                                       # the last, tested at α, fails
    assert f.holding == ("too_close", "identical", "rows") and f.copying and f.naming_level == ALPHA
    stops = family({"ratio": 0.03, "too_close": 0.02, "identical": 0.5})
    assert stops.holding == () and math.isnan(stops.get("identical").level)   # the step-down stopped first
    assert stops.naming_level == 0.0                                           # nothing holds: no row is named
    only_rows = family({"ratio": 0.5, "too_close": 0.5, "identical": 1.0, "rows": 0.001})
    assert only_rows.holding == ("rows",) and not only_rows.copying and only_rows.naming_level == ALPHA
    assert family({}).members == () and not family({}).copying


@pytest.mark.parametrize("m", [2, 5])
def test_any_member_holds_at_most_alpha_under_the_null(m):
    rng = np.random.default_rng(m)
    names = ["ratio", "too_close", "identical", "local", "rows"][:m]
    hits = sum(bool(family({n: rng.uniform() for n in names}).holding) for _ in range(20000))
    assert hits / 20000 <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / 20000)
