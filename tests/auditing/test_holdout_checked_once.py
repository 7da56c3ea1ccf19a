"""Issue 37 item 4: the hold-out is checked once, at the door (memviz.tables.holdout.checked_holdout), and
no function carries a flag that skips a re-check. The floor, the DCR share and the privacy tests take the
CheckedHoldout as is. Before: one audit checked the hold-out's columns 4 times (the builder's reading, the
floor, the DCR share, the evidence's door), its emptiness 4 times (floor, the closeness check's guard, DCR
share, door), hashed it 3 times (the floor's fingerprint, the floor's row hashes, the door's row keys) and
counted its training rows 3 times (the closeness check, the floor's over-half rule, the door's).

After, in one audit: columns once (the door; the builder's reading of a DataFrame or a path selects the
schema's columns, which is reading, not a check of a Table), emptiness once (the door), its rows hashed once
(the door's :func:`~memviz.tables.holdout.row_hashes`, whose count is the floor's n_identical), its training
rows counted against the half once (the door). Two remain, and are other things:

* :func:`memviz.tables.data.fingerprint` of the hold-out, once (in the door): the provenance hash of its values
  and row_ids that audit.json records and the floor's refusal of the reference itself compares, not a row hash;
* :func:`memviz.measure.tooclose.check_holdout`, once: the closeness tests' reading of the one hold-out rule
  (:func:`memviz.tables.holdout.shared_rows`, issue 49: the door's rule since the flat half was dropped) from
  the standardized distances; it runs before the door because its refusal (and the closeness test's refusal of an
  empty hold-out) is the one a user gets today.
"""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import memviz
from memviz.errors import MemvizError
from memviz.evaluate import synthetic as es
from memviz.evidence.membership import membership_inference
from memviz.tables import holdout as eh
from memviz.tables.data import table_from_frame

PKG = Path(memviz.__file__).parent


def _counting(monkeypatch, hold_rows: int) -> Counter:
    """Count, from here on, the hold-out's column/row checks (the door's and the DCR share's own), its row
    hashes, its fingerprints and the closeness test's overlap check."""
    from memviz.measure import tooclose
    from memviz.verdict import build

    n = Counter()
    as_table, row_hashes, fingerprint, check = eh.as_table, eh.row_hashes, eh.fingerprint, tooclose.check_holdout
    same_columns = es.check_same_columns

    def counted_as_table(train, other, role, what, **k):
        n["columns"] += what == "hold-out"
        n["emptiness"] += what == "hold-out"
        return as_table(train, other, role, what, **k)

    def counted_row_hashes(encoder, df):
        n["hashes"] += len(df) == hold_rows
        return row_hashes(encoder, df)

    def counted_fingerprint(t):
        n["fingerprints"] += len(t) == hold_rows
        return fingerprint(t)

    def counted_check(*a, **k):
        n["closeness overlap"] += 1
        return check(*a, **k)

    def counted_same_columns(train, other, source):    # the DCR share's own check names the hold-out's source
        n["columns"] += len(other) == hold_rows and source != "synthetic"
        return same_columns(train, other, source)

    monkeypatch.setattr(eh, "as_table", counted_as_table)
    monkeypatch.setattr(eh, "row_hashes", counted_row_hashes)
    monkeypatch.setattr(eh, "fingerprint", counted_fingerprint)
    monkeypatch.setattr(tooclose, "check_holdout", counted_check)
    monkeypatch.setattr(build, "check_holdout", counted_check)    # the builder's own name for it
    monkeypatch.setattr(es, "check_same_columns", counted_same_columns)
    return n


def test_one_audit_checks_the_holdout_once(fresh_split, monkeypatch):
    tr, ho, fresh = fresh_split
    n = _counting(monkeypatch, len(ho))
    a = memviz.audit(tr, fresh.data, ho)
    assert set(a.evidence) >= {"membership", "data_copying", "density_ratio"} and a.dcr_share is not None
    # columns and rows checked once (was 4 and 4), its rows hashed once (was 3: the fingerprint is provenance),
    # its training rows counted against the half once (was 2, plus the closeness test's own test)
    assert n == Counter({"columns": 1, "emptiness": 1, "hashes": 1, "fingerprints": 1, "closeness overlap": 1}), n


def test_the_privacy_tests_take_the_checked_holdout_as_is(fresh_split, monkeypatch):
    tr, ho, fresh = fresh_split
    checked = eh.checked_holdout(tr, ho)
    assert checked.table is ho and eh.checked_holdout(tr, checked) is checked
    n = _counting(monkeypatch, len(ho))
    once = membership_inference(tr, fresh, checked)
    assert n["columns"] == 0 and n["hashes"] == 0
    raw = membership_inference(tr, fresh, ho)                          # a raw hold-out: checked through the door
    assert n["columns"] == 1 and n["hashes"] == 1 and n["fingerprints"] == 0
    assert once.auc == raw.auc and once.n_holdout == raw.n_holdout
    other = tr.subset(tr.row_ids[:400])                                # checked against another table: again
    assert eh.checked_holdout(other, checked).train is other and n["columns"] == 2


def test_a_checked_holdout_is_made_by_the_one_function_only(fresh_split):
    tr, ho, _ = fresh_split
    with pytest.raises(TypeError, match="checked_holdout"):
        eh.CheckedHoldout(ho, tr)


def test_the_checks_refuse_as_before(fresh_split):
    tr, ho, _ = fresh_split
    with pytest.raises(MemvizError, match=r"^train: 800 of its 800 rows \(100\.0 %\) are rows of the training table, "
                                          r"where the training table repeats 0\.0 % of its own rows: pass real rows"):
        eh.checked_holdout(tr, tr)
    with pytest.raises(MemvizError, match=r"^holdout: the hold-out has no rows$"):
        eh.checked_holdout(tr, ho.subset(ho.row_ids[:0]))
    with pytest.raises(MemvizError, match=r"column 'age': in the training table but not in this one"):
        eh.checked_holdout(tr, ho.data.drop(columns="age"))


def test_the_floor_takes_the_checked_holdout_and_keeps_its_words(fresh_split, monkeypatch):
    from memviz.measure.floor import holdout_floor

    tr, ho, _ = fresh_split
    checked = eh.checked_holdout(tr, ho, against=eh.REFERENCE)
    n = _counting(monkeypatch, len(ho))
    fl = holdout_floor(tr, checked)
    assert n["columns"] == n["hashes"] == n["fingerprints"] == 0 and fl.n_identical == checked.n_identical
    assert fl.to_dict() | {"seconds": 0} == holdout_floor(tr, ho).to_dict() | {"seconds": 0}
    with pytest.raises(MemvizError, match=r"^train: 800 of its 800 rows \(100\.0 %\) are rows of the training table"):
        holdout_floor(tr, tr)
    with pytest.raises(MemvizError, match=r"^mixed: 500 of its 600 rows \(83\.3 %\) are rows of the training table, "
                                          r"where the training table repeats 0\.0 % of its own rows: pass real rows "
                                          r"the model never saw \(a test split or a hold-out\)$"):
        holdout_floor(tr, table_from_frame(pd.concat([tr.data.iloc[:500], ho.data.iloc[:100]], ignore_index=True),
                                           tr.schema, source="mixed", role="test"))


def test_no_function_takes_a_checked_flag():
    """No function in memviz has a parameter named ``checked`` or ``*_checked``: a checked value has a type."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                    if arg.arg == "checked" or arg.arg.endswith("_checked"):
                        found.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name}({arg.arg})")
    assert not found, found
