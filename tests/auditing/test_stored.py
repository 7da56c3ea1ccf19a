"""An audit kept on disk reads back as the same audit, for its run state only, and never unpickles."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import memviz
from memviz.auditing.stored import INDEX, load_audit, save_audit
from memviz.verdict.evidence_words import evidence_sentences


@pytest.fixture(scope="module")
def planted_audit(fresh_split, planted):
    tr, ho, _ = fresh_split
    return memviz.audit(tr, planted[0], ho)


def _unclocked(page: str) -> str:
    """The report without the time it was written ("2026-12-02 20:11:02 UTC")."""
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "<time>", page)


def _same(a, b):
    assert a.to_json() == b.to_json()                       # every figure, the verdict, the evidence, provenance
    assert a.verdict == b.verdict
    pd.testing.assert_frame_equal(a.rows, b.rows)
    pd.testing.assert_frame_equal(a.columns, b.columns)
    pd.testing.assert_frame_equal(a.generated, b.generated)
    assert evidence_sentences(a.evidence) == evidence_sentences(b.evidence)
    assert a.row_test == b.row_test and a.provenance == b.provenance
    np.testing.assert_array_equal(a.floor_detail.hits, b.floor_detail.hits)
    assert a.floor_detail.null == b.floor_detail.null
    m, n = a.evidence.membership, b.evidence.membership
    np.testing.assert_array_equal(m.roc_fpr, n.roc_fpr)
    pd.testing.assert_frame_equal(m.rows, n.rows)


def test_an_audit_reads_back_whole(planted_audit, fresh_audit, tmp_path):
    for i, a in enumerate((planted_audit, fresh_audit)):
        save_audit(a, tmp_path / str(i), token=7)
        b = load_audit(tmp_path / str(i), token=7)
        assert b is not None and b is not a
        _same(a, b)
        assert _unclocked(a.to_html()) == _unclocked(b.to_html())
    assert planted_audit.n_over_copied > 0                   # the planted rows are named in the copy too
    assert sorted(load_audit(tmp_path / "0").over_copied_rows["row_id"]) == sorted(
        planted_audit.over_copied_rows["row_id"])


def test_another_run_state_or_version_or_a_missing_file_reads_as_none(fresh_audit, tmp_path):
    save_audit(fresh_audit, tmp_path, token=7)
    assert load_audit(tmp_path, token=8) is None
    assert load_audit(tmp_path / "nothing") is None
    index = json.loads((tmp_path / INDEX).read_text())
    (tmp_path / INDEX).write_text(json.dumps({**index, "version": "0.0.0-other"}))
    assert load_audit(tmp_path, token=7) is None
    (tmp_path / INDEX).write_text(json.dumps(index))
    assert load_audit(tmp_path, token=7) is not None
    (tmp_path / index["files"][0]).unlink()
    assert load_audit(tmp_path, token=7) is None


def test_a_second_save_replaces_the_first_and_leaves_no_files_behind(fresh_audit, planted_audit, tmp_path):
    save_audit(fresh_audit, tmp_path, token=1)
    first = set(p.name for p in tmp_path.iterdir())
    save_audit(planted_audit, tmp_path, token=2)
    names = set(p.name for p in tmp_path.iterdir())
    assert not (first - {INDEX}) & names
    assert names == set(json.loads((tmp_path / INDEX).read_text())["files"]) | {INDEX}
    assert load_audit(tmp_path, token=2).n_over_copied == planted_audit.n_over_copied


def test_only_memviz_dataclasses_are_built_and_no_array_is_unpickled(fresh_audit, tmp_path):
    save_audit(fresh_audit, tmp_path)
    index = json.loads((tmp_path / INDEX).read_text())
    forged = json.loads(json.dumps(index).replace("memviz.verdict.rowtest:RowTest", "subprocess:Popen"))
    (tmp_path / INDEX).write_text(json.dumps(forged))
    assert load_audit(tmp_path) is None
    outside = json.loads(json.dumps(index).replace(index["files"][0], "../elsewhere.parquet"))
    (tmp_path / INDEX).write_text(json.dumps(outside))
    assert load_audit(tmp_path) is None
    (tmp_path / INDEX).write_text(json.dumps(index))
    npy = next(f for f in index["files"] if f.endswith(".npy"))
    np.save(tmp_path / npy, np.array([{"a": 1}], dtype=object), allow_pickle=True)   # a pickled array
    assert load_audit(tmp_path) is None
    with pytest.raises(TypeError):
        save_audit({"not": object()}, tmp_path / "x")


# ------------------------------------------------------------------ crafted indexes (issue 41, item 5)
CRAFTED = """
import json, sys
from pathlib import Path
from memviz.auditing.stored import load_audit
folder = Path(sys.argv[1])
print("loaded:", load_audit(folder), flush=True)
print("imported:", sorted(m for m in ("memviz.__main__", "memviz.jobs.worker", "memviz.cli") if m in sys.modules))
"""


@pytest.mark.parametrize("name", ["memviz.__main__:Audit", "memviz.jobs.worker:JobSpec", "memviz.cli:X",
                                  "memviz.auditing.result:Audit.__init__", "builtins:dict"])
def test_a_crafted_index_names_no_code_to_import(planted_audit, tmp_path, name):
    """At e9efb32 ``_decode`` imported the module an index names: ``memviz.__main__`` ran the CLI inside
    the dashboard's server (a SystemExit that blanked the Memorization page)."""
    import subprocess
    import sys
    from pathlib import Path

    save_audit(planted_audit, tmp_path)
    index = json.loads((tmp_path / INDEX).read_text())
    index["tree"]["__dc__"] = name
    (tmp_path / INDEX).write_text(json.dumps(index))
    p = subprocess.run([sys.executable, "-c", CRAFTED, str(tmp_path)], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.splitlines() == ["loaded: None", "imported: []"]


@pytest.mark.parametrize("tree", [[], "x", {"__dc__": "memviz.auditing.result:Audit", "fields": "abc"},
                                  {"__map__": 5}, {"__np__": "O", "v": 1}, "[" * 100_000])
def test_a_malformed_index_reads_as_no_kept_audit(planted_audit, tmp_path, tree):
    save_audit(planted_audit, tmp_path)
    index = json.loads((tmp_path / INDEX).read_text())
    if tree == "[" * 100_000:
        (tmp_path / INDEX).write_text(tree)
    else:
        index["tree"] = tree
        (tmp_path / INDEX).write_text(json.dumps(index))
    out = load_audit(tmp_path)
    assert out is None or not hasattr(out, "verdict")
    (tmp_path / INDEX).write_text(json.dumps([index]))               # not an object
    assert load_audit(tmp_path) is None


def test_every_class_an_audit_holds_is_in_the_registry(planted_audit, tmp_path):
    from memviz.auditing.stored import kept_classes

    save_audit(planted_audit, tmp_path)
    names = set(re.findall(r'"__dc__": "([^"]+)"', (tmp_path / INDEX).read_text()))
    assert names and names <= set(kept_classes())
    assert all(n.split(":")[0].startswith(("memviz.verdict.", "memviz.auditing.", "memviz.evidence.", "memviz.measure.")) for n in names)
