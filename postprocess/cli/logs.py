"""The options every command that reads logs shares, and reading the logs they name."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _model_map(items: list[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        path, separator, key = item.rpartition("=")
        if not separator or not path or not key:
            raise argparse.ArgumentTypeError(f"--model-map expects PATH=KEY, got {item!r}")
        overrides[path] = key
    return overrides


def add_log_arguments(parser: argparse.ArgumentParser, required: bool = True, judge_option: bool = True) -> None:
    """The options that say which logs to read and how their models map to the registry (and, with
    judge_option, whether the judge's adjudications count)."""
    parser.add_argument("--logs", nargs="+", required=required, type=Path, metavar="DIR", help="lmms-eval output folders")
    parser.add_argument("--model-map", nargs="+", default=[], metavar="PATH=KEY",
                        help="map a model path in results.json to a registry key")
    parser.add_argument("--extra-models", nargs="+", default=[], type=Path, metavar="YAML",
                        help="registry YAML files adding models to model_configs/models.yaml")
    parser.add_argument("--skip-unknown-models", action="store_true",
                        help="skip (and report) runs whose model matches no registry entry instead of failing")
    parser.add_argument("--cache-dir", type=Path, help="reuse / store the ingested table here")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on long steps (default: when stderr is a terminal)")
    if judge_option:
        parser.add_argument("--no-judge", action="store_true",
                            help="score as the extraction rules alone do: ignore the adjudications beside the logs "
                                 "and count the answers a judge settled during the run as unparsed")


def show_progress(args: argparse.Namespace) -> bool:
    """--progress / --no-progress, else whether stderr is a terminal (no bars in CI logs or pipes)."""
    return sys.stderr.isatty() if args.progress is None else args.progress


def read_logs(args: argparse.Namespace):
    """(registry, IngestResult) for the log options of add_log_arguments, with the judge's adjudications
    kept beside the logs merged into the table (postprocess/logs/adjudications.py), or with --no-judge
    every answer a judge settled unparsed again."""
    registry, result, _ = read_judged_logs(args)
    return registry, result


def read_judged_logs(args: argparse.Namespace):
    """read_logs, with the merge's account of each adjudication (None with --no-judge)."""
    from dataclasses import replace

    from postprocess.logs.adjudications import apply_adjudications, rules_only

    registry, result = ingest(args)
    if args.no_judge:
        return registry, replace(result, table=rules_only(result.table)), None
    merged = apply_adjudications(result.table, args.logs)
    return registry, replace(result, table=merged.table), merged


def ingest(args: argparse.Namespace):
    """(registry, IngestResult) of the logs as lmms-eval wrote them (answers settled during the run included)."""
    from model_configs import load_registry
    from postprocess.logs.cache import load_or_ingest
    from postprocess.logs.ingest import ingest_logs

    registry = load_registry(extra=args.extra_models)
    options = {"model_overrides": _model_map(args.model_map), "strict": not args.skip_unknown_models,
               "progress": show_progress(args)}
    if args.cache_dir:
        return registry, load_or_ingest(args.logs, args.cache_dir, registry, **options)
    return registry, ingest_logs(args.logs, registry, **options)
