"""Every schema or metadata file, at any depth and of any type, is one line naming the file (issue 41, item 4).

At e9efb32: a 100,000-level nested file gave RecursionError (CLI --schema and --metadata, the library, both
pages); ``"excluded": 5`` a TypeError; ``"excluded": "age"`` was read as the columns a, g, e; on the Audit
and Data pages SDV metadata with ``tables`` as a list or a table given as a string raised AttributeError.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import memviz_cli

from memviz.app import audits, datasets
from memviz.errors import MemvizError
from memviz.tables.schema import Schema

ROOT = Path(__file__).resolve().parents[2]
DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
BASE = {"numerical": ["age"], "categorical": ["sex"], "target": "income"}
CRAFTED = {
    "deep_list": DEEP_LIST,
    "deep_object": DEEP_OBJECT,
    "deep_in_sdv": '{"METADATA_SPEC_VERSION": "V1", "tables": ' + DEEP_OBJECT + "}",
    "deep_extra": json.dumps({**BASE, "notes": json.loads("[" * 70 + "]" * 70)}),
    "excluded_int": json.dumps({**BASE, "excluded": 5}),
    "excluded_string": json.dumps({**BASE, "excluded": "age"}),
    "excluded_nested": json.dumps({**BASE, "excluded": [["age"]]}),
    "numerical_string": json.dumps({**BASE, "numerical": "age"}),
    "target_list": json.dumps({**BASE, "target": ["income"]}),
    "nan": '{"numerical": ["age"], "categorical": [], "extra": NaN}',
    "top_list": "[1, 2]",
    "top_string": '"hello"',
    "null": "null",
    "empty": "",
    "sdv_column_spec_string": json.dumps({"columns": {"age": "numerical", "income": {"sdtype": "categorical"}}}),
    "sdv_tables_list": json.dumps({"tables": [{"columns": {"age": {"sdtype": "numerical"}}}],
                                   "METADATA_SPEC_VERSION": "V1"}),
    "sdv_table_string": json.dumps({"tables": {"t": "x"}, "METADATA_SPEC_VERSION": "V1"}),
    "sdv_columns_list": json.dumps({"tables": {"t": {"columns": ["age"]}}, "METADATA_SPEC_VERSION": "V1"}),
    "sdv_sdtype_number": json.dumps({"columns": {"age": {"sdtype": 5}}}),
}


@pytest.fixture(scope="module")
def table(sample):
    train, _ = sample
    return train.data.head(200).reset_index(drop=True)


def one_line_naming(exc: BaseException, name: str) -> None:
    assert isinstance(exc, MemvizError), f"{type(exc).__name__}: {str(exc)[:200]}"
    assert "\n" not in str(exc) and name in str(exc), str(exc)


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_the_library_says_one_line_naming_the_file(case, tmp_path):
    path = tmp_path / f"{case}.json"
    path.write_text(CRAFTED[case])
    for read in (Schema.load, Schema.from_sdv):
        try:
            s = read(path)
        except Exception as exc:
            one_line_naming(exc, path.name)
        else:  # read: then no string was split into characters and nothing deep was kept
            assert read is Schema.from_sdv or not case.startswith(("excluded", "deep")), s


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_both_pages_say_one_line_naming_the_file(case, table):
    raw = CRAFTED[case].encode()
    with pytest.raises(Exception) as e:
        datasets.schema_from_upload(f"{case}.json", raw, table, "income")
    one_line_naming(e.value, f"{case}.json")
    data = table.to_csv(index=False).encode()
    with pytest.raises(Exception) as e:
        audits.upload_tables("t.csv", data, "s.csv", data, schema_name=f"{case}.json", schema_raw=raw)
    one_line_naming(e.value, f"{case}.json")


@pytest.mark.parametrize("case", ["deep_list", "deep_in_sdv", "excluded_int", "excluded_string",
                                  "sdv_tables_list", "sdv_column_spec_string"])
@pytest.mark.parametrize("flag", ["--schema", "--metadata"])
def test_the_cli_says_one_line_naming_the_file(case, flag, table, tmp_path, capsys):
    table.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / f"{case}.json").write_text(CRAFTED[case])
    code, _, err = memviz_cli(capsys, "memorize", "--train", tmp_path / "t.csv", flag, tmp_path / f"{case}.json",
                              "--synthetic", tmp_path / "t.csv", "--out", tmp_path / "o.csv", "--quiet")
    lines = [x for x in err.strip().splitlines() if ": error: " in x]
    assert code == 2 and len(lines) == 1 and f"{case}.json" in lines[0] and "Traceback" not in err, err


def test_a_string_is_not_a_list_of_columns():
    with pytest.raises(MemvizError, match="'excluded' must be a list of column names"):
        Schema.from_dict({**BASE, "excluded": "age"}, source="m.json")
    assert Schema.from_dict({**BASE, "excluded": ["fnlwgt"]}).excluded == ("fnlwgt",)
    assert Schema.from_dict({**BASE, "excluded": None}).excluded == ()
