"""The audit of a warm-up run's check (from_run, memviz report) and the CLI's agreement with the library."""
from __future__ import annotations

import json

import pytest
from helpers import TINY_MODEL, memviz_cli

import memviz
from memviz.auditing.json_schema import validate
from memviz.warmup.run import WarmupConfig, run_warmup


def _tiny(**kw):
    base = dict(epochs=6, check_every=2, seed=3, device="cpu", model_params=dict(TINY_MODEL))
    base.update(kw)
    return WarmupConfig(**base)


@pytest.fixture(scope="module")
def runs(sample, tmp_path_factory):
    """A finished 3-check run, a run cancelled after its first check, and a finished 1-check run (150 training
    rows of the sample, the first 400 test rows as the hold-out)."""
    train, test = sample
    small, hold = train.subset(train.row_ids[:150]), test.subset(test.row_ids[:400])
    root = tmp_path_factory.mktemp("runs")
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] >= 3
    run_warmup(small, _tiny(), root / "finished", holdout=hold)
    run_warmup(small, _tiny(), root / "cancelled", holdout=hold, should_stop=stop)
    run_warmup(small, _tiny(epochs=2), root / "one", holdout=hold)
    return root, small, hold


@pytest.mark.slow
def test_a_finished_run_is_audited_at_its_last_check_with_that_checks_rows(runs):
    root, small, hold = runs
    a = memviz.audit.from_run(root / "finished", p=0.2, k=3, quality=False)
    r = a.provenance.run
    assert (r.status, r.check, r.epoch, r.n_checks, r.pooled_checks, r.p, r.k, r.T) == \
        ("finished", 2, 6, 3, 1, 0.2, 3, None)
    assert r.run_id == "finished" and a.provenance.n_synthetic == 150
    assert a.row_test.n_generated == 150 and a.rows["copies"].sum() == a.per_check["n_memorized"].iloc[-1]
    assert a.provenance.rows_read == "check 2 (epoch 6): 150 generated rows" and a.close is not None
    last = a.per_check.iloc[-1]
    assert a.mem_ratio == pytest.approx(last["mem_ratio"]) and a.excess == pytest.approx(last["excess"])
    assert not any(q.startswith("run_") or q == "few_checks" for q in a.verdict.qualifiers)
    earlier = memviz.audit.from_run(root / "finished", check=0, quality=False, dcr=False)
    assert earlier.provenance.run.check == 0 and earlier.row_test.n_generated == 150
    window = memviz.audit.from_run(root / "finished", window=2, quality=False, dcr=False)
    assert window.row_test.n_generated == 300 and window.provenance.run.pooled_checks == 2
    assert window.provenance.rows_read.startswith("the last 2 checks up to check 2 (epoch 6): checks 1, 2")
    validate(json.loads(a.to_json()))


@pytest.mark.slow
def test_a_cancelled_run_and_a_one_check_run_get_provisional_verdicts(runs):
    root, _, _ = runs
    c = memviz.audit.from_run(root / "cancelled", quality=False, dcr=False)
    assert c.provenance.run.status == "cancelled" and c.provenance.run.n_checks == 1
    assert {"run_cancelled", "few_checks"} <= set(c.verdict.qualifiers)
    assert c.verdict.sentence.startswith("Provisional (the run was cancelled at epoch 2 of 6; only 1 check")
    one = memviz.audit.from_run(root / "one", quality=False, dcr=False)
    assert one.provenance.run.status == "finished" and "few_checks" in one.verdict.qualifiers
    assert "run_cancelled" not in one.verdict.qualifiers and "only 1 check" in one.verdict.sentence
    assert c.verdict.next_step.startswith("The run did not finish") and not one.verdict.next_step.startswith("The run")


@pytest.mark.slow
def test_the_run_audit_finds_its_holdout_file_only_when_it_is_the_same_rows(runs, tmp_path):
    root, small, hold = runs
    a = memviz.audit.from_run(root / "finished", quality=False, dcr=False)
    assert a.dcr_share is None                                  # the hold-out was a table in memory: no file
    hold.data.to_csv(tmp_path / "ho.csv", index=False)
    b = memviz.audit.from_run(root / "finished", holdout=tmp_path / "ho.csv", quality=True, dcr=True)
    assert b.dcr_share is not None and b.shape_reference is not None




def test_memviz_audit_gives_the_library_numbers_and_writes_three_files(fresh_split, fresh_audit, tmp_path, capsys):
    tr, ho, fresh = fresh_split
    for name, t in (("tr", tr), ("ho", ho), ("syn", fresh)):
        t.data.to_csv(tmp_path / f"{name}.csv", index=False)
    tr.schema.save(tmp_path / "meta.json")
    rc, last, err = memviz_cli(capsys, "audit", "--train", tmp_path / "tr.csv", "--schema", tmp_path / "meta.json", "--synthetic",
                         tmp_path / "syn.csv", "--holdout", tmp_path / "ho.csv", "--out", tmp_path / "out", "--quiet")
    assert rc == 0, err
    head = json.loads(last)
    doc = json.loads((tmp_path / "out" / "audit.json").read_text())
    validate(doc)
    lib = fresh_audit.to_dict()
    for key in ("mem_ratio", "floor", "floor_ci", "excess", "excess_ci", "copy_share", "copy_share_ci"):
        assert doc["ratio_test"][key] == pytest.approx(lib["ratio_test"][key]), key
        assert head["ratio_test"][key] == pytest.approx(lib["ratio_test"][key]), key
    for key in ("n_over_copied", "identical_share", "holdout_identical_share", "dcr_share", "shape"):
        assert doc[key] == pytest.approx(lib[key]), key
        if key in head:
            assert head[key] == pytest.approx(lib[key]), key
    assert head["findings"] == doc["findings"] == lib["findings"]        # what the verdict rests on, first
    assert head["verdict"] == {"code": lib["verdict"]["code"], "sentence": lib["verdict"]["sentence"]}
    rows = (tmp_path / "out" / "rows.csv").read_text().splitlines()
    assert len(rows) == len(tr) + 1 and rows[0].startswith("row_id,copies,close_copies,identical_copies")
    assert (tmp_path / "out" / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_memviz_audit_mistakes_are_one_line(fresh_split, tmp_path, capsys):
    tr, ho, fresh = fresh_split
    tr.data.to_csv(tmp_path / "tr.csv", index=False)
    fresh.data.drop(columns=["age"]).to_csv(tmp_path / "syn.csv", index=False)
    (tmp_path / "sdv.json").write_text(json.dumps(tr.schema.to_sdv()))
    rc, _, err = memviz_cli(capsys, "audit", "--train", tmp_path / "tr.csv", "--schema", "x.json", "--metadata",
                      tmp_path / "sdv.json", "--synthetic", tmp_path / "syn.csv", "--out", tmp_path / "o")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--metadata" in err and "--schema" in err
    rc, _, err = memviz_cli(capsys, "audit", "--train", tmp_path / "tr.csv", "--metadata", tmp_path / "sdv.json", "--synthetic",
                      tmp_path / "syn.csv", "--out", tmp_path / "o")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "'age'" in err and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_memviz_report_audits_a_run(runs, tmp_path, capsys):
    root, _, _ = runs
    rc, last, err = memviz_cli(capsys, "report", root / "cancelled", "--p", "0.21", "--out", tmp_path / "rep", "--no-quality")
    assert rc == 0, err
    head = json.loads(last)
    doc = json.loads((tmp_path / "rep" / "audit.json").read_text())
    validate(doc)
    assert head["run_id"] == "cancelled" and head["status"] == "cancelled"
    assert doc["provenance"]["run"]["p"] == 0.21 and doc["provenance"]["run"]["run_id"] == "cancelled"
    assert "run_cancelled" in doc["verdict"]["qualifiers"]
    lib = memviz.audit.from_run(root / "cancelled", quality=False)
    assert head["ratio_test"]["excess"] == pytest.approx(lib.excess) and head["verdict"]["code"] == lib.verdict.code
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "cancelled" in page and "0.21" in page
