"""The dashboard's pages in Streamlit's AppTest on what issue 42 found: k kept while T moves on Tune & prune,
the user's row key and target on the Data page, the Audit page keeping its uploads across pages."""
from __future__ import annotations

from pathlib import Path

import pytest
from dash_helpers import copier_run

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
    from streamlit.testing.v1 import AppTest

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
