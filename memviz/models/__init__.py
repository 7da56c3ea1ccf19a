"""Generators behind one small interface.

Every model follows the scikit-learn estimator contract::

    model = Model(**params)            # params only, nothing fitted
    model.fit(table, callbacks=[...])  # -> self; fitted attributes end in "_"
    df = model.sample(n, seed=0)       # DataFrame with table.schema.columns,
                                       # original dtypes and categories

``table`` is a :class:`memviz.data.Table`. ``make_model(name, **params)`` builds one
by name: ``tabddpm``, ``ctgan``, ``tvae``.
"""
from __future__ import annotations


def make_model(name: str, **params):
    name = name.lower()
    if name == "tabddpm":
        from .tabddpm import TabDDPM
        return TabDDPM(**params)
    if name in ("ctgan", "tvae"):
        from .sdv_models import SDVGenerator
        return SDVGenerator(kind=name, **params)
    from ..errors import MemvizError
    raise MemvizError(f"unknown model {name!r} (use tabddpm, ctgan, tvae)")


MODELS = ("tabddpm", "ctgan", "tvae")
