"""Engine: the one exact nearest-neighbour engine (:class:`memviz.engine.neighbors.NeighborEngine`)
behind every distance memviz reports: its pruned, wide and dense searches, its memory guard
(budget) and its Dask form (distributed)."""
