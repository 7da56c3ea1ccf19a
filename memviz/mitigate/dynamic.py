"""The dynamic threshold: DynamicCut's pruning share decaying over one training run.

DynamicCut scores rows in a warm-up, removes the top p and retrains. The dynamic threshold
(the DynamicCut write-up's variant) prunes inside one run instead: at each check the rows
whose early Mem-AUC ranks highest so far are left out of the next epochs' batches, and the
share left out decays with the epochs::

    p(e) = p0 · ½ (1 + cos(π · min(e, E) / E)),      p0 = 0.1 (``p0``), E = ``end``

e the epochs finished before an epoch starts, E the schedule's end (default: the training's
epochs; with a steps budget, the epochs that budget takes with every row in). p(0) = p0 and
p(E) = 0, so the model sees every row again by the end.

Every ``check_every`` epochs (m; default ⌈E / 25⌉, a warm-up's spacing) the model generates
``n_samples`` rows (default N; seeded by the check, as a warm-up's checks, so training's own
draws are untouched), each matched to its nearest training row with the memorization metric
(:func:`memviz.measure.memorization.memorization`, against the training table). A row's Mem-AUC
at check c is ``A_i(c) = Σ_{g : NN1(g) = i} (1 − r(g))`` (:func:`memviz.measure.memorization.auc_terms`), and
its score after checks 1..c is DynamicCut's: the mean of its k largest A_i over those checks
(:func:`memviz.dynamics.dynamiccut.score_rows`, k = 3). Epoch e + 1 then leaves out the
``n(e) = ⌈p(e) · N⌉`` rows of highest score (ties: lowest row_id), the latest check's ranking.
Before the first check no row has a score, and no row is left out (the first m epochs of the
schedule are spent with every row in).

Budget (stated per run, :attr:`DynamicThresholdCallback.schedule`): ``row_epochs_left_out`` =
Σ_e n(e), and ``rows_left_out`` = the rows left out at least once. Random pruning of
⌈p0 · N⌉ rows over E epochs leaves out p0 · N · E row-epochs, about twice what this schedule
leaves out (the cosine's mean over [0, E] is ½), less the epochs before the first check.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from memviz.dynamics.dynamiccut import DEFAULT_K, DEFAULT_P, rank_by_score
from memviz.dynamics.rows import ceil_share
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption
from memviz.measure import memorization as ratio_test
from memviz.measure.memorization import auc_terms
from memviz.models.callbacks import Callback
from memviz.tables.data import Table
from memviz.warmup.tracking import check_seed

#: checks over the schedule when ``check_every`` is not set (a warm-up's default)
DEFAULT_CHECKS = 25


@dataclass(frozen=True)
class DynamicThreshold:
    """The dynamic threshold's settings (module docstring); every field has its default here."""

    p0: float = DEFAULT_P
    end: int | None = None
    check_every: int | None = None
    n_samples: int | None = None
    k: int = DEFAULT_K

    @classmethod
    def parse(cls, d) -> "DynamicThreshold":
        """From a dict of the fields (None or {}: the defaults); one-line MemvizError otherwise."""
        if isinstance(d, DynamicThreshold):
            return d.validated()
        if d is None:
            d = {}
        if not isinstance(d, dict):
            raise BadOption(f"dynamic threshold: expected {{{', '.join(f.name for f in fields(cls))}}}")
        bad = [k for k in d if k not in {f.name for f in fields(cls)}]
        if bad:
            raise BadOption(f"dynamic threshold: unknown setting {bad[0]!r} "
                            f"(use {', '.join(f.name for f in fields(cls))})")
        return cls(**d).validated()

    def validated(self) -> "DynamicThreshold":
        if isinstance(self.p0, bool) or not isinstance(self.p0, (int, float)) or not 0 < self.p0 < 1:
            raise BadOption(f"dynamic threshold: p0 must be strictly between 0 and 1, got {self.p0!r}")
        for name in ("end", "check_every", "n_samples"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise BadOption(f"dynamic threshold: {name} must be a whole number >= 1 (or None), got {v!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise BadOption(f"dynamic threshold: k must be a whole number >= 1, got {self.k!r}")
        return DynamicThreshold(float(self.p0), self.end, self.check_every, self.n_samples, int(self.k))

    def to_dict(self) -> dict:
        return asdict(self)


def share(e: float, p0: float, end: int) -> float:
    """p(e) = p0 · ½ (1 + cos(π · min(e, E) / E)): the share left out after ``e`` finished epochs."""
    return float(p0) * 0.5 * (1.0 + math.cos(math.pi * min(max(float(e), 0.0), end) / end))


def left_out_count(e: float, p0: float, end: int, n_rows: int) -> int:
    """n(e) = ⌈p(e) · N⌉ (0 once p(e) is 0)."""
    return ceil_share(share(e, p0, end), n_rows)


class DynamicThresholdCallback(Callback):
    """Scores rows at each check and leaves the top ⌈p(e) · N⌉ out of each epoch (module docstring).

    Parameters
    ----------
    train : the table the model trains on (positions are its rows' order).
    config : :class:`DynamicThreshold`.
    seed : seeds each check's sampling (``check_seed(seed, c)``, as a warm-up).
    engine : a :class:`memviz.engine.neighbors.NeighborEngine` fitted on ``train`` (None: fitted
        here with ``distance`` and ``device``).

    Attributes
    ----------
    schedule : list of dicts, one per epoch started: ``epoch`` (1-based), ``finished`` (e),
        ``share`` (p(e)), ``n_left_out`` (rows left out of it), ``check`` (the checks scored before it).
    left_out : dict epoch -> the positions left out of that epoch (sorted).
    """

    def __init__(self, train: Table, config: DynamicThreshold | dict | None = None, seed: int = 0, engine=None,
                 distance: str = "paper", device: str = "cpu"):
        self.train, self.config, self.seed = train, DynamicThreshold.parse(config), int(seed)
        self.engine, self.distance, self.device = engine, distance, device
        self.n = len(train)
        self.row_ids = np.asarray(train.row_ids, dtype=np.int64)
        self.auc: list[np.ndarray] = []                    # per check: (N,) Mem-AUC
        self.scores: np.ndarray | None = None
        self.schedule: list[dict] = []
        self.left_out: dict[int, np.ndarray] = {}
        self.end = self.every = self.n_samples = None

    # ------------------------------------------------------------ training hooks
    def on_fit_start(self, model) -> None:
        cfg = self.config
        self.end = cfg.end or planned_epochs(model, self.n)
        self.every = cfg.check_every or max(1, math.ceil(self.end / DEFAULT_CHECKS))
        self.n_samples = cfg.n_samples or self.n
        if self.engine is None:
            self.engine = NeighborEngine(distance=self.distance, device=self.device).fit(self.train)

    def rows_left_out(self, model, epoch: int) -> np.ndarray | None:
        e = epoch - 1
        n_out = left_out_count(e, self.config.p0, self.end, self.n) if self.scores is not None else 0
        out = np.sort(rank_by_score(self.scores, self.row_ids)[:n_out]) if n_out else np.empty(0, dtype=np.int64)
        self.schedule.append({"epoch": int(epoch), "finished": int(e), "share": share(e, self.config.p0, self.end),
                              "n_left_out": int(out.size), "check": len(self.auc)})
        if out.size:
            self.left_out[int(epoch)] = out
        return out if out.size else None

    def on_epoch_end(self, model, epoch, logs):
        if epoch % self.every == 0 and epoch < self.end:            # at E the share is 0: no need to score
            self._check(model, len(self.auc), epoch)
        return None

    def _check(self, model, c: int, epoch: int) -> None:
        samples = model.sample(self.n_samples, seed=check_seed(self.seed, c))
        res = ratio_test.memorization(self.train, samples, engine=self.engine)  # read from its module at each call
        a = np.bincount(np.asarray(res.nn1_pos, dtype=np.int64), weights=auc_terms(res.ratio), minlength=self.n)
        self.auc.append(a)                                              # (N,) A_i(c)
        m = np.stack(self.auc, axis=1)                                  # (N, C)
        kk = min(self.config.k, m.shape[1])
        self.scores = np.sort(m, axis=1)[:, m.shape[1] - kk:].mean(axis=1)   # mean of the k largest

    # ------------------------------------------------------------ the budget
    def budget(self) -> dict:
        """``row_epochs_left_out``, ``rows_left_out`` (distinct), ``p0``, ``end``, ``check_every``,
        ``checks`` of the run so far."""
        ever = np.unique(np.concatenate(list(self.left_out.values()))) if self.left_out else np.empty(0)
        return {"row_epochs_left_out": int(sum(s["n_left_out"] for s in self.schedule)),
                "rows_left_out": int(ever.size), "p0": self.config.p0, "end": self.end,
                "check_every": self.every, "checks": len(self.auc)}


def planned_epochs(model, n_rows: int) -> int:
    """The epochs ``model`` plans on ``n_rows`` rows with every row in (its steps budget's, or its epochs)."""
    cfg = model.config
    steps = getattr(model, "steps", None)
    if steps is None:
        return int(cfg.epochs)
    return int(math.ceil(int(steps) / math.ceil(n_rows / min(cfg.batch_size, n_rows))))
