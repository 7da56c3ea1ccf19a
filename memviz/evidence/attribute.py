"""Attribute inference with a control: does the synthetic table give away a training row's secret?

The attack (as in SDMetrics' CAP or Anonymeter's inference attack, nearest-neighbour form): an
adversary knows the ``known`` columns of a person and looks up the nearest generated row on
those columns; that row's value of the ``secret`` column is the guess. Against

* a training row x (the people in the training data): revealed(x) = [guess = x_secret];
* a hold-out row y (people the model never saw, the **control**): the same attack.

A generated row can resemble a population without copying anyone, so the guess is right for
many people outside the training data too (a common income class, a typical age): only the
**excess** of the training rows' rate over the control's is what the model gives away.

Definitions (S the generated rows, one engine per secret fitted on S restricted to the known
columns, scaled by S: the attacker holds nothing else):

* guess(x) = g*_secret, g* = argmin_{g ∈ S} d_known(x, g) (ties to the lowest position);
* categorical secret (target included): revealed = canonical values equal (a missing value
  equals a missing value);
* numerical secret: revealed = |guess − x_secret| ≤ NEAR_GAP · s, s the column's spread
  (IQR, else the standard deviation, else 1: :mod:`memviz.measure.closeness`), 0.1 spread
  by default; a missing value is revealed only by a missing guess;
* rate p1 = share of the n attacked training rows revealed, control p0 = the same over n'
  hold-out rows, each with its 95 % Wilson interval; **excess** p1 − p0 with Newcombe's
  hybrid score interval (:mod:`memviz.measure.floor`);
* per secret, the one-sided p-value of "p1 > p0" from the pooled two-proportion z-test
  (z = (p1 − p0) / sqrt(p̄ (1 − p̄) (1/n + 1/n')), p̄ pooled; equal to the square root of the
  uncorrected χ² of the 2×2 table, tested against scipy), Benjamini–Hochberg q-values over the
  secrets; a column is **given away** when q ≤ ``alpha``.

``n_rows`` (default 1,000) training rows and as many hold-out rows (fewer when the hold-out is
smaller) are drawn once (seeded) and attacked for every secret.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from memviz.errors import BadOption
from memviz.measure.closeness import NEAR_GAP, fit_spread
from memviz.measure.floor import newcombe_interval, wilson_interval
from memviz.tables.holdout import CheckedHoldout, as_table, checked_holdout
from memviz.evidence.membership import DEFAULT_DISTANCE, check_distance
from memviz.engine.neighbors import NeighborEngine
from memviz.evidence.ranktests import json_safe
from memviz.measure.multiplicity import bh_qvalues
from memviz.tables.data import Table
from memviz.tables.encoding import canonical_series
from memviz.tables.schema import Schema

N_ROWS = 1000
ALPHA = 0.05
FORMAT = "memviz.measure.attribute/1"  # a format name, kept when the module moved
COLUMNS = ("secret", "kind", "n", "n_control", "rate", "low", "high", "control", "control_low", "control_high",
           "excess", "excess_low", "excess_high", "p_value", "q_value", "given_away")


@dataclass(frozen=True, eq=False)
class AttributeResult:
    """Per secret column the attack's rate, its control and the excess (module docstring).

    columns : one row per secret, in the order attacked: :data:`COLUMNS`.
    rows : per attacked training row: row_id, n_revealed, expected (Σ of the controls' rates over
        the secrets), excess (n_revealed − expected), then one boolean column per secret;
        most exposed first.
    known : per secret, the known columns used.
    """

    distance: str
    columns: pd.DataFrame
    rows: pd.DataFrame
    known: dict
    n_synthetic: int
    alpha: float = ALPHA
    seed: int = 0
    seconds: float = 0.0

    @property
    def given_away(self) -> pd.DataFrame:
        return self.columns[self.columns["given_away"]].sort_values("excess", ascending=False)

    def to_dict(self) -> dict:
        return json_safe({
            "format": FORMAT, "test": "attribute_inference", "distance": self.distance, "alpha": self.alpha,
            "near_gap": NEAR_GAP, "n_synthetic": self.n_synthetic, "seed": self.seed,
            "columns": self.columns.to_dict(orient="records"), "known": self.known,
            "n_given_away": int(self.columns["given_away"].sum()),
            "most_exposed": [{"row_id": int(r.row_id), "n_revealed": int(r.n_revealed), "excess": float(r.excess)}
                             for r in self.rows.head(10).itertuples()],
            "figures": self.figures(), "seconds": self.seconds})

    def figures(self) -> dict:
        """The secret with the largest excess, under the :data:`memviz.metrics.EVIDENCE_METRICS` keys."""
        top = self.columns.sort_values("excess", ascending=False).iloc[0]
        return {"attribute_secret": top["secret"], "attribute_rate": float(top["rate"]),
                "attribute_control": float(top["control"]), "attribute_excess": float(top["excess"])}



def _known_table(table: Table, known: tuple[str, ...]) -> Table:
    """The table restricted to ``known`` columns, every class-target-like column as a categorical one."""
    s = table.schema
    num = tuple(c for c in s.distance_numerical if c in known)
    cat = tuple(c for c in s.distance_categorical if c in known)
    data = table.data
    # the same column arrays, no copy: their factorizations are shared (shared_factorizations)
    known_data = pd.DataFrame({c: data[c] for c in num + cat}, index=data.index, copy=False)
    return Table(known_data, Schema(numerical=num, categorical=cat, target=None), table.source)


def _revealed(guess: pd.Series, truth: pd.Series, numerical: bool, spread: float) -> np.ndarray:
    if numerical:
        g = pd.to_numeric(guess, errors="coerce").to_numpy(dtype=float)
        t = pd.to_numeric(truth, errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            near = np.abs(g - t) <= NEAR_GAP * spread
        return np.where(np.isnan(t), np.isnan(g), near)
    return canonical_series(guess) == canonical_series(truth)


def pooled_z(x1: int, n1: int, x0: int, n0: int) -> float:
    """The pooled two-proportion z of p1 − p0 (module docstring); 0 when both samples are all 0 or all 1."""
    pbar = (x1 + x0) / (n1 + n0)
    var = pbar * (1 - pbar) * (1 / n1 + 1 / n0)
    return (x1 / n1 - x0 / n0) / math.sqrt(var) if var > 0 else 0.0


def resolve_secrets(schema: Schema, secrets) -> tuple[str, ...]:
    """``None``: every distance column, the target first; a name or a list of names otherwise."""
    cols = schema.distance_numerical + schema.distance_categorical
    if secrets is None:
        t = schema.target
        return ((t,) if t in cols else ()) + tuple(c for c in cols if c != t)
    secrets = (secrets,) if isinstance(secrets, str) else tuple(secrets)
    for c in secrets:
        if c not in cols:
            raise BadOption(f"secret column {c!r}: not a column of the training table's schema")
    return secrets


def attribute_inference(train: Table, synthetic, holdout: CheckedHoldout | Table | pd.DataFrame, *, secret=None,
                        known=None, n_rows: int = N_ROWS, distance: str = DEFAULT_DISTANCE, alpha: float = ALPHA,
                        device: str = "auto", seed: int = 0) -> AttributeResult:
    """The nearest-row attribute attack on ``train`` with ``holdout`` as the control.

    Parameters
    ----------
    train, synthetic, holdout : the training table, the generated rows, real rows the model never saw (the
        hold-out: a :class:`~memviz.tables.holdout.CheckedHoldout` (used as is), else checked by
        :func:`~memviz.tables.holdout.checked_holdout`).
    secret : a column name, a list of them, or None (default: every column, the target first).
    known : the columns the adversary knows (default: every other column); the secret is left out
        of it when listed.
    n_rows : training rows attacked (and as many hold-out rows, or all of a smaller hold-out).
    distance : of the nearest-row look-up, ``"standardized"`` (default) or ``"paper"``.
    alpha : level of the per-column q-values.
    seed : the draw of the attacked rows.

    Returns
    -------
    AttributeResult
    """
    t0 = time.perf_counter()
    check_distance(distance)
    synth = as_table(train, synthetic, "synthetic", "synthetic table")
    hold = checked_holdout(train, holdout).table
    schema = train.schema
    secrets = resolve_secrets(schema, secret)
    cols = schema.distance_numerical + schema.distance_categorical
    if known is not None:
        known = (known,) if isinstance(known, str) else tuple(known)
        bad = [c for c in known if c not in cols]
        if bad:
            raise BadOption(f"known column {bad[0]!r}: not a column of the training table's schema")
    if n_rows < 1:
        raise BadOption(f"n_rows={n_rows}: at least one row must be attacked")
    rng = np.random.default_rng(seed)
    a_pos = np.sort(rng.choice(len(train), min(n_rows, len(train)), replace=False))
    b_pos = np.sort(rng.choice(len(hold), min(n_rows, len(hold)), replace=False))
    attacked = Table(train.data.iloc[a_pos], schema, train.source)
    control = Table(hold.data.iloc[b_pos], schema, hold.source)
    spread = fit_spread(train)
    s_of = dict(zip(spread.columns, spread.values))
    recs, hits, used = [], {}, {}
    for s in secrets:
        k_cols = tuple(c for c in (known if known is not None else cols) if c != s)
        if not k_cols:
            raise BadOption(f"secret column {s!r}: no known column left to attack it with")
        used[s] = list(k_cols)
        engine = NeighborEngine(distance=distance, device=device).fit(_known_table(synth, k_cols))
        numerical = s in schema.distance_numerical
        both = pd.concat([attacked.data, control.data], ignore_index=True)                 # one query pass
        pos = engine.kneighbors(both, k=1).pos[:, 0]                                         # (n + n',)
        guess = synth.data[s].iloc[pos].reset_index(drop=True)
        hit = _revealed(guess, both[s], numerical, s_of.get(s, 1.0))
        rev = [hit[: len(attacked)], hit[len(attacked):]]
        x1, n1, x0, n0 = int(rev[0].sum()), len(rev[0]), int(rev[1].sum()), len(rev[1])
        l1, h1 = wilson_interval(x1, n1)
        l0, h0 = wilson_interval(x0, n0)
        d, dl, dh = newcombe_interval(x1, n1, x0, n0)
        recs.append({"secret": s, "kind": "numerical" if numerical else "categorical", "n": n1, "n_control": n0,
                     "rate": x1 / n1, "low": float(l1), "high": float(h1), "control": x0 / n0,
                     "control_low": float(l0), "control_high": float(h0), "excess": float(d),
                     "excess_low": float(dl), "excess_high": float(dh),
                     "p_value": float(norm.sf(pooled_z(x1, n1, x0, n0)))})
        hits[s] = rev[0]
    table = pd.DataFrame(recs)
    table["q_value"] = bh_qvalues(table["p_value"].to_numpy())
    table["given_away"] = (table["q_value"] <= alpha) & (table["excess"] > 0)
    table = table.loc[:, list(COLUMNS)]
    per = pd.DataFrame(hits)
    per.insert(0, "row_id", attacked.row_ids)
    n_rev = per[list(secrets)].sum(axis=1).astype(np.int64)
    expected = float(table["control"].sum())
    per.insert(1, "n_revealed", n_rev)
    per.insert(2, "expected", expected)
    per.insert(3, "excess", n_rev - expected)
    per = per.sort_values(["n_revealed", "row_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return AttributeResult(distance, table, per, used, len(synth), float(alpha), seed, time.perf_counter() - t0)

