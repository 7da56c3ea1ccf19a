"""The tests beyond the ratio test inside the Audit: computed by default, typed and frozen, in audit.json
(validated), in the verdict as a named qualifier, in the report's "Other tests", the CLI and the page helper."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from evidence_tables import numeric_table, plant, three_parts
from helpers import memviz_cli

import memviz
from memviz.auditing.json_schema import validate
from memviz.evidence.suite import TESTS, Evidence
from memviz.verdict.evidence_words import attribute_sentence, evidence_sentences


@pytest.fixture(scope="module")
def high_floor():
    """All-numerical parts (the paper's ratio test flags fresh rows at > 80 %) and 20 % planted copies."""
    tr, sy, ho = three_parts(numeric_table(1500, seed=7), 500, seed=4)
    syn, copied = plant(tr, sy, 0.2, seed=5)
    return tr, syn, ho, copied


def test_fresh_rows_give_no_evidence_of_copying(fresh_audit):
    ev = fresh_audit.evidence
    assert isinstance(ev, Evidence) and tuple(ev) == TESTS
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.membership = None
    m, d = ev.membership, ev.data_copying
    assert m.auc_low <= 0.5 <= m.auc_high and not m.flags_copying
    assert not d.copying and not d.flags_copying
    a = ev.attribute.columns.iloc[0]
    assert a["secret"] == fresh_audit.provenance.target and a["excess_low"] <= 0 <= a["excess_high"]
    assert ev.flags_copying == ()
    assert "evidence_disagrees" not in fresh_audit.verdict.qualifiers


def test_planted_copies_on_a_high_floor_table_are_copying_read_from_closeness(high_floor):
    """Where the ratio test is blind (its floor above 80 %), the closeness tests see the planted copies,
    and the verdict says the ratio test could not (it used to refuse: floor_too_high)."""
    tr, syn, ho, copied = high_floor
    a = memviz.audit(tr, syn, ho, quality=False, dcr=False)
    assert a.floor > 0.8 and a.verdict.code == "copying" and "ratio_blind" in a.verdict.qualifiers
    assert {"identical", "too_close"} <= set(a.family.holding)
    assert a.evidence.membership.flags_copying and a.evidence.data_copying.flags_copying
    assert "evidence_disagrees" not in a.verdict.qualifiers                 # the family found it too
    assert "cannot see copying" in a.verdict.sentence
    # the planted source rows are the most exposed ones, and the ones copied verbatim (each once: too
    # few for the per-row test to name any, so the sentence counts them instead)
    assert set(a.evidence.membership.rows.head(len(copied))["row_id"]) == set(copied)
    assert set(a.verbatim_rows["row_id"]) == set(copied) and a.n_over_copied == 0
    assert f"{len(copied)} training rows appear verbatim (real rows would give about 0 identical rows)" in a.verdict.sentence
    # without the planted copies: no copying, still said blind
    _, sy, _ = three_parts(numeric_table(1500, seed=7), 500, seed=4)
    clean = memviz.audit(tr, sy, ho, quality=False, dcr=False)
    assert clean.verdict.code == "no_copying" and "ratio_blind" in clean.verdict.qualifiers


def test_audit_json_carries_and_validates_the_evidence(fresh_audit, high_floor):
    doc = json.loads(fresh_audit.to_json())
    validate(doc)
    assert set(doc["evidence"]) == set(TESTS)
    assert doc["evidence"]["membership"]["auc"] == pytest.approx(fresh_audit.evidence.membership.auc)
    assert doc["evidence"]["data_copying"]["flags_copying"] is False
    assert doc["evidence"]["attribute"]["sentence"] == attribute_sentence(fresh_audit.evidence.attribute)
    bad = json.loads(fresh_audit.to_json())
    del bad["evidence"]["membership"]["auc"]
    with pytest.raises(memviz.MemvizError, match="evidence/membership"):
        validate(bad)


def test_evidence_false_skips_it_and_no_holdout_has_none(fresh_split):
    tr, ho, fresh = fresh_split
    a = memviz.audit(tr, fresh, ho, evidence=False, quality=False, dcr=False)
    assert len(a.evidence) == 0 and a.to_dict()["evidence"] == {}
    assert "<h2>Other tests</h2>" not in a.to_html()
    b = memviz.audit(tr, fresh, None, quality=False, dcr=False)
    assert len(b.evidence) == 0


def test_reused_distances_give_the_same_test_as_a_fresh_search(fresh_split):
    """With the standardized distance the audit hands the memorization pass's d1 to the data-copying
    test; the result equals the test's own search."""
    from memviz.evidence.datacopying import data_copying_test

    tr, ho, fresh = fresh_split
    a = memviz.audit(tr, fresh, ho, distance="standardized", quality=False, dcr=False)
    own = data_copying_test(tr, fresh, ho, device="cpu")
    got = a.evidence.data_copying
    assert got.c_t == pytest.approx(own.c_t, abs=1e-12) and got.p_value == pytest.approx(own.p_value, abs=1e-12)
    np.testing.assert_allclose(got.cells["z"].to_numpy(), own.cells["z"].to_numpy(), atol=1e-12)


def test_report_has_an_other_tests_section_with_inert_sentences(high_floor):
    tr, syn, ho, _ = high_floor
    t = tr.data.rename(columns={"x0": "<b>x0</b>"})
    from memviz.tables.data import Table
    from memviz.tables.schema import Schema

    cols = tuple(t.columns)
    schema = Schema(numerical=cols, categorical=(), target=None)
    tr2 = Table(t, schema, "train")
    a = memviz.audit(tr2, syn.set_axis(cols, axis=1), ho.data.set_axis(cols, axis=1), quality=False, dcr=False)
    page = a.to_html(redacted=False)            # the redacted report hides the regions' values
    assert "<h2>Other tests</h2>" in page and "<b>x0</b>" not in page
    for _, sentence in evidence_sentences(a.evidence):
        assert sentence.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in page.replace("&#x27;", "'")


def test_memviz_audit_cli_writes_the_same_evidence_as_the_library(fresh_split, fresh_audit, tmp_path, capsys):
    tr, ho, fresh = fresh_split
    for name, t in (("tr", tr), ("ho", ho), ("syn", fresh)):
        t.data.to_csv(tmp_path / f"{name}.csv", index=False)
    tr.schema.save(tmp_path / "meta.json")
    rc, last, err = memviz_cli(capsys, "audit", "--train", tmp_path / "tr.csv", "--schema", tmp_path / "meta.json",
                         "--synthetic", tmp_path / "syn.csv", "--holdout", tmp_path / "ho.csv", "--out",
                         tmp_path / "out", "--quiet")
    assert rc == 0, err
    assert json.loads(last)["verdict"]["code"] == fresh_audit.verdict.code          # the headline is the last line
    doc = json.loads((tmp_path / "out" / "audit.json").read_text())
    lib = fresh_audit.to_dict()["evidence"]
    for k in TESTS:
        assert doc["evidence"][k]["sentence"] == lib[k]["sentence"], k
    assert doc["evidence"]["membership"]["auc_ci"] == pytest.approx(lib["membership"]["auc_ci"])
    assert doc["evidence"]["data_copying"]["c_t"] == pytest.approx(lib["data_copying"]["c_t"])
    rc, _, err = memviz_cli(capsys, "audit", "--train", tmp_path / "tr.csv", "--schema", tmp_path / "meta.json",
                      "--synthetic", tmp_path / "syn.csv", "--holdout", tmp_path / "ho.csv", "--out",
                      tmp_path / "out2", "--quiet", "--no-evidence")
    assert rc == 0, err
    assert json.loads((tmp_path / "out2" / "audit.json").read_text())["evidence"] == {}


def test_memorization_page_lines_are_the_audits_sentences(fresh_audit):
    from memviz.app.audits import evidence_lines

    lines = evidence_lines(fresh_audit)
    assert [s for _, s in lines] == [s for _, s in evidence_sentences(fresh_audit.evidence)]
    assert [t for t, _ in lines] == ["The membership attack", "The data-copying test", "The attribute attack",
                                     "The density-ratio attack", "Singling out", "Linkability"]


def test_density_ratio_and_the_strongest_attack_are_in_the_audit(fresh_audit, high_floor):
    """The density-ratio attack runs in the audit within its limits, validates in audit.json, and the
    Evidence reads every membership attack on one scale (the lead's verdict takes the strongest)."""
    from memviz.auditing.json_schema import validate
    from memviz.evidence.attack_readings import strongest
    from memviz.evidence.densityratio import AUDIT_LIMITS

    dr = fresh_audit.evidence.density_ratio
    assert dr is not None and dr.n_members <= AUDIT_LIMITS["max_queries"]
    assert not dr.flags_copying
    doc = json.loads(fresh_audit.to_json())
    validate(doc)
    assert doc["evidence"]["density_ratio"]["p_value"] == pytest.approx(dr.p_value)
    readings = fresh_audit.evidence.attack_readings()
    assert [r.test for r in readings] == ["membership", "density_ratio"]
    assert strongest(readings) in readings
    tr, syn, ho, _ = high_floor
    ev = memviz.audit(tr, syn, ho, quality=False, dcr=False).evidence
    best = strongest(ev.attack_readings())
    assert best.flags and best.strength == min(r.strength for r in ev.attack_readings())
