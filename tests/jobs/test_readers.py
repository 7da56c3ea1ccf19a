"""Job readers never raise on a bad line (issue 26, item 3): an event line that is valid JSON with a
wrong type, or a job record with wrong types, is skipped and counted, and the job list, the
status and every page reading them still work."""
from __future__ import annotations

import json
import os

import pytest
from helpers import live_job

from memviz.jobs import control as jobs
from memviz.jobs.spec import EventLog, read_events, read_events_counted

BAD_LINES = [
    {"event": "cell", "done": "x", "total": 4},
    {"event": "cell", "done": 1, "total": [4]},
    {"event": "cells", "done": None, "total": {"a": 1}},
    {"event": "epoch", "epoch": "3", "epochs": 10},
    {"event": "epoch", "epoch": 3.5, "epochs": 10},
    {"event": "check", "check": 1, "epoch": 2, "mem_ratio": "high"},
    {"event": "queued", "slots": "two"},
    {"event": "started", "pid": "self"},
    {"event": "failed", "error": {"nested": 1}},
    {"event": "cell", "done": 1, "total": 2, "mem_ratio": "0.3"},
    {"event": "cell", "done": True, "total": 2},
    {"event": "epoch", "epoch": 1, "epochs": 2, "t": "yesterday"},
    {"event": 7},
    ["event", "cell"],
    "cell",
]


def _write(path, *events, t=True):
    with open(path, "a", encoding="utf-8") as f:
        for ev in events:
            if isinstance(ev, dict) and t:
                ev = {"t": 1.0, **ev}
            f.write(json.dumps(ev) + "\n")


@pytest.mark.parametrize("bad", BAD_LINES, ids=[json.dumps(b)[:40] for b in BAD_LINES])
def test_a_wrongly_typed_event_line_is_skipped_and_counted(tmp_path, bad):
    job = live_job(tmp_path, "compare")
    log = EventLog(job.events_path, min_interval=0)
    log({"event": "started", "pid": os.getpid(), "kind": "compare"})
    _write(job.events_path, bad)
    log({"event": "cell", "done": 1, "total": 4, "method": "baseline", "model": "tvae", "seed": 0, "status": "ok",
         "mem_ratio": 0.2, "seconds": 1.0})
    events, skipped = read_events_counted(job.events_path)
    assert [e["event"] for e in events] == ["started", "cell"] and skipped == 1
    assert read_events(job.events_path) == events
    st = jobs.job_status(job)                               # raised ValueError on main
    assert st.state == "running" and (st.done, st.total) == (1, 4) and st.skipped == 1
    assert st.readout() == "running · cell 1/4"
    listed = jobs.list_jobs(tmp_path)                       # the Compare and Report pages' list
    assert listed["job_id"].tolist() == [job.job_id]


def test_a_wrongly_typed_final_event_does_not_make_the_job_final(tmp_path):
    job = live_job(tmp_path, "compare")
    _write(job.events_path, {"event": "started", "pid": os.getpid()}, {"event": "failed", "error": ["x"]})
    st = jobs.job_status(job)
    assert st.state == "running" and st.skipped == 1


@pytest.mark.parametrize("record", [
    {"pid": "x", "start_ticks": 1, "started": 0},
    {"pid": 4_194_309, "start_ticks": "soon", "started": "yesterday"},  # above any pid_max
    {"pid": [1], "started": None, "label": {"a": 1}},
])
def test_a_job_record_with_wrong_types_is_read_without_raising(tmp_path, record):
    job = jobs.Job(jobs.new_job_id("compare"), "compare", tmp_path)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({"job_id": job.job_id, "kind": "compare", **record}))
    _write(job.events_path, {"event": "started", "pid": 1})
    st = jobs.job_status(job)
    assert st.state == "lost"
    listed = jobs.list_jobs(tmp_path, kind="compare")
    assert listed["state"].tolist() == ["lost"] and isinstance(listed["label"].iloc[0], str)


def test_the_manifest_of_a_warmup_with_bad_checks_is_failed_not_raised(tmp_path):
    job = live_job(tmp_path, "warmup")
    job.out.mkdir(parents=True)
    (job.out / "manifest.json").write_text(json.dumps({"format": "x", "checks": "many"}))
    _write(job.events_path, {"event": "started", "pid": os.getpid()})
    st = jobs.job_status(job)                               # the manifest's problem does not crash a page
    assert st.state == "running"
