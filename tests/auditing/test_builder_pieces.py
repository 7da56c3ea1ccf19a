"""The audit builder's pieces (issue 37 item 4): the two entry points pass down a few typed values instead of
18 loose parameters: the generated rows with the ratio test's flags, what the hold-out gives, the options."""
from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest

import memviz
from memviz.verdict import build

#: the work behind the public doors: their keywords are the library's and the CLI's API (memviz.audit,
#: memviz.audit.from_run)
DOORS = {"audit_fields", "run_fields"}


def _counts() -> dict[str, int]:
    """Every function in build.py (nested ones too) and how many parameters it takes."""
    tree = ast.parse(Path(build.__file__).read_text(encoding="utf-8"))
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            out[node.name] = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None)
                              + (a.kwarg is not None))
    return out


def test_finish_takes_at_most_six_parameters():
    """It took 17 (train, the frame, nn1, ratio, memorized and 12 keywords)."""
    assert len(inspect.signature(build._finish).parameters) <= 6


def test_no_function_in_the_builder_takes_more_than_ten_parameters():
    """Before: _finish 17, _from_run 13; the doors keep their documented keywords."""
    counts = _counts()
    assert DOORS <= set(counts)
    too_many = {name: n for name, n in counts.items() if n > 10 and name not in DOORS}
    assert not too_many, too_many


def test_the_pieces_are_frozen_and_read_the_arrays_once():
    gen = build._Generated(None, [3, 1], [0.2, 0.5], [1, 0], "paper")
    assert gen.nn1.dtype == np.int64 and gen.ratio.dtype == float and gen.memorized.dtype == bool
    assert gen.per_check is None
    for piece in (gen, build._HeldOut(), build._Options("cpu", True, True, True, 0)):
        assert dataclasses.is_dataclass(piece)
        with pytest.raises(dataclasses.FrozenInstanceError):
            piece.remote = object()


def test_audit_builds_its_options_once_and_passes_them_down(fresh_split, monkeypatch):
    tr, ho, fresh = fresh_split
    seen = []
    real = build._finish

    def spy(train, generated, held, opts, provenance):
        seen.append((generated, held, opts))
        return real(train, generated, held, opts, provenance)

    monkeypatch.setattr(build, "_finish", spy)
    a = memviz.audit(tr, fresh.data.iloc[:200], ho, distance="standardized", device="cpu", quality=False,
                     evidence=False, seed=5)
    (generated, held, opts), = seen
    assert opts == build._Options(device="cpu", quality=False, dcr=True, evidence=False, seed=5, remote=None)
    assert generated.distance == "standardized" and len(generated.nn1) == 200 and generated.per_check is None
    assert held.checked is not None and held.close is not None and held.floor is not None
    assert a.shape is None and a.dcr_share is not None and a.provenance.distance == "standardized"
