"""The study's statistics: exact paired tests, their labels, null findings, overlap, heavy tail vs the floor."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from memviz.measure.floor import floor_from_attributions
from memviz.study.findings import (
    LABELS,
    claim_tests,
    combine_null,
    label,
    null_findings,
    paired_figures,
    signed_rank_exact,
)
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


def test_zeros_are_dropped_and_ties_are_exact():
    t = signed_rank_exact([0.0, 0.1, 0.1, 0.1])
    assert t["n"] == 3 and t["p_claim"] == pytest.approx(1 / 8)
    assert signed_rank_exact([])["n"] == 0 and label(signed_rank_exact([])) == "not shown"


@pytest.mark.parametrize("d, expected", [
    ([0.01, 0.02, 0.03, 0.04, 0.05], "holds"),                       # p = 1/32
    ([0.1, 0.2, 0.3], "consistent sign, not significant"),           # 3 seeds: p >= 0.125, never "holds"
    ([0.1, 0.2, 0.3, 0.4], "consistent sign, not significant"),      # 4 seeds: p >= 0.0625
    ([-0.01, -0.02, -0.03, -0.04, -0.05], "reversed"),
    ([-0.1, -0.2, -0.3], "consistent sign, not significant"),        # same sign the other way, not significant
    ([0.1, -0.2, 0.3, 0.1, 0.2], "not shown"),
    ([-0.01, 0.2, 0.3, 0.4, 0.5, 0.6], "holds"),                     # 6 seeds: W+ = 20, p = 2/64
])
def test_labels_follow_the_fixed_criteria(d, expected):
    assert label(signed_rank_exact(d)) == expected
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
    assert t["label"] == "holds" and t["p_claim"] == pytest.approx(1 / 32)
    res.loc[(res["seed"] == 2) & (res["method"] == "random"), "status"] = "failed"
    t = paired_figures(res, "tabddpm", "mem_ratio", "dynamiccut", "mem_ratio", "random")
    assert t["seeds"] == [0, 1, 3, 4] and t["label"] == "consistent sign, not significant"


def test_non_inferiority_margin_and_two_figures_of_one_cell():
    res = _results({"dynamiccut": [0.880, 0.875, 0.870, 0.885, 0.878], "baseline": [0.885, 0.880, 0.878, 0.889, 0.880]},
                   figure="mle")
    worse = paired_figures(res, "tabddpm", "mle", "dynamiccut", "mle", "baseline", "higher")
    within = paired_figures(res, "tabddpm", "mle", "dynamiccut", "mle", "baseline", "higher", margin=0.01)
    assert worse["label"] == "reversed" and within["label"] == "holds"
    cell = pd.DataFrame([{"model": "tabddpm", "method": "dynamiccut", "seed": s, "status": "ok",
                          "mem_ratio_kept": 0.1, "control_kept": 0.1 + 0.01 * (s + 1)} for s in range(5)])
    t = paired_figures(cell, "tabddpm", "mem_ratio_kept", "dynamiccut", "control_kept", "dynamiccut")
    assert t["label"] == "holds" and t["mean"] == pytest.approx(0.03)


def test_claim_tests_only_where_both_methods_ran():
    res = _results({"dynamiccut": [0.2] * 3, "random": [0.3] * 3, "baseline": [0.25] * 3})
    keys = {t["key"] for t in claim_tests(res)}
    assert keys == {"dc_vs_random", "dc_vs_baseline"}


def test_combine_null_over_warmup_seeds():
    assert combine_null(["holds"] * 3, [1, 1, 1], [0, 0, 0], "higher") == "holds"
    assert combine_null(["holds", "not shown", "holds"], [1, 0.5, 1], [0, 0, 0], "higher") == \
        "consistent sign, not significant"
    assert combine_null(["reversed"] * 3, [-1] * 3, [0] * 3, "higher") == "reversed"
    assert combine_null(["not shown"] * 2, [1, -1], [0, 0], "lower") == "not shown"
    rows = [{"name": "first_epoch_split", "T_frac": 0.5, "T": 10, "label": "x", "circular": False,
             "direction": "lower", "value": 1.0, "baseline": 2.0, "observed": -1.0, "null_median": 0.0,
             "null_low": -0.5, "null_high": 0.5, "verdict": "holds", "naive_holds": True, "naive_null_share": 1.0,
             "seed": s} for s in range(3)]
    f = null_findings([{"null": rows}]).iloc[0]
    assert f["combined"] == "holds" and f["n_holds"] == 3 and f["n_seeds"] == 3


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
