"""The targeted attack's design: its settings, the target rows, and which shadow model holds which target.

Targets (:class:`Targets`), each in one group:

* ``top``: DynamicCut's highest-ranked rows of a warm-up run (:func:`dynamiccut_top`);
* ``named``: rows the audit names (its over-copied rows), given by the caller;
* ``random``: training rows drawn at random among the others (seeded);
* ``holdout``: hold-out rows (real rows the released model never saw): the controls of the release
  reading (:mod:`memviz.attacks.lira`).

Shadow training sets (LiRA's online design with a fixed background, :class:`Plan`):

* the **background**: every training row that is not a target, in every shadow (the auditor's
  strongest attacker knows the rest of the data: each shadow differs from the real training set only
  in the targets);
* each target is **in** exactly half of the S shadows (a seeded balanced draw per target, independent
  across targets);
* a member target (a training row) that is **out** is replaced by its own hold-out row (drawn once per
  target, never a target), so every shadow keeps the real training set's size (Stadler et al.'s
  D ∪ {t} against D ∪ {r}); without a hold-out it is simply left out;
* a hold-out target that is in is added (the set is that much larger).

Shadow s trains TabDDPM with the run's settings (preset, epochs or steps, overrides) at seed
:func:`shadow_seed` (``seed``, s) and samples ``n_samples`` rows at that seed.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from memviz.dynamics.dynamiccut import DEFAULTS, DynamicCutParams, dynamiccut_selection
from memviz.errors import BadOption, BadTable, Notice, checked_seed
from memviz.models.presets import PRESETS
from memviz.tables.data import Table
from memviz.warmup.run import load_warmup

GROUPS = ("top", "named", "random", "holdout")
#: groups of training rows (members of the released model)
MEMBER_GROUPS = ("top", "named", "random")


def shadow_seed(seed: int, s: int) -> int:
    """The seed of shadow ``s`` of an attack seeded ``seed``: the first 32-bit word of
    ``numpy.random.SeedSequence([seed, s])``, in 0 … 2³² − 1 for every seed memviz takes (``seed · 10,000 + s``
    left that range from seed 429,497 and failed in scikit-learn)."""
    return int(np.random.SeedSequence([int(seed), int(s)]).generate_state(1)[0])


@dataclass(frozen=True)
class ShadowConfig:
    """Settings of a targeted attack.

    Parameters
    ----------
    n_shadows : S, shadow models (even, at least 4): each target is in S / 2 of them.
    preset : TabDDPM preset of the shadows.
    model_params : TabDDPM overrides (``epochs``, ``steps``, ``layers``…): the released model's.
    n_samples : generated rows per shadow (None: as many as the shadow's training rows); give the
        released table's size when a release is read.
    replace_out : an out member target is replaced by a hold-out row (module docstring).
    k : the nearest generated rows the features average (:mod:`memviz.attacks.features`).
    seed : the plan's draws and the shadows' seeds.
    device : ``auto`` (CUDA when there is one), ``cpu`` or ``cuda``.
    """

    n_shadows: int = 32
    preset: str = "cpu-quick"
    model_params: dict = field(default_factory=dict)
    n_samples: int | None = None
    replace_out: bool = True
    k: int = 5
    seed: int = 0
    device: str = "auto"

    def checked(self) -> "ShadowConfig":
        """Validated (one MemvizError line per problem)."""
        s = self.n_shadows
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 4 or s % 2:
            raise BadOption(f"n_shadows={s!r}: must be an even whole number >= 4 (each target in half of them)")
        if self.preset not in PRESETS:
            raise BadOption(f"preset {self.preset!r}: unknown (use {', '.join(PRESETS)})")
        if not isinstance(self.model_params, dict):
            raise BadOption(f"model_params: expected a dict of TabDDPM parameters, got "
                              f"{type(self.model_params).__name__}")
        bad = sorted(set(self.model_params) - set(TABDDPM_PARAMS))
        if bad:
            raise BadOption(f"model_params: unknown TabDDPM parameter {bad[0]!r} (known: {', '.join(TABDDPM_PARAMS)})")
        if self.n_samples is not None and (isinstance(self.n_samples, bool) or int(self.n_samples) != self.n_samples
                                           or self.n_samples < 1):
            raise BadOption(f"n_samples={self.n_samples!r}: must be a whole number >= 1 (or None)")
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise BadOption(f"k={self.k!r}: must be a whole number >= 1")
        checked_seed(self.seed)
        return self

    def to_dict(self) -> dict:
        return asdict(self)


#: what ``model_params`` may set (TabDDPM's own parameters but device, seed and preset)
TABDDPM_PARAMS = ("epochs", "batch_size", "lr", "weight_decay", "layers", "dim_t", "n_timesteps", "dropout",
                  "lr_schedule", "cat_input", "amp", "n_threads", "steps")


# ------------------------------------------------------------------ targets
@dataclass(frozen=True, eq=False)
class Targets:
    """The target rows: ``frame`` has target (0..T−1), row_id, group (:data:`GROUPS`) and source
    (``train`` or ``holdout``), in group order."""

    frame: pd.DataFrame

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def members(self) -> np.ndarray:
        """(T,) bool: the target is a training row."""
        return (self.frame["source"] == "train").to_numpy()

    def ids(self, group: str) -> np.ndarray:
        return self.frame.loc[self.frame["group"] == group, "row_id"].to_numpy(np.int64)

    def rows(self, train: Table, holdout: Table | None) -> pd.DataFrame:
        """The targets' cells (schema columns), in target order."""
        cols = list(train.schema.columns)
        parts = []
        for src, rid in zip(self.frame["source"], self.frame["row_id"]):
            t = train if src == "train" else holdout
            parts.append(t.data.loc[[int(rid)], cols])
        return pd.concat(parts, ignore_index=True)

    def named(self, train: Table, holdout: Table | None) -> pd.DataFrame:
        """:attr:`frame` with the user's key of each target after ``row_id`` (:meth:`Table.with_keys` of the training
        table for a training row, of the hold-out for a hold-out row: one column per key column, under its own name;
        missing where that table has no key); the frame as it is without a key."""
        if train.key is None:
            return self.frame
        parts = []
        for src, t in (("train", train), ("holdout", holdout)):
            part = self.frame[self.frame["source"] == src]
            parts.append(t.with_keys(part, "row_id") if t is not None else part)
        out = pd.concat(parts).loc[self.frame.index]                       # in target order
        keys = [c for c in out.columns if c not in self.frame.columns]
        at = list(self.frame.columns).index("row_id") + 1
        cols = list(self.frame.columns)
        return out[cols[:at] + keys + cols[at:]]

    def to_records(self) -> list[dict]:
        return [{"row_id": int(r.row_id), "group": str(r.group), "source": str(r.source)}
                for r in self.frame.itertuples()]

    @classmethod
    def from_records(cls, records) -> "Targets":
        df = pd.DataFrame(list(records), columns=["row_id", "group", "source"])
        df.insert(0, "target", np.arange(len(df), dtype=np.int64))
        return cls(df.astype({"row_id": np.int64}))


def choose_targets(train: Table, holdout: Table | None = None, *, top=(), named=(), n_random: int = 0,
                   n_holdout: int = 0, random_ids=None, seed: int = 0) -> Targets:
    """Targets in :data:`GROUPS` order: ``top`` and ``named`` as given (a named row that is also a top
    row stays top), ``n_random`` training rows drawn among the rest (or ``random_ids``), ``n_holdout``
    hold-out rows. One MemvizError line for an id that is no training row, or too few rows to draw."""
    ids = set(train.row_ids.tolist())
    top = [int(i) for i in top]
    named = [int(i) for i in named if int(i) not in set(top)]
    for name, group in (("top", top), ("named", named)):
        bad = [i for i in group if i not in ids]
        if bad:
            raise BadOption(f"{train.source}: {name} target {bad[0]} is not a training row_id")
    taken = set(top) | set(named)
    rng = np.random.default_rng(seed)
    if random_ids is not None:
        rand = [int(i) for i in random_ids]
    else:
        rest = np.array(sorted(ids - taken), dtype=np.int64)
        if n_random > len(rest):
            raise BadOption(f"{train.source}: {n_random} random targets asked, {len(rest)} training rows left")
        rand = sorted(rng.choice(rest, int(n_random), replace=False).tolist()) if n_random else []
    hold = []
    if n_holdout:
        if holdout is None:
            raise BadOption("hold-out targets need a hold-out table")
        if n_holdout > len(holdout):
            raise BadOption(f"{holdout.source}: {n_holdout} hold-out targets asked, the hold-out has {len(holdout)}")
        hold = sorted(rng.choice(holdout.row_ids, int(n_holdout), replace=False).tolist())
    recs = ([{"row_id": i, "group": "top", "source": "train"} for i in top]
            + [{"row_id": i, "group": "named", "source": "train"} for i in named]
            + [{"row_id": i, "group": "random", "source": "train"} for i in rand]
            + [{"row_id": i, "group": "holdout", "source": "holdout"} for i in hold])
    if not recs:
        raise BadOption("the targeted attack needs at least one target row")
    return Targets.from_records(recs)


def dynamiccut_top(run_dir, n: int, p: float | None = None, k: int | None = None, T=None) -> np.ndarray:
    """The ``n`` highest-ranked rows of DynamicCut's ranking of a warm-up run (its defaults for p, k, T
    left None), among the ceil(p N) rows it would prune: asked for more, the rows it names, said in one line
    (a :class:`memviz.errors.Notice`; ``--top 1000000`` had been cut to 347 without a word)."""
    dyn = load_warmup(run_dir).dynamics
    params = DynamicCutParams(DEFAULTS.p if p is None else p, DEFAULTS.k if k is None else k, T)  # checked once
    sel = dynamiccut_selection(dyn, params=params)
    if int(n) > len(sel.removed):
        warnings.warn(f"{int(n):,} top targets asked, and DynamicCut's ranking at p={params.p:g} names "
                      f"{len(sel.removed):,} of the {int(dyn.n_rows):,} training rows (ceil(p N)): those "
                      f"{len(sel.removed):,} are attacked (a larger p names more)", Notice, stacklevel=2)
    return sel.removed[: int(n)]


# ------------------------------------------------------------------ the plan
@dataclass(frozen=True, eq=False)
class Plan:
    """Which shadow holds which target (module docstring).

    inside : (S, T) bool, target t in shadow s. replacements : (T,) the hold-out row that takes an out
    member target's place (−1: none). background : the training rows in every shadow.
    """

    inside: np.ndarray
    replacements: np.ndarray
    background: np.ndarray

    @property
    def n_shadows(self) -> int:
        return int(self.inside.shape[0])

    def shadow_frame(self, s: int, train: Table, holdout: Table | None, targets: Targets) -> pd.DataFrame:
        """Shadow ``s``'s training rows (schema columns, a fresh index)."""
        cols = list(train.schema.columns)
        member = targets.members
        rid = targets.frame["row_id"].to_numpy(np.int64)
        ins = self.inside[s]
        parts = [train.data.loc[self.background, cols],
                 train.data.loc[rid[ins & member], cols]]
        if holdout is not None:
            swap = self.replacements[~ins & member]
            parts.append(holdout.data.loc[swap[swap >= 0], cols])
            parts.append(holdout.data.loc[rid[ins & ~member], cols])
        return pd.concat(parts, ignore_index=True)

    def to_dict(self) -> dict:
        return {"inside": ["".join("1" if v else "0" for v in row) for row in self.inside],
                "replacements": self.replacements.tolist(), "n_background": int(len(self.background)),
                "background_digest": hashlib.sha256(np.sort(self.background).tobytes()).hexdigest()}

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()


def make_plan(train: Table, holdout: Table | None, targets: Targets, config: ShadowConfig) -> Plan:
    """The seeded plan of ``config`` (module docstring)."""
    cfg = config.checked()
    rng = np.random.default_rng([cfg.seed, 39])
    S, T = cfg.n_shadows, len(targets)
    inside = np.zeros((S, T), dtype=bool)
    for t in range(T):
        inside[rng.permutation(S)[: S // 2], t] = True
    member = targets.members
    rid = targets.frame["row_id"].to_numpy(np.int64)
    replacements = np.full(T, -1, dtype=np.int64)
    if holdout is not None and cfg.replace_out and member.any():
        pool = np.setdiff1d(holdout.row_ids, rid[~member])
        if len(pool) < int(member.sum()):
            raise BadTable(f"{holdout.source}: {int(member.sum())} replacement rows needed, "
                              f"{len(pool)} hold-out rows are not targets")
        replacements[member] = rng.choice(pool, int(member.sum()), replace=False)
    background = np.setdiff1d(train.row_ids, rid[member])
    return Plan(inside, replacements, background)
