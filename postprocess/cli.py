"""Command line: `python -m postprocess report --logs DIR [DIR ...] --out OUT [options]`.

Reads lmms-eval logs (through the Parquet cache when --cache-dir is given), runs the analysis and
writes every output under OUT. Exits 2 with a one-line reason on unusable input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


def _model_map(items: list[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        path, separator, key = item.rpartition("=")
        if not separator or not path or not key:
            raise argparse.ArgumentTypeError(f"--model-map expects PATH=KEY, got {item!r}")
        overrides[path] = key
    return overrides


def _subtask(text: str) -> tuple[str, str, str]:
    parts = text.split("/", 2)
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected BENCHMARK/SPLIT/SUBTASK, got {text!r}")
    return parts[0], parts[1], parts[2]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m postprocess", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="ingest logs, run the analysis, write tables, figures and report")
    report.add_argument("--logs", nargs="+", required=True, type=Path, metavar="DIR", help="lmms-eval output folders")
    report.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    report.add_argument("--min-n", type=int, default=20, help="shared questions for an eligible comparison (20)")
    report.add_argument("--min-net", type=int, default=5, help="Net for a case (5)")
    report.add_argument("--fdr", type=float, default=0.05, help="Benjamini-Hochberg false discovery rate (0.05)")
    report.add_argument("--variant", default="direct", help="prompt variant analysed (direct)")
    report.add_argument(
        "--model-map",
        nargs="+",
        default=[],
        metavar="PATH=KEY",
        help="map a model path in results.json to a registry key",
    )
    report.add_argument(
        "--extra-models",
        nargs="+",
        default=[],
        type=Path,
        metavar="YAML",
        help="registry YAML files adding models to model_configs/models.yaml",
    )
    report.add_argument(
        "--skip-unknown-models",
        action="store_true",
        help="skip (and report) runs whose model matches no registry entry instead of failing",
    )
    report.add_argument(
        "--figure-subtask",
        nargs="+",
        default=[],
        type=_subtask,
        metavar="BENCHMARK/SPLIT/SUBTASK",
        help="Figure 1 panels (default: the most replicated subtasks)",
    )
    report.add_argument("--cache-dir", type=Path, help="reuse / store the ingested table here")
    report.add_argument("--progress", action="store_true", help="show a progress bar while reading logs")
    return parser


def _quality_frames(result, registry) -> dict[str, pd.DataFrame]:
    """Ingestion's data-quality frames, titled for the report's data-quality section."""
    from postprocess.quality import quality_summary

    summary = quality_summary(result, registry)
    return {
        "Ingestion overview": summary.overview,
        "Runs found": result.runs,
        "Problems by kind (rows skipped, kept or reported)": summary.problems,
        "Unparsed answers per model x benchmark": summary.unparsed,
        "Missing model x split runs": summary.missing_runs,
        "Partial runs": summary.partial_runs,
    }


def run_report(args: argparse.Namespace) -> int:
    from model_configs import load_registry
    from postprocess.cache import load_or_ingest
    from postprocess.ingest import ingest_logs
    from postprocess.pipeline import run_analysis, write_outputs

    registry = load_registry(extra=args.extra_models)
    overrides = _model_map(args.model_map)
    options = {"model_overrides": overrides, "strict": not args.skip_unknown_models, "progress": args.progress}
    if args.cache_dir:
        result = load_or_ingest(args.logs, args.cache_dir, registry, **options)
    else:
        result = ingest_logs(args.logs, registry, **options)
    if result.table.empty:
        folders = ", ".join(map(str, args.logs))
        raise ValueError(f"no per-question rows found under {folders} (runs found: {len(result.runs)})")
    analysis = run_analysis(
        result.table,
        registry.models_frame(),
        min_n=args.min_n,
        min_net=args.min_net,
        fdr=args.fdr,
        variant=args.variant,
        figure_subtasks=args.figure_subtask or None,
    )
    paths = write_outputs(analysis, args.out, quality=_quality_frames(result, registry))
    summary = analysis.summary
    print(
        f"{summary['cases']} cases over {summary['eligible_comparisons']} eligible comparisons "
        f"({len(summary['replicated_subtasks'])} replicated subtasks); report: {paths['report_html']}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run_report(args)
    except (ValueError, FileNotFoundError, argparse.ArgumentTypeError) as error:
        # UnusableInput, UnresolvedModelError and RegistryError are ValueErrors with a readable message.
        print(f"error: {error}", file=sys.stderr)
        return 2
