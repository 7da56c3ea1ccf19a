"""SDV single-table metadata in and out (Schema.from_sdv / to_sdv) and --metadata on the commands."""
from __future__ import annotations

import json

import pytest

from memviz.cli import build_parser, main
from memviz.errors import BadTable
from memviz.jobs.spec import JobSpec, _table
from memviz.tables.schema import Schema

COLUMNS = {"age": {"sdtype": "numerical", "computer_representation": "Int64"},
           "job": {"sdtype": "categorical"}, "married": {"sdtype": "boolean"},
           "signup": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
           "user_id": {"sdtype": "id", "regex_format": "U_[0-9]{5}"}, "mail": {"sdtype": "email", "pii": True},
           "income": {"sdtype": "categorical"}}


def test_current_and_older_forms_read_the_same():
    new = {"METADATA_SPEC_VERSION": "V1", "tables": {"people": {"primary_key": "user_id", "columns": COLUMNS}},
           "relationships": []}
    old = {"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1", "primary_key": "user_id", "columns": COLUMNS}
    a, b = Schema.from_sdv(new, target="income"), Schema.from_sdv(old, target="income")
    assert (a.numerical, a.categorical, a.target, a.task) == (("age",), ("job", "married"), "income", "binary")
    assert a.excluded == ("signup", "mail") and a.key == "user_id" and a.name == "people" and b.name == ""
    assert (a.numerical, a.categorical, a.excluded, a.target, a.key) == (b.numerical, b.categorical, b.excluded,
                                                                         b.target, b.key)
    notes = a.sdv_notes()   # every column not measured as typed is said (issue 42, item 3)
    assert any("user_id (id) is the row key" in n for n in notes)
    assert any("married (boolean) read as categorical" in n for n in notes)
    assert any("personal data" in n and "mail (email)" in n for n in notes)
    assert any("signup" in n and "datetime" in n for n in notes)
    assert Schema.from_sdv(old, target="age").task == "regression"
    assert Schema.from_sdv(old).target is None and Schema.from_sdv(old).categorical == ("job", "married", "income")


def test_round_trip_through_sdv(sample):
    train, _ = sample
    s = train.schema
    d = s.to_sdv()
    assert d["METADATA_SPEC_VERSION"] == "V1" and list(d["tables"]) == [s.name]
    assert d["tables"][s.name]["columns"]["income"] == {"sdtype": "categorical"}
    back = Schema.from_sdv(d, target=s.target)
    assert (back.numerical, back.categorical, back.target, back.task) == (s.numerical, s.categorical, s.target, s.task)
    # the same metadata is what SDV itself reads (when SDV is installed)
    sdv = pytest.importorskip("sdv.metadata")
    meta = sdv.Metadata.load_from_dict(d)
    assert set(meta.tables[s.name].columns) == set(s.columns)


def test_sdv_metadata_mistakes_are_one_line(tmp_path):
    with pytest.raises(BadTable, match="2 tables"):
        Schema.from_sdv({"tables": {"a": {"columns": COLUMNS}, "b": {"columns": COLUMNS}}})
    assert Schema.from_sdv({"tables": {"a": {"columns": COLUMNS}, "b": {"columns": {}}}}, table="a").name == "a"
    with pytest.raises(BadTable, match="no 'columns'"):
        Schema.from_sdv({"primary_key": "x"})
    with pytest.raises(BadTable, match="'job': no sdtype"):
        Schema.from_sdv({"columns": {"job": {"type": "categorical"}}})
    with pytest.raises(BadTable, match="'mail': the target is an excluded column"):
        Schema.from_sdv({"columns": COLUMNS}, target="mail")
    with pytest.raises(BadTable, match="'nope': the target is not in the metadata"):
        Schema.from_sdv({"columns": COLUMNS}, target="nope")
    f = tmp_path / "m.json"
    f.write_text("{not json")
    with pytest.raises(BadTable, match=f"{f}: not valid JSON"):
        Schema.from_sdv(f)
    with pytest.raises(BadTable, match="SDV metadata file not found"):
        Schema.from_sdv(tmp_path / "none.json")


def test_metadata_on_every_command_that_takes_a_schema(sample, tmp_path, capsys):
    train, _ = sample
    sdv = tmp_path / "sdv.json"
    sdv.write_text(json.dumps(train.schema.to_sdv()))
    parser = build_parser()
    for cmd in ("memorize", "warmup", "compare", "audit"):
        sub = parser._subparsers._group_actions[0].choices[cmd]
        assert {"--schema", "--metadata"} <= set(sub._option_string_actions), cmd
    small = tmp_path / "tr.csv"
    train.data.iloc[:200].to_csv(small, index=False)
    train.data.iloc[200:300].to_csv(tmp_path / "syn.csv", index=False)
    code = main(["memorize", "--train", str(small), "--metadata", str(sdv), "--synthetic", str(tmp_path / "syn.csv"),
                 "--out", str(tmp_path / "mem.csv")])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out.strip().splitlines()[-1])["n_train"] == 200
    with pytest.raises(SystemExit) as exc:
        main(["warmup", "--train", str(small), "--schema", "m.json", "--metadata", str(sdv), "--out", "x"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and "not allowed with" in err


def test_a_job_spec_reads_sdv_metadata(sample, tmp_path):
    train, _ = sample
    sdv = tmp_path / "sdv.json"
    sdv.write_text(json.dumps(train.schema.to_sdv()))
    train.data.iloc[:50].to_csv(tmp_path / "tr.csv", index=False)
    t = _table(JobSpec("warmup", {}, {"train": str(tmp_path / "tr.csv"), "metadata": str(sdv), "out": "o"}), "train")
    assert t.schema.numerical == train.schema.numerical and t.schema.target is None
