"""Small shared settings for the tests (import as ``from helpers import ...``)."""

#: a TabDDPM that trains in well under a second per epoch on a few hundred rows
TINY_MODEL = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}


def live_job(root, kind: str):
    """A job record whose process is this test process (alive for as long as the test runs)."""
    import json
    import os

    from memviz.app import jobs

    job = jobs.Job(jobs.new_job_id(kind), kind, root)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({
        "job_id": job.job_id, "kind": kind, "pid": os.getpid(), "start_ticks": jobs._proc_start_ticks(os.getpid()),
        "started": 0, "out": str(job.out)}))
    return job
