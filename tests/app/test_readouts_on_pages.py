"""Issue 42, items 5-7, on the pages in Streamlit's AppTest: checks named the same way as they are counted,
the warm-up's arrow coloured by the floor, one headline on Memorization, its words explained."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from dash_helpers import floored_run, open_page

from memviz.app import audits
from memviz.jobs import control as jobs
from memviz.warmup.store import RunStore

TIMEOUT = 120


def shown(md: str) -> str:
    """What a reader sees of Markdown written with screens/_ui.esc (backslash escapes removed)."""
    return re.sub(r"\\([^\w\s])", r"\1", md)


def with_floor(run_dir: Path, floor: float) -> None:
    """The run's check summaries with a floor, as a warm-up with a hold-out writes them (the warm-up page reads
    them): the floor and its interval fixed, the excess and its interval from each check's mem ratio."""
    store = RunStore(run_dir)
    checks = store.manifest()["checks"]
    for c in checks:
        m = float(c["mem_ratio"])
        c.update(floor=floor, floor_low=floor - 0.02, floor_high=floor + 0.02, excess=m - floor,
                 excess_low=m - floor - 0.05, excess_high=m - floor + 0.05)
    store.update(checks=checks)


@pytest.fixture(scope="module")
def root(tmp_path_factory, sample):
    """``twelve``: a copier run of 12 checks (epochs 5 to 60, as the walk's) with its floor, more rows copied at
    each check; ``below``: the same with a floor far above every check (a result below the floor)."""
    root = tmp_path_factory.mktemp("readouts")
    train, _ = sample
    small, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    for name in ("twelve", "below"):
        floored_run(small, holdout, root / name, epochs=tuple(range(5, 65, 5)))
    with_floor(root / "twelve", 0.05)
    with_floor(root / "below", 0.95)
    return root


@pytest.fixture
def app(root, monkeypatch):
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    return lambda run, page: open_page(run, page, TIMEOUT)


def text_of(at) -> str:
    return shown(" ".join(m.value for m in at.markdown) + " " + " ".join(c.value for c in at.caption))


def test_a_check_is_named_as_the_count_beside_it_counts(app):
    """The walk: "12 checks" in the sidebar beside "check 11, epoch 60" under the headline. Checks are numbered
    from 0 (the run's files, memviz sample --check): wherever a check is named beside a count, the range says so."""
    at = app("twelve", "screens/3_memorization.py")
    assert "12 checks" in " ".join(c.value for c in at.sidebar.caption)
    assert "check 11 of 0–11, epoch 60" in text_of(at)
    heat = at.select_slider(key="heat_check")
    assert heat.format_func(11) == "check 11 of 0–11 (epoch 60)"
    at = app("twelve", "screens/2_warmup.py")
    m = next(m for m in at.metric if m.label == "Checks finished")
    assert m.value == "12" and "checks 0–11" in text_of(at)


def test_the_warmups_arrow_is_red_only_above_the_floor(app):
    """The walk: a red up-arrow beside a memorization ratio below the floor, which is good news for privacy. The
    change since the check before is grey unless the last check is above the floor (its excess interval above 0)."""
    from streamlit.proto.Metric_pb2 import Metric  # lazy: streamlit is optional (memviz[app])

    def arrow(at):
        m = next(m for m in at.metric if m.label == "Memorization ratio")
        return m.delta, m.proto.color

    delta, color = arrow(app("below", "screens/2_warmup.py"))
    assert delta.startswith("+") and color == Metric.MetricColor.GRAY
    delta, color = arrow(app("twelve", "screens/2_warmup.py"))
    assert delta.startswith("+") and color == Metric.MetricColor.RED


def test_the_memorization_page_states_its_headline_once(app):
    """The walk: the headline said three times (the verdict's sentence, the figures under it, and a caption on
    how close the flagged rows are). The verdict's sentence is the one headline; the figures stay as figures."""
    at = app("twelve", "screens/3_memorization.py")
    head = at.markdown[0].value if at.markdown else ""
    sentence = shown(head).strip("*")
    assert sentence.startswith("The model copies")
    text = text_of(at)
    assert text.count(sentence) == 1
    assert "How close the" not in text and "flagged rows of the last check really are" not in text


def test_the_verdict_names_an_attack_as_pointing_to_copying_only_when_that_attack_flags(sample):
    """The walk: the Memorization headline said "the membership attack points to copying" beside that attack's
    AUC 0.52. A synthetic table of fresh real rows: each attack reads no better than chance (an AUC near 0.5
    whose interval covers it), and the verdict names none of them; the clause follows each attack's own flag."""
    train, test = sample
    small = train.subset(train.row_ids[:1000])
    a = audits.tables_audit(small, test.subset(test.row_ids[:1000]), train.subset(train.row_ids[1000:1500]))
    membership = a.evidence["membership"]
    assert 0.5 < membership.auc < 0.56 and membership.auc_low < 0.5 and not membership.flags_copying
    assert "points to copying" not in a.verdict.sentence and "evidence_disagrees" not in a.verdict.qualifiers
    named = [k for k, e in a.evidence.items() if getattr(e, "flags_copying", None) is True]
    assert named == []
