"""Errors a caller can catch by kind (issue 53 item 3): a bad table, a bad option, a bad run folder and a refused
verdict each raise their own MemvizError subclass, still a MemvizError (the CLI's one line and exit code 2 read
that), and nothing else: a bad option is no bad table."""
from __future__ import annotations

import pandas as pd
import pytest

from memviz.cli import main
from memviz.compare.config import CompareConfig
from memviz.dynamics.dynamiccut import DynamicCutParams, check_k
from memviz.engine import budget
from memviz.errors import (
    BadOption,
    BadRunFolder,
    BadTable,
    Busy,
    DataError,
    MemvizError,
    RefusedVerdict,
    RunError,
    TooLarge,
    checked_seed,
)
from memviz.folders import folder_unit
from memviz.tables.data import load_table, table_from_frame
from memviz.tables.holdout import refuse_shared_rows
from memviz.warmup.run import WarmupConfig, load_warmup
from memviz.warmup.store import RunStore

KINDS = (BadTable, BadOption, BadRunFolder, RefusedVerdict, TooLarge, Busy)


def _raises(kind, fn, *args, **kw):
    with pytest.raises(kind) as info:
        fn(*args, **kw)
    assert isinstance(info.value, MemvizError)
    assert [k for k in KINDS if isinstance(info.value, k)] == [kind], f"{info.value!r} is more than one kind"
    assert "\n" not in str(info.value)
    return info.value


def test_a_bad_table_raises_bad_table(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("a,a\n1,2\n")
    _raises(BadTable, load_table, f)                                     # two columns of one name
    _raises(BadTable, load_table, tmp_path / "missing.csv")
    _raises(BadTable, table_from_frame, pd.DataFrame({"x": [1.0, 2.0], "y": ["p", "q"]}), target="income")


def test_a_bad_option_raises_bad_option():
    _raises(BadOption, checked_seed, -1)
    _raises(BadOption, check_k, 0)
    _raises(BadOption, DynamicCutParams, 1.5)
    _raises(BadOption, lambda: WarmupConfig(epochs=0).resolved(100))
    _raises(BadOption, lambda: CompareConfig(seeds=()).validated())
    _raises(BadOption, lambda: CompareConfig(backend="nope").validated())


def test_a_bad_run_folder_raises_bad_run_folder(tmp_path):
    _raises(BadRunFolder, RunStore.open, tmp_path)                       # no manifest
    (tmp_path / "manifest.json").write_text("{not json")
    _raises(BadRunFolder, load_warmup, tmp_path)


def test_a_hold_out_that_shares_the_training_rows_refuses_the_verdict():
    err = _raises(RefusedVerdict, refuse_shared_rows, "holdout.csv", 90, 100, 0, 1000)
    assert "holdout.csv" in str(err)


def test_more_than_the_machine_holds_raises_too_large():
    """A caller can tell a machine limit (retry elsewhere) from a mistake in its input."""
    err = _raises(TooLarge, budget.check, 10**18, "a search of every row")
    assert str(err).startswith("a search of every row needs about")


def test_a_folder_another_writer_holds_raises_busy(tmp_path):
    """A caller can tell a held folder (try again later) from a bad one."""
    with folder_unit(tmp_path / "out", names=("a.txt",)):
        err = _raises(Busy, lambda: folder_unit(tmp_path / "out", names=("a.txt",)).__enter__())
    assert "another process is writing this folder" in str(err)


def test_the_cli_still_prints_each_kind_in_one_line(capsys):
    for kind in KINDS:
        assert issubclass(kind, MemvizError)
    assert main(["warmup", "--train", "no-such-file.csv", "--out", "x", "--epochs", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memviz warmup: ")


def test_the_old_names_still_catch_what_they_caught():
    """DataError and RunError were public before the kinds were named: a caller's except clause still works."""
    assert DataError is BadTable and RunError is BadRunFolder
