"""The audit as a CI gate: JUnit XML per member of the verdict's family, numeric thresholds, exit codes."""
from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest
from helpers import memviz_cli

from memviz.auditing.junit import junit_xml
from memviz.errors import MemvizError
from memviz.verdict.family import Family, Member
from memviz.verdict.thresholds import EXIT_THRESHOLD, Threshold, read_thresholds, threshold_exit
from memviz.verdict.verdict import EXIT_FAILED, EXIT_PASSED, EXIT_REFUSED


def cases(xml: str) -> dict:
    root = ET.fromstring(xml.encode())
    return {c.get("name"): c for c in root.iter("testcase")}


def test_one_case_per_member_of_whatever_family_the_verdict_reads(fresh_audit):
    """The cases follow the family the audit holds, not a list of their own: a member the JUnit writer has
    never heard of gets its case too, and a member that holds fails with the verdict's sentence."""
    fam = fresh_audit.family
    extra = Member("new_member", 1e-9, 1e-8, True, 0.05)
    a = dataclasses.replace(fresh_audit, family=Family((*fam.members, extra), fam.alpha))
    got = cases(junit_xml(a))
    names = [n.split(":")[0] for n in got]
    assert names == [m.name for m in a.family.members]
    failing = {n for n, c in got.items() if c.find("failure") is not None}
    assert failing == {"new_member: new member"}
    f = got["new_member: new member"].find("failure")
    assert f.get("message") == a.verdict.sentence and "p = 1e-09" in f.text
    root = ET.fromstring(junit_xml(a).encode())
    assert root.get("tests") == str(len(a.family.members)) and root.get("failures") == "1"


def test_copying_fails_the_members_that_hold_and_no_holdout_is_an_error(fresh_split, planted):
    import memviz

    tr, ho, _ = fresh_split
    syn, _, _ = planted
    a = memviz.audit(tr, syn, ho, quality=False)
    assert a.verdict.code == "copying"
    got = cases(junit_xml(a))
    holds = {f"{m.name}" for m in a.family.members if m.holds}
    assert {n.split(":")[0] for n, c in got.items() if c.find("failure") is not None} == holds
    assert "identical" in holds
    none = memviz.audit(tr, syn, quality=False, evidence=False)
    got = cases(junit_xml(none))
    assert list(got) == ["verdict"] and got["verdict"].find("error").get("type") == "no_holdout"


def test_hostile_text_stays_well_formed_xml(fresh_audit):
    """A verdict sentence or source with characters XML 1.0 cannot hold (a user's column name may carry
    them) and markup: the document parses, the markup is text."""
    xml = junit_xml(fresh_audit, source="syn\x00\x1b<script>&\"'.csv")
    root = ET.fromstring(xml.encode())
    assert "<script>" in root.find("testsuite").get("name") and "<script" not in xml


def test_thresholds_read_the_audits_figures_and_order_the_exit_codes(fresh_audit):
    a = fresh_audit
    r = read_thresholds(a, [Threshold("identical-share", 0.0), Threshold("named-rows", 0),
                            Threshold("excess", 1.0)])
    assert [x.value for x in r] == [a.identical_share, a.n_over_copied, a.excess]
    assert all(x.passes for x in r) and threshold_exit(EXIT_PASSED, r) == EXIT_PASSED
    above = read_thresholds(a, [Threshold("too-close-share", 0.0)])
    assert a.close.too_close_share > 0 and not above[0].passes
    assert "is above the limit 0 %" in above[0].sentence()
    assert threshold_exit(EXIT_PASSED, above) == EXIT_THRESHOLD
    assert threshold_exit(EXIT_FAILED, above) == EXIT_FAILED              # the verdict's gate first
    blind = dataclasses.replace(a, excess=None, close=None)
    unmeasured = read_thresholds(blind, [Threshold("excess", 0.5), Threshold("too-close-share", 0.5)])
    assert not any(x.measured or x.passes for x in unmeasured)
    assert threshold_exit(EXIT_PASSED, unmeasured) == EXIT_REFUSED
    assert threshold_exit(EXIT_PASSED, (*above, *unmeasured)) == EXIT_THRESHOLD
    for figure, limit in (("identical-share", 1.5), ("identical-share", -0.1), ("named-rows", float("nan")),
                          ("no-such-figure", 0.1)):
        with pytest.raises(MemvizError):
            Threshold(figure, limit)


@pytest.fixture()
def files(tmp_path, fresh_split, planted):
    tr, ho, fresh = fresh_split
    syn, _, _ = planted
    paths = {}
    for name, df in (("train", tr.data), ("holdout", ho.data), ("fresh", fresh.data), ("copies", syn)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


def test_the_command_writes_junit_and_gates_on_thresholds(capsys, tmp_path, files):
    base = ["audit", "--train", files["train"], "--holdout", files["holdout"], "--no-quality"]
    code, last, err = memviz_cli(capsys, *base, "--synthetic", files["copies"], "--out", tmp_path / "a",
                                 "--junit", tmp_path / "junit.xml", "--max-identical-share", "0.5", "--quiet")
    assert code == EXIT_PASSED, err                                        # --fail-on never, share 30 % <= 50 %
    out = json.loads(last)
    assert out["verdict"]["code"] == "copying" and out["exit_code"] == 0 and out["thresholds"][0]["passes"]
    got = cases((tmp_path / "junit.xml").read_text())
    assert got["--max-identical-share"].find("failure") is None
    assert got["identical: the identical share"].find("failure").get("message") == out["verdict"]["sentence"]
    code, last, _ = memviz_cli(capsys, *base, "--synthetic", files["copies"], "--out", tmp_path / "b",
                               "--max-identical-share", "0.01", "--quiet")
    assert code == EXIT_THRESHOLD and json.loads(last)["exit_code"] == EXIT_THRESHOLD
    code, _, _ = memviz_cli(capsys, *base, "--synthetic", files["copies"], "--out", tmp_path / "c",
                            "--max-identical-share", "0.01", "--fail-on", "copying", "--quiet")
    assert code == EXIT_FAILED
    code, _, _ = memviz_cli(capsys, "audit", "--train", files["train"], "--synthetic", files["fresh"],
                            "--out", tmp_path / "d", "--max-too-close-share", "0.5", "--no-quality", "--quiet")
    assert code == EXIT_REFUSED                                            # no hold-out: not measured
    for bad, why in ((["--max-copy-share", "2"], "between 0 and 1"),
                     (["--junit", tmp_path / "e" / "j.xml"], "inside --out")):
        code, _, err = memviz_cli(capsys, *base, "--synthetic", files["fresh"], "--out", tmp_path / "e", *bad)
        assert code == 2 and why in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "e").exists()                                 # refused before any work


def test_version(capsys):
    from memviz.io import VERSION

    code, last, _ = memviz_cli(capsys, "--version")
    assert code == 0 and last == f"memviz {VERSION}"
    from pathlib import Path

    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    assert project["version"] == VERSION


def test_verbose_adds_the_logged_diagnostics_and_nothing_else_changes(capsys, tmp_path, files):
    base = ["audit", "--train", files["train"], "--holdout", files["holdout"], "--synthetic", files["fresh"],
            "--no-quality", "--quiet"]
    code, quiet_last, quiet_err = memviz_cli(capsys, *base, "--out", tmp_path / "q")
    code_v, last, err = memviz_cli(capsys, *base, "--out", tmp_path / "v", "--verbose")
    assert code == code_v == 0
    quiet = quiet_err.strip().splitlines()
    lines = [x for x in err.strip().splitlines() if x not in quiet]   # what --verbose added
    assert any("nearest of 600 rows among 800" in x and "search on cpu" in x for x in lines), lines
    assert any(x.startswith("memviz audit: membership test: ") for x in lines)
    assert all(x.startswith("memviz audit: ") for x in lines)
    assert not any("nearest of" in x or " test: " in x for x in quiet)  # without --verbose: nothing logged
    strip = lambda line: {k: v for k, v in json.loads(line).items() if k not in ("seconds", "audit", "report", "rows")}  # noqa: E731
    assert strip(last) == strip(quiet_last)
