"""Training callbacks: how a training loop talks to the outside world.

A training loop knows nothing of memorization tracking, files or the UI. It calls
the hooks of each callback it was given; the warm-up's tracker, cancel and progress events
(:mod:`memviz.warmup.tracking`) are callbacks. A hook may return :data:`STOP` to end training early
(the dashboard's cancel button does that).
"""
from __future__ import annotations

import numpy as np

from memviz.errors import BadOption

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

    # A callback may also define ``rows_left_out(model, epoch)``: the positions of the training
    # rows to leave out of epoch ``epoch``'s batches (None: none); TabDDPM asks before each epoch
    # (:mod:`memviz.mitigate.dynamic`).


def rows_left_out(hooks, model, epoch: int, n: int) -> np.ndarray | None:
    """The positions the ``rows_left_out`` hooks leave out of ``epoch`` (sorted, unique), or None."""
    parts = [np.asarray(r, dtype=np.int64).ravel() for f in hooks if (r := f(model, epoch)) is not None]
    out = np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
    if out.size and (out[0] < 0 or out[-1] >= n):
        raise BadOption(f"rows_left_out gave positions outside 0..{n - 1}")
    if out.size >= n:
        raise BadOption(f"rows_left_out left out every row of epoch {epoch}")
    return out if out.size else None

