"""How big a study run is, and the published figures it is compared with."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..compare.methods import METHODS

#: Published figures (TabCutMix paper Table 1 and 9; full scale on a GPU, mean of 5 runs), in %.
REFERENCE = {
    "adult": {"tabddpm_mem": 31.01, "tabcutmix_mem": 27.55, "tabcutmixplus_mem": 26.10, "mle": 91.09,
              "shape": 98.84, "trend": 97.78, "ctgan_mem": 21.68, "tvae_mem": 30.78},
    "default": {"tabddpm_mem": 19.33, "tabcutmix_mem": 16.76, "tabcutmixplus_mem": 18.00, "mle": 76.79,
                "shape": 97.58, "trend": 94.46, "ctgan_mem": 12.83, "tvae_mem": 17.22},
    "shoppers": {"tabddpm_mem": 31.37, "tabcutmix_mem": 25.56, "tabcutmixplus_mem": 28.51, "mle": 92.17,
                 "shape": 97.08, "trend": 92.92, "ctgan_mem": 19.80, "tvae_mem": 23.17},
}


@dataclass(frozen=True)
class StudyScale:
    """How big one study run is."""

    name: str
    max_train: int | None
    max_test: int | None
    preset: str
    warmup_epochs: int | None
    check_every: int | None
    seeds: tuple
    models: tuple = ("tabddpm", "ctgan", "tvae")
    methods: tuple = METHODS
    model_epochs: int | None = None          # None: each model's preset
    model_params: dict = field(default_factory=dict)   # {model: {param: value}}
    p: float = 0.10
    k: int = 3
    T_fracs: tuple = (0.1, 0.25, 0.5, 1.0)


_TINY_DDPM = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}
SCALES = {
    "tiny": StudyScale("tiny", 200, 100, "cpu-quick", 6, 2, (0,), models=("tabddpm", "tvae"),
                       methods=("baseline", "dynamiccut", "random"), model_epochs=2,
                       model_params={"tabddpm": _TINY_DDPM}),
    "cpu": StudyScale("cpu", 3000, 1000, "cpu-quick", None, None, (0, 1, 2)),
    "paper": StudyScale("paper", None, None, "paper", None, None, (0, 1, 2, 3, 4)),
}
