"""The audit in a notebook (``_repr_html_``) and a tracker (``to_metrics``, ``log_mlflow`` into a local store)."""
from __future__ import annotations

import json
import math
import warnings

import pytest
from helpers import memviz_cli
from unseen_tables import credit_like

from memviz.tables.data import table_from_frame


@pytest.fixture(scope="module")
def hostile_copies():
    """A keyed credit-like table whose keys and a column name are markup, with 20 rows copied 4 times each:
    the audit names them."""
    import memviz
    from memviz.tables.infer import infer_schema

    df = credit_like(900, seed=3)
    df = df.rename(columns={"Job": "<img src=x onerror=alert(1)>"})
    df["rownames"] = [f"<script>alert({i})</script>" for i in range(len(df))]
    train_df, hold, fresh = df.iloc[:500], df.iloc[500:700], df.iloc[700:].reset_index(drop=True)
    syn = fresh.copy()
    syn.iloc[:80] = train_df.iloc[[i for i in range(20) for _ in range(4)]].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                           # the inferred schema's notes
        schema = infer_schema(train_df)
    assert schema.key == "rownames"
    train = table_from_frame(train_df, schema, source="train", role="train")
    a = memviz.audit(train, syn, hold, quality=False)
    assert a.n_over_copied > 0
    return a, train, hold, syn


def test_the_notebook_view_is_the_card_and_the_named_rows_escaped_and_redacted(hostile_copies):
    a, train, *_ = hostile_copies
    html = a._repr_html_()
    assert a.verdict.sentence.split(":")[0] in html and "Next step" in html
    assert "Named training rows" in html and html.count("<tr>") >= min(a.n_over_copied, 20)
    assert "<script" not in html and "<img" not in html and "alert(" not in html.replace("onerror=alert(1)", "")
    # a column name is shown (escaped: the verdict may name the column that sets a region apart), a key is not
    from memviz.auditing.notebook import audit_fragment

    keyed = audit_fragment(a, train=train)
    assert "<script" not in keyed and "alert(" not in keyed.replace("onerror=alert(1)", "")   # keys hashed
    raw = audit_fragment(a, train=train, redacted=False)
    assert "&lt;script&gt;alert(" in raw and "<script" not in raw          # raw keys shown, escaped


def test_metrics_are_flat_numbers_that_match_audit_json(hostile_copies):
    a, *_ = hostile_copies
    m = a.to_metrics()
    assert m and all(isinstance(k, str) and isinstance(v, float) and math.isfinite(v) for k, v in m.items())
    d = json.loads(a.to_json())
    assert m["ratio_test.mem_ratio"] == d["ratio_test"]["mem_ratio"] and m["n_over_copied"] == d["n_over_copied"]
    assert m["ratio_test.excess_ci.low"] == d["ratio_test"]["excess_ci"][0]
    for f in d["findings"]:
        assert m[f"findings.{f['member']}.holds"] == float(f["holds"])
    assert m["closeness.too_close_share"] == d["closeness"]["too_close_share"]
    for member in d["family"]["members"]:
        assert m[f"family.{member['name']}.p"] == member["p"]
        assert m[f"family.{member['name']}.holds"] == float(member["holds"])
    assert m[f"verdict.{a.verdict.code}"] == 1.0
    assert "evidence.membership.mia_auc" in m
    import re

    assert all(re.fullmatch(r"[\w.\-/ ]+", k) for k in m)                   # MLflow's metric key characters


def test_log_mlflow_into_a_local_file_store(hostile_copies, tmp_path, monkeypatch, capsys):
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")      # MLflow 3 keeps its file store behind this switch
    a, train, hold_df, syn_df = hostile_copies
    out = tmp_path / "audit"
    a.write(out, train=train)
    uri = (tmp_path / "mlruns").as_uri()
    run_id = a.log_mlflow(uri, out_dir=out, run_name="nightly")
    client = MlflowClient(uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "nightly"
    assert run.data.metrics == pytest.approx(a.to_metrics())
    assert run.data.tags["memviz_verdict"] == a.verdict.code
    assert {f.path for f in client.list_artifacts(run_id, "memviz")} >= {"memviz/audit.json", "memviz/report.html",
                                                                       "memviz/rows.csv"}
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    with mlflow.start_run(experiment_id=run.info.experiment_id) as active:   # inside a run: logs into it
        assert a.log_mlflow() == active.info.run_id
    assert client.get_run(active.info.run_id).data.tags["memviz_verdict"] == a.verdict.code
    # the command: --mlflow URI; a URI MLflow refuses is one line
    hold, syn, a_train = tmp_path / "h.csv", tmp_path / "s.csv", tmp_path / "t.csv"
    train.data.to_csv(a_train, index=False)
    hold_df.to_csv(hold, index=False)
    syn_df.to_csv(syn, index=False)
    code, last, err = memviz_cli(capsys, "audit", "--train", a_train, "--synthetic", syn, "--holdout", hold,
                                 "--out", tmp_path / "cli", "--mlflow", uri, "--no-quality", "--no-evidence", "--quiet")
    assert code == 0, err
    assert client.get_run(json.loads(last)["mlflow_run"]).data.tags["memviz_verdict"]
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE")
    code, _, err = memviz_cli(capsys, "audit", "--train", a_train, "--synthetic", syn, "--holdout", hold,
                              "--out", tmp_path / "cli2", "--mlflow", (tmp_path / "refused").as_uri(), "--no-quality",
                              "--no-evidence", "--quiet")
    errors = [line for line in err.splitlines() if ": warning: " not in line]
    assert code == 2 and len(errors) == 1 and errors[0].startswith("memviz audit: error: MLflow tracking URI")
