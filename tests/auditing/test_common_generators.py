"""Issue 48 item 4: a common generator's output audits as it comes, without a hand-written schema.

SDV fitted with its own detected metadata (``Metadata.detect_from_dataframes``, SDV's defaults otherwise)
writes integers the training table does not have into integer columns memviz infers as categories, and
anonymizes the columns it detects as personal data (state names written as other state names): the audit
refused the table ("column 'state': 75 % of its rows hold values the training table does not have"). Now an
inferred integer column is read as numerical and the fake personal data is left out and not judged, each said;
a declared kind still refuses."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.errors import MemvizError
from memviz.tables.data import sample_data_dir

STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
          "Florida", "Georgia", "Hawaii", "Idaho"]


def vendor_tables(n_train: int = 600, n_hold: int = 300, seed: int = 0):
    """(train, holdout): Adult sample rows with a key (``customer_id``, 10 i + 7 shuffled), a ``state`` column
    (12 state names) and ``visits`` (15 integers spread 37 apart: inferred as categories)."""
    rows = pd.concat([pd.read_csv(sample_data_dir() / f) for f in ("train.csv", "test.csv")], ignore_index=True)
    rows = rows.iloc[:n_train + n_hold].copy()
    rng = np.random.default_rng(seed)
    rows.insert(0, "customer_id", rng.permutation(10 * np.arange(len(rows)) + 7))
    rows.insert(2, "state", rng.choice(STATES, len(rows)))
    rows.insert(3, "visits", 37 * rng.integers(1, 16, len(rows)))
    return rows.iloc[:n_train].reset_index(drop=True), rows.iloc[n_train:].reset_index(drop=True)


def sdv_sample(kind: str, train: pd.DataFrame, n: int, **params) -> pd.DataFrame:
    """``n`` rows of SDV's ``kind`` synthesizer fitted on ``train`` with SDV's own detected metadata."""
    from sdv import single_table
    from sdv.metadata import Metadata

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hasattr(Metadata, "detect_from_dataframe"):
            metadata = Metadata.detect_from_dataframe(train, "vendor")
        else:                                                      # SDV 2: one table in a dict
            metadata = Metadata.detect_from_dataframes({"vendor": train})
        synth = getattr(single_table, f"{kind}Synthesizer")(metadata, **params)
        try:
            synth.fit(train)
        except Exception:  # noqa: BLE001  (SDV 2 takes {name: frame})
            synth.fit({"vendor": train})
        out = synth.sample(n)
    return out["vendor"] if isinstance(out, dict) else out


def audited(train, syn, hold):
    import memviz

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return memviz.audit(train, syn, hold, target="income", quality=False, evidence=False)


@pytest.fixture(scope="module")
def copula():
    train, hold = vendor_tables(400, 200)
    return train, hold, sdv_sample("GaussianCopula", train, 400)


def test_the_copula_writes_what_the_audit_refused(copula):
    """The premise: SDV's own defaults write fake states and integers the training table lacks."""
    from memviz.tables.align import align_to
    from memviz.tables.data import table_from_frame

    train, _, syn = copula
    assert not set(syn["state"]) <= set(STATES) and not set(syn["visits"]) <= set(train["visits"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = table_from_frame(train, target="income")
    assert tr.schema.kind_of("visits") == "categorical" and tr.schema.kind_of("state") == "categorical"
    with pytest.raises(MemvizError, match="hold values the training table does not have"):
        align_to(syn, tr.data, tr.schema.distance_categorical, "synthetic")


def test_sdv_gaussian_copula_with_its_detected_metadata_audits(copula):
    train, hold, syn = copula
    a = audited(train, syn, hold)
    notices = " ".join(a.provenance.notices)
    assert "'visits'" in notices and "read as numerical" in notices
    assert "'state'" in notices and "not judged" in notices
    assert a.provenance.unjudged == ("state",)
    assert a.verdict.code in ("no_copying", "copying", "rows_over_copied")
    doc = a.to_dict()
    assert doc["provenance"]["unjudged"] == ["state"] and doc["key"] == "customer_id"
    assert "Columns not judged" in a.to_html() and "state" in a.to_html()


def test_a_declared_categorical_still_refuses(copula):
    import memviz
    from memviz.tables.infer import infer_schema

    train, hold, syn = copula
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema = infer_schema(train, target="income").with_overrides({"state": "excluded", "visits": "categorical"})
        with pytest.raises(MemvizError, match="'visits'.*training table does not have"):
            memviz.audit(train, syn, hold, schema=schema, quality=False, evidence=False)


def test_another_coding_is_still_refused_not_left_out(copula):
    """0/1 written for a two-valued column is another coding (few values), not a generator's own values."""
    train, hold, syn = copula
    recoded = syn.assign(sex=(syn["sex"] == "Male").astype(int).astype(str).radd("code-"))
    with pytest.raises(MemvizError, match="'sex'.*training table does not have"):
        audited(train, recoded, hold)


def test_the_cli_audits_the_copula_output_as_it_comes(copula, tmp_path, capsys):
    from helpers import memviz_cli

    train, hold, syn = copula
    for name, frame in (("train", train), ("holdout", hold), ("synthetic", syn)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    rc, last, err = memviz_cli(capsys, "audit", "--train", tmp_path / "train.csv", "--synthetic",
                               tmp_path / "synthetic.csv", "--holdout", tmp_path / "holdout.csv", "--target", "income",
                               "--out", tmp_path / "out", "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 0, err
    assert "'state'" in err and "not judged" in err and "'visits'" in err and "read as numerical" in err
    schema_lines = err[err.index("memviz: schema of"):].splitlines()
    assert any(line.split()[:2] == ["visits", "numerical"] for line in schema_lines)
    assert any(line.split()[:3] == ["state", "left", "out"] for line in schema_lines)
    doc = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert doc["provenance"]["unjudged"] == ["state"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["CTGAN", "TVAE"])
def test_sdv_ctgan_and_tvae_with_their_detected_metadata_audit(kind):
    train, hold = vendor_tables(400, 200)
    syn = sdv_sample(kind, train, 400, epochs=2)
    a = audited(train, syn, hold)
    assert a.verdict.code in ("no_copying", "copying", "rows_over_copied")
    assert "state" in a.provenance.unjudged                        # SDV anonymizes it whatever the model


@pytest.mark.slow
def test_memviz_own_sample_audits_without_a_schema(tmp_path, capsys):
    """A warm-up trained with meta.json, ``memviz sample``'s rows audited against the training file alone."""
    from helpers import TINY_MODEL, memviz_cli

    rows = pd.read_csv(sample_data_dir() / "train.csv")
    rows.iloc[:500].to_csv(tmp_path / "train.csv", index=False)
    rows.iloc[500:800].to_csv(tmp_path / "holdout.csv", index=False)
    rc, _, err = memviz_cli(capsys, "warmup", "--train", tmp_path / "train.csv", "--schema",
                            sample_data_dir() / "meta.json", "--out", tmp_path / "run", "--epochs", "2",
                            "--check-every", "2", "--device", "cpu", "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert rc == 0, err
    rc, _, err = memviz_cli(capsys, "sample", tmp_path / "run", "--out", tmp_path / "sampled.csv", "--device", "cpu",
                            "--quiet")
    assert rc == 0, err
    rc, last, err = memviz_cli(capsys, "audit", "--train", tmp_path / "train.csv", "--synthetic",
                               tmp_path / "sampled.csv", "--holdout", tmp_path / "holdout.csv", "--target", "income",
                               "--out", tmp_path / "out", "--no-evidence", "--no-quality", "--device", "cpu")
    assert rc == 0, err
    assert json.loads(last)["verdict"]["code"] in ("no_copying", "copying", "rows_over_copied")
