"""Fixtures shared by the dashboard library's tests: a small table and a finished run that copies it."""
import pytest
from dash_helpers import copier_run

from memviz.app import runs


@pytest.fixture(scope="module")
def small(sample):
    train, _ = sample
    return train.subset(train.row_ids[:120])


@pytest.fixture(scope="module")
def view(small, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("dash") / "copier"
    copier_run(small, run_dir)
    return runs.load_run(run_dir)
