"""The README and the pages under docs/ stay true (issue 37 item 5, issue 42 item 8).

* every relative link (and its #anchor, for a Markdown page) points to something that exists;
* every ``memviz COMMAND ...`` in a shell block of the README or docs/ names a real command and parses with
  memviz's own parser (options and their values included; a line with ``...`` is checked by name only);
* the README's CLI block runs in the order printed: each command's input files are the bundled sample_data/
  or written by an earlier command of the block;
* the README states the audit gate as the code defines it (its levels and exit codes);
* benchmarks/README.md has a row for every script in benchmarks/.

Nothing is run: the parser is built, not the commands (seconds).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from memviz.cli import build_parser
from memviz.commands import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
#: the arguments of a command that name an input file or folder, and those that name an output
INPUTS = ("train", "schema", "metadata", "synthetic", "holdout", "test", "run", "run_dir", "compare")
OUTPUTS = ("out", "rows_out", "removed_out")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """The page without its code blocks and inline code (a link inside code is not a link)."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    heads = re.findall(r"^#{1,6} +(.+?) *$", FENCE.sub("", _text(page)), re.M)
    return {_slug(h) for h in heads}


def _commands(text: str) -> list[list[str]]:
    """Every ``memviz ...`` command line of the page's shell blocks, as argv (continuations joined,
    comments dropped)."""
    out = []
    for lang, body in FENCE.findall(text):
        if lang.strip() not in ("bash", "sh", "shell", "console"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            if not line.lstrip().startswith("memviz "):
                continue
            argv = shlex.split(line, comments=True)
            for cut in ("||", "&&", "|", ";"):          # only the memviz command of a compound line
                if cut in argv:
                    argv = argv[: argv.index(cut)]
            out.append(argv[1:])
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_something_that_exists(page):
    broken = []
    for target in LINK.findall(_prose(_text(page))):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):       # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no such heading in {dest.name})")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_readme_links_every_topic_page():
    text = _text(README)
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in text, f"README.md does not link docs/{page.name}"
    assert "(benchmarks/README.md)" in text


@pytest.mark.parametrize("page", [p for p in PAGES if _commands(_text(p))], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cli_example_is_a_real_command_that_parses(page):
    for argv in _commands(_text(page)):
        assert argv and argv[0] in COMMANDS, f"{page.name}: memviz {' '.join(argv)}: no such command"
        if "..." in argv:
            continue
        try:
            build_parser([argv[0]]).parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{page.name}: memviz {' '.join(argv)} does not parse (exit {exc.code})")


def test_the_readme_cli_runs_in_the_order_printed():
    made: set[str] = set()
    argvs = _commands(_text(README))
    assert len(argvs) >= 6 and {"warmup", "sample", "audit"} <= {a[0] for a in argvs}
    for argv in argvs:
        args = vars(build_parser([argv[0]]).parse_args(argv))
        for name in INPUTS:
            values = args.get(name)
            for value in values if isinstance(values, list) else [values]:
                if value is None:
                    continue
                norm = value.rstrip("/")
                bundled = norm.startswith("sample_data/") and (ROOT / norm).exists()
                assert norm in made or bundled, (
                    f"memviz {' '.join(argv)}: {value} is neither in sample_data/ nor made by an earlier command")
        made.update(str(args[name]).rstrip("/") for name in OUTPUTS if args.get(name))


def test_the_readme_states_the_gate_as_the_code_defines_it():
    from memviz.verdict.verdict import EXIT_FAILED, EXIT_PASSED, EXIT_REFUSED, GATES

    text = _text(README)
    assert f"--fail-on {{{','.join(GATES)}}}" in text
    for code in (EXIT_PASSED, EXIT_FAILED, EXIT_REFUSED, 2):
        assert re.search(rf"^\| {code} \|", text, re.M), f"exit code {code} is not in the README's gate table"
    assert any(a[0] == "audit" and "--fail-on" in a for a in _commands(text)), "the CLI block shows no gate"


def test_benchmarks_readme_has_a_row_per_script():
    text = _text(ROOT / "benchmarks" / "README.md")
    scripts = sorted(p.name for p in (ROOT / "benchmarks").iterdir() if p.suffix in (".py", ".sh"))
    missing = [s for s in scripts if f"| `{s}" not in text]
    assert not missing, f"benchmarks/README.md has no row for {missing}"


def test_the_readme_is_short():
    assert len(_text(README).splitlines()) <= 150


#: ``memviz.X.Y`` names that are not Python objects: file-format names (``"memviz.audit/2"``) end in ``/``
DOTTED = re.compile(r"\bmemviz(?:\.[A-Za-z_]\w*)+(?!\w)(?!\.\w)(?!/)")
NOT_OBJECTS = {"memviz.__main__", "memviz.nothing", "memviz.x"}      # the CLI's entry, tests' made-up names


def _resolves(dotted: str) -> bool:
    """An importable module, then attributes of it; a dataclass's field or an annotated attribute counts."""
    import dataclasses
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            fields = ({f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set())
            if hasattr(obj, name):
                obj = getattr(obj, name)
            elif name in fields or name in getattr(obj, "__annotations__", {}):
                return True                                     # an instance's field: nothing below to follow
            else:
                return False
        return True
    return False


def test_every_dotted_memviz_name_in_the_docs_and_docstrings_exists():
    """Issue 37 item 4, stale references: modules moved (memviz.measure.membership -> memviz.evidence...,
    memviz.dashboard -> memviz.app, memviz.viz.style -> memviz.text) and names were removed while the docs
    and docstrings kept pointing at them. Every ``memviz.a.b`` in README, docs/, benchmarks/, screens/, app.py
    and the package's own source must import (a module, then its attributes)."""
    files = [README, ROOT / "app.py", *ROOT.glob("docs/**/*.md"), *ROOT.glob("benchmarks/*.py"),
             *ROOT.glob("screens/*.py"), *ROOT.glob("memviz/**/*.py")]
    names = {}
    for f in files:
        if "runs" in f.relative_to(ROOT).parts:
            continue
        for m in DOTTED.findall(f.read_text(encoding="utf-8")):
            names.setdefault(m, f.relative_to(ROOT).as_posix())
    stale = {n: f for n, f in sorted(names.items()) if n not in NOT_OBJECTS and not _resolves(n)}
    assert not stale, stale


def test_ci_runs_the_readmes_test_command():
    """CI once installed ``.[dev]`` while the README said ``.[all,dev]``: the dashboard's tests then failed on a clean
    machine for want of streamlit. CI's install line is the README's test command, quiet flags aside."""
    readme = (ROOT / "README.md").read_text()
    commands = [ln for ln in readme.splitlines() if ln.startswith("python3 -m venv") and "pytest" in ln]
    assert len(commands) == 1, commands
    ci = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.startswith("python3 -m venv")]
    assert len(ci) == 1, ci
    assert ci[0].replace(" -q", "") == commands[0]


def _collected(*args: str) -> int:
    """How many tests `python -m pytest --collect-only ARGS` collects (in a subprocess, from the repository root)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    counts = [int(m.group(1)) for m in re.finditer(r"^tests/\S+: (\d+)$", proc.stdout, re.M)]
    assert proc.returncode == 0 and counts, proc.stdout[-2000:] + proc.stderr[-2000:]
    return sum(counts)


@pytest.mark.slow
def test_the_readme_states_the_suites_real_counts():
    """Issue 51: the README said 1,379 / 1,348 tests where the suite collected 1,377 / 1,346. Its counts are the
    ones `pytest` collects: the whole suite, and the selection it gives for development."""
    text = _text(README)
    whole = re.search(r"The suite is \*\*([\d,]+) tests", text)
    fast = re.search(r'`python -m pytest -m "not slow and not browser"` runs ([\d,]+) of them', text)
    assert whole and fast, "the README's test paragraph no longer says its counts in the expected words"
    assert int(whole.group(1).replace(",", "")) == _collected()
    assert int(fast.group(1).replace(",", "")) == _collected("-m", "not slow and not browser")


# --- docs/architecture.md: the folders in pipeline order and the "where is X computed" index (issue 53 item 4) ---

ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: a backticked path of this repository (a file or a folder) on the architecture page
REPO_PATH = re.compile(r"`((?:memviz|screens|tests|benchmarks|docs)/[\w/.-]*|app\.py)`")
BARE = re.compile(r"`([a-z_][a-z0-9_]*)`")


def _section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section (up to the next ``## ``)."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"docs/architecture.md has no '## {heading}' section"
    return m.group(1)


def _table_rows(section: str) -> list[list[str]]:
    rows = [ln for ln in section.splitlines() if ln.startswith("|") and not re.match(r"^\|[-| :]+\|$", ln)]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in rows[1:]]       # the header dropped


def _folders_table() -> dict[str, str]:
    """The folders table: {folder ("" for memviz/ itself): its modules cell}."""
    out = {}
    for cells in _table_rows(_section(_text(ARCHITECTURE), "The folders, in pipeline order")):
        folder = re.search(r"`memviz/([\w/]*)`", cells[1])
        assert folder, f"a row of the folders table names no `memviz/...` folder: {cells}"
        out[folder.group(1).rstrip("/")] = cells[-1]
    return out


def test_architecture_names_every_folder_and_module_of_memviz_in_its_row():
    """Every folder of memviz/ has a row; each row names, in backticks, exactly its folder's modules (a backticked
    bare word in a row is a module of that folder: the page once named `evaluate/report`, `evidence/readings` and
    `auditing/schema`, which did not exist, and left out `tables/holdout`)."""
    table = _folders_table()
    folders = {p.name for p in (ROOT / "memviz").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert set(table) == folders | {""}, (f"folders without a row: {sorted(folders - set(table))}; "
                                          f"rows that are no folder: {sorted(set(table) - folders - {''})}")
    for folder, cell in table.items():
        here = ROOT / "memviz" / folder
        named = set(BARE.findall(cell))
        modules = {p.stem for p in here.glob("*.py")} - {"__init__"}
        if folder == "":
            modules |= {"__init__"}
            named |= {m for m in re.findall(r"`(__\w+__)`", cell)}
        assert not named - modules, f"memviz/{folder}: the page names modules that do not exist: {sorted(named - modules)}"
        assert not modules - named, f"memviz/{folder}: modules the page does not name: {sorted(modules - named)}"


def test_architecture_lists_the_folders_in_pipeline_order():
    order = list(_folders_table())
    steps = ["tables", "measure", "warmup", "dynamics", "mitigate", "compare", "evaluate", "auditing", "viz"]
    assert [s for s in order if s in steps] == steps, order


def test_every_path_and_dotted_name_on_the_architecture_page_exists():
    text = _text(ARCHITECTURE)
    missing = [p for p in REPO_PATH.findall(text) if not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
    stale = [n for n in DOTTED.findall(text) if n not in NOT_OBJECTS and not _resolves(n)]
    assert not stale, f"docs/architecture.md names objects that do not exist: {stale}"


def _index(heading: str) -> list[list[str]]:
    return _table_rows(_section(_text(ARCHITECTURE), "Where is X computed").split(f"### {heading}\n", 1)[1]
                       .split("\n### ", 1)[0])


def test_the_index_names_every_page_with_the_app_function_it_calls():
    rows = _index("Every page")
    named = {}
    for cells in rows:
        screen = re.search(r"`(screens/\w+\.py|app\.py)`", cells[0])
        assert screen, cells
        calls = re.findall(r"`memviz\.app\.(\w+)\.(\w+)`", cells[-1])
        src = _text(ROOT / screen.group(1))
        for module, func in calls:
            assert re.search(rf"\b{module}\.{func}\(", src), f"{screen.group(1)} does not call {module}.{func}"
        named[screen.group(1)] = calls
    pages = {f"screens/{p.name}" for p in (ROOT / "screens").glob("*.py")} | {"app.py"}
    assert set(named) == pages, f"pages without a row: {sorted(pages - set(named))}"
    assert all(named[p] for p in named if re.match(r"screens/\d", p)), "a page's row names no memviz.app function"


def test_the_index_names_every_command_with_the_function_it_runs():
    rows = _index("Every command")
    named = {}
    for cells in rows:
        module = re.search(r"`(memviz/commands/\w+\.py)`", cells[0])
        assert module, cells
        src = _text(ROOT / module.group(1))
        for dotted in DOTTED.findall(cells[-1]):
            assert re.search(rf"\b{dotted.rsplit('.', 1)[1]}\b", src), f"{module.group(1)} does not use {dotted}"
        named[module.group(1)] = DOTTED.findall(cells[-1])
    commands = {f"memviz/commands/{p.name}" for p in (ROOT / "memviz" / "commands").glob("*.py")}
    assert set(named) == commands, f"commands without a row: {sorted(commands - set(named))}"
    assert {Path(m).stem for m in named} >= set(COMMANDS)
    assert all(named[m] for m in named if Path(m).stem in COMMANDS), "a command's row names no function"


def test_the_index_names_every_test_of_the_verdict():
    text = " ".join(" ".join(c) for c in _index("Every test of the verdict")).lower()
    for test in ("ratio test", "floor", "excess", "too close", "identical", "pooled", "near-verbatim", "partial",
                 "per-row test", "regions", "data-copying", "membership", "attribute", "density ratio",
                 "singling out", "linkability"):
        assert test in text, f"the index does not say where the {test} is computed"
    for cells in _index("Every test of the verdict"):
        assert DOTTED.search(cells[1]), f"a test of the verdict without the memviz name that computes it: {cells}"
