"""Engine: the one exact nearest-neighbour engine (:class:`memviz.engine.neighbors.NeighborEngine`)
behind every distance memviz reports: its pruned, wide and dense searches, its memory guard
(budget) and its Dask form (distributed)."""

#: the engine's distances (:mod:`memviz.engine.neighbors` defines them); here, so that a caller that only
#: names one (a command's help, a config's check) loads no torch
DISTANCES = ("paper", "standardized")
