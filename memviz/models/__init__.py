"""Generators behind one small interface.

Every model follows the scikit-learn estimator contract::

    model = Model(**params)            # params only, nothing fitted
    model.fit(table, callbacks=[...])  # -> self; fitted attributes end in "_"
    df = model.sample(n, seed=0)       # DataFrame with table.schema.columns,
                                       # original dtypes and categories

``table`` is a :class:`memviz.tables.data.Table`. ``make_model(name, **params)`` builds one
by name: ``tabddpm``, ``ctgan``, ``tvae`` (:data:`MODELS`, the one registry of names
and display labels).
"""
from __future__ import annotations

from memviz.errors import BadOption
from memviz.models.sdv_models import SDVGenerator

#: model name -> display label (the one list of generators)
MODEL_LABELS = {"tabddpm": "TabDDPM", "ctgan": "CTGAN", "tvae": "TVAE"}
MODELS = tuple(MODEL_LABELS)


def make_model(name: str, **params):
    name = name.lower()
    if name == "tabddpm":
        from memviz.models.tabddpm import TabDDPM  # lazy: torch (memviz.models.tabddpm imports it)
        return TabDDPM(**params)
    if name in ("ctgan", "tvae"):
        return SDVGenerator(kind=name, **params)
    raise BadOption(f"unknown model {name!r} (use {', '.join(MODELS)})")


def check_model_params(name: str, params: dict) -> None:
    """A bad parameter of model ``name`` (unknown, or a bad value such as 0 epochs) is a
    one-line MemvizError before any work starts."""
    epochs = params.get("epochs")
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise BadOption(f"model_params[{name!r}]: epochs must be a whole number >= 1, got {epochs!r}")
    try:
        model = make_model(name, device="cpu", **params)
    except TypeError as exc:
        raise BadOption(f"model_params[{name!r}]: {exc}") from None
    except ValueError as exc:
        raise BadOption(f"model_params[{name!r}]: invalid value ({exc})") from None
    check = getattr(model, "check_params", None)
    if check is not None:
        check()


def check_models(names) -> tuple[str, ...]:
    """Validate model names (case-insensitive, duplicates dropped, order kept)."""
    out = tuple(dict.fromkeys(str(m).strip().lower() for m in names))
    for m in out:
        if m not in MODEL_LABELS:
            raise BadOption(f"unknown model {m!r} (use {', '.join(MODELS)})")
    if not out:
        raise BadOption(f"no model given (use {', '.join(MODELS)})")
    return out
