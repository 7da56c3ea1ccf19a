"""The settings of a comparison: :class:`CompareConfig`, one frozen dataclass, the single source of every
default, as given; :class:`CheckedCompare`, the same settings checked once (:meth:`CompareConfig.checked`), with
what the grid reads typed (each DP arm's privacy settings, the dynamic threshold, early stop's rule)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from memviz.compare.methods import (
    DEFAULT_EPSILONS,
    DEFAULT_METHODS,
    NEEDS_WARMUP,
    TABDDPM_ONLY,
    USES_P,
    DPArm,
    base_method,
    check_methods,
    dp_method,
)
from memviz.device import resolve_device
from memviz.dynamics.dynamiccut import DEFAULTS, DynamicCutParams
from memviz.engine import DISTANCES
from memviz.engine.distributed import check_address
from memviz.errors import BadOption, checked_seed
from memviz.mitigate.augment import DEFAULT_RATIO
from memviz.mitigate.dynamic import DynamicThreshold
from memviz.models import MODELS, check_model_params, check_models
from memviz.models.privacy import PrivacyConfig
from memviz.warmup.frontier import StopRule

BACKENDS = ("local", "dask")
PRUNED_REFERENCES = ("kept", "trained")


@dataclass(frozen=True)
class CompareConfig:
    """Mitigation methods × generators × seeds, and how to run them.

    Parameters
    ----------
    methods : names from :data:`memviz.compare.methods.METHODS` (default:
        :data:`~memviz.compare.methods.DEFAULT_METHODS`, the papers' set; ``dynamiccut_excess``,
        ``tabcutmixplus_dtype`` and ``smote_nc`` are named explicitly).
    models : names from :data:`memviz.models.MODELS` (default: all).
    seeds : each seeds the mitigation, the model, its sampling and the evaluation.
    p, k, T : DynamicCut's pruning share, top-k checks and window
        (:func:`memviz.dynamics.dynamiccut.dynamiccut_selection`; T None: the first half of the checks),
        as given (JSON); :meth:`validated` checks them once into :attr:`dynamiccut`.
    run_dir : a finished warm-up on the same training table giving the DynamicCut ranking
        (with a floor for ``dynamiccut_excess``); None: a warm-up is run into ``OUT/warmup``
        when a method needs one (``warmup``), with the test split as its hold-out.
    warmup : a :class:`memviz.warmup.run.WarmupConfig` for that warm-up, as a dict of its
        fields (None: the cpu-quick preset, seed 0, ``epochs``, ``device``, ``distance``
        and ``model_params["tabddpm"]``).
    epochs : training epochs of every model (None: each model's CPU preset).
    ratio : augmentation size as a share of the rows mixed from (TabCutMix, SMOTE).
    model_params : {model: {param: value}} extra parameters of :func:`memviz.models.make_model`.
    device : ``auto``, ``cpu`` or ``cuda`` (models and distances).
    distance : memorization distance, ``paper`` or ``standardized``.
    pruned_reference : reference of ``mem_ratio_pruned``: ``kept`` (the original rows that
        were kept) or ``trained`` (the method's whole training table).
    n_jobs : cells run at once (local: joblib processes; dask: LocalCluster workers).
    backend : ``local`` (joblib) or ``dask`` (dask.distributed).
    scheduler : with dask, a scheduler address (None: a LocalCluster of ``n_jobs`` workers).
    threads : torch threads per cell and for the warm-up (None: 1 — these networks are
        small, and a second OpenMP thread on a shared 2-core machine makes a 200 × 256 @
        256 × 256 matmul 25x slower: parallelism comes from ``n_jobs`` cells at a time).
    stop_rule : the parameters of ``early_stop``'s recommended epoch, as a dict of
        :class:`memviz.warmup.frontier.StopRule` fields (default: its defaults).
    epsilons : the ε of the method ``dp``: one arm ``dp@ε`` each (``dp@ε`` can also be named
        directly in ``methods``).
    privacy : the other settings of every DP-SGD arm, as a dict of
        :class:`memviz.models.privacy.PrivacyConfig` fields but ``epsilon`` (default: δ = 1/(10 N),
        clipping norm 1, the RDP accountant, fresh noise).
    dynamic : the dynamic threshold's settings, as a dict of
        :class:`memviz.mitigate.dynamic.DynamicThreshold` fields (default: its defaults).

    Attributes
    ----------
    dynamiccut : :class:`memviz.dynamics.dynamiccut.DynamicCutParams` or None
        (p, k, T) checked, set by :meth:`validated` when the grid uses them (a DynamicCut ranking, or
        ``random``'s budget), else None; never given, never written (:meth:`to_dict` leaves it out):
        everything below the config takes it and checks nothing again.
    """

    methods: tuple = DEFAULT_METHODS
    models: tuple = MODELS
    seeds: tuple = (0,)
    p: float = DEFAULTS.p
    k: int = DEFAULTS.k
    T: float | None = DEFAULTS.T
    run_dir: str | None = None
    warmup: dict | None = None
    epochs: int | None = None
    ratio: float = DEFAULT_RATIO
    model_params: dict = field(default_factory=dict)
    device: str = "auto"
    distance: str = "paper"
    pruned_reference: str = "kept"
    n_jobs: int = 2
    backend: str = "local"
    scheduler: str | None = None
    threads: int | None = None
    stop_rule: dict = field(default_factory=dict)
    epsilons: tuple = DEFAULT_EPSILONS
    privacy: dict = field(default_factory=dict)
    dynamic: dict = field(default_factory=dict)
    dynamiccut: DynamicCutParams | None = field(default=None, init=False, repr=False)

    # --------------------------------------------------------------- checking
    def checked(self) -> "CheckedCompare":
        """These settings checked once, or a one-line MemvizError naming the bad one: the normalized settings
        (names lower-case, duplicates dropped) with the privacy settings parsed once into each DP arm's, the
        dynamic threshold's and early stop's rule typed. Cheap: called before any work starts; what takes the
        result (:func:`memviz.compare.grid.run_grid`, the cells) checks nothing again."""
        methods = _dp_arms(self.methods, self.epsilons)
        privacy, dynamic = _privacy(self.privacy), DynamicThreshold.parse(self.dynamic)
        models = check_models(self.models)
        only = [m for m in methods if base_method(m) in TABDDPM_ONLY]
        if only and "tabddpm" not in models:
            raise BadOption(f"method {only[0]!r} runs on TabDDPM only: add tabddpm to the models or leave it out")
        try:
            seeds = tuple(dict.fromkeys(int(s) for s in self.seeds))
        except (TypeError, ValueError):
            raise BadOption(f"seeds must be integers, got {list(self.seeds)!r}") from None
        if not seeds:
            raise BadOption("no seed given")
        for s in seeds:
            checked_seed(s)
        n_jobs = self.n_jobs
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
            raise BadOption(f"n_jobs must be an integer >= 1, got {n_jobs!r}")
        if self.backend not in BACKENDS:
            raise BadOption(f"backend {self.backend!r}: unknown (use {', '.join(BACKENDS)})")
        if self.scheduler is not None and self.backend != "dask":
            raise BadOption("a scheduler address needs the dask backend (--backend dask)")
        if isinstance(self.scheduler, str):  # a malformed address: one line before any work
            check_address(self.scheduler)
        if self.pruned_reference not in PRUNED_REFERENCES:
            raise BadOption(f"pruned_reference {self.pruned_reference!r}: use {' or '.join(PRUNED_REFERENCES)}")
        if self.distance not in DISTANCES:
            raise BadOption(f"distance {self.distance!r}: unknown (use {', '.join(DISTANCES)})")
        if not isinstance(self.ratio, (int, float)) or isinstance(self.ratio, bool) or not 0 < self.ratio <= 10:
            raise BadOption(f"ratio {self.ratio!r}: the augmentation share must be in (0, 10]")
        if self.epochs is not None and (isinstance(self.epochs, bool) or int(self.epochs) != self.epochs
                                        or self.epochs < 1):
            raise BadOption(f"epochs {self.epochs!r}: must be a whole number >= 1")
        params = self.model_params or {}
        if not isinstance(params, dict) or not all(isinstance(v, dict) for v in params.values()):
            raise BadOption("model_params: expected {model: {param: value}}")
        for m, mp in params.items():
            check_models([m])
            check_model_params(m, {**mp, **({"epochs": int(self.epochs)} if self.epochs is not None else {})})
        resolve_device(self.device)  # a bad or missing device fails here, not in every cell
        stop_rule = _stop_rule(self.stop_rule)
        dc = None
        if self.needs_ranking or set(methods) & USES_P:  # checked once (p, then k, then T); the row count by the grid
            dc = self.dynamiccut or DynamicCutParams(self.p, self.k, self.T)
        given = privacy.to_dict()
        out = replace(self, methods=methods, models=models, seeds=seeds,
                      model_params={m: dict(v) for m, v in params.items()}, stop_rule=stop_rule.to_dict(),
                      epsilons=tuple(float(e) for e in self.epsilons), privacy={k: given[k] for k in self.privacy},
                      dynamic=dynamic.to_dict())
        object.__setattr__(out, "dynamiccut", dc)  # not an init field: replace() leaves it unset
        arms = tuple(replace(privacy, epsilon=arm.epsilon) for m in methods if (arm := DPArm.parse(m)) is not None)
        return CheckedCompare(out, arms, dynamic, stop_rule)

    def validated(self) -> "CompareConfig":
        """The same settings, normalized (:meth:`checked`'s settings), or a one-line MemvizError naming the bad
        one."""
        return self.checked().settings

    @property
    def needs_ranking(self) -> bool:
        """A DynamicCut ranking is used (a method needs it, or a warm-up run is given)."""
        return self.run_dir is not None or any(m in NEEDS_WARMUP for m in self.methods)

    # ------------------------------------------------------------------- JSON
    def to_dict(self) -> dict:
        """Plain values (a dask scheduler object, which no JSON can hold, is given as None)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        for key in ("methods", "models", "seeds", "epsilons"):
            d[key] = list(d[key])
        d["privacy"], d["dynamic"] = dict(d["privacy"] or {}), dict(d["dynamic"] or {})
        d["model_params"] = {m: dict(v) for m, v in (d["model_params"] or {}).items()}
        d["warmup"] = dict(d["warmup"]) if d["warmup"] else None
        d["stop_rule"] = dict(d["stop_rule"] or {})
        if d["scheduler"] is not None and not isinstance(d["scheduler"], str):
            d["scheduler"] = None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CompareConfig":
        """From :meth:`to_dict` output (a job spec); unknown keys are a one-line error."""
        if not isinstance(d, dict):
            raise BadOption("compare config: expected a JSON object")
        known = {f.name for f in fields(cls) if f.init}
        bad = [k for k in d if k not in known]
        if bad:
            raise BadOption(f"compare config: unknown setting {bad[0]!r}")
        d = dict(d)
        for key in ("methods", "models", "seeds", "epsilons"):
            if key in d and d[key] is not None:
                d[key] = tuple(d[key])
        return cls(**d)


@dataclass(frozen=True)
class CheckedCompare:
    """A comparison's settings checked once (made by :meth:`CompareConfig.checked` only): what
    :func:`memviz.compare.grid.run_grid` and its cells take and check nothing again.

    Attributes
    ----------
    settings : the :class:`CompareConfig` normalized (its ``dynamiccut`` set where the grid uses p); what
        ``experiment.json`` and a job spec record (:meth:`CompareConfig.to_dict`).
    arms : the DP-SGD settings of each DP arm, in the methods' order: ``settings.privacy`` at the arm's exact ε
        (:class:`memviz.compare.methods.DPArm`), parsed once.
    dynamic : the dynamic threshold's settings.
    stop_rule : the rule of early stop's recommended epoch.
    """

    settings: CompareConfig
    arms: tuple[PrivacyConfig, ...]
    dynamic: DynamicThreshold
    stop_rule: StopRule

    def to_dict(self) -> dict:
        """The settings' plain values (:meth:`CompareConfig.to_dict`)."""
        return self.settings.to_dict()


def _stop_rule(d) -> StopRule:
    """``stop_rule`` as a validated StopRule (one-line error on a bad key or value)."""
    if not isinstance(d, dict):
        raise BadOption("stop_rule: expected {tolerance, metric, max_excess}")
    try:
        return StopRule(**d).validated()
    except TypeError:
        raise BadOption(f"stop_rule: unknown setting (use {', '.join(StopRule().to_dict())})") from None


def _dp_arms(methods, epsilons) -> tuple:
    """The methods with ``dp`` replaced by one ``dp@ε`` per ε of ``epsilons`` (validated, order kept)."""
    names = check_methods(methods)
    if "dp" not in names:
        return names
    try:
        eps = [float(e) for e in epsilons]
    except (TypeError, ValueError):
        raise BadOption(f"epsilons must be numbers > 0, got {list(epsilons)!r}") from None
    if not eps or not all(0 < e < float("inf") for e in eps):
        raise BadOption(f"epsilons must be numbers > 0, got {list(epsilons)!r}")
    arms = []
    for m in names:
        arms += [dp_method(e) for e in eps] if m == "dp" else [m]
    return tuple(dict.fromkeys(arms))


def _privacy(d) -> PrivacyConfig:
    """``privacy`` parsed once, at a stand-in ε (each arm has its own): the PrivacyConfig fields but epsilon."""
    if not isinstance(d, dict):
        raise BadOption("privacy: expected {delta, max_grad_norm, accountant, noise_seed}")
    if "epsilon" in d:
        raise BadOption("privacy: give the epsilons as the method dp's arms (epsilons, or dp@3 in methods)")
    return PrivacyConfig.parse({"epsilon": 1.0, **d})
