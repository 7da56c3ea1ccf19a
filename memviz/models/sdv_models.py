"""CTGAN and TVAE (from SDV) behind memviz's small generator interface.

SDV does the preprocessing (mode-specific normalization of numericals, one-hot
categoricals) and the training; this module only translates a :class:`~memviz.tables.data.Table`
into an SDV single-table problem and back:

* metadata: every schema numerical (and a regression target) is ``"numerical"``,
  every categorical (and a classification target) is ``"categorical"``; no
  constraints, no primary key, nothing anonymized, nothing downloaded;
* dtypes: ``category`` columns go to SDV as ``object`` (SDV refuses ``category``)
  and come back with their original categories; integer, bool and float columns
  come back with their original dtype; a missing categorical value is a category
  of its own in SDV and comes back as NaN.

Randomness
----------
``fit`` seeds numpy's and torch's global generators with ``seed`` for the duration
of the fit only (their previous states are restored afterwards), and runs SDV's
per-column transforms sequentially (joblib's default process pool would draw
from unseeded worker processes). On CPU two fits with the same seed give the
same model and the same samples. ``sample(n, seed)`` depends only on the fitted
model, ``n`` and ``seed``; ``seed=None`` draws a fresh seed from a generator
seeded at fit time, so a fixed sequence of calls is reproducible too.

Callbacks
---------
SDV's synthesizers and ctgan's ``CTGAN.fit`` / ``TVAE.fit`` take no callback, but
both loops iterate ``for i in tqdm(range(epochs), ...)`` over the ``tqdm`` name of
their own module (``ctgan.synthesizers.ctgan`` / ``.tvae``, ctgan 0.12). During a fit
that name is a thin shim (:func:`_epoch_shim`): for the thread that is fitting it wraps
the epoch iterator, so ``on_epoch_end(model, e, {"loss": ...})`` is called after each
epoch e = 1, ..., epochs (``model.epoch_ = e``; the loss is the epoch's generator loss
for CTGAN, its mean batch loss for TVAE), and a ``STOP`` returned by a callback ends
the loop after that epoch (``epoch_`` then says how many ran). Any other use of
``tqdm`` in those modules, or another thread, gets ctgan's own ``tqdm`` unchanged. A
ctgan without that loop variable shape still trains: ``on_epoch_end`` is then called
once with the final epoch, after the fit. ``on_fit_start`` comes before the fit and
``on_fit_end`` after it.
"""
from __future__ import annotations

import importlib
import logging
import random
import threading
import warnings
from contextlib import ExitStack, contextmanager
from typing import Iterable

import numpy as np
import pandas as pd

from memviz.device import resolve_device, torch_threads
from memviz.errors import BadOption, BadTable
from memviz.models.callbacks import STOP

KINDS = ("ctgan", "tvae")
#: CPU-friendly defaults: the 3,000-row Adult sample trains in about 15-20 s of CPU
#: time (see the Notes of :class:`SDVGenerator` for the measured quality).
DEFAULT_EPOCHS = {"ctgan": 30, "tvae": 200}
TABLE_NAME = "table"
_QUIET_LOGGERS = ("sdv", "rdt", "ctgan", "copulas", "sdmetrics", "SingleTableSynthesizer",
                  "MultiTableSynthesizer", "Metadata", "SingleTableMetadata")
_QUIET_MODULES = r"(sdv|ctgan|rdt|copulas|sdmetrics)(\..*)?$"


class SDVGenerator:
    """CTGAN or TVAE from SDV, fitted on a :class:`~memviz.tables.data.Table`.

    Parameters
    ----------
    kind : {"ctgan", "tvae"}
        ``sdv.single_table.CTGANSynthesizer`` or ``TVAESynthesizer``.
    epochs : int or None
        Training epochs (passes over the table). None: :data:`DEFAULT_EPOCHS` for
        the kind, chosen so that the 3,000-row Adult sample trains in about 20 s
        on 2 CPU cores (SDV's own default, 300, is for a GPU or for patience).
    batch_size : int
        Rows per step. For CTGAN it must be a multiple of ``pac`` (default 10).
    device : {"auto", "cpu", "cuda", "cuda:N"}
        ``"auto"``: CUDA when available, else CPU.
    seed : int
        Seeds the fit and the stream of ``sample(n, seed=None)`` draws.
    n_threads : int or None
        torch intra-op threads while fitting and sampling (restored afterwards; it
        is a process-wide setting). None leaves torch's setting alone. On a busy
        2-core machine ``1`` was up to 8x faster than 2 spinning threads (TVAE, 100
        epochs of the Adult sample: 9 s instead of 71 s).
    **model_kwargs
        Passed on to the SDV synthesizer (e.g. ``embedding_dim``,
        ``generator_dim``, ``compress_dims``, ``pac``, ``enforce_min_max_values``).

    Attributes
    ----------
    synthesizer_ : the fitted SDV synthesizer.
    schema_ : Schema of the training table.
    dtypes_ : dict column -> original dtype.
    device_ : str, the device used ("cpu", "cuda", ...).
    planned_epochs_ : int, the epochs the fit was asked for (``epochs`` or the kind's default),
        set before ``on_fit_start``.
    epoch_ : int, epochs trained.
    loss_ : float, loss of the last epoch (CTGAN: generator loss; TVAE: mean batch loss).
    loss_values_ : DataFrame, SDV's loss log.

    Notes
    -----
    Measured on the 3,000-row Adult sample (seed 0, 3,000 rows sampled, CPU, one
    torch thread; :func:`memviz.evaluate.synthetic.quality` against the training rows; Trend
    over all pairs, and in brackets with SDMetrics 0.32's default thresholds):

    ======  ======  ============  =====  ============  =====
    kind    epochs  fit CPU time  Shape  Trend         MLE
    ======  ======  ============  =====  ============  =====
    tvae    200     15-18 s       0.842  0.735 (0.779) 0.867
    ctgan   30      14-18 s       0.857  0.837 (0.737) 0.47
    ======  ======  ============  =====  ============  =====

    (real-data MLE reference 0.900). At these budgets CTGAN reproduces the marginals
    but not yet the target's dependence on the features (MLE at chance; still so at
    100 epochs); TVAE learns it.
    """

    def __init__(self, kind: str = "ctgan", epochs: int | None = None, batch_size: int = 500,
                 device: str = "auto", seed: int = 0, n_threads: int | None = None, **model_kwargs):
        self.kind = kind
        self.epochs = epochs
        self.batch_size = batch_size
        self.device = device
        self.seed = seed
        self.n_threads = n_threads
        self.model_kwargs = dict(model_kwargs)

    # ------------------------------------------------------------------ params
    def get_params(self, deep: bool = True) -> dict:
        return {"kind": self.kind, "epochs": self.epochs, "batch_size": self.batch_size,
                "device": self.device, "seed": self.seed, "n_threads": self.n_threads, **self.model_kwargs}

    def check_params(self) -> "SDVGenerator":
        """Raise MemvizError (one line) on a bad setting, before any fit."""
        self._resolved_epochs()
        return self

    def _resolved_epochs(self) -> int:
        kind = str(self.kind).lower()
        if kind not in KINDS:
            raise BadOption(f"SDV model: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        epochs = DEFAULT_EPOCHS[kind] if self.epochs is None else self.epochs
        if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
            raise BadOption(f"{kind}: epochs must be a positive integer, got {epochs!r}")
        bs = self.batch_size
        if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)) or bs < 1:
            raise BadOption(f"{kind}: batch_size must be a positive integer, got {bs!r}")
        nt = self.n_threads
        if nt is not None and (isinstance(nt, bool) or not isinstance(nt, (int, np.integer)) or nt < 1):
            raise BadOption(f"{kind}: n_threads must be a positive integer or None, got {nt!r}")
        pac = self.model_kwargs.get("pac", 10)
        if kind == "ctgan" and (bs % pac or bs % 2):
            raise BadOption(f"ctgan: batch_size {bs} must be an even multiple of pac={pac}")
        return int(epochs)

    # --------------------------------------------------------------------- fit
    def fit(self, table, callbacks: Iterable = ()) -> "SDVGenerator":
        """Train on ``table`` (a :class:`~memviz.tables.data.Table`); returns self."""
        if not hasattr(table, "schema") or not hasattr(table, "data"):
            raise BadTable(f"{self.kind}: fit expects a memviz Table, got {type(table).__name__}")
        epochs = self._resolved_epochs()
        kind = str(self.kind).lower()
        callbacks = list(callbacks or ())
        schema = table.schema
        dev = resolve_device(self.device)
        device, enable_gpu = str(dev), dev.type != "cpu"
        synth = _make_synthesizer(kind, schema, epochs=epochs, batch_size=int(self.batch_size),
                                  enable_gpu=enable_gpu, model_kwargs=self.model_kwargs)
        self.schema_ = schema
        self.dtypes_ = {c: table.data[c].dtype for c in schema.columns}
        self.device_ = device
        self.planned_epochs_ = epochs
        for cb in callbacks:
            cb.on_fit_start(self)
        frame = to_sdv_frame(table.data, schema)
        with ExitStack() as stack:
            stack.enter_context(quiet_sdv())
            stack.enter_context(torch_threads(self.n_threads))
            stack.enter_context(seeded(int(self.seed)))
            if device.startswith("cuda:"):
                import torch  # lazy: torch, an extra (train)
                stack.enter_context(torch.cuda.device(torch.device(device)))
            hook = stack.enter_context(epoch_hook(self, synth, kind, callbacks))
            try:
                synth.fit({TABLE_NAME: frame})
            except Exception as exc:  # SDV's data errors become one-line DataErrors
                if type(exc).__module__.startswith("sdv.errors"):
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise BadTable(f"{table.source}: {kind} cannot fit this table ({first})") from None
                raise
            finally:
                synth.__dict__.pop("_print_warning", None)  # keep the fitted model picklable
        self.synthesizer_ = synth
        self.epoch_ = hook.epoch or epochs
        self.loss_values_ = synth.get_loss_values()
        self.loss_ = _final_loss(kind, self.loss_values_)
        self._seed_stream_ = np.random.default_rng(int(self.seed))
        if not hook.epoch:  # the loop could not be hooked: one call with the final epoch, as before
            for cb in callbacks:
                cb.on_epoch_end(self, epochs, {"loss": self.loss_})  # STOP cannot apply: SDV has finished
        for cb in callbacks:
            cb.on_fit_end(self)
        return self

    # ------------------------------------------------------------------ sample
    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        """Draw ``n`` rows: columns ``schema.columns``, original dtypes, a RangeIndex.

        ``seed`` fixes the draw (same model, ``n`` and seed: same rows); None takes
        the next seed of a stream seeded by ``self.seed`` at fit time.
        """
        if not hasattr(self, "synthesizer_"):
            raise BadOption(f"{self.kind}: sample called before fit")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise BadOption(f"{self.kind}: the number of rows to sample must be >= 0, got {n!r}")
        columns = list(self.schema_.columns)
        if n == 0:
            return restore_dtypes(pd.DataFrame({c: pd.Series([], dtype=object) for c in columns}), self.dtypes_)
        if seed is None:
            seed = int(self._seed_stream_.integers(2**31 - 1))
        synth = self.synthesizer_
        with quiet_sdv(), torch_threads(self.n_threads):
            _reseed_sampling(synth, int(seed))
            out = synth.sample(int(n))[TABLE_NAME]
        out = out.loc[:, columns].reset_index(drop=True)
        return restore_dtypes(out, self.dtypes_)


# ------------------------------------------------------------ epoch callbacks
_HOOK = threading.local()    # .fn: the epoch hook of the fit running in this thread (see the module docstring)
_LOOP_MODULES = ("ctgan.synthesizers.ctgan", "ctgan.synthesizers.tvae")


class _Epochs:
    """ctgan's epoch iterator (a tqdm bar) that calls ``hook(e)`` after epoch e's body ran and
    stops the loop when it returns STOP; every other attribute is the bar's (set_description)."""

    def __init__(self, bar, hook):
        self._bar, self._hook = bar, hook

    def __iter__(self):
        for e, item in enumerate(self._bar, start=1):
            yield item
            if self._hook(e) == STOP:
                self._bar.close()
                return

    def __getattr__(self, name):
        return getattr(self._bar, name)


def _epoch_shim(original):
    """A stand-in for a ctgan module's ``tqdm``: ``original`` itself unless this thread is fitting
    with an epoch hook; the shim remembers ``original`` (``_memviz_original``)."""

    def tqdm(*args, **kwargs):
        bar = original(*args, **kwargs)
        fn = getattr(_HOOK, "fn", None)
        return bar if fn is None else _Epochs(bar, fn)

    tqdm._memviz_original = original
    return tqdm


def _install_epoch_shims() -> bool:
    """Put the shim in place of ``tqdm`` in ctgan's two training modules (once); False when a
    module has no ``tqdm`` to wrap (another ctgan: the loop is then not hooked)."""
    ok = True
    for name in _LOOP_MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            ok = False
            continue
        current = getattr(mod, "tqdm", None)
        if current is None:
            ok = False
        elif not hasattr(current, "_memviz_original"):
            mod.tqdm = _epoch_shim(current)
    return ok


class _EpochState:
    epoch = 0  # epochs reported so far (0: none, or the loop was not hooked)


@contextmanager
def epoch_hook(model: "SDVGenerator", synth, kind: str, callbacks: list):
    """While inside, each finished epoch of this thread's ctgan loop calls ``on_epoch_end`` of
    ``callbacks`` (see the module docstring); yields a state whose ``epoch`` counts them."""
    state = _EpochState()
    if not callbacks or not _install_epoch_shims():
        yield state
        return

    def on_epoch(e: int):
        state.epoch = model.epoch_ = int(e)
        inner = getattr(synth, "_model", None)
        logs = {"loss": _final_loss(kind, getattr(inner, "loss_values", None))}
        answers = [cb.on_epoch_end(model, int(e), logs) for cb in callbacks]
        return STOP if STOP in answers else None

    previous = getattr(_HOOK, "fn", None)
    _HOOK.fn = on_epoch
    try:
        yield state
    finally:
        _HOOK.fn = previous


# ------------------------------------------------------------------- helpers
def build_metadata(schema):
    """SDV ``Metadata`` of one table: numericals and categoricals, nothing else."""
    from sdv.metadata import Metadata  # lazy: sdv, an extra (sdv)

    columns = {c: {"sdtype": "numerical"} for c in schema.distance_numerical}
    columns.update({c: {"sdtype": "categorical"} for c in schema.distance_categorical})
    columns = {c: columns[c] for c in schema.columns}  # table order
    with quiet_sdv():
        return Metadata.load_from_dict({"tables": {TABLE_NAME: {"columns": columns}}})


def _make_synthesizer(kind, schema, *, epochs, batch_size, enable_gpu, model_kwargs):
    from sdv.single_table import CTGANSynthesizer, TVAESynthesizer  # lazy: sdv, an extra (sdv)

    cls = CTGANSynthesizer if kind == "ctgan" else TVAESynthesizer
    kwargs = dict(model_kwargs)
    kwargs.update(epochs=epochs, batch_size=batch_size, enable_gpu=enable_gpu, verbose=False)
    try:
        synth = cls(build_metadata(schema), **kwargs)
    except TypeError as exc:
        raise BadOption(f"{kind}: bad model parameter ({exc})") from None
    if hasattr(synth, "_print_warning"):
        synth._print_warning = _no_print  # CTGAN print()s a "PerformanceAlert"; this instance only, during fit
    return synth


def _no_print(data) -> None:
    return None


def to_sdv_frame(data: pd.DataFrame, schema) -> pd.DataFrame:
    """The table as SDV accepts it: no ``category``/``bool`` dtypes, a RangeIndex."""
    out = data.loc[:, list(schema.columns)].reset_index(drop=True).copy()
    for c in schema.distance_categorical:
        s = out[c]
        if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(s) \
                or pd.api.types.is_string_dtype(s) or pd.api.types.is_extension_array_dtype(s):
            out[c] = s.astype(object).where(s.notna(), np.nan)
    for c in schema.distance_numerical:
        if not pd.api.types.is_float_dtype(out[c]) or pd.api.types.is_extension_array_dtype(out[c]):
            out[c] = out[c].astype("float64")
    return out


def restore_dtypes(df: pd.DataFrame, dtypes: dict) -> pd.DataFrame:
    """Cast sampled columns back to the training dtypes (NaN-safe).

    Integer and bool columns keep a float/object dtype only if the sample holds a
    missing value; values outside a ``category`` dtype's categories become NaN.
    """
    out = {}
    for c, dt in dtypes.items():
        s = df[c]
        if isinstance(dt, pd.CategoricalDtype):
            s = pd.Series(pd.Categorical(s.where(s.notna(), None), dtype=dt), index=df.index)
        elif pd.api.types.is_bool_dtype(dt):
            s = s.astype(bool) if s.notna().all() else s.astype(object)
        elif pd.api.types.is_integer_dtype(dt):
            v = pd.to_numeric(s, errors="coerce")
            s = v.round().astype(dt) if v.notna().all() else v.astype("float64")
        elif pd.api.types.is_float_dtype(dt):
            s = pd.to_numeric(s, errors="coerce").astype(dt)
        elif pd.api.types.is_object_dtype(dt):
            s = s.astype(object).where(s.notna(), np.nan)
        else:
            try:
                s = s.astype(dt)
            except (TypeError, ValueError):
                pass
        out[c] = s
    return pd.DataFrame(out, index=df.index)


def _final_loss(kind: str, loss: pd.DataFrame | None) -> float:
    if loss is None or len(loss) == 0:
        return float("nan")
    last = loss[loss["Epoch"] == loss["Epoch"].max()]
    col = "Generator Loss" if kind == "ctgan" else "Loss"
    return float(pd.to_numeric(last[col], errors="coerce").mean())


def _reseed_sampling(synth, seed: int) -> None:
    """Make the next ``synth.sample`` a function of ``seed`` only.

    Seeds the network's (numpy, torch) generators and the reverse-transform
    generators of SDV's per-column transformers (missing-value generation).
    """
    synth._set_random_state(seed)
    for k, tr in enumerate(synth.get_transformers().values()):
        if tr is not None and hasattr(tr, "set_random_state"):
            tr.set_random_state(np.random.RandomState((seed + 7919 * (k + 1)) % 2**32), "reverse_transform")


@contextmanager
def seeded(seed: int):
    """Seed python's, numpy's and torch's global generators; restore them on exit.

    SDV draws from the global generators during fit (mini-batches, GAN noise,
    per-column transforms). The transforms are run sequentially (joblib
    ``backend="sequential"``) so that no unseeded worker process draws numbers.
    """
    import torch  # lazy: torch, an extra (train)
    from joblib import parallel_config  # lazy: joblib, an extra (train)

    np_state, py_state = np.random.get_state(), random.getstate()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    try:
        with torch.random.fork_rng(devices=devices), parallel_config(backend="sequential"):
            torch.manual_seed(seed)
            np.random.seed(seed % 2**32)
            random.seed(seed)
            yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)


@contextmanager
def quiet_sdv():
    """Silence SDV/RDT/CTGAN warnings and log records while inside.

    Warnings: filtered for the warnings issued from those packages (and
    scikit-learn's ConvergenceWarning from their Gaussian mixtures) only.
    Logging: those packages' loggers are raised to ERROR and restored on exit.
    """
    from sklearn.exceptions import ConvergenceWarning  # lazy: sklearn, an extra (train)

    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    levels = [lg.level for lg in loggers]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=_QUIET_MODULES)
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        warnings.filterwarnings("ignore", category=FutureWarning, message=".*(sdv|SDV|sdmetrics|rdt).*")
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        try:
            yield
        finally:
            for lg, lvl in zip(loggers, levels):
                lg.setLevel(lvl)
