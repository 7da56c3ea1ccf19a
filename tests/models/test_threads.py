"""CPU threads: the default (small) network on one thread; a large one takes the cores divided among the jobs running."""
import fcntl

import torch

from memviz import device
from memviz.jobs.queue import JOBS, running_jobs
from memviz.models import tabddpm
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


def test_the_default_network_runs_on_one_thread_whatever_the_sharing_and_keeps_its_results(sample, monkeypatch):
    """A small network's ops are tiny (256-row batches): two spinning threads beside one busy core
    ran a 250-row sample 46x slower and the walk's dashboard warm-up 362 s instead of 9 s (CI's
    timeout). A job alone in the queue is not alone on the machine (the dashboard, a browser, other
    work), so the default network takes one thread even when the queue says one job runs."""
    train, _ = sample
    rows = train.subset(train.row_ids[:400])
    monkeypatch.setattr(device.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(device, "_JOBS_SHARING", None)
    before = torch.get_num_threads()
    runs = {}
    for jobs in (None, 1, 2):
        device.set_cpu_sharing(None if jobs is None else (lambda jobs=jobs: jobs))
        m = TabDDPM(preset="cpu-quick", epochs=2, seed=0, device="cpu").fit(rows)
        with m._cpu_threads():
            assert torch.get_num_threads() == 1
        runs[jobs] = (m.loss_history_, m.sample(300, seed=1))
    assert torch.get_num_threads() == before
    two = TabDDPM(preset="cpu-quick", epochs=2, seed=0, device="cpu", n_threads=2).fit(rows)
    with two._cpu_threads():
        assert torch.get_num_threads() == 2                            # asked for: given
    # a fixed seed gives the same training and the same rows on 1 and on 2 threads
    assert runs[None][0] == runs[1][0] == runs[2][0] == two.loss_history_
    assert runs[None][1].equals(runs[1][1]) and runs[1][1].equals(two.sample(300, seed=1))


def test_a_large_network_takes_its_share_of_the_cores(sample, monkeypatch):
    """Above the small-network size the ops are large enough for threads: the cores divided
    among the jobs running (two jobs no longer both take every core), torch's setting when unknown."""
    train, _ = sample
    rows = train.subset(train.row_ids[:200])
    monkeypatch.setattr(tabddpm, "SMALL_NETWORK", 0)
    monkeypatch.setattr(device.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(device, "_JOBS_SHARING", None)
    before = torch.get_num_threads()
    m = TabDDPM(preset="cpu-quick", epochs=1, seed=0, device="cpu").fit(rows)
    for jobs, want in ((None, before), (1, 4), (2, 2), (3, 1)):
        device.set_cpu_sharing(None if jobs is None else (lambda jobs=jobs: jobs))
        with m._cpu_threads():
            assert torch.get_num_threads() == want
    assert torch.get_num_threads() == before
