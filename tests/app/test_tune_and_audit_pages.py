"""The dashboard's pages in Streamlit's AppTest on what issue 42 found: k kept while T moves on Tune & prune,
the user's row key and target on the Data page, the Audit page keeping its uploads across pages."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dash_helpers import copier_run
from unseen import credit_table, independent_columns, with_copies

from memviz.jobs import control as jobs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90


@pytest.fixture(scope="module")
def many_checks(tmp_path_factory, sample):
    """A stored run of 20 checks (epochs 5, 10, ..., 100) on 200 sample rows."""
    root = tmp_path_factory.mktemp("many")
    train, _ = sample
    copier_run(train.subset(train.row_ids[:200]), root / "many", epochs=tuple(range(5, 105, 5)))
    return root


def test_moving_T_keeps_the_k_asked_for_and_says_when_it_must_change(many_checks, monkeypatch):
    """The walk: /tune?run=…&p=0.10&k=5&T=100, T moved to 80: k silently became 1 (URL k=1)."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(many_checks))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = "many"
    at.run()
    at.query_params.update({"p": "0.10", "k": "5", "T": "100"})
    at.switch_page("screens/5_tune.py").run()
    top = lambda: next(m.value for m in at.metric if m.label == "of them Top rows")  # noqa: E731
    assert at.slider(key="tune_k").value == 5
    at.select_slider(key="tune_T").set_value(80).run()
    assert at.slider(key="tune_k").value == 5 and at.query_params["k"] == "5" and not at.warning
    at.select_slider(key="tune_T").set_value(10).run()             # 2 checks up to T: k must change, and says so
    assert at.slider(key="tune_k").value == 2
    assert any("k = 5 is more than the 2 checks at or before T = 10" in w.value for w in at.warning)
    at.select_slider(key="tune_T").set_value(90).run()             # room again: back to the k asked for
    assert at.slider(key="tune_k").value == 5 and not at.warning
    at.slider(key="tune_k").set_value(3).run()                     # the user's own move is kept the same way
    at.select_slider(key="tune_T").set_value(60).run()
    assert at.slider(key="tune_k").value == 3 and at.query_params["k"] == "3" and top() is not None
    assert not at.exception


def test_the_audit_page_keeps_its_files_shows_its_schema_and_the_reports_evidence(tmp_path, monkeypatch):
    """Issue 42 item 4 and issue 36 item 8: the Audit page forgot its three uploads and its result on a visit to
    another page, never showed the schema it inferred (an integer key with gaps, a label named ``Status``) nor
    let the target be picked, and left out the evidence lines its own report prints; its headline read only the
    ratio test's averages (a copy share of 1.9 % above 20 % identical rows)."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    df = credit_table(1500, seed=4)
    train, hold = df.iloc[:1000].reset_index(drop=True), df.iloc[1000:].reset_index(drop=True)
    syn, _ = with_copies(independent_columns(train.drop(columns="rownames"), 500, seed=1),
                         train.drop(columns="rownames"), 10, 10, seed=2)
    syn.insert(0, "rownames", np.arange(len(syn)) + 10**6)
    raw = {name: frame.to_csv(index=False).encode() for name, frame in
           (("credit_train.csv", train), ("credit_synthetic.csv", syn), ("credit_holdout.csv", hold))}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state["audit_kept"] = {"current": False,
                                      "names": ("credit_train.csv", "credit_synthetic.csv", "credit_holdout.csv", None),
                                      "raws": (raw["credit_train.csv"], raw["credit_synthetic.csv"],
                                               raw["credit_holdout.csv"], None)}
    at.switch_page("screens/8_audit.py").run()
    assert not at.exception, [e.value for e in at.exception]

    def shown():
        labels = [m.label for m in at.metric]
        text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
        return labels, text

    labels, text = shown()
    assert "too close to a training row" in labels and "identical to a training row" in labels
    assert "floor: real rows never seen" in labels and "Other tests" in text
    assert "earlier in this session" in text and "credit\\_synthetic\\.csv" in text   # escaped: never Markdown
    assert "the model copies" in next(m.value for m in at.markdown if m.value.startswith("**")).lower()
    assert at.selectbox(key="audit_target").value == "Status"             # the table's suggestion, shown
    schema = next(d.value for d in at.dataframe if {"column", "kind", "why"} <= set(d.value.columns))
    assert schema.set_index("column").loc["rownames", "kind"] == "key"   # the key left out, said why
    assert "row key" in schema.set_index("column").loc["rownames", "why"]
    at.switch_page("screens/1_data.py").run()
    at.switch_page("screens/8_audit.py").run()                             # back: the files and the result kept
    assert not at.exception and "too close to a training row" in shown()[0]
    at.selectbox(key="audit_target").set_value("Home").run()                # the user's own target
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="audit_target").value == "Home"
    assert any("target Home" in e.label for e in at.expander)
