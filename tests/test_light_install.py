"""`pip install memviz` alone is an audit tool: the CPU audit runs with every extra's library absent.

Each test runs a fresh interpreter whose import system refuses the extras' libraries (a meta-path
finder raising ``ModuleNotFoundError``, as for a library that is not installed), so a module that
imports one of them, at its top or inside a function, fails there."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"

#: what the extras install (pyproject.toml): none of it may be imported by the CPU audit
EXTRA_LIBRARIES = ("torch", "sdv", "sdmetrics", "ctgan", "rdt", "copulas", "deepecho", "sklearn", "imblearn",
                   "joblib", "plotly", "streamlit", "dask", "distributed", "opacus", "mlflow", "anonymeter")

BLOCKER = textwrap.dedent(f"""
    import importlib.abc, json, sys
    BLOCKED = {EXTRA_LIBRARIES!r}

    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

    sys.meta_path.insert(0, Absent())
""")


def run_without_extras(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(BLOCKER + textwrap.dedent(code) + textwrap.dedent("""
        loaded = sorted({m.split(".")[0] for m in sys.modules} & set(BLOCKED))
        print("LOADED", json.dumps(loaded))
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_cpu_audit_and_its_command_run_without_torch_sdv_or_any_extra(tmp_path):
    """memviz.audit, Audit.write and `memviz audit` (with its gate and JUnit file) on the sample with
    torch, sdv and every other extra's library refused; nothing of theirs is loaded."""
    out = run_without_extras(f"""
        import json
        import pandas as pd
        import memviz
        from memviz.cli import main

        train = pd.read_csv({str(SAMPLE / 'train.csv')!r})
        test = pd.read_csv({str(SAMPLE / 'test.csv')!r}).sample(frac=1, random_state=0)
        audit = memviz.audit(train, test.iloc[:500], holdout=test.iloc[500:], schema={str(SAMPLE / 'meta.json')!r})
        audit.write("api")
        print("VERDICT", audit.verdict.code)
        test.iloc[:500].to_csv("syn.csv", index=False)
        test.iloc[500:].to_csv("hold.csv", index=False)
        code = main(["audit", "--train", {str(SAMPLE / 'train.csv')!r}, "--schema", {str(SAMPLE / 'meta.json')!r},
                     "--synthetic", "syn.csv", "--holdout", "hold.csv", "--out", "cli", "--fail-on", "copying",
                     "--junit", "junit.xml", "--quiet"])
        print("CODE", code)
    """, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.split(" ")[0].isupper())
    assert lines["VERDICT"] == "no_copying" and lines["CODE"] == "0"
    assert json.loads(lines["LOADED"]) == []
    for folder in ("api", "cli"):
        assert json.loads((tmp_path / folder / "audit.json").read_text())["verdict"]["code"] == "no_copying"
        html = (tmp_path / folder / "report.html").read_text()
        assert "pip install &#x27;memviz[plots]&#x27;" in html or "pip install 'memviz[plots]'" in html
    assert (tmp_path / "junit.xml").read_text().startswith("<?xml")


@pytest.mark.parametrize(("command", "extra"), [
    (["warmup", "--train", "TRAIN", "--schema", "META", "--out", "run"], "train"),
    (["compare", "--train", "TRAIN", "--test", "TEST", "--schema", "META", "--out", "cmp"], "train"),
])
def test_a_command_that_needs_an_extra_says_which_in_one_line(tmp_path, command, extra):
    args = [str(SAMPLE / "train.csv") if a == "TRAIN" else str(SAMPLE / "test.csv") if a == "TEST"
            else str(SAMPLE / "meta.json") if a == "META" else a for a in command]
    out = run_without_extras(f"""
        from memviz.cli import main
        print("CODE", main({args!r}))
    """, tmp_path)
    assert "CODE 2" in out.stdout, out.stderr[-3000:]
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and err[0] == (f"memviz {command[0]}: error: needs torch, which is not installed: "
                                        f"pip install 'memviz[{extra}]'")


def test_the_base_install_is_the_audits_libraries_and_all_is_every_extra():
    """pyproject: the base dependencies are what the audit imports (the test above refuses the rest);
    `[all]` (the README's app command) holds every user-facing extra, `dp` included."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert base == {"numpy", "pandas", "scipy", "pyarrow", "jsonschema", "threadpoolctl", "filelock", "jinja2", "tqdm"}
    extras = project["optional-dependencies"]
    everything = extras["all"][0]
    for extra in set(extras) - {"all", "dev"}:
        assert extra in everything.split("[")[1], extra
    readme = (ROOT / "README.md").read_text()
    assert 'pip install -e ".[all]"' in readme and 'pip install -e ".[all,dev]"' in readme
