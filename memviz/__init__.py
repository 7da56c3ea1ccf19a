"""memviz: which training rows a tabular generative model memorizes, when, and what removing them costs."""
from memviz.auditing.build import audit
from memviz.auditing.result import Audit
from memviz.errors import DataError, MemvizError, RunError
from memviz.io import VERSION as __version__
from memviz.tables.data import (
           Table,
           infer_schema,
           load_dataset,
           load_table,
           sample_data_dir,
           table_from_frame,
)
from memviz.tables.schema import Schema

__all__ = ["DataError", "MemvizError", "RunError", "Schema", "Table", "load_table", "load_dataset",
           "table_from_frame", "infer_schema", "sample_data_dir", "__version__", "audit", "Audit"]
