"""Singling out and linkability: two of the EU Article 29 Working Party's re-identification criteria, read with a
control, as Giomi et al. (2022, "A Unified Framework for Quantifying Privacy Risk in Synthetic Data", the
anonymeter paper) define them. (Inference, the third, is the attribute attack: :mod:`memviz.evidence.attribute`.)

Both attacks hold the synthetic table only. Each is run twice, on the same footing: against training rows T (the
"main" attack) and against real rows the model never saw, the hold-out C (the control), so that what real rows give
anyone who knows the population is subtracted. With main success rate r_T and control rate r_C, the risk is

    R = (r_T − r_C) / (1 − r_C)                                   (the share of attacks that succeed because of
                                                                   the training rows, beyond chance)

and the test of "the attack does better on training rows than on fresh ones" is exact under the null "the
synthetic table does not depend on which real rows were trained on" (then a training row and a hold-out row are
exchangeable targets):

* **singling out**: n predicates are drawn from the synthetic rows, each the conjunction of conditions on
  :data:`PREDICATE_COLUMNS` columns of one synthetic row s (a category: ``col = s.col``; a number: ``col ≤ s.col``
  where s.col is at most the synthetic median, else ``col ≥ s.col``; a missing value: ``col is missing``), kept when
  it selects exactly one of |C| synthetic rows drawn at random (a predicate the attacker believes singles someone
  out, among as many rows as each set it is tried on holds). A predicate singles out in a set when exactly one of
  its rows satisfies it. It is evaluated on a random subsample T' of the training rows of the hold-out's size |C|
  and on C (sets of one size: the chance of "exactly one" depends on it; so a copy's source is in T' with chance
  |C| / |T|, which bounds the attack's power where the hold-out is much smaller than the training table): r_T and r_C are the shares of predicates that single out a row there.
  The two outcomes of one predicate are paired, so the test is McNemar's exact test: among the predicates that
  single out in exactly one of T' and C, those in T' are Binomial(b + c, ½) under the null; p = P(X ≥ b).
* **linkability**: the columns are split into two disjoint halves A and B (the first ⌈d/2⌉ distance columns in
  schema order, and the rest): one source holds a person's A values, another the same person's B values. For a
  target row x, the attacker finds the synthetic row nearest x in A and the one nearest x in B (the standardized
  distance on those columns alone, :mod:`memviz.engine.neighbors`); the link succeeds when it is the same row
  (:data:`LINK_NEIGHBOURS` nearest in each, any in common). n targets from T and n from C: two independent binomial
  samples, Fisher's exact one-sided p.

Each flags a risk (``flags_risk``) at :data:`ALPHA`, on its own, outside the verdict's family: they measure what an
attacker can do with the table, not whether the model copies (``benchmarks/bench_article29.py`` measures how often
fresh real rows flag them).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import binom

from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadTable
from memviz.io import to_jsonable
from memviz.measure.floor import wilson_interval
from memviz.measure.tails import hypergeom_sf
from memviz.tables.data import Table
from memviz.tables.encoding import canonical_series
from memviz.tables.schema import Schema

#: the level each attack flags at (on its own)
ALPHA = 0.05
#: predicates drawn (singling out) and targets attacked per set (linkability)
N_ATTACKS = 500
#: columns per singling-out predicate (anonymeter's multivariate default)
PREDICATE_COLUMNS = 3
#: draws per predicate kept, at most (singling out)
MAX_TRIES = 8
#: synthetic rows looked at in each half (linkability)
LINK_NEIGHBOURS = 1


@dataclass(frozen=True, eq=False)
class Article29Result:
    """One attack's figures (module docstring).

    test : ``singling_out`` or ``linkability``.  n_attacks : predicates or targets per set.
    main_rate, main_ci : r_T and its Wilson interval.  control_rate, control_ci : r_C and its.
    risk : R = (r_T − r_C) / (1 − r_C) (NaN when r_C = 1).  p_value : the exact one-sided p (module docstring).
    detail : what the attack used (the predicates' columns, the two halves).
    rows : the training rows the attack reached: row_id and ``hits`` (predicates that single it out, or 1 for a
        linked row), most first.
    """

    test: str
    n_attacks: int
    main_rate: float
    main_ci: tuple[float, float]
    control_rate: float
    control_ci: tuple[float, float]
    risk: float
    p_value: float
    detail: str
    seconds: float = 0.0
    rows: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"row_id": pd.Series(dtype=np.int64),
                                                                     "hits": pd.Series(dtype=np.int64)}))

    def figures(self) -> dict:
        """The headline figures under their :data:`memviz.metrics.EVIDENCE_METRICS` keys."""
        return {f"{self.test}_rate": self.main_rate, f"{self.test}_risk": self.risk}

    @property
    def flags_risk(self) -> bool:
        """The attack succeeds on training rows more often than on fresh ones at :data:`ALPHA`."""
        return bool(self.p_value < ALPHA)

    def to_dict(self) -> dict:
        return to_jsonable({"test": self.test, "n_attacks": self.n_attacks, "main_rate": self.main_rate,
                            "main_ci": list(self.main_ci), "control_rate": self.control_rate,
                            "control_ci": list(self.control_ci), "risk": self.risk, "p_value": self.p_value,
                            "flags_risk": self.flags_risk, "detail": self.detail,
                            "reached": [int(r) for r in self.rows["row_id"].head(20)], "n_reached": len(self.rows),
                            "figures": self.figures(), "seconds": self.seconds})



def _rates(successes_main: int, successes_control: int, n_main: int, n_control: int):
    rm, rc = successes_main / n_main, successes_control / n_control
    risk = (rm - rc) / (1 - rc) if rc < 1 else math.nan
    lo_m, hi_m = wilson_interval(successes_main, n_main)
    lo_c, hi_c = wilson_interval(successes_control, n_control)
    return rm, (float(lo_m), float(hi_m)), rc, (float(lo_c), float(hi_c)), float(risk)


# ------------------------------------------------------------------ singling out
def _column_arrays(frame: pd.DataFrame, schema: Schema, cols) -> dict:
    """Each of ``cols`` of ``frame`` as the predicates read it: numbers as floats (NaN missing), categories in
    their canonical text (:func:`memviz.tables.encoding.canonical_series`)."""
    return {c: pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float) if c in schema.numerical
            else canonical_series(frame[c]) for c in cols}


def _mask(arrays: dict, conds, n_rows: int, schema: Schema) -> np.ndarray:
    """(n_rows,) bool: the rows whose ``arrays`` satisfy every condition of one predicate."""
    out = np.ones(n_rows, dtype=bool)
    for col, op, value in conds:
        v = arrays[col]
        if op == "missing":
            hit = np.isnan(v) if col in schema.numerical else (v == "\x00<missing>")
        elif op == "<=":
            hit = v <= value
        elif op == ">=":
            hit = v >= value
        else:
            hit = v == value
        out &= hit
    return out


def _predicate_masks(frame: pd.DataFrame, schema: Schema, preds) -> np.ndarray:
    """(n_predicates, n_rows) bool: which rows of ``frame`` satisfy each predicate."""
    arrays = _column_arrays(frame, schema, sorted({c for conds in preds for c, _, _ in conds}))
    out = np.ones((len(preds), len(frame)), dtype=bool)
    for i, conds in enumerate(preds):
        out[i] = _mask(arrays, conds, len(frame), schema)
    return out


def _draw_predicates(synthetic: pd.DataFrame, schema: Schema, n: int, rng) -> list:
    """Up to ``n`` predicates that each select exactly one synthetic row (module docstring)."""
    cols = [c for c in (*schema.distance_numerical, *schema.distance_categorical) if c in synthetic.columns]
    if not cols:
        return []
    k = min(PREDICATE_COLUMNS, len(cols))
    arrays = _column_arrays(synthetic, schema, cols)                 # read once, not once per try
    num = {c: v for c, v in arrays.items() if c in schema.numerical}
    med = {c: float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan for c, v in num.items()}
    # the tries compare integer codes where the predicate names a category (the same rows as its text)
    codes = {**num, **{c: pd.factorize(v)[0] for c, v in arrays.items() if c not in num}}
    preds, tries = [], 0
    while len(preds) < n and tries < MAX_TRIES * n:
        tries += 1
        row = int(rng.integers(len(synthetic)))
        conds, coded = [], []
        for c in rng.choice(cols, k, replace=False):
            if c in num:
                v = num[c][row]
                cond = (c, "missing", None) if np.isnan(v) else (c, "<=" if v <= med[c] else ">=", float(v))
                conds.append(cond)
                coded.append(cond)
            else:
                conds.append((c, "==", arrays[c][row]))
                coded.append((c, "==", codes[c][row]))
        if _mask(codes, coded, len(synthetic), schema).sum() == 1:
            preds.append(conds)
    return preds


def singling_out(train: Table, synthetic: Table, holdout: Table, *, n_attacks: int = N_ATTACKS,
                 seed: int = 0) -> Article29Result | None:
    """The singling-out attack against ``train`` with ``holdout`` as its control (module docstring); None when no
    predicate singles out a synthetic row."""
    t0 = time.perf_counter()
    rng = np.random.default_rng([seed, 29])
    schema = train.schema
    h = len(holdout)
    if h < 1 or len(train) < 1:
        raise BadTable("singling out: needs training and hold-out rows")
    pool = synthetic.data.iloc[rng.choice(len(synthetic), min(h, len(synthetic)), replace=False)]
    preds = _draw_predicates(pool, schema, n_attacks, rng)
    if not preds:
        return None
    sub = train.data.iloc[rng.choice(len(train), min(h, len(train)), replace=False)]
    mask_t = _predicate_masks(sub, schema, preds)                                  # (P, |T'|)
    in_t = mask_t.sum(axis=1) == 1
    in_c = _predicate_masks(holdout.data, schema, preds).sum(axis=1) == 1
    b, c = int(np.sum(in_t & ~in_c)), int(np.sum(~in_t & in_c))

    p = float(binom.sf(b - 1, b + c, 0.5)) if b else 1.0                     # McNemar's exact, one-sided
    rm, ci_m, rc, ci_c, risk = _rates(int(in_t.sum()), int(in_c.sum()), len(preds), len(preds))
    cols = sorted({c for conds in preds for c, _, _ in conds})
    detail = (f"{len(preds)} predicates of {min(PREDICATE_COLUMNS, len(cols))} columns each, on {len(sub):,} "
              f"training rows and {h:,} hold-out rows")
    hit = mask_t[in_t].argmax(axis=1)                                              # the one row each picks out
    ids, counts = np.unique(sub.index.to_numpy()[hit], return_counts=True)
    rows = pd.DataFrame({"row_id": ids.astype(np.int64), "hits": counts.astype(np.int64)}).sort_values(
        ["hits", "row_id"], ascending=[False, True], ignore_index=True)
    return Article29Result("singling_out", len(preds), rm, ci_m, rc, ci_c, risk, max(p, 0.0), detail,
                           time.perf_counter() - t0, rows)


# ------------------------------------------------------------------ linkability
def halves(schema: Schema) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two disjoint column sets A and B of the linkability attack: the first ⌈d/2⌉ distance columns in schema
    order and the rest (empty B with fewer than two columns)."""
    cols = tuple(c for c in schema.columns if c in (*schema.distance_numerical, *schema.distance_categorical))
    k = math.ceil(len(cols) / 2)
    return cols[:k], cols[k:]


def _half_schema(schema: Schema, cols) -> Schema:
    return Schema(numerical=tuple(c for c in schema.distance_numerical if c in cols),
                  categorical=tuple(c for c in schema.distance_categorical if c in cols), target=None)


def _links(synthetic: Table, target_sets: tuple[pd.DataFrame, ...], a, b, device: str) -> list[np.ndarray]:
    """Per set of targets, (n,) bool: the ``LINK_NEIGHBOURS`` nearest synthetic rows of each target in A and in B
    share one. One engine per half of the columns, fitted once and asked for every set."""
    near = []                                        # per half: the neighbours' positions of each set
    for cols in (a, b):
        s = _half_schema(synthetic.schema, cols)
        engine = NeighborEngine(distance="standardized", device=device).fit(
            Table(synthetic.data[list(s.columns)].reset_index(drop=True), s, "synthetic"))
        near.append([engine.kneighbors(t[list(s.columns)].reset_index(drop=True), k=LINK_NEIGHBOURS).pos
                     for t in target_sets])
    return [np.array([bool(set(x) & set(y)) for x, y in zip(pa.tolist(), pb.tolist())])
            for pa, pb in zip(*near)]


def linkability(train: Table, synthetic: Table, holdout: Table, *, n_attacks: int = N_ATTACKS, seed: int = 0,
                device: str = "auto") -> Article29Result | None:
    """The linkability attack against ``train`` with ``holdout`` as its control (module docstring); None with fewer
    than two distance columns (nothing to split)."""
    t0 = time.perf_counter()
    a, b = halves(train.schema)
    if not a or not b:
        return None
    rng = np.random.default_rng([seed, 30])
    n = min(n_attacks, len(train), len(holdout))
    if n < 1:
        raise BadTable("linkability: needs training and hold-out rows")
    main = train.data.iloc[rng.choice(len(train), n, replace=False)]
    ctrl = holdout.data.iloc[rng.choice(len(holdout), n, replace=False)]
    lt, lc = _links(synthetic, (main, ctrl), a, b, device)
    xt, xc = int(lt.sum()), int(lc.sum())
    p = hypergeom_sf(xt, 2 * n, xt + xc, n)                                 # Fisher's exact, one-sided
    rm, ci_m, rc, ci_c, risk = _rates(xt, xc, n, n)
    detail = f"{n:,} targets per set; one source knows {', '.join(a)}, the other {', '.join(b)}"
    rows = pd.DataFrame({"row_id": main.index.to_numpy()[lt].astype(np.int64), "hits": np.ones(xt, dtype=np.int64)})
    return Article29Result("linkability", n, rm, ci_m, rc, ci_c, risk, p, detail, time.perf_counter() - t0,
                           rows.sort_values("row_id", ignore_index=True))
