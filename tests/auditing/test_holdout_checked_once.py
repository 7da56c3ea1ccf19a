"""Issue 37 item 4: the hold-out is checked once, at the door (memviz.evidence.holdout.checked_holdout), and
no function carries a flag that skips a re-check. Before: one audit checked the evidence's hold-out's columns
and emptiness six times and ran the privacy tests with ``holdout_checked=True``."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

import memviz
from memviz.errors import MemvizError
from memviz.evidence import holdout as eh
from memviz.evidence.membership import membership_inference

PKG = Path(memviz.__file__).parent


def _counting(monkeypatch, hold_rows: int) -> Counter:
    """Count, from here on, the hold-out's column/row checks, its training-row hashes and the closeness test's
    overlap check."""
    from memviz.measure import dcr

    n = Counter()
    as_table, row_keys, check = eh.as_table, eh.row_keys, dcr.check_holdout

    def counted_as_table(train, other, role, what):
        n["columns"] += what == "hold-out"
        return as_table(train, other, role, what)

    def counted_row_keys(df, cols):
        n["hashes"] += len(df) == hold_rows
        return row_keys(df, cols)

    def counted_check(*a, **k):
        n["closeness overlap"] += 1
        return check(*a, **k)

    monkeypatch.setattr(eh, "as_table", counted_as_table)
    monkeypatch.setattr(eh, "row_keys", counted_row_keys)
    monkeypatch.setattr(dcr, "check_holdout", counted_check)
    return n


def test_one_audit_checks_the_holdout_once(fresh_split, monkeypatch):
    tr, ho, fresh = fresh_split
    n = _counting(monkeypatch, len(ho))
    a = memviz.audit(tr, fresh.data, ho)
    assert set(a.evidence) >= {"membership", "data_copying", "density_ratio"}
    # columns and rows checked once for the four tests (was 6), the training rows hashed and counted once,
    # the closeness test's own refusal once
    assert n == Counter({"columns": 1, "hashes": 1, "closeness overlap": 1}), n


def test_the_privacy_tests_take_the_checked_holdout_as_is(fresh_split, monkeypatch):
    tr, ho, fresh = fresh_split
    checked = eh.checked_holdout(tr, ho)
    assert checked.table is ho and eh.checked_holdout(tr, checked) is checked
    n = _counting(monkeypatch, len(ho))
    once = membership_inference(tr, fresh, checked)
    assert n["columns"] == 0 and n["hashes"] == 0
    raw = membership_inference(tr, fresh, ho)                          # a raw hold-out: checked through the door
    assert n["columns"] == 1 and n["hashes"] == 1
    assert once.auc == raw.auc and once.n_holdout == raw.n_holdout
    other = tr.subset(tr.row_ids[:400])                                # checked against another table: again
    assert eh.checked_holdout(other, checked).train is other and n["columns"] == 2


def test_a_checked_holdout_is_made_by_the_one_function_only(fresh_split):
    tr, ho, _ = fresh_split
    with pytest.raises(TypeError, match="checked_holdout"):
        eh.CheckedHoldout(ho, tr)


def test_the_checks_refuse_as_before(fresh_split):
    tr, ho, _ = fresh_split
    with pytest.raises(MemvizError, match=r"^train: 800 of 800 hold-out rows are training rows; pass real rows"):
        eh.checked_holdout(tr, tr)
    with pytest.raises(MemvizError, match=r"^holdout: the hold-out has no rows$"):
        eh.checked_holdout(tr, ho.subset(ho.row_ids[:0]))
    with pytest.raises(MemvizError, match=r"column 'age': in the training table but not in this one"):
        eh.checked_holdout(tr, ho.data.drop(columns="age"))


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
