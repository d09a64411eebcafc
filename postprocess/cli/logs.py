"""The options every command that reads logs shares, and reading the logs they name."""

from __future__ import annotations

import argparse
from pathlib import Path


def _model_map(items: list[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        path, separator, key = item.rpartition("=")
        if not separator or not path or not key:
            raise argparse.ArgumentTypeError(f"--model-map expects PATH=KEY, got {item!r}")
        overrides[path] = key
    return overrides


def add_log_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """The options that say which logs to read and how their models map to the registry."""
    parser.add_argument("--logs", nargs="+", required=required, type=Path, metavar="DIR", help="lmms-eval output folders")
    parser.add_argument("--model-map", nargs="+", default=[], metavar="PATH=KEY",
                        help="map a model path in results.json to a registry key")
    parser.add_argument("--extra-models", nargs="+", default=[], type=Path, metavar="YAML",
                        help="registry YAML files adding models to model_configs/models.yaml")
    parser.add_argument("--skip-unknown-models", action="store_true",
                        help="skip (and report) runs whose model matches no registry entry instead of failing")
    parser.add_argument("--cache-dir", type=Path, help="reuse / store the ingested table here")
    parser.add_argument("--progress", action="store_true", help="show a progress bar while reading logs")


def read_logs(args: argparse.Namespace):
    """(registry, IngestResult) for the log options of add_log_arguments."""
    from model_configs import load_registry
    from postprocess.logs.cache import load_or_ingest
    from postprocess.logs.ingest import ingest_logs

    registry = load_registry(extra=args.extra_models)
    options = {"model_overrides": _model_map(args.model_map), "strict": not args.skip_unknown_models,
               "progress": args.progress}
    if args.cache_dir:
        return registry, load_or_ingest(args.logs, args.cache_dir, registry, **options)
    return registry, ingest_logs(args.logs, registry, **options)
