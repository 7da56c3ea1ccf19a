"""Issue 53 item 1: the verdict is computed once and kept in the Audit. Writing every output of an audit
(audit.json, report.html, rows.csv, the notebook's cell, its metrics, JUnit XML and the CI gate) reads that
one verdict; it used to be an uncached property, computed again by each reader (4 times per `memviz audit`)."""
from __future__ import annotations

import memviz
from memviz.auditing import result
from memviz.auditing.junit import write_junit
from memviz.verdict.thresholds import read_thresholds, threshold_exit
from memviz.verdict.verdict import gate


def test_every_output_of_an_audit_reads_one_verdict(fresh_split, monkeypatch, tmp_path):
    calls = []
    real = result.verdict_of

    def counted(audit):
        calls.append(audit)
        return real(audit)

    monkeypatch.setattr(result, "verdict_of", counted)
    tr, ho, fresh = fresh_split
    a = memviz.audit(tr, fresh.data.iloc[:300], ho, quality=False)
    a.write(tmp_path / "out")
    a.to_json()
    a._repr_html_()
    a.to_metrics()
    readings = read_thresholds(a, ())
    write_junit(tmp_path / "junit.xml", a, readings)
    threshold_exit(gate(a.verdict.code, "copying"), readings)
    assert len(calls) == 1 and calls[0] is a
    assert a.verdict is a.verdict
