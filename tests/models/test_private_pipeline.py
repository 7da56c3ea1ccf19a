"""ε means ε (issue 50): a private TabDDPM's column transforms come from public knowledge or OpenDP releases,
so a planted outlier never reaches the generated rows, and the reported ε is the composition of its parts."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("opacus")

from memviz.errors import MemvizError  # noqa: E402
from memviz.models.dpstats import LOG_BASE, cdf_quantiles, private_histogram, private_range, thresholded_counts  # noqa: E402
from memviz.models.tabddpm import TabDDPM  # noqa: E402
from memviz.tables.data import table_from_frame  # noqa: E402
from memviz.tables.schema import Schema  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 256}
OUTLIER_VALUE, OUTLIER_CATEGORY = 987654.321, "the-only-one"


def planted_table(n=4000, seed=0):
    """Ordinary rows (a balance around 50, a region of three values, a label 'churned' coded yes/no) and ONE
    planted row with a value and a category no other row has, at a key in an integer key column with gaps."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"customer": np.sort(rng.choice(20 * n, n, replace=False)) + 3,
                       "balance": np.round(rng.normal(50, 10, n), 3),
                       "region": rng.choice(["north", "south", "east"], n).astype(object),
                       "churned": rng.choice(["yes", "no"], n, p=[0.3, 0.7]).astype(object)})
    df.loc[n // 2, ["balance", "region"]] = [OUTLIER_VALUE, OUTLIER_CATEGORY]
    return table_from_frame(df, Schema(numerical=("balance",), categorical=("region",), target="churned",
                                       task="binary", key="customer"))


def test_a_planted_outlier_never_reaches_10000_rows_generated_at_epsilon_1():
    table = planted_table()
    m = TabDDPM(epochs=3, seed=0, device="cpu", privacy={"epsilon": 1.0}, **TINY).fit(table)
    syn = m.sample(10_000, seed=0)
    assert (syn["balance"] == OUTLIER_VALUE).sum() == 0
    assert (syn["region"] == OUTLIER_CATEGORY).sum() == 0
    assert syn["balance"].max() < 1000          # the outlier set no bound either: clipped far below it
    assert m.privacy_["epsilon_spent"] <= 1.0


def test_the_reported_epsilon_is_the_sum_of_the_preprocessing_and_dp_sgd():
    from opacus.accountants import create_accountant  # lazy: opacus, an extra (dp)

    table = planted_table(n=4000)
    m = TabDDPM(epochs=1, seed=0, device="cpu", privacy={"epsilon": 2.0, "preprocessing": 0.2}, **TINY).fit(table)
    p = m.privacy_
    releases = p["preprocessing"]["releases"]
    assert {(r["column"], r["statistic"]) for r in releases} == {("balance", "range"), ("balance", "histogram"),
                                                               ("region", "categories"), ("churned", "categories")}
    eps_pre = math.fsum(r["epsilon"] for r in releases)
    delta_pre = math.fsum(r["delta"] for r in releases)
    assert p["epsilon_preprocessing"] == pytest.approx(eps_pre) and eps_pre <= 0.2 * 2.0 + 1e-12
    acc = create_accountant("rdp")
    for _ in range(m.step_):
        acc.step(noise_multiplier=p["noise_multiplier"], sample_rate=p["sample_rate"])
    eps_sgd = acc.get_epsilon(delta=p["delta_sgd"])
    assert p["epsilon_sgd"] == pytest.approx(eps_sgd, rel=1e-9)
    assert p["epsilon_spent"] == pytest.approx(eps_pre + eps_sgd, rel=1e-12) and p["epsilon_spent"] <= 2.0
    assert p["delta_spent"] == pytest.approx(delta_pre + p["delta_sgd"]) and p["delta_spent"] <= 0.1 / len(table)
    assert "ε = ε_pre + ε_sgd" in p["composition"] and "schema" in p["assumes_public"]


def test_public_knowledge_spends_nothing_and_what_it_misses_is_one_line():
    table = planted_table(n=600)
    public = {"bounds": {"balance": [0, 100]}, "categories": {"region": ["north", "south", "east", OUTLIER_CATEGORY],
                                                              "churned": ["yes", "no"]}}
    m = TabDDPM(epochs=1, seed=0, device="cpu", privacy={"epsilon": 1.0, "preprocessing": 0, **public}, **TINY)
    m.fit(table)
    assert m.privacy_["epsilon_preprocessing"] == 0 and m.privacy_["preprocessing"]["releases"] == []
    assert m.privacy_["preprocessing"]["public"]["bounds"] == ["balance"]
    assert m.sample(2000, seed=0)["balance"].between(0, 100).all()      # the public bounds clip the outlier
    for privacy, words in [({"preprocessing": 0}, "needs every column public: column 'balance'"),
                           # balance's bounds public too: a noisy release of its range could refuse first
                           ({"bounds": {"balance": [0, 100]}, "categories": {"region": ["north"]}},
                            "value 'south' is not among the categories"),
                           ({"bounds": {"region": [0, 1]}}, "column 'region' is categorical"),
                           ({"bounds": {"balance": [3, 1]}}, "expected finite low <= high")]:
        with pytest.raises(MemvizError) as exc:
            TabDDPM(epochs=1, device="cpu", privacy={"epsilon": 1.0, **privacy}, **TINY).fit(table)
        assert words in str(exc.value) and "\n" not in str(exc.value)


def test_a_schema_declares_public_bounds_and_categories():
    table = planted_table(n=600)
    schema = replace(table.schema, extra={"public": {"bounds": {"balance": [0, 100]},
                                                     "categories": {"region": ["north", "south", "east"],
                                                                    "churned": ["yes", "no"]}}})
    table = table.with_data(table.data.drop(index=table.data.index[300]))   # the planted row out
    table = replace(table, schema=schema)
    m = TabDDPM(epochs=1, seed=0, device="cpu", privacy=1.0, **TINY).fit(table)
    pre = m.privacy_["preprocessing"]
    assert [r["statistic"] for r in pre["releases"]] == ["histogram"]
    assert pre["public"] == {"schema": pre["public"]["schema"], "bounds": ["balance"],
                             "categories": ["churned", "region"]}


def test_a_column_that_could_never_be_released_is_refused_before_any_work():
    """From public facts only (the schema, N, ε): at 300 rows and ε = 1 the threshold exceeds N."""
    table = planted_table(n=300)
    m = TabDDPM(epochs=1, device="cpu", privacy=1.0, **TINY)
    with pytest.raises(MemvizError) as exc:
        m.check_privacy(len(table), table.schema)
    msg = str(exc.value)
    assert msg.startswith("privacy: column 'balance': releasing its range") and "more than the 300" in msg
    assert not hasattr(m, "model_")                                            # nothing trained, nothing released
    TabDDPM(epochs=1, device="cpu", privacy=1.0, **TINY).check_privacy(4000, planted_table(n=4000).schema)


def test_the_released_statistics_approach_the_exact_ones_as_epsilon_grows():
    """Cross-check with numpy: at a large ε the histogram's quantiles are within two bins of np.quantile, the
    released range holds every value's bucket, and the categories are the data's with the mode as fallback."""
    rng = np.random.default_rng(3)
    x = rng.normal(40, 8, 20_000)
    edges, counts, rel = private_histogram("x", x, 0.0, 80.0, len(x), 100.0)
    assert len(counts) == 200 and rel.epsilon == pytest.approx(100.0) and rel.delta == 0
    levels = np.linspace(0.05, 0.95, 19)
    q = cdf_quantiles(edges, counts, levels)
    assert np.abs(q - np.quantile(x, levels)).max() < 2 * 80 / 200
    lo, hi, rel = private_range("x", x, False, 50.0, 1e-9)
    assert rel.delta <= 1e-9 and lo <= np.quantile(x, 0.001) and hi >= np.quantile(x, 0.999)
    assert hi <= x.max() * LOG_BASE and lo >= x.min() / LOG_BASE
    keys = ["a"] * 900 + ["b"] * 600 + ["c"] * 2
    counts, rel = thresholded_counts(keys, 5.0, 1e-9)
    assert set(counts) == {"a", "b"} and rel.delta <= 1e-9
