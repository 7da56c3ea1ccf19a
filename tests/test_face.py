"""The package's face costs nothing: `import memviz` and `memviz --help` load none of numpy, pandas or torch,
and every public name still resolves (memviz.faces)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import memviz
import memviz.compare
import memviz.study
import memviz.viz
from memviz.io import VERSION

HEAVY = ("torch", "pandas", "numpy", "scipy", "sklearn", "plotly")


def _loaded(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\n"
                          f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_memviz_loads_nothing_heavy():
    assert not any(_loaded("import memviz").values())


def test_memviz_help_loads_nothing_heavy():
    code = ("import contextlib, io\nfrom memviz.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    assert not any(_loaded(code).values())


def test_every_public_name_resolves_and_unknown_ones_say_so():
    for pkg in (memviz, memviz.viz, memviz.compare, memviz.study):
        for name in pkg.__all__:
            assert getattr(pkg, name) is not None, (pkg.__name__, name)
            assert name in dir(pkg)
    assert memviz.audit.from_run is memviz.Audit.from_run

    assert memviz.__version__ == VERSION
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        memviz.nothing  # noqa: B018


def test_a_command_loads_only_its_own_module():
    code = ("import contextlib, io\nfrom memviz.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['inspect', '--help'])\n    except SystemExit:\n        pass\n"
            "import sys\nassert 'memviz.commands.inspect' in sys.modules and 'memviz.commands.audit' not in sys.modules")
    _loaded(code)
