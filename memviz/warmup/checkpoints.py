"""Per-check checkpoints: the weights a warm-up had at each check, kept by a retention rule.

Besides the resume point (``checkpoints/model.pt``: weights, optimizer and random state), a
warm-up keeps, for every check c it retains, ``checkpoints/check_NNNN.pt``: what sampling
needs and nothing more (:func:`sampler_state`: the network's weights, the column transforms
and the hyper-parameters; no optimizer moments, no random state), so that
``memviz sample RUN --check c`` can draw a table from that epoch. Written with
``torch.save`` and read with ``torch.load(weights_only=True)``: nothing is unpickled.

Retention (``WarmupConfig.keep_checkpoints``):

* ``all``: every check (the default);
* ``every:K``: checks 0, K, 2K, ... and the last one;
* ``last:N``: the N newest checks (older ones are deleted as the run goes on);
* ``none``: no per-check checkpoint (the resume point alone).

Disk cost: about 4 bytes per network parameter per kept check (float32 weights) plus the
column transforms (a few kB): 1.0 MB for ``cpu-quick`` on Adult (``d_in = 110``; 0.24 M
parameters), 47 MB for the ``paper`` network (11.8 M parameters), so 25 checks of the paper
network take 1.2 GB with ``all``. The optimizer's moments, which the resume point also
holds, would triple that; they are left out here.
"""
from __future__ import annotations

import re
from pathlib import Path

from memviz.engine.budget import check as check_memory, sample_bytes
from memviz.errors import BadOption, BadRunFolder, MemvizError, checked_seed
from memviz.io import atomic_torch_save
from memviz.warmup.store import RunStore

FOLDER = "checkpoints"
RETENTIONS = ("all", "every:K", "last:N", "none")
_NAME = re.compile(r"check_(\d{4,})\.pt")
_RULE = re.compile(r"(every|last):(\d+)")
#: keys of a TabDDPM state that sampling does not need (training's optimizer and random stream)
_TRAINING_ONLY = ("optimizer", "rng")


def check_retention(rule) -> str:
    """``rule`` normalized (``all``, ``none``, ``every:K`` or ``last:N`` with K, N ≥ 1), else a one-line error."""
    text = str(rule).strip().lower()
    m = _RULE.fullmatch(text)
    if text in ("all", "none") or (m and int(m.group(2)) >= 1):
        return text if not m else f"{m.group(1)}:{int(m.group(2))}"
    raise BadOption(f"keep_checkpoints={rule!r}: use all, none, every:K or last:N (K, N at least 1)")


def retained(rule: str, checks, last: int | None = None) -> list[int]:
    """The checks of ``checks`` that ``rule`` keeps when ``last`` is the run's final check
    (None: the newest of ``checks``, as while the run goes on)."""
    checks = sorted(int(c) for c in checks)
    if not checks:
        return []
    rule = check_retention(rule)
    final = checks[-1] if last is None else int(last)
    if rule == "all":
        return checks
    if rule == "none":
        return []
    kind, n = rule.split(":")
    n = int(n)
    if kind == "every":
        return [c for c in checks if c % n == 0 or c == final]
    return checks[-n:]


def sampler_state(state: dict) -> dict:
    """A TabDDPM :meth:`~memviz.models.tabddpm.TabDDPM.state_dict` without what only training needs."""
    return {k: v for k, v in state.items() if k not in _TRAINING_ONLY}


def path(run_dir, check: int) -> Path:
    return Path(run_dir) / FOLDER / f"check_{int(check):04d}.pt"


def kept(run_dir) -> list[int]:
    """The checks whose checkpoint is on disk, sorted."""
    folder = Path(run_dir) / FOLDER
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := _NAME.fullmatch(p.name)))


def save_checkpoint(run_dir, check: int, state: dict, rule: str, final: int) -> None:
    """Store check ``check``'s sampler state (when ``rule`` may keep it), then delete the
    checkpoints ``rule`` no longer keeps. ``final``: the run's last check number."""
    rule = check_retention(rule)
    have = sorted(set(kept(run_dir)) | {int(check)})
    keep = set(retained(rule, [c for c in have if c <= check], last=final))
    if int(check) in keep:
        atomic_torch_save(path(run_dir, check), sampler_state(state))
    for c in have:
        if c <= check and c not in keep:
            path(run_dir, c).unlink(missing_ok=True)


def drop_after(run_dir, check: int) -> None:
    """Delete the checkpoints of checks after ``check`` (a resume redoes them)."""
    for c in kept(run_dir):
        if c > check:
            path(run_dir, c).unlink(missing_ok=True)


def load_checkpoint(run_dir, check: int, map_location="cpu") -> dict:
    """The sampler state of check ``check``; BadRunFolder (one line) when it was not kept or is unreadable."""
    import torch  # lazy: torch, an extra (train): the audit's report lists kept checkpoints without it

    f = path(run_dir, check)
    if not f.exists():
        have = kept(run_dir)
        which = f"kept checks: {', '.join(map(str, have))}" if have else "this run kept no per-check checkpoint"
        raise BadRunFolder(f"{run_dir}: no checkpoint of check {check} ({which})")
    try:
        state = torch.load(f, map_location=map_location, weights_only=True)
    except Exception as exc:  # a refused pickle or a corrupt file
        raise BadRunFolder(f"{f}: unreadable checkpoint ({type(exc).__name__})") from None
    if not isinstance(state, dict) or "model" not in state or "epoch" not in state \
            or isinstance(state["epoch"], bool) or not isinstance(state["epoch"], int):
        raise BadRunFolder(f"{f}: not a memviz check checkpoint (expected a TabDDPM state)")
    return state


def sample_check(run_dir, check: int, rows: int, seed: int = 0, device: str = "auto"):
    """``rows`` rows drawn with ``seed`` from check ``check``'s weights -> (DataFrame, epoch).
    The same run, check, rows, seed and device kind give the same table; the check's own seed
    (:func:`memviz.warmup.tracking.check_seed`) and size redraw the rows that check measured."""
    from memviz.models.tabddpm import TabDDPM  # lazy: torch (memviz.models.tabddpm); the audit report loads this module

    if int(rows) < 1:
        raise BadOption(f"rows={rows}: must be at least 1")
    checked_seed(seed)
    columns = len(RunStore(run_dir).read().schema.columns)
    check_memory(sample_bytes(rows, columns), f"drawing {int(rows):,} rows of {columns} columns",   # before any work
                 "draw fewer rows (several draws with other seeds, appended), or on a machine with more memory")
    state = load_checkpoint(run_dir, check)
    try:
        model = TabDDPM.from_state_dict(state, device=device)
    except MemvizError:
        raise
    except Exception as exc:  # a foreign or damaged state: missing keys, other shapes, other parameters
        raise BadRunFolder(f"{path(run_dir, check)}: not a checkpoint of this memviz's TabDDPM (foreign or damaged: "
                           f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]})") from None
    return model.sample(int(rows), seed=int(seed)).reset_index(drop=True), int(state["epoch"])
