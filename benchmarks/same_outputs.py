"""What a refactoring must leave byte-identical: a fixed set of audits, every ``--help`` and a set of refusals.

Run it once on the code before a change (``--out BEFORE``) and again after (``--out AFTER --against BEFORE``):
it prints each file that differs, or how many were byte-identical. The inputs (tables and a tiny warm-up run)
are made once in ``--inputs`` by the first call and reused, so both sides audit the same files.

What it records, in OUT:

* six audits, each as audit.json (``created`` and every ``seconds`` key set aside: they are the clock's),
  rows.csv and report.html (its creation time set aside): the sample table with and without a hold-out, the
  sample with the standardized distance, a credit-like table with an integer key (``--key``) and planted copies
  through the CLI, the same with one cell of one copy altered, and ``memviz.audit.from_run`` on a tiny warm-up;
  the CLI's stdout JSON line and stderr for the CLI audits;
* ``memviz --help`` and ``memviz CMD --help`` for every command (80 columns);
* the one-line refusal (stderr and exit code) of a set of bad inputs and options.

Usage::

    python benchmarks/same_outputs.py --inputs /tmp/same/inputs --out /tmp/same/before
    python benchmarks/same_outputs.py --inputs /tmp/same/inputs --out /tmp/same/after --against /tmp/same/before
"""
from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

CLOCK_KEYS = ("created", "seconds")
#: a creation time, as audit.json (ISO 8601) and report.html ("2026-01-02 03:04:05 UTC") write it
CREATED = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(Z| UTC)"


def _env() -> dict:
    return {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def _memviz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memviz", *args], capture_output=True, text=True, env=_env(),
                          cwd=ROOT, timeout=900)


def _without_clock(obj):
    if isinstance(obj, dict):
        return {k: ("<clock>" if k in CLOCK_KEYS else _without_clock(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_without_clock(v) for v in obj]
    return obj


def _text_without_clock(text: str) -> str:
    text = re.sub(CREATED, "<created>", text)
    return re.sub(r'"seconds": [0-9.]+', '"seconds": <s>', text)


def _keep(folder: Path, out: Path) -> None:
    """audit.json (clock aside), rows.csv, report.html (clock aside) of ``folder`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    audit = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    (out / "audit.json").write_text(json.dumps(_without_clock(audit), indent=1, sort_keys=True) + "\n")
    (out / "rows.csv").write_bytes((folder / "rows.csv").read_bytes())
    html = (folder / "report.html").read_text(encoding="utf-8")
    (out / "report.html").write_text(_salted_hashes_numbered(re.sub(CREATED, "<created>", html)))


def _salted_hashes_numbered(text: str) -> str:
    """The redacted report's hashes (``cat-3ca885``, ``key-…``) are keyed by a salt drawn per process: each is
    replaced by its order of first appearance, which keeps which cells are equal."""
    seen: dict[str, str] = {}

    def number(m):
        return seen.setdefault(m.group(0), f"{m.group(1)}-#{len(seen)}")
    return re.sub(r"\b(cat|key)-[0-9a-f]{6}\b", number, text)


# ------------------------------------------------------------------ inputs, made once
def make_inputs(inputs: Path) -> None:
    import numpy as np
    import pandas as pd
    from helpers import tiny_warmup
    from unseen import independent_columns, with_copies
    from unseen_tables import credit_like

    from memviz.tables.data import load_table
    from memviz.warmup.run import run_warmup

    inputs.mkdir(parents=True, exist_ok=True)
    train = pd.read_csv(ROOT / "sample_data/train.csv").head(1500)
    test = pd.read_csv(ROOT / "sample_data/test.csv").head(600)
    syn, _ = with_copies(independent_columns(train, 600, seed=1), train, k=15, times=2, seed=2)
    train.to_csv(inputs / "sample_train.csv", index=False)
    test.to_csv(inputs / "sample_holdout.csv", index=False)
    syn.to_csv(inputs / "sample_synthetic.csv", index=False)

    credit = credit_like(700, seed=4)
    ctrain, chold = credit.iloc[:450].reset_index(drop=True), credit.iloc[450:].reset_index(drop=True)
    data = ctrain.drop(columns="rownames")
    cgen = independent_columns(data, 400, seed=5)
    planted, _ = with_copies(cgen, data, k=12, times=3, seed=6)
    ctrain.to_csv(inputs / "credit_train.csv", index=False)
    chold.drop(columns="rownames").to_csv(inputs / "credit_holdout.csv", index=False)
    planted.to_csv(inputs / "credit_synthetic.csv", index=False)
    altered = planted.copy()
    altered.loc[0, "Amount"] = int(altered.loc[0, "Amount"]) + 50          # one cell of one copy altered
    altered.to_csv(inputs / "credit_altered.csv", index=False)

    small = load_table(ROOT / "sample_data/train.csv", ROOT / "sample_data/meta.json")
    hold = load_table(ROOT / "sample_data/test.csv", ROOT / "sample_data/meta.json")
    run_warmup(small.subset(small.row_ids[:150]), tiny_warmup(), inputs / "run", holdout=hold.subset(hold.row_ids[:400]))
    np.save(inputs / "made.npy", np.array([1]))


# ------------------------------------------------------------------ what is recorded
def audits(inputs: Path, out: Path, work: Path) -> None:
    import memviz

    meta = ROOT / "sample_data/meta.json"
    tr, syn, hold = (inputs / f"sample_{n}.csv" for n in ("train", "synthetic", "holdout"))
    memviz.audit(tr, syn, hold, schema=meta).write(work / "sample_holdout")
    memviz.audit(tr, syn, schema=meta).write(work / "sample_no_holdout")
    memviz.audit(tr, syn, hold, schema=meta, distance="standardized", evidence=False).write(work / "sample_std")
    memviz.audit.from_run(inputs / "run").write(work / "from_run")
    for name, gen in (("credit_key", "credit_synthetic.csv"), ("credit_altered", "credit_altered.csv")):
        r = _memviz("audit", "--train", str(inputs / "credit_train.csv"), "--synthetic", str(inputs / gen),
                    "--holdout", str(inputs / "credit_holdout.csv"), "--key", "rownames", "--target", "Status",
                    "--quiet", "--out", str(work / name))
        (out / name).mkdir(parents=True, exist_ok=True)
        text = f"rc {r.returncode}\nstdout\n{_text_without_clock(r.stdout)}\nstderr\n{_text_without_clock(r.stderr)}"
        (out / name / "cli.txt").write_text(text.replace(str(inputs), "<in>").replace(str(work), "<work>"))
    for name in ("sample_holdout", "sample_no_holdout", "sample_std", "from_run", "credit_key", "credit_altered"):
        _keep(work / name, out / name)


def helps(out: Path) -> None:
    from memviz.commands import COMMANDS

    (out / "help").mkdir(parents=True, exist_ok=True)
    for cmd in ("", *COMMANDS):
        r = _memviz(*([cmd] if cmd else []), "--help")
        (out / "help" / f"{cmd or 'memviz'}.txt").write_text(f"rc {r.returncode}\n{r.stdout}\n{r.stderr}")


#: bad inputs and options, each refused in one line
REFUSALS = {
    "audit_missing_train": ["audit", "--train", "nowhere.csv", "--synthetic", "x.csv", "--out", "{work}/a"],
    "audit_bad_backend_scheduler": ["audit", "--train", "{in}/sample_train.csv", "--synthetic",
                                    "{in}/sample_synthetic.csv", "--scheduler", "tcp://x:1", "--out", "{work}/b"],
    "audit_bad_key": ["audit", "--train", "{in}/credit_train.csv", "--synthetic", "{in}/credit_synthetic.csv",
                      "--key", "nokey", "--out", "{work}/c"],
    "audit_bad_share": ["audit", "--train", "{in}/sample_train.csv", "--synthetic", "{in}/sample_synthetic.csv",
                        "--max-excess", "2", "--out", "{work}/d"],
    "audit_not_a_table": ["audit", "--train", "{in}/made.npy", "--synthetic", "{in}/sample_synthetic.csv",
                          "--out", "{work}/e"],
    "report_not_a_run": ["report", "{in}", "--out", "{work}/f"],
    "report_bad_check": ["report", "{in}/run", "--check", "9", "--out", "{work}/g"],
    "report_bad_p": ["report", "{in}/run", "--p", "nan", "--out", "{work}/h"],
    "inspect_not_a_run": ["inspect", "{in}"],
    "compare_bad_method": ["compare", "--train", "{in}/sample_train.csv", "--test", "{in}/sample_holdout.csv",
                           "--methods", "bogus", "--out", "{work}/i"],
    "compare_bad_seeds": ["compare", "--train", "{in}/sample_train.csv", "--test", "{in}/sample_holdout.csv",
                          "--seeds", "x", "--out", "{work}/j"],
    "compare_bad_epsilon": ["compare", "--train", "{in}/sample_train.csv", "--test", "{in}/sample_holdout.csv",
                            "--methods", "dp", "--epsilons", "-1", "--out", "{work}/m"],
    "memorize_bad_distance": ["memorize", "--train", "{in}/sample_train.csv", "--synthetic",
                              "{in}/sample_synthetic.csv", "--distance", "nope"],
    "warmup_bad_epochs": ["warmup", "--train", "{in}/sample_train.csv", "--epochs", "0", "--out", "{work}/k"],
    "prune_bad_p": ["prune", "{in}/run", "--p", "1.5", "--out", "{work}/l"],
}


def refusals(inputs: Path, out: Path, work: Path) -> None:
    (out / "refusals").mkdir(parents=True, exist_ok=True)
    for name, args in REFUSALS.items():
        r = _memviz(*(a.format(**{"in": inputs, "work": work}) for a in args))
        text = f"rc {r.returncode}\nstdout\n{r.stdout}\nstderr\n{r.stderr}"
        (out / "refusals" / f"{name}.txt").write_text(text.replace(str(inputs), "<in>").replace(str(work), "<work>"))


def compare(out: Path, against: Path) -> int:
    left = sorted(p.relative_to(against) for p in against.rglob("*") if p.is_file())
    right = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    bad = [str(p) for p in left if p not in right or not filecmp.cmp(against / p, out / p, shallow=False)]
    bad += [f"{p} (new)" for p in right if p not in left]
    for b in bad:
        print("DIFFERS:", b)
    print(f"{len(left) - len([b for b in bad if not b.endswith('(new)')])} of {len(left)} files byte-identical")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--only", choices=("audits", "helps", "refusals"))
    a = ap.parse_args()
    if not (a.inputs / "made.npy").exists():
        make_inputs(a.inputs)
    work = a.out.parent / (a.out.name + ".work")
    a.out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    if a.only in (None, "helps"):
        helps(a.out)
    if a.only in (None, "refusals"):
        refusals(a.inputs, a.out, work)
    if a.only in (None, "audits"):
        audits(a.inputs, a.out, work)
    return compare(a.out, a.against) if a.against else 0


if __name__ == "__main__":
    raise SystemExit(main())
