"""One cell of a comparison: (method, model, seed) → mitigate, fit, sample, evaluate.

1. build the method's training table from the ORIGINAL training table
   (:func:`memviz.compare.methods.apply_method`, seeded with the cell's seed);
2. fit the model (``make_model(model, epochs=..., device=..., seed=seed)``; epochs:
   each model's CPU preset unless ``epochs`` overrides them all);
3. sample as many rows as the ORIGINAL training table (``sample(N, seed=seed)``);
4. evaluate (:func:`evaluate_cell`):

   * ``mem_ratio``, ``mem_auc``: memorization against the ORIGINAL training table
     (the removed rows are still private), with one fitted
     :class:`~memviz.engine.neighbors.NeighborEngine` per process, reused by every cell;
   * ``mem_ratio_pruned``, ``mem_auc_pruned``: against the table the model saw
     (``pruned_reference``): ``"kept"`` = the ORIGINAL rows that were kept (augmented
     rows left out: they are no private data, and a copy of a mixed row is not a copy of
     a person); ``"trained"`` = the method's whole training table. With ``"kept"`` the two
     figures are equal for the methods that remove no row;
   * for a pruning method (:data:`memviz.compare.methods.PRUNES`), ``mem_ratio_kept`` and
     ``n_flagged_removed`` (:func:`memviz.compare.protocol.pruning_figures`); the floors and
     the control are added by the grid (:mod:`memviz.compare.protocol`);
   * ``shape``, ``trend``, ``mle`` (with ``mle_real``, its reference line computed once per
     seed), ``dcr_share``: :func:`memviz.evaluate.synthetic.evaluate_synthetic` against the
     ORIGINAL training table and the real test split;
   * ``trend_report`` (Trend as SDMetrics' QualityReport ships it), the per-column fidelity's
     ``wasserstein_mean/max`` and ``jsd_mean/max`` (every column's in the record's
     ``column_fidelity``: :mod:`memviz.evaluate.fidelity`), ``dcr_median_train/test``;
   * wall-clock seconds per phase, ``total_seconds``, and ``cpu_seconds`` (the CPU time of
     the worker process during the cell: on a shared machine it tells work from waiting);
   * the method's cost besides time: a ``dp@ε`` arm's ``epsilon`` (the target), ``epsilon_spent`` and
     ``delta_spent`` (the whole pipeline's: ``epsilon_preprocessing + epsilon_sgd`` by basic sequential
     composition), ``delta`` (the target) and ``noise_multiplier`` (:mod:`memviz.models.privacy`); ``row_epochs_left_out`` and
     ``rows_left_out`` (a pruning method: its removed rows × the epochs trained; the dynamic
     threshold: its schedule's, :mod:`memviz.mitigate.dynamic`; 0 for the others).

A failure is recorded in the cell (status ``failed``, the error line), never raised:
the grid goes on.

In-cell progress: with ``ctx.progress`` (a picklable callable, e.g. the job's
:class:`memviz.jobs.spec.EventLog`), the cell reports from whichever process runs it
``{"event": "cell_phase", "method", "model", "seed", "phase", "epochs"}`` as it enters
``mitigate``, ``fit``, ``sample`` and ``evaluate``, and ``{"event": "cell_epoch", ...,
"epoch", "epochs"}`` during the fit (epoch 0 when it starts, then at most one a second,
and the last epoch always).
"""
from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from memviz.compare.methods import (
    PRUNES,
    SELECTION_SCORE,
    SHORTENS,
    DPArm,
    EarlyStop,
    apply_method,
    base_method,
)
from memviz.compare.protocol import pruning_figures
from memviz.device import torch_threads
from memviz.dynamics.dynamiccut import DynamicCutParams
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption
from memviz.evaluate.fidelity import column_fidelity, fidelity_figures, report_trend
from memviz.evaluate.synthetic import evaluate_synthetic
from memviz.measure.memorization import memorization
from memviz.mitigate.dynamic import DynamicThreshold, DynamicThresholdCallback
from memviz.models import make_model
from memviz.models.callbacks import Callback
from memviz.models.privacy import PrivacyConfig
from memviz.models.sdv_models import DEFAULT_EPOCHS
from memviz.tables.data import Table


@dataclass(frozen=True)
class CellSpec:
    """One cell of the grid; ``key`` hashes the settings that change its result."""

    method: str
    model: str
    seed: int
    key: str

    @property
    def name(self) -> str:
        return f"{self.method}_{self.model}_{self.seed}"


@dataclass(frozen=True)
class GridContext:
    """What every cell needs (shipped once to each worker: it pickles).

    ``dynamiccut``, ``privacy``, ``dynamic`` and ``stop`` are typed and checked before any cell
    starts (:meth:`memviz.compare.config.CompareConfig.checked`, :func:`memviz.compare.grid.run_grid`):
    a cell checks none of them again.
    """

    train: Table
    test: Table | None
    train_key: str
    selections: dict                                # DynamicCut score ("raw", "excess") -> removed row_ids
    dynamiccut: DynamicCutParams | None             # CompareConfig.dynamiccut (None: no method reads p)
    ratio: float
    epochs: int | None
    model_params: dict
    device: str
    distance: str
    pruned_reference: str
    mle_real: dict = field(default_factory=dict)   # seed -> reference MLE
    threads: int | None = None                      # torch threads per cell (None: leave as is)
    stop: EarlyStop | None = None                   # early stop's epoch (None: no early_stop cell)
    progress: Callable[[dict], None] | None = None  # in-cell events (see the module docstring); picklable
    privacy: tuple[PrivacyConfig, ...] = ()         # one per DP arm (CheckedCompare.arms)
    dynamic: DynamicThreshold | None = None         # the dynamic threshold's (None: its defaults)

    def arm_privacy(self, method: str) -> PrivacyConfig:
        """The DP-SGD settings of the arm named ``method``: the one whose ε's exact name it is
        (:attr:`memviz.compare.methods.DPArm.name`; the name is not parsed back into a number)."""
        for cfg in self.privacy:
            if DPArm(cfg.epsilon).name == method:
                return cfg
        raise BadOption(f"{method}: no privacy settings for this arm")


@dataclass(frozen=True)
class CellOutput:
    record: dict
    synthetic: pd.DataFrame | None
    traceback: str = ""


_ENGINES: dict = {}
_ENGINES_LOCK = threading.Lock()


def original_engine(ctx: GridContext) -> NeighborEngine:
    """The NeighborEngine fitted on the original training table, one per process (cached)."""
    key = (ctx.train_key, ctx.distance, ctx.device)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            if len(_ENGINES) >= 4:
                _ENGINES.clear()
            _ENGINES[key] = NeighborEngine(distance=ctx.distance, device=ctx.device).fit(ctx.train)
        return _ENGINES[key]


def pruned_reference(ctx: GridContext, mitigated) -> Table | None:
    """The reference of ``mem_ratio_pruned``; None when it is the original table itself."""
    if ctx.pruned_reference == "trained":
        return mitigated.table if (mitigated.added or len(mitigated.removed)) else None
    return ctx.train.drop(mitigated.removed) if len(mitigated.removed) else None


def cell_selection(ctx: GridContext, method: str) -> np.ndarray | None:
    """The removed row_ids of the ranking ``method`` prunes with (``random``: the raw one, for its count)."""
    return ctx.selections.get(SELECTION_SCORE.get(method, "raw"))


def full_epochs(model: str, params: dict) -> int:
    """The epochs a cell of ``model`` trains with ``params`` (the preset's when not set)."""
    m = make_model(model, device="cpu", **params)
    if hasattr(m, "config"):
        return int(m.config.epochs)
    if getattr(m, "epochs", None) is not None:
        return int(m.epochs)
    return int(DEFAULT_EPOCHS[model])


class CellReporter(Callback):
    """The in-cell events of one cell (see the module docstring); silent without ``ctx.progress``.
    A failing reporter never fails the cell: progress is a courtesy."""

    def __init__(self, ctx: GridContext, spec: CellSpec, min_interval: float = 1.0):
        self.emit, self.min_interval = ctx.progress, min_interval
        self.who = {"method": spec.method, "model": spec.model, "seed": spec.seed}
        self.epochs: int | None = None
        self._last = 0.0

    def _send(self, event: dict) -> None:
        if self.emit is None:
            return
        try:
            self.emit({**event, **self.who})
        except Exception:  # noqa: BLE001 (a full disk or a closed log must not fail the cell)
            self.emit = None

    def phase(self, name: str) -> None:
        self._send({"event": "cell_phase", "phase": name, "epochs": self.epochs})

    def on_fit_start(self, model) -> None:
        cfg = getattr(model, "config_", None)
        total = getattr(cfg, "epochs", None) or getattr(model, "planned_epochs_", None) or getattr(model, "epochs", None)
        self.epochs = int(total) if total else None
        self._send({"event": "cell_epoch", "epoch": 0, "epochs": self.epochs})

    def on_epoch_end(self, model, epoch, logs):
        now = time.monotonic()
        last = self.epochs is not None and epoch >= self.epochs
        if last or now - self._last >= self.min_interval:
            self._last = now
            self._send({"event": "cell_epoch", "epoch": int(epoch), "epochs": self.epochs})
        return None


def run_cell(spec: CellSpec, ctx: GridContext) -> CellOutput:
    """Mitigate, fit, sample and evaluate one cell; a failure is recorded, not raised."""
    rec = {"method": spec.method, "model": spec.model, "seed": spec.seed, "key": spec.key,
           "status": "ok", "error": "", "notes": ""}
    t_start, cpu_start = time.perf_counter(), time.process_time()
    say = CellReporter(ctx, spec)
    try:
        with torch_threads(int(ctx.threads) if ctx.threads else None):
            t0 = time.perf_counter()
            say.phase("mitigate")
            mit = apply_method(spec.method, ctx.train, selection=cell_selection(ctx, spec.method), seed=spec.seed,
                               p=ctx.dynamiccut, ratio=ctx.ratio)
            t1 = time.perf_counter()
            say.phase("fit")
            params = dict(ctx.model_params.get(spec.model, {}))
            if ctx.epochs is not None:
                params["epochs"] = int(ctx.epochs)
            if spec.method in SHORTENS:  # the same share of the budget: of the steps when steps set it
                budget = "steps" if params.get("steps") is not None else "epochs"
                full = int(params["steps"]) if budget == "steps" else full_epochs(spec.model, params)
                params[budget] = ctx.stop.epochs(full)
            callbacks, dyn = [say], None
            if base_method(spec.method) == "dp":
                params["privacy"] = ctx.arm_privacy(spec.method)
            if spec.method == "dynamic_threshold":
                dyn = DynamicThresholdCallback(mit.table, ctx.dynamic, seed=spec.seed, engine=original_engine(ctx))
                callbacks.append(dyn)
            model = make_model(spec.model, device=ctx.device, seed=spec.seed, **params).fit(mit.table,
                                                                                           callbacks=callbacks)
            t2 = time.perf_counter()
            say.phase("sample")
            syn = model.sample(len(ctx.train), seed=spec.seed)
            t3 = time.perf_counter()
            say.phase("evaluate")
            rec.update(mitigate_seconds=t1 - t0, fit_seconds=t2 - t1, sample_seconds=t3 - t2,
                       n_train_used=len(mit.table), n_removed=int(len(mit.removed)), n_added=int(mit.added),
                       n_synthetic=len(syn), epochs=getattr(model, "epoch_", None), steps=getattr(model, "step_", None),
                       device=str(getattr(model, "device_", ctx.device)))
            rec.update(cost_figures(model, mit, dyn))
            rec.update(evaluate_cell(ctx, mit, syn, spec.seed))
    except Exception as exc:  # recorded in the cell; the grid goes on
        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        rec.update(status="failed", error=msg, total_seconds=time.perf_counter() - t_start,
                   cpu_seconds=time.process_time() - cpu_start)
        return CellOutput(rec, None, traceback.format_exc())
    rec.update(total_seconds=time.perf_counter() - t_start, cpu_seconds=time.process_time() - cpu_start)
    return CellOutput(rec, syn)


def cost_figures(model, mitigated, dynamic=None) -> dict:
    """A cell's privacy budget and rows left out (module docstring); NaN where a figure does not apply."""
    out = {"epsilon": np.nan, "epsilon_spent": np.nan, "delta": np.nan, "delta_spent": np.nan,
           "epsilon_preprocessing": np.nan, "epsilon_sgd": np.nan, "noise_multiplier": np.nan,
           "row_epochs_left_out": 0, "rows_left_out": 0}
    priv = getattr(model, "privacy_", None)
    if priv:   # the whole pipeline's (ε, δ) and its two parts (memviz.models.privacy.guarantee)
        out.update(epsilon=priv["epsilon"], epsilon_spent=priv["epsilon_spent"], delta=priv["delta"],
                   delta_spent=priv.get("delta_spent", np.nan),
                   epsilon_preprocessing=priv.get("epsilon_preprocessing", np.nan),
                   epsilon_sgd=priv.get("epsilon_sgd", np.nan), noise_multiplier=priv["noise_multiplier"])
    if dynamic is not None:
        b = dynamic.budget()
        out.update(row_epochs_left_out=b["row_epochs_left_out"], rows_left_out=b["rows_left_out"])
    elif mitigated.method in PRUNES:
        n = int(len(mitigated.removed))
        out.update(row_epochs_left_out=n * int(getattr(model, "epoch_", 0) or 0), rows_left_out=n)
    return out


def evaluate_cell(ctx: GridContext, mitigated, syn: pd.DataFrame, seed: int) -> dict:
    """The figures of one synthetic table (see the module docstring), with their timings."""
    t0 = time.perf_counter()
    mem = memorization(ctx.train, syn, engine=original_engine(ctx))
    pruned = mitigated.method in PRUNES and len(mitigated.removed)
    mem_kept = memorization(ctx.train.drop(mitigated.removed), syn, distance=ctx.distance,
                            device=ctx.device) if pruned else None
    ref = pruned_reference(ctx, mitigated)
    if ref is None:
        mem_p = mem
    elif ctx.pruned_reference == "kept" and mem_kept is not None:
        mem_p = mem_kept
    else:
        mem_p = memorization(ref, syn, distance=ctx.distance, device=ctx.device)
    t1 = time.perf_counter()
    out = {"mem_ratio": mem.mem_ratio, "mem_auc": mem.mem_auc, "mem_ratio_pruned": mem_p.mem_ratio,
           "mem_auc_pruned": mem_p.mem_auc}
    if mem_kept is not None:
        out.update(pruning_figures(mem, mitigated.removed, mem_kept))
    out.update(evaluate_synthetic(ctx.train, ctx.test, syn, seed=seed, device=ctx.device,
                                  real_mle=ctx.mle_real.get(seed)))
    t2 = time.perf_counter()
    per_column = column_fidelity(ctx.train, syn)
    out.update(fidelity_figures(per_column), trend_report=report_trend(ctx.train, syn),
               column_fidelity=per_column.to_dict("records"), fidelity_seconds=time.perf_counter() - t2)
    out.update(memorize_seconds=t1 - t0, evaluate_seconds=time.perf_counter() - t0)
    return out
