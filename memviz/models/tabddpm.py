"""TabDDPM (Kotelnikov et al., ICML 2023), our own torch implementation.

Usage::

    model = TabDDPM("cpu-quick", epochs=200).fit(table, callbacks=[...])
    df = model.sample(3000, seed=0)          # table.schema.columns, original dtypes
    state = model.state_dict()               # torch.save(state, path), e.g. from a callback
    # later, in a fresh process: continue to the same end, bit-identically
    TabDDPM("cpu-quick", epochs=200).fit(table, resume_state=torch.load(path, weights_only=True))
    # or just sample from it
    TabDDPM.from_state_dict(torch.load(path, weights_only=True)).sample(3000, seed=0)

Column transforms: :mod:`memviz.models.transforms`; diffusion maths and the denoiser:
:mod:`memviz.models.diffusion`.

Training: AdamW (fused where available); one epoch is one pass over a ``torch.randperm``
of the rows (drawn from the training generator, on the device) in batches of
``batch_size`` (the last one may be smaller); the loss is read from the device once per
epoch. ``lr_schedule="linear"`` sets ``lr_s = lr · (1 - s / S)`` before step ``s`` of
``S = epochs · ⌈N / batch_size⌉`` (the reference TabDDPM annealing; resuming with another
``epochs`` therefore changes the schedule from there on), ``"constant"`` keeps ``lr``.
``steps`` (None: unset) makes the budget a number of optimiser steps instead, as the
reference trains: ``S = steps``, ``⌈steps / ⌈N / batch_size⌉⌉`` epochs, the last one stopped
after step S (so tables of different sizes get the same number of steps).
A callback with a ``rows_left_out(model, epoch)`` method may leave rows out of an epoch's
batches (positions in the table; None: none): the permutation then runs over the other rows,
and the epoch has ``⌈N_kept / batch_size⌉`` steps (the dynamic threshold,
:mod:`memviz.mitigate.dynamic`); with ``steps`` set, epochs go on until step S.

Private training (``privacy``, :mod:`memviz.models.privacy`): DP-SGD with Opacus, every step a
Poisson batch (each row in with probability ``batch_size / N``), ``⌈N / batch_size⌉`` steps an
epoch, each row's gradient clipped, Gaussian noise added; ``privacy_`` then holds the plan and
the ε spent.

Randomness: the network is initialised from ``seed``; training draws (permutations,
``t``, noise, dropout) come from one training generator seeded with ``seed + 1`` on the
model's device; each :meth:`TabDDPM.sample` call builds its own generator from its
``seed``, so sampling inside a callback leaves training untouched. The global torch RNG
is never used. Samples for a seed depend on the device kind (CPU vs CUDA streams) and
on the sampling ``batch_size``.
"""
from __future__ import annotations

import math
import secrets
from dataclasses import asdict, fields, replace

import numpy as np
import pandas as pd
import torch

from memviz.device import resolve_device, shared_cpu_threads, torch_threads
from memviz.errors import BadOption, BadRunFolder, BadTable
from memviz.models.callbacks import STOP, rows_left_out
from memviz.models.diffusion import CAT_INPUTS, MixedDiffusion, MLPDenoiser
from memviz.models.dpstats import check_releasable, private_transform
from memviz.models.presets import PRESETS, TabDDPMConfig
from memviz.models.privacy import (
    DPSGD,
    PrivacyConfig,
    epsilon_spent,
    guarantee,
    public_bounds,
    public_categories,
    with_preprocessing,
)
from memviz.models.privacy import plan as privacy_plan
from memviz.models.transforms import TabularTransform
from memviz.tables.data import Table

STATE_FORMAT = "memviz.tabddpm/1"
LR_SCHEDULES = ("linear", "constant")


_ARCH = ("layers", "dim_t", "n_timesteps", "cat_input")


#: networks with fewer parameters run on one CPU thread (TabDDPM's ``n_threads``)
SMALL_NETWORK = 2_000_000


class TabDDPM:
    """TabDDPM generator with the memviz estimator contract.

    Parameters
    ----------
    preset : {"cpu-quick", "paper"}
        Starting values (:data:`PRESETS`); any ``None`` parameter below takes the preset's.
    epochs, batch_size, lr, weight_decay, layers, dim_t, n_timesteps, dropout, lr_schedule, cat_input
        Overrides of :class:`TabDDPMConfig` fields.
    device : str
        ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``...
    amp : bool
        bf16 autocast of the denoiser on CUDA; ignored on CPU. The diffusion maths stay float32.
    seed : int
        Seeds the initial weights (``seed``) and the training generator (``seed + 1``).
    privacy : number, dict or None
        Train with DP-SGD to this ε (a number) or these :class:`memviz.models.privacy.PrivacyConfig`
        settings (``epsilon``, ``delta``, ``max_grad_norm``, ``accountant``, ``noise_seed``); None:
        plain training. Needs Opacus (``pip install memviz[dp]``).
    n_threads : int or None
        CPU intra-op threads while training and sampling (restored afterwards). None: one
        thread for networks under :data:`SMALL_NETWORK` parameters (``cpu-quick``): their ops
        are small, and spinning threads beside one busy core lose far more than a second core
        gains (2 cores, one busy: a 256-row sample 46x slower on 2 threads, 10,000 rows 6x;
        quiet: a whole 250-row warm-up 1.23x faster), and a job alone in the queue is rarely
        alone on the machine (the dashboard and its browser poll while it runs). Larger
        networks: the cores divided among the jobs running when the job runtime says how many
        run (:func:`memviz.device.shared_cpu_threads`), else torch's setting. Ignored on CUDA.
        The thread count does not change the results for a fixed seed (tested on the default
        network).

    Attributes (after fit)
    ----------------------
    epoch_ : int            finished epochs
    step_ : int             finished optimisation steps
    loss_history_ : list    mean training loss of each finished epoch
    model_ : MLPDenoiser    the network
    optimizer_ : torch.optim.AdamW
    transform_ : TabularTransform
    diffusion_ : MixedDiffusion
    config_ : TabDDPMConfig the resolved hyper-parameters
    device_ : torch.device
    privacy_ : dict or None the privacy plan (σ, q, δ, planned steps), ``epsilon_spent`` and ``delta_spent``
                            (the whole pipeline's), their parts, what they cover and assume public
                            (:func:`memviz.models.privacy.guarantee`), the preprocessing's releases

    Notes
    -----
    ``cpu-quick`` on the 3,000-row Adult sample (1 torch thread, on a shared 2-core
    machine under load): 200 epochs in 22-28 s of CPU time, one sampling pass of 3,000
    rows in 1.4-2.1 s; SDMetrics QualityReport against the training table over seeds
    0, 1, 2: Shape 0.951 / 0.960 / 0.971, Trend 0.907 / 0.919 / 0.934. ``paper`` has
    11.8 M parameters on Adult (``d_in = 110``).
    """

    def __init__(self, preset: str = "cpu-quick", *, epochs=None, batch_size=None, lr=None, weight_decay=None,
                 layers=None, dim_t=None, n_timesteps=None, dropout=None, lr_schedule=None,
                 cat_input=None, device: str = "auto", amp: bool = False, seed: int = 0,
                 n_threads: int | None = None, steps: int | None = None, privacy=None):
        self.preset, self.epochs, self.batch_size, self.lr = preset, epochs, batch_size, lr
        self.weight_decay, self.layers, self.dim_t, self.n_timesteps = weight_decay, layers, dim_t, n_timesteps
        self.dropout, self.lr_schedule, self.cat_input = dropout, lr_schedule, cat_input
        self.device, self.amp, self.seed = device, amp, seed
        self.n_threads, self.steps = n_threads, steps
        self.privacy = privacy
        if steps is not None and (isinstance(steps, bool) or int(steps) != steps or steps < 1):
            raise BadOption(f"TabDDPM: steps must be a whole number >= 1 (or None), got {steps!r}")
        self.config  # fail fast on a bad preset or value

    # ------------------------------------------------------------- params
    def get_params(self, deep: bool = True) -> dict:
        names = ("preset", "epochs", "batch_size", "lr", "weight_decay", "layers", "dim_t", "n_timesteps",
                 "dropout", "lr_schedule", "cat_input", "device", "amp", "seed", "n_threads", "steps", "privacy")
        return {k: getattr(self, k) for k in names}

    def set_params(self, **params) -> "TabDDPM":
        for k, v in params.items():
            if k not in self.get_params():
                raise BadOption(f"TabDDPM: unknown parameter {k!r}")
            setattr(self, k, v)
        return self

    @property
    def config(self) -> TabDDPMConfig:
        """The preset with the non-None overrides applied, validated."""
        if self.preset not in PRESETS:
            raise BadOption(f"TabDDPM: unknown preset {self.preset!r} (use {', '.join(PRESETS)})")
        over = {f.name: getattr(self, f.name) for f in fields(TabDDPMConfig) if getattr(self, f.name) is not None}
        if "layers" in over:
            over["layers"] = tuple(int(w) for w in over["layers"])
        cfg = replace(PRESETS[self.preset], **over)
        for name in ("epochs", "batch_size", "dim_t", "n_timesteps"):
            if int(getattr(cfg, name)) < (0 if name == "epochs" else 1):
                raise BadOption(f"TabDDPM: {name} must be a positive integer, got {getattr(cfg, name)!r}")
        if not cfg.layers or min(cfg.layers) < 1:
            raise BadOption(f"TabDDPM: layers must be a non-empty tuple of positive widths, got {cfg.layers!r}")
        if not 0 <= cfg.dropout < 1:
            raise BadOption(f"TabDDPM: dropout must be in [0, 1), got {cfg.dropout!r}")
        if cfg.lr <= 0 or cfg.weight_decay < 0:
            raise BadOption(f"TabDDPM: lr must be > 0 and weight_decay >= 0, got {cfg.lr!r}, {cfg.weight_decay!r}")
        if cfg.lr_schedule not in LR_SCHEDULES:
            raise BadOption(f"TabDDPM: lr_schedule {cfg.lr_schedule!r} is not one of {', '.join(LR_SCHEDULES)}")
        if cfg.cat_input not in CAT_INPUTS:
            raise BadOption(f"TabDDPM: cat_input {cfg.cat_input!r} is not one of {', '.join(CAT_INPUTS)}")
        return cfg

    @property
    def privacy(self) -> dict | None:
        """The privacy settings as plain values (None: plain training); typed: :attr:`privacy_config`."""
        return self._privacy

    @privacy.setter
    def privacy(self, value) -> None:
        """Parsed once, here (a :class:`PrivacyConfig` is taken as checked); one-line MemvizError otherwise."""
        self.privacy_config = PrivacyConfig.parse(value)
        self._privacy = None if self.privacy_config is None else self.privacy_config.to_dict()

    def _resolve_device(self) -> torch.device:
        return resolve_device("auto" if self.device is None else self.device)

    def _autocast(self):
        if self.amp and self.device_.type == "cuda":
            return lambda: torch.autocast("cuda", dtype=torch.bfloat16)
        return None

    # -------------------------------------------------------------- build
    def _build(self, transform: TabularTransform, n_rows: int, fingerprint: int) -> None:
        cfg, dev = self.config, self._resolve_device()
        self.config_, self.device_, self.transform_ = cfg, dev, transform
        self.n_rows_, self.fingerprint_ = n_rows, fingerprint
        self.diffusion_ = MixedDiffusion(transform.n_num, transform.category_sizes, cfg.n_timesteps, dev, cfg.cat_input)
        init = torch.Generator().manual_seed(int(self.seed))
        self.model_ = MLPDenoiser(self.diffusion_.d_in, cfg.layers, cfg.dim_t, cfg.dropout, init).to(dev)
        self.optimizer_ = _adamw(self.model_.parameters(), cfg.lr, cfg.weight_decay)
        self._train_gen = torch.Generator(device=dev).manual_seed(int(self.seed) + 1)
        self.epoch_, self.step_, self.loss_history_ = 0, 0, []
        priv = self.privacy_config
        self._dp_gen, self._dp_plan, self.privacy_ = None, None, None
        if priv is not None:   # the Poisson draws and the noise: secret unless noise_seed is given
            seed = secrets.randbits(63) if priv.noise_seed is None else int(priv.noise_seed)
            self._dp_gen = torch.Generator(device=dev).manual_seed(seed)

    # ---------------------------------------------------------------- fit
    def fit(self, table: Table, callbacks=(), resume_state: dict | None = None) -> "TabDDPM":
        """Train for ``epochs`` epochs (or up to ``epochs`` when resuming); returns self.

        ``callbacks`` get ``on_fit_start(model)``, ``on_epoch_end(model, epoch, logs)``
        after every epoch (``logs``: ``loss``, ``loss_gauss``, ``loss_multi``, ``lr``;
        returning :data:`memviz.models.callbacks.STOP` ends training after that epoch) and
        ``on_fit_end(model)``. ``resume_state`` (from :meth:`state_dict`) continues a
        run bit-identically on the same table.
        """
        if not isinstance(table, Table):
            raise BadTable(f"TabDDPM: fit expects a memviz Table, got {type(table).__name__}")
        if len(table) < 2:
            raise BadTable(f"{table.source}: TabDDPM needs at least 2 rows, got {len(table)}")
        data = table.data.loc[:, list(table.schema.columns)]
        fingerprint = _fingerprint(data)
        if resume_state is not None:
            here = self._resolve_device().type
            if isinstance(resume_state, dict) and resume_state.get("device_type", here) != here:
                # random streams differ between CPU and CUDA: no bit-identical continuation
                raise BadRunFolder(f"TabDDPM: resume_state was trained on {resume_state['device_type']}, this "
                                   f"model runs on {here}; resume on the same kind of device")
            if isinstance(resume_state, dict) and not {"optimizer", "rng"} <= set(resume_state):
                raise BadRunFolder("TabDDPM: resume_state holds weights only (a sampling checkpoint); resuming "
                                   "training needs the full state_dict (optimizer and random state)")
            saved = (resume_state.get("params") or {}).get("privacy") if isinstance(resume_state, dict) else None
            if saved != self.privacy:
                raise BadRunFolder(f"TabDDPM: resume_state was trained with privacy={saved!r}, this model has "
                                   f"privacy={self.privacy!r}; resume with the same privacy settings")
            self.load_state_dict(resume_state)
            if list(self.transform_.columns) != list(table.schema.columns) or self.fingerprint_ != fingerprint:
                raise BadRunFolder(f"{table.source}: resume_state was trained on another table")
        else:
            self._build(self._fit_transform(data, table.schema), len(data), fingerprint)
        x_num, codes = self.transform_.transform(data)
        x_num = torch.from_numpy(x_num).to(self.device_)                             # [N, n_num]
        codes = torch.from_numpy(codes).to(self.device_)                             # [N, n_cat]
        callbacks = list(callbacks or ())
        if self._dp_gen is not None:
            if any(getattr(cb, "rows_left_out", None) is not None for cb in callbacks):
                raise BadOption("privacy: private training cannot leave rows out by a rule that reads them "
                                "(the dynamic threshold); use one or the other")
            n, bs, _, total, _ = self._budget(len(data))
            spent = self.transform_.privacy or {}
            self._dp_plan = with_preprocessing(privacy_plan(self.privacy_config, n, bs, total, amp=bool(self.amp)),
                                               spent.get("epsilon", 0.0), spent.get("delta", 0.0))
            self._set_privacy()
        for cb in callbacks:
            cb.on_fit_start(self)
        with self._cpu_threads():
            self._train(x_num, codes, callbacks)
        for cb in callbacks:
            cb.on_fit_end(self)
        return self

    def _fit_transform(self, data: pd.DataFrame, schema) -> TabularTransform:
        """The column transforms: on the rows as they are, or (private training) from public knowledge and
        OpenDP releases within the preprocessing's share of (ε, δ) (:mod:`memviz.models.dpstats`)."""
        priv = self.privacy_config
        if priv is None:
            return TabularTransform.fit(data, schema, seed=int(self.seed))

        n, bs, _, total, _ = self._budget(len(data))
        privacy_plan(priv, n, bs, total, amp=bool(self.amp))    # a training that cannot run: before any release
        eps_pre, delta_pre, _, _ = priv.split(len(data))
        bounds, categories = public_knowledge(schema, priv)
        return private_transform(data, schema, epsilon=eps_pre, delta=delta_pre, bounds=bounds, categories=categories)

    def _lr_at(self, step: int, total: int) -> float:
        cfg = self.config_
        return cfg.lr * (1 - step / total) if cfg.lr_schedule == "linear" and total else cfg.lr

    def _budget(self, n: int) -> tuple[int, int, int, int, int]:
        """``(N, B, steps per epoch, total steps S, epochs)`` of training on ``n`` rows."""
        cfg = self.config_ if hasattr(self, "config_") else self.config
        bs = min(cfg.batch_size, n)
        steps = math.ceil(n / bs)
        total = cfg.epochs * steps if self.steps is None else int(self.steps)
        epochs = cfg.epochs if self.steps is None else math.ceil(total / steps)
        return n, bs, steps, total, epochs

    def _train(self, x_num: torch.Tensor, codes: torch.Tensor, callbacks) -> None:
        gen, opt, model = self._train_gen, self.optimizer_, self.model_
        n, bs, steps, total, epochs = self._budget(codes.shape[0])
        autocast = self._autocast()
        leave_out = [f for cb in callbacks if (f := getattr(cb, "rows_left_out", None)) is not None]
        dp = DPSGD(model, opt, self._dp_plan, self._dp_gen) if self._dp_plan is not None else None
        model.train()
        try:
            while self.epoch_ < epochs if self.steps is None or not leave_out else self.step_ < total:
                out = rows_left_out(leave_out, self, self.epoch_ + 1, n)
                if dp is not None or out is None:                                    # (DP: Poisson batches)
                    perm = None if dp is not None else torch.randperm(n, generator=gen, device=self.device_)
                    n_epoch = steps
                else:                                                                # the kept rows, shuffled
                    kept = torch.from_numpy(np.setdiff1d(np.arange(n), out)).to(self.device_)
                    perm = kept[torch.randperm(kept.numel(), generator=gen, device=self.device_)]
                    n_epoch = math.ceil(kept.numel() / bs)
                acc = torch.zeros(3, device=self.device_)
                seen = 0
                for s in range(n_epoch):
                    if self.step_ >= total:                                          # a steps budget ends here
                        break
                    lr = self._lr_at(self.step_, total)
                    for group in opt.param_groups:
                        group["lr"] = lr
                    if dp is not None:                                               # a Poisson batch
                        idx = dp.batch(n, self.device_)
                        loss, l_gauss, l_multi = dp.step(lambda: self.diffusion_.loss(
                            model, x_num[idx], codes[idx], gen, gen, autocast, per_row=True), idx.numel())
                    else:
                        idx = perm[s * bs:(s + 1) * bs]                              # [B]
                        loss, l_gauss, l_multi = self.diffusion_.loss(model, x_num[idx], codes[idx], gen, gen,
                                                                      autocast)
                        opt.zero_grad(set_to_none=True)
                        loss.backward()
                        opt.step()
                    acc += torch.stack([loss.detach(), l_gauss, l_multi]) * idx.shape[0]
                    seen += idx.shape[0]
                    self.step_ += 1
                loss, l_gauss, l_multi = (acc / max(seen, 1)).tolist()               # one sync per epoch
                self.epoch_ += 1
                self.loss_history_.append(loss)
                logs = {"loss": loss, "loss_gauss": l_gauss, "loss_multi": l_multi, "lr": lr}
                replies = [cb.on_epoch_end(self, self.epoch_, logs) for cb in callbacks]
                model.train()
                if STOP in replies:
                    break
        finally:
            if dp is not None:
                dp.close()
                self._set_privacy()

    def _set_privacy(self) -> None:
        """``privacy_``: the plan and the ε spent after the steps taken (None without privacy)."""
        if self._dp_plan is None:
            return
        self.privacy_ = {**self._dp_plan.to_dict(), "steps_taken": int(self.step_),
                         **guarantee(self._dp_plan, self.step_),
                         "preprocessing": dict(self.transform_.privacy or {})}

    def check_privacy(self, n_rows: int, schema=None) -> None:
        """A privacy setting that cannot train on ``n_rows`` rows is a one-line MemvizError, before any work
        (with the table's ``schema``: also a column whose statistics could never be released privately,
        :func:`memviz.models.dpstats.check_releasable`)."""
        priv = self.privacy_config
        if priv is not None:
            n, bs, _, total, _ = self._budget(int(n_rows))
            privacy_plan(priv, n, bs, total, amp=bool(self.amp))
            if schema is not None:
                eps_pre, delta_pre, _, _ = priv.split(int(n_rows))
                bounds, categories = public_knowledge(schema, priv)
                check_releasable(schema, int(n_rows), epsilon=eps_pre, delta=delta_pre, bounds=bounds,
                                 categories=categories)

    def epsilon_at(self, epoch: int) -> float | None:
        """The ε spent by the end of epoch ``epoch`` of this fit (None without privacy): what a
        table sampled from that epoch's weights is private to."""
        if self._dp_plan is None:
            return None
        _, _, steps, total, _ = self._budget(int(self.n_rows_))
        return epsilon_spent(self._dp_plan, min(int(epoch) * steps, total))

    # ------------------------------------------------------------- sample
    def sample(self, n: int, seed: int | None = None, batch_size: int | None = None) -> pd.DataFrame:
        """``n`` synthetic rows with ``table.schema.columns``, original dtypes and categories.

        The same ``seed`` (and ``batch_size``, device kind) gives the same rows; ``seed=None``
        draws a fresh one. All steps run on the model's device; only the final rows
        are copied to the host. The global torch RNG is never used. ``batch_size``
        (rows denoised together) defaults to 10,000 on CPU and 65,536 on CUDA, where
        every one of the T steps costs kernel launches whatever the batch.
        """
        self._check_fitted()
        if batch_size is None:
            batch_size = 65_536 if self.device_.type == "cuda" else 10_000
        n = int(n)
        if n < 0 or batch_size < 1:
            raise BadOption(f"TabDDPM: sample needs n >= 0 and batch_size >= 1, got {n}, {batch_size}")
        seed = secrets.randbits(63) if seed is None else int(seed)
        gen = torch.Generator(device=self.device_).manual_seed(seed)
        was_training = self.model_.training
        self.model_.eval()
        nums, cats = [], []
        try:
            with self._cpu_threads():
                for start in range(0, n, batch_size):
                    x, c = self.diffusion_.sample(self.model_, min(batch_size, n - start), gen, self._autocast())
                    nums.append(x)
                    cats.append(c)
        finally:
            self.model_.train(was_training)
        d = self.diffusion_
        x = torch.cat(nums).cpu().numpy() if nums else torch.zeros(0, d.n_num).numpy()
        c = torch.cat(cats).cpu().numpy() if cats else torch.zeros(0, d.n_cat, dtype=torch.long).numpy()
        return self.transform_.inverse(x, c)

    def cpu_threads(self) -> int | None:
        """torch CPU threads this model's fit and sample use (``n_threads``; else 1 for a network
        under :data:`SMALL_NETWORK` parameters, the job's share of the cores for a larger one);
        None: torch's setting (or not on a CPU)."""
        if getattr(self, "device_", None) is not None and self.device_.type != "cpu":
            return None
        n = self.n_threads
        if n is None and getattr(self, "model_", None) is not None:
            size = sum(p.numel() for p in self.model_.parameters())
            n = 1 if size < SMALL_NETWORK else shared_cpu_threads()   # None: torch's setting
        return n

    def _cpu_threads(self):
        """Context setting torch's CPU threads for this model's work (see ``n_threads``)."""
        return torch_threads(self.cpu_threads())

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise BadOption("TabDDPM: the model is not fitted (call fit or load_state_dict first)")

    # -------------------------------------------------------------- state
    def state_dict(self) -> dict:
        """Everything needed to continue training bit-identically or to sample.

        Tensors (on the CPU) and JSON-able Python containers only: store with
        ``torch.save``, read with ``torch.load(path, weights_only=True)``.
        """
        self._check_fitted()
        self._set_privacy()
        return {
            "format": STATE_FORMAT,
            "params": {**_plain_params(self.get_params()), "config": _plain_params(asdict(self.config_))},
            "epoch": self.epoch_, "step": self.step_, "loss_history": list(self.loss_history_),
            "n_rows": self.n_rows_, "fingerprint": self.fingerprint_,
            "device_type": self.device_.type,
            "transform": self.transform_.to_state(),
            "model": {k: v.detach().cpu().clone() for k, v in self.model_.state_dict().items()},
            "optimizer": _to_cpu(self.optimizer_.state_dict()),
            "rng": {"train": self._train_gen.get_state().clone(),
                    **({"dp": self._dp_gen.get_state().clone()} if self._dp_gen is not None else {})},
            **({"privacy": dict(self.privacy_)} if self.privacy_ is not None else {}),
        }

    def load_state_dict(self, state: dict) -> "TabDDPM":
        """Restore a fitted model from :meth:`state_dict` (same architecture params); returns self.

        A state without ``optimizer`` and ``rng`` (a check's sampling checkpoint) restores
        the weights for sampling; :meth:`fit` refuses to resume from it.

        The weights load onto any device (a model trained on a GPU samples on a laptop);
        the training random stream is restored only on the same kind of device, which
        is what a bit-identical resume (``fit(resume_state=...)``) requires.
        """
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise BadRunFolder(f"TabDDPM: not a TabDDPM state (expected format {STATE_FORMAT!r})")
        saved, cfg = state["params"]["config"], self.config
        for name in _ARCH:
            if _plain_params({name: getattr(cfg, name)})[name] != saved[name]:
                raise BadRunFolder(f"TabDDPM: state has {name}={saved[name]!r}, this model {getattr(cfg, name)!r}")
        self._build(TabularTransform.from_state(state["transform"]), int(state["n_rows"]), int(state["fingerprint"]))
        self.model_.load_state_dict(state["model"])
        if "optimizer" in state:  # a check's sampling checkpoint has none (memviz.warmup.checkpoints)
            self.optimizer_.load_state_dict(state["optimizer"])   # casts the moments to the parameters' device
        if state["device_type"] == self.device_.type and "rng" in state:
            self._train_gen.set_state(state["rng"]["train"].cpu())
            if self._dp_gen is not None and "dp" in state["rng"]:
                self._dp_gen.set_state(state["rng"]["dp"].cpu())
        if state.get("privacy") is not None:
            self.privacy_ = dict(state["privacy"])
        self.epoch_, self.step_ = int(state["epoch"]), int(state["step"])
        self.loss_history_ = [float(v) for v in state["loss_history"]]
        return self

    @classmethod
    def from_state_dict(cls, state: dict, device: str = "auto", amp: bool = False) -> "TabDDPM":
        """A fitted TabDDPM built with the parameters saved in ``state``."""
        p = dict(state["params"])
        p.update(p.pop("config"), device=device, amp=amp)   # the resolved values, not today's preset
        p["layers"] = tuple(p["layers"])
        return cls(**p).load_state_dict(state)


def public_knowledge(schema, privacy: PrivacyConfig) -> tuple[dict, dict]:
    """``(bounds, categories)`` taken as public: the schema's ``"public": {"bounds": {column: [low, high]},
    "categories": {column: [value, ...]}}`` (meta.json), overridden column by column by the privacy settings'."""
    public = schema.extra.get("public") or {}
    if not isinstance(public, dict) or set(public) - {"bounds", "categories"}:
        raise BadTable(f"{schema.name or 'schema'}: 'public' must be {{\"bounds\": {{...}}, \"categories\": {{...}}}}")
    given_bounds = public_bounds(public.get("bounds") or {})           # checked as the privacy settings' are
    given_categories = public_categories(public.get("categories") or {})
    bounds = {c: (lo, hi) for c, lo, hi in (*given_bounds, *privacy.bounds)}
    categories = {c: list(v) for c, v in (*given_categories, *privacy.categories)}
    return bounds, categories


def _adamw(params, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW, fused (one kernel per step) where this torch build and device support it."""
    params = list(params)
    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)


def _plain(v):
    """A parameter value as JSON-able Python (tuples as lists, numpy scalars, devices as str)."""
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, torch.device):
        return str(v)
    return v


def _plain_params(d: dict) -> dict:
    return {k: _plain(v) for k, v in d.items()}


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_cpu(v) for v in obj]
    return obj


def _fingerprint(data: pd.DataFrame) -> int:
    """A 63-bit hash of the training rows (values and row_ids), to refuse resuming on another table."""
    h = pd.util.hash_pandas_object(data, index=True).to_numpy()
    return int((h.sum(dtype="uint64") ^ len(h)) & ((1 << 63) - 1))
