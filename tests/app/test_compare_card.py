"""The Compare verdict card and the glossary: plain words, the floor first, 'indicative' below 3 seeds.

The run's card is the Audit's (tests/app/test_audits.py); here only what a comparison adds."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memviz.app import glossary
from memviz.app.compare_card import (
    MIN_SEEDS,
    NO_FLOOR,
    compare_verdict,
    paired,
    pick_model,
    pooled_excess,
)
from memviz.measure.floor import floor_from_attributions, newcombe_interval


def results(n_seeds=3, *, base=0.30, pruned=0.25, rnd=0.29, noise=0.003, floor=None, mle_drop=0.0, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_seeds):
        for method, mem in (("baseline", base), ("dynamiccut", pruned), ("random", rnd)):
            row = {"method": method, "model": "tabddpm", "seed": s, "status": "ok", "n_synthetic": 3000,
                   "mem_ratio": mem + rng.normal(0, noise), "shape": 0.95, "trend": 0.9,
                   "mle": 0.88 - (mle_drop if method == "dynamiccut" else 0.0), "mle_real": 0.9, "dcr_share": 0.5}
            if floor is not None:
                row.update(floor=floor, floor_low=floor - 0.02, floor_high=floor + 0.02, n_holdout=1000)
            rows.append(row)
    return pd.DataFrame(rows)


def topics(v):
    return {ln.topic: ln for ln in v.lines}


def test_one_seed_is_indicative_and_says_so():
    v = compare_verdict(results(1, floor=0.25))
    assert v.indicative and v.n_seeds == 1 and "indicative" in v.title
    assert "indicative only" in topics(v)["Pruning"].text
    assert f"at least {MIN_SEEDS} seeds" in topics(v)["Next step"].text


def test_three_consistent_seeds_give_a_clear_change_beside_random_pruning():
    v = compare_verdict(results(3, floor=0.25))
    t = topics(v)
    assert not v.indicative and "a clear change" in t["Pruning"].text and t["Pruning"].tone == "good"
    assert "random rows" in t["Pruning"].text and "± " in t["Pruning"].text
    assert "little cost" in t["Next step"].text


def test_noisy_seeds_are_not_a_clear_change():
    v = compare_verdict(results(3, pruned=0.29, noise=0.02, floor=0.25, seed=3))
    assert "not a clear change" in topics(v)["Pruning"].text
    assert "did not clearly lower" in topics(v)["Next step"].text


def test_the_floor_comes_first_and_without_it_the_card_says_so():
    with_floor = compare_verdict(results(3, floor=0.25))
    flagged = topics(with_floor)["Flagged output"]
    assert "Real rows the model never saw are flagged at 25.0 %" in flagged.text and flagged.tone == "bad"
    assert with_floor.sentence and with_floor.sentence in flagged.text
    old = compare_verdict(results(3))                        # results written before the floor columns
    assert NO_FLOOR in topics(old)["Flagged output"].text and not old.sentence
    assert "test split" in topics(old)["Next step"].text
    at_floor = compare_verdict(results(3, base=0.25, floor=0.25))
    # without the comparison's audit the rows it copies are unknown: never "nothing to remove"
    assert "no measured copying" not in topics(at_floor)["Next step"].text
    assert "Audit its synthetic tables" in topics(at_floor)["Next step"].text


def test_pooled_excess_pools_the_seeds_generated_rows():
    cells = results(3, floor=0.25)
    base = cells[cells["method"] == "baseline"]
    ex = pooled_excess(base)
    x = np.round(base["mem_ratio"] * 3000).sum()
    d, lo, hi = newcombe_interval(x, 9000, 250, 1000)
    assert ex.excess == pytest.approx(float(d)) and (ex.low, ex.high) == pytest.approx((float(lo), float(hi)))
    assert ex.n_synthetic == 9000 and ex.n_holdout == 1000
    assert pooled_excess(base.drop(columns="floor")) is None


def test_paired_differences_are_per_seed():
    cells = results(2)
    p = paired(cells, "tabddpm", "dynamiccut", "mem_ratio")
    b = cells[cells["method"] == "baseline"].set_index("seed")["mem_ratio"]
    m = cells[cells["method"] == "dynamiccut"].set_index("seed")["mem_ratio"]
    np.testing.assert_allclose(p.diffs, (m - b).to_numpy())
    assert not p.clear                                       # two seeds never make a clear change
    assert paired(cells, "tabddpm", "nothing", "mem_ratio") is None


def test_utility_cost_is_named():
    v = compare_verdict(results(3, floor=0.25, mle_drop=0.05))
    assert "MLE" in topics(v)["Utility cost"].text and topics(v)["Utility cost"].tone == "bad"
    assert "costs utility" in topics(v)["Next step"].text


def test_every_line_is_plain_text():
    for v in (compare_verdict(results(1, floor=0.25)), compare_verdict(results(3))):
        for ln in v.lines:
            assert "**" not in ln.text and "<" not in ln.text and ln.tone in ("good", "bad", "warn", "neutral")


def test_glossary_names_the_terms_and_says_closeness_is_not_identity():
    terms = dict(glossary.entries())
    for term in ("Memorized", "Copy", "Floor", "Mem-AUC", "Top group", "DynamicCut score"):
        assert term in terms and terms[term].endswith(".")
    assert "relative closeness, not identity" in terms["Memorized"]
    assert "not 116 %" in terms["DynamicCut score"]
    with pytest.raises(KeyError, match="known"):
        glossary.explain("nope")


def test_results_without_floor_columns_use_the_warmups_floor_when_given():
    ratio = np.r_[np.full(250, 0.1), np.full(750, 0.9)]
    floor = floor_from_attributions(np.arange(100), np.arange(1000) % 100, ratio, distance="paper")
    v = compare_verdict(results(3), floor=floor)
    assert "flagged at 25.0 %" in topics(v)["Flagged output"].text and v.sentence
    assert NO_FLOOR not in topics(v)["Flagged output"].text
    own = compare_verdict(results(3, floor=0.20), floor=floor)            # the results' own floor wins
    assert "flagged at 20.0 %" in own.sentence


def test_the_card_speaks_of_a_model_with_a_baseline():
    cells = results(1)
    other = cells[cells["method"] != "baseline"].assign(model="ctgan")
    both = pd.concat([other, cells], ignore_index=True)            # ctgan first, without a baseline cell
    assert pick_model(both) == "tabddpm" and pick_model(both, "ctgan") == "ctgan"
    assert pick_model(both.iloc[:0]) is None
