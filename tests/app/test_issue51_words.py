"""Issue 51 item 4: the contradictions and words a demo to privacy officers stumbled on, each as found.

"+0.0 points: utility lost"; the verdict card read DynamicCut only, not the dynamic threshold beside it; "does
the ranking transfer?" drawn without its random arm; the report's bad verdict box without colour and labelled
"Evidence: data_copying"; the correct key detection styled as a yellow warning; "rowna…" cut off in a metric;
"realrows" (a wrapped title's words glued in its text); "Uploads are kept …" said twice."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
from dash_helpers import APP, finished_compare, open_page

from memviz import viz
from memviz.app import datasets
from memviz.app.compare_card import compare_verdict
from memviz.io import atomic_write_csv
from memviz.jobs import control as jobs
from memviz.viz.style import wrap_title


def results(*, trend_drop=0.048, methods=("baseline", "dynamiccut", "random"), n_seeds=1, dyn=0.27):
    rows = []
    mem = {"baseline": 0.30, "dynamiccut": 0.25, "random": 0.29, "dynamic_threshold": dyn}
    for s in range(n_seeds):
        for m in methods:
            rows.append({"method": m, "model": "tabddpm", "seed": s, "status": "ok", "n_synthetic": 3000,
                         "mem_ratio": mem[m] + 0.001 * s, "shape": 0.90, "mle": 0.85, "mle_real": 0.9,
                         "trend": 0.921 - (trend_drop if m != "baseline" else 0.0), "dcr_share": 0.5,
                         "floor": 0.2, "floor_low": 0.18, "floor_high": 0.22, "n_holdout": 1000,
                         "relative_reduction": (0.30 - mem[m]) / 0.30})
    return pd.DataFrame(rows)


def lines(v):
    return {ln.topic: ln for ln in v.lines}


def test_the_utility_line_names_the_figure_that_loses_next_to_its_verdict():
    """It read "Shape 90.0 % → 90.0 % (+0.0 points); Trend …; MLE 85.0 % → 85.0 % (+0.0 points): utility lost":
    the verdict stood next to a figure that did not move."""
    text = lines(compare_verdict(results()))["Utility cost"].text
    assert not re.search(r"\+0\.0 points\)?: utility lost", text), text
    assert re.search(r"^Utility lost: Trend [^;]*[-−]4\.8 points", text), text
    small = lines(compare_verdict(results(trend_drop=0.002)))["Utility cost"].text
    assert small.startswith("Little utility lost: at most 0.2 points"), small


def test_the_card_reads_every_mitigation_not_only_dynamiccut():
    """A comparison with the dynamic threshold beside DynamicCut: the card spoke of DynamicCut alone."""
    v = compare_verdict(results(methods=("baseline", "dynamiccut", "random", "dynamic_threshold")))
    t = lines(v)
    assert "Dynamic threshold" in t, list(t)
    assert "30.0 %" in t["Dynamic threshold"].text and "27.0 %" in t["Dynamic threshold"].text
    assert "Utility" in t["Dynamic threshold"].text or "utility" in t["Dynamic threshold"].text
    # random pruning is DynamicCut's control, said in its line, not an arm of its own
    assert "Random" not in t


def test_the_transfer_figure_needs_both_arms():
    both = viz.transferability_plot(results())
    assert {tr.name for tr in both.data} == {"DynamicCut", "Random"}
    one = viz.transferability_plot(results(methods=("baseline", "dynamiccut")))
    notes = " ".join(a.text for a in one.layout.annotations)
    assert "random" in notes.lower(), notes


def test_the_compare_page_draws_no_transfer_figure_without_its_random_arm(tmp_path, monkeypatch, sample):
    train, _ = sample
    out = finished_compare(tmp_path, train.subset(train.row_ids[:200]), np.random.default_rng(0))
    res = pd.read_csv(out / "results.csv")
    atomic_write_csv(out / "results.csv", res[res["method"] != "random"])
    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = open_page(None, "screens/6_compare.py")
    titles = [str(c.proto.spec) for c in at.get("plotly_chart")]
    assert not any("transfer" in t for t in titles)
    assert any("random pruning" in c.value.lower() and "transfer" in c.value.lower() for c in at.main.caption)


def test_a_detected_row_key_is_information_not_a_warning():
    """A telecom table's ``rownames`` column was detected correctly, and said in a yellow warning box."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"rownames": np.arange(1, 301), "tenure": rng.integers(0, 72, 300),
                       "charges": rng.normal(70, 20, 300).round(2), "plan": rng.choice(["a", "b", "c"], 300),
                       "churn": rng.choice(["yes", "no"], 300)})
    raw = datasets.raw_from_upload("telecom.csv", df.to_csv(index=False).encode())
    assert raw.schema.key == "rownames"
    assert not any("rownames" in n for n in raw.notes), raw.notes
    assert any("'rownames'" in n and "row key" in n for n in raw.facts), raw.facts


def test_wrapped_titles_keep_their_spaces_in_the_text():
    """A title broken with <br> read "…against real<br>rows…": its text (what a screen reader and a search read)
    was "realrows"."""
    title = "Copies per training row against what real rows never seen would give (the floor of each row)"
    wrapped = wrap_title(title, 40)
    assert "<br>" in wrapped
    assert re.sub(r"\s+", " ", wrapped.replace("<br>", "")) == title


def test_the_upload_note_says_where_uploads_are_kept_once(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="data_source").set_value("upload").run()
    text = " ".join(i.value for i in at.info)
    assert text.count("Uploads are kept") == 1, text
    assert ".uploads" in text


def test_the_data_page_shows_the_row_key_and_target_in_full(tmp_path, monkeypatch):
    """A metric cut the row key to "rowna…"; the target and the key are now text beside the figures."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not any(m.label in ("row key", "target") for m in at.metric), [m.label for m in at.metric]
    said = " ".join(c.value for c in at.main.caption) + " ".join(m.value for m in at.main.markdown)
    assert "income" in said
