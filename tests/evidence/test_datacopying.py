"""The data-copying test (memviz.evidence.datacopying) against its definition, fresh rows and planted copies."""
import json
import math

import numpy as np
import pytest
from evidence_tables import numeric_table, plant, shuffled_table, three_parts
from scipy.stats import mannwhitneyu

import memviz.evidence.datacopying as dc
from memviz.errors import MemvizError
from memviz.evidence.datacopying import CellSpace, _describe, cell_arrays, data_copying_test, kmeans
from memviz.measure.floor import holdout_floor
from memviz.engine.neighbors import NeighborEngine
from memviz.tables.data import table_from_frame
from memviz.verdict.evidence_words import data_copying_sentence


@pytest.fixture(scope="module")
def parts(sample):
    return three_parts(sample[0], 600, seed=11)


def test_statistic_is_the_papers_weighted_cell_z(parts):
    tr, sy, ho = parts
    res = data_copying_test(tr, sy, ho, n_cells=6, device="cpu")
    cells = res.cells
    assert cells["n_train"].sum() == len(tr) and cells["n_holdout"].sum() == len(ho)
    assert cells["n_synthetic"].sum() == len(sy)
    cell_of = res.rows.set_index("row_id")["cell"]
    assert (cell_of.value_counts().reindex(range(len(cells)), fill_value=0).to_numpy() == cells["n_train"]).all()
    assert cells["included"].any()
    inc = cells[cells["included"]]
    w = inc["holdout_share"] / inc["holdout_share"].sum()
    assert res.c_t == pytest.approx(float((w * inc["z"]).sum()))
    assert res.z == pytest.approx(res.c_t / math.sqrt(float((w ** 2).sum())))
    json.dumps(res.to_dict(), allow_nan=False)


def test_cell_z_equals_scipy_on_the_cells_distances(parts, monkeypatch):
    """Capture each cell's two distance samples and recompute z with scipy."""
    seen = []
    real = dc.mann_whitney_z

    def spy(a, b):
        seen.append((np.array(a), np.array(b)))
        return real(a, b)

    monkeypatch.setattr(dc, "mann_whitney_z", spy)
    tr, sy, ho = parts
    res = dc.data_copying_test(tr, sy, ho, n_cells=4, device="cpu")
    zs = res.cells["z"].dropna().to_numpy()
    assert len(seen) == len(zs)
    for (q, p), z in zip(seen, zs):
        ref = mannwhitneyu(q, p, alternative="less", use_continuity=False, method="asymptotic").pvalue
        assert dc.one_sided_p(z) == pytest.approx(ref, rel=1e-9)


def test_fresh_rows_do_not_copy_and_planted_copies_do(parts):
    tr, sy, ho = parts
    null = data_copying_test(tr, sy, ho, device="cpu")
    assert not null.copying and "no closer" in data_copying_sentence(null)
    syn, _ = plant(tr, sy, 0.2, seed=2)
    res = data_copying_test(tr, syn, ho, device="cpu")
    assert res.copying and res.c_t < -1 and "sign of copying" in data_copying_sentence(res)


def test_copies_from_one_region_are_located(parts):
    tr, sy, ho = parts
    base = data_copying_test(tr, sy, ho, n_cells=5, device="cpu")
    target = int(base.cells.sort_values("n_train").iloc[-1]["cell"])
    pos = np.flatnonzero(base.rows["cell"].to_numpy() == target)
    syn, _ = plant(tr, sy, 0.15, seed=3, source_pos=pos)
    res = data_copying_test(tr, syn, ho, n_cells=5, device="cpu")
    cc = res.copying_cells
    assert target in set(cc["cell"]) and res.copying
    assert cc["description"].str.len().min() > 0
    assert set(res.rows.loc[res.rows["in_copying_cell"], "cell"]) == set(cc["cell"])
    assert f"{100 * float(cc['holdout_share'].sum()):.0f} %" in data_copying_sentence(res)


def test_cells_with_few_generated_rows_are_left_out(parts):
    tr, sy, ho = parts
    res = data_copying_test(tr, sy.subset(sy.row_ids[:60]), ho, n_cells=6, device="cpu")
    cells = res.cells
    assert (~cells["included"] == (cells["n_synthetic"] <= res.min_generated)).all()
    assert not cells.loc[~cells["included"], "copies"].any()


def test_high_floor_table_copies_found_where_the_ratio_test_is_blind():
    t = numeric_table(1800, seed=1)
    tr, sy, ho = three_parts(t, 600, seed=2)
    assert holdout_floor(tr, ho, distance="paper", device="cpu").floor > 0.8     # the ratio test is blind here
    assert not data_copying_test(tr, sy, ho, device="cpu").copying
    syn, _ = plant(tr, sy, 0.2, seed=5)
    res = data_copying_test(tr, table_from_frame(syn, tr.schema, role="synthetic"), ho, device="cpu")
    assert res.copying


def test_column_order_does_not_matter(sample):
    t = sample[0].subset(sample[0].row_ids[:1500])
    a = data_copying_test(*three_parts(t, 500, seed=4), n_cells=4, device="cpu")
    s = shuffled_table(t)
    b = data_copying_test(*three_parts(s, 500, seed=4), n_cells=4, device="cpu")
    # the same rows in the same parts; k-means sees permuted coordinates, so compare the verdicts
    assert a.copying == b.copying and abs(a.c_t - b.c_t) < 1.5


def test_bad_arguments_are_one_line(parts):
    tr, sy, ho = parts
    with pytest.raises(MemvizError, match="n_cells"):
        data_copying_test(tr, sy, ho, n_cells=0)
    eng = NeighborEngine(distance="paper", device="cpu").fit(tr)
    with pytest.raises(MemvizError, match="paper"):
        data_copying_test(tr, sy, ho, engine=eng)


def test_each_row_is_in_the_cell_of_its_nearest_training_row(parts):
    """Cells are unions of the training rows' Voronoi regions: a row's L(x) is then its distance to the
    nearest training row of its own cell, from one search over all training rows."""
    tr, sy, ho = parts
    eng = NeighborEngine(distance="standardized", device="cpu").fit(tr)
    nq, nh = eng.kneighbors(sy, k=1), eng.kneighbors(ho, k=1)
    res = data_copying_test(tr, sy, ho, n_cells=5, engine=eng, device="cpu")
    cell_of_train = res.rows["cell"].to_numpy()                       # aligned with tr's positions
    for nb, col in ((nq, "n_synthetic"), (nh, "n_holdout")):
        counts = np.bincount(cell_of_train[nb.pos[:, 0]], minlength=5)
        np.testing.assert_array_equal(counts, res.cells[col].to_numpy())
    given = data_copying_test(tr, sy, ho, n_cells=5, engine=eng, device="cpu",
                              distances=(nq.dist[:, 0], nh.dist[:, 0]), positions=(nq.pos[:, 0], nh.pos[:, 0]))
    assert given.c_t == res.c_t and given.p_value == res.p_value
    with pytest.raises(MemvizError, match="positions"):
        data_copying_test(tr, sy, ho, n_cells=5, engine=eng, distances=(nq.dist[:, 0], nh.dist[:, 0]),
                          positions=(nq.pos[:5, 0], nh.pos[:, 0]))


def test_cells_described_from_the_engine_codes_equal_the_canonical_strings(sample):
    """The cells' descriptions read the engine's category codes (and its standardized
    coordinates for the cells): the same texts and centres as from the canonical strings."""
    train, _ = sample
    eng = NeighborEngine(distance="standardized", device="cpu").fit(train)
    z, cat = cell_arrays(eng.encoder_, train.data)
    space = CellSpace.of(eng.encoder_, z, cat)
    np.testing.assert_array_equal(CellSpace.of(eng.encoder_, *eng.reference_arrays()).dense(), space.dense())
    labels = space.nearest(kmeans(space, 6, 0))
    assert _describe(train, labels, 6, eng.encoder_, cat) == _describe(train, labels, 6)


def test_cell_space_answers_as_the_dense_one_hot_matrix():
    """k-means on the arrays (no one-hot matrix): each row's squared distance to a centre, its
    nearest centre and the cells' means equal those of the dense (n, D) matrix, with missing
    categories (code -1), empty cells and non-finite numericals."""
    rng = np.random.default_rng(3)
    n, sizes = 2_000, (3, 7, 1, 12)
    z = rng.normal(size=(n, 4))
    z[rng.random(z.shape) < 0.01] = np.nan
    cat = np.column_stack([rng.integers(-1, s, n) for s in sizes])
    space = CellSpace(np.nan_to_num(z, nan=0.0), cat, sizes)
    x = space.dense()                                                    # (n, 4 + 23)
    assert x.shape == (n, 27) and np.allclose(x[:, 4:].sum(1), (cat >= 0).sum(1) / np.sqrt(2))
    np.testing.assert_array_equal(space.row(17), x[17])
    centres = rng.normal(size=(6, x.shape[1]))
    for c in centres[:2]:
        np.testing.assert_allclose(space.sq_to(c), ((x - c) ** 2).sum(1), rtol=1e-12, atol=1e-12)
    dense_d = ((x[:, None, :] - centres[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(space.nearest(centres), dense_d.argmin(1))
    labels = rng.integers(0, 5, n)                                       # cell 5 empty: keeps its centre
    means = space.means(labels, centres)
    for j in range(5):
        np.testing.assert_allclose(means[j], x[labels == j].mean(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(means[5], centres[5])
