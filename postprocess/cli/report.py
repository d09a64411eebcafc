"""`report`: ingest logs, run the inverse-scaling analysis, write tables, figures and the report."""

from __future__ import annotations

import argparse
from pathlib import Path

from postprocess.cli.logs import add_log_arguments, read_logs
from postprocess.inverse_scaling.parameters import Parameters

DEFAULTS = Parameters()


def _subtask(text: str) -> tuple[str, str, str]:
    parts = text.split("/", 2)
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected BENCHMARK/SPLIT/SUBTASK, got {text!r}")
    return parts[0], parts[1], parts[2]


def add(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="ingest logs, run the analysis, write tables, figures and report")
    add_log_arguments(report)
    report.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    report.add_argument("--min-n", type=int, default=DEFAULTS.min_n,
                        help=f"shared questions for an eligible comparison ({DEFAULTS.min_n})")
    report.add_argument("--min-net", type=int, default=DEFAULTS.min_net, help=f"Net for a case ({DEFAULTS.min_net})")
    report.add_argument("--fdr", type=float, default=DEFAULTS.fdr,
                        help=f"Benjamini-Hochberg false discovery rate ({DEFAULTS.fdr})")
    report.add_argument("--variant", default=DEFAULTS.variant, help=f"prompt variant analysed ({DEFAULTS.variant})")
    report.add_argument("--figure-subtask", nargs="+", default=[], type=_subtask, metavar="BENCHMARK/SPLIT/SUBTASK",
                        help="Figure 1 panels (default: the most replicated subtasks)")
    report.add_argument("--reeval", type=Path, metavar="DIR",
                        help="a `cait-reeval` output folder: adds the judges' tables to the CAIT section")
    report.set_defaults(handler=run_report)


def _quality_frames(result, registry) -> dict:
    """Ingestion's data-quality frames, titled for the report's data-quality section."""
    from postprocess.logs.quality import quality_summary

    summary = quality_summary(result, registry)
    return {
        "Ingestion overview": summary.overview,
        "Runs found": result.runs,
        "Problems by kind (rows skipped, kept or reported)": summary.problems,
        "Unparsed answers per model x benchmark": summary.unparsed,
        "Missing model x split runs": summary.missing_runs,
        "Partial runs": summary.partial_runs,
    }


def _cait_section(result, registry, reeval_dir: Path | None) -> list:
    """The CAIT tables of the CAIT rows, with the re-evaluation when given."""
    from postprocess.cait.metrics import cait_models_frame, cait_numbers, run_timing
    from postprocess.cait.reeval import read_reeval_items
    from postprocess.render.cait_tables import cait_tables

    rows = result.table[result.table["benchmark"] == "CAIT"]
    if rows.empty:
        return []
    reeval_items = read_reeval_items(reeval_dir) if reeval_dir else None
    numbers = cait_numbers(rows, cait_models_frame(registry), run_timing(result.runs, result.run_tasks), reeval_items)
    return cait_tables(numbers)


def run_report(args: argparse.Namespace) -> int:
    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.render.outputs import write_outputs, write_sections_only

    params = Parameters(min_n=args.min_n, min_net=args.min_net, fdr=args.fdr, variant=args.variant)
    registry, result = read_logs(args)
    if result.table.empty:
        folders = ", ".join(map(str, args.logs))
        raise ValueError(f"no per-question rows found under {folders} (runs found: {len(result.runs)})")
    sections = [("CAIT (Seeing vs. Believing)", _cait_section(result, registry, args.reeval))]
    quality = _quality_frames(result, registry)
    # CAIT is not one of the paper's benchmark splits: it has its own section, never pairwise flips.
    benchmarks = result.table[result.table["benchmark"] != "CAIT"]
    if benchmarks.empty:
        paths = write_sections_only(args.out, sections, quality)
        print(f"no benchmark rows for the inverse-scaling analysis; CAIT report: {paths['report_html']}")
        return 0
    analysis = run_analysis(benchmarks, registry.models_frame(), params)
    paths = write_outputs(analysis, args.out, quality=quality, extra_sections=sections,
                          figure_subtasks=args.figure_subtask or None)
    summary = analysis.summary
    print(
        f"{summary['cases']} cases over {summary['eligible_comparisons']} eligible comparisons "
        f"({len(summary['replicated_subtasks'])} replicated subtasks); report: {paths['report_html']}"
    )
    return 0
