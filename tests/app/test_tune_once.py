"""Issue 37 item 4: DynamicCut's (p, k, T) is one object, checked once and passed down; the run's ranking
is computed once and reused by Tune & prune and the report.

The issue counted p parsed 4 times, bounded 3 times in the UI, validated 2 + 2C times per slider move
(C checks) and the report ranking the rows C + 2 times. These tests count them again: each wraps the one
validator (:class:`memviz.dynamics.dynamiccut.DynamicCutParams`'s p check) or the one scorer and counts.
"""
from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest
from dash_helpers import APP, copier_run

from memviz.app import reports, runs
from memviz.cli import main
from memviz.dynamics import dynamiccut as dc
from memviz.errors import MemvizError
from memviz.jobs import control as jobs

ROOT = Path(__file__).resolve().parents[2]
EPOCHS = (2, 4, 6, 8, 10, 12)


@pytest.fixture(scope="module")
def root(small, tmp_path_factory):
    root = tmp_path_factory.mktemp("once")
    copier_run(small, root / "copier", epochs=EPOCHS)
    return root


@pytest.fixture
def counted(monkeypatch):
    """{"p": p checks, "rank": rankings scored}: wraps the one p check and the one scorer."""
    n = {"p": 0, "rank": 0}
    check_p, scores = dc._check_p, dc.score_rows

    def counting_p(p):
        n["p"] += 1
        return check_p(p)

    def counting_scores(*a, **kw):
        n["rank"] += 1
        return scores(*a, **kw)

    monkeypatch.setattr(dc, "_check_p", counting_p)
    monkeypatch.setattr(dc, "score_rows", counting_scores)
    return n


# ------------------------------------------------------------------ the one object
def test_the_parameters_are_checked_when_made_one_line_per_bad_value():
    assert dc.DynamicCutParams() == dc.DEFAULTS and (dc.DEFAULT_P, dc.DEFAULT_K) == (0.10, 3)
    for kw, msg in (({"p": 1.5}, "p must be strictly between 0 and 1, got 1.5"),
                    ({"p": True}, "p must be strictly between 0 and 1, got True"),
                    ({"k": 0}, "k must be an integer >= 1, got 0"),
                    ({"k": 2.5}, "k must be an integer >= 1, got 2.5"),
                    ({"T": "x"}, "T must be a number of epochs, got 'x'"),
                    ({"T": float("nan")}, "T must be a number of epochs, got nan")):
        with pytest.raises(MemvizError) as e:
            dc.DynamicCutParams(**kw)
        assert str(e.value) == msg and "\n" not in str(e.value)
    with pytest.raises(MemvizError, match="p must be"):   # p first, then k, then T
        dc.DynamicCutParams(p=2, k=0, T="x")
    params = dc.DynamicCutParams(0.2, 2, 4)
    assert (params.p, params.k, params.T) == (0.2, 2, 4) and params.budget(10) == 2
    with pytest.raises(MemvizError, match="would remove all 2 training rows"):
        dc.DynamicCutParams(0.6).budget(2)
    assert params.at(8) == dc.DynamicCutParams(0.2, 2, 8)


def literal_defaults(path: Path) -> list[str]:
    """Where ``path`` gives p or k a literal default of 0.1 or 3: an argument's default, a dataclass field's,
    a ``.get("p", 0.1)``'s (found in the syntax tree, so prose and examples do not count)."""
    tree, out = ast.parse(path.read_text(encoding="utf-8")), []

    def lit(node) -> bool:
        return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value in (0.1, 3)

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            pos = [*a.posonlyargs, *a.args]
            pairs = [*zip(pos[len(pos) - len(a.defaults):], a.defaults), *zip(a.kwonlyargs, a.kw_defaults)]
            out += [f"{path.name}:{node.lineno} {arg.arg}" for arg, d in pairs if arg.arg in ("p", "k") and lit(d)]
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) in ("p", "k") and lit(node.value):
            out.append(f"{path.name}:{node.lineno} {node.target.id}")
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get" and len(node.args) == 2
              and isinstance(node.args[0], ast.Constant) and node.args[0].value in ("p", "k") and lit(node.args[1])):
            out.append(f"{path.name}:{node.lineno} get({node.args[0].value!r})")
    return out


def test_no_module_but_the_owner_restates_a_default_p_or_k():
    """The defaults are written once, in DynamicCutParams: any other module reads them (DEFAULTS, DEFAULT_P)."""
    owner = ROOT / "memviz" / "dynamics" / "dynamiccut.py"
    # the study's scale settings (memviz/study/scales.py) restate them too: another helper's file, left for it
    known = {ROOT / "memviz" / "study" / "scales.py"}
    files = sorted([*(ROOT / "memviz").rglob("*.py"), *(ROOT / "screens").glob("*.py")])
    hits = [h for f in files if f != owner and f not in known for h in literal_defaults(f)]
    assert not hits, hits
    assert len(literal_defaults(owner)) == 2                       # DynamicCutParams's own p and k
    assert len(literal_defaults(ROOT / "memviz" / "study" / "scales.py")) == 2   # the test sees the known ones


def test_the_pages_bound_p_in_one_place():
    """Tune & prune's slider, its clamp of a p from the URL and Compare's field all read runs.P_RANGE."""
    for page in ("5_tune.py", "6_compare.py"):
        text = (ROOT / "screens" / page).read_text(encoding="utf-8")
        assert not re.search(r"0\.01|0\.50?\b", text), page
    assert runs.P_RANGE == (0.01, 0.50, 0.01) and runs.ui_p(0.9) == 0.5 and runs.ui_p(0.004) == 0.01


def test_p_k_T_from_the_url_or_the_file_are_parsed_and_checked_in_one_place():
    tuned = runs.saved_prune_params({"run": "r", "p": "0.17", "k": "2", "T": "4"}, "r")
    assert tuned == runs.PruneParams("r", 0.17, 2, 4) and tuned.dc == dc.DynamicCutParams(0.17, 2, 4)
    assert tuned.to_query() == {"p": "0.17", "k": "2", "T": "4"}
    assert runs.saved_prune_params({"run": "r", "p": "1.5", "k": "2"}, "r") == runs.PruneParams("r")  # out of (0, 1)
    with pytest.raises(MemvizError, match="k must be an integer >= 1, got 0"):
        runs.PruneParams("r", 0.1, 0)


# ------------------------------------------------------------------ counted
def test_a_prune_call_checks_p_once(root, counted, tmp_path):
    with contextlib.redirect_stdout(io.StringIO()):
        main(["prune", str(root / "copier"), "--p", "0.2", "--out", str(tmp_path / "pruned.csv")])
    assert counted == {"p": 1, "rank": 1}   # it was {"p": 2, "rank": 1}


def test_the_library_path_of_a_slider_move_checks_p_once_and_ranks_nothing(root, counted):
    view = runs.load_run(root / "copier")
    ranked = runs.rankings(view, 3)                  # the page's cache, made once per run and k
    counted.update(p=0, rank=0)
    tuned = runs.PruneParams(view.run_id, 0.2, 3, 6)   # the page makes it from the sliders
    runs.prune_preview(view, params=tuned.dc, ranked=ranked)
    runs.early_curve(view, ranked=ranked, params=tuned.dc)
    assert counted == {"p": 1, "rank": 0}   # it was 2 + 2C = 14 p checks for C = 6 checks


def test_the_report_ranks_the_rows_once_per_check_epoch_or_not_at_all_with_the_tune_pages_rankings(root, counted):
    view = runs.load_run(root / "copier")
    reports.report_html(view, None, p=0.2, k=3, T=None, n_leaks=0)
    assert counted == {"p": 1, "rank": len(EPOCHS)}     # it was 16 p checks and C + 2 = 8 rankings
    ranked = runs.rankings(view, 3)
    counted.update(p=0, rank=0)
    with_ranked = reports.report_html(view, None, params=dc.DynamicCutParams(0.2, 3, None), ranked=ranked, n_leaks=0)
    assert counted == {"p": 1, "rank": 0}
    assert "<figure" in with_ranked
    # the same figures read from the kept rankings as ranked afresh
    fresh = [f.to_json() for f in reports.figures(view, p=0.2, k=3)]
    kept = [f.to_json() for f in reports.figures(view, params=dc.DynamicCutParams(0.2, 3), ranked=ranked)]
    assert fresh == kept


def test_a_p_move_on_the_tune_page_checks_p_once_and_ranks_nothing(root, counted, monkeypatch):
    """The page itself, driven by Streamlit's AppTest: after the first draw (which ranks the rows at every
    check epoch once, into the cache the Report page reads too), a p move checks p once and scores no row."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    (root / "copier" / runs.TUNING).unlink(missing_ok=True)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["run"] = "copier"
    at.run()
    at.switch_page("screens/5_tune.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.slider(key="tune_p").label == "p: share of rows to remove"
    assert (at.slider(key="tune_p").min, at.slider(key="tune_p").max) == (0.01, 0.5)
    counted.update(p=0, rank=0)
    at.slider(key="tune_p").set_value(0.2).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["p"] == "0.20"
    assert counted == {"p": 1, "rank": 0}
    # the Report page then reads the same rankings: it ranks nothing either
    counted.update(p=0, rank=0)
    at.switch_page("screens/7_report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert counted["rank"] == 0
