"""The memorization engine against a row-at-a-time float64 reference (tests/naive.py).

Exactness contract of issue 2: the same memorized flag for every row whose naive r is
not within 1e-5 of 1/3, the same NN1 wherever naive d2 - d1 > 1e-6, r within 1e-5,
and the same NaN (0/0) pattern.
"""
import contextlib
import os

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import naive_memorization

from memviz.errors import MemvizError
from memviz.engine import pruned, wide
from memviz.measure.memorization import (
    THRESHOLD,
    mem_auc,
    mem_auc_trapezoid,
    memorization,
)
from memviz.engine.neighbors import NeighborEngine
from memviz.tables.data import Table, load_dataset
from memviz.tables.schema import Schema


# ----------------------------------------------------------------- helpers
def make_table(df: pd.DataFrame, num, cat, target=None, row_ids=None) -> Table:
    schema = Schema(numerical=tuple(num), categorical=tuple(cat), target=target,
                    task="binary" if target else "none")
    data = df.loc[:, list(schema.columns)].copy()
    ids = np.arange(len(df)) if row_ids is None else np.asarray(row_ids)
    data.index = pd.Index(ids.astype(np.int64), name="row_id")
    return Table(data, schema, "test-train")


def naive_for(train: Table, syn: pd.DataFrame, distance: str):
    """The reference on the same columns; the class target is written here as one more
    categorical column (not taken from Schema.distance_categorical)."""
    s = train.schema
    cats = list(s.categorical) + ([s.target] if s.target is not None else [])
    return naive_memorization(train.data.reset_index(drop=True), syn.reset_index(drop=True),
                              list(s.numerical), cats, distance=distance)


def assert_matches_naive(res, ref, train: Table | None = None):
    """The issue's exactness contract."""
    r, nr = res.ratio, ref["ratio"]
    np.testing.assert_array_equal(np.isnan(r), np.isnan(nr), err_msg="NaN (0/0) pattern differs")
    fin = ~np.isnan(nr)
    np.testing.assert_allclose(r[fin], nr[fin], rtol=0, atol=1e-5, err_msg="ratio")
    with np.errstate(invalid="ignore"):
        naive_mem = nr < THRESHOLD
    clear = ~(np.abs(nr - THRESHOLD) <= 1e-5)  # NaN rows are clear: both must say False
    np.testing.assert_array_equal(res.memorized[clear], naive_mem[clear], err_msg="memorized flag")
    sep = (ref["d2"] - ref["d1"]) > 1e-6
    np.testing.assert_array_equal(res.nn1_pos[sep], ref["nn1"][sep], err_msg="NN1 position")
    if train is not None:
        np.testing.assert_array_equal(res.nn1[sep], train.row_ids[ref["nn1"][sep]], err_msg="NN1 row_id")
    np.testing.assert_allclose(res.d1, ref["d1"], rtol=0, atol=1e-7)
    np.testing.assert_allclose(res.d2, ref["d2"], rtol=0, atol=1e-7)


#: "pruned_tiny": the pruned search with thresholds small enough that tables of a few
#: dozen rows reach its k-d tree groups, its box tree levels and its chunks;
#: "wide_tiny": the wide search with blocks of 2 rows and tiles of 2 blocks (many of each)
ALGORITHMS = ("dense", "pruned", "pruned_tiny", "wide", "wide_tiny")


@contextlib.contextmanager
def engine_for(algorithm, distance, **kw):
    """Yields ``make(train) -> fitted engine`` for one of ALGORITHMS (kept for the query too)."""
    saved = pruned.BIG, pruned.LEAF, pruned.CHUNK, pruned.PROBE
    saved_wide = wide.BLOCK, wide.TILE
    if algorithm == "pruned_tiny":
        pruned.BIG, pruned.LEAF, pruned.CHUNK, pruned.PROBE = 3, 2, 4, 5
    if algorithm == "wide_tiny":
        wide.BLOCK, wide.TILE = 2, 2
    try:
        yield lambda train: NeighborEngine(distance=distance, device="cpu", algorithm=algorithm.split("_")[0],
                                           **kw).fit(train)
    finally:
        pruned.BIG, pruned.LEAF, pruned.CHUNK, pruned.PROBE = saved
        wide.BLOCK, wide.TILE = saved_wide


NUM_KINDS = ("small_int", "wide_int", "fnlwgt", "float", "tiny_float", "const", "clustered_wide",
             "small_float")


def _num_column(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "small_int":
        return rng.integers(0, 6, n).astype(float)
    if kind == "wide_int":
        return rng.integers(-50_000, 50_000, n).astype(float)
    if kind == "fnlwgt":  # Adult's fnlwgt: integers up to ~1.5e6
        return rng.integers(10_000, 1_500_000, n).astype(float)
    if kind == "float":
        return rng.normal(0, 10.0 ** rng.integers(-2, 6), n)
    if kind == "tiny_float":
        return 1e6 + rng.normal(0, 1e-3, n)  # large offset, tiny spread: cancellation
    if kind == "clustered_wide":  # most rows share one wide value: clusters finer than the key resolves
        return np.where(rng.uniform(size=n) < 0.7, 1_434_567.0, rng.integers(10_000, 1_500_000, n))
    if kind == "small_float":
        return rng.normal(0, 0.01, n)
    return np.full(n, 7.0)


@st.composite
def mixed_case(draw):
    n_num = draw(st.integers(0, 4))
    n_cat = draw(st.integers(0 if n_num else 1, 4))
    num_kinds = [draw(st.sampled_from(NUM_KINDS)) for _ in range(n_num)]
    cat_sizes = [draw(st.integers(1, 4)) for _ in range(n_cat)]
    with_target = draw(st.booleans())
    n_train = draw(st.integers(12, 60))
    n_syn = draw(st.integers(1, 30))
    distance = draw(st.sampled_from(["paper", "standardized"]))
    missing = draw(st.booleans())
    dup_train = draw(st.booleans())
    chunk = draw(st.sampled_from([None, 1, 3]))  # None: one chunk; else rows per chunk
    algorithm = draw(st.sampled_from(ALGORITHMS))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(num_kinds=num_kinds, cat_sizes=cat_sizes, with_target=with_target, n_train=n_train,
                n_syn=n_syn, distance=distance, missing=missing, dup_train=dup_train, chunk=chunk,
                algorithm=algorithm, seed=seed)


def build_case(c):
    rng = np.random.default_rng(c["seed"])
    n, m = c["n_train"], c["n_syn"]
    num = [f"x{j}" for j in range(len(c["num_kinds"]))]
    cat = [f"c{j}" for j in range(len(c["cat_sizes"]))]

    def draw_rows(k):
        cols = {name: _num_column(kind, k, rng) for name, kind in zip(num, c["num_kinds"])}
        for j, (name, size) in enumerate(zip(cat, c["cat_sizes"])):
            codes = rng.integers(0, size, k)
            # alternate text and integer categories (canonicalization is part of the contract)
            cols[name] = np.array([f"v{v}" for v in codes] if j % 2 == 0 else list(codes), dtype=object)
        if c["with_target"]:
            cols["y"] = np.array(["no", "yes"], dtype=object)[rng.integers(0, 2, k)]
        return pd.DataFrame(cols)

    train = draw_rows(n)
    if c["with_target"]:
        train.loc[0, "y"], train.loc[1, "y"] = "no", "yes"
    if c["dup_train"]:  # a few exact duplicated training rows: 0/0 and tie handling
        src = rng.integers(0, n, 3)
        dst = rng.choice(n, 3, replace=False)
        for col in train.columns:  # column by column: pandas 3 string columns refuse 2-D row sets
            train.loc[dst, col] = train.loc[src, col].to_numpy()
    syn = draw_rows(m)
    for i in range(m):
        mode = rng.choice(["fresh", "copy", "near_num", "near_cat", "near_tiny"], p=[.3, .25, .2, .15, .1])
        if mode == "fresh":
            continue
        row = train.iloc[int(rng.integers(0, n))].copy()
        if mode == "near_num" and num:
            col = num[int(rng.integers(0, len(num)))]
            row[col] = row[col] + rng.choice([-1.0, 1.0, 0.5, 1e-4])
        elif mode == "near_tiny" and num:
            col = num[int(rng.integers(0, len(num)))]
            row[col] = row[col] * (1 + 1e-9)
        elif mode == "near_cat" and cat:
            col = cat[int(rng.integers(0, len(cat)))]
            row[col] = syn.loc[i, col]
        for col in syn.columns:
            syn.at[i, col] = row[col]
    if c["missing"]:
        for frame in (train, syn):
            for col in num + cat:
                hole = rng.uniform(size=len(frame)) < 0.15
                hole[0] = False  # never an all-missing column
                frame.loc[hole, col] = np.nan if col in num else None
    for col in num:
        train[col], syn[col] = train[col].astype(float), syn[col].astype(float)
    ids = rng.permutation(n) * 3 + 11  # row_ids that are neither positions nor sorted
    t = make_table(train, num, cat, "y" if c["with_target"] else None, row_ids=ids)
    return t, syn


@settings(max_examples=int(os.environ.get("MEMVIZ_EXAMPLES", 100)), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_case())
def test_matches_naive_reference_on_random_mixed_tables(case):
    train, syn = build_case(case)
    chunk = case["chunk"]
    with engine_for(case["algorithm"], case["distance"], chunk_elements=(1 << 19) if chunk is None
                    else chunk * len(train), n_jobs=None if chunk is None else 2) as make:
        res = memorization(train, syn, engine=make(train))
    assert_matches_naive(res, naive_for(train, syn, case["distance"]), train)


# ----------------------------------------------------- planted copies, row ids
def _mixed_frame(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 90, n).astype(float),
        "fnlwgt": rng.integers(10_000, 1_500_000, n).astype(float),
        "hours": rng.integers(1, 99, n).astype(float),
        "job": rng.choice(["a", "b", "c", "d"], n).astype(object),
        "sex": rng.choice(["F", "M"], n).astype(object),
        "y": rng.choice(["<=50K", ">50K"], n).astype(object),
    })


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_planted_near_copies_are_attributed_to_their_row_id(distance):
    full = make_table(_mixed_frame(200, 1), ["age", "fnlwgt", "hours"], ["job", "sex"], "y",
                      row_ids=np.arange(200) * 7 + 1000)
    dropped = np.arange(200)[::3] * 7 + 1000
    train = full.drop(dropped)  # row_ids 1007, 1014, 1028, ...: neither positions nor contiguous
    assert not np.array_equal(train.row_ids, np.arange(len(train)))
    src_pos = np.array([0, 5, 17, 60, len(train) - 1])
    syn = train.data.iloc[src_pos].reset_index(drop=True).copy()
    syn["fnlwgt"] += [1, -1, 0, 2, 0]
    syn["age"] += [0, 0, 1, 0, 0]
    res = memorization(train, syn, distance=distance, device="cpu")
    np.testing.assert_array_equal(res.nn1, train.row_ids[src_pos])
    np.testing.assert_array_equal(res.nn1_pos, src_pos)
    assert res.memorized.all()
    assert_matches_naive(res, naive_for(train, syn, distance), train)
    # the CLI view reports positions, the default view row_ids
    assert list(res.to_frame(positions=True)["nn1"]) == list(src_pos)
    assert list(res.to_frame()["nn1"]) == list(train.row_ids[src_pos])


@pytest.mark.parametrize("n_copies", [2, 3, 12])  # 12 > n_candidates: the full-recompute path
def test_duplicated_training_rows_give_nan_not_memorized_lowest_position(n_copies):
    df = _mixed_frame(40, 2)
    pos = np.sort(np.random.default_rng(3).choice(np.arange(1, 40), n_copies, replace=False))
    df.iloc[pos] = df.iloc[[0] * n_copies].to_numpy()
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = df.iloc[[pos[-1], 0]].reset_index(drop=True)
    res = memorization(train, syn, device="cpu")
    assert np.isnan(res.ratio).all() and not res.memorized.any()
    np.testing.assert_array_equal(res.d1, 0.0)
    np.testing.assert_array_equal(res.d2, 0.0)
    np.testing.assert_array_equal(res.nn1_pos, [0, 0])
    np.testing.assert_array_equal(res.nn2_pos, [pos[0], pos[0]])
    assert_matches_naive(res, naive_for(train, syn, "paper"), train)


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_all_numerical_table(distance):
    df = _mixed_frame(80, 4)
    train = make_table(df, ["age", "fnlwgt", "hours"], [])
    syn = _mixed_frame(25, 5)
    syn.iloc[:5, :3] = df.iloc[[3, 9, 9, 40, 79], :3].to_numpy() + [[0, 1, 0]]
    res = memorization(train, syn, distance=distance, device="cpu")
    assert_matches_naive(res, naive_for(train, syn, distance), train)
    np.testing.assert_array_equal(res.nn1_pos[:5], [3, 9, 9, 40, 79])


def test_all_categorical_table_matches_naive_exactly_ties_included():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({c: rng.choice(list("abc"), 50).astype(object) for c in ("p", "q", "r")})
    df["y"] = rng.choice(["0", "1"], 50).astype(object)
    train = make_table(df, [], ["p", "q", "r"], "y")
    syn = pd.DataFrame({c: rng.choice(list("abc"), 30).astype(object) for c in ("p", "q", "r")})
    syn["y"] = rng.choice(["0", "1"], 30).astype(object)
    res = memorization(train, syn, device="cpu")
    ref = naive_for(train, syn, "paper")
    assert_matches_naive(res, ref, train)
    # distances are exact multiples of 1/4, so every tie is exact: positions equal everywhere
    np.testing.assert_array_equal(res.nn1_pos, ref["nn1"])
    np.testing.assert_array_equal(res.nn2_pos, ref["nn2"])
    np.testing.assert_array_equal(res.d1 * 4, np.round(res.d1 * 4))


# -------------------------------------------------- Adult-scale cancellation
@pytest.fixture(scope="module")
def sample_train():
    from memviz.tables.data import sample_data_dir
    train, _ = load_dataset(sample_data_dir())
    return train


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_adult_scale_near_copies_differing_by_one_are_found(sample_train, distance):
    train = sample_train
    data = train.data
    cols = list(train.schema.columns)
    # rows whose full value vector is unique (a duplicated row would give 0/0)
    unique = ~data.astype(str).duplicated(subset=cols, keep=False).to_numpy()
    fnlwgt = data["fnlwgt"].to_numpy()
    by_size = np.argsort(-fnlwgt, kind="stable")
    largest = by_size[unique[by_size]][:4]          # the widest values of the column
    pick = np.concatenate([largest, np.flatnonzero(unique)[:4]])
    assert fnlwgt[largest].min() > 5e5 and fnlwgt.max() > 1e6
    syn = data.iloc[pick].reset_index(drop=True).copy()
    syn["fnlwgt"] += 1.0                      # one unit on a column reaching 1.5e6
    syn.loc[4:, "age"] += 1.0                 # and one unit on a small column
    syn.loc[4:, "fnlwgt"] -= 1.0
    res = memorization(train, syn, distance=distance, device="cpu")
    np.testing.assert_array_equal(res.nn1_pos, pick)
    assert res.memorized.all()
    ref = naive_for(train, syn, distance)
    assert_matches_naive(res, ref, train)
    np.testing.assert_allclose(res.ratio, ref["ratio"], rtol=0, atol=1e-9)


def test_float32_expansion_would_lose_the_near_copy():
    """Why the engine keeps float64: in float32 the ‖a‖² + ‖b‖² − 2ab error on fnlwgt-sized
    values exceeds the squared distance of a one-unit near copy."""
    rng = np.random.default_rng(7)
    x = rng.integers(1_000_000, 1_500_000, (500, 1)).astype(np.float64)
    g = x[123] + 1.0
    exp32 = (g.astype(np.float32) ** 2).sum() + (x.astype(np.float32) ** 2).sum(1) \
        - 2 * (x.astype(np.float32) @ g.astype(np.float32))
    assert np.abs(exp32[123] - 1.0) >= 0.5  # float32 cannot see the 1-unit difference
    syn = pd.DataFrame({"v": [g[0]]})
    res = memorization(make_table(pd.DataFrame({"v": x[:, 0]}), ["v"], []), syn, device="cpu")
    assert res.nn1_pos[0] == 123 and res.d1[0] == 0.0


@pytest.mark.parametrize("algorithm", ["dense", "pruned", "wide"])
def test_clusters_finer_than_an_expansion_resolves(algorithm):
    """30 training rows share a value of 1.4e6 and differ by ~0.001 in a small column: a
    ‖g‖² + ‖x‖² − 2g·x expansion cannot order them (its rounding, ~1e-5 on e², exceeds
    their e² ~ 1e-6); direct differences must."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        big = rng.integers(10_000, 1_500_000, 40).astype(float)
        big[:30] = 1_434_567.0
        small = rng.normal(0, 0.001, 40)
        train = make_table(pd.DataFrame({"big": big, "small": small}), ["big", "small"], [])
        k = rng.integers(0, 30, 6)
        syn = pd.DataFrame({"big": 1_434_567.0, "small": small[k] + 1e-5})
        for distance in ("paper", "standardized"):
            eng = NeighborEngine(distance=distance, device="cpu", n_jobs=1, algorithm=algorithm).fit(train)
            res = memorization(train, syn, engine=eng)
            assert_matches_naive(res, naive_for(train, syn, distance), train)


# -------------------------------------------------------------- invariances
def test_chunking_and_threads_do_not_change_results():
    df = _mixed_frame(150, 8)
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = pd.concat([_mixed_frame(70, 9), df.iloc[::10]], ignore_index=True)
    for distance in ("paper", "standardized"):
        base = memorization(train, syn, distance=distance, device="cpu")
        for chunk, jobs in [(len(train) * 3, 1), (len(train) * 3, 2), (1, 1), (len(train) * 7, None)]:
            eng = NeighborEngine(distance=distance, device="cpu", chunk_elements=chunk, n_jobs=jobs).fit(train)
            other = memorization(train, syn, engine=eng)
            np.testing.assert_array_equal(other.nn1_pos, base.nn1_pos)
            np.testing.assert_array_equal(other.nn2_pos, base.nn2_pos)
            np.testing.assert_array_equal(other.memorized, base.memorized)
            np.testing.assert_allclose(other.d1, base.d1, rtol=1e-12, atol=0)
            np.testing.assert_allclose(other.d2, base.d2, rtol=1e-12, atol=0)


def test_shuffling_synthetic_rows_permutes_results():
    df = _mixed_frame(120, 10)
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = pd.concat([_mixed_frame(50, 11), df.iloc[::7]], ignore_index=True)
    perm = np.random.default_rng(12).permutation(len(syn))
    a = memorization(train, syn, device="cpu")
    b = memorization(train, syn.iloc[perm].reset_index(drop=True), device="cpu")
    for name in ("nn1", "nn2", "memorized"):
        np.testing.assert_array_equal(getattr(b, name), getattr(a, name)[perm])
    np.testing.assert_allclose(b.ratio, a.ratio[perm], rtol=1e-12, atol=0)
    assert a.mem_ratio == b.mem_ratio


def test_unseen_synthetic_categories_match_nothing():
    train_df = pd.DataFrame({"k": ["a", "b", None, "a"] * 3, "j": [1, 2, 3, 1] * 3})
    train = make_table(train_df, [], ["k", "j"])
    syn = pd.DataFrame({"k": ["z", "z", None], "j": [2.0, 9, "1"]})  # 2.0 and "1" are known
    res = memorization(train, syn, device="cpu")
    np.testing.assert_allclose(res.d1, [0.5, 1.0, 0.5])
    np.testing.assert_array_equal(res.nn1_pos, [1, 0, 0])  # "z" matches neither "a" nor missing
    np.testing.assert_array_equal(res.nn2_pos, [5, 1, 2])  # all ties at 1/2 in the last row
    assert_matches_naive(res, naive_for(train, syn, "paper"), train)


def test_missing_categoricals_match_each_other_only():
    train_df = pd.DataFrame({"k": ["a", None, "b", "a", "b", None] * 2, "x": np.arange(12.0)})
    train = make_table(train_df, ["x"], ["k"])
    syn = pd.DataFrame({"k": [np.nan, "a"], "x": [1.0, 1.0]})
    res = memorization(train, syn, distance="standardized", device="cpu")
    # a missing k matches the missing rows (positions 1, 5, 7, 11), nearest in x is position 1
    assert res.nn1_pos[0] == 1 and res.d1[0] == 0.0
    np.testing.assert_allclose(res.d2[0], (4 / 11 + 0) / 2)  # position 5: x differs by 4
    # "a" does not match a missing value: position 1 (x equal, k missing) costs a mismatch
    assert res.nn1_pos[1] == 0
    np.testing.assert_allclose(res.d1[1], (1 / 11) / 2)
    assert_matches_naive(res, naive_for(train, syn, "standardized"), train)


def test_missing_numericals_use_the_training_mean():
    x = np.array([0.0, 10, 20, 30, 40, 50, 60, 70, 80, 1000, np.nan, 5.0])
    train = make_table(pd.DataFrame({"x": x, "k": ["a"] * 12}), ["x"], ["k"])
    mean = np.nanmean(x)  # 124.09...: the training NaN at position 10 becomes the mean too
    syn = pd.DataFrame({"x": [np.nan, mean, mean + 1.0], "k": ["a", "a", "a"]})
    res = memorization(train, syn, distance="standardized", device="cpu")
    np.testing.assert_array_equal(res.nn1_pos, [10, 10, 10])
    np.testing.assert_array_equal(res.d1[:2], [0.0, 0.0])
    np.testing.assert_allclose(res.d1[2], (1 / 1000) / 2)
    nearest_real = np.nanargmin(np.abs(np.where(np.isnan(x), np.inf, x) - mean))  # 80
    assert res.nn2_pos[0] == nearest_real
    np.testing.assert_allclose(res.d2[0], (abs(mean - 80) / 1000) / 2)
    assert_matches_naive(res, naive_for(train, syn, "standardized"), train)


# ---------------------------------------------------------- summary figures
def test_mem_auc_is_mean_one_minus_r_and_the_threshold_integral():
    rng = np.random.default_rng(13)
    r = rng.uniform(0, 1, 400)
    r[:30] = np.nan
    r[30:40] = 0.0
    expected = np.where(np.isnan(r), 0.0, 1.0 - r).mean()
    assert mem_auc(r) == pytest.approx(expected, abs=1e-15)
    # ∫_0^1 MemRatio(τ) dτ on a fine grid equals mean(1 - r)
    taus = np.linspace(0, 1, 20001)
    with np.errstate(invalid="ignore"):
        curve = np.array([(r < t).mean() for t in taus])
    integral = np.sum((curve[1:] + curve[:-1]) / 2 * np.diff(taus))
    assert integral == pytest.approx(mem_auc(r), abs=1e-4)
    # the papers' 10-point trapezoid: a coarse approximation of the same integral
    coarse_taus = np.linspace(0, 1, 10)
    with np.errstate(invalid="ignore"):
        coarse = np.array([(r < t).mean() for t in coarse_taus])
    manual = sum((coarse[i] + coarse[i + 1]) / 2 * (coarse_taus[i + 1] - coarse_taus[i]) for i in range(9))
    assert mem_auc_trapezoid(r) == pytest.approx(manual, abs=1e-15)
    assert abs(mem_auc_trapezoid(r) - mem_auc(r)) < 1 / 9  # within one grid step
    assert mem_auc_trapezoid(r) != pytest.approx(mem_auc(r), abs=1e-6)  # and not the same figure


def test_result_summary_is_consistent():
    df = _mixed_frame(60, 14)
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = pd.concat([_mixed_frame(30, 15), df.iloc[:30]], ignore_index=True)
    res = memorization(train, syn, device="cpu")
    s = res.summary()
    assert s["n_train"] == 60 and s["n_synthetic"] == 60
    assert s["mem_ratio"] == pytest.approx(np.mean(res.ratio < 1 / 3))
    assert s["mem_auc"] == pytest.approx(np.mean(np.where(np.isfinite(res.ratio), 1 - res.ratio, 0.0)))
    assert res.memorized[30:].all()  # exact copies of unique rows: r = 0
    np.testing.assert_array_equal(res.ratio[30:], 0.0)
    frame = res.to_frame()
    assert list(frame.columns[:6]) == ["nn1", "nn2", "d1", "d2", "ratio", "memorized"]
    assert len(frame) == 60


# ------------------------------------------------------------------- errors
def test_cuda_without_gpu_is_a_user_error():
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible here")
    train = make_table(_mixed_frame(20, 16), ["age"], ["job"])
    with pytest.raises(MemvizError, match="cuda"):
        memorization(train, _mixed_frame(3, 17), device="cuda")


def test_bad_options_are_user_errors():
    train = make_table(_mixed_frame(20, 18), ["age"], ["job"])
    with pytest.raises(MemvizError, match="distance"):
        memorization(train, _mixed_frame(3, 19), distance="cosine")
    with pytest.raises(MemvizError, match="device"):
        memorization(train, _mixed_frame(3, 19), device="tpu")
    with pytest.raises(MemvizError, match="2 training rows"):
        memorization(train.subset([0]), _mixed_frame(3, 19), device="cpu")


def test_rows_answered_by_a_full_pass_are_counted():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=400), "b": rng.uniform(0, 1e6, 400),
                          "c": rng.choice(["x", "y", "z"], 400)})
    train = make_table(frame, ["a", "b"], ["c"])
    nb = NeighborEngine(device="cpu", algorithm="dense").fit(train).kneighbors(frame.iloc[:100], k=2)
    assert nb.n_exhaustive == 100 and nb.n_pruned == 0
    dup = pd.concat([frame.iloc[:1]] * 50, ignore_index=True)      # 50 equal reference rows
    t2 = make_table(pd.concat([frame, dup], ignore_index=True), ["a", "b"], ["c"])
    nb = NeighborEngine(device="cpu", algorithm="dense").fit(t2).kneighbors(frame.iloc[:1], k=2)
    np.testing.assert_array_equal(nb.pos, [[0, 400]])             # ties past the list: lowest positions
    np.testing.assert_array_equal(nb.dist, [[0.0, 0.0]])


# ------------------------------------------- magnitudes (issue 12, item 1)
# The float64 loop is meaningful while squares of differences neither overflow nor
# underflow: values within 1e-140 .. 1e150. Beyond it, the engine is checked by its
# invariance to exact power-of-two rescaling (see memviz.engine.neighbors, "Magnitudes").
HUGE = [1e26, 1e100, 1e160, 1e300, 1.7e308, -1.7e308]


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("big", HUGE)
def test_one_huge_training_value_leaves_exact_copies_memorized(big, distance):
    """Issue 12: exact copies of rows 0-19 gave mem ratio 0.4 once another training row's
    value was 1e26 (cancellation in |g|^2 - 2 g.x + |x|^2), and NaN distances from 1e154."""
    df = _mixed_frame(40, 2)
    df.loc[30, "fnlwgt"] = big
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = df.iloc[list(range(20)) + [30]].reset_index(drop=True)
    res = memorization(train, syn, distance=distance, device="cpu")
    np.testing.assert_array_equal(res.nn1_pos, list(range(20)) + [30])
    np.testing.assert_array_equal(res.d1, 0.0)
    assert np.isfinite(res.d2).all() and (res.d2 > 0).all()
    assert res.mem_ratio == 1.0
    if abs(big) < 1e150:
        assert_matches_naive(res, naive_for(train, syn, distance), train)


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("big", [None, 1e26, 1e300])
def test_identical_training_rows_and_their_copy_give_zero_exactly(big, distance):
    df = _mixed_frame(40, 3)
    df.iloc[7] = df.iloc[3].to_numpy()
    if big is not None:
        df.loc[30, "fnlwgt"] = big
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = df.iloc[[7, 3]].reset_index(drop=True)
    res = memorization(train, syn, distance=distance, device="cpu")
    np.testing.assert_array_equal(res.d1, [0.0, 0.0])
    np.testing.assert_array_equal(res.d2, [0.0, 0.0])
    assert np.isnan(res.ratio).all() and not res.memorized.any()   # the documented 0/0 case
    np.testing.assert_array_equal(res.nn1_pos, [3, 3])
    np.testing.assert_array_equal(res.nn2_pos, [7, 7])


@st.composite
def wild_scales_case(draw):
    """A mixed case whose numerical columns are multiplied by 10^k, k in [-140, 140] per
    column, and optionally one training value set to +-10^(k + K), K <= 140."""
    c = draw(mixed_case())
    exps = [draw(st.integers(-140, 140)) for _ in c["num_kinds"]]
    outlier = draw(st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.integers(0, 140), st.booleans())))
    return c, exps, outlier


def build_wild_case(c, exps, outlier):
    train, syn = build_case(c)
    num = list(train.schema.numerical)
    data = train.data.copy()
    for col, k in zip(num, exps):
        data[col] = data[col] * 10.0 ** k
        syn[col] = syn[col] * 10.0 ** k
    if outlier is not None and num:
        # at most 1e140 times its column's scale (beyond, the loop's squares of standardized
        # coordinates underflow) and at most 1e150 (beyond, its squares overflow)
        i, K, neg = outlier
        j = i % len(num)
        K = min(exps[j] + K, 150)
        data.iloc[i % len(data), data.columns.get_loc(num[j])] = (-1.0 if neg else 1.0) * 10.0 ** K
    return Table(data, train.schema, train.source), syn


@settings(max_examples=int(os.environ.get("MEMVIZ_EXAMPLES", 100)), deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(wild_scales_case())
def test_matches_naive_reference_on_columns_of_wildly_different_scales(case):
    train, syn = build_wild_case(*case)
    distance = case[0]["distance"]
    with engine_for(case[0]["algorithm"], distance) as make:
        res = memorization(train, syn, engine=make(train))
    assert_matches_naive(res, naive_for(train, syn, distance), train)


def _scaled(table: Table, syn: pd.DataFrame, factors):
    data, syn = table.data.copy(), syn.copy()
    for col, f in zip(table.schema.numerical, factors):
        data[col], syn[col] = data[col] * f, syn[col] * f
    return Table(data, table.schema, table.source), syn


@settings(max_examples=int(os.environ.get("MEMVIZ_EXAMPLES", 100)) // 2, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mixed_case(), st.lists(st.integers(-950, 1000), min_size=4, max_size=4))
def test_exact_power_of_two_rescaling_changes_nothing_from_1e_minus_285_to_1e307(case, ks):
    """The paper distance is invariant to one common factor on all numerical columns, the
    standardized distance to a factor per (non-constant) column. With powers of two the
    rescaling is exact, so the engine must give bit-identical results at every magnitude,
    where the float64 loop itself overflows (above ~1e154) or underflows (below ~1e-154)."""
    train, syn = build_case(case)
    num = list(train.schema.numerical)
    if case["distance"] == "standardized":
        # a constant training column has range 1 in original units (the definition): not invariant
        filled = train.data[num].fillna(train.data[num].mean())
        ks = [0 if filled[c].max() == filled[c].min() else k for c, k in zip(num, ks)]
    else:
        ks = [ks[0]] * len(num)
    big_train, big_syn = _scaled(train, syn, [2.0 ** k for k in ks])
    with engine_for(case["algorithm"], case["distance"]) as make:
        base = memorization(train, syn, engine=make(train))
        other = memorization(big_train, big_syn, engine=make(big_train))
    np.testing.assert_array_equal(other.nn1_pos, base.nn1_pos)
    np.testing.assert_array_equal(other.nn2_pos, base.nn2_pos)
    np.testing.assert_array_equal(other.d1, base.d1)
    np.testing.assert_array_equal(other.d2, base.d2)
    np.testing.assert_array_equal(np.isnan(other.ratio), np.isnan(base.ratio))


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_a_generated_value_beyond_float64s_reach_is_refused_naming_the_column(distance):
    df = _mixed_frame(40, 4)
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = df.iloc[:3].reset_index(drop=True)
    syn.loc[1, "hours"] = 1e300
    with pytest.raises(MemvizError, match="hours"):
        memorization(train, syn, distance=distance, device="cpu")
    syn.loc[1, "hours"] = np.inf
    with pytest.raises(MemvizError, match="hours"):
        memorization(train, syn, distance=distance, device="cpu")


def test_one_query_row_with_a_tiny_value_is_exact_and_leaves_the_others_to_the_pruned_search():
    df = _mixed_frame(400, 5)
    train = make_table(df, ["age", "fnlwgt", "hours"], ["job", "sex"], "y")
    syn = df.iloc[:50].reset_index(drop=True)
    syn.loc[3, "hours"] = 1e-300                      # below 2^-850 of the largest training magnitude
    eng = NeighborEngine(device="cpu", algorithm="pruned").fit(train)
    nb = eng.kneighbors(syn, 2)
    assert nb.n_pruned >= 45 and nb.n_exhaustive == 50 - nb.n_pruned
    res = memorization(train, syn, engine=eng)
    assert_matches_naive(res, naive_for(train, syn, "paper"), train)
