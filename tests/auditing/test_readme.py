"""The README's audit example runs as written (its python block, with the output folder moved to a temp dir)."""
from __future__ import annotations

import os
import re

from conftest import ROOT


def test_the_readme_audit_example_runs(tmp_path, capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Audit any synthetic table"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "memviz.audit(" in block
    code = block.replace('"audit_out"', repr(str(tmp_path / "audit_out")))
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert out.split(" - ")[0] in ("no_copying", "rows_over_copied")
    assert {"audit.json", "report.html", "rows.csv"} <= {p.name for p in (tmp_path / "audit_out").iterdir()}


def test_every_verdict_code_is_in_the_readme():
    from memviz.verdict.verdict import CODES

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(f"| `{code}` |" in text for code in CODES)
