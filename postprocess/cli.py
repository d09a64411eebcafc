"""Command line.

  python -m postprocess report --logs DIR [DIR ...] --out OUT [options]
      reads lmms-eval logs (through the Parquet cache when --cache-dir is given), runs the
      inverse-scaling analysis on the benchmark rows, adds the CAIT section when CAIT rows are
      present (with the judges' re-evaluation when --reeval points at a cait-reeval output), and
      writes every output under OUT.
  python -m postprocess cait-reeval --logs DIR [DIR ...] --judges judges.yaml --out OUT [options]
      LLM re-evaluation of CAIT from the models' descriptions (postprocess/reeval.py).

Exits 2 with a one-line reason on unusable input.
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
    from postprocess.cache import load_or_ingest
    from postprocess.ingest import ingest_logs

    registry = load_registry(extra=args.extra_models)
    options = {"model_overrides": _model_map(args.model_map), "strict": not args.skip_unknown_models,
               "progress": args.progress}
    if args.cache_dir:
        return registry, load_or_ingest(args.logs, args.cache_dir, registry, **options)
    return registry, ingest_logs(args.logs, registry, **options)


def build_parser() -> argparse.ArgumentParser:
    from postprocess.human.cli import add_subcommands as add_human_subcommands
    from postprocess.reeval import add_reeval_subcommand

    parser = argparse.ArgumentParser(prog="python -m postprocess", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="ingest logs, run the analysis, write tables, figures and report")
    add_log_arguments(report)
    report.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    report.add_argument("--min-n", type=int, default=20, help="shared questions for an eligible comparison (20)")
    report.add_argument("--min-net", type=int, default=5, help="Net for a case (5)")
    report.add_argument("--fdr", type=float, default=0.05, help="Benjamini-Hochberg false discovery rate (0.05)")
    report.add_argument("--variant", default="direct", help="prompt variant analysed (direct)")
    report.add_argument(
        "--figure-subtask",
        nargs="+",
        default=[],
        type=_subtask,
        metavar="BENCHMARK/SPLIT/SUBTASK",
        help="Figure 1 panels (default: the most replicated subtasks)",
    )
    report.add_argument("--reeval", type=Path, metavar="DIR",
                        help="a `cait-reeval` output folder: adds the judges' tables to the CAIT section")
    add_log_arguments(add_reeval_subcommand(commands))
    add_human_subcommands(commands)
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


def cait_section(table: pd.DataFrame, runs: pd.DataFrame, registry, reeval_dir: Path | None) -> list:
    """The CAIT tables (postprocess/cait.py) of the CAIT rows, with the re-evaluation when given."""
    from postprocess.cait import cait_models_frame, cait_tables, run_timing
    from postprocess.reeval import read_reeval_items

    rows = table[table["benchmark"] == "CAIT"]
    if rows.empty:
        return []
    reeval_items = read_reeval_items(reeval_dir) if reeval_dir else None
    return cait_tables(rows, cait_models_frame(registry), run_timing(runs), reeval_items)


def run_report(args: argparse.Namespace) -> int:
    from postprocess.pipeline import run_analysis, write_outputs, write_sections_only

    registry, result = read_logs(args)
    if result.table.empty:
        folders = ", ".join(map(str, args.logs))
        raise ValueError(f"no per-question rows found under {folders} (runs found: {len(result.runs)})")
    sections = [("CAIT (Seeing vs. Believing)", cait_section(result.table, result.runs, registry, args.reeval))]
    quality = _quality_frames(result, registry)
    # CAIT is not one of the paper's benchmark splits: it has its own section, never pairwise flips.
    benchmarks = result.table[result.table["benchmark"] != "CAIT"]
    if benchmarks.empty:
        paths = write_sections_only(args.out, sections, quality)
        print(f"no benchmark rows for the inverse-scaling analysis; CAIT report: {paths['report_html']}")
        return 0
    analysis = run_analysis(
        benchmarks,
        registry.models_frame(),
        min_n=args.min_n,
        min_net=args.min_net,
        fdr=args.fdr,
        variant=args.variant,
        figure_subtasks=args.figure_subtask or None,
    )
    paths = write_outputs(analysis, args.out, quality=quality, extra_sections=sections)
    summary = analysis.summary
    print(
        f"{summary['cases']} cases over {summary['eligible_comparisons']} eligible comparisons "
        f"({len(summary['replicated_subtasks'])} replicated subtasks); report: {paths['report_html']}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    from postprocess.reeval import reeval_main

    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "handler"):  # subcommands that name their handler (postprocess.human.cli)
            return args.handler(args)
        return reeval_main(args) if args.command == "cait-reeval" else run_report(args)
    except (ValueError, FileNotFoundError, argparse.ArgumentTypeError) as error:
        # UnusableInput, UnresolvedModelError, RegistryError and JudgeConfigError are ValueErrors with a readable message.
        print(f"error: {error}", file=sys.stderr)
        return 2
