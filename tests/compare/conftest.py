"""Fixtures of the comparison tests: a 200-row Adult training table, 100 test rows, tiny warm-ups
(one without a floor, one measured on the test split) and stub generators."""
import pandas as pd
import pytest

import memviz.compare.cell as cell
import memviz.compare.config as config
from memviz.models.privacy import PrivacyConfig
from memviz.tables.data import load_table, sample_data_dir
from memviz.warmup.run import WarmupConfig, run_warmup

from .stubs import TINY, Stub

META = sample_data_dir() / "meta.json"


@pytest.fixture(scope="package")
def files(tmp_path_factory):
    """200 training rows, another 200 training rows and 100 test rows of the Adult sample, as CSV."""
    d = tmp_path_factory.mktemp("data")
    train = pd.read_csv(sample_data_dir() / "train.csv")
    test = pd.read_csv(sample_data_dir() / "test.csv")
    train.iloc[:200].to_csv(d / "train.csv", index=False)
    train.iloc[200:400].to_csv(d / "other.csv", index=False)
    test.iloc[:100].to_csv(d / "test.csv", index=False)
    return d


@pytest.fixture(scope="package")
def tables(files):
    train = load_table(files / "train.csv", META)
    test = load_table(files / "test.csv", train.schema, role="test")
    return train, test


@pytest.fixture(scope="package")
def run_dir(tables, tmp_path_factory):
    """A finished tiny warm-up on the 200-row training table."""
    path = tmp_path_factory.mktemp("runs") / "warm"
    run_warmup(tables[0], WarmupConfig(epochs=3, check_every=1, device="cpu", model_params=TINY, seed=0), path)
    return path


@pytest.fixture
def stub(monkeypatch):
    Stub.fits = []
    monkeypatch.setattr(cell, "make_model", lambda name, **kw: Stub(name, **kw))
    return Stub


@pytest.fixture(scope="package")
def run_floor(tables, tmp_path_factory):
    """A finished tiny warm-up on the 200-row training table with the test rows as hold-out (it has a floor)."""
    path = tmp_path_factory.mktemp("runs") / "warm_floor"
    run_warmup(tables[0], WarmupConfig(epochs=4, check_every=1, device="cpu", model_params=TINY, seed=0), path,
               holdout=tables[1])
    return path


@pytest.fixture
def checks(monkeypatch):
    """How often a comparison's config is checked (its one method-list check, run once per check of the whole
    config) and its privacy settings parsed (:meth:`PrivacyConfig.validated`, which every parse runs)."""
    n = {"config": 0, "privacy": 0}
    check_arms, check_privacy = config._dp_arms, PrivacyConfig.validated

    def counting_arms(*a, **kw):
        n["config"] += 1
        return check_arms(*a, **kw)

    def counting_privacy(self):
        n["privacy"] += 1
        return check_privacy(self)

    monkeypatch.setattr(config, "_dp_arms", counting_arms)
    monkeypatch.setattr(PrivacyConfig, "validated", counting_privacy)
    return n
