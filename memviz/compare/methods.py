"""The mitigation methods of a comparison, by name.

:func:`apply_method` turns the ORIGINAL training table into the table a generator is
trained on, for one of :data:`METHODS`:

===================  =====================================================================
baseline             the table unchanged (a copy)
dynamiccut           drop the DynamicCut selection (top-p rows of a warm-up's ranking,
                     the paper's raw score)
dynamiccut_excess    drop the DynamicCut selection scored by the excess over the null
                     (``score="excess"``: needs the warm-up's floor)
dynamiccutmix        drop the (raw) selection, then TabCutMix on the kept rows
                     (``round(ratio · N_kept)`` new rows, mixed from kept rows only)
tabcutmix            TabCutMix, ``round(ratio · N)`` new rows
tabcutmixplus        TabCutMixPlus (clusters of correlated columns, schema rule)
tabcutmixplus_dtype  TabCutMixPlus with the reference's association rule (by pandas
                     dtype; a target-only cluster counts)
smote                SMOTE as the TabCutMix reference runs it: minority class only,
                     ``round(ratio · N)`` new rows (:func:`memviz.mitigate.augment.smote_reference`)
smote_nc             imbalanced-learn's SMOTE-NC over all classes (SMOTE / SMOTEN for
                     all-numerical / all-categorical tables), a different baseline
random               drop as many uniformly drawn rows as DynamicCut drops: ``len(selection)``,
                     or ``n = ceil(p · N)`` (DynamicCut's own budget) without a selection
isolation            the isolation cut: drop the ``ceil(p · N)`` most isolated rows (DynamicCut's
                     budget at the same p), ranked before any training from the table alone by
                     the distance to each row's k-th nearest other row (:mod:`memviz.risk.factors`,
                     k = 5, the audit's distance); no warm-up
early_stop           the table unchanged, the model trained for fewer epochs: the warm-up's
                     recommended epoch E* (:func:`memviz.warmup.frontier.recommend`) as a share
                     of the warm-up's E, times the model's own epochs (:func:`early_stop_epochs`)
dynamic_threshold    the table unchanged; during training the top p(e) of the rows by DynamicCut's
                     score so far are left out of each epoch's batches, p(e) decaying from p0 to 0
                     (:mod:`memviz.mitigate.dynamic`; TabDDPM only)
dp@ε                 the table unchanged, TabDDPM trained with DP-SGD to (ε, δ)
                     (:mod:`memviz.models.privacy`; ``dp`` alone: one arm per ε of the
                     comparison's ``epsilons``; shown as "DP-SGD ε = 3")
===================  =====================================================================

Early stop retrains rather than sampling from the warm-up's checkpoint: every cell then has
its own seed (the checkpoint has only the warm-up's), the same for CTGAN and TVAE, and the
figures are measured on what the method produces. With TabDDPM's linear learning-rate
schedule a model trained for E* epochs ends annealed, unlike the checkpoint at E* of a run
of E epochs, so its figures can differ from the check's: that difference is measured, not
assumed. A cell costs about E*/E of a baseline cell's fitting, plus the same evaluation.

The input table is never modified; kept rows keep their ``row_id``, new rows get fresh
ids (see :mod:`memviz.mitigate.augment`). :func:`removed_rows` gives a pruning method's removed
row_ids without building its table (the comparison stores and scores them).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from memviz.errors import BadOption
from memviz.mitigate.augment import (
    DEFAULT_RATIO,
    MitigationResult,
    prune,
    random_prune,
    random_removed,
    smote,
    smote_reference,
    tabcutmix,
    tabcutmixplus,
)
from memviz.dynamics.dynamiccut import DEFAULT_P, DynamicCutParams, prune_budget
from memviz.risk.factors import DEFAULT_DISTANCE, DEFAULT_K, isolation_order, isolation_scores
from memviz.tables.data import ROW_ID, Table
from memviz.warmup.frontier import Recommendation

#: method name -> display label: the one list of mitigation methods, in display order
METHOD_LABELS = {"baseline": "Baseline", "dynamiccut": "DynamicCut", "dynamiccut_excess": "DynamicCut (excess)",
                 "dynamiccutmix": "DynamicCutMix", "tabcutmix": "TabCutMix", "tabcutmixplus": "TabCutMixPlus",
                 "tabcutmixplus_dtype": "TabCutMixPlus (dtype rule)", "smote": "SMOTE", "smote_nc": "SMOTE-NC",
                 "random": "Random", "isolation": "Isolation cut", "early_stop": "Early stop", "dynamic_threshold": "Dynamic threshold",
                 "dp": "DP-SGD"}
METHODS = tuple(METHOD_LABELS)
#: the ε of ``dp`` when a comparison names none (one arm per ε: ``dp@3``)
DEFAULT_EPSILONS = (3.0,)
#: methods only TabDDPM's training loop runs (a grid leaves out their cells of other models)
TABDDPM_ONLY = frozenset({"dynamic_threshold", "dp"})
#: the methods a comparison runs when none are named: the papers' set
DEFAULT_METHODS = ("baseline", "dynamiccut", "dynamiccutmix", "tabcutmix", "tabcutmixplus", "smote", "random")
#: method -> the DynamicCut score of the ranking it prunes with (:func:`memviz.dynamics.dynamiccut.score_rows`)
SELECTION_SCORE = {"dynamiccut": "raw", "dynamiccut_excess": "excess", "dynamiccutmix": "raw"}
#: methods that need a DynamicCut selection (a warm-up's ranking)
NEEDS_SELECTION = frozenset(SELECTION_SCORE)
#: methods that need the warm-up's floor (its per-row null)
NEEDS_FLOOR = frozenset(m for m, score in SELECTION_SCORE.items() if score == "excess")
#: methods that need a warm-up run: the ranking's, and early stop's recommended epoch
NEEDS_WARMUP = NEEDS_SELECTION | {"early_stop"}
#: methods that train for fewer epochs than the others
SHORTENS = frozenset({"early_stop"})
#: methods that rank the rows before any training, from the table alone (no warm-up): name -> its score
PRETRAINING = {"isolation": "the distance to the k-th nearest other training row"}
#: methods that remove original rows (the pruning protocol's figures apply to them)
PRUNES = frozenset({"dynamiccut", "dynamiccut_excess", "dynamiccutmix", "random", *PRETRAINING})
#: methods whose removed count comes from the share p (DynamicCut's budget ceil(p · N)) when no selection sets it
USES_P = frozenset({"random", *PRETRAINING})
#: methods that append rows (their ``ratio`` matters)
AUGMENTS = frozenset({"dynamiccutmix", "tabcutmix", "tabcutmixplus", "tabcutmixplus_dtype", "smote", "smote_nc"})
#: methods whose implementation changed under the same name (part of a cell's key, so that a
#: rerun does not reuse a cell made by the old one)
IMPLEMENTATION = {"smote": "tabcutmix-reference",
                  # issue 50: a DP arm's (ε, δ) covers the column transforms too (memviz.models.dpstats)
                  "dp": "private-preprocessing"}


@dataclasses.dataclass(frozen=True)
class DPArm:
    """A DP-SGD arm of a comparison: the method and its ε, exactly as given (``dp@0.123456789`` trains at
    0.123456789). Its name (:attr:`name`) and label (:attr:`label`) are derived from it for display and file
    names; an old ``"dp@3"`` is read once, at the door (:meth:`parse`). δ and the other settings are the
    comparison's (``CompareConfig.privacy``), the same for every arm."""

    epsilon: float
    method: str = "dp"

    @property
    def name(self) -> str:
        """``dp@3``, ``dp@0.5``, ``dp@0.123456789``: the shortest text that reads back as exactly this ε."""
        short = f"{self.epsilon:g}"
        return f"dp@{short if float(short) == self.epsilon else repr(self.epsilon)}"

    @property
    def label(self) -> str:
        """``DP-SGD ε = 3`` (the name's digits: exact)."""
        return f"DP-SGD ε = {self.name[3:]}"

    @classmethod
    def parse(cls, name: str) -> "DPArm | None":
        """The arm a name like ``dp@3`` stands for (None for another method or a bare ``dp``)."""
        base, _, eps = str(name).strip().lower().partition("@")
        if base != "dp" or not eps:
            return None
        try:
            value = float(eps)
        except ValueError:
            value = float("nan")
        if not 0 < value < float("inf"):
            raise BadOption(f"method {name!r}: dp@ takes an epsilon > 0, e.g. dp@3")
        return cls(value)


def base_method(name: str) -> str:
    """The registry name of a method: ``dp@3`` -> ``dp`` (others unchanged)."""
    return str(name).split("@", 1)[0]


def dp_method(epsilon: float) -> str:
    """The name of the DP-SGD arm at ``epsilon``: ``dp@3``, ``dp@0.5`` (exact: :attr:`DPArm.name`)."""
    return DPArm(float(epsilon)).name


def method_label(name) -> str:
    """What a reader sees of a method, the one label of every table and figure: the registry's label
    (``dynamiccut`` -> ``DynamicCut``; a name written otherwise, ``DynamicCut`` or ``dynamic-cut``, read by its
    letters and digits), ``DP-SGD ε = 3`` for ``dp@3``; an unknown name as given."""
    name = str(name)
    if base_method(name) == "dp" and "@" in name:
        return DPArm.parse(name).label
    return METHOD_LABELS.get(name, METHOD_LABELS.get("".join(ch for ch in name.lower() if ch.isalnum()), name))


def check_methods(names) -> tuple[str, ...]:
    """Validate method names (case-insensitive, duplicates dropped, order kept); ``dp@ε`` takes an ε > 0."""
    out = []
    for raw in names:
        name = str(raw).strip().lower()
        if name.startswith("dp@"):
            name = DPArm.parse(name).name
        elif name not in METHODS:
            raise BadOption(f"unknown method {raw!r} (use {', '.join(METHODS)})")
        if name not in out:
            out.append(name)
    if not out:
        raise BadOption(f"no method given (use {', '.join(METHODS)})")
    return tuple(out)


def removed_ids(selection) -> np.ndarray | None:
    """The removed row_ids of a :class:`~memviz.dynamics.dynamiccut.Selection` or an id array (None stays None)."""
    if selection is None:
        return None
    ids = getattr(selection, "removed", selection)
    return np.asarray(ids, dtype=np.int64).ravel()


def random_count(train: Table, selection=None, p: float | DynamicCutParams = DEFAULT_P) -> int:
    """Rows dropped by ``random``: as many as the selection, else DynamicCut's budget ``ceil(p · N)``
    (``p``: a share, or a :class:`~memviz.dynamics.dynamiccut.DynamicCutParams`, not checked again)."""
    ids = removed_ids(selection)
    return int(len(ids)) if ids is not None else prune_budget(p, len(train))


def apply_method(name: str, train: Table, *, selection=None, seed=0, p: float | DynamicCutParams = DEFAULT_P,
                 ratio: float = DEFAULT_RATIO) -> MitigationResult:
    """The training table of method ``name`` built from ``train``.

    Parameters
    ----------
    name : one of :data:`METHODS`.
    train : the original training table (not modified).
    selection : DynamicCut's removed row_ids (an array or a
        :class:`~memviz.dynamics.dynamiccut.Selection`) of the ranking the method prunes with
        (:data:`SELECTION_SCORE`); required by :data:`NEEDS_SELECTION`; sets the count of
        ``random``.
    seed : int, seeds every random draw (TabCutMix, SMOTE, random pruning).
    p : float or DynamicCutParams, the pruning share used by ``random`` when no selection is given
        (a :class:`~memviz.dynamics.dynamiccut.DynamicCutParams` is not checked again).
    ratio : float, new rows as a share of the rows mixed from (augmentations).

    Returns
    -------
    MitigationResult
        ``method`` is ``name``; ``removed`` the dropped row_ids (sorted), ``added`` the
        number of appended rows.
    """
    (name,) = check_methods([name])
    ids = removed_ids(selection)
    if name in NEEDS_SELECTION and ids is None:
        raise BadOption(f"{name}: needs a DynamicCut ranking (give a warm-up run)")
    share = p.p if isinstance(p, DynamicCutParams) else p
    if name in ("baseline", "early_stop", "dynamic_threshold") or base_method(name) == "dp":
        # these change how the model trains, not the table
        table = Table(train.data.copy(), train.schema, train.source)
        return MitigationResult(table, np.empty(0, dtype=np.int64), 0, name, {})
    if name in ("dynamiccut", "dynamiccut_excess"):
        res = prune(train, ids)
        return dataclasses.replace(res, method=name, params={"n_remove": int(res.removed.size), "p": share,
                                                             "score": SELECTION_SCORE[name]})
    if name == "dynamiccutmix":
        cut = prune(train, ids)
        mix = tabcutmix(cut.table, ratio=ratio, seed=seed)
        table, sources = _renumber_new_rows(mix, int(train.row_ids.max()) + 1)
        return dataclasses.replace(mix, table=table, sources=sources, removed=cut.removed, method="dynamiccutmix",
                                   params={"n_remove": int(cut.removed.size), "p": share, **mix.params})
    if name == "random":
        res = random_prune(train, random_count(train, ids, p), seed=seed)
        return dataclasses.replace(res, method="random")
    if name in PRETRAINING:
        res = prune(train, isolation_removed(train, p))
        return dataclasses.replace(res, method=name, params={"n_remove": int(res.removed.size), "p": share,
                                                             **pretraining_key(name, len(train), p)})
    if name == "tabcutmixplus_dtype":
        res = tabcutmixplus(train, ratio=ratio, seed=seed, rule="dtype")
    else:
        fn = {"tabcutmix": tabcutmix, "tabcutmixplus": tabcutmixplus, "smote": smote_reference, "smote_nc": smote}[name]
        res = fn(train, ratio=ratio, seed=seed)
    return dataclasses.replace(res, method=name)


@dataclasses.dataclass(frozen=True)
class EarlyStop:
    """Early stop's epoch E*: the warm-up's recommended check (:func:`memviz.warmup.frontier.recommend`)
    and the warm-up's epochs E, found once by the grid (:func:`memviz.compare.grid.early_stop_point`)."""

    recommendation: Recommendation
    warmup_epochs: int

    @property
    def epoch(self) -> int:
        """E*, the recommended check's epoch."""
        return self.recommendation.epoch

    def epochs(self, full_epochs: int) -> int:
        """The epochs of an early-stop cell of a model whose other cells train ``full_epochs`` (:func:`early_stop_epochs`)."""
        return early_stop_epochs(full_epochs, int(self.epoch), int(self.warmup_epochs))

    def to_dict(self) -> dict:
        """As experiment.json writes it: epoch, check, warmup_epochs, reason and the rule's fields."""
        rec = self.recommendation
        return {"epoch": rec.epoch, "check": rec.check, "warmup_epochs": self.warmup_epochs,
                "reason": rec.reason, "rule": rec.rule.to_dict()}


def early_stop_epochs(full_epochs: int, stop_epoch: int, warmup_epochs: int) -> int:
    """Epochs of an early-stop cell: ``max(1, round(full_epochs · E* / E))`` for a model whose
    other cells train ``full_epochs`` epochs, E* the warm-up's recommended epoch of its E
    (so E* itself for TabDDPM trained as long as its warm-up)."""
    if warmup_epochs < 1 or not 1 <= stop_epoch <= warmup_epochs:
        raise BadOption(f"early_stop: recommended epoch {stop_epoch} is not within the warm-up's {warmup_epochs}")
    return max(1, int(round(int(full_epochs) * int(stop_epoch) / int(warmup_epochs))))


def removed_rows(name: str, train: Table, *, selection=None, seed=0,
                 p: float | DynamicCutParams = DEFAULT_P) -> np.ndarray:
    """The sorted row_ids :func:`apply_method` removes for ``name`` with these arguments
    (empty for a method that removes none), without building the table; ``p`` as :func:`random_count`."""
    (name,) = check_methods([name])
    ids = removed_ids(selection)
    if name == "random":
        return random_removed(train.row_ids, random_count(train, ids, p), seed=seed)
    if name in PRETRAINING:
        return np.sort(isolation_removed(train, p))
    if name in NEEDS_SELECTION:
        if ids is None:
            raise BadOption(f"{name}: needs a DynamicCut ranking (give a warm-up run)")
        return np.unique(ids)
    return np.empty(0, dtype=np.int64)


def isolation_removed(train: Table, p: float | DynamicCutParams = DEFAULT_P) -> np.ndarray:
    """The isolation cut's removed row_ids, most isolated first: the top ``ceil(p · N)`` rows of
    :func:`memviz.risk.factors.isolation_order` (k = :data:`~memviz.risk.factors.DEFAULT_K`, the
    audit's distance), from the table alone."""
    order = isolation_order(isolation_scores(train, DEFAULT_K, distance=DEFAULT_DISTANCE), train.row_ids)
    return order[:prune_budget(p, len(train))]


def pretraining_key(name: str, n_rows: int, p: float | DynamicCutParams = DEFAULT_P) -> dict:
    """What a pre-training ranking's cell depends on beyond the table (part of the cell's key): the rows it
    removes and how it ranks them."""
    return {"n_remove": prune_budget(p, n_rows), "k": DEFAULT_K, "distance": DEFAULT_DISTANCE, "score": name}


def _renumber_new_rows(res: MitigationResult, start: int):
    """Give the appended rows ids ``start, start + 1, ...`` so that no new row reuses the
    row_id of a pruned original row (mixing after pruning starts at max(kept id) + 1)."""
    data = res.table.data
    n_old = len(data) - res.added
    new_ids = np.arange(start, start + res.added, dtype=np.int64)
    index = np.concatenate([data.index.to_numpy(dtype=np.int64)[:n_old], new_ids])
    data = data.set_axis(pd.Index(index, name=ROW_ID), axis=0)
    sources = res.sources
    if sources is not None:
        sources = sources.set_axis(pd.Index(new_ids, name=ROW_ID), axis=0)
    return res.table.with_data(data), sources
