"""No command overwrites what the user owns: every output path, at every kind of thing it could name.

Each command is run with its output option at one of its inputs (by name, through a symlink, through a hard
link), at a device, a FIFO, a socket and a folder: each is one line naming the user's path, exit 2, and the thing
named is as it was (same kind, same bytes). A symlink to an output is written through and stays a link.
"""
import hashlib
import os
import socket
import stat
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT
from helpers import TINY_MODEL

from memviz.cli import main

SAMPLE = ROOT / "sample_data"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """train.csv, syn.csv, hold.csv (a few hundred sample rows) and a finished tiny run (run/)."""
    from memviz.tables.data import load_table
    from memviz.warmup.run import WarmupConfig, run_warmup

    d = tmp_path_factory.mktemp("outputs")
    tr = pd.read_csv(SAMPLE / "train.csv").iloc[:200]
    te = pd.read_csv(SAMPLE / "test.csv")
    tr.to_csv(d / "train.csv", index=False)
    te.iloc[:60].to_csv(d / "syn.csv", index=False)
    te.iloc[100:300].to_csv(d / "hold.csv", index=False)
    train = load_table(d / "train.csv", SAMPLE / "meta.json")
    run_warmup(train, WarmupConfig(epochs=2, check_every=1, n_samples=30, device="cpu", model_params=TINY_MODEL),
               d / "run")
    return d


def _fingerprint(p: Path):
    """What a path is and holds, without following a link: compared before and after a refused command."""
    st = os.lstat(p)
    data = None
    if stat.S_ISREG(st.st_mode):
        data = hashlib.sha256(p.read_bytes()).hexdigest()
    elif stat.S_ISLNK(st.st_mode):
        data = os.readlink(p)
    return stat.S_IFMT(st.st_mode), st.st_ino, data


def _special(kind: str, where: Path) -> Path:
    """A device, FIFO or socket of the user's at ``where`` (a copy of /dev/null's device for the device)."""
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "device":
        try:
            os.mknod(where, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device file needs root")
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(where))
        s.close()
    return where


def _cli(capsys, argv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _argv(files, command: str, option: str, target) -> list:
    """A command line for ``command`` with ``option`` at ``target`` (its other outputs elsewhere)."""
    d = files
    data = ["--train", d / "train.csv", "--synthetic", d / "syn.csv", "--holdout", d / "hold.csv"]
    other = d / "elsewhere"
    if command == "memorize":
        argv = ["memorize", *data, "--out", other / "m.csv", "--rows-out", other / "r.csv", "--quiet"]
    elif command == "audit":
        argv = ["audit", *data, "--out", other / "a", "--quiet", "--no-quality", "--no-evidence"]
    elif command == "sample":
        argv = ["sample", d / "run", "--rows", 5, "--out", other / "s.csv"]
    elif command == "prune":
        argv = ["prune", d / "run", "--out", other / "p.csv", "--removed-out", other / "rm.csv"]
    elif command == "report":
        argv = ["report", d / "run", "--out", other / "rep", "--no-quality", "--no-evidence", "--no-compare"]
    elif command == "warmup":
        argv = ["warmup", "--train", d / "train.csv", "--epochs", 1, "--out", other / "w", "--quiet"]
    elif command == "compare":
        argv = ["compare", "--train", d / "train.csv", "--test", d / "hold.csv", "--methods", "baseline",
                "--models", "tvae", "--seeds", 0, "--epochs", 1, "--out", other / "c", "--quiet"]
    elif command == "study":
        argv = ["study", "--data-dir", d / "data", "--scales", "tiny", "--parts", "floors", "--out", other / "st",
                "--markdown", other / "st.md"]
    elif command == "attack":
        argv = ["attack", d / "run", "--out", other / "att", "--quiet"]
    i = argv.index(option)
    argv[i + 1] = target
    return argv


#: every output option of every command, and whether it names a file (else a folder)
OUTPUTS = [("memorize", "--out", True), ("memorize", "--rows-out", True), ("sample", "--out", True),
           ("prune", "--out", True), ("prune", "--removed-out", True), ("study", "--markdown", True),
           ("audit", "--out", False), ("report", "--out", False), ("warmup", "--out", False),
           ("compare", "--out", False), ("study", "--out", False), ("attack", "--out", False)]


def _an_input(files, command):
    """A file ``command`` reads, and the words its message names it by."""
    if command in ("sample", "prune", "report", "attack"):
        return files / "run" / "manifest.json"
    if command == "study":
        data = files / "data" / "adult"
        data.mkdir(parents=True, exist_ok=True)
        pd.read_csv(files / "train.csv").to_csv(data / "train.csv", index=False)
        return data / "train.csv"
    return files / "train.csv" if command != "memorize" else files / "hold.csv"


@pytest.mark.parametrize("command,option,is_file", OUTPUTS, ids=[f"{c}{o}" for c, o, _ in OUTPUTS])
@pytest.mark.parametrize("at", ["input", "input_symlink", "input_hardlink", "fifo", "device", "socket"])
def test_no_output_replaces_what_the_user_owns(capsys, files, tmp_path, command, option, is_file, at):
    if at == "input":
        target = _an_input(files, command)
    elif at == "input_symlink":
        target = tmp_path / "link.csv"
        os.symlink(_an_input(files, command), target)
    elif at == "input_hardlink":
        target = tmp_path / "hard.csv"
        os.link(_an_input(files, command), target)
    else:
        target = _special(at, tmp_path / f"my_{at}")
    before = _fingerprint(target)
    watched = _an_input(files, command)
    watched_before = _fingerprint(watched)
    code, out, err = _cli(capsys, _argv(files, command, option, target))
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"memviz {command}: error: {target}: "), err
    assert ".tmp" not in err and "Traceback" not in err
    assert _fingerprint(target) == before and _fingerprint(watched) == watched_before


@pytest.mark.parametrize("command,option", [(c, o) for c, o, f in OUTPUTS if f])
def test_a_file_output_at_a_folder_is_one_line(capsys, files, tmp_path, command, option):
    code, _, err = _cli(capsys, _argv(files, command, option, tmp_path))
    assert code == 2 and err.strip() == f"memviz {command}: error: {tmp_path}: is a folder, not a file memviz can " \
                                        "replace; give a file name inside it"


def test_two_outputs_of_one_command_at_one_file_are_refused(capsys, files, tmp_path):
    same = tmp_path / "same.csv"
    argv = _argv(files, "memorize", "--out", same)
    argv[argv.index("--rows-out") + 1] = same
    code, _, err = _cli(capsys, argv)
    assert code == 2 and "--rows-out names the same file as --out" in err and not same.exists()


def test_a_symlinked_output_is_written_through_and_stays_a_link(capsys, files, tmp_path):
    real = tmp_path / "dated" / "2026-12-07.csv"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.csv"
    os.symlink(real, link)
    dangling = tmp_path / "next.csv"
    os.symlink(tmp_path / "dated" / "new.csv", dangling)
    code, _, err = _cli(capsys, _argv(files, "prune", "--out", link) + ["--removed-out", dangling])
    assert code == 0, err
    assert os.path.islink(link) and os.readlink(link) == str(real)
    assert "old" not in real.read_text() and len(pd.read_csv(real)) > 100
    assert os.path.islink(dangling) and len(pd.read_csv(tmp_path / "dated" / "new.csv")) == 200


def test_a_symlink_loop_is_one_line(capsys, files, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    os.symlink(b, a)
    os.symlink(a, b)
    code, _, err = _cli(capsys, _argv(files, "sample", "--out", a))
    assert code == 2 and err.startswith(f"memviz sample: error: {a}: ") and len(err.strip().splitlines()) == 1


def test_an_unwritable_place_names_the_users_path_not_a_temporary_file(capsys, files):
    code, _, err = _cli(capsys, _argv(files, "sample", "--out", "/proc/version"))
    assert code == 2 and err.startswith("memviz sample: error: /proc/version: ") and ".tmp" not in err


def test_an_audit_folder_holding_an_input_is_not_replaced(capsys, files, tmp_path):
    """An earlier audit's rows.csv given back as an input: replacing the folder would delete it."""
    first = tmp_path / "a"
    code, _, err = _cli(capsys, _argv(files, "audit", "--out", first))
    assert code == 0, err
    argv = _argv(files, "audit", "--out", first)
    argv[argv.index("--synthetic") + 1] = first / "rows.csv"
    before = _fingerprint(first / "rows.csv")
    code, _, err = _cli(capsys, argv)
    assert code == 2 and f"{first}: holds an input of this command (--synthetic {first / 'rows.csv'})" in err
    assert _fingerprint(first / "rows.csv") == before


def test_replacing_an_earlier_output_folder_says_so_in_one_line(capsys, files, tmp_path):
    out = tmp_path / "a"
    argv = [str(a) for a in _argv(files, "audit", "--out", out)]
    assert main(argv) == 0
    assert "replaced" not in capsys.readouterr().err
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"memviz audit: warning: {out}: replaced the earlier output folder there" in err.splitlines()
