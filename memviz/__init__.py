"""memviz: which training rows a tabular generative model memorizes, when, and what removing them costs."""
from .errors import DataError, MemvizError, RunError
from .schema import Schema
from .data import Table, load_table, load_dataset, table_from_frame, infer_schema, sample_data_dir

__version__ = "0.1.0"

__all__ = ["DataError", "MemvizError", "RunError", "Schema", "Table", "load_table", "load_dataset",
           "table_from_frame", "infer_schema", "sample_data_dir", "__version__"]
