"""The when-to-stop block of the Warm-up and Memorization screens: frontier, reason, sample from a check."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from memviz.evaluate.quality import CheckQuality
from memviz.jobs import control as jobs
from memviz.warmup.run import WarmupConfig, run_warmup

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def stop_root(tmp_path_factory, sample):
    root = tmp_path_factory.mktemp("runs")
    train, test = sample
    run_warmup(train.subset(train.row_ids[:200]),
               WarmupConfig(epochs=6, check_every=2, device="cpu", n_samples=80,
                            model_params={"layers": [32, 32], "n_timesteps": 10}),
               root / "stop", holdout=test.subset(test.row_ids[:200]), quality=CheckQuality)
    return root


@pytest.mark.parametrize("page, key", [("screens/3_memorization.py", "mem"), ("screens/2_warmup.py", "warmup")])
def test_the_frontier_recommends_a_check_and_samples_from_it(stop_root, monkeypatch, page, key):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(stop_root))
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = "stop"
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    spec = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    frontier = [f for f in spec if "When to stop" in f["layout"]["title"]["text"]]
    assert frontier and any(t["name"].startswith("recommended: epoch") for t in frontier[0]["data"])
    assert any(t.value.startswith("Check ") for t in at.text)
    assert at.selectbox(key=f"{key}_check").options == ["check 0 (epoch 2)", "check 1 (epoch 4)",
                                                        "check 2 (epoch 6)"]
    at.number_input(key=f"{key}_rows").set_value(25)
    at.button(key=f"{key}_sample").click().run()
    assert not at.exception, [e.value for e in at.exception]
    btn = at.get("download_button")
    assert btn and any("25 rows from epoch" in b.proto.label for b in btn)
