"""The one writer's lock (memviz.folders.WriterLock) that a run folder and an attack folder both hold: taken once,
probed by another holder, named in a refusal, let go."""
from __future__ import annotations

import os

from memviz.folders import WriterLock


def test_a_writers_lock_is_held_by_one_object_and_seen_by_another(tmp_path):
    path = tmp_path / "writer.lock"
    mine, other = WriterLock(path), WriterLock(path)
    assert not other.alive()                                   # no lock file yet: nobody holds it
    assert mine.take() and mine.mine and mine.take()           # taking it again is a no-op
    assert not other.take() and not other.mine
    assert other.alive() and mine.alive()
    assert other.holder() == f" (pid {os.getpid()})"
    mine.release()
    assert not mine.mine and not other.alive()
    assert other.take()
    other.release()
