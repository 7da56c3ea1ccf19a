"""The attack study's pooling (memviz.study.attacks): the mean of per-attack differences, its t interval,
the stratified permutation test against a brute-force enumeration, the declared claim rule, and the
markdown's results section rewritten in place."""
import itertools
import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from memviz.study import attacks as st


def _cell(ds, seed, top, rand, named=()):
    targets = ([{"group": "top", "auc": a} for a in top] + [{"group": "named", "auc": a} for a in named]
               + [{"group": "random", "auc": a} for a in rand])
    groups = [{"group": g, "n": len(v), "auc": float(np.mean(v)), "auc_low": 0.0, "auc_high": 1.0, "tpr_1pct": 0.1}
              for g, v in (("top", top), ("named", named), ("random", rand)) if len(v)]
    return {"dataset": ds, "seed": seed, "warmup": {"excess": 0.1, "n_over_copied": len(named)},
            "selection_matches_committed": True, "top_in_named": 0, "seconds": 60.0,
            "result": {"targets": targets, "groups": groups, "comparisons": [], "release": None, "seconds": 50.0}}


def test_pooled_difference_interval_and_an_exact_stratified_permutation():
    cells = [_cell("a", 0, [0.9, 0.8, 0.7], [0.5, 0.6]), _cell("b", 0, [0.6, 0.65], [0.55, 0.5, 0.45])]
    c = next(x for x in st.pooled(cells) if (x["a"], x["b"]) == ("top", "random"))
    d = np.array([0.8 - 0.55, 0.625 - 0.5])
    assert c["mean"] == pytest.approx(d.mean())
    h = student_t.ppf(0.975, 1) * d.std(ddof=1) / math.sqrt(2)
    assert (c["low"], c["high"]) == pytest.approx((d.mean() - h, d.mean() + h))
    # every relabelling within each attack (5 choose 3 and 5 choose 2): the exact one-sided p
    stats = []
    for i in itertools.combinations(range(5), 3):
        for j in itertools.combinations(range(5), 2):
            x = np.array([0.9, 0.8, 0.7, 0.5, 0.6])
            y = np.array([0.6, 0.65, 0.55, 0.5, 0.45])
            s1 = x[list(i)].mean() - np.delete(x, list(i)).mean()
            s2 = y[list(j)].mean() - np.delete(y, list(j)).mean()
            stats.append((s1 + s2) / 2)
    exact = np.mean(np.array(stats) >= d.mean() - 1e-12)
    assert c["p_greater"] == pytest.approx(exact, abs=0.01)
    assert not any((x["a"], x["b"]) == ("named", "random") for x in st.pooled(cells))   # no named rows


def test_the_declared_claim_rule():
    yes = {"attacks": ["a"] * 6, "mean": 0.06, "low": 0.01, "high": 0.11, "p_greater": 0.01}
    assert st.claim_sentence(yes, 6).startswith("Supported:")
    assert st.claim_sentence({**yes, "p_greater": 0.2, "low": -0.01}, 6).startswith("Not shown")
    assert st.claim_sentence({**yes, "mean": -0.06, "low": -0.1, "high": -0.02, "p_greater": 0.99}, 6) \
        .startswith("Refuted")
    assert "partial" in st.claim_sentence({**yes, "attacks": ["a"] * 2}, 6)
    assert st.claim_sentence(None, 6).startswith("No attack")


def test_the_results_section_is_rewritten_in_place(tmp_path):
    md = tmp_path / "s.md"
    md.write_text("# T\n\ndeclared\n\n## Results\n\nstale text\n\n## How to run and continue it\n\nkeep\n")
    st.update_markdown(md, [_cell("adult", 0, [0.9, 0.8], [0.5, 0.6], named=[0.7, 0.75])])
    text = md.read_text()
    assert "declared" in text and "keep" in text and "stale text" not in text
    assert "| adult | 0 |" in text and "top − random | 1 |" in text and "partial" in text


def _keyed(ds, seed, top, rand):
    """A cell whose targets name training rows (``top``/``rand``: lists of (row_id, auc))."""
    c = _cell(ds, seed, [a for _, a in top], [a for _, a in rand])
    c["result"]["targets"] = ([{"group": "top", "row_id": r, "auc": a} for r, a in top]
                              + [{"group": "random", "row_id": r, "auc": a} for r, a in rand])
    return c


def test_read_by_table_each_table_over_its_seeds_and_its_rows_issue_52():
    """Issue 52 item 6: a table's attacks share rows, so they are read per table: the table's mean of its per-attack
    differences with a t interval over its seeds (checked against scipy) and a bootstrap over its distinct rows
    (a row recurring in several attacks moves as one), and no general claim from two tables."""
    a = [_keyed("adult", s, [(1, 0.9 - s / 20), (2, 0.8), (3 + s, 0.85)], [(10, 0.5), (11 + s, 0.55)])
         for s in range(3)]
    b = [_keyed("default", s, [(1, 0.6), (2, 0.62 + s / 50)], [(10, 0.58), (20 + s, 0.5)]) for s in range(3)]
    c = next(x for x in st.by_table(a + b, n_boot=300) if (x["a"], x["b"]) == ("top", "random"))
    per = {t["table"]: t for t in c["tables"]}
    d = np.array([np.mean([0.9 - s / 20, 0.8, 0.85]) - np.mean([0.5, 0.55]) for s in range(3)])
    h = student_t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert per["adult"]["mean"] == pytest.approx(d.mean())
    assert (per["adult"]["seeds_low"], per["adult"]["seeds_high"]) == pytest.approx((d.mean() - h, d.mean() + h))
    assert per["adult"]["rows"] == 9            # top rows 1-5 and random rows 10-13: distinct ids, not 15 targets
    assert per["adult"]["low"] <= per["adult"]["mean"] <= per["adult"]["high"]
    assert c["mean"] == pytest.approx((per["adult"]["mean"] + per["default"]["mean"]) / 2)
    two = np.array([per["adult"]["mean"], per["default"]["mean"]])
    ht = student_t.ppf(0.975, 1) * two.std(ddof=1) / math.sqrt(2)
    assert (c["t_low"], c["t_high"]) == pytest.approx((two.mean() - ht, two.mean() + ht))
    text = st.table_claim_sentence(c)
    assert "on adult" in text and "on default" in text and "nothing is shown for tables in general" in text


def test_a_permutation_p_at_its_floor_is_written_as_below_1e_4_issue_52():
    """The study printed "p 5e-05" where the permutation test cannot go lower (1 / 20,001): that is its floor,
    written "p < 1e-4"; a p above the floor keeps its digits."""
    assert st.attack_p_text(1 / (1 + st.N_PERMUTATIONS)) == "p < 1e-4"
    assert st.attack_p_text(0.0123) == "p 0.012"
    cells = [_keyed("adult", s, [(i, 0.95) for i in range(20)], [(100 + i, 0.5) for i in range(20)])
             for s in range(3)]
    text = st.render_attack_results(cells)
    assert "p < 1e-4" in text and "5e-05" not in text
