"""Data layer: loading, schema inference and files, overrides, row_id, and every bad input.

Every bad input must raise a BadTable whose message is one line naming the file, the
column (where there is one) and the problem.
"""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as papq
import pytest

from memviz.errors import BadTable, MemvizError
from memviz.measure.memorization import memorization
from memviz.tables.data import (
    SchemaWarning,
    infer_schema,
    load_companion,
    load_dataset,
    load_table,
    read_frame,
    sample_data_dir,
)
from memviz.tables.schema import Schema

SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
META_FILES = sorted(SHARED.glob("*/meta.json")) + [sample_data_dir() / "meta.json"]


# ----------------------------------------------------------------- helpers
def frame(n=20, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 90, n),
        "wage": np.round(rng.normal(1000, 300, n), 2),
        "job": rng.choice(["a", "b", "c"], n),
        "y": np.array(["no", "yes"] * n)[:n],
    })


def write_csv(path: Path, df: pd.DataFrame) -> Path:
    df.to_csv(path, index=False)
    return path


def schema_file(path: Path, **d) -> Path:
    path.write_text(json.dumps(d))
    return path


def raises_one_line(fn, source, *needles):
    """Call fn, expect a BadTable whose message is one line naming ``source`` (the file)
    and, in the rest of the line, every needle (the column, the problem)."""
    with pytest.raises(BadTable) as info:
        fn()
    msg = str(info.value)
    assert "\n" not in msg and msg == msg.strip(), msg
    assert msg.startswith(f"{source}:"), f"{msg!r} does not start with the file {source}"
    rest = msg[len(str(source)) + 1:]  # the temporary path may itself contain words like 'encoding'
    for needle in needles:
        assert str(needle) in rest, f"{needle!r} not in {rest!r}"
    assert isinstance(info.value, MemvizError)
    return msg


SCHEMA = dict(name="t", target="y", task="binary", numerical=["age", "wage"], categorical=["job"])


# ----------------------------------------------------------------- loading
def test_csv_and_parquet_load_the_same_table(tmp_path):
    df = frame(30)
    csv = write_csv(tmp_path / "t.csv", df)
    pq = tmp_path / "t.parquet"
    df.to_parquet(pq, index=False)
    meta = schema_file(tmp_path / "meta.json", **SCHEMA)
    a, b = load_table(csv, meta), load_table(pq, meta)
    assert list(a.data.columns) == ["age", "wage", "job", "y"] == list(a.schema.columns)
    pd.testing.assert_frame_equal(a.data, b.data, check_dtype=False)
    assert a.data.index.name == "row_id" and a.data.index.dtype == np.int64
    np.testing.assert_array_equal(a.row_ids, np.arange(30))
    assert a.source == str(csv) and b.source == str(pq)


def test_parquet_detected_by_content_and_non_string_names_are_strings(tmp_path):
    df = pd.DataFrame({0: np.arange(12) * 1.5, 1: np.arange(12) % 3})
    path = tmp_path / "table.data"                     # no .parquet suffix: magic bytes decide
    papq.write_table(pa.Table.from_pandas(df), path)   # pandas metadata restores int names
    assert list(pd.read_parquet(path).columns) == [0, 1]
    out = read_frame(path)
    assert list(out.columns) == ["0", "1"]
    t = load_table(path, Schema(numerical=("0",), categorical=("1",)))
    assert t.schema.columns == ("0", "1") and len(t) == 12


def test_csv_dialect_missing_markers_bom_and_blank_lines(tmp_path):
    body = "age;job;y\n" + "".join(f"{20 + i};{'?' if i == 3 else 'ab'[i % 2]};{i % 2}\n" for i in range(12))
    path = tmp_path / "semi.csv"
    path.write_bytes(b"\xef\xbb\xbf\n\n" + body.encode())       # BOM, leading blank lines, ';'
    df = read_frame(path)
    assert list(df.columns) == ["age", "job", "y"] and len(df) == 12
    assert df["job"].isna().sum() == 1                          # '?' is missing


# --------------------------------------------------------------- inference
def test_infer_schema_roles_and_id_columns():
    rng = np.random.default_rng(1)
    n = 40
    df = pd.DataFrame({
        "id": np.arange(n) + 100,                               # consecutive integers
        "customer_id": rng.permutation(10_000)[:n],             # named *_id
        "uuid_text": [f"u-{i:04d}" for i in rng.permutation(n)],  # unique text
        "income": rng.normal(5e4, 1e4, n),                      # float -> numerical
        "fnlwgt": rng.choice(10**6, n, replace=False),          # many ints -> numerical
        "grade": rng.integers(1, 6, n),                         # few ints -> categorical
        "rating": rng.integers(0, 3, n).astype(float),          # integer-valued floats
        "city": rng.choice(["x", "y", "z"], n),
        "flag": rng.integers(0, 2, n).astype(bool),
        "label": np.array(["p", "q"] * n)[:n],
    })
    with pytest.warns(SchemaWarning) as rec:
        s = infer_schema(df, target="label", source="data/t.csv")
    assert s.numerical == ("income", "fnlwgt")
    assert s.categorical == ("grade", "rating", "city", "flag")
    assert s.target == "label" and s.task == "binary"
    assert s.key == "id" and set(s.excluded) == {"customer_id", "uuid_text"}   # one key, the others left out
    msgs = " ".join(str(w.message) for w in rec)
    for col in ("id", "customer_id", "uuid_text"):
        assert f"'{col}'" in msgs
    assert "data/t.csv" in msgs


def test_integer_column_threshold_and_target_tasks():
    n = 60
    df = pd.DataFrame({"k": np.arange(n) % 20, "m": np.arange(n) % 21 * 7,
                       "t3": np.arange(n) % 3, "reg": np.linspace(0, 1, n)})
    s = infer_schema(df, max_int_categories=20)
    assert "k" in s.categorical and "m" in s.numerical         # 20 distinct: categorical; 21: numerical
    assert s.task == "none" and s.target is None
    assert infer_schema(df, target="t3").task == "multiclass"
    assert infer_schema(df, target="reg").task == "regression"
    assert infer_schema(df, target="reg").distance_numerical[-1] == "reg"


def test_all_missing_column_is_left_out_when_inferring(tmp_path):
    df = frame(15)
    df["empty"] = np.nan
    path = write_csv(tmp_path / "t.csv", df)
    with pytest.warns(SchemaWarning, match="'empty' is all missing"):
        t = load_table(path, target="y")
    assert "empty" in t.schema.excluded and "empty" not in t.data.columns


# ---------------------------------------------------------- schema files
@pytest.mark.parametrize("meta", META_FILES, ids=lambda p: p.parent.name)
def test_meta_json_files_load_and_match_their_tables(meta):
    raw = json.loads(meta.read_text())
    s = Schema.load(meta)
    assert s.target == raw["target"] and s.task == raw["task"]
    assert list(s.numerical) == raw["numerical"]
    assert list(s.categorical) == [c for c in raw["categorical"] if c != raw["target"]]
    assert s.target not in s.categorical
    assert s.distance_categorical == s.categorical + (s.target,)     # class target counts as categorical
    assert Schema.from_dict(s.to_dict()) == s
    header = pd.read_csv(meta.parent / "train.csv", nrows=0).columns
    assert set(s.columns) <= set(header)


def test_sample_dataset_loads_with_its_schema():
    train, test = load_dataset(sample_data_dir())
    assert len(train) == 3000 and len(test) == 1000
    assert train.schema == test.schema and list(train.data.columns) == list(train.schema.columns)
    np.testing.assert_array_equal(train.row_ids, np.arange(3000))
    np.testing.assert_array_equal(test.row_ids, np.arange(1000))


def test_schema_file_round_trip(tmp_path):
    s = Schema(numerical=("a",), categorical=("b", "c"), target="y", task="multiclass", name="x")
    s.save(tmp_path / "s.json")
    assert Schema.load(tmp_path / "s.json") == s


# --------------------------------------------------------------- overrides
def test_type_overrides(tmp_path):
    path = write_csv(tmp_path / "t.csv", frame(20))
    meta = schema_file(tmp_path / "meta.json", **SCHEMA)
    t = load_table(path, meta, overrides={"age": "categorical", "job": "excluded"})
    assert t.schema.numerical == ("wage",) and t.schema.categorical == ("age",)
    assert "job" in t.schema.excluded and "job" not in t.data.columns
    t2 = load_table(path, meta, overrides={"job": "target"})          # the old target is demoted
    assert t2.schema.target == "job" and "y" in t2.schema.categorical
    assert t2.schema.task == "multiclass"                              # three jobs: read from the values
    assert load_table(path, meta, overrides={"wage": "target"}).schema.task == "regression"
    t4 = load_table(path, target="job", overrides={"y": "target"})
    assert t4.schema.task == "binary" and "job" in t4.schema.categorical
    t3 = load_table(path, target="y", overrides={"age": "numerical"})
    assert "age" in t3.schema.numerical


# ------------------------------------------------------------------ row_id
def test_row_id_column_and_subset_drop_keep_ids(tmp_path):
    df = frame(20)
    df.insert(0, "rid", np.arange(20) * 5 + 7)
    path = write_csv(tmp_path / "t.csv", df)
    t = load_table(path, Schema.from_dict(SCHEMA), row_id_column="rid")
    np.testing.assert_array_equal(t.row_ids, np.arange(20) * 5 + 7)
    assert "rid" not in t.data.columns and t.data.index.dtype == np.int64
    sub = t.subset([22, 7, 97])
    np.testing.assert_array_equal(sub.row_ids, [22, 7, 97])           # the given order, ids kept
    assert sub.data.loc[22, "age"] == df.loc[3, "age"]
    dropped = t.drop([7, 22])
    np.testing.assert_array_equal(dropped.row_ids, (np.arange(20) * 5 + 7)[[i not in (0, 3) for i in range(20)]])
    assert dropped.subset([12]).data.loc[12, "wage"] == df.loc[1, "wage"]
    # inferred schema: the row id column is not a feature
    inferred = load_table(path, target="y", row_id_column="rid")
    assert "rid" not in inferred.schema.columns + inferred.schema.excluded


def test_row_id_column_must_hold_unique_integers(tmp_path):
    df = frame(20)
    df["rid"] = [1, 1] + list(range(2, 20))
    path = write_csv(tmp_path / "t.csv", df)
    raises_one_line(lambda: load_table(path, Schema.from_dict(SCHEMA), row_id_column="rid"),
                    path, "'rid'", "unique integers")
    raises_one_line(lambda: load_table(path, Schema.from_dict(SCHEMA), row_id_column="nope"),
                    path, "'nope'", "not in the file")


# --------------------------------------------------------------- bad input
def test_empty_files(tmp_path):
    for name, raw in [("empty.csv", b""), ("newlines.csv", b"\n\n\r\n  \n")]:
        p = tmp_path / name
        p.write_bytes(raw)
        raises_one_line(lambda: load_table(p), p, "empty")
    header_only = tmp_path / "header.csv"
    header_only.write_text("age,job,y\n\n")
    raises_one_line(lambda: load_table(header_only), header_only, "no rows")
    pq = tmp_path / "norows.parquet"
    frame(10).iloc[:0].to_parquet(pq)
    raises_one_line(lambda: load_table(pq), pq, "no rows")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    raises_one_line(lambda: load_table(bad), bad, "Parquet")
    raises_one_line(lambda: load_table(tmp_path / "absent.csv"), tmp_path / "absent.csv", "not found")


def test_no_header(tmp_path):
    p = tmp_path / "nohead.csv"
    frame(15)[["age", "wage"]].to_csv(p, index=False, header=False)
    raises_one_line(lambda: load_table(p), p, "no header")
    q = tmp_path / "blankname.csv"
    q.write_text("age,,y\n" + "1,2,3\n" * 12)
    raises_one_line(lambda: load_table(q), q, "column 2", "empty name")


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "utf-16-le", "utf-32"])
def test_unreadable_encodings(tmp_path, encoding):
    text = "name,city,y\n" + "".join(f"Jos\u00e9{i},K\u00f6ln,{i % 2}\n" for i in range(12))
    p = tmp_path / f"{encoding}.csv"
    p.write_bytes(text.encode(encoding))
    raises_one_line(lambda: load_table(p), p, "encoding")


def test_duplicate_column_names(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("age,job,age\n" + "1,a,2\n" * 12)
    raises_one_line(lambda: load_table(p), p, "'age'", "duplicate")
    q = tmp_path / "dup.parquet"
    papq.write_table(pa.table([pa.array(np.arange(12.0)), pa.array(np.arange(12.0))], names=["w", "w"]), q)
    raises_one_line(lambda: load_table(q), q, "'w'", "duplicate")


def test_schema_naming_a_missing_column(tmp_path):
    p = write_csv(tmp_path / "t.csv", frame(20).drop(columns=["wage"]))
    meta = schema_file(tmp_path / "meta.json", **SCHEMA)
    raises_one_line(lambda: load_table(p, meta), p, "'wage'", "not in the file")


def test_numerical_column_holding_text(tmp_path):
    df = frame(20).astype({"wage": object})
    df.loc[6, "wage"] = "n/a!"
    p = write_csv(tmp_path / "t.csv", df)
    raises_one_line(lambda: load_table(p, schema_file(tmp_path / "m.json", **SCHEMA)), p, "'wage'", "text", "n/a!")
    # an override that makes a text column numerical is caught the same way
    clean = write_csv(tmp_path / "clean.csv", frame(20))
    raises_one_line(lambda: load_table(clean, target="y", overrides={"job": "numerical"}), clean, "'job'", "text")
    # inferred: numbers with one stray text cell are a numerical column holding text ...
    raises_one_line(lambda: load_table(p, target="y"), p, "'wage'", "text", "n/a!", "row 7")
    # ... which the user may override to categorical
    assert "wage" in load_table(p, target="y", overrides={"wage": "categorical"}).schema.categorical


def test_target_with_one_class(tmp_path):
    df = frame(20)
    df["y"] = "yes"
    p = write_csv(tmp_path / "t.csv", df)
    raises_one_line(lambda: load_table(p, schema_file(tmp_path / "m.json", **SCHEMA)), p, "'y'", "one class")
    raises_one_line(lambda: load_table(p, target="y"), p, "'y'", "one class")


def test_fewer_than_ten_rows(tmp_path):
    p = write_csv(tmp_path / "t.csv", frame(9))
    raises_one_line(lambda: load_table(p, schema_file(tmp_path / "m.json", **SCHEMA)), p, "9 rows", "10")
    # a synthetic or test table may be small
    train = load_table(write_csv(tmp_path / "train.csv", frame(20)), schema_file(tmp_path / "m.json", **SCHEMA))
    assert len(load_companion(train, p)) == 9


def test_column_that_is_all_missing(tmp_path):
    df = frame(20)
    df["wage"] = np.nan
    p = write_csv(tmp_path / "t.csv", df)
    raises_one_line(lambda: load_table(p, schema_file(tmp_path / "m.json", **SCHEMA)), p, "'wage'", "missing")


def test_train_and_synthetic_with_different_columns(tmp_path):
    meta = schema_file(tmp_path / "m.json", **SCHEMA)
    train = load_table(write_csv(tmp_path / "train.csv", frame(20)), meta)
    syn = write_csv(tmp_path / "syn.csv", frame(20, seed=1).rename(columns={"job": "occupation"}))
    raises_one_line(lambda: load_companion(train, syn), syn, "'job'", "training table")


def test_malformed_schema_files(tmp_path):
    data = write_csv(tmp_path / "t.csv", frame(20))
    bad = tmp_path / "bad.json"
    bad.write_text('{"target": "y", "numerical": ["age",\n')
    raises_one_line(lambda: load_table(data, bad), bad, "JSON", "line")
    wrong = schema_file(tmp_path / "wrong.json", target="y", numerical="age")
    raises_one_line(lambda: load_table(data, wrong), wrong, "'numerical'", "list")
    raises_one_line(lambda: Schema.load(tmp_path / "absent.json"), tmp_path / "absent.json", "not found")
    two_roles = schema_file(tmp_path / "roles.json", target="y", numerical=["age"], categorical=["age"])
    raises_one_line(lambda: load_table(data, two_roles), two_roles, "'age'", "more than one role")
    bad_task = schema_file(tmp_path / "task.json", target="y", task="ranking", numerical=["age"])
    raises_one_line(lambda: load_table(data, bad_task), bad_task, "'ranking'")


def test_unknown_override_type_and_column(tmp_path):
    p = write_csv(tmp_path / "t.csv", frame(20))
    raises_one_line(lambda: load_table(p, target="y", overrides={"age": "float"}), p, "'age'", "'float'", "unknown type")
    raises_one_line(lambda: load_table(p, target="y", overrides={"nope": "numerical"}), p, "'nope'", "no such column")


# ----------------------------------------------------------- missing values
def test_missing_categoricals_are_a_category_of_their_own(tmp_path):
    """'?' and empty cells load as missing; two missing values match each other in the
    memorization distance and match no real value."""
    rows = ["x,k,y"] + [f"{i},{['a', 'b', '?', ''][i % 4]},{i % 2}" for i in range(16)]
    p = tmp_path / "t.csv"
    p.write_text("\n".join(rows) + "\n")
    train = load_table(p, Schema(numerical=("x",), categorical=("k",), target="y"))
    assert train.data["k"].isna().sum() == 8
    syn = pd.DataFrame({"x": [2.0, 2.0], "k": [None, "a"], "y": [0, 0]})
    res = memorization(train, syn, distance="standardized", device="cpu")
    # row 2 (x=2, k missing, y=0) is an exact match for a missing k ...
    assert res.nn1_pos[0] == 2 and res.d1[0] == 0.0
    # ... and a real "a" does not: row 0 (x=0, k="a") at (2/15)/3 beats row 2 at 1/3
    assert res.nn1_pos[1] == 0 and res.d1[1] == pytest.approx((2 / 15) / 3)


def test_missing_numericals_use_the_training_mean(tmp_path):
    x = [0, 10, 20, 30, 40, 50, 60, 70, 80, 1000, "", 5]
    p = tmp_path / "t.csv"
    p.write_text("x,k\n" + "".join(f"{v},a\n" for v in x))
    train = load_table(p, Schema(numerical=("x",), categorical=("k",)))
    assert np.isnan(train.data["x"].iloc[10])                       # kept missing in the table
    mean = np.mean([v for v in x if v != ""])
    syn = pd.DataFrame({"x": [np.nan, mean + 3.0], "k": ["a", "a"]})
    res = memorization(train, syn, distance="standardized", device="cpu")
    np.testing.assert_array_equal(res.nn1_pos, [10, 10])            # the imputed training row
    np.testing.assert_allclose(res.d1, [0.0, 3.0 / 1000 / 2])
    np.testing.assert_allclose(res.d2[0], (mean - 80) / 1000 / 2)   # nearest real value: 80
