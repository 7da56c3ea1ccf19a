"""Small shared settings for the tests (import as ``from helpers import ...``)."""

#: a TabDDPM that trains in well under a second per epoch on a few hundred rows
TINY_MODEL = {"layers": [32, 32], "n_timesteps": 10, "dim_t": 16, "batch_size": 64}
