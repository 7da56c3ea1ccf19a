"""What the CLI's commands share: progress bars drawn from a job's events, the last JSON line,
list and JSON arguments parsed into one-line errors, and the arguments several commands take."""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from tqdm import tqdm

from memviz.app.progress import cells_estimate
from memviz.compare.config import CompareConfig
from memviz.compare.methods import method_label
from memviz.device import DEVICES
from memviz.dynamics.dynamiccut import DEFAULTS as DYNAMICCUT
from memviz.engine import DISTANCES
from memviz.errors import SEED_MAX, BadOption, MemvizError, checked_seed
from memviz.io import dumps, input_identities, output_file
from memviz.jobs.spec import OVERRIDE_HINT, valid_event
from memviz.tables.describe import schema_block
from memviz.tables.schema import Schema
from memviz.viz.style import model_label
from memviz.text import check_name, pct, seconds
from memviz.warmup.run import WarmupConfig

#: the one set of defaults each command's help shows (never restated)
COMPARE = CompareConfig()
WARMUP = WarmupConfig()


# ---------------------------------------------------------------- progress and output
class Bar:
    """A one-line progress bar on stderr, drawn by tqdm: ``LABEL [#####-----] DONE/TOTAL, TEXT``.

    On a terminal tqdm redraws the line in place (at most every 0.1 s, fitted to the terminal's width) and ends
    it with a line end when done; in a log (a file, a pipe, CI) the same line, formatted by tqdm's own
    :meth:`tqdm.tqdm.format_meter`, is written whole, one line at most every 5 s, with no carriage return. A
    final (``done >= total``) or forced call is always drawn."""

    #: the line, as tqdm formats it on a terminal and in a log
    FORMAT = "{desc} [{bar:30}] {n_fmt}/{total_fmt}{postfix}"
    #: the bar's characters: to do, done
    CHARS = "-#"

    def __init__(self, label: str, stream=None):
        self.label, self.stream = label, stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last = 0.0
        self.live = None                       # the terminal's tqdm bar while it is drawn

    def line(self, done: int, total: int, text: str = "") -> str:
        """The line tqdm draws for ``done`` of ``total`` with ``text``."""
        return tqdm.format_meter(done, total, 0, prefix=self.label, bar_format=self.FORMAT, ascii=self.CHARS,
                                 postfix=text or None)

    def __call__(self, done: int, total: int, text: str = "", force: bool = False) -> None:
        now = time.monotonic()
        final = done >= total
        if not (final or force) and now - self.last < (0.1 if self.tty else 5.0):
            return
        self.last = now
        if not self.tty:
            self.stream.write(self.line(done, total, text) + "\n")
            self.stream.flush()
            return

        if self.live is None:                  # drawn as it is made
            self.live = tqdm(total=total, initial=done, desc=self.label, postfix=text or None, file=self.stream,
                             bar_format=self.FORMAT, ascii=self.CHARS, dynamic_ncols=True, position=0, leave=True,
                             mininterval=0, miniters=0)
        else:
            self.live.total, self.live.n = total, done
            self.live.set_postfix_str(text, refresh=False)
            self.live.refresh()
        if final:
            self.live.close()                  # the line stays, ended; a later call draws a new one
            self.live = None


class EventBars:
    """Draws a job's progress events (:mod:`memviz.jobs.spec`) as progress bars."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.bars = {"warm-up": Bar("warm-up"), "compare": Bar("compare")}
        self.mem = None            # the last finished check's mem ratio, with what names it (see check_text)
        self.check = None          # (check, checks, epoch) of that check
        self.at = None             # (epoch, epochs, loss, label) of the last epoch line
        self.cells: list[dict] = []   # a comparison's cell events (cells_estimate reads them)
        self.grid = (0, 0)         # its (cells done, cells in all)

    def check_text(self) -> str:
        """'mem ratio 22.8 % (check 11 of 0–11, epoch 60)': the last finished check's figure as the result
        prints it (a share), named by its check and epoch. Checks are measured beside the training and the
        last after its final epoch, so the figure is not the current epoch's."""
        if self.mem is None:
            return ""

        c, n, e = self.check
        where = ", ".join(x for x in (check_name(c, n) if c is not None else "",
                                      f"epoch {e}" if e is not None else "") if x)
        return f"mem ratio {pct(self.mem)}" + (f" ({where})" if where else "")

    def _draw_warmup(self) -> None:
        epoch, epochs, loss, label = self.at
        loss_text = f"loss {loss:.3f}" if loss is not None else ""
        text = label or " · ".join(x for x in (loss_text, self.check_text()) if x)
        self.bars["warm-up"](epoch, epochs, text)

    def __call__(self, ev: dict) -> None:
        if self.quiet:
            return
        kind = ev.get("event")
        if kind == "schema":          # the schema the job read its training table with (say_schema's block)
            sys.stderr.write(f"memviz: {ev.get('text', '')}\n")
            sys.stderr.flush()
        elif kind == "check":
            self.mem = ev.get("mem_ratio")
            self.check = (ev.get("check"), ev.get("checks"), ev.get("epoch"))
            if self.at is not None and self.at[0] >= self.at[1]:
                self._draw_warmup()          # a check measured after the last epoch: its line comes last
        elif kind == "epoch":
            label = "warm-up (TabDDPM ranking)" if ev.get("phase") == "warmup" else ""
            self.at = (int(ev["epoch"]), int(ev["epochs"]), ev.get("loss"), label)
            self._draw_warmup()
        elif kind == "cells":       # the grid starts: said at once, before its first cell's first epoch
            self.grid = (int(ev.get("done") or 0), int(ev.get("total") or 0))
            self._draw_cells(force=True)
        elif kind in ("cell_phase", "cell_epoch"):
            self.cells.append(ev)
            self._draw_cells()
        elif kind == "cell":
            self.cells.append(ev)
            self.grid = (int(ev["done"]), int(ev["total"]))

            what = f"mem {pct(ev['mem_ratio'])}" if ev.get("status") == "ok" else "FAILED"
            self.bars["compare"](int(ev["done"]), int(ev["total"]),
                                 f"{method_label(ev['method'])} × {model_label(ev['model'])}, seed {ev['seed']} done: "
                                 f"{what} ({seconds(ev.get('seconds') or 0)})", force=True)

    def _draw_cells(self, force: bool = False) -> None:
        """The comparison's line while cells run: each running cell's phase and epoch, the time left (the
        Compare page's estimate, :func:`memviz.app.progress.cells_estimate`)."""
        done, total = self.grid
        if not total:
            return
        running, _, left, _ = cells_estimate(self.cells, done, total, time.time())
        text = "; ".join(c.line() for c in running) or "starting the first cell"
        if left is not None:
            text += f" · about {seconds(left)} left"
        self.bars["compare"](done, total, text, force=force)


class FollowEvents:
    """Feed the events a job appends to ``path`` (a :class:`memviz.jobs.spec.EventLog`) to ``draw`` from a thread,
    every ``poll`` seconds, and once more on exit: the comparison's cells run in other processes and write their
    epochs there (the CLI said nothing for the 6–8 minutes of a cell)."""

    def __init__(self, path, draw, poll: float = 0.5):
        self.path, self.draw, self.poll = Path(path), draw, poll
        self.offset, self.buffer = 0, b""
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="memviz-progress", daemon=True)

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return
        self.offset += len(chunk)
        lines = (self.buffer + chunk).split(b"\n")
        self.buffer = lines.pop()                      # a line still being written
        for line in lines:
            try:
                ev = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                continue
            if valid_event(ev):
                self.draw(ev)

    def _run(self) -> None:
        while not self.stop.wait(self.poll):
            self._read()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self._read()
        return False


#: the arguments through which a command reads the user's files, as a message names them: no output may be one
#: of them (:func:`output_files`)
INPUTS = {"train": "--train", "synthetic": "--synthetic", "holdout": "--holdout", "test": "--test",
          "schema": "--schema", "metadata": "--metadata", "run_dir": "the run folder", "run": "the run folder",
          "compare": "--compare", "data_dir": "--data-dir"}


def inputs_of(args) -> dict:
    """``{(device, inode): 'OPTION PATH'}`` of every file ``args`` name as an input (:data:`INPUTS`; a folder
    with every file under it): what :func:`output_files` and :func:`memviz.folders.folder_unit` refuse to
    replace."""
    return input_identities({label: getattr(args, dest) for dest, label in INPUTS.items()
                             if getattr(args, dest, None) is not None})


def output_files(args, **options: str) -> dict:
    """The command's output files, checked at the door before any work (:func:`memviz.io.output_file`):
    ``options`` maps an argument's dest to its option (``out="--out", rows_out="--rows-out"``); one not given
    is left out. Each is refused in one line when it is one of the command's inputs, a folder, a device, a
    FIFO or a socket, or the same file as another of them."""
    inputs, taken, out = inputs_of(args), {}, {}
    for dest, option in options.items():
        path = getattr(args, dest, None)
        if path is None:
            continue
        out[dest] = output_file(path, option, inputs=inputs, taken=taken)
        taken[out[dest].target] = option
    return out


def emit(obj: dict) -> None:
    """The last stdout line: strict JSON (NaN and infinities become null)."""
    print(dumps(obj), flush=True)


def parse_model_params(text: str | None, per_model: bool) -> dict:
    """``--model-params`` JSON: ``{param: value}`` (``per_model=False``, a warm-up's TabDDPM)
    or ``{model: {param: value}}`` (a comparison). One-line MemvizError on bad JSON, on
    NaN/Infinity, or on the wrong shape."""
    if not text:
        return {}

    def refuse(const):
        raise BadOption(f"--model-params: {const} is not a valid value (use a finite number)")

    try:
        obj = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise BadOption(f"--model-params: not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(obj, dict):
        raise BadOption("--model-params: expected a JSON object, e.g. '{\"layers\": [256, 256]}'")
    if per_model and not all(isinstance(v, dict) for v in obj.values()):
        raise BadOption("--model-params: expected a JSON object {model: {param: value}}")
    return obj


def split(text: str, what: str) -> list[str]:
    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if not items:
        raise BadOption(f"--{what}: empty list")
    return items


def dataset_names(text: str) -> list[str]:
    """``--datasets``: plain folder names inside ``--data-dir`` (never ``..``, a path or a hidden folder)."""
    names = split(text, "datasets")
    for name in names:
        if name.startswith(".") or "/" in name or "\\" in name or name != Path(name).name:
            raise BadOption(f"--datasets: {name!r} is not a folder name inside --data-dir")
    return names


#: what every seed option's help says of its values (:data:`memviz.errors.SEED_MAX`)
SEED_RANGE = f"a whole number from 0 to {SEED_MAX}"


def seed_arg(text: str) -> int:
    """The argparse type of every ``--seed``: :data:`SEED_RANGE` (:func:`memviz.errors.checked_seed`), else
    argparse's one line (``memviz sample: error: argument --seed: '1e23' is not ...``) before any work."""
    try:
        return checked_seed(int(text, 10))
    except (ValueError, MemvizError):
        raise argparse.ArgumentTypeError(f"{_short(text)!r} is not a seed: give {SEED_RANGE}") from None


def seeds(text: str) -> list[int]:
    """``--seeds``: comma-separated seeds, each :data:`SEED_RANGE`."""
    out = []
    for x in split(text, "seeds"):
        try:
            out.append(checked_seed(int(x, 10)))
        except (ValueError, MemvizError):
            raise BadOption(f"--seeds: {_short(x)!r} is not a seed: give seeds separated by commas, each "
                            f"{SEED_RANGE}") from None
    return out


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "…"


# ---------------------------------------------------------------- arguments several commands share
def add_common(sp, train: bool = True) -> None:
    if train:
        sp.add_argument("--train", required=True, help="training table (CSV or Parquet)")
        which = sp.add_mutually_exclusive_group()
        which.add_argument("--schema", help="schema file in the meta.json format (default: inferred from the table)")
        which.add_argument("--metadata", help="SDV single-table metadata JSON instead of --schema (numerical, "
                                              "categorical, boolean and ordinal columns are read; the id column "
                                              "is the row key; datetime and PII columns are left out, said on "
                                              "stderr; a data column the metadata does not list is refused)")
        sp.add_argument("--target", help="the label column (default: none for an inferred schema or --metadata, "
                                         "which say on stderr which column they would suggest; the file's own "
                                         "with --schema, which --target replaces)")
        cols = sp.add_argument_group("column overrides", "change how a column of --train is read, on top of the "
                                     "inferred schema, --schema or --metadata (the schema read is shown on stderr "
                                     "before any work; --quiet hides it)")
        cols.add_argument("--numerical", nargs="+", action="extend", metavar="COL",
                          help="measure these columns as numbers (e.g. integers inferred as categories)")
        cols.add_argument("--categorical", nargs="+", action="extend", metavar="COL",
                          help="measure these columns as categories (a differing value is one mismatch)")
        cols.add_argument("--key", metavar="COL", action="append",
                          help="the column naming the rows (your row key: left out of the distance, kept in every "
                               "output); repeat it for a composite key, columns that name a row together "
                               "(--key branch --key account_no)")
        cols.add_argument("--ignore", nargs="+", action="extend", metavar="COL",
                          help="leave these columns out of the distance")
    sp.add_argument("--device", default="auto", choices=DEVICES,
                    help="where tensors live: auto = a CUDA GPU when one is visible, else the CPU")
    add_quiet(sp, "no progress bar and no schema block on stderr (notices and errors still print)")


def add_quiet(sp, help: str = "no progress bar on stderr") -> None:
    """``--quiet``, which every command takes (docs/cli.md): what it silences is ``help``; a warning or an error
    is said whatever it is."""
    sp.add_argument("--quiet", action="store_true", help=help)


def schema_of(args):
    """The schema ``--schema`` (a meta.json path) or ``--metadata`` (SDV, read here) names, else None."""
    if getattr(args, "metadata", None):
        schema = Schema.from_sdv(args.metadata)   # the target is applied with the table (--target)
        for note in schema.sdv_notes():
            sys.stderr.write(f"memviz: {note}\n")
        return schema
    return getattr(args, "schema", None)


#: each column override option and the kind it gives (:meth:`memviz.tables.schema.Schema.with_overrides`)
OVERRIDES = {"numerical": "numerical", "categorical": "categorical", "key": "key", "ignore": "excluded"}


def overrides_of(args) -> dict[str, str]:
    """{column: kind} from ``--numerical``, ``--categorical``, ``--key`` and ``--ignore`` ({} without them); a column
    given two kinds is one line."""
    out: dict[str, str] = {}
    for option, kind in OVERRIDES.items():
        value = getattr(args, option, None)
        for col in ([value] if isinstance(value, str) else value or []):
            if out.get(col, kind) != kind:
                other = next(o for o, k in OVERRIDES.items() if k == out[col])
                raise BadOption(f"column {col!r}: given both --{other} and --{option}")
            out[col] = kind
    return out


def say_schema(table, args) -> None:
    """The schema ``table`` was read with (each column's kind and why, the key, the target) as one block on stderr,
    before any work; nothing with ``--quiet`` (the notices that changed a column still print)."""
    if getattr(args, "quiet", False):
        return

    sys.stderr.write("memviz: " + schema_block(table, overrides_hint=OVERRIDE_HINT) + "\n")
    sys.stderr.flush()


def add_raw_csv(sp) -> None:
    sp.add_argument("--raw-csv", action="store_true",
                    help="write text cells as they are; by default a cell or header starting with =, +, -, @, "
                         "a tab or a carriage return gets a leading ' so that a spreadsheet shows it as text "
                         "instead of running it as a formula (numbers stay numbers)")


def add_keep_row_id(sp) -> None:
    """``--keep-row-id``: rows.csv names each row by the user's key alone; this adds memviz's own row_id beside it."""
    sp.add_argument("--keep-row-id", action="store_true",
                    help="write memviz's row_id (the row's 0-based position in the training file) into rows.csv "
                         "beside your row key (default: your key alone names the rows; row_id when the table has "
                         "no key)")


def add_distance(sp) -> None:
    sp.add_argument("--distance", default=WARMUP.distance, choices=DISTANCES,
                    help="paper = the papers' per-row min-max scaled distance; standardized = numerical "
                         "columns divided by their training range")


def add_dynamiccut(sp) -> None:
    """``--p``, ``--k``, ``--T``: DynamicCut's parameters, defaulted by
    :class:`memviz.dynamics.dynamiccut.DynamicCutParams` and checked by it once, where the command makes one
    (``memviz compare``: :meth:`memviz.compare.config.CompareConfig.checked`), never here."""
    sp.add_argument("--p", type=float, default=DYNAMICCUT.p,
                    help="share of training rows DynamicCut removes, strictly between 0 and 1")
    sp.add_argument("--k", type=int, default=DYNAMICCUT.k,
                    help="DynamicCut scores a row by the mean of its k largest per-check Mem-AUC values (k >= 1)")
    sp.add_argument("--T", type=int, default=DYNAMICCUT.T,
                    help="last warm-up epoch scored, 1 or more (default: the first half of the checks)")


def add_fail_on(sp) -> None:
    """``--fail-on {copying, rows, never}``: the audit as a release gate (:func:`memviz.verdict.verdict.gate`)."""
    sp.add_argument("--fail-on", choices=("copying", "rows", "never"), default="never",
                    help="exit with code 3 when the verdict is 'copying' (copying), or 'copying' or "
                         "'rows_over_copied' (rows), and with code 4 when the audit refused to judge "
                         "(no hold-out, quality too low); never (default): exit 0 whatever the verdict")


def add_backend(sp, backend_help: str) -> None:
    """``--backend {local, dask}`` and ``--scheduler``, as memorize, audit and report take them (the address is
    checked at the door: :func:`memviz.engine.distributed.check_address`)."""
    sp.add_argument("--backend", default="local", choices=["local", "dask"], help=backend_help)
    sp.add_argument("--scheduler", help="dask scheduler address (e.g. tcp://host:8786), with --backend dask "
                                        "(default: a local cluster of one worker process per CPU core)")
