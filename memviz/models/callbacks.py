"""Training callbacks: how a training loop talks to the outside world.

A training loop knows nothing of memorization tracking, files or the UI. It calls
the hooks of each callback it was given; the warm-up's tracker, cancel and progress events
(:mod:`memviz.warmup.tracking`) are callbacks. A hook may return :data:`STOP` to end training early
(the dashboard's cancel button does that).
"""
from __future__ import annotations

STOP = "stop"


class Callback:
    """Base class: every hook is optional.

    ``model`` is the estimator being fitted (with ``model.epoch_`` set to the number
    of finished epochs when ``on_epoch_end`` is called).
    """

    def on_fit_start(self, model) -> None:
        pass

    def on_epoch_end(self, model, epoch: int, logs: dict) -> str | None:
        """``epoch`` counts finished epochs from 1; ``logs`` holds e.g. ``{"loss": float}``."""
        return None

    def on_fit_end(self, model) -> None:
        pass

