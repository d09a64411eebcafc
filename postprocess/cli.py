"""Command line: parses the options, builds the analysis parameters and calls the stages.

  python -m postprocess report --logs DIR [DIR ...] --out OUT [options]
      reads lmms-eval logs (through the Parquet cache when --cache-dir is given), runs the
      inverse-scaling analysis on the benchmark rows, adds the CAIT section when CAIT rows are
      present (with the judges' re-evaluation when --reeval points at a cait-reeval output), and
      writes every output under OUT.
  python -m postprocess cait-reeval --logs DIR [DIR ...] --judges judges.yaml --out OUT [options]
      LLM re-evaluation of CAIT from the models' descriptions (postprocess/cait/reeval.py).

Exits 2 with a one-line reason on unusable input. Nothing imports this module.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from postprocess.inverse_scaling.parameters import Parameters

DEFAULTS = Parameters()


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


def add_log_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that say which logs to read and how their models map to the registry."""
    parser.add_argument("--logs", nargs="+", required=True, type=Path, metavar="DIR", help="lmms-eval output folders")
    parser.add_argument("--model-map", nargs="+", default=[], metavar="PATH=KEY",
                        help="map a model path in results.json to a registry key")
    parser.add_argument("--extra-models", nargs="+", default=[], type=Path, metavar="YAML",
                        help="registry YAML files adding models to model_configs/models.yaml")
    parser.add_argument("--skip-unknown-models", action="store_true",
                        help="skip (and report) runs whose model matches no registry entry instead of failing")
    parser.add_argument("--cache-dir", type=Path, help="reuse / store the ingested table here")
    parser.add_argument("--progress", action="store_true", help="show a progress bar while reading logs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m postprocess", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="ingest logs, run the analysis, write tables, figures and report")
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
    reeval = commands.add_parser("cait-reeval", help="CAIT LLM re-evaluation: judges answer from the models' "
                                                     "descriptions (cait_describe runs)")
    add_log_arguments(reeval)
    reeval.add_argument("--judges", required=True, type=Path, metavar="YAML",
                        help="judges file (see model_configs/judges.example.yaml)")
    reeval.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    reeval.add_argument("--judge-cache", type=Path, help="judge answer cache (default: OUT/judge_cache)")
    reeval.add_argument("--judge", nargs="+", default=[], metavar="NAME", help="only these judges of the file")
    reeval.add_argument("--no-gt-prompt", action="store_true", help="skip the GT-prompt upper bound")
    reeval.add_argument("--dry-run", action="store_true",
                        help="print the calls each judge would make and their estimated cost, make none")
    return parser


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


def _progress(pending: dict[str, int], every: int = 100) -> Callable[[str, str], None]:
    """An on_call that prints each judge's progress to stderr every `every` calls and at its last call."""
    done = dict.fromkeys(pending, 0)
    lock = threading.Lock()

    def report(judge_name: str, key: str) -> None:
        with lock:
            done[judge_name] += 1
            n = done[judge_name]
        if n % every == 0 or n == pending[judge_name]:
            print(f"{judge_name}: {n}/{pending[judge_name]} calls", file=sys.stderr)
    return report


def run_cait_reeval(args: argparse.Namespace) -> int:
    from postprocess.cait.reeval import pending_calls, run_reeval, write_reeval
    from postprocess.judges import JudgeConfigError, JudgeError, load_judges

    judges = load_judges(args.judges)
    if args.judge:
        unknown = sorted(set(args.judge) - {j.name for j in judges})
        if unknown:
            raise JudgeConfigError(f"{args.judges}: no judge named {unknown[0]!r}; judges: {[j.name for j in judges]}")
        judges = [j for j in judges if j.name in args.judge]
    _, ingested = read_logs(args)
    cache_dir = args.judge_cache or args.out / "judge_cache"
    estimates = pending_calls(ingested.table, judges, cache_dir, not args.no_gt_prompt)
    if args.dry_run:
        for estimate in estimates:
            print(estimate.line())
        return 0
    try:
        result = run_reeval(ingested.table, judges, cache_dir, include_gt_prompt=not args.no_gt_prompt,
                            on_call=_progress({e.judge: e.calls for e in estimates}))
    except JudgeError as error:
        print(f"error: {error}\nCompleted calls are cached in {cache_dir}; rerun to continue.", file=sys.stderr)
        return 1
    paths = write_reeval(result, args.out)
    for call in result.calls.itertuples():
        print(f"{call.judge}: {call.prompts} prompts, {call.cached} cached, {call.made} asked")
    print(f"re-evaluation: {paths['markdown']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run_cait_reeval(args) if args.command == "cait-reeval" else run_report(args)
    except (ValueError, FileNotFoundError, argparse.ArgumentTypeError) as error:
        # UnusableInput, UnresolvedModelError, RegistryError and JudgeConfigError are ValueErrors with a readable message.
        print(f"error: {error}", file=sys.stderr)
        return 2
