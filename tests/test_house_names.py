"""Issue 53 item 3: names that say what they hold, errors a caller can catch, imports where a reader looks.

* one definition per public name: a public function or class is defined in one module of memviz, except the
  names below, each kept in several modules on purpose (SAME_NAME_ON_PURPOSE says why);
* every ``raise`` names its kind: no ``raise MemvizError(...)`` (a caller catches BadTable, BadOption, ...);
* memviz's own imports sit at the top of a module: an import inside a function says why on its line
  (``# lazy: ...``), because it keeps a heavy optional library (torch, sdv, plotly, ...) off a cheap path.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "memviz"

#: a public name defined in several modules on purpose, and why
SAME_NAME_ON_PURPOSE = {
    "register": "every command module's hook that adds its parser (memviz.commands.COMMANDS calls each)",
    "run": "every command module's hook that runs its parsed arguments",
    "main": "an entry point of its own process (the CLI, the job worker, a study's script)",
    **dict.fromkeys(("resolve_ties", "scaled_e", "smallest", "sort_by_d_then_pos"),
                    "one kernel in two backends: numpy on the CPU (engine.cpudense), torch on CUDA (engine.kernels); "
                    "tests/engine/test_kernels.py holds the two equal"),
}


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        yield ".".join(path.relative_to(PKG.parent).with_suffix("").parts), path


def test_one_definition_per_public_name():
    where = defaultdict(list)
    for mod, path in _modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                where[node.name].append(mod)
    doubled = {name: mods for name, mods in where.items() if len(mods) > 1 and name not in SAME_NAME_ON_PURPOSE}
    assert not doubled, doubled
    assert all(len(where[name]) > 1 for name in SAME_NAME_ON_PURPOSE), "a name kept on purpose is no longer shared"


def test_every_raise_names_its_kind():
    base = []
    for mod, path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name == "MemvizError":
                    base.append(f"{mod}:{node.lineno}")
    assert not base, base


def test_an_import_inside_a_function_says_why():
    silent = []
    for mod, path in _modules():
        text = path.read_text()
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and "# lazy:" not in lines[node.lineno - 1]:
                    silent.append(f"{mod}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not sorted(set(silent)), sorted(set(silent))
