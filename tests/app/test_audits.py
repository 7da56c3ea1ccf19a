"""The dashboard's audits (memviz.app.audits): every privacy sentence is the Audit's own, the
sources are named, uploads become tables safely, and the pages that show them say what the
Audit says (a cancelled run, over-copied rows beside 'no copying overall')."""
from __future__ import annotations

import importlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dash_helpers import copier_run, finished_compare, floored_run, open_page
from helpers import near_copies

from memviz.app import audits, comparisons, datasets, readings, runs
from memviz.app.compare_card import compare_verdict
from memviz.auditing.result import audit as make_audit
from memviz.auditing.stored import RUN_FOLDER
from memviz.errors import BadTable
from memviz.jobs import control as jobs
from memviz.jobs.spec import ROW_CLOSENESS, keep_audit
from memviz.warmup.store import RunStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def root(tmp_path_factory, sample):
    """``floored`` (a copier run with its floor), ``stopped`` (the same, cancelled at epoch 8 of 100) and
    ``nofloor`` (no hold-out)."""
    root = tmp_path_factory.mktemp("audit_runs")
    train, _ = sample
    small, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    floored_run(small, holdout, root / "floored")
    floored_run(small, holdout, root / "stopped")
    store = RunStore(root / "stopped")
    store.update(status="cancelled", config={**store.manifest()["config"], "epochs": 100})
    copier_run(small, root / "nofloor")
    return root


@pytest.fixture(scope="module")
def over_copied(sample):
    """An Audit whose table is not copied overall but two of its training rows are, 8 times each:
    fresh real rows (500 test rows) with 16 of them replaced by copies of training rows 5 and 17 moved on
    fnlwgt as far as real rows are from theirs (the hold-out's 2nd to 4th percentile of distance)."""
    train, test = sample
    hold = test.subset(test.row_ids[:500])
    fresh = test.data.iloc[500:]
    clean = make_audit(train, fresh, hold, device="cpu", quality=False, dcr=False, evidence=False)
    syn = near_copies(train, fresh, [5, 17], np.quantile(clean.close.holdout_distances, np.linspace(0.02, 0.04, 16)))
    return make_audit(train, syn, hold, device="cpu", quality=False, dcr=False)


def test_a_runs_audit_has_the_memorization_pages_figures(root):
    view = runs.load_run(root / "floored")
    a = audits.run_audit(view)
    ex = readings.last_excess(view)
    assert a.floor == pytest.approx(view.result.floor.floor) and a.excess == pytest.approx(ex.excess)
    assert tuple(a.excess_ci) == pytest.approx((ex.low, ex.high))
    assert a.provenance.run.run_id == "floored" and a.provenance.run.check == int(view.per_check["check"].iloc[-1])
    assert audits.run_audit(view) is a                                # computed once per run state


def test_the_card_leads_with_the_audits_own_sentence(root):
    view = runs.load_run(root / "floored")
    a = audits.run_audit(view)
    card = audits.run_card(view)
    assert card.lines[0].text == a.verdict.sentence and card.sentence == a.verdict.sentence
    assert card.lines[-1].topic == "Next step" and card.lines[-1].text == audits.next_step(a)
    assert a.verdict.code == "copying" and "memviz prune" in card.lines[-1].text
    for ln in card.lines:                                            # plain text: callers escape it
        assert "**" not in ln.text and not re.search(r"<[a-z/!]", ln.text), ln.text


def test_a_cancelled_run_is_named_cancelled_in_its_source_sentence_and_step(root):
    view = runs.load_run(root / "stopped")
    src = audits.run_source(view, 0.21, 3, None)
    assert src.label() == "Warm-up run stopped (cancelled at epoch 8 of 100; check 3 of 0–3)"
    a = audits.run_audit(view)
    assert "run_cancelled" in a.verdict.qualifiers and "cancelled" in a.verdict.sentence
    assert audits.next_step(a).startswith("The run did not finish")
    finished = audits.run_source(runs.load_run(root / "floored"))
    assert finished.label() == "Warm-up run floored (check 3 of 0–3, epoch 8)" and "cancelled" not in finished.label()


def test_over_copied_rows_are_never_nothing_to_remove(over_copied, sample):
    """Excess not significant, 2 rows copied 8 times each: the Compare card's next step names the rows
    and never says 'there is no measured copying to remove' (it did, beside 19 over-copied rows)."""
    a = over_copied
    assert a.verdict.code == "rows_over_copied" and {5, 17} <= set(a.over_copied_rows["row_id"])
    cells = pd.DataFrame([{"method": m, "model": "tabddpm", "seed": 0, "status": "ok", "n_synthetic": 500,
                           "mem_ratio": r, "shape": 0.9, "mle": 0.8} for m, r in (("baseline", 0.26),
                                                                                 ("dynamiccut", 0.25))])
    card = compare_verdict(cells, audit=a)
    lines = {ln.topic: ln.text for ln in card.lines}
    assert a.verdict.sentence in lines["Flagged output"]
    assert "no measured copying" not in lines["Next step"] and f"{a.n_over_copied} training rows" in lines["Next step"]
    assert audits.card(a).lines[-1].text == a.verdict.next_step and "named rows" in a.verdict.next_step
    shown = audits.over_copied_table(a, sample[0], redacted=True)
    assert set(shown["training row"][:2]) == {5, 17} and "expected from real rows" in shown.columns
    assert shown["q-value"].iloc[0] == audits._p(a.over_copied_rows["q_value"].iloc[0])
    assert audits._p(2e-20) == "< 0.001"                               # for people, not 2e-20
    assert shown["close copies"].iloc[0] == 8 and shown["named"].all()
    assert shown["closest copy"].iloc[0] == "differs"                  # fnlwgt moved by more than 0.1 IQR


def test_the_over_copied_table_redacts_by_default(over_copied, sample):
    train, _ = sample
    raw = audits.over_copied_table(over_copied, train, redacted=False)
    red = audits.over_copied_table(over_copied, train)
    row5 = train.data.loc[5]
    assert raw.loc[0, "age"] == row5["age"] and red.loc[0, "age"] != row5["age"]
    assert str(row5["workclass"]) not in set(red["workclass"].astype(str))


def _csv(df: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def test_uploads_become_tables_with_the_training_tables_schema(sample):
    train, test = sample
    t, h = train.data.reset_index(drop=True), test.data.reset_index(drop=True)
    tr, syn, hold = audits.upload_tables("train.csv", _csv(t), "syn.csv", _csv(h.iloc[:100]), "hold.csv",
                                         _csv(h.iloc[100:300]))
    assert (len(tr), len(syn), len(hold)) == (len(t), 100, 200)
    assert syn.schema == tr.schema == hold.schema and tr.schema.target == "income"
    with pytest.raises(BadTable, match=r"syn\.csv: column 'age'"):
        audits.upload_tables("train.csv", _csv(t), "syn.csv", _csv(h.drop(columns="age")))
    # an SDV metadata upload decides the kinds: 'age' as categorical, the id column the row key (issue 42)
    meta = {"METADATA_SPEC_VERSION": "V1", "tables": {"adult": {"columns": {
        **{c: {"sdtype": "numerical"} for c in train.schema.numerical if c != "age"},
        **{c: {"sdtype": "categorical"} for c in (*train.schema.categorical, "age", "income")},
        "person": {"sdtype": "id"}}}}}
    t2 = t.assign(person=np.arange(len(t)))
    tr2, _, _ = audits.upload_tables("train.csv", _csv(t2), "syn.csv", _csv(h.iloc[:50]),
                                     schema_name="sdv.json", schema_raw=json.dumps(meta).encode())
    assert "age" in tr2.schema.categorical and tr2.schema.key == tr2.key == "person" and tr2.schema.target == "income"
    assert list(tr2.key_of([0, 5])) == [0, 5]


def test_schema_uploads_are_checked_and_named(sample):
    train, _ = sample
    frame = train.data.reset_index(drop=True)
    with pytest.raises(BadTable, match=r"meta\.json: not valid JSON"):
        datasets.schema_from_upload("meta.json", b"{nope", frame)
    bad = {"columns": {"age": {"sdtype": "numerical"}, "ghost": {"sdtype": "categorical"}}}
    with pytest.raises(BadTable, match=r"sdv\.json: column 'ghost'"):
        datasets.schema_from_upload("sdv.json", json.dumps(bad).encode(), frame)
    own = (ROOT / "sample_data" / "meta.json").read_bytes()
    assert datasets.schema_from_upload("meta.json", own, frame) == train.schema.__class__.load(
        ROOT / "sample_data" / "meta.json")
    multi = {"columns": {"age": {"sdtype": "numerical"}, "race": {"sdtype": "categorical"}}}
    with pytest.raises(BadTable, match=r"sdv\.json: column 'fnlwgt': in the table but not in the SDV metadata"):
        datasets.schema_from_upload("sdv.json", json.dumps(multi).encode(), frame, target="race")   # as SDV refuses
    multi["columns"].update({c: {"sdtype": "categorical"} for c in frame.columns if c not in multi["columns"]})
    s = datasets.schema_from_upload("sdv.json", json.dumps(multi).encode(), frame, target="race")
    assert s.target == "race" and s.task == "multiclass"           # SDV metadata has no task: read from the column


def test_a_comparisons_source_names_its_run_and_its_settings(tmp_path, sample):
    train, _ = sample
    small = train.subset(train.row_ids[:120])
    out = finished_compare(tmp_path, small, np.random.default_rng(0))
    (out / "experiment.json").write_text(json.dumps({"config": {"p": 0.1, "k": 4, "T": 6, "run_dir": "/x/run-A",
                                                                "methods": ["baseline", "dynamiccut"]}}))
    src = audits.compare_source(comparisons.load_compare(out))
    assert (src.run_id, src.p, src.k, src.T) == ("run-A", 0.1, 4, 6)
    assert src.label() == f"Comparison {out.name} (ranked on warm-up run run-A, DynamicCut p=0.10, k=4, T=6)"
    assert audits.ranked_on(out, "/x/run-A") and not audits.ranked_on(out, "/x/run-B")
    (out / "experiment.json").write_text(json.dumps({"config": {"methods": ["baseline", "tabcutmix"]}}))
    assert audits.compare_source(out).label() == f"Comparison {out.name} (no DynamicCut ranking)"


def test_a_comparisons_audit_pools_its_baseline_seeds(tmp_path, sample):
    """The card's Flagged output is the Audit of the unmitigated model's rows pooled over seeds."""
    train, test = sample
    small = train.subset(train.row_ids[:200])
    out = finished_compare(tmp_path, small, np.random.default_rng(0))
    job = jobs.job_for(out)                  # the inputs a comparison job keeps beside its spec
    small.data.reset_index().to_parquet(tmp_path / "train.parquet")
    test.data.iloc[:300].reset_index().to_parquet(tmp_path / "test.parquet")
    small.schema.save(tmp_path / "schema.json")
    spec = json.loads(job.spec_path.read_text())
    spec["paths"].update(train=str(tmp_path / "train.parquet"), test=str(tmp_path / "test.parquet"),
                         schema=str(tmp_path / "schema.json"), row_id="row_id")
    job.spec_path.write_text(json.dumps(spec))
    cv = comparisons.load_compare(out)
    a = audits.compare_audit(cv, "tabddpm")
    assert a is not None and a.provenance.n_synthetic == 2 * len(small) and a.provenance.n_holdout == 300
    card = compare_verdict(cv.ok, "tabddpm", audit=a)
    flagged = next(ln.text for ln in card.lines if ln.topic == "Flagged output")
    assert flagged.endswith(a.verdict.sentence) and "400 generated rows pooled" in flagged
    assert audits.compare_audit(cv, "ctgan") is None                  # no such cells


# ------------------------------------------------------------------ the pages (AppTest)
@pytest.fixture
def app(root, monkeypatch):
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    return open_page


def test_a_cancelled_runs_memorization_page_says_so(app):
    """Cancel at epoch 8 of 100: the headline says the run was cancelled (it used to read as a clean verdict)."""
    at = app("stopped", "screens/3_memorization.py")
    head = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "cancelled" in head and "epoch 8 of 100" in head
    done = app("floored", "screens/3_memorization.py")
    assert "cancelled" not in " ".join(m.value for m in done.markdown)


def test_the_report_page_shows_each_sections_source(app):
    at = app("stopped", "screens/7_report.py")
    text = " ".join(m.value for m in at.markdown)
    assert "cancelled at epoch 8 of 100" in text.replace("\\", "") and "p=0.10" in text.replace("\\", "")


def test_the_audit_page_without_uploads_says_what_to_give(app):
    at = app(None, "screens/8_audit.py")
    assert any("Upload the training table and the synthetic table" in i.value for i in at.info)
    assert not at.get("download_button")


def test_a_synthetic_upload_takes_the_current_tables_schema(sample):
    """The Audit page's "use the current table": only the synthetic table is uploaded."""
    train, test = sample
    syn = audits.companion_table(train, "gen.parquet", _parquet(test.data.iloc[:50].iloc[:, ::-1]))
    assert list(syn.data.columns) == list(train.data.columns) and len(syn) == 50 and syn.schema == train.schema
    with pytest.raises(BadTable, match=r"gen\.csv: .*age"):
        audits.companion_table(train, "gen.csv", _csv(test.data.assign(age="old")))


def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.reset_index(drop=True).to_parquet(buf)
    return buf.getvalue()


def test_the_page_reads_the_audit_the_worker_kept_for_this_run_state_only(tmp_path, sample, monkeypatch):
    """An Adult-size run's audit takes 12-18 s; the worker keeps it when the run stops, and the pages read it
    back instead of computing it again, unless the run changed since (its manifest's token)."""
    build = importlib.import_module("memviz.auditing.result")

    train, _ = sample
    run = tmp_path / "r"
    floored_run(train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800]), run)
    events = []
    assert keep_audit(run, events.append, device="cpu") and events == [{"event": "auditing"}]
    assert (run / RUN_FOLDER / "index.json").is_file()
    computed = []
    real = build.run_fields
    monkeypatch.setattr(build, "run_fields", lambda *a, **k: computed.append(a) or real(*a, **k))
    a = audits.run_audit(runs.load_run(run))
    assert computed == [] and a.provenance.run.run_dir == str(run)
    RunStore(run).update(status="finished")                  # a new run state: the kept audit is not its own
    audits.run_audit(runs.load_run(run))
    assert len(computed) == 1
    audits.run_audit(runs.load_run(run), check=0)            # another check than the last: computed
    assert len(computed) == 2


def test_the_leak_ranking_reads_the_kept_closeness_and_gives_the_same_table(tmp_path, sample, monkeypatch):
    train, _ = sample
    run = tmp_path / "r"
    floored_run(train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800]), run)
    view = runs.load_run(run)
    null = readings.run_row_null(view)
    computed = readings.leak_ranking(view, "copies", 20, null)             # nothing kept yet: measured here
    assert readings.kept_row_closeness(view) is None
    assert keep_audit(run, device="cpu")
    kept = readings.kept_row_closeness(view)
    assert kept is not None and len(kept) and list(kept.columns)[0] == "row_id"
    monkeypatch.setattr(readings, "run_closeness", lambda *a, **k: pytest.fail("read the samples again"))
    pd.testing.assert_frame_equal(readings.leak_ranking(view, "copies", 20, null), computed)
    assert computed["exact_copies"].sum() + computed["differing_copies"].sum() > 0   # the counts are there
    RunStore(run).update(status="finished")                                   # another run state: not its table
    assert readings.kept_row_closeness(view) is None
    assert len(list((run / RUN_FOLDER).glob(f"{ROW_CLOSENESS}_*.parquet"))) == 1


def test_a_failing_or_interrupted_audit_leaves_the_finished_run_finished(tmp_path, sample, monkeypatch, capsys):
    """The warm-up is done when the worker audits it: a bug or a cancel inside the audit keeps nothing and
    raises nothing (the pages compute the audit themselves and say what goes wrong)."""
    build = importlib.import_module("memviz.auditing.result")
    train, _ = sample
    run = tmp_path / "r"
    floored_run(train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800]), run)
    for exc in (ZeroDivisionError("a bug"), KeyboardInterrupt(), OSError(28, "No space left on device")):
        def boom(*a, _exc=exc, **k):
            raise _exc
        monkeypatch.setattr(build, "run_fields", boom)
        assert keep_audit(run, device="cpu") is False
        assert not (run / RUN_FOLDER / "index.json").exists()
    assert "ZeroDivisionError: a bug" in capsys.readouterr().err        # the bug is in the job's log
    assert RunStore(run).manifest()["status"] == "finished"
