"""Per-question outputs from other harnesses, scored by the project's own scoring core into ingestion's table:
one module per source (table.py: the per-question table and the reading of files; vlmevalkit.py: VLMEvalKit's
prediction files, mapped to that table) beside the one mapping of a table into ingestion's (mapping.py)."""

from postprocess.logs.imports import audit, mapping, table, vlmevalkit  # noqa: F401 (cache.py hashes their code)
from postprocess.logs.imports.mapping import (
                                              LMMS_EVAL,
                                              ImportSource,
                                              MixedSourcesError,
                                              combine,
                                              import_outputs,
                                              imported_files,
                                              sources_of_models,
)
from postprocess.logs.imports.table import (
                                              ANSWER_COLUMNS,
                                              OPTIONAL_COLUMNS,
                                              REQUIRED_COLUMNS,
                                              TABLE_FIELDS,
                                              ImportFormatError,
                                              read_file,
)
from postprocess.logs.imports.vlmevalkit import (
                                              VLMEVALKIT_DATASETS,
                                              split_vlmevalkit_name,
                                              vlmevalkit_table,
)

__all__ = ["ANSWER_COLUMNS", "LMMS_EVAL", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "TABLE_FIELDS", "VLMEVALKIT_DATASETS",
           "ImportFormatError", "ImportSource", "MixedSourcesError", "combine", "import_outputs", "imported_files",
           "read_file", "sources_of_models", "split_vlmevalkit_name", "vlmevalkit_table"]
