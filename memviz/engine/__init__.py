"""Engine: the one exact nearest-neighbour engine (:class:`memviz.engine.neighbors.NeighborEngine`)
behind every distance memviz reports: its pruned, wide and dense searches, its memory guard
(budget) and its Dask form (distributed)."""

from typing import Literal, get_args

#: a distance of the engine (:mod:`memviz.engine.neighbors` defines them): the papers' (numbers rescaled for
#: each generated row) or the standardized one (each number divided by its column's training range)
Distance = Literal["paper", "standardized"]
#: the engine's distances, in that order; here, so that a caller that only names one (a command's help, a
#: config's check) loads no torch
DISTANCES: tuple[Distance, ...] = get_args(Distance)
