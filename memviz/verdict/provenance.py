"""Where an audit comes from: the tables (their fingerprints and sources), the sizes, the distance, the code
and, for a warm-up's check, the run (:class:`RunInfo`). audit.json writes it under ``provenance``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class RunInfo:
    """Where an audit of a warm-up check comes from.

    run_id, run_dir : the run folder's name and path. check, epoch : the audited check.
    status : finished, cancelled, interrupted, running or failed. n_checks : finished checks.
    epochs : the run's planned epochs. p, k, T : DynamicCut's settings when a caller tuned them (else None).
    pooled_checks : how many checks up to ``check`` the audit read (1: the check alone).
    """

    run_id: str
    run_dir: str
    check: int
    epoch: int
    status: str
    n_checks: int
    epochs: int | None = None
    p: float | None = None
    k: int | None = None
    T: int | None = None
    pooled_checks: int = 1

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Provenance:
    """Which tables, sizes, distance and code produced the audit.

    fingerprints : {train, synthetic, holdout}: sha256 of each table's values and row ids
        (:func:`memviz.tables.data.fingerprint`; holdout "" without one).
    sources : {train, synthetic, holdout}: where each table came from (a path or "frame").
    n_train, n_synthetic, n_holdout : N, M (the audited rows) and H (0 without a hold-out).
    distance, memviz_version, created (UTC, ISO 8601), target, run (a :class:`RunInfo` or None).
    rows_read : which generated rows the tests read, in words ("check 19 (epoch 100): 3,000 generated rows").
    notices : what reading the tables changed or left out (categories the training table lacks, ...).
    unjudged : columns left out of the distance because the generated table holds values of its own there (a
        generator's fake personal data, :func:`memviz.tables.align.adapt_to`): the audit could not judge them.
    """

    fingerprints: Mapping[str, str]
    sources: Mapping[str, str]
    n_train: int
    n_synthetic: int
    n_holdout: int
    distance: str
    memviz_version: str
    created: str
    target: str | None = None
    run: RunInfo | None = None
    rows_read: str = ""
    notices: tuple[str, ...] = ()
    unjudged: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"fingerprints": dict(self.fingerprints), "sources": dict(self.sources), "n_train": self.n_train,
                "n_synthetic": self.n_synthetic, "n_holdout": self.n_holdout, "distance": self.distance,
                "memviz_version": self.memviz_version, "created": self.created, "target": self.target,
                "run": self.run.to_dict() if self.run is not None else None, "rows_read": self.rows_read,
                "notices": list(self.notices), "unjudged": list(self.unjudged)}
