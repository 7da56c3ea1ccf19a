"""How big a study run is, and the published figures it is compared with."""
from __future__ import annotations

from dataclasses import dataclass, field

#: Published figures (TabCutMix paper Table 1 and 9; full scale on a GPU, mean of 5 runs), in %.
REFERENCE = {
    "adult": {"tabddpm_mem": 31.01, "tabcutmix_mem": 27.55, "tabcutmixplus_mem": 26.10, "mle": 91.09,
              "shape": 98.84, "trend": 97.78, "ctgan_mem": 21.68, "tvae_mem": 30.78},
    "default": {"tabddpm_mem": 19.33, "tabcutmix_mem": 16.76, "tabcutmixplus_mem": 18.00, "mle": 76.79,
                "shape": 97.58, "trend": 94.46, "ctgan_mem": 12.83, "tvae_mem": 17.22},
    "shoppers": {"tabddpm_mem": 31.37, "tabcutmix_mem": 25.56, "tabcutmixplus_mem": 28.51, "mle": 92.17,
                 "shape": 97.08, "trend": 92.92, "ctgan_mem": 19.80, "tvae_mem": 23.17},
}

#: the mitigation methods the study asks for, in display order; a name the installed
#: :mod:`memviz.compare.methods` does not know yet is left out of the grid (and said so)
STUDY_METHODS = ("baseline", "dynamiccut", "dynamiccut_excess", "dynamiccutmix", "tabcutmix", "tabcutmixplus",
                 "smote", "smote_nc", "random")


@dataclass(frozen=True)
class StudyScale:
    """How big one study run is.

    Parameters
    ----------
    name : the scale's name (``tiny``, ``cpu``, ``regime``, ``paper``).
    max_train, max_test : training rows subsampled from the official training split (seed 0)
        and test rows from the test split (seed 1); None: all. The test rows are the floor's
        hold-out and the MLE's test set.
    preset : TabDDPM preset of the warm-ups and the cells.
    epochs : TabDDPM epochs (warm-up and cells); None: the preset's.
    warmup_samples : generated rows per warm-up check (None: as many as training rows).
    seeds : cell seeds; seed s is also the seed of the warm-up whose ranking prunes it, so
        the ranking's own variation enters every paired test.
    methods : TabDDPM methods of the grid (names of :data:`STUDY_METHODS`).
    early_methods : methods run again with T = the first quarter (``T_fracs[0]``).
    stop_methods : methods of the ``stop`` grid (``early_stop``: retrained to the warm-up's
        recommended epoch, :func:`memviz.warmup.frontier.recommend`; fewer optimiser steps by design).
    private_methods : methods of the ``private`` grid (issue 38): DP-SGD arms (``dp@ε``) and the dynamic
        threshold, which need no warm-up; at the baseline's optimiser steps, compared with the ``main``
        grid's baseline (and DynamicCut, random pruning) of the same seed.
    transfer_models, transfer_methods : other generators pruned with TabDDPM's ranking.
    transfer_datasets : the datasets of the transfer grid (None: all).
    method_datasets : {method: datasets} for methods run on some datasets only (others: all).
    model_epochs : {model: epochs} for the transfer models (None: each model's CPU preset).
    tabddpm_params : further TabDDPM parameters (warm-up and cells).
    p, k : DynamicCut's share and top-k.
    T_fracs : (quarter, half): T = the last check epoch at or below each share of the epochs.
    null_replicates : replicates of the null model (:func:`memviz.dynamics.nullmodel.compare_to_null`).
    knobs : (training rows, epochs) runs of TabDDPM for the memorization-vs-knob table.
    knob_seeds : seeds of the knob runs.
    knob_samples : generated rows per knob run.
    budget_dataset, budget_runs : (model, epochs) runs measuring MLE against the real line.
    datasets : the datasets this scale runs on (None: every dataset the study is given).
    """

    name: str
    max_train: int | None
    max_test: int | None
    preset: str
    epochs: int | None
    seeds: tuple
    warmup_samples: int | None = None
    methods: tuple = STUDY_METHODS
    early_methods: tuple = ("dynamiccut",)
    stop_methods: tuple = ()
    private_methods: tuple = ()
    transfer_models: tuple = ()
    transfer_methods: tuple = ("baseline", "dynamiccut", "random")
    transfer_datasets: tuple | None = None
    method_datasets: dict = field(default_factory=dict)
    model_epochs: dict = field(default_factory=dict)
    tabddpm_params: dict = field(default_factory=dict)
    p: float = 0.10
    k: int = 3
    T_fracs: tuple = (0.25, 0.5)
    null_replicates: int = 200
    knobs: tuple = ()
    knob_seeds: tuple = (0,)
    knob_samples: int = 2000
    budget_dataset: str | None = None
    budget_runs: tuple = ()
    datasets: tuple | None = None


_TINY_DDPM = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}
SCALES = {
    "tiny": StudyScale("tiny", 200, 100, "cpu-quick", 8, (0, 1),
                       methods=("baseline", "dynamiccut", "dynamiccut_excess", "random"),
                       early_methods=(), stop_methods=("early_stop",), tabddpm_params=_TINY_DDPM, null_replicates=40, knobs=((60, 4),),
                       knob_samples=100, budget_dataset="shoppers", budget_runs=(("tabddpm", 2),)),
    # the first edition's scale: 3,000 rows, the cpu-quick preset's 200 epochs
    # (every method, TabCutMixPlus with the dtype rule on default only, where the two rules' clusters
    # differ; TVAE transfer on adult only, for the CPU budget)
    "cpu": StudyScale("cpu", 3000, 5000, "cpu-quick", None, (0, 1, 2, 3, 4), transfer_models=("tvae",),
                      transfer_datasets=("adult",), early_methods=("dynamiccut",),
                      methods=STUDY_METHODS[:6] + ("tabcutmixplus_dtype",) + STUDY_METHODS[6:],
                      method_datasets={"tabcutmixplus_dtype": ("default",)},
                      budget_dataset="adult",
                      budget_runs=(("ctgan", 30), ("ctgan", 100), ("ctgan", 300), ("tvae", 50), ("tvae", 200))),
    # where TabDDPM memorizes clearly above the floor on 2 CPU cores (the knob table of docs/study.md):
    # 250 rows, 4,000 epochs (the baseline's 4,000 steps: the batch of 256 holds every row; every arm
    # trains the baseline's steps but early stop, whose point is fewer)
    # (SMOTE-NC and TabCutMixPlus with the reference's dtype rule on adult only: the CPU budget)
    "regime": StudyScale("regime", 250, 5000, "cpu-quick", 4000, (0, 1, 2, 3, 4), warmup_samples=2000,
                         methods=STUDY_METHODS[:6] + ("tabcutmixplus_dtype",) + STUDY_METHODS[6:],
                         early_methods=("dynamiccut",), stop_methods=("early_stop",),
                         method_datasets={"smote_nc": ("adult",), "tabcutmixplus_dtype": ("adult",),
                                          "early_stop": ("adult",)},
                         knobs=((250, 1000), (250, 2000), (250, 4000), (500, 2000), (1000, 1000)),
                         knob_seeds=(0, 1)),
    # the third edition's confirmatory test (prepared, run by a later session): the pilot's setting where
    # TabDDPM copies clearly above the floor at the largest training size that two CPU cores can afford for
    # 10 seeds; baseline / DynamicCut / random / DynamicCutMix, every arm the baseline's optimiser steps;
    # the pilot's seeds 0-1 are its warm-ups 0-1 (same settings: copy their folders to reuse them)
    "mid": StudyScale("mid", 1000, 5000, "cpu-quick", 4000, tuple(range(10)), warmup_samples=2000,
                      methods=("baseline", "dynamiccut", "random", "dynamiccutmix"), early_methods=(),
                      datasets=("adult",), private_methods=("dp@1", "dp@10", "dynamic_threshold")),
    # the same test at the largest training size of the pilot (3,000 rows x 4,000 epochs: excess +13.0 and
    # +11.6 points at the last check of seeds 0 and 1, clearly above the floor; 48,000 steps an arm), prepared
    # for a later session: about 27 CPU-minutes a seed on one core (docs/study/notes/8_costs.md)
    "large": StudyScale("large", 3000, 5000, "cpu-quick", 4000, tuple(range(10)), warmup_samples=2000,
                        methods=("baseline", "dynamiccut", "random", "dynamiccutmix"), early_methods=(),
                        datasets=("adult",)),
    # issue 52 (why these rows): the regime's settings (its warm-ups 0-4 reproduce the regime's) with 10 seeds on
    # three tables; baseline / DynamicCut / random pruning / the isolation cut (no warm-up), every arm the
    # baseline's optimiser steps; its own analysis of the rows: memviz.study.why
    "why": StudyScale("why", 250, 5000, "cpu-quick", 4000, tuple(range(10)), warmup_samples=2000,
                      methods=("baseline", "dynamiccut", "random", "isolation"), early_methods=()),
    "paper": StudyScale("paper", None, None, "paper", None, (0, 1, 2, 3, 4), transfer_models=("tvae",)),
}
