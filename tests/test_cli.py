"""The CLI contract that scripts rely on."""
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from dash_helpers import copier_run
from helpers import TINY_MODEL

from memviz.app import readings, runs
from memviz.cli import main
from memviz.tables.data import load_table
from memviz.warmup.run import WarmupConfig, run_warmup
from memviz.warmup.store import RunStore
from memviz.warmup.tracking import check_seed

SAMPLE = ROOT / "sample_data"


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture()
def small_files(tmp_path, sample):
    train, test = sample
    tr = train.data.iloc[:200].reset_index(drop=True)
    syn = pd.concat([test.data.iloc[:40], tr.iloc[[7, 3]]], ignore_index=True)  # two planted copies at the end
    tr.to_csv(tmp_path / "train.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    return tmp_path


def test_memorize_contract(capsys, small_files):
    out_csv = small_files / "out.csv"
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(small_files / "syn.csv"),
                             "--out", str(out_csv), "--device", "cpu", "--quiet")
    assert code == 0, err
    summary = last_json(out)
    assert {"mem_ratio", "mem_auc", "n_train", "n_synthetic", "seconds"} <= set(summary)
    assert summary["n_train"] == 200 and summary["n_synthetic"] == 42
    res = pd.read_csv(out_csv)
    assert list(res.columns[:6]) == ["nn1", "nn2", "d1", "d2", "ratio", "memorized"]
    assert len(res) == 42
    assert res["nn1"].iloc[-2:].tolist() == [7, 3] and res["memorized"].iloc[-2:].all()
    assert summary["mem_ratio"] == pytest.approx(res["memorized"].mean())
    assert ((res["nn1"] >= 0) & (res["nn1"] < 200)).all()


@pytest.mark.parametrize("mutate, needle", [
    (lambda p: p.write_text(""), "empty"),
    (lambda p: p.write_bytes("age,workclass\n30,caf\xe9\n".encode("latin-1")), "encoding"),
    (lambda p: p.write_text("a,b\n1,2\n"), "not in"),
    (lambda p: p.write_bytes(b"\xef\xbb\xbf\n"), "empty"),  # only a UTF-8 BOM
])
def test_memorize_user_errors_exit_2_with_one_line(capsys, small_files, mutate, needle):
    bad = small_files / "bad.csv"
    mutate(bad)
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(bad), "--out",
                             str(small_files / "o.csv"), "--quiet")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err and "bad.csv" in err
    assert not (small_files / "o.csv").exists()  # no half-written output


def test_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["memorize", "--train", "x.csv"])
    assert e.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_warmup_inspect_prune_contract(capsys, small_files):
    run = small_files / "run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--out", str(run), "--epochs", "4", "--check-every", "2",
                             "--n-samples", "50", "--seed", "1", "--device", "cpu", "--quiet",
                             "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    w = last_json(out)
    assert {"run_dir", "checks", "final_mem_ratio", "seconds"} <= set(w) and w["checks"] == 2
    assert 0.0 <= w["final_mem_ratio"] <= 1.0

    code, out, err = run_cli(capsys, "inspect", str(run), "--json")
    assert code == 0, err
    info = last_json(out)
    assert info["checks"] == 2 and "concentration" in info["summary"]

    code, out, err = run_cli(capsys, "prune", str(run), "--p", "0.1", "--k", "2", "--out",
                             str(small_files / "pruned.csv"))
    assert code == 0, err
    pr = last_json(out)
    assert pr["removed"] == 20 and pr["kept"] == 180
    pruned = pd.read_csv(small_files / "pruned.csv")
    assert len(pruned) == 180 and "row_id" not in pruned.columns

    code, out, err = run_cli(capsys, "inspect", str(small_files))
    assert code == 2 and "not a memviz run" in err


def test_console_script_runs_as_a_module(small_files):
    proc = subprocess.run([sys.executable, "-m", "memviz", "memorize", "--train", str(small_files / "train.csv"),
                           "--synthetic", str(small_files / "syn.csv"), "--out", str(small_files / "m.csv"),
                           "--device", "cpu", "--quiet"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["n_synthetic"] == 42


@pytest.mark.parametrize("argv, needle", [
    (["warmup", "--model-params", "{bad"], "not valid JSON"),
    (["warmup", "--model-params", '{"foo": 1}'], "'foo'"),
    (["warmup", "--model-params", '{"layers": "ab"}'], "invalid value"),
    (["warmup", "--model-params", '{"seed": 3}'], "'seed'"),
    (["warmup", "--model-params", '{"lr": NaN}'], "NaN is not a valid value"),       # was a traceback
    (["warmup", "--model-params", '{"epochs": 0}'], "epochs=0"),                     # was 200 epochs, silently
    (["warmup", "--model-params", '{"epochs": "ten"}'], "whole number"),
    (["compare", "--test", "TEST", "--methods", "baseline,dynamiccut", "--p", "2"], "p must be"),
    (["compare", "--test", "TEST", "--ratio", "-1"], "ratio -1.0"),                  # was caught per cell
])
def test_bad_options_exit_2_before_any_work(capsys, small_files, argv, needle):
    out_dir = small_files / "out_dir"
    argv = [str(small_files / "syn.csv") if a == "TEST" else a for a in argv]
    code, out, err = run_cli(capsys, *argv, "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--out", str(out_dir), "--device", "cpu", "--quiet")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert not out_dir.exists()  # nothing created for a rejected command


def test_study_bad_seeds_exit_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, "study", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o"),
                             "--seeds", "a,b")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--seeds" in err


def test_study_datasets_must_be_folder_names_inside_data_dir(capsys, tmp_path):
    """At 9a38467 ``--datasets ../x`` was accepted (a folder outside --data-dir)."""
    for bad in ("../x", "adult,../../etc", "/tmp/x", ".hidden"):
        code, out, err = run_cli(capsys, "study", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o"),
                                 "--datasets", bad, "--scale", "tiny")
        assert code == 2 and len(err.strip().splitlines()) == 1 and "--datasets" in err, (bad, err)
        assert not (tmp_path / "o").exists()


def test_an_out_that_is_a_folder_is_named_not_a_hidden_temporary_file(capsys, small_files):
    """At 9a38467: ``error: /…/.out.x1y2.tmp: Is a directory``."""
    folder = small_files / "out_folder"
    folder.mkdir()
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--synthetic",
                             str(small_files / "syn.csv"), "--out", str(folder), "--device", "cpu", "--quiet",
                             "--target", "income")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{folder}: is a folder" in err and ".tmp" not in err
    assert list(folder.iterdir()) == [] and not list(small_files.glob(".*.tmp"))


def test_schema_warnings_are_one_line_on_stderr(capsys, small_files):
    """At 9a38467 a SchemaWarning printed ``file:line: SchemaWarning: …`` and then the source
    line ``warnings.warn(…)``."""
    df = pd.read_csv(small_files / "train.csv")
    df.insert(0, "customer_id", np.arange(len(df)))
    df.to_csv(small_files / "with_id.csv", index=False)
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "with_id.csv"), "--synthetic",
                             str(small_files / "with_id.csv"), "--out", str(small_files / "m.csv"), "--device", "cpu",
                             "--quiet")
    assert code == 0, err
    lines = err.strip().splitlines()
    where = f"memviz memorize: warning: {small_files / 'with_id.csv'}"
    assert lines == [f"{where}: column 'customer_id' identifies rows ({len(df):,} distinct consecutive integers in "
                     f"{len(df):,} rows): it is the row key, left out of the distance and kept to name the rows"]
    # memorize reads no target, so it suggests none; the audit does (tests/test_cli_keys.py)


# ------------------------------------------------------------------ broken run folders
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, sample):
    run = tmp_path_factory.mktemp("cli_runs") / "run"
    train = sample[0].subset(sample[0].row_ids[:150])
    run_warmup(train, WarmupConfig(epochs=4, check_every=2, n_samples=40, device="cpu", model_params=TINY_MODEL), run)
    return run


def _no_data(run):
    m = json.loads((run / "manifest.json").read_text())
    del m["data"]
    (run / "manifest.json").write_text(json.dumps(m))


def _only_truncated_consolidated(run):
    shutil.rmtree(run / "checks")
    (run / "checks.parquet").write_bytes((run / "checks.parquet").read_bytes()[:200])


@pytest.mark.parametrize("breaks, needle", [
    (lambda r: (r / "train.parquet").write_bytes((r / "train.parquet").read_bytes()[:300]),
     "train.parquet: unreadable training table"),
    (_only_truncated_consolidated, "checks.parquet: unreadable checks table"),
    (lambda r: (r / "checks" / "check_abc.parquet").write_bytes(b"PAR1"), "check_abc.parquet: not a check file name"),
    (_no_data, "manifest lacks the field 'data'"),
])
@pytest.mark.parametrize("command", ["inspect", "prune"])
def test_a_broken_run_folder_is_one_line_and_exit_2(capsys, finished_run, tmp_path, breaks, needle, command):
    """At 9a38467 these printed 20-34-line tracebacks (exit 1)."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    breaks(run)
    extra = ["--out", str(tmp_path / "p.csv")] if command == "prune" else []
    code, out, err = run_cli(capsys, command, str(run), *extra)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "p.csv").exists()


# ------------------------------------------------------------- one writer per run folder
def _cli(*argv, **kw):
    return subprocess.Popen([sys.executable, "-m", "memviz", *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw)


def _warmup_argv(small_files, out, epochs, seed=1):
    return ["warmup", "--train", small_files / "train.csv", "--schema", SAMPLE / "meta.json", "--out", out,
            "--epochs", epochs, "--check-every", 1, "--n-samples", 30, "--seed", seed, "--device", "cpu", "--quiet",
            "--model-params", json.dumps(TINY_MODEL)]


@pytest.mark.slow
def test_two_warmups_started_together_on_one_out_one_is_refused(small_files):
    """The issue's repro: at 9a38467 both exited 0 in 2 trials of 3, leaving a manifest from
    one seed over the checks of the other."""
    out = small_files / "race"
    procs = [_cli(*_warmup_argv(small_files, out, 6, seed)) for seed in (1, 2)]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    winner = next(r for r in results if r[0] == 0)
    loser = next(r for r in results if r[0] == 2)
    # the loser either met the winner's lock, or (on a loaded machine, when the winner got there
    # first and finished) its finished run: refused in one line either way, nothing overwritten
    assert len(loser[2].strip().splitlines()) == 1, loser[2]
    assert "another process is writing" in loser[2] or "a run already exists" in loser[2], loser[2]
    seed = next(s for (p, s) in zip(procs, (1, 2)) if p.returncode == 0)
    m = json.loads((out / "manifest.json").read_text())
    assert m["config"]["seed"] == seed and m["status"] == "finished" and len(m["checks"]) == 6
    assert json.loads(winner[1].strip().splitlines()[-1])["status"] == "finished"


@pytest.mark.slow
def test_a_live_run_refuses_a_second_resume_and_says_interrupted_once_killed(capsys, small_files):
    """At 9a38467 a second ``--resume`` of a live run went ahead (two writers), and
    ``memviz inspect`` kept saying ``running`` after the writer was killed."""
    out = small_files / "live"
    argv = _warmup_argv(small_files, out, 100_000)
    proc = _cli(*argv)
    try:
        deadline = time.monotonic() + 180
        while True:  # wait for its first check
            try:
                if json.loads((out / "manifest.json").read_text())["checks"]:
                    break
            except (OSError, ValueError, KeyError):
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.2)
        code, text, err = run_cli(capsys, "inspect", str(out), "--json")
        assert code == 0 and last_json(text)["status"] == "running", err
        second = _cli(*argv, "--resume")  # the old code trained on beside the first writer
        try:
            code, err = second.wait(timeout=60), second.stderr.read()
        finally:
            second.kill()
            second.wait()
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "another process is writing this run" in err and f"pid {proc.pid}" in err
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    code, text, err = run_cli(capsys, "inspect", str(out), "--json")
    assert code == 0 and last_json(text)["status"] == "interrupted", err
    code, text, err = run_cli(capsys, "inspect", str(out))
    assert "status interrupted" in text


# ----------------------------------------------------------------------- CSV for people
PAYLOADS = ['=HYPERLINK("http://127.0.0.1:8599/x","click")', "@SUM(1+1)", "+cmd|' /C calc'!A0"]


def test_prune_and_memorize_outputs_neutralise_formulas_unless_raw_csv(capsys, small_files):
    """At 9a38467 ``memviz prune --out`` wrote these category values and header as they were."""
    df = pd.read_csv(small_files / "train.csv")
    df["workclass"] = [PAYLOADS[i % 3] if i % 2 else v for i, v in enumerate(df["workclass"])]
    df["capital-loss"] = -df["capital-loss"]                       # negative numbers stay numbers
    df = df.rename(columns={"race": "=race"})
    df.to_csv(small_files / "evil.csv", index=False)
    schema = json.loads((SAMPLE / "meta.json").read_text())
    schema["categorical"] = ["=race" if c == "race" else c for c in schema["categorical"]]
    (small_files / "evil.json").write_text(json.dumps(schema))
    run = small_files / "evil_run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "evil.csv"), "--schema",
                             str(small_files / "evil.json"), "--out", str(run), "--epochs", "2", "--check-every", "1",
                             "--n-samples", "30", "--device", "cpu", "--quiet",
                             "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    for raw in (False, True):
        target = small_files / f"pruned_{raw}.csv"
        code, out, err = run_cli(capsys, "prune", str(run), "--p", "0.1", "--k", "1", "--out", str(target),
                                 "--keep-row-id", *(["--raw-csv"] if raw else []))
        assert code == 0, err
        back = pd.read_csv(target, keep_default_na=False, na_values=[""])
        kept = df.loc[back["row_id"].to_numpy()]
        assert ("=race" if raw else "'=race") in back.columns
        want = kept["workclass"] if raw else kept["workclass"].map(lambda v: "'" + v if v in PAYLOADS else v)
        assert back["workclass"].tolist() == want.tolist()
        assert back["capital-loss"].tolist() == kept["capital-loss"].tolist()   # numbers, not '-text
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "evil.csv"), "--schema",
                             str(small_files / "evil.json"), "--synthetic", str(small_files / "evil.csv"),
                             "--out", str(small_files / "m.csv"), "--device", "cpu", "--quiet", "--raw-csv")
    assert code == 0, err
    assert pd.read_csv(small_files / "m.csv")["memorized"].all()  # its output is numbers only: the flag is a no-op


# ------------------------------------------------------------------ the floor
@pytest.fixture()
def holdout_csv(small_files, sample):
    """300 real rows outside the 200 training rows of ``small_files`` (sample rows 1000-1299)."""
    train, _ = sample
    train.data.iloc[1000:1300].to_csv(small_files / "holdout.csv", index=False)
    return small_files / "holdout.csv"


def test_memorize_with_a_holdout_reports_the_floor_and_each_rows_null(capsys, small_files, holdout_csv):
    rows_csv = small_files / "rows.csv"
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(small_files / "syn.csv"),
                             "--holdout", str(holdout_csv), "--rows-out", str(rows_csv),
                             "--out", str(small_files / "out.csv"), "--device", "cpu", "--quiet")
    assert code == 0, err
    s = last_json(out)
    assert s["n_holdout"] == 300 and 0 <= s["floor"] <= 1
    lo, hi = s["floor_ci"]
    assert lo <= s["floor"] <= hi
    assert s["excess"] == pytest.approx(s["mem_ratio"] - s["floor"])
    assert s["excess_ci"][0] <= s["excess"] <= s["excess_ci"][1]
    rows = pd.read_csv(rows_csv)
    # the ratio test's per-row count, said as such (the audit's named rows are another test: issue 47 item 8)
    assert list(rows.columns) == ["row_id", "copies", "holdout_hits", "expected", "excess", "p_value", "q_value",
                                  "above_chance"]
    assert s["ratio_above_chance"] == int(rows["above_chance"].sum()) and "over_copied" not in s
    assert len(rows) == 200 and rows["copies"].sum() == round(s["mem_ratio"] * s["n_synthetic"])
    assert rows.set_index("row_id").loc[[7, 3], "copies"].min() >= 1          # the two planted copies
    np.testing.assert_allclose(rows["excess"], rows["copies"] - rows["expected"])
    res = pd.read_csv(small_files / "out.csv")                                 # how close each row really is
    assert list(res.columns[6:]) == ["exact", "near_exact", "zero_by_scaling", "max_gap"]
    assert res["exact"].iloc[-2:].all() and s["n_identical"] == int(res["exact"].sum()) >= 2
    assert s["identical_share"] == pytest.approx(res["exact"].mean())


def test_memorize_rows_out_needs_a_holdout(capsys, small_files):
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--synthetic",
                             str(small_files / "syn.csv"), "--rows-out", str(small_files / "r.csv"),
                             "--out", str(small_files / "o.csv"), "--quiet")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--holdout" in err
    assert not (small_files / "o.csv").exists()


def test_warmup_with_a_holdout_then_inspect_shows_the_floor_in_plain_words(capsys, small_files, holdout_csv):
    run = small_files / "run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--holdout", str(holdout_csv), "--out", str(run),
                             "--epochs", "4", "--check-every", "2", "--n-samples", "50", "--device", "cpu",
                             "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    code, out, err = run_cli(capsys, "inspect", str(run), "--json")
    assert code == 0, err
    info = last_json(out)
    f = info["floor"]
    assert f["n_holdout"] == 300 and f["floor_ci"][0] <= f["floor"] <= f["floor_ci"][1]
    pc = info["per_check"]
    assert len(pc["excess"]) == 2 and all(a <= x <= b for x, a, b in zip(pc["excess"], pc["excess_low"],
                                                                         pc["excess_high"]))
    assert info["final_excess"]["excess"] == pytest.approx(pc["excess"][-1])
    code, out, err = run_cli(capsys, "inspect", str(run))
    text = out.strip().splitlines()[:-1]
    assert any(line.startswith("floor: real rows the model never saw (300 hold-out rows)") for line in text)
    assert any(line.startswith("Real rows the model never saw are flagged at") for line in text)
    assert any(line.startswith("points above the floor per check: e2:") for line in text)
    # the dashboard finds its hold-out again from the floor's source
    assert readings.run_holdout(runs.load_run(run)) is not None


def test_inspect_of_a_run_without_holdout_says_there_is_no_floor(capsys, small_files, tmp_path):
    train = load_table(small_files / "train.csv", SAMPLE / "meta.json")
    copier_run(train, tmp_path / "run")
    code, out, err = run_cli(capsys, "inspect", str(tmp_path / "run"))
    assert code == 0, err
    assert any(line.startswith("no floor: this run was given no hold-out") for line in out.splitlines())
    assert last_json(out)["floor"] is None and "excess" not in last_json(out)["per_check"]


# ------------------------------------------------------------------ when to stop, and release from a check
def test_inspect_recommends_a_check_and_sample_releases_from_any_kept_one(capsys, small_files, holdout_csv):
    run = small_files / "run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--holdout", str(holdout_csv), "--out", str(run),
                             "--epochs", "6", "--check-every", "2", "--n-samples", "200", "--device", "cpu",
                             "--seed", "1", "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    code, out, err = run_cli(capsys, "inspect", str(run), "--json")
    info = last_json(out)
    pc = info["per_check"]
    assert len(pc["shape"]) == len(pc["trend"]) == len(pc["copy_share"]) == 3
    assert info["recommended_check"] in (0, 1, 2) and info["kept_checkpoints"] == [0, 1, 2]
    assert info["recommended_epoch"] == pc["epoch"][info["recommended_check"]]
    assert info["recommendation"].startswith(f"Check {info['recommended_check']} (epoch ")
    code, out, err = run_cli(capsys, "inspect", str(run), "--tolerance", "1", "--max-excess", "1")
    assert code == 0 and "when to stop: Check 0 (epoch 2)" in out  # every check is good enough: the first

    tables = {}
    for check in (0, 2):
        for attempt in range(2):
            f = small_files / f"syn_{check}_{attempt}.csv"
            code, out, err = run_cli(capsys, "sample", str(run), "--check", str(check), "--rows", "120",
                                     "--seed", "5", "--out", str(f), "--device", "cpu")
            assert code == 0, err
            res = last_json(out)
            assert res["check"] == check and res["epoch"] == 2 * (check + 1) and res["rows"] == 120
            tables[check, attempt] = pd.read_csv(f)
        pd.testing.assert_frame_equal(tables[check, 0], tables[check, 1])       # same seed, same table
    assert not tables[0, 0].equals(tables[2, 0])
    # the check's own seed and size redraw exactly the rows that check measured
    f = small_files / "redraw.csv"
    code, out, err = run_cli(capsys, "sample", str(run), "--check", "2", "--seed", str(check_seed(1, 2)),
                             "--out", str(f), "--device", "cpu")
    stored = RunStore(run).samples(2).drop(columns="synthetic_id")
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(f), "--holdout", str(holdout_csv),
                             "--out", str(small_files / "mem.csv"), "--quiet", "--device", "cpu")
    mem = last_json(out)
    assert len(pd.read_csv(f)) == len(stored) == 200
    assert mem["mem_ratio"] == pytest.approx(pc["mem_ratio"][2])
    assert mem["excess"] == pytest.approx(pc["excess"][2])
    # another seed: the same figure within sampling error (two binomial samples of 200 and 600 rows)
    code, out, err = run_cli(capsys, "sample", str(run), "--check", "2", "--rows", "600", "--seed", "77",
                             "--out", str(f), "--device", "cpu")
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(f), "--out", str(small_files / "mem.csv"),
                             "--quiet", "--device", "cpu")
    p = pc["mem_ratio"][2]
    se = np.sqrt(max(p * (1 - p), 0.01) * (1 / 200 + 1 / 600))
    assert abs(last_json(out)["mem_ratio"] - p) < 4 * se
    # no --check: the recommended one
    code, out, err = run_cli(capsys, "sample", str(run), "--out", str(f), "--device", "cpu")
    assert last_json(out)["check"] == info["recommended_check"] and last_json(out)["recommendation"]


def test_sample_from_a_check_that_was_not_kept_is_one_line(capsys, small_files):
    run = small_files / "run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--out", str(run), "--epochs", "4", "--check-every", "1",
                             "--n-samples", "30", "--device", "cpu", "--quiet", "--keep-checkpoints", "last:1",
                             "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    code, out, err = run_cli(capsys, "sample", str(run), "--check", "0", "--out", str(small_files / "s.csv"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "kept checks: 3" in err
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--out",
                             str(small_files / "r2"), "--keep-checkpoints", "sometimes")
    assert code == 2 and "keep_checkpoints" in err
# ------------------------------------------------------------- prune of an unfinished run
def _set_status(run, status):
    m = json.loads((run / "manifest.json").read_text())
    m["status"] = status
    (run / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("status, word", [("running", "still training"), ("interrupted", "interrupted"),
                                          ("cancelled", "cancelled"), ("failed", "failed")])
def test_prune_refuses_an_unfinished_run_unless_partial(capsys, finished_run, tmp_path, status, word):
    """`memviz prune` on a run still training exited 0 with a partial ranking (T = 20 where the finished
    run gives T = 100) and no status in its output."""
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    _set_status(run, "running" if status == "interrupted" else status)
    store = RunStore(run).acquire() if status == "running" else None   # this process stands in for the writer
    try:
        code, out, err = run_cli(capsys, "prune", str(run), "--p", "0.1", "--out", str(tmp_path / "p.csv"))
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert word in err and "--partial" in err and "epoch 4 of 4" in err
        assert not (tmp_path / "p.csv").exists()
        code, out, err = run_cli(capsys, "prune", str(run), "--p", "0.1", "--out", str(tmp_path / "p.csv"),
                                 "--partial")
        assert code == 0, err
        last = last_json(out)
        assert last["run_status"] == status and last["partial"] is True and last["removed"] == 15
        assert (tmp_path / "p.csv").exists()
    finally:
        if store is not None:
            store.release()


def test_prune_of_a_finished_run_says_so(capsys, finished_run, tmp_path):
    code, out, err = run_cli(capsys, "prune", str(finished_run), "--p", "0.1", "--out", str(tmp_path / "p.csv"))
    assert code == 0, err
    last = last_json(out)
    assert last["run_status"] == "finished" and last["partial"] is False
