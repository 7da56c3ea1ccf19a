import numpy as np
import pytest
import torch

from memviz.engine.kernels import smallest


@pytest.mark.parametrize("n", [5, 63, 64, 1000, 4097])
@pytest.mark.parametrize("kc", [1, 3, 8])
def test_block_selection_equals_topk(n, kc):
    if kc > n:
        pytest.skip("k larger than the row")
    gen = torch.Generator().manual_seed(n * 10 + kc)
    # integer-valued keys: many ties, values in every block and in the tail
    key = torch.randint(0, 50, (7, n), generator=gen).to(torch.float64)
    v, pos = smallest(key, kc)
    ref, _ = torch.topk(key, kc, dim=1, largest=False)
    torch.testing.assert_close(v, ref)
    torch.testing.assert_close(torch.gather(key, 1, pos), v)   # positions point at those values
    assert all(len(set(row)) == kc for row in pos.tolist())   # no position twice


def test_block_selection_finds_minima_in_the_tail():
    key = torch.full((2, 1000), 5.0, dtype=torch.float64)
    key[0, 999], key[1, 960] = -1.0, -2.0          # beyond the last full 64-block (960)
    v, pos = smallest(key, 3)
    assert pos[0, 0] == 999 and pos[1, 0] == 960
    assert np.allclose(v[:, 1:].numpy(), 5.0)


# ------------------------------------------------------------ the pruned search
import pandas as pd  # noqa: E402

from memviz.engine import pruned  # noqa: E402
from memviz.engine.kernels import resolve_ties  # noqa: E402
from memviz.engine.neighbors import NeighborEngine  # noqa: E402
from memviz.tables.data import Table  # noqa: E402
from memviz.tables.schema import Schema  # noqa: E402


@pytest.mark.parametrize("leaf", [1, 2, 32])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (300, 2), (1000, 6)])
def test_box_tree_max_e_equals_brute_force(leaf, shape, monkeypatch):
    monkeypatch.setattr(pruned, "LEAF", leaf)
    rng = np.random.default_rng(leaf * 1000 + shape[0])
    y = rng.normal(size=shape) * rng.choice([1.0, 1e5], shape[1])
    y[: shape[0] // 3] = y[0]                                   # repeated rows
    index = pruned.PrunedIndex(y, np.zeros((shape[0], 0), dtype=np.int64), np.zeros(0), "paper")
    g = np.concatenate([rng.normal(size=(50, shape[1])) * 3e5, y[:5]])
    top, hard = index.boxes.farthest(index, g)
    assert hard.mean() < 0.5
    brute = np.array([np.sqrt(np.square(y - gi).sum(axis=-1)).max() for gi in g])
    np.testing.assert_array_equal(top[~hard], brute[~hard])    # bit-identical: same formula, exact bound


def test_topk_orders_by_distance_then_position():
    qi = np.array([0, 0, 0, 0, 1, 1, 2])
    pos = np.array([9, 4, 7, 1, 3, 2, 5])
    d = np.array([0.5, 0.2, 0.2, 0.9, 0.0, 0.0, 0.1])
    p, v = pruned.smallest_k(qi, pos, d, 4, 2, 10)
    np.testing.assert_array_equal(p, [[4, 7], [2, 3], [5, -1], [-1, -1]])
    np.testing.assert_array_equal(v[:3], [[0.2, 0.2], [0.0, 0.0], [0.1, np.inf]])


def test_resolve_ties_takes_the_lowest_positions_from_the_full_row():
    d = torch.tensor([[3.0, 1.0, 2.0, 2.0, 2.0, 0.5, 2.0]], dtype=torch.float64)
    # a candidate list that ties at rank 2 and 3 with value 2.0, listing positions 4 and 6
    cand = torch.tensor([[5, 1, 4, 6]])
    vals = torch.tensor([[0.5, 1.0, 2.0, 2.0]], dtype=torch.float64)
    p, v = resolve_ties(d, cand, vals, 4)
    assert p.tolist() == [[5, 1, 2, 3]] and v.tolist() == [[0.5, 1.0, 2.0, 2.0]]


def _adult_like(n, seed, n_num=3, n_cat=4):
    rng = np.random.default_rng(seed)
    cols = {f"x{j}": rng.integers(0, 10 ** (j + 1), n).astype(float) for j in range(n_num)}
    cols.update({f"c{j}": rng.choice(list("abcdef")[: 2 + j], n).astype(object) for j in range(n_cat)})
    df = pd.DataFrame(cols)
    df.index = pd.Index(np.arange(n), name="row_id")
    schema = Schema(numerical=tuple(c for c in cols if c[0] == "x"),
                    categorical=tuple(c for c in cols if c[0] == "c"), target=None, task="none")
    return Table(df, schema, "adult-like")


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_pruned_equals_dense_bit_for_bit_on_the_adult_sample(sample, distance, k):
    train, test = sample
    syn = pd.concat([test.data, train.data.iloc[:300]], ignore_index=True)   # fresh rows and exact copies
    out = {alg: NeighborEngine(distance=distance, device="cpu", algorithm=alg).fit(train).kneighbors(syn, k)
           for alg in ("pruned", "dense")}
    np.testing.assert_array_equal(out["pruned"].pos, out["dense"].pos)
    np.testing.assert_array_equal(out["pruned"].dist, out["dense"].dist)
    assert out["pruned"].n_pruned > 0.9 * len(syn)                 # the search answered almost every row
    assert out["dense"].n_exhaustive == len(syn) and out["dense"].n_pruned == 0


def test_rows_beyond_two_mismatches_and_unprunable_tables_go_dense():
    train = _adult_like(600, 1)
    far = train.data.iloc[:40].copy()
    far[["c1", "c2", "c3"]] = "zz"                                # 3 unseen categories: h* = 3 > 2
    eng = NeighborEngine(device="cpu", algorithm="pruned").fit(train)
    nb = eng.kneighbors(pd.concat([far, train.data.iloc[:400]], ignore_index=True), 2)
    assert nb.n_exhaustive >= 40                                   # none of the far rows is pruned
    ref = NeighborEngine(device="cpu", algorithm="dense").fit(train).kneighbors(
        pd.concat([far, train.data.iloc[:400]], ignore_index=True), 2)
    np.testing.assert_array_equal(nb.pos, ref.pos)
    # most rows of the probe fail: the search leaves every row to the dense path
    nb = eng.kneighbors(pd.concat([far] * 10, ignore_index=True), 2)
    assert nb.n_pruned == 0 and nb.n_exhaustive == 400


def test_threads_sharing_a_fresh_engine_all_see_its_dense_tensors(sample, monkeypatch):
    """A Dask worker runs tasks on several threads against one engine; the dense pass's structures
    were built on first use with a mark ("already built") set before the others, so a second thread
    could find the mark and use structures before they existed (CI: AttributeError 'onehot_dtype_').
    ``dense_`` is set once whole; the slow build below widens the window."""
    import threading
    import time as _time

    from memviz.engine import cpudense

    train, test = sample
    engine = NeighborEngine(device="cpu", algorithm="dense").fit(train)
    ref = NeighborEngine(device="cpu", algorithm="dense").fit(train).kneighbors(test.data.iloc[:40], k=2)
    slow = cpudense.CpuDense.__init__

    def build(self, *args, **kw):
        _time.sleep(0.3)
        slow(self, *args, **kw)

    monkeypatch.setattr(cpudense.CpuDense, "__init__", build)
    out, errors = [None] * 4, []

    def query(i):
        try:
            out[i] = engine.kneighbors(test.data.iloc[:40], k=2)
        except Exception as e:  # noqa: BLE001 - the assertion below names it
            errors.append(repr(e))

    threads = [threading.Thread(target=query, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for nb in out:
        np.testing.assert_array_equal(nb.pos, ref.pos)
        np.testing.assert_array_equal(nb.dist, ref.dist)


def _passes(train, distance):
    """The reference rows of ``train`` as the numpy pass (the CPU's) and the torch pass (CUDA's) on
    CPU tensors, with the engine that fitted them (its coordinates and codes)."""
    from memviz.engine.cpudense import CpuDense
    from memviz.engine.densetorch import TorchDense

    engine = NeighborEngine(device="cpu", algorithm="dense", distance=distance).fit(train)
    y, cat = engine.reference_arrays()
    paper = distance == "paper"
    return (engine, CpuDense(y, cat, paper, engine.n_candidates),
            TorchDense(y, cat, engine.encoder_.n_categories, paper, engine.n_candidates, torch.device("cpu")))


def _query(engine, df):
    enc = engine.encoder_.transform(df)
    return engine._coords(enc.num, "query"), enc.cat


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_few_dense_rows_count_h_directly_and_agree_with_the_gemm_bit_for_bit(sample, distance):
    """The torch pass (CUDA's) counts the category mismatches of up to DIRECT_H_ROWS rows directly and
    of more rows by a one-hot GEMM; both, and the numpy pass the CPU runs (always direct), give the
    same answer bit for bit, unseen categories included."""
    from memviz.engine import densetorch

    train, test = sample
    q = test.data.iloc[:densetorch.DIRECT_H_ROWS].copy()
    cat = train.schema.distance_categorical[0]
    q[cat] = q[cat].astype(object)
    q.iloc[::7, q.columns.get_loc(cat)] = "never seen in training"
    engine, cpu, tor = _passes(train, distance)
    y, codes = _query(engine, q)
    got = cpu.block(y, codes, 2, cpu.workspace(len(y)))
    tor.prepare(len(y))
    assert not hasattr(tor, "x_onehot_t")                              # the table was not built
    direct = tor.block(y, codes, 2, tor.workspace(len(y)))
    tor.prepare(densetorch.DIRECT_H_ROWS + 1)
    assert hasattr(tor, "x_onehot_t")                                  # more rows: the GEMM
    gemm = tor.block(y, codes, 2, tor.workspace(len(y)))
    for a in (direct, gemm):
        np.testing.assert_array_equal(got[0], a[0])
        np.testing.assert_array_equal(got[1], a[1])
        assert got[2] == a[2]


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("hypot", [False, True])
def test_the_numpy_pass_equals_the_torch_pass_bit_for_bit_with_ties_and_magnitudes(distance, hypot):
    """The CPU's dense pass (numpy, no torch) against CUDA's (torch, here on CPU tensors): repeated
    rows (ties past the candidate list), magnitudes from 1e-300 to 1e300 (per-pair scaling), 1 to 6
    numerical columns, and no numerical column at all. (Three columns are left out of the plain
    pass: torch's CPU ``cdist`` sums three squares in an order of its own, which the engine's
    contract allows; the numpy pass sums them left to right, as the float64 loop does: next test.)"""
    from memviz.engine.cpudense import CpuDense
    from memviz.engine.densetorch import TorchDense

    rng = np.random.default_rng(7 + hypot)
    for p in (0, 1, 2, 4, 6):
        N, q = 700, 3
        y = rng.normal(size=(N, p)) * (10.0 ** rng.integers(-300, 300, (N, p)) if hypot else 1.0)
        y[100:160] = y[100]                                               # 60 equal rows: ties
        cat = rng.integers(0, 3, (N, q))
        cat[100:160] = cat[100]
        g = np.concatenate([y[95:105], rng.normal(size=(30, p))])
        gc = np.concatenate([cat[95:105], rng.integers(-1, 3, (30, q))])
        paper = distance == "paper"
        cpu = CpuDense(y, cat, paper, 8)
        tor = TorchDense(y, cat, np.array([3] * q), paper, 8, torch.device("cpu"))
        for k in (1, 2, 5):
            a = cpu.block(g, gc, k, cpu.workspace(len(g)), hypot)
            b = tor.block(g, gc, k, tor.workspace(len(g)), hypot)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
            assert a[2] == b[2]
            assert a[2] > 0                                                   # the ties were resolved


@pytest.mark.parametrize("p", range(1, 8))
def test_the_numpy_pass_sums_squares_as_the_float64_loop_does(p):
    """e of the CPU's dense pass is the float64 loop's sqrt(sum_j (g_j - x_j)^2), the squares summed
    left to right (numpy's reduction over fewer than 8 columns), bit for bit."""
    from memviz.engine.cpudense import CpuDense

    rng = np.random.default_rng(p)
    y = rng.normal(size=(300, p)) * 10.0 ** rng.integers(-100, 100, (300, p))
    g = rng.normal(size=(20, p)) * 10.0 ** rng.integers(-100, 100, (20, p))
    cpu = CpuDense(y, np.zeros((300, 0), dtype=np.int64), False, 8)
    ws = cpu.workspace(20)
    cpu.block(g, np.zeros((20, 0), dtype=np.int64), 1, ws)
    want = np.sqrt(np.square(y[None] - g[:, None]).sum(axis=-1))
    np.testing.assert_array_equal(ws["d"], want)



def test_an_engine_fitted_like_another_shares_its_encoder_and_groups_and_answers_the_same(sample):
    """``fit(train, like=paper_engine)`` with the standardized distance reuses the paper engine's
    encoder and categorical tables (the audit's data-copying test), builds its own trees, and
    answers exactly as a fresh fit; a ``like`` fitted on another Table object is ignored; the
    engine still pickles (Dask workers)."""
    import pickle

    train, test = sample
    paper = NeighborEngine(distance="paper", device="cpu").fit(train)
    fresh = NeighborEngine(distance="standardized", device="cpu").fit(train)
    shared = NeighborEngine(distance="standardized", device="cpu").fit(train, like=paper)
    assert shared.encoder_ is paper.encoder_ and shared.pruned_.tables is paper.pruned_.tables
    assert shared.pruned_.tree is not paper.pruned_.tree
    for k in (1, 2):
        a, b = fresh.kneighbors(test, k), shared.kneighbors(test, k)
        np.testing.assert_array_equal(a.pos, b.pos)
        np.testing.assert_array_equal(a.dist, b.dist)
    other = Table(train.data.copy(), train.schema, train.source)
    assert NeighborEngine(distance="standardized", device="cpu").fit(other, like=paper).encoder_ is not paper.encoder_
    back = pickle.loads(pickle.dumps(shared))
    np.testing.assert_array_equal(back.kneighbors(test, 1).pos, fresh.kneighbors(test, 1).pos)


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("k", [1, 3, 70])
def test_big_groups_share_one_lifted_tree_and_far_query_rows_fall_back_to_the_whole_group(distance, k):
    """Big groups (>= BIG rows) are searched in one k-d tree, each lifted apart by one more
    coordinate. A query row far outside the reference rows (farther than the lift) gets rows of
    another group in that tree's answer: its pair is then searched whole, and every answer equals
    the dense path's, bit for bit; k + 1 above BIG takes such groups whole instead."""
    from memviz.engine import pruned

    rng = np.random.default_rng(5)
    n = 900
    df = pd.DataFrame({"x0": rng.random(n), "x1": rng.random(n), "c0": rng.choice(list("abc"), n).astype(object)})
    df.index = pd.Index(np.arange(n), name="row_id")
    train = Table(df, Schema(numerical=("x0", "x1"), categorical=("c0",), target=None, task="none"), "big groups")
    eng = NeighborEngine(distance=distance, device="cpu", algorithm="pruned").fit(train)
    index = eng.pruned_
    assert (index.gsize >= pruned.BIG).all() and len(index.big_rows) == n      # three big groups, one tree
    q = df.sample(300, random_state=1).reset_index(drop=True)
    q.loc[:40, "x0"] = 1e6 * (1 + rng.random(41))       # so far that other groups' rows come first
    assert 1e6 * np.abs(index.y).max() > 1e4 * index.lift
    calls = []
    full = pruned.PrunedIndex._group_rows
    pruned.PrunedIndex._group_rows = lambda self, g: calls.append(g) or full(self, g)
    try:
        out = eng.kneighbors(q, k)
    finally:
        pruned.PrunedIndex._group_rows = full
    ref = NeighborEngine(distance=distance, device="cpu", algorithm="dense").fit(train).kneighbors(q, k)
    np.testing.assert_array_equal(out.pos, ref.pos)
    np.testing.assert_array_equal(out.dist, ref.dist)
    assert out.n_pruned == len(q)
    if k < pruned.BIG:
        assert len(calls) >= 30                                                 # far rows: whole groups


@pytest.mark.parametrize("k", [1, 2])
def test_near_ties_of_the_nearest_rows_are_settled_by_a_ball_not_the_dense_pass(k):
    """Issue 40: by the million, many reference rows share the numbers of a query row's nearest one, so its four
    nearest by the k-d tree tie with the nearest and min e could not be proved: those rows went to the dense pass
    (52 of 20,000 at 1,000,000 Adult-shaped rows, each a pass over every reference row). Every row that could
    be nearer lies in a ball of the tree's own distances: the pruned search answers them, exactly as the dense."""
    rng = np.random.default_rng(3)
    n = 2000
    train = _adult_like(n, 2, n_num=2, n_cat=3)
    train.data["x0"] = rng.integers(0, 5, n).astype(float)              # 25 numerical tuples, ~80 rows each
    train.data["x1"] = rng.integers(0, 5, n).astype(float)
    query = train.data.iloc[:300].copy().reset_index(drop=True)
    query["x0"] += 0.25                                                    # off the grid: e > 0, tied nearest rows
    out = {alg: NeighborEngine(device="cpu", algorithm=alg).fit(train).kneighbors(query, k)
           for alg in ("pruned", "dense")}
    np.testing.assert_array_equal(out["pruned"].pos, out["dense"].pos)
    np.testing.assert_array_equal(out["pruned"].dist, out["dense"].dist)
    assert out["pruned"].n_pruned == len(query)


def test_the_level_two_tables_are_built_up_to_their_bound_and_rows_beyond_it_go_dense(monkeypatch):
    """Issue 40: the level-2 tables (two columns left out) were built only while q(q-1)/2 · groups <= 4,000,000,
    which 1,000,000 Adult-shaped rows pass (195,901 groups): every query row two mismatches from its k nearest
    then went to the dense pass. Without the tables those rows go dense; with them the pruned search answers
    them; both equal the dense path."""
    train = _adult_like(3000, 4, n_num=2, n_cat=6)
    query = train.data.iloc[:400].copy().reset_index(drop=True)
    query[["c4", "c5"]] = "zz"                                             # two unseen categories: h* = 2
    dense = NeighborEngine(device="cpu", algorithm="dense").fit(train).kneighbors(query, 2)
    with_tables = NeighborEngine(device="cpu", algorithm="pruned").fit(train)
    assert with_tables.pruned_.max_level == 2
    a = with_tables.kneighbors(query, 2)
    monkeypatch.setattr(pruned, "MAX_LEVEL2", 0)
    without = NeighborEngine(device="cpu", algorithm="pruned").fit(train)
    assert without.pruned_.max_level == 1
    b = without.kneighbors(query, 2)
    for nb in (a, b):
        np.testing.assert_array_equal(nb.pos, dense.pos)
        np.testing.assert_array_equal(nb.dist, dense.dist)
    assert a.n_pruned == len(query) and b.n_pruned == 0
    t = with_tables.pruned_.tables[-1]
    assert t.order.dtype == np.int32 and t.keys.dtype == np.uint64       # positions in half the bytes
