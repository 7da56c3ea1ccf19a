"""CPU threads from the jobs actually running: one job alone takes every core, two share."""
import fcntl

import torch

from memviz import device
from memviz.jobs.queue import JOBS, running_jobs
from memviz.models.tabddpm import TabDDPM


def test_running_jobs_counts_the_held_slots(tmp_path):
    slots = tmp_path / JOBS / "slots"
    slots.mkdir(parents=True)
    held = []
    assert running_jobs(tmp_path) == 0
    for i in range(3):
        f = open(slots / f"{i}.lock", "a")
        if i < 2:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)             # a running job's slot
        held.append(f)
    assert running_jobs(tmp_path) == 2
    held[0].close()                                                    # that job ended
    assert running_jobs(tmp_path) == 1
    for f in held:
        f.close()
    assert running_jobs(tmp_path) == 0
    assert running_jobs(tmp_path / "none") == 0


def test_cores_are_divided_among_the_running_jobs(monkeypatch):
    monkeypatch.setattr(device.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(device, "_JOBS_SHARING", None)
    assert device.shared_cpu_threads() is None                         # nobody said: unknown
    for jobs, want in ((0, 4), (1, 4), (2, 2), (3, 1), (8, 1)):
        device.set_cpu_sharing(lambda jobs=jobs: jobs)
        assert device.shared_cpu_threads() == want

    def broken():
        raise OSError("queue unreadable")
    device.set_cpu_sharing(broken)
    assert device.shared_cpu_threads() is None


def test_the_default_network_takes_the_shared_threads_and_keeps_its_results(sample, monkeypatch):
    train, _ = sample
    rows = train.subset(train.row_ids[:400])
    monkeypatch.setattr(device.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(device, "_JOBS_SHARING", None)
    before = torch.get_num_threads()
    runs = {}
    for jobs, want in ((None, 1), (1, 2), (2, 1)):
        device.set_cpu_sharing(None if jobs is None else (lambda jobs=jobs: jobs))
        m = TabDDPM(preset="cpu-quick", epochs=2, seed=0, device="cpu").fit(rows)
        with m._cpu_threads():
            assert torch.get_num_threads() == want
        runs[jobs] = (m.loss_history_, m.sample(300, seed=1))
    assert torch.get_num_threads() == before
    # a fixed seed gives the same training and the same rows on 1 and on 2 threads
    assert runs[None][0] == runs[1][0] == runs[2][0]
    assert runs[None][1].equals(runs[1][1]) and runs[1][1].equals(runs[2][1])
