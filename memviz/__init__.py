"""memviz: which training rows a tabular generative model memorizes, when, and what removing them costs.

The face is lazy (:mod:`memviz.faces`): ``import memviz`` loads none of numpy, pandas or torch; each name
below is imported the first time it is read.
"""
from memviz.errors import BadTable, MemvizError, BadRunFolder
from memviz.faces import lazy_face

__getattr__, __dir__ = lazy_face(__name__, {
    "__version__": "memviz.io:VERSION",
    "audit": "memviz.auditing.result", "Audit": "memviz.auditing.result", "Schema": "memviz.tables.schema",
    "Table": "memviz.tables.data", "load_table": "memviz.tables.data", "load_dataset": "memviz.tables.data",
    "table_from_frame": "memviz.tables.data", "sample_data_dir": "memviz.tables.data",
    "infer_schema": "memviz.tables.infer"})

__all__ = ["BadTable", "MemvizError", "BadRunFolder", "Schema", "Table", "load_table", "load_dataset",
           "table_from_frame", "infer_schema", "sample_data_dir", "__version__", "audit", "Audit"]
