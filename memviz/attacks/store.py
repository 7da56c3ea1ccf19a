"""The attack folder: a targeted attack written as it goes, resumable after a kill.

Layout of ``ATTACK_DIR``::

    attack.json          what the attack is: the settings, the targets, the plan (which shadow holds
                         which target), the tables' fingerprints, where the targets came from;
                         written once, before the first shadow
    shadows/s0007/       one folder per finished shadow: features.parquet (per target, the features
                         of :mod:`memviz.attacks.features`), meta.json (seconds, rows, seed, device) and,
                         unless asked not to, samples.parquet (its generated rows); written under a
                         hidden name (``.s0007.<pid>.tmp``) and renamed into place when complete, so a
                         shadow is there whole or not at all
    result.json          the finished attack (:class:`~memviz.attacks.lira.TargetedResult`), written last
    writer.lock          the writer's lock (an flock held for the writer's life): a second writer is
                         refused in one line, and a reader tells a running attack from a stopped one

A rerun with the same attack.json reuses every committed shadow and trains the others; one whose
attack.json differs is refused (one line naming the first difference), never mixed in. Hidden
folders a killed writer left are removed by the next writer. Nothing is unpickled: JSON and Parquet.
A run's attack lives at ``RUN/attacks/targeted`` (:func:`run_attack_dir`), where the report and the
dashboard look for it.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.attacks.features import FEATURES
from memviz.attacks.lira import TargetedResult
from memviz.errors import BadRunFolder
from memviz.io import atomic_write_json, parquet_safe, pid_running, read_json, read_parquet, to_jsonable
from memviz.folders import WriterLock

SPEC = "attack.json"
RESULT = "result.json"
LOCK = "writer.lock"
SHADOWS = "shadows"
FORMAT = "memviz.attack/1"
_DONE = re.compile(r"^s(\d{4,})$")
_TMP = re.compile(r"^\.s(\d{4,})\.(\d+)\.tmp$")


def run_attack_dir(run_dir) -> Path:
    """Where a warm-up run's targeted attack lives."""
    return Path(run_dir) / "attacks" / "targeted"


class AttackStore:
    """One attack folder (module docstring)."""

    def __init__(self, path):
        self.path = Path(path)
        self._lock = WriterLock(self.path / LOCK)

    # -- the writer's lock --------------------------------------------------------
    def acquire(self) -> "AttackStore":
        """Hold the folder's lock (:mod:`memviz.folders`); MemvizError (one line) when another process holds it."""
        self.path.mkdir(parents=True, exist_ok=True)
        if not self._lock.take():
            raise BadRunFolder(f"{self.path}: another process is running this attack{self._lock.holder()}; "
                               "wait for it or stop it")
        return self

    def release(self) -> None:
        self._lock.release()

    def writer_alive(self) -> bool:
        """Does a process hold the folder's lock now?"""
        return self._lock.alive()

    # -- the spec -----------------------------------------------------------------
    def spec(self) -> dict | None:
        f = self.path / SPEC
        return read_json(f, "attack spec") if f.is_file() else None

    def begin(self, spec: dict) -> None:
        """Write ``spec`` (a new attack) or check it against the one there (a resume); then clear what a
        killed writer left. The lock must be held."""
        spec = {"format": FORMAT, **to_jsonable(spec)}
        old = self.spec()
        if old is None:
            if any(p.name != LOCK for p in self.path.iterdir()):
                raise BadRunFolder(f"{self.path}: the folder holds other files; give an empty or new folder")
            atomic_write_json(self.path / SPEC, spec)
        else:
            for key in sorted(set(old) | set(spec)):
                if old.get(key) != spec.get(key):
                    raise BadRunFolder(f"{self.path}: another attack is there ({key} differs); choose another "
                                       "folder or delete it")
        self.remove_stale()

    def remove_stale(self) -> int:
        """Remove hidden shadow folders whose writer is gone; returns how many."""
        d = self.path / SHADOWS
        n = 0
        if d.is_dir():
            for p in d.iterdir():
                m = _TMP.match(p.name)
                if m and (not pid_running(int(m.group(2)))):
                    shutil.rmtree(p, ignore_errors=True)
                    n += 1
        return n

    # -- shadows ------------------------------------------------------------------
    def done(self) -> list[int]:
        """The committed shadows, ascending."""
        d = self.path / SHADOWS
        if not d.is_dir():
            return []
        return sorted(int(m.group(1)) for p in d.iterdir() if (m := _DONE.match(p.name)) and (p / "meta.json").is_file())

    def commit(self, s: int, features: np.ndarray, target_ids: np.ndarray, meta: dict,
               samples: pd.DataFrame | None = None) -> None:
        """Shadow ``s``'s outputs, written under a hidden name and renamed into place (module docstring)."""
        d = self.path / SHADOWS
        d.mkdir(parents=True, exist_ok=True)
        final = d / f"s{s:04d}"
        tmp = d / f".s{s:04d}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            frame = pd.DataFrame(features, columns=list(FEATURES))
            frame.insert(0, "target", np.asarray(target_ids, dtype=np.int64))
            frame.to_parquet(tmp / "features.parquet", index=False)
            if samples is not None:
                parquet_safe(samples).to_parquet(tmp / "samples.parquet", index=False)
            atomic_write_json(tmp / "meta.json", {"shadow": int(s), **to_jsonable(meta)})
            with open(tmp / "meta.json", "rb") as f:
                os.fsync(f.fileno())
            if final.exists():                      # a shadow committed twice: keep the first
                shutil.rmtree(tmp, ignore_errors=True)
                return
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def features(self, n_targets: int) -> tuple[list[int], np.ndarray]:
        """(shadows, F (S', T, P)) of the committed shadows; one MemvizError line for a malformed file."""
        shadows = self.done()
        F = np.empty((len(shadows), n_targets, len(FEATURES)))
        for i, s in enumerate(shadows):
            f = self.path / SHADOWS / f"s{s:04d}" / "features.parquet"
            df = read_parquet(f, "shadow features")
            if list(df.columns) != ["target", *FEATURES] or len(df) != n_targets \
                    or not np.array_equal(df["target"].to_numpy(), np.arange(n_targets)):
                raise BadRunFolder(f"{f}: not this attack's features (columns, targets)")
            F[i] = df[list(FEATURES)].to_numpy(np.float64)
        return shadows, F

    def seconds(self) -> float:
        total = 0.0
        for s in self.done():
            meta = read_json(self.path / SHADOWS / f"s{s:04d}" / "meta.json", "shadow meta")
            total += float(meta.get("seconds") or 0.0)
        return total

    # -- the result ---------------------------------------------------------------
    def write_result(self, result: TargetedResult) -> None:
        atomic_write_json(self.path / RESULT, result.to_dict())

    def result(self) -> TargetedResult | None:
        f = self.path / RESULT
        if not f.is_file():
            return None
        d = read_json(f, "attack result")
        if d.get("format") != "memviz.attacks.targeted/1":
            raise BadRunFolder(f"{f}: not a memviz targeted attack's result")
        return TargetedResult.from_dict(d)

    def status(self) -> dict:
        """What a reader shows: done shadows of how many, finished, whether a writer runs now."""
        spec = self.spec() or {}
        total = int((spec.get("config") or {}).get("n_shadows") or 0)
        return {"done": len(self.done()), "total": total, "finished": (self.path / RESULT).is_file(),
                "running": self.writer_alive()}


def finished_attack(run_dir) -> TargetedResult | None:
    """A warm-up run's finished targeted attack (:func:`run_attack_dir`), or None when there is none."""
    store = AttackStore(run_attack_dir(run_dir))
    return store.result() if store.path.is_dir() else None


def with_attack(evidence, result: TargetedResult | None):
    """``evidence`` (an :class:`~memviz.evidence.suite.Evidence`) with the targeted attack added as ``targeted``."""
    return evidence if result is None else evidence.with_extra("targeted", result)


def with_finished_attack(audit, run_dir):
    """``audit`` (a frozen :class:`~memviz.auditing.result.Audit`) with the run's finished targeted attack in
    its evidence (``memviz report`` adds it: audit.json's ``evidence.targeted``, the report's "Other tests")."""
    result = finished_attack(run_dir)
    return audit if result is None else replace(audit, evidence=with_attack(audit.evidence, result))
