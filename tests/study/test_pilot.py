"""The pilot across scales: resumable warm-ups over (rows, epochs), a committed table, its rendering."""
import shutil

import numpy as np
import pytest
from conftest import ROOT

from memviz.study.pilot import (
    PilotDesign,
    run_dir,
    run_pilot,
    stored_design,
    stored_pilot,
)
from memviz.study.tables import pilot_rows

TINY = {"layers": [16], "n_timesteps": 5, "dim_t": 8, "batch_size": 64}


@pytest.fixture()
def data_dir(tmp_path):
    d = tmp_path / "data" / "adult"
    d.mkdir(parents=True)
    for f in ("train.csv", "test.csv", "meta.json"):
        shutil.copy(ROOT / "sample_data" / f, d / f)
    return tmp_path / "data"


def test_pilot_runs_in_order_reuses_finished_runs_and_renders(data_dir, tmp_path):
    design = PilotDesign(runs=((60, 4, 0), (120, 4, 0), (60, 4, 1)), n_samples=40, max_test=100, tabddpm_params=TINY)
    out = tmp_path / "o"
    first = run_pilot(data_dir, out, design, "cpu")
    last = first.sort_values("check").groupby(["n_train", "epochs", "seed"]).tail(1)
    assert sorted(map(tuple, last[["n_train", "epochs", "seed"]].to_numpy().tolist())) == [(60, 4, 0), (60, 4, 1),
                                                                                           (120, 4, 0)]
    assert np.allclose(first["copy_share"], first["excess"] / (1 - first["floor"]))
    assert set(first.loc[first["n_train"] == 120, "steps"]) == {8}      # 4 epochs x ceil(120 / 64)
    mtime = (run_dir(out, design, 60, 4, 0) / "manifest.json").stat().st_mtime_ns
    again = run_pilot(data_dir, out, design, "cpu")                     # a rerun reuses every finished warm-up
    assert (run_dir(out, design, 60, 4, 0) / "manifest.json").stat().st_mtime_ns == mtime
    assert again.equals(stored_pilot(out))
    assert stored_design(out)["runs"] == [[60, 4, 0], [120, 4, 0], [60, 4, 1]]
    text = "\n".join(pilot_rows(stored_pilot(out)))
    assert "| 60 | 4 | 4 | 2 |" in text and "| 120 | 4 | 8 | 1 |" in text and "(one seed)" in text
