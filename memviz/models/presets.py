"""TabDDPM's hyper-parameter presets (no torch here: the CLI lists them without loading it)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TabDDPMConfig:
    """Hyper-parameters of one preset (every field can be overridden in :class:`TabDDPM`).

    Parameters
    ----------
    epochs : int
        Passes over the training rows.
    batch_size : int
        Rows per optimisation step (capped at the number of rows).
    lr, weight_decay : float
        AdamW learning rate and decoupled weight decay.
    layers : tuple of int
        Hidden widths of the denoiser MLP.
    dim_t : int
        ``d0``: width of the input projection and of the time embedding.
    n_timesteps : int
        ``T``, diffusion steps (training and sampling).
    dropout : float
        Dropout after every hidden ReLU.
    lr_schedule : {"linear", "constant"}
        Linear decay to 0 over ``epochs`` (reference) or a constant rate.
    cat_input : {"log-onehot", "onehot"}
        Network input for the categorical part of ``x_t`` (see
        :class:`memviz.models.diffusion.MixedDiffusion`); the reference uses log-one-hot.
    """

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    layers: tuple
    dim_t: int
    n_timesteps: int
    dropout: float = 0.0
    lr_schedule: str = "linear"
    cat_input: str = "log-onehot"


PRESETS = {
    # Tuned on the 3,000-row Adult sample (sample_data) for a 2-core CPU: a 0.2 M-parameter
    # MLP, T = 50, one-hot categorical input (the reference's log-one-hot input stalls the
    # numerical part of so small a network: Shape 0.70 instead of 0.95 after 150 epochs).
    # Measured Shape / Trend / seconds: see TabDDPM's docstring.
    "cpu-quick": TabDDPMConfig(epochs=200, batch_size=256, lr=2e-3, weight_decay=0.0,
                               layers=(256, 256, 256), dim_t=128, n_timesteps=50, cat_input="onehot"),
    # The reference Adult configuration (TabDDPM's tuned config, used by the TabCutMix
    # code): 100,000 steps at batch 4096 = 12,500 epochs of Adult's 32,561 rows
    # (8 batches each); weight decay 0.0 as in that config. For Default (15,000 steps,
    # 27,000 rows, 7 batches) use epochs=2143. Needs a GPU.
    "paper": TabDDPMConfig(epochs=12_500, batch_size=4096, lr=0.001809824563637657, weight_decay=0.0,
                           layers=(1024, 2048, 2048, 1024), dim_t=1024, n_timesteps=1000),
}
