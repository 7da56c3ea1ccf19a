"""Issue 51 item 4: the report's bad verdict box had no colour and labels like "Evidence: data_copying"; it is
coloured by the verdict's tone and names the other tests with the words the pages use."""
from __future__ import annotations


def test_the_reports_verdict_box_is_coloured_by_its_tone_in_the_pages_words(fresh_split, planted):
    import memviz
    from memviz.auditing.html import audit_card
    from memviz.auditing.templating import blocks
    from memviz.verdict.evidence_words import evidence_sentences

    tr, ho, _ = fresh_split
    syn, _, _ = planted
    a = memviz.audit(tr, syn, ho)
    assert a.verdict.tone == "bad"
    card = audit_card(a)
    html = blocks().card(card, "")
    assert "class='verdict tone-bad'" in html, html[:300]
    assert "Evidence:" not in html and not any("_" in ln.topic for ln in card.lines), [ln.topic for ln in card.lines]
    page_words = {name[:1].upper() + name[1:] for name, _ in evidence_sentences(a.evidence)}
    assert page_words & {ln.topic for ln in card.lines}
    assert ".verdict.tone-bad" in memviz.auditing.report.CSS
