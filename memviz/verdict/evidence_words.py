"""The privacy tests beyond the ratio test in words: one plain sentence per test, composed here from its result's
figures (the results in :mod:`memviz.evidence` keep their figures and say nothing themselves: issue 53 item 2,
numbers below words).

* :func:`membership_sentence`, :func:`density_ratio_sentence`, :func:`data_copying_sentence`,
  :func:`attribute_sentence`, :func:`article29_sentence` (singling out, linkability) — one per test, taking its
  result;
* :func:`result_sentence` — any test's sentence (a caller's own test says its own: its ``sentence()``);
* :func:`evidence_sentences` — (test name in words, sentence) per test of an
  :class:`~memviz.evidence.suite.Evidence`: what the report's "Other tests" and the Memorization page print;
* :func:`result_record` — a test's JSON record (its ``to_dict()``) with its sentence, as audit.json holds it.

Plain text only: callers escape it.
"""
from __future__ import annotations

from collections.abc import Mapping

from memviz.evidence.article29 import Article29Result
from memviz.evidence.attribute import AttributeResult
from memviz.evidence.datacopying import DataCopyingResult
from memviz.evidence.densityratio import DensityRatioResult
from memviz.evidence.membership import MembershipResult
from memviz.evidence.suite import TEST_NAMES, Evidence
from memviz.text import percent
from memviz.verdict.words import with_sentence

CHANCE = "0.50 is chance"


def _auc(auc: float, low: float, high: float) -> str:
    return f"AUC {auc:.2f}, {low:.2f} to {high:.2f}; {CHANCE}"


def membership_sentence(r: MembershipResult) -> str:
    """The distance attack in one sentence: better than chance or not, with the AUC, its interval and the hit rate
    at 1 % false alarms."""
    ci = _auc(r.auc, r.auc_low, r.auc_high)
    head = "An attacker who sees the synthetic table"
    t1 = r.tpr[0]
    if r.better_than_chance:
        return (f"{head} tells training rows from fresh real rows better than chance ({ci}): allowing "
                f"{100 * t1['fpr']:g} % false alarms, it picks out {percent(t1['tpr'])} of the training rows "
                f"(chance: {100 * t1['fpr']:g} %).")
    if r.auc_high < 0.5:
        return (f"{head} does worse than chance at telling training rows from fresh real rows ({ci}): "
                "the generated rows sit no closer to the training rows than to fresh ones.")
    return f"{head} tells training rows from fresh real rows no better than chance ({ci})."


def density_ratio_sentence(r: DensityRatioResult) -> str:
    """The density-ratio attack in one sentence: better than chance or not, with the AUC and the hit rates at low
    false alarms."""
    ci = _auc(r.auc, r.auc_low, r.auc_high)
    head = "Comparing the synthetic table's density with the population's (the density-ratio attack), an attacker"
    t1, t2 = r.tpr
    hits = (f"allowing {100 * t1['fpr']:g} % false alarms it picks out {percent(t1['tpr'])} of the training "
            f"rows, and allowing {100 * t2['fpr']:g} % it picks out {percent(t2['tpr'], 2)}, where guessing at random "
            "picks out as many as the false alarms it allows")
    if r.better_than_chance:
        return f"{head} tells training rows from fresh real rows better than chance ({ci}): {hits}."
    if r.flags_copying:            # the tail test alone: a few rows stand out, the average does not move
        return (f"{head} tells training rows from fresh real rows no better than chance on average ({ci}), "
                f"but picks out more training rows than chance allows at low false alarms (exact tail test, "
                f"p {r.tail_p_value:.2g} after Bonferroni): {hits}; a few rows stand out.")
    if r.auc_high < 0.5:
        return f"{head} does worse than chance at telling training rows from fresh real rows ({ci})."
    return f"{head} tells training rows from fresh real rows no better than chance ({ci}; {hits})."


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


def data_copying_sentence(r: DataCopyingResult) -> str:
    """The data-copying test in one sentence: closer than fresh rows or not, where, with C_T and its p-value."""
    stat = f"data-copying statistic {r.c_t:+.1f}, p {_p(r.p_value)}"
    cc = r.copying_cells
    where = ""
    if len(cc):
        share = float(cc["holdout_share"].sum())
        first = cc.iloc[0]
        where = (f"; it copies in {len(cc)} of {r.n_cells} regions of the data holding {percent(share, 0)} of it, "
                 f"strongest among rows like: {first['description']}")
    if r.copying:
        return f"Generated rows sit closer to the training rows than fresh real rows do, a sign of copying ({stat}){where}."
    if r.c_t > 0 and r.p_value > 1 - r.alpha:
        return (f"Generated rows sit farther from the training rows than fresh real rows do: no sign of copying, "
                f"rather the mark of a model that does not fit the data closely ({stat}){where}.")
    return f"Generated rows are no closer to the training rows than fresh real rows are ({stat}){where}."


def attribute_sentence(r: AttributeResult) -> str:
    """The attribute attack in one sentence over the secrets: how many are given away, the worst one with its
    figures."""
    cols = r.columns
    head = "Knowing the other columns of a person, the nearest generated row gives away"
    ga = r.given_away
    first = (ga if len(ga) else cols.sort_values("excess", ascending=False)).iloc[0]
    fig = (f"{first['secret']}: right for {percent(first['rate'], 0)} of training rows against "
           f"{percent(first['control'], 0)} of people outside them, {100 * first['excess']:+.1f} points, "
           f"{100 * first['excess_low']:+.1f} to {100 * first['excess_high']:+.1f}")
    more = "more" if len(ga) else "no more"
    if len(cols) == 1:                                   # not "in any of 1 column"
        return f"{head} a training row's value {more} often than an outsider's in the one column attacked ({fig})."
    if len(ga):
        return (f"{head} a training row's value more often than an outsider's in {len(ga)} of {len(cols)} "
                f"columns (most: {fig}).")
    return (f"{head} a training row's value no more often than an outsider's in any of {len(cols)} columns "
            f"(highest: {fig}).")


#: what each Article 29 attack does, in words (without its name: the "Other tests" list, the card and the
#: Memorization page print the name before the sentence)
ARTICLE29_WHAT = {"singling_out": "Drawing predicates from the synthetic rows to pick out exactly one person",
                  "linkability": "Joining two halves of a person's columns through the synthetic rows"}


def article29_sentence(r: Article29Result) -> str:
    """Singling out or linkability in one sentence, after its name: what the attack does, its success rates on
    training rows and on fresh ones, and the risk beyond chance when it is shown."""
    what = ARTICLE29_WHAT[r.test]
    rates = (f"{what} succeeds in {percent(r.main_rate)} of attacks on training rows against "
             f"{percent(r.control_rate)} on real rows the model never saw")
    p = "p < 0.001" if r.p_value < 0.001 else f"p {r.p_value:.2g}"
    if r.flags_risk:
        return f"{rates}: a risk of {percent(r.risk)} beyond chance ({p})."
    return f"{rates}: no risk beyond chance shown ({p})."


#: each result type's sentence
SENTENCES = {MembershipResult: membership_sentence, DensityRatioResult: density_ratio_sentence,
             DataCopyingResult: data_copying_sentence, AttributeResult: attribute_sentence,
             Article29Result: article29_sentence}


def result_sentence(result) -> str:
    """``result``'s sentence: memviz's own tests are worded here (:data:`SENTENCES`); a caller's own test (an
    :attr:`~memviz.evidence.suite.Evidence.extra`: the targeted attack, :class:`memviz.attacks.lira.TargetedResult`,
    whose stored result.json carries its sentence, or a caller's own kind) says its own, its ``sentence()``."""
    words = SENTENCES.get(type(result))
    return words(result) if words is not None else str(result.sentence())


def evidence_sentences(evidence: Evidence) -> list[tuple[str, str]]:
    """(test name in words, its sentence) per test of ``evidence``, in :data:`memviz.evidence.suite.TESTS` order,
    then the extra ones: what the report's "Other tests" and the Memorization page print."""
    return [(TEST_NAMES.get(k, k.replace("_", " ")), result_sentence(evidence[k])) for k in evidence]


def result_record(result) -> dict:
    """``result.to_dict()`` with its sentence (:func:`result_sentence`) under ``"sentence"``, as audit.json holds a
    test: memviz's own tests hold it just before ``"seconds"`` (their last key), a caller's own test last (or where
    its record already has one)."""
    d = result.to_dict()
    d = dict(d) if isinstance(d, Mapping) else {"value": d}
    return with_sentence(d, result_sentence(result), "seconds" if type(result) in SENTENCES else None)
