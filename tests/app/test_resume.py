"""The Compare page resumes a lost comparison (issue 26, item 7): the CLI reused its cells, the
dashboard had no way to start it again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memviz.jobs import control as jobs
from memviz.jobs.spec import EventLog, JobSpec, write_spec

ROOT = Path(__file__).resolve().parents[2]


def _lost_compare(root: Path) -> jobs.Job:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = jobs.proc_start_ticks(proc.pid)
    proc.wait()
    job = jobs.Job(jobs.new_job_id("compare"), "compare", root)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({"job_id": job.job_id, "kind": "compare", "pid": proc.pid,
                                                      "start_ticks": ticks, "started": time.time(), "label": "t"}))
    write_spec(job.spec_path, JobSpec("compare", {"models": ["tvae"]}, {"train": str(job.job_dir / "t.parquet"),
                                                                         "out": str(job.out)}))
    EventLog(job.events_path)({"event": "started", "pid": proc.pid})
    return job


def test_a_lost_comparison_has_a_resume_button_that_starts_it_again(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    job = _lost_compare(tmp_path)
    spawned = []

    def spawn(job_, spec, queued=True, session=""):
        spawned.append((job_.job_id, spec.kind, session))
        (job_.job_dir / "job.json").write_text(json.dumps({"job_id": job_.job_id, "kind": "compare",
                                                           "pid": os.getpid(), "started": time.time()}))
        return job_

    monkeypatch.setattr(jobs, "_spawn", spawn)
    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    at.switch_page("screens/6_compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("stopped without a word" in e.value for e in at.error)
    at.button(key="resume_compare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s[:2] for s in spawned] == [(job.job_id, "compare")] and spawned[0][2]   # with this session's id
    assert jobs.job_status(job).state == "starting"
    assert not any(b.key == "resume_compare" for b in at.button)                      # not lost any more
