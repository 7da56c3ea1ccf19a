"""A package's public face, loaded on first use (PEP 562).

``import memviz`` (or ``import memviz.viz``) should cost what the caller uses: a package whose
``__init__`` imported every public name would load plotly, SDMetrics and torch for a caller that
wants one constant. :func:`lazy_face` gives a package a module ``__getattr__`` that imports the
module holding a public name the first time the name is read, and a ``__dir__`` that lists them.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_face(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(``__getattr__``, ``__dir__``) for ``package`` whose public ``names`` map to the modules holding them
    (``"module"``, or ``"module:attribute"`` where the module names it otherwise).

    Usage, in the package's ``__init__.py``::

        __getattr__, __dir__ = lazy_face(__name__, {"Audit": "memviz.auditing.result", ...})
    """
    names = dict(names)

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = module.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(importlib.import_module(package), name, value)      # read once: later reads are plain
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(names))

    return __getattr__, __dir__
