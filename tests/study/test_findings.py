"""The study's statistics: exact paired tests, their labels, null findings, overlap, heavy tail vs the floor."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, ttest_1samp, wilcoxon

from memviz.measure.floor import floor_from_attributions
from memviz.study.findings import (
    claim_tests,
    null_findings,
    paired_figures,
    signed_rank_exact,
)
from memviz.study.inference import LABELS, label, side_of, two_sided
from memviz.study.warmups import (
    concentration_null,
    jaccard,
    random_jaccard,
    selection_frame,
    selection_overlap,
)


@pytest.mark.parametrize("d", [[0.3, -0.1, 0.5, 0.2, 0.4], [1.0, 2.0, -3.0, 4.0, 5.0, 6.0], [-0.2, -0.1, 0.05]])
def test_signed_rank_matches_scipy_exact_without_ties(d):
    t = signed_rank_exact(d)
    assert t["p_claim"] == pytest.approx(wilcoxon(d, alternative="greater", method="exact").pvalue)
    assert t["p_against"] == pytest.approx(wilcoxon(d, alternative="less", method="exact").pvalue)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_minimum_attainable_p_is_two_to_the_minus_n(n):
    t = signed_rank_exact(np.arange(1, n + 1) * 0.01)   # every seed on the claim's side: the best case
    assert t["min_p"] == t["p_claim"] == pytest.approx(2.0 ** -n)


def _label(t: dict) -> str:
    """The label of one test alone (a family of one: Holm leaves p as it is)."""
    return label(two_sided(t["p_claim"], t["p_against"]) if t["n"] else float("nan"),
                 side_of(t["p_claim"], t["p_against"], float(np.mean(t.get("d", [0])) if t["n"] else 0)))


def test_zeros_are_dropped_and_ties_are_exact():
    t = signed_rank_exact([0.0, 0.1, 0.1, 0.1])
    assert t["n"] == 3 and t["p_claim"] == pytest.approx(1 / 8)
    assert signed_rank_exact([])["n"] == 0 and _label(signed_rank_exact([])) == "no data"


@pytest.mark.parametrize("d, expected", [
    ([0.01, 0.02, 0.03, 0.04, 0.05], "claim's side, not significant"),   # two-sided p = 2/32: never < 0.05
    ([0.1, 0.2, 0.3], "claim's side, not significant"),
    ([-0.01, -0.02, -0.03, -0.04, -0.05], "opposite side, not significant"),
    ([-0.1, -0.2, -0.3], "opposite side, not significant"),                # the side is named, not just "consistent"
    ([0.01 * i for i in range(1, 7)], "holds"),                            # 6 seeds: two-sided p = 2/64
    ([-0.01 * i for i in range(1, 7)], "reversed"),
    ([-0.01, 0.2, 0.3, 0.4, 0.5, 0.6], "claim's side, not significant"),   # W+ = 20: two-sided p = 4/64
])
def test_labels_name_the_side(d, expected):
    assert _label({**signed_rank_exact(d), "d": d}) == expected
    assert expected in LABELS


def _results(values: dict, model="tabddpm", figure="mem_ratio"):
    rows = []
    for method, vs in values.items():
        for seed, v in enumerate(vs):
            rows.append({"model": model, "method": method, "seed": seed, figure: v, "status": "ok"})
    return pd.DataFrame(rows)


def test_paired_figures_pairs_by_seed_and_drops_failed_cells():
    res = _results({"dynamiccut": [0.20, 0.30, 0.10, 0.25, 0.40], "random": [0.22, 0.33, 0.14, 0.26, 0.45]})
    t = paired_figures(res, "tabddpm", "mem_ratio", "dynamiccut", "mem_ratio", "random")
    assert t["seeds"] == [0, 1, 2, 3, 4] and t["d"] == pytest.approx([0.02, 0.03, 0.04, 0.01, 0.05])
    assert t["label"] == "claim's side, not significant" and t["p_claim"] == pytest.approx(1 / 32)
    assert t["p_two"] == pytest.approx(2 / 32) and t["min_p_two"] == pytest.approx(2 / 32)
    ci = ttest_1samp(t["d"], 0).confidence_interval()                   # the interval over seeds is scipy's t
    assert (t["effect_low"], t["effect_high"]) == pytest.approx((ci.low, ci.high))
    assert t["relative"] == pytest.approx(np.mean(t["d"]) / np.mean([0.22, 0.33, 0.14, 0.26, 0.45]))
    assert t["delta_ref"] == pytest.approx(0.1358 * np.mean([0.22, 0.33, 0.14, 0.26, 0.45]))
    assert t["pair_corr"] == pytest.approx(np.corrcoef([0.20, 0.30, 0.10, 0.25, 0.40],
                                                       [0.22, 0.33, 0.14, 0.26, 0.45])[0, 1])
    res.loc[(res["seed"] == 2) & (res["method"] == "random"), "status"] = "failed"
    t = paired_figures(res, "tabddpm", "mem_ratio", "dynamiccut", "mem_ratio", "random")
    assert t["seeds"] == [0, 1, 3, 4] and t["label"] == "claim's side, not significant"


def test_non_inferiority_margin_and_two_figures_of_one_cell():
    res = _results({"dynamiccut": [0.880, 0.875, 0.870, 0.885, 0.878], "baseline": [0.885, 0.880, 0.878, 0.889, 0.880]},
                   figure="mle")
    worse = paired_figures(res, "tabddpm", "mle", "dynamiccut", "mle", "baseline", "higher")
    within = paired_figures(res, "tabddpm", "mle", "dynamiccut", "mle", "baseline", "higher", margin=0.01)
    assert worse["label"] == "opposite side, not significant" and within["label"] == "claim's side, not significant"
    assert worse["p_against"] == pytest.approx(1 / 32) and within["p_claim"] == pytest.approx(1 / 32)
    assert within["delta_ref"] == 0.01                                    # power at "exactly as good"
    cell = pd.DataFrame([{"model": "tabddpm", "method": "dynamiccut", "seed": s, "status": "ok",
                          "mem_ratio_kept": 0.1, "control_kept": 0.1 + 0.01 * (s + 1)} for s in range(5)])
    t = paired_figures(cell, "tabddpm", "mem_ratio_kept", "dynamiccut", "control_kept", "dynamiccut")
    assert t["n_positive"] == 5 and t["mean"] == pytest.approx(0.03)


def test_claim_tests_only_where_both_methods_ran():
    res = _results({"dynamiccut": [0.2] * 3, "random": [0.3] * 3, "baseline": [0.25] * 3})
    keys = {t["key"] for t in claim_tests(res)}
    assert keys == {"dc_vs_random", "dc_vs_baseline"}


def _null_rows(verdicts, direction="lower", observed=-1.0):
    return [{"name": "first_epoch_split", "T_frac": 0.5, "T": 10, "label": "x", "circular": False,
             "direction": direction, "value": 1.0, "baseline": 2.0, "observed": observed, "null_median": 0.0,
             "null_low": -0.5, "null_high": 0.5, "verdict": v, "naive_holds": True, "naive_null_share": 1.0,
             "seed": s} for s, v in enumerate(verdicts)]


def test_null_findings_combine_the_seeds_by_a_binomial_count():
    """Regression (issue 22): 4 of 5 seeds beyond the null at 2.5 % read "not shown" under the conjunction
    rule; the binomial count gives P(Bin(5, 0.025) >= 4) = 1.9e-6, as scipy's binomial test does."""
    f = null_findings(_null_rows(["holds"] * 4 + ["not shown"])).iloc[0]
    assert f["n_holds"] == 4 and f["n_seeds"] == 5
    assert f["p_claim"] == pytest.approx(binomtest(4, 5, 0.025, alternative="greater").pvalue)
    assert f["p_claim"] == pytest.approx(1.9140625e-06) and f["label"] == "holds"
    rev = null_findings(_null_rows(["reversed"] * 3 + ["not shown"] * 2, observed=1.0)).iloc[0]
    assert rev["label"] == "reversed" and rev["effect"] < 0                   # the side is named
    one = null_findings(_null_rows(["holds"] + ["not shown"] * 4)).iloc[0]
    assert one["p_claim"] == pytest.approx(1 - 0.975 ** 5) and one["label"] == "claim's side, not significant"
    opp = null_findings(_null_rows(["not shown"] * 5, observed=0.2)).iloc[0]
    assert opp["label"] == "opposite side, not significant"                  # observed above the median, claim "lower"


def test_jaccard_and_its_random_expectation():
    assert jaccard([1, 2, 3], [1, 2, 3]) == 1.0 and jaccard([1, 2], [3, 4]) == 0.0
    assert jaccard([1, 2, 3], [2, 3, 4]) == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    sims = [jaccard(rng.choice(300, 30, replace=False), rng.choice(300, 30, replace=False)) for _ in range(4000)]
    assert random_jaccard(300, 30) == pytest.approx(np.mean(sims), abs=0.003)


def test_selection_overlap_between_seeds_scores_and_T():
    an = [{"seed": s, "T": {"0.25": 4, "0.5": 8},
           "selections": {"raw|0.25": [1, 2, 3], "raw|0.5": [1, 2, 4 + s], "excess|0.5": [1, 2, 4 + s]}}
          for s in range(3)]
    sel = selection_frame(an)
    assert len(sel) == 27 and set(sel["rank"]) == {1, 2, 3}
    ov = {(o["between"], o["score"], o["T_frac"]): o for o in selection_overlap(sel, 100)}
    assert ov[("warm-up seeds", "raw", 0.25)]["mean"] == 1.0
    assert ov[("warm-up seeds", "raw", 0.5)]["mean"] == pytest.approx(0.5)     # {1,2,4} vs {1,2,5}: 2/4
    assert ov[("raw vs excess score", "both", 0.5)]["mean"] == 1.0
    assert ov[("first quarter vs first half", "raw", None)]["pairs"] == 3


def _floor(hits_per_row: np.ndarray, n_holdout: int):
    """A floor whose flagged hold-out rows are spread as ``hits_per_row``; the rest unflagged on row 0."""
    nn1 = np.repeat(np.arange(len(hits_per_row)), hits_per_row)
    n_rest = n_holdout - len(nn1)
    nn1 = np.concatenate([nn1, np.zeros(n_rest, dtype=np.int64)])
    ratio = np.concatenate([np.full(len(nn1) - n_rest, 0.1), np.full(n_rest, 0.9)])
    return floor_from_attributions(np.arange(len(hits_per_row)), nn1, ratio, distance="paper")


def test_heavy_tail_against_the_floor():
    rng = np.random.default_rng(1)
    n = 500
    fl = _floor(rng.poisson(0.5, n), 1000)
    fresh = rng.poisson(2.0, n)                                   # copies spread like fresh rows' flags
    assert concentration_null(fl, fresh, replicates=80)["verdict"] != "holds"
    planted = fresh.copy()
    planted[:20] += 200                                            # 4 % of rows copied far more
    r = concentration_null(fl, planted, replicates=80)
    assert r["verdict"] == "holds" and r["observed"] > r["null_high"]
