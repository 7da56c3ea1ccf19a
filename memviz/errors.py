"""User-facing errors.

Every mistake a user can make (a bad file, a bad column, a bad option) raises a
:class:`MemvizError` whose ``str`` is one line naming the file, the column and the
problem. The CLI prints that line and exits with code 2; the dashboard shows it.
Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations


class MemvizError(Exception):
    """A user mistake, explained in one line."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class DataError(MemvizError):
    """A table or schema file that cannot be used as given."""


class RunError(MemvizError):
    """A run directory that is missing, incomplete or incompatible."""
