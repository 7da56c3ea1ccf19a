"""The privacy tests' sentences (memviz.verdict.evidence_words) read as a privacy officer reads them: in the
report's "Other tests" list, on the verdict card and on the Memorization page each sentence follows its test's
name, so it must not say the name again; and every figure it gives stands in words that say what it is."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from memviz.evidence.article29 import Article29Result
from memviz.evidence.suite import Evidence
from memviz.verdict.evidence_words import density_ratio_sentence, evidence_sentences


def article29(test: str, p_value: float) -> Article29Result:
    return Article29Result(test=test, n_attacks=500, main_rate=0.046, main_ci=(0.03, 0.068), control_rate=0.012,
                           control_ci=(0.005, 0.026), risk=0.034, p_value=p_value, detail="")


@pytest.mark.parametrize("p_value", [1e-4, 0.4])
def test_the_other_tests_list_names_each_article29_attack_once(p_value):
    """At 50dd0fb the list read "Singling out: Singling out (predicates …)" and "Linkability: Linkability (joining
    …)": the sentence began with the name the list puts before it."""
    ev = Evidence(singling_out=article29("singling_out", p_value), linkability=article29("linkability", p_value))
    lines = evidence_sentences(ev)
    assert [name for name, _ in lines] == ["singling out", "linkability"]
    for name, sentence in lines:
        line = f"{name[:1].upper()}{name[1:]}: {sentence}"          # as the card and the Memorization page print it
        assert sentence.lower().count(name) == 0, line
        assert "4.6 %" in sentence and "1.2 %" in sentence, line      # the rates still said
        assert sentence[0].isupper() and sentence.endswith("."), line
    so, lk = (s for _, s in lines)
    assert "pick out exactly one person" in so and "two halves of a person's columns" in lk   # what each attack does
    assert ("a risk of 3.4 % beyond chance" in so) == (p_value < 0.05)


def test_the_density_ratio_sentence_says_what_each_hit_rate_is():
    """At 50dd0fb the sentence read "…, at 0.1 % 7.20 % (chance: the same as the false alarms)": a number where
    the words "false alarms, it picks out" belong."""
    r = SimpleNamespace(auc=0.52, auc_low=0.49, auc_high=0.55, better_than_chance=False, flags_copying=True,
                        tail_p_value=0.004, tpr=({"fpr": 0.01, "tpr": 0.094}, {"fpr": 0.001, "tpr": 0.072}))
    s = density_ratio_sentence(r)
    assert not re.search(r"%\s+\d[\d.,]*\s*%", s), s                 # no two percentages side by side
    assert "allowing 1 % false alarms it picks out 9.4 % of the training rows" in s, s
    assert "allowing 0.1 % it picks out 7.20 %" in s, s
    assert "as many as the false alarms it allows" in s, s
    for better, flags in ((True, True), (False, False)):
        s = density_ratio_sentence(SimpleNamespace(**{**vars(r), "better_than_chance": better, "flags_copying": flags}))
        assert not re.search(r"%\s+\d[\d.,]*\s*%", s), s
