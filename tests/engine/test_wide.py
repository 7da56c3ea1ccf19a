"""The wide search (matrix-product bounds, then exact differences): bit for bit the exact
formula over all reference rows, on wide, all-numerical and adversarial tables."""
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import naive_memorization

from memviz.engine import wide
from memviz.measure.memorization import memorization
from memviz.engine.neighbors import NeighborEngine
from memviz.tables.data import Table
from memviz.tables.schema import Schema


def table(num: np.ndarray, cat: np.ndarray | None = None, name="wide") -> tuple[Table, Schema]:
    cols = {f"x{j}": num[:, j] for j in range(num.shape[1])}
    if cat is not None:
        cols.update({f"c{j}": np.array([f"v{v}" for v in cat[:, j]], dtype=object) for j in range(cat.shape[1])})
    df = pd.DataFrame(cols)
    df.index = pd.Index(np.arange(len(df)), name="row_id")
    schema = Schema(numerical=tuple(c for c in cols if c[0] == "x"),
                    categorical=tuple(c for c in cols if c[0] == "c"), target=None, task="none")
    return Table(df, schema, name), schema


def frame(num, cat=None):
    return table(num, cat)[0].data.reset_index(drop=True)


def brute(engine: NeighborEngine, queries: pd.DataFrame, k: int):
    """The exact formula over every reference row, one query row at a time: squares of
    x - g summed left to right, min-max scaling, h, then the k smallest (d, position). The
    wide search must return exactly this."""
    ref_y, ref_cat = engine._dense_input
    enc = engine.encoder_.transform(queries)
    y = engine._coords(enc.num, "q")
    n = engine.p_ + engine.q_
    pos, dist = [], []
    for i in range(len(y)):
        diff = ref_y - y[i]
        e = np.sqrt(wide.exact_sum(np.square(diff, out=diff)))
        if engine.distance == "paper":
            lo, span = e.min(), e.max() - e.min()
            t = (e - lo) / (span if span > 0 else 1.0)
        else:
            t = e
        h = (ref_cat != enc.cat[i]).sum(axis=1)
        d = (t + h) / n
        order = np.lexsort((np.arange(len(d)), d))[:k]
        pos.append(order), dist.append(d[order])
    return np.array(pos), np.array(dist)


def assert_exact(train: Table, queries: pd.DataFrame, distance: str, k: int = 2, **kw):
    eng = NeighborEngine(distance=distance, device="cpu", algorithm="wide", **kw).fit(train)
    got = eng.kneighbors(queries, k)
    want_p, want_d = brute(eng, queries, k)
    np.testing.assert_array_equal(got.pos, want_p)
    np.testing.assert_array_equal(got.dist, want_d)
    return got


def wide_case(seed, n=700, m=120, p=40, q=2, scales=None):
    rng = np.random.default_rng(seed)
    scales = 10.0 ** rng.integers(-3, 7, p) if scales is None else scales
    num = rng.normal(size=(n, p)) * scales
    num[:, ::5] = np.round(num[:, ::5])                              # integer columns: exact ties
    cat = rng.integers(0, 3, (n, q)) if q else None
    g = rng.normal(size=(m, p)) * scales
    gc = rng.integers(0, 3, (m, q)) if q else None
    src = rng.integers(0, n, m)
    g[:30] = num[src[:30]]                                           # exact copies
    g[30:60] = num[src[30:60]]
    g[30:60, 3] = np.nextafter(g[30:60, 3], np.inf)                   # one ulp away
    g[60:80] = num[src[60:80]] * (1 + 1e-9)                          # near copies
    if q:
        gc[:80] = cat[src[:80]]
    num[10:20] = num[0]                                              # duplicated training rows
    if q:
        cat[10:20] = cat[0]
    return num, cat, g, gc


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("q", [0, 2, 5])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_wide_search_equals_the_exact_formula_bit_for_bit(distance, q, k):
    num, cat, g, gc = wide_case(q * 10 + k, q=q)
    train, _ = table(num, cat)
    got = assert_exact(train, frame(g, gc), distance, k)
    assert got.n_pruned == len(g)                                    # all answered by the wide search


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_wide_search_matches_the_row_at_a_time_reference(distance):
    num, cat, g, gc = wide_case(3, n=500, m=80, p=36)
    train, schema = table(num, cat)
    res = memorization(train, frame(g, gc), engine=NeighborEngine(distance=distance, device="cpu").fit(train))
    assert NeighborEngine(distance=distance, device="cpu").fit(train).algorithm_ == "wide"   # auto, p > 32
    ref = naive_memorization(train.data.reset_index(drop=True), frame(g, gc), list(schema.numerical),
                             list(schema.categorical), distance=distance)
    np.testing.assert_array_equal(res.nn1_pos[:30], ref["nn1"][:30])  # exact copies
    sep = (ref["d2"] - ref["d1"]) > 1e-6
    np.testing.assert_array_equal(res.nn1_pos[sep], ref["nn1"][sep])
    np.testing.assert_allclose(res.d1, ref["d1"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.d2, ref["d2"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(res.ratio), np.isnan(ref["ratio"]))


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("magnitude", [1e-300, 1e-140, 1.0, 1e140, 1e300])
def test_large_and_small_magnitudes(distance, magnitude):
    num, cat, g, gc = wide_case(7, n=400, m=80)
    train, _ = table(num * magnitude, cat)
    assert_exact(train, frame(g * magnitude, gc), distance)


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_finite_extremes_and_an_outlier_row(distance, monkeypatch):
    """One training value 1e54 times the others and one query row far out: E is then huge
    against the other distances, rows go to the dense path where the bound cannot prune, and
    the answer stays the exact formula's (beyond ~1e100 the other coordinates fall below
    2^-450 and every row takes the per-pair scaled dense pass, see ``kernels.tiny_rows``)."""
    num, cat, g, gc = wide_case(8, n=400, m=60)
    num[5, 2] = 1.5e60
    g[40, 7] = -1e58
    train, _ = table(num, cat)
    eng = NeighborEngine(distance=distance, device="cpu", algorithm="wide").fit(train)
    got = eng.kneighbors(frame(g, gc), 2)
    want_p, want_d = brute(eng, frame(g, gc), 2)
    np.testing.assert_array_equal(got.pos, want_p)
    np.testing.assert_array_equal(got.dist, want_d)
    # rows needing more blocks than the cap go to the dense path: equal up to the order of
    # the p squares' sum
    monkeypatch.setattr(wide, "MIN_CAP", 0)
    got = eng.kneighbors(frame(g, gc), 2)
    assert got.n_exhaustive > 0
    np.testing.assert_array_equal(got.pos, want_p)
    np.testing.assert_allclose(got.dist, want_d, rtol=1e-13, atol=0)


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_a_cluster_finer_than_float32_needs_the_bound(distance, monkeypatch):
    """300 training rows within 1e-3 of one point whose coordinates are ~1e3 (1e-6 relative,
    below what the float32 product resolves on e^2 ~ 1e6), and query rows inside the cluster:
    only exact differences order them. With the rounding bound switched off the search returns
    wrong rows (so this test can see a wrong bound); with it, the exact ones."""
    rng = np.random.default_rng(0)
    p = 40
    base = rng.normal(size=p) * 1e3
    num = np.concatenate([base + rng.normal(size=(300, p)) * 1e-3, rng.normal(size=(1700, p)) * 1e3])
    rng.shuffle(num)
    g = base + rng.normal(size=(60, p)) * 1e-3
    train, _ = table(num)
    assert_exact(train, frame(g), distance)
    monkeypatch.setattr(wide.WideIndex, "_bounds", _without_bound(wide.WideIndex._bounds))
    eng = NeighborEngine(distance=distance, device="cpu", algorithm="wide").fit(train)
    want_p, _ = brute(eng, frame(g), 2)
    assert (eng.kneighbors(frame(g), 2).pos != want_p).any()


def _without_bound(bounds):
    def run(self, yq):
        bmin, bmax, ng2, E, *rest = bounds(self, yq)
        return (bmin, bmax, ng2, E * 0.0, *rest)
    return run


def test_blocks_tiles_and_threads_do_not_change_results(monkeypatch):
    num, cat, g, gc = wide_case(11, n=300, m=90, p=34)
    train, _ = table(num, cat)
    base = NeighborEngine(device="cpu", algorithm="wide", n_jobs=1).fit(train).kneighbors(frame(g, gc), 3)
    monkeypatch.setattr(wide, "BLOCK", 3)
    monkeypatch.setattr(wide, "TILE", 4)
    eng = NeighborEngine(device="cpu", algorithm="wide", n_jobs=2).fit(train)
    pos, dist = _out(len(g), 3)
    done = eng.wide_.kneighbors(*_query(eng, frame(g, gc)), 3, pos, dist, 2, None, rows_per_task=7)
    assert done.all()
    np.testing.assert_array_equal(pos, base.pos)
    np.testing.assert_array_equal(dist, base.dist)


def _query(eng, df):
    enc = eng.encoder_.transform(df)
    return eng._coords(enc.num, "q"), enc.cat


def _out(m, k):
    return np.empty((m, k), dtype=np.int64), np.empty((m, k))


def test_auto_takes_the_wide_search_above_32_numerical_columns_and_not_below():
    for p, want in ((32, "pruned"), (33, "wide")):
        num, cat, _, _ = wide_case(1, n=300, m=1, p=p)
        assert NeighborEngine(device="cpu").fit(table(num, cat)[0]).algorithm_ == want
    num, _, _, _ = wide_case(1, n=300, m=1, p=40, q=0)
    cat_only, _ = table(num[:, :0], np.zeros((300, 2), dtype=int))
    assert NeighborEngine(device="cpu", algorithm="wide").fit(cat_only).algorithm_ == "dense"


def test_columns_taken_through_their_norm_need_the_upper_bound():
    """Two wide-range columns (±1000) and 30 narrow ones (sd 6, 5e-4 of the sum of squares):
    the product takes the narrow ones through their norm only, which bounds s from below;
    min e and max e (decided here by the narrow columns among rows tied on the wide ones)
    need the upper bound t + 4·ρ(g)·ρ(x) to keep their blocks. A categorical column follows
    the wide ones, so the rows at +1000 and at -1000 sit in blocks of their own and the blocks
    read for min e and the nearest rows do not also cover max e. Exact with the slack, wrong
    rows or distances without it (so this test can see a missing slack)."""
    rng = np.random.default_rng(5)
    n, m = 640, 40
    side = rng.choice([-1000.0, 1000.0], (n, 1))
    num = np.concatenate([np.repeat(side, 2, axis=1), rng.normal(size=(n, 30)) * 6.0], axis=1)
    cat = (side > 0).astype(int)
    g = np.concatenate([np.full((m, 2), 1000.0), rng.normal(size=(m, 30)) * 6.0], axis=1)
    gc = np.ones((m, 1), dtype=int)
    train, _ = table(num, cat)
    eng = NeighborEngine(distance="paper", device="cpu", algorithm="wide").fit(train)
    assert len(eng.wide_.sel) == 2 and len(eng.wide_.rest) == 30
    assert_exact(train, frame(g, gc), "paper")
    eng.wide_.qmax = np.zeros_like(eng.wide_.qmax)                  # no slack
    eng.wide_.rhox = np.zeros_like(eng.wide_.rhox)
    got = eng.kneighbors(frame(g, gc), 2)
    want_p, want_d = brute(eng, frame(g, gc), 2)
    assert (got.pos != want_p).any() or (got.dist != want_d).any()


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_query_rows_beyond_float32_products_go_to_the_dense_path(distance):
    """A query value 1e25 times the training magnitudes: (|V| + R)^2 passes 2^120, its
    float32 product could overflow, so the row is not answered by the wide search but by the
    dense path, still exactly; the other rows stay with the wide search."""
    num, cat, g, gc = wide_case(9, n=300, m=40)
    g[5, 4] = 1e25 * np.abs(num).max()
    train, _ = table(num, cat)
    got = assert_exact(train, frame(g, gc), distance)
    assert got.n_exhaustive == 1 and got.n_pruned == len(g) - 1


@settings(max_examples=int(os.environ.get("MEMVIZ_EXAMPLES", 100)) // 10, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n_wide=st.integers(1, 12), spread=st.sampled_from([1e2, 1e3, 1e5]),
       q=st.integers(0, 3), k=st.integers(1, 4), distance=st.sampled_from(["paper", "standardized"]),
       small=st.booleans())
def test_columns_through_their_norm_on_random_tables(seed, n_wide, spread, q, k, distance, small):
    """Random tables of 34 numerical columns, n_wide of them `spread` times wider than the
    rest (so the product takes the rest through its norm), integer columns (ties), duplicated
    training rows, exact and one-ulp copies: bit for bit the exact formula. ``small``: blocks
    of 4 rows in tiles of 3 blocks (many tiles, blocks of padding only, tasks of 16 query
    rows), so the per-tile selection and the first blocks' choice across tiles are tested too."""
    rng = np.random.default_rng(seed)
    p, n, m = 34, 200, 24
    scales = np.where(np.arange(p) < n_wide, spread, 1.0) * rng.uniform(0.5, 2.0, p)
    num = rng.normal(size=(n, p)) * scales
    num[:, 1::4] = np.round(num[:, 1::4])
    num[5:9] = num[4]
    cat = rng.integers(0, 3, (n, q)) if q else None
    g = rng.normal(size=(m, p)) * scales
    src = rng.integers(0, n, m)
    g[:8] = num[src[:8]]
    g[4:8, 0] = np.nextafter(g[4:8, 0], np.inf)
    gc = rng.integers(0, 3, (m, q)) if q else None
    if q:
        gc[:8] = cat[src[:8]]
    train, _ = table(num, cat)
    saved = wide.BLOCK, wide.TILE, wide.PAIRS
    if small:
        wide.BLOCK, wide.TILE, wide.PAIRS = 4, 3, 5 * 51
    try:
        got = assert_exact(train, frame(g, gc), distance, k)
    finally:
        wide.BLOCK, wide.TILE, wide.PAIRS = saved
    assert got.n_pruned == m


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_an_unseen_category_does_not_share_a_tuple_key_with_another_tuple(distance):
    """Query tuples are told apart by one int64 key of their codes; an unseen category is code
    -1, so (1, -1) and (0, 1) had the same key (radix 2) and the second tuple's mismatches were
    read for the first. Both in one task: exact."""
    rng = np.random.default_rng(4)
    num = rng.normal(size=(300, 36))
    cat = rng.integers(0, 2, (300, 2))
    g = rng.normal(size=(40, 36))
    gc = np.tile([[0, 1], [1, 9]], (20, 1))                           # 9: a value training never had
    train, _ = table(num, cat)
    assert_exact(train, frame(g, gc), distance)
