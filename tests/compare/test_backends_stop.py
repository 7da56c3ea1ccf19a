"""A stop (Ctrl-C, SIGTERM) that reaches joblib while it starts its workers stays a stop: loky's clean-up then
raises "cannot join thread before it is started", which replaced the stop and printed a traceback (seen stopping
`memviz compare` with two workers under load)."""
import pytest

import memviz.compare.backends as backends
from memviz.errors import stop_behind


class _Stop(KeyboardInterrupt):
    pass


def test_the_stop_behind_a_failed_clean_up_is_found():
    try:
        try:
            raise _Stop()
        except KeyboardInterrupt:
            raise RuntimeError("cannot join thread before it is started")
    except RuntimeError as exc:
        assert isinstance(stop_behind(exc), _Stop)
    assert stop_behind(RuntimeError("a bug")) is None


def test_run_cells_reraises_the_stop_not_the_clean_up(monkeypatch):
    import joblib  # lazy: joblib is optional (memviz[train])

    class Parallel:
        def __init__(self, **kw):
            pass

        def __call__(self, tasks):
            try:
                raise _Stop()                           # SIGTERM while the executor starts
            except KeyboardInterrupt:
                raise RuntimeError("cannot join thread before it is started")

    monkeypatch.setattr(joblib, "Parallel", Parallel)
    with pytest.raises(_Stop):
        backends.run_cells([object(), object()], None, 2, "local", None, lambda r: None)
