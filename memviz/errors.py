"""User-facing errors.

Every mistake a user can make (a bad file, a bad column, a bad option) raises a
:class:`MemvizError` whose ``str`` is one line naming the file, the column and the
problem. The CLI prints that line and exits with code 2; the dashboard shows it.
Anything else is a bug and keeps its traceback.

A caller catches a kind of mistake by its subclass: :class:`BadTable` (a table or schema file),
:class:`BadOption` (an option or config value), :class:`BadRunFolder` (a run, job or attack folder),
:class:`RefusedVerdict` (tables an audit gives no verdict on), :class:`TooLarge` (more than this machine's memory or disk
holds), :class:`Busy` (a folder another memviz process is writing), :class:`MissingExtra` (an optional library);
beside them, ``memviz.io.OutputRefused`` (an output path memviz will not write: it would replace something the user
owns) and ``memviz.io.DiskFull``. Every ``raise`` in memviz names one of these kinds; the base class is for
``except`` only.
"""
from __future__ import annotations

import importlib
from numbers import Integral


class MemvizError(Exception):
    """A user mistake, explained in one line."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class BadTable(MemvizError):
    """A table or schema file that cannot be used as given: the file, a column, a value or the rows."""


class BadOption(MemvizError):
    """An option, setting or config value outside what it takes (a seed, p, k, T, a method, epochs, ...)."""


class BadRunFolder(MemvizError):
    """A run folder (a warm-up's, a job's spec, an attack's) that is missing, incomplete or incompatible."""


class RefusedVerdict(MemvizError):
    """Tables on which an audit gives no verdict, and why (a hold-out that shares the training table's rows)."""


class TooLarge(MemvizError):
    """A request this machine cannot hold, refused before any work: memory for a neighbour search or for rows to
    sample, the disk reserve of a runs folder."""


class Busy(MemvizError):
    """A folder another memviz process is writing now (its lock is held): try again when that process stops."""


#: the names these kinds had before (a caller's ``except DataError`` still catches a bad table); not used in memviz
DataError, RunError = BadTable, BadRunFolder


#: the extra of ``pip install 'memviz[EXTRA]'`` that installs each optional library (pyproject.toml)
EXTRAS = {
    "torch": "train", "sklearn": "train", "imblearn": "train", "joblib": "train",
    "sdv": "sdv", "sdmetrics": "sdv", "ctgan": "sdv", "rdt": "sdv", "copulas": "sdv", "deepecho": "sdv",
    "plotly": "plots", "streamlit": "app", "dask": "dask", "distributed": "dask", "opacus": "dp", "opendp": "dp",
    "mlflow": "mlflow", "anonymeter": "anonymeter",
}


def install_hint(extra: str) -> str:
    """The one line that says what to install for an optional part of memviz."""
    return f"pip install 'memviz[{extra}]'"


class MissingExtra(MemvizError):
    """An optional library a command needs is not installed: one line naming it and its extra."""


def require(*modules: str) -> None:
    """At a command's door, before any table is read: :class:`MissingExtra` in one line for the first optional
    library in ``modules`` that is not installed (a command that trains reads no table it cannot use)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            missing = missing_extra(exc)
            if missing is None:
                raise
            raise missing from None


def stop_behind(exc: BaseException) -> BaseException | None:
    """The Ctrl-C or SIGTERM (a KeyboardInterrupt) that ``exc`` was raised while handling, if any: a library's
    clean-up that fails on the way out of a stop (loky's executor, stopped before its thread started, raises
    "cannot join thread before it is started") must not turn the stop into a traceback."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return exc
        exc = exc.__context__
    return None


def missing_extra(exc: ImportError) -> MissingExtra | None:
    """The :class:`MissingExtra` of a ``ModuleNotFoundError`` for an optional library (None for any
    other import error: a bug or a broken install keeps its traceback)."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    if not isinstance(exc, ModuleNotFoundError) or name not in EXTRAS:
        return None
    return MissingExtra(f"needs {name}, which is not installed: {install_hint(EXTRAS[name])}")


class Notice(UserWarning):
    """Something memviz did that the user did not ask for exactly (a request cut to what there is), said in one
    line: the CLI prints ``memviz CMD: warning: TEXT``, without a category name."""


#: the largest seed: every seed memviz takes is a whole number from 0 to 2³² − 1 (numpy's legacy and
#: scikit-learn's range), on every command and in every config; seeds derived from it (a shadow model's, a
#: check's) come from it without leaving their generator's range
SEED_MAX = 2**32 - 1


def checked_seed(value, what: str = "seed") -> int:
    """``value`` as an int when it is a whole number from 0 to :data:`SEED_MAX`, else a MemvizError naming
    ``what`` (``seed=-1: ...``). numpy integers count; a bool, a float or text do not."""
    if isinstance(value, bool) or not isinstance(value, Integral) or not 0 <= int(value) <= SEED_MAX:
        raise BadOption(f"{what}={value!r}: a seed is a whole number from 0 to {SEED_MAX} (2**32 - 1)")
    return int(value)
