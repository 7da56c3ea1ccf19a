"""Beyond the ratio test: the three privacy tests against a hold-out, in one call.

:func:`privacy_evidence` runs, on one training table, one synthetic table and one hold-out
(real rows the model never saw):

* ``"membership"``: distance-based membership inference (:mod:`memviz.evidence.membership`):
  can an attacker tell training rows from fresh rows by their distance to the nearest generated row?
* ``"data_copying"``: the data-copying test of Meehan, Chaudhuri & Dasgupta (2020)
  (:mod:`memviz.evidence.datacopying`): are generated rows closer to the training rows than fresh
  rows are, and where in the data?
* ``"attribute"``: attribute inference with a control (:mod:`memviz.evidence.attribute`): does the
  nearest generated row give away a training row's value of a column more often than an outsider's?
* ``"density_ratio"``: density-ratio membership inference (DOMIAS, :mod:`memviz.evidence.densityratio`):
  does the synthetic table's density exceed the population's at training rows more than at fresh rows?
* ``"singling_out"``, ``"linkability"``: two of the Article 29 Working Party's re-identification criteria as
  anonymeter's paper defines them (:mod:`memviz.evidence.article29`): do predicates drawn from the synthetic rows
  pick out exactly one training person, and do the synthetic rows join two halves of a person's columns, more often
  than for real rows the model never saw? (The third criterion, inference, is the attribute attack.)

Each result is a frozen dataclass with its figures, ``to_dict()`` (strict JSON: no NaN; its sentence, one
plain sentence, is worded above the figures, :mod:`memviz.verdict.evidence_words`), and where it can, a per-training-row frame (``rows``, keyed
by ``row_id``) naming the rows most exposed. Unlike the ratio test, none of them has a floor
to subtract: each is read against its own control, the hold-out.

:func:`audit_evidence` is the form :func:`memviz.audit` runs by default, at a cost bounded by
what one memorization pass costs (``benchmarks/bench_evidence.py``: target ≤ 2 passes at full
Adult), through reuse rather than approximation:

* data copying: L(g) = d(g, T) and L(h) = d(h, T) are the nearest-training-row distances of the
  generated and the hold-out rows. With the audit's distance equal to :data:`DEFAULT_DISTANCE`
  they are the memorization pass's d1 (and one k = 1 query of the hold-out with the same
  engine); with the paper's distance one engine is fitted on the training rows with the
  standardized distance and answers both (k = 1, no furthest-row search), sharing the audit
  engine's encoder and categorical tables (``NeighborEngine.fit(..., like=engine)``); the cells
  come from that engine's own coordinates and codes. k-means on at most
  :data:`~memviz.evidence.datacopying.KMEANS_ROWS` training rows;
* membership: one engine on the generated rows answers the training and the hold-out rows;
* attribute: the secret is the target column (or, without one, the first distance column,
  :data:`AUDIT_SECRETS` names the rule): one engine on the generated rows' known columns. Every
  other column costs one more such fit and query; pass ``secret=`` to attack more
  (:func:`privacy_evidence` attacks every column by default);
* every column is factorized once for all the engines (:func:`~memviz.tables.encoding.shared_factorizations`),
  and the hold-out's training-row check reads those factorizations (:func:`~memviz.tables.holdout.row_hashes`);
* the hold-out is checked once (:func:`~memviz.tables.holdout.checked_holdout`: columns, rows, training rows)
  and the :class:`~memviz.tables.holdout.CheckedHoldout` is what every test takes (:func:`memviz.audit`
  makes it before the evidence, so this call checks nothing again);
* the data-copying test and the membership attack run side by side on two threads (the
  attribute attack on the caller's), each search on one thread of its own: a k = 1 search holds
  the GIL for much of its time and gains little from a second thread, two such searches side
  by side gain about 1.3×;
* density ratio: at most :data:`~memviz.evidence.densityratio.AUDIT_LIMITS` rows (seeded draws:
  4,096 members and 4,096 non-members against 8,192 generated and 8,192 hold-out centres), on the
  caller's thread after the attribute attack; the rows the ratio test names are scored too.

:meth:`Evidence.attack_readings` reads every membership attack on one scale (its statistic, interval
and calibrated p-value, :mod:`memviz.evidence.attack_readings`); :func:`memviz.evidence.attack_readings.strongest`
takes the worst case over them, each at its own level.

The result is an :class:`Evidence`: frozen, typed, and a read-only mapping from test name to result.
"""
from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from memviz.engine.distributed import on_cluster
from memviz.evidence.article29 import Article29Result, linkability, singling_out
from memviz.evidence.attribute import N_ROWS, AttributeResult, attribute_inference
from memviz.evidence.densityratio import AUDIT_LIMITS, DensityRatioResult, density_ratio_attack
from memviz.evidence.datacopying import DataCopyingResult, data_copying_test
from memviz.tables.holdout import CheckedHoldout, as_table, checked_holdout
from memviz.evidence.membership import (
    DEFAULT_DISTANCE,
    MembershipResult,
    check_distance,
    membership_inference,
    synthetic_engine,
)
from memviz.device import cpu_threads, limit_threads
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption
from memviz.tables.data import Table
from memviz.tables.encoding import shared_factorizations

log = logging.getLogger(__name__)

TESTS = ("membership", "data_copying", "attribute", "density_ratio", "singling_out", "linkability")
#: each test's name in a sentence (the report's "Other tests", the verdict's qualifier)
TEST_NAMES = {"membership": "the membership attack", "data_copying": "the data-copying test",
              "attribute": "the attribute attack", "density_ratio": "the density-ratio attack",
              "singling_out": "singling out", "linkability": "linkability",
              "targeted": "the targeted shadow-model attack"}
#: the audit's attribute secret: the target column, else the first distance column
AUDIT_SECRETS = "target"
FORMAT = "memviz.measure.evidence/1"  # a format name, kept when the module moved


@dataclass(frozen=True, eq=False)
class Evidence(Mapping):
    """The tests beyond the ratio test that an :class:`~memviz.auditing.result.Audit` carries.

    A read-only mapping from test name (:data:`TESTS`, then any ``extra`` names) to its result,
    each with ``to_dict()`` and, where it reads as copying, ``flags_copying`` (its sentence:
    :func:`memviz.verdict.evidence_words.evidence_sentences`).

    membership, data_copying, attribute, density_ratio : the results, None when not run.
    extra : further (name, result) pairs a caller supplied (e.g. ``("targeted", TargetedResult)``,
        :func:`memviz.attacks.store.with_attack`).
    distance : the distance the distance-based tests used.
    seconds : wall time of :func:`audit_evidence`.
    """

    membership: MembershipResult | None = None
    data_copying: DataCopyingResult | None = None
    attribute: AttributeResult | None = None
    density_ratio: DensityRatioResult | None = None
    singling_out: Article29Result | None = None
    linkability: Article29Result | None = None
    extra: tuple = ()
    distance: str = DEFAULT_DISTANCE
    seconds: float = 0.0

    @classmethod
    def of(cls, tests: "Mapping | Evidence | None") -> "Evidence":
        """An Evidence from another one, None (empty) or a mapping of name → result."""
        if isinstance(tests, Evidence):
            return tests
        tests = dict(tests or {})
        types = {"membership": MembershipResult, "data_copying": DataCopyingResult, "attribute": AttributeResult,
                 "density_ratio": DensityRatioResult, "singling_out": Article29Result,
                 "linkability": Article29Result}
        known = {k: tests[k] for k in TESTS if isinstance(tests.get(k), types[k])}
        return cls(**known, extra=tuple((k, v) for k, v in tests.items() if k not in known))

    def _pairs(self) -> list:
        out = [(k, getattr(self, k)) for k in TESTS if getattr(self, k) is not None] + list(self.extra)
        return sorted(out, key=lambda kv: TESTS.index(kv[0]) if kv[0] in TESTS else len(TESTS))

    def __getitem__(self, key):
        for k, v in self._pairs():
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self):
        return iter([k for k, _ in self._pairs()])

    def __len__(self) -> int:
        return len(self._pairs())

    @property
    def flags_copying(self) -> tuple[str, ...]:
        """The names of the tests that read as copying (their ``flags_copying`` is True)."""
        return tuple(k for k, v in self._pairs() if getattr(v, "flags_copying", None) is True)

    def with_extra(self, name: str, result) -> "Evidence":
        """This evidence with ``name`` → ``result`` added to (or replacing it in) :attr:`extra`."""
        if name in TESTS:
            raise ValueError(f"{name!r} is one of the typed tests; construct Evidence with it instead")
        extra = tuple((k, v) for k, v in self.extra if k != name) + ((name, result),)
        return Evidence(self.membership, self.data_copying, self.attribute, self.density_ratio, self.singling_out,
                        self.linkability, extra, self.distance, self.seconds)

    def attack_readings(self) -> tuple:
        """Every membership attack's :class:`~memviz.evidence.attack_readings.AttackReading` (the results that have
        ``reading()``: the distance attack, the density-ratio attack, a targeted attack in :attr:`extra`),
        in :data:`TESTS` order, then the extra ones."""
        out = []
        for _, v in self._pairs():
            r = v.reading() if callable(getattr(v, "reading", None)) else None
            if r is not None:
                out.append(r)
        return tuple(out)


def audit_secrets(schema) -> tuple[str, ...]:
    """The audit's attribute secret (:data:`AUDIT_SECRETS`): the target, else the first distance column."""
    cols = schema.distance_numerical + schema.distance_categorical
    if schema.target in cols:
        return (schema.target,)
    cat = schema.distance_categorical
    return (cat[0],) if cat else cols[:1]


def audit_evidence(train: Table, synthetic: Table, holdout: CheckedHoldout | Table, *, engine: NeighborEngine | None = None,
                   d1_synthetic=None, nn1_synthetic=None, device: str = "auto", seed: int = 0, secret=None,
                   flagged_row_ids=None, d1_holdout=None, nn1_holdout=None, remote=None) -> Evidence:
    """The four tests with the reuse of the module docstring, for :func:`memviz.audit`.

    Parameters
    ----------
    train, synthetic : Tables of the training schema (the audit's).
    holdout : the hold-out, a :class:`~memviz.tables.holdout.CheckedHoldout` (:func:`memviz.audit` makes it
        once), else a Table checked here by :func:`~memviz.tables.holdout.checked_holdout`; every test
        takes it as is.
    engine : the audit's engine on ``train``; reused when its distance is :data:`DEFAULT_DISTANCE`.
    d1_synthetic, nn1_synthetic : (M,) the memorization pass's NN1 distances and training positions
        (``nn1_pos``) of ``synthetic`` under ``engine``.
    d1_holdout, nn1_holdout : (H,) the same of ``holdout`` when the caller already searched them (the
        audit's closeness tests, :mod:`memviz.measure.tooclose`).
    secret : the attribute attack's secret column(s) (default: :func:`audit_secrets`).
    flagged_row_ids : the ratio test's over-copied rows (the membership overlap).
    remote : a callable that takes a fitted engine and returns one offering the same searches elsewhere
        (:class:`memviz.engine.distributed.Remote`: a Dask cluster); the engines fitted here (the
        membership attack's, the data-copying test's when ``engine`` is not reused) go through it. The
        attribute attack fits and searches inside :func:`~memviz.evidence.attribute.attribute_inference`
        (at most 2 × ``N_ROWS`` query rows): here. None (default): every search here.

    Returns
    -------
    Evidence
    """
    t0 = time.perf_counter()
    dist = DEFAULT_DISTANCE
    checked = checked_holdout(train, holdout)                # once, for the four tests
    hold = checked.table
    # the data-copying test and the membership attack run side by side: two engines, two query
    # sets each, searches that hold the GIL for much of their time and gain little from a
    # second thread of their own (benchmarks/bench_evidence.py), so one thread each
    jobs = max(1, cpu_threads() // 2)

    def copying() -> DataCopyingResult:
        distances = positions = None
        if engine is not None and engine.distance == dist:
            t_engine = engine
            if d1_synthetic is not None:
                if d1_holdout is None:
                    nh = engine.kneighbors(hold, k=1)
                    d_h, p_h = nh.dist[:, 0], nh.pos[:, 0]
                else:                                         # the audit's closeness tests searched them
                    d_h, p_h = d1_holdout, nn1_holdout
                distances = (d1_synthetic, d_h)
                positions = (nn1_synthetic, p_h) if nn1_synthetic is not None and p_h is not None else None
        else:
            t_engine = on_cluster(NeighborEngine(distance=dist, device=device, n_jobs=jobs).fit(train, like=engine), remote)
        return data_copying_test(train, synthetic, checked, distance=dist, engine=t_engine, device=device, seed=seed,
                                 distances=distances, positions=positions)

    def membership() -> MembershipResult:
        return membership_inference(train, synthetic, checked, distance=dist,
                                    engine=on_cluster(synthetic_engine(synthetic, dist, device, n_jobs=jobs), remote),
                                    flagged_row_ids=flagged_row_ids)

    with shared_factorizations(), ThreadPoolExecutor(max_workers=2) as pool:
        # the three tests encode the same three frames: each column is factorized once
        dc_f, mi_f = (pool.submit(contextvars.copy_context().run, f) for f in (copying, membership))
        secrets = secret if secret is not None else audit_secrets(train.schema)
        n_cols = len(train.schema.distance_numerical + train.schema.distance_categorical)
        ai = attribute_inference(train, synthetic, checked, secret=secrets, distance=dist, device=device,
                                 seed=seed) if n_cols > 1 else None      # one column: nothing left to know
        with limit_threads(jobs):                             # beside the two searches
            dr = density_ratio_attack(train, synthetic, checked, flagged_row_ids=flagged_row_ids, seed=seed,
                                      device=device, **AUDIT_LIMITS)
            so = singling_out(train, synthetic, hold, seed=seed)
            lk = linkability(train, synthetic, hold, seed=seed, device=device)
        dc, mi = dc_f.result(), mi_f.result()
    for name, r in (("data copying", dc), ("membership", mi), ("attribute inference", ai), ("density ratio", dr),
                    ("singling out", so), ("linkability", lk)):
        if r is not None and getattr(r, "seconds", None) is not None:
            log.info("%s test: %.2f s", name, r.seconds)
    return Evidence(membership=mi, data_copying=dc, attribute=ai, density_ratio=dr, singling_out=so,
                    linkability=lk, distance=dist, seconds=time.perf_counter() - t0)


def privacy_evidence(train: Table, synthetic, holdout, *, engine: NeighborEngine | None = None,
                     distance: str = DEFAULT_DISTANCE, secret=None, known=None, seed: int = 0,
                     n_attribute_rows: int = N_ROWS, n_cells: int | None = None, flagged_row_ids=None,
                     device: str = "auto", tests=TESTS) -> dict:
    """The four tests (module docstring) with their documented defaults.

    Parameters
    ----------
    train : the training table.
    synthetic : the generated rows (a Table or a DataFrame with the training columns).
    holdout : real rows the model never trained on (the test split or a hold-out): a
        :class:`~memviz.tables.holdout.CheckedHoldout`, else checked once here
        (:func:`~memviz.tables.holdout.checked_holdout`) for every test.
    engine : a :class:`NeighborEngine` fitted on ``train`` with ``distance`` (the warm-up's); the
        data-copying test takes its encoding for the cells. The membership attack fits one engine
        on the generated rows; the attribute attack one per secret on its known columns.
    distance : ``"standardized"`` (default; :mod:`memviz.evidence.membership` says why not the
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
        "attribute": AttributeResult, "density_ratio": DensityRatioResult} for the tests asked, plus
        nothing else. The density-ratio attack runs with its module's defaults (every row scored,
        up to :data:`~memviz.evidence.densityratio.MAX_CENTRES` centres per density).
    """
    check_distance(distance)
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise BadOption(f"test {unknown[0]!r}: unknown (use {', '.join(TESTS)})")
    synth = as_table(train, synthetic, "synthetic", "synthetic table")
    out = {}
    with shared_factorizations():                          # the check and the tests encode the same frames
        hold = checked_holdout(train, holdout)             # checked once here, for every test below
        if "membership" in tests:
            s_engine = synthetic_engine(synth, distance, device)
            out["membership"] = membership_inference(train, synth, hold, distance=distance, engine=s_engine,
                                                     flagged_row_ids=flagged_row_ids)
        if "data_copying" in tests:
            out["data_copying"] = data_copying_test(train, synth, hold, distance=distance, n_cells=n_cells,
                                                    engine=engine, device=device, seed=seed)
        if "attribute" in tests:
            out["attribute"] = attribute_inference(train, synth, hold, secret=secret, known=known,
                                                   n_rows=n_attribute_rows, distance=distance, device=device,
                                                   seed=seed)
        if "density_ratio" in tests:
            out["density_ratio"] = density_ratio_attack(train, synth, hold, flagged_row_ids=flagged_row_ids,
                                                        seed=seed, device=device)
        if "singling_out" in tests:
            out["singling_out"] = singling_out(train, synth, hold.table, seed=seed)
        if "linkability" in tests:
            out["linkability"] = linkability(train, synth, hold.table, seed=seed, device=device)
    return out
