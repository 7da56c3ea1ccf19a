"""The README's CLI block, run in the order printed (issue 42 item 8): every command as the README writes it, in
a folder holding a copy of sample_data/, each reading what an earlier one made. Only the training budgets are
appended (the README's warm-up takes a minute and its comparison 6-14 minutes): a shorter warm-up and a
comparison of two arms of one generator; argparse takes the last value, so the printed options stay as they are.
"""
from __future__ import annotations

import json
import shutil

import pytest
from test_docs import README, ROOT, _commands, _text

from memviz.cli import main

pytestmark = pytest.mark.slow

#: appended to the command of the same name: the budgets only
FASTER = {"warmup": ["--epochs", "6", "--check-every", "2", "--n-samples", "600"],
          "sample": ["--rows", "600"],
          "compare": ["--methods", "baseline,dynamiccut", "--models", "tabddpm", "--seeds", "0", "--epochs", "4"]}
#: exit codes a command may end with: the audit's gate (3: the verdict fails it; 4: the audit refused to judge, as
#: a 6-epoch model's quality makes it) is an answer, not a user mistake (2)
CODES = {"audit": (0, 3, 4), "report": (0, 3, 4)}


def test_the_readme_cli_block_runs_as_printed(tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "sample_data", tmp_path / "sample_data")
    monkeypatch.chdir(tmp_path)
    argvs = _commands(_text(README))
    assert [a[0] for a in argvs][:3] == ["warmup", "inspect", "sample"]
    for argv in argvs:
        code = main(argv + FASTER.get(argv[0], []))
        out, err = capsys.readouterr()
        assert code in CODES.get(argv[0], (0,)), f"memviz {' '.join(argv)}: exit {code}: {err[-1500:]}"
        json.loads(out.strip().splitlines()[-1])                      # every command ends with its JSON line
    for made in ("runs/adult", "synthetic.csv", "rows.csv", "mem.csv", "audit/audit.json", "pruned.csv",
                 "runs/compare/results.csv", "report/report.html"):
        assert (tmp_path / made).exists(), made
