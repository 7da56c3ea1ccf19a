"""Command line: the same pipeline as the dashboard, headless (the top layer of the house).

Every command prints, as its last stdout line, one JSON object (scripts rely on it).
A user mistake prints one line on stderr and exits with code 2. ``warmup`` and
``compare`` build the same job spec as the dashboard (:class:`memviz.jobs.spec.JobSpec`)
and run it here, with a progress bar on stderr drawn from the job's events. Each command
is one module of :mod:`memviz.commands` (``register`` adds its arguments, ``run`` runs it);
this module builds the parser from them and turns a user mistake into one line.

A stop is one line too, whenever it comes: Ctrl-C (SIGINT) and SIGTERM, from the first import on (the
command's module, numpy, torch: every import but :mod:`memviz.errors`, which ``import memviz`` has loaded, is
inside :func:`main`'s guard), print ``memviz CMD: interrupted`` and exit with 128 + the signal (130, 143).
SIGTERM is turned into the same exception as Ctrl-C (:class:`Terminated`), so an output folder's lock and
staging folder are removed on the way out (:func:`memviz.folders.folder_unit`) and a warm-up records itself as
cancelled.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import warnings

from memviz.errors import MemvizError, Notice, missing_extra


# ------------------------------------------------------------------ parser
class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _Version(argparse.Action):
    """``memviz --version``: ``memviz VERSION`` (:data:`memviz.io.VERSION`), read only when asked (``memviz --help``
    imports no numpy)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from memviz.io import VERSION  # lazy: numpy, pandas (memviz.io), off memviz --help

        print(f"memviz {VERSION}")         # on stdout, as argparse's own version action
        parser.exit(0)


class _Help(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help unless it has none or says it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        shown = not any(action.default is x for x in (None, False, argparse.SUPPRESS))    # 0 is a default to show
        if "default" not in text and shown and action.option_strings:
            text += " (default: %(default)s)"
        return text


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, as Ctrl-C is: the same clean-up path (module docstring)."""

    signum = signal.SIGTERM


def _terminate(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def _stops():
    """SIGTERM raises :class:`Terminated` and SIGINT KeyboardInterrupt (even where a parent ignored it) while
    the block runs; the earlier handlers come back after it (:func:`main` is called in-process by tests)."""
    try:
        before = {sig: signal.signal(sig, handler) for sig, handler in
                  ((signal.SIGTERM, _terminate), (signal.SIGINT, signal.default_int_handler))}
    except ValueError:          # not the main thread: signals are not ours to take
        before = {}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The parser: every command by name and one-line help, with the arguments of ``commands`` (default:
    all). :func:`main` registers the one being run, so only its module is imported (``memviz --help``
    loads no command: none of numpy, pandas or torch)."""
    from memviz.commands import COMMANDS, load  # lazy: inside main's guard (a stop here is one line)

    p = _Parser(prog="memviz", description="Which training rows does a tabular generator copy?",
                formatter_class=_Help)
    p.add_argument("--version", action=_Version, help="print memviz's version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p.commands = sub.choices          # name -> the command's parser (its errors name it)
    full = set(COMMANDS if commands is None else commands)

    def command(name):
        sp = sub.add_parser(name, help=COMMANDS[name], description=COMMANDS[name], formatter_class=_Help)
        sp.add_argument("--verbose", action="store_true",
                        help="diagnostics on stderr (memviz's logging at INFO: each search's path and time, each "
                             "test's time)")
        return sp

    for name in COMMANDS:
        if name in full:
            load(name).register(sub, command)
        else:
            command(name)
    return p


def _one_line_warnings(command: str):
    """A ``warnings.showwarning`` that prints ``memviz CMD: warning: MESSAGE`` on one line (no
    file, line number or source line; memviz's own warnings, e.g. a SchemaWarning, name their file)."""
    from memviz.folders import ReplacedFolder  # lazy: numpy, pandas (memviz.io), off memviz --help
    from memviz.tables.data import SchemaWarning  # lazy: pandas, off memviz --help

    def show(message, category, filename, lineno, file=None, line=None):
        what = "" if issubclass(category, (SchemaWarning, ReplacedFolder, Notice)) else f"{category.__name__}: "
        text = " ".join(str(message).split())
        try:
            (file or sys.stderr).write(f"memviz {command}: warning: {what}{text}\n")
        except OSError:
            pass
    return show


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)        # the command, before its options
    with _stops():
        try:
            return _main(argv, chosen)
        except KeyboardInterrupt as exc:         # Ctrl-C or SIGTERM, wherever it came: one line
            for sig in (signal.SIGINT, signal.SIGTERM):      # a second stop while we say so: no traceback
                signal.signal(sig, signal.SIG_IGN)
            from memviz.commands import COMMANDS  # lazy: names only (it may be what was interrupted)

            name = f"memviz {chosen}" if chosen in COMMANDS else "memviz"
            try:
                print(f"{name}: interrupted", file=sys.stderr)
            except OSError:
                pass
            return 128 + int(getattr(exc, "signum", signal.SIGINT))


def _main(argv: list, chosen: str | None) -> int:
    """Parse and run (every import inside :func:`main`'s guard)."""
    from memviz.commands import COMMANDS  # lazy: inside main's guard (a stop here is one line)

    parser = build_parser([chosen] if chosen in COMMANDS else [])
    args, extra = parser.parse_known_args(argv)
    if extra:              # said by the command's own parser: 'memviz audit: error: ...', as every option error
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    with warnings.catch_warnings(), _diagnostics(args.command, getattr(args, "verbose", False)):
        warnings.filterwarnings("default", category=UserWarning, module="memviz")
        warnings.showwarning = _one_line_warnings(args.command)
        return _run(args)


@contextlib.contextmanager
def _diagnostics(command: str, verbose: bool):
    """``--verbose``: the ``memviz`` logger's INFO records on stderr, one line each ("memviz CMD: ..."), for
    this command; without it nothing is added (the library logs to no handler of its own)."""
    if not verbose:
        yield
        return
    logger = logging.getLogger("memviz")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"memviz {command}: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _run(args) -> int:
    try:
        code = args.func(args)              # a command may return its own exit code (the audit's gate)
    except MemvizError as exc:
        print(f"memviz {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output path that is a folder, read-only, a full disk...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"memviz {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:     # an optional library this command needs: which extra installs it
        missing = missing_extra(exc)
        if missing is None:
            raise
        print(f"memviz {args.command}: error: {missing}", file=sys.stderr)
        return 2
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
