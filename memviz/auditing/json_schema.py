"""The JSON Schema (draft 2020-12) of audit.json (:meth:`memviz.auditing.result.Audit.to_dict`, format :data:`memviz.auditing.result.FORMAT`).

Kept as Python data so that it ships inside the package; :func:`validate` checks a document
against it with the ``jsonschema`` package (a dependency of the dashboard's stack), one
BadRunFolder line naming the first problem. ``python -m memviz.auditing.json_schema`` prints it.
"""
from __future__ import annotations

import jsonschema

from memviz.auditing.result import FORMAT
from memviz.errors import BadRunFolder
from memviz.verdict.family import MEMBERS
from memviz.verdict.verdict import CODES, QUALIFIERS

_NUM = {"type": "number"}
_SHARE = {"type": "number", "minimum": 0, "maximum": 1}
_OPT_SHARE = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
_OPT_NUM = {"type": ["number", "null"]}
_PAIR = {"type": ["array", "null"], "items": _NUM, "minItems": 2, "maxItems": 2}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT = {"type": "string"}

_P = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
#: a training row as audit.json names it: by the user's key (``key``: its value; the column is the document's
#: top-level ``key``) when the table has one, else by memviz's ``row_id`` (its 0-based position in the file); a
#: composite key (top-level ``key`` a list of columns) names a row by an object, ``{column: value}`` per key column
_KEY_PART = {"type": ["string", "integer", "number", "null"]}
_KEY_VALUE = {"oneOf": [_KEY_PART, {"type": "object", "minProperties": 2, "additionalProperties": _KEY_PART}]}
_NAMED = {"oneOf": [{"required": ["key"], "not": {"required": ["row_id"]}},
                    {"required": ["row_id"], "not": {"required": ["key"]}}]}
_EXPOSED = {"type": "array", "items": {"type": "object", "required": ["score", "p_value"], **_NAMED,
                                       "properties": {"key": _KEY_VALUE, "row_id": {"type": "integer"}}}}
#: singling out and linkability (:mod:`memviz.evidence.article29`)
_ARTICLE29 = {
    "type": "object", "required": ["test", "n_attacks", "main_rate", "control_rate", "risk", "p_value", "flags_risk",
                                   "sentence"],
    "properties": {"test": {"enum": ["singling_out", "linkability"]}, "n_attacks": _COUNT, "main_rate": _SHARE,
                   "main_ci": _PAIR, "control_rate": _SHARE, "control_ci": _PAIR, "risk": _OPT_NUM, "p_value": _P,
                   "flags_risk": {"type": "boolean"}, "detail": _TEXT, "sentence": _TEXT}}
#: the tests beyond the ratio test (:mod:`memviz.evidence.suite`), as :meth:`Audit.to_dict` writes them
_EVIDENCE = {
    "membership": {
        "type": "object",
        "required": ["test", "distance", "auc", "auc_ci", "tpr_at_fpr", "n_exposed", "flags_copying", "sentence"],
        "properties": {
            "test": {"const": "membership"}, "distance": {"enum": ["paper", "standardized"]}, "auc": _P,
            "auc_ci": _PAIR, "n_exposed": _COUNT, "flags_copying": {"type": "boolean"}, "sentence": _TEXT,
            "tpr_at_fpr": {"type": "array", "items": {"type": "object", "required": ["fpr", "tpr", "low", "high"],
                                                      "properties": {"fpr": _SHARE, "tpr": _SHARE, "low": _SHARE,
                                                                     "high": _SHARE}}},
            "most_exposed": _EXPOSED,
        }},
    "data_copying": {
        "type": "object",
        "required": ["test", "distance", "n_cells", "c_t", "z", "p_value", "copying", "flags_copying", "cells",
                     "sentence"],
        "properties": {
            "test": {"const": "data_copying"}, "distance": {"enum": ["paper", "standardized"]}, "n_cells": _COUNT,
            "c_t": _OPT_NUM, "z": _OPT_NUM, "p_value": _P, "copying": {"type": "boolean"},
            "flags_copying": {"type": "boolean"}, "copying_share": _SHARE, "sentence": _TEXT,
            "cells": {"type": "array", "items": {"type": "object", "required": ["cell", "n_train", "n_holdout",
                                                                                 "n_synthetic", "z", "copies"]}},
        }},
    "singling_out": _ARTICLE29,
    "linkability": _ARTICLE29,
    "density_ratio": {
        "type": "object",
        "required": ["test", "encoding", "auc", "auc_ci", "tpr_at_fpr", "n_exposed", "p_value", "flags_copying",
                     "sentence"],
        "properties": {
            "test": {"const": "density_ratio"}, "encoding": {"type": "object", "required": ["name", "bandwidth"]},
            "auc": _P, "auc_ci": _PAIR, "n_exposed": _COUNT, "p_value": _P, "flags_copying": {"type": "boolean"},
            "n_members": _COUNT, "n_nonmembers": _COUNT, "sentence": _TEXT,
            "tpr_at_fpr": {"type": "array", "items": {"type": "object",
                                                      "required": ["fpr", "tpr", "low", "high", "p_value"],
                                                      "properties": {"fpr": _SHARE, "tpr": _SHARE, "low": _SHARE,
                                                                     "high": _SHARE, "p_value": _P}}},
            "most_exposed": _EXPOSED,
        }},
    "attribute": {
        "type": "object", "required": ["test", "distance", "columns", "n_given_away", "sentence"],
        "properties": {
            "test": {"const": "attribute_inference"}, "distance": {"enum": ["paper", "standardized"]},
            "n_given_away": _COUNT, "sentence": _TEXT,
            "columns": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["secret", "rate", "control", "excess", "excess_low", "excess_high"],
                "properties": {"secret": _TEXT, "rate": _SHARE, "control": _SHARE,
                               "excess": {"type": "number", "minimum": -1, "maximum": 1}}}},
        }},
}

#: one event's share against its reference (:class:`memviz.measure.tooclose.ReferenceShare`)
_REFERENCE_SHARE = {
    "type": "object", "required": ["altered", "n", "share", "n_holdout", "holdout_share", "pooled", "reference_share",
                                   "p"],
    "properties": {"altered": _COUNT, "n": _COUNT, "share": _SHARE, "n_holdout": _COUNT, "holdout_share": _SHARE,
                   "n_training": _COUNT, "training_share": _OPT_SHARE, "pooled": {"type": "boolean"},
                   "reference_share": _SHARE, "p": _P,
                   "by_column": {"type": "array", "items": {"type": "object", "required": ["column", "n"],
                                                            "properties": {"column": _TEXT, "n": _COUNT}}}}}

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": FORMAT,
    "title": "memviz audit",
    "type": "object",
    "required": ["format", "verdict", "findings", "n_over_copied", "ratio_test", "identical_share",
                 "holdout_identical_share", "provenance", "row_test", "key"],
    "properties": {
        "format": {"const": FORMAT},
        "key": {"oneOf": [{"type": ["string", "null"]},
                          {"type": "array", "items": _TEXT, "minItems": 2, "uniqueItems": True}]},
        "findings": {"type": "array", "items": {
            "type": "object", "required": ["member", "test", "observed", "expected", "p", "p_adjusted", "holds", "text"],
            "properties": {"member": {"enum": list(MEMBERS)}, "test": _TEXT, "observed": _OPT_NUM,
                           "expected": _OPT_NUM, "p": _P, "p_adjusted": _P, "holds": {"type": "boolean"},
                           "text": _TEXT}}},
        "ratio_test": {
            "type": "object", "required": ["mem_ratio", "floor", "floor_ci", "excess", "excess_ci", "copy_share",
                                           "copy_share_ci"],
            "properties": {"mem_ratio": _SHARE, "n_memorized": _COUNT, "floor": _OPT_SHARE, "floor_ci": _PAIR,
                           "excess": {"type": ["number", "null"], "minimum": -1, "maximum": 1}, "excess_ci": _PAIR,
                           "copy_share": _OPT_NUM, "copy_share_ci": _PAIR}},
        "n_over_copied": _COUNT,
        "identical_share": _OPT_SHARE, "holdout_identical_share": _OPT_SHARE, "flagged_exact_share": _OPT_SHARE,
        "dcr_share": _OPT_SHARE, "shape": _OPT_SHARE, "shape_reference": _OPT_SHARE,
        "verdict": {
            "type": "object", "required": ["code", "sentence", "tone", "qualifiers"],
            "properties": {
                "code": {"enum": list(CODES)},
                "sentence": {"type": "string", "minLength": 1}, "next_step": _TEXT,
                "tone": {"enum": ["good", "bad", "warn"]},
                "qualifiers": {"type": "array", "items": {"enum": list(QUALIFIERS)}},
            },
        },
        "row_test": {
            "type": "object", "required": ["status", "n_reference", "n_holdout", "n_generated", "sentence"],
            "properties": {
                "status": {"enum": ["exact", "low_power", "untested", "no_holdout"]},
                "n_reference": _COUNT, "n_holdout": _COUNT, "n_generated": _COUNT, "share": _P,
                "copies_needed": {"type": ["integer", "null"], "minimum": 1}, "note": _TEXT, "sentence": _TEXT,
            },
        },
        "closeness": {"oneOf": [{"type": "null"}, {
            "type": "object",
            "required": ["alpha", "k", "threshold", "n_generated", "n_holdout", "n_reference", "n_too_close",
                         "too_close_share", "too_close_ci", "expected_share", "p_too_close", "n_identical",
                         "identical_share", "n_holdout_identical", "holdout_identical_share", "identical_excess",
                         "identical_excess_ci", "p_identical", "p_rows", "distance"],
            "properties": {
                "alpha": _SHARE, "k": _COUNT, "threshold": _OPT_NUM, "n_generated": _COUNT, "n_holdout": _COUNT,
                "n_reference": _COUNT, "reference_note": _TEXT, "n_too_close": _COUNT, "too_close_share": _SHARE,
                "too_close_ci": _PAIR, "expected_share": _OPT_SHARE, "p_too_close": _P, "n_identical": _COUNT,
                "identical_share": _SHARE, "n_holdout_identical": _COUNT, "holdout_identical_share": _SHARE,
                "identical_excess": {"type": "number", "minimum": -1, "maximum": 1}, "identical_excess_ci": _PAIR,
                "p_identical": _P, "n_training_identical": _COUNT, "share": _P, "n_candidates": _COUNT,
                "p_rows": _P, "distance": {"const": "standardized"},
                "levels": {"type": "array", "items": {
                    "type": "object",
                    "required": ["quantile", "k", "threshold", "n_too_close", "share", "expected_share", "p"],
                    "properties": {"quantile": {"type": "number", "minimum": 0, "maximum": 1}, "k": _COUNT,
                                   "threshold": _OPT_NUM, "n_too_close": _COUNT, "share": _SHARE,
                                   "expected_share": _SHARE, "p": _P, "n_tied": _COUNT}}},
                "identical": {"oneOf": [{"type": "null"}, _REFERENCE_SHARE]},
                "partial": {"type": "array", "items": _REFERENCE_SHARE},
                "p_partial": _OPT_NUM}}]},
        "family": {
            "type": "object", "required": ["alpha", "members", "holding"],
            "properties": {
                "alpha": _SHARE,
                "members": {"type": "array", "items": {
                    "type": "object", "required": ["name", "p", "p_adjusted", "holds", "level"],
                    "properties": {"name": {"enum": list(MEMBERS)},
                                   "p": _P, "p_adjusted": _P, "holds": {"type": "boolean"}, "level": _OPT_NUM}}},
                "holding": {"type": "array", "items": _TEXT}}},
        "over_copied": {"type": "array", "items": {
            "type": "object", "required": ["copies", "close_copies", "identical_copies", "real_close",
                                           "expected_close", "p_value", "q_value"], **_NAMED,
            "properties": {"key": _KEY_VALUE, "row_id": {"type": "integer"}, "copies": _COUNT, "close_copies": _COUNT,
                           "identical_copies": _COUNT, "near_verbatim_copies": _COUNT, "real_close": _COUNT, "expected_close": _NUM,
                           "p_value": _SHARE, "q_value": _SHARE, "closest_distance": _OPT_NUM}}},
        "columns": {"type": "array", "items": {
            "type": "object", "required": ["column", "kind", "memorized_rate", "non_memorized_rate"],
            "properties": {"column": _TEXT, "kind": _TEXT, "memorized_rate": _OPT_SHARE,
                           "non_memorized_rate": _OPT_SHARE}}},
        "provenance": {
            "type": "object",
            "required": ["fingerprints", "sources", "n_train", "n_synthetic", "n_holdout", "distance",
                         "memviz_version", "created", "run"],
            "properties": {
                "fingerprints": {"type": "object", "required": ["train", "synthetic", "holdout"],
                                 "additionalProperties": {"type": "string", "pattern": "^([0-9a-f]{64})?$"}},
                "sources": {"type": "object", "additionalProperties": _TEXT},
                "n_train": _COUNT, "n_synthetic": _COUNT, "n_holdout": _COUNT,
                "distance": {"enum": ["paper", "standardized"]}, "memviz_version": _TEXT, "created": _TEXT,
                "target": {"type": ["string", "null"]},
                "run": {"oneOf": [{"type": "null"}, {
                    "type": "object",
                    "required": ["run_id", "run_dir", "check", "epoch", "status", "n_checks", "p", "k", "T"],
                    "properties": {
                        "run_id": _TEXT, "run_dir": _TEXT, "check": _COUNT, "epoch": _COUNT,
                        "status": {"enum": ["running", "finished", "cancelled", "failed", "interrupted"]},
                        "n_checks": _COUNT, "epochs": {"type": ["integer", "null"]},
                        "p": _OPT_NUM, "k": {"type": ["integer", "null"]}, "T": {"type": ["integer", "null"]},
                        "pooled_checks": _COUNT}}]},
                "rows_read": _TEXT, "notices": {"type": "array", "items": _TEXT},
                "unjudged": {"type": "array", "items": _TEXT},
            },
        },
        "evidence": {"type": "object", "additionalProperties": {"type": "object", "required": ["sentence"]},
                     "properties": _EVIDENCE},
    },
}


def validate(doc) -> None:
    """Check ``doc`` (a parsed audit.json) against :data:`SCHEMA`; BadRunFolder naming the first problem."""

    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(map(str, e.absolute_path)) or "(top)"
        raise BadRunFolder(f"audit.json: {where}: {e.message}")


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(SCHEMA, indent=1))
