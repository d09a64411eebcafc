"""Per-question outputs from other harnesses, scored by the project's own scoring core into ingestion's table:
one module per source (table.py: the per-question table and the reading of files; vlmevalkit.py: VLMEvalKit's
prediction files, mapped to that table) beside the one mapping of a table into ingestion's (mapping.py).

The names below are read from their modules when first asked for (PEP 562): a report of lmms-eval logs alone needs
none of them, and importing them imports the scoring core and Arrow's CSV and JSON readers (0.05 s a run).
cache.py hashes the code of every module of this folder, imported or not."""

from importlib import import_module

_HOMES = {
    "mapping": ("LMMS_EVAL", "ImportSource", "MixedSourcesError", "combine", "import_outputs", "imported_files",
                "sources_of_models"),
    "table": ("ANSWER_COLUMNS", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "TABLE_FIELDS", "ImportFormatError",
              "read_file"),
    "vlmevalkit": ("VLMEVALKIT_DATASETS", "split_vlmevalkit_name", "vlmevalkit_table"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = ["ANSWER_COLUMNS", "LMMS_EVAL", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "TABLE_FIELDS", "VLMEVALKIT_DATASETS",
           "ImportFormatError", "ImportSource", "MixedSourcesError", "combine", "import_outputs", "imported_files",
           "read_file", "sources_of_models", "split_vlmevalkit_name", "vlmevalkit_table"]


def __getattr__(name: str):
    if name in _MODULE_OF:
        value = getattr(import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
        globals()[name] = value
        return value
    if name in ("audit", "mapping", "table", "vlmevalkit"):
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULE_OF, "audit", "mapping", "table", "vlmevalkit"])
