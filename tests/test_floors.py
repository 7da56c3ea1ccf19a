"""The house's floors: who may import whom inside memviz, and no import circles.

Floors, bottom to top: the core (every module directly in memviz/ but the CLI and the
worker, and memviz.models) < memviz.compare < memviz.viz < memviz.study < memviz.app <
memviz.cli and memviz.worker. A module may import its own floor and the floors below,
never a floor above. Every import counts, also one hidden inside a function.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "memviz"
FLOORS = ["core", "compare", "viz", "study", "app", "top"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PKG.rglob("*.py")}


def floor(mod: str) -> str:
    parts = mod.split(".")
    if len(parts) >= 2 and parts[1] in ("compare", "viz", "study", "app"):
        return parts[1]
    if len(parts) >= 2 and parts[1] in ("cli", "worker", "__main__"):
        return "top"
    return "core"


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (annotations only: never executed)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out.update(id(n) for n in ast.walk(node))
    return out


def imports(mod: str, path: Path, known: set[str]) -> set[str]:
    """Modules of memviz (and top-level names of others) imported anywhere in the file that
    runs: at the top, inside functions, anywhere but an ``if TYPE_CHECKING:`` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    skip = _type_checking_only(tree)
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:  # `from . import viz` imports a submodule
                sub = f"{target}.{a.name}"
                out.add(sub if sub in known else target)
    return out


@pytest.fixture(scope="module")
def graph():
    mods = modules()
    known = set(mods)
    return {m: imports(m, p, known) for m, p in mods.items()}


def test_memviz_never_imports_streamlit(graph):
    bad = {m: sorted(i for i in deps if i.split(".")[0] == "streamlit") for m, deps in graph.items()}
    assert not {m: v for m, v in bad.items() if v}


def test_no_floor_imports_a_higher_floor(graph):
    bad = []
    for m, deps in graph.items():
        for d in deps:
            if d.split(".")[0] != "memviz" or d == "memviz":
                continue
            if FLOORS.index(floor(d)) > FLOORS.index(floor(m)):
                bad.append(f"{m} ({floor(m)}) imports {d} ({floor(d)})")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_circles(graph):
    internal = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    # Tarjan's strongly connected components: any component of two or more modules is a circle
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in internal[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(internal):
        if v not in index:
            visit(v)
    assert not circles, circles


def test_the_floors_are_what_the_guide_says(graph):
    """The check above cannot pass vacuously: each upper floor exists and builds on the ones below."""
    present = {floor(m) for m in graph}
    assert present == set(FLOORS)
    assert any(floor(d) == "core" for m, deps in graph.items() if floor(m) == "compare" for d in deps)
    assert any(floor(d) == "compare" for m, deps in graph.items() if floor(m) == "app" for d in deps)
