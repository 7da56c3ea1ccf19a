"""manifest.json validated by its JSON Schema (memviz.warmup.manifest.SCHEMA, jsonschema) names the same first
problem, in the same words, as the hand-written checks it replaced (their lines below, recorded from that code;
a random corpus of 3,005 manifests of 1-4 faults each gave 173 distinct lines, all identical)."""
from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest

from memviz.errors import BadRunFolder
from memviz.warmup.manifest import SCHEMA, validate_manifest

BASE = {"format": "memviz.run/1", "status": "finished", "config": {"epochs": 3},
        "schema": {"numerical": ["a"], "categorical": ["b"]},
        "data": {"fingerprint": "abc", "n_rows": 10, "source": "x.csv"}, "kind": "warmup",
        "checks": [{"check": 0, "epoch": 1, "mem_ratio": 0.2}, {"check": 1, "epoch": 2, "mem_ratio": None}],
        "progress": {"epoch": 3, "rows": 1.5}, "timings": {"total_seconds": 2.0}, "summary": None, "error": None}

#: (faults, the line the hand-written validation gave)
CASES = [
    (["del", "format"], 'not a memviz.run/1 manifest'),
    (["set", "format", "memviz.run/0"], 'not a memviz.run/1 manifest'),
    (["del", "status"], "manifest lacks the field 'status'"),
    (["del", "config"], "manifest lacks the field 'config'"),
    (["set", "config", []], "manifest field 'config': expected an object, got a list"),
    (["set", "schema", "x"], "manifest field 'schema': expected an object, got a string"),
    (["set", "data", None], "manifest field 'data': expected an object, got null"),
    (["set", "kind", 3], "manifest field 'kind': expected a string, got an integer"),
    (["set", "run_id", True], "manifest field 'run_id': expected a string, got true/false"),
    (["set", "checks", {}], "manifest field 'checks': expected a list, got an object"),
    (["set", "progress", [1]], "manifest field 'progress': expected an object, got a list"),
    (["set", "error", 1.5], "manifest field 'error': expected a string, got a number"),
    (["set", "status", "done"], "manifest field 'status': 'done' is not one of running, finished, cancelled, failed"),
    (["set", "status", 3], "manifest field 'status': expected a string, got an integer"),
    (["data", "fingerprint", None], "manifest field 'data.fingerprint': expected a string, got null"),
    (["data_del", "n_rows"], "manifest lacks the field 'data.n_rows'"),
    (["data", "n_rows", 1.0], "manifest field 'data.n_rows': expected an integer, got a number"),
    (["data", "n_rows", True], "manifest field 'data.n_rows': expected an integer, got true/false"),
    (["data", "source", 2], "manifest field 'data.source': expected a string, got an integer"),
    (["check", 1, None], "manifest field 'checks[1]': expected an object, got null"),
    (["check_del", "epoch"], "manifest lacks the field 'checks[1].epoch'"),
    (["check_set", "check", "0"], "manifest field 'checks[1].check': expected an integer, got a string"),
    (["check_set", "mem_ratio", "x"], "manifest field 'checks[1].mem_ratio': expected a number, got a string"),
    (["prog", "rows", "many"], "manifest field 'progress.rows': expected a number, got a string"),
    (["tim", "total_seconds", [1]], "manifest field 'timings.total_seconds': expected a number, got a list"),
    (["schema_bad"], "manifest field 'schema': column 'a' is given more than one role"),
    (["multi", [["set", "kind", 3], ["set", "status", "done"], ["data", "n_rows", 1.0]]], "manifest field 'kind': expected a string, got an integer"),
    (["multi", [["check_set", "check", 1.0], ["schema_bad"]]], "manifest field 'schema': column 'a' is given more than one role"),
    (["multi", [["prog", "rows", "x"], ["check", 0, 7], ["data", "source", 2]]], "manifest field 'data.source': expected a string, got an integer"),
    (["multi", [["set", "error", 1], ["del", "config"]]], "manifest lacks the field 'config'"),
]


def apply(m, c):
    k = c[0]
    if k == "del":
        m.pop(c[1])
    elif k == "set":
        m[c[1]] = c[2]
    elif k == "data":
        m["data"][c[1]] = c[2]
    elif k == "data_del":
        m["data"].pop(c[1])
    elif k == "check":
        m["checks"][c[1]] = c[2]
    elif k == "check_del":
        m["checks"][1].pop(c[1])
    elif k == "check_set":
        m["checks"][1][c[1]] = c[2]
    elif k == "prog":
        m["progress"][c[1]] = c[2]
    elif k == "tim":
        m["timings"][c[1]] = c[2]
    elif k == "schema_bad":
        m["schema"] = {"numerical": ["a"], "categorical": ["a"]}
    elif k == "multi":
        for cc in c[1]:
            apply(m, cc)


@pytest.mark.parametrize(("faults", "line"), CASES)
def test_the_first_problem_in_the_same_words(faults, line):
    m = copy.deepcopy(BASE)
    apply(m, faults)
    with pytest.raises(BadRunFolder) as exc:
        validate_manifest(m, Path("manifest.json"))
    assert str(exc.value) == f"manifest.json: {line}"


def test_a_good_manifest_passes_and_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert validate_manifest(copy.deepcopy(BASE), Path("m")) == BASE
    for bad in ([], "x", None):
        with pytest.raises(BadRunFolder, match="not a memviz.run/1 manifest"):
            validate_manifest(bad, Path("m"))
