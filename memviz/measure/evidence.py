"""Beyond the ratio test: the three privacy tests against a hold-out, in one call.

:func:`privacy_evidence` runs, on one training table, one synthetic table and one hold-out
(real rows the model never saw):

* ``"membership"``: distance-based membership inference (:mod:`memviz.measure.membership`):
  can an attacker tell training rows from fresh rows by their distance to the nearest generated row?
* ``"data_copying"``: the data-copying test of Meehan, Chaudhuri & Dasgupta (2020)
  (:mod:`memviz.measure.datacopying`): are generated rows closer to the training rows than fresh
  rows are, and where in the data?
* ``"attribute"``: attribute inference with a control (:mod:`memviz.measure.attribute`): does the
  nearest generated row give away a training row's value of a column more often than an outsider's?

Each result is a frozen dataclass with its figures, ``to_dict()`` (strict JSON: no NaN) and
``sentence()`` (one plain sentence), and where it can, a per-training-row frame (``rows``, keyed
by ``row_id``) naming the rows most exposed. Unlike the ratio test, none of them has a floor
to subtract: each is read against its own control, the hold-out.
"""
from __future__ import annotations

from memviz.measure.attribute import N_ROWS, attribute_inference
from memviz.measure.datacopying import data_copying_test
from memviz.measure.membership import (
    DEFAULT_DISTANCE,
    as_table,
    check_distance,
    holdout_table,
    membership_inference,
    synthetic_engine,
)
from memviz.measure.neighbors import NeighborEngine
from memviz.tables.data import Table

TESTS = ("membership", "data_copying", "attribute")


def privacy_evidence(train: Table, synthetic, holdout, *, engine: NeighborEngine | None = None,
                     distance: str = DEFAULT_DISTANCE, secret=None, known=None, seed: int = 0,
                     n_attribute_rows: int = N_ROWS, n_cells: int | None = None, flagged_row_ids=None,
                     device: str = "auto", tests=TESTS) -> dict:
    """The three tests (module docstring) with their documented defaults.

    Parameters
    ----------
    train : the training table.
    synthetic : the generated rows (a Table or a DataFrame with the training columns).
    holdout : real rows the model never trained on (the test split or a hold-out).
    engine : a :class:`NeighborEngine` fitted on ``train`` with ``distance`` (the warm-up's); the
        data-copying test takes its encoding for the cells. The membership attack fits one engine
        on the generated rows; the attribute attack one per secret on its known columns.
    distance : ``"standardized"`` (default; :mod:`memviz.measure.membership` says why not the
        paper's) or ``"paper"``.
    secret, known : the attribute attack's secret column(s) (default: every column, the target
        first) and known columns (default: all others).
    seed : the k-means cells and the attacked rows.
    n_attribute_rows : training rows (and as many hold-out rows) the attribute attack attacks.
    n_cells : k-means cells of the data-copying test (default: its rule).
    flagged_row_ids : the ratio test's over-copied rows, for the membership overlap.
    tests : which of :data:`TESTS` to run.

    Returns
    -------
    dict
        {"membership": MembershipResult, "data_copying": DataCopyingResult,
        "attribute": AttributeResult} for the tests asked, plus nothing else.
    """
    check_distance(distance)
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        from memviz.errors import MemvizError
        raise MemvizError(f"test {unknown[0]!r}: unknown (use {', '.join(TESTS)})")
    synth = as_table(train, synthetic, "synthetic", "synthetic table")
    hold = holdout_table(train, holdout)
    out = {}
    if "membership" in tests:
        s_engine = synthetic_engine(synth, distance, device)
        out["membership"] = membership_inference(train, synth, hold, distance=distance, engine=s_engine,
                                                 flagged_row_ids=flagged_row_ids)
    if "data_copying" in tests:
        out["data_copying"] = data_copying_test(train, synth, hold, distance=distance, n_cells=n_cells,
                                                engine=engine, device=device, seed=seed)
    if "attribute" in tests:
        out["attribute"] = attribute_inference(train, synth, hold, secret=secret, known=known,
                                               n_rows=n_attribute_rows, distance=distance, device=device, seed=seed)
    return out
