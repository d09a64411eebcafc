"""`report`: ingest logs, run the inverse-scaling analysis, write tables, figures and the report.

Everything goes to OUT whole or not at all (postprocess.render.outputs.written_whole), problems.csv
(every skipped, repaired or reported run, file and line: PROBLEM_COLUMNS) included; OUT's check comes
first, so a bad --out fails before the logs are read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from postprocess.cli.logs import add_log_arguments, read_logs
from postprocess.inverse_scaling.parameters import Parameters

DEFAULTS = Parameters()
PROBLEMS_FILE = "problems.csv"


def _subtask(text: str) -> tuple[str, str, str]:
    parts = text.split("/", 2)
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected BENCHMARK/SPLIT/SUBTASK, got {text!r}")
    return parts[0], parts[1], parts[2]


def add(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="ingest logs, run the analysis, write tables, figures and report")
    add_log_arguments(report)
    report.add_argument("--out", required=True, type=Path, metavar="OUT",
                        help="output folder, replaced whole when the report is complete (files of yours in it are "
                             "kept)")
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


def _quality_frames(result, registry, settings) -> dict:
    """Ingestion's data-quality frames, titled for the report's data-quality section; `settings`: the
    generation settings that differ within compared pairs (None without an inverse-scaling analysis)."""
    from postprocess.logs.quality import quality_summary

    summary = quality_summary(result, registry)
    frames = {}
    if settings is not None:
        frames["Generation settings that differ within compared pairs (smaller vs. larger model)"] = settings
    frames.update({
        "Runs and samples files not read": summary.runs_not_read,
        "Duplicate runs (runs of one model holding the same questions)": summary.duplicate_runs,
        "Ingestion overview": summary.overview,
        "Runs found": result.runs,
        "Problems by kind (rows skipped, kept or reported)": summary.problems,
        "Unparsed answers per model x benchmark": summary.unparsed,
        "Missing model x split runs": summary.missing_runs,
        "Partial runs": summary.partial_runs,
    })
    return frames


def _quality_counts(result, settings) -> dict:
    """The data-quality numbers summary.json carries."""
    from postprocess.logs.ingest import RUN_PROBLEMS

    problems = result.problems
    return {
        "settings_differ_pairs": 0 if settings is None else len(settings[["family", "small", "large"]].drop_duplicates()),
        "settings_differences": 0 if settings is None else len(settings),
        "duplicate_run_pairs": len(result.duplicate_runs),
        "duplicate_rows": int(result.counts.get("duplicate", 0)),
        "runs_not_read": int(problems["kind"].isin(RUN_PROBLEMS).sum()),
        "lines_skipped": int(result.counts.get("lines_skipped", 0)),
        "problems": {str(kind): int(n) for kind, n in problems["kind"].astype(str).value_counts().sort_index().items()},
    }


def read_reeval(folder: Path):
    """The items of a `cait-reeval` output folder, checked whole: a file cut short, unparsable, lacking a
    column or holding a `correct` that is not true/false is a ValueError naming the file (and line)."""

    from postprocess.cait.metrics import REEVAL_ITEM_COLUMNS
    from postprocess.cait.reeval import read_reeval_items

    path = Path(folder) / "cait_reeval_items.csv"
    if path.is_file() and path.stat().st_size and _last_byte(path) != b"\n":
        raise ValueError(f"{path}: the last line has no newline: the file was cut short (rerun cait-reeval)")
    try:
        items = read_reeval_items(folder)
    except (ValueError, UnicodeDecodeError) as error:  # pandas' ParserError and EmptyDataError are ValueErrors
        raise ValueError(f"{path}: not a readable cait-reeval items file: {str(error).strip()}") from None
    missing = [column for column in REEVAL_ITEM_COLUMNS if column not in items.columns]
    if missing:
        raise ValueError(f"{path}: lacks the columns {missing} of a cait-reeval items file")
    correct = items["correct"].map({True: True, False: False, "True": True, "False": False})
    if correct.isna().any():
        row = int(correct.isna().to_numpy().argmax())
        raise ValueError(f"{path}:{row + 2}: field 'correct' is {items['correct'].iloc[row]!r}, not True or False")
    return items.assign(correct=correct.astype(bool))


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, 2)
        return handle.read(1)


def _cait_section(result, registry, reeval_items) -> list:
    """The CAIT tables of the CAIT rows, with the re-evaluation when given."""
    from postprocess.cait.metrics import cait_models_frame, cait_numbers, run_timing
    from postprocess.render.cait_tables import cait_tables

    rows = result.table[result.table["benchmark"] == "CAIT"]
    if rows.empty:
        return []
    numbers = cait_numbers(rows, cait_models_frame(registry), run_timing(result.runs, result.run_tasks), reeval_items)
    return cait_tables(numbers)


def _say_kept(folder) -> None:
    if folder.kept:
        print(f"note: kept {len(folder.kept)} file(s) of yours in {folder.path} that report does not write: "
              f"{', '.join(folder.kept[:5])}{' ...' if len(folder.kept) > 5 else ''}", file=sys.stderr)
    if folder.replaced:
        print(f"note: replaced {len(folder.replaced)} file(s) in {folder.path} by outputs of the same name: "
              f"{', '.join(folder.replaced[:5])}{' ...' if len(folder.replaced) > 5 else ''}", file=sys.stderr)


def run_report(args: argparse.Namespace) -> int:
    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.logs.quality import settings_differences
    from postprocess.render.outputs import check_output_folder, write_outputs, write_sections_only, written_whole

    check_output_folder(args.out)
    params = Parameters(min_n=args.min_n, min_net=args.min_net, fdr=args.fdr, variant=args.variant)
    reeval_items = read_reeval(args.reeval) if args.reeval else None
    registry, result = read_logs(args, details=f"all in {args.out / PROBLEMS_FILE}")
    if result.table.empty:
        folders = ", ".join(map(str, args.logs))
        raise ValueError(f"no per-question rows found under {folders} (runs found: {len(result.runs)}, lines "
                         f"skipped: {result.counts.get('lines_skipped', 0)})")
    sections = [("CAIT (Seeing vs. Believing)", _cait_section(result, registry, reeval_items))]
    # CAIT is not one of the paper's benchmark splits: it has its own section, never pairwise flips.
    benchmarks = result.table[result.table["benchmark"] != "CAIT"]
    if benchmarks.empty:
        with written_whole(args.out) as folder:
            result.problems.to_csv(folder.staging / PROBLEMS_FILE, index=False)
            write_sections_only(folder.staging, sections, _quality_frames(result, registry, None))
        _say_kept(folder)
        print(f"no benchmark rows for the inverse-scaling analysis; CAIT report: {args.out / 'report.html'}")
        return 0
    analysis = run_analysis(benchmarks, registry.models_frame(), params)
    settings = settings_differences(result.table, result.settings, analysis.comparisons)
    analysis.summary["data_quality"] = _quality_counts(result, settings)
    with written_whole(args.out) as folder:
        result.problems.to_csv(folder.staging / PROBLEMS_FILE, index=False)
        write_outputs(analysis, folder.staging, quality=_quality_frames(result, registry, settings),
                      extra_sections=sections, figure_subtasks=args.figure_subtask or None)
    _say_kept(folder)
    if len(settings):
        pairs = settings[["family", "small", "large"]].drop_duplicates()
        named = "; ".join(f"{r.small} vs {r.large}" for r in pairs.head(3).itertuples())
        print(f"warning: {len(pairs)} compared pairs ran with different generation settings ({named}"
              f"{' ...' if len(pairs) > 3 else ''}); the report's data-quality section lists them", file=sys.stderr)
    summary = analysis.summary
    print(
        f"{summary['cases']} cases over {summary['eligible_comparisons']} eligible comparisons "
        f"({len(summary['replicated_subtasks'])} replicated subtasks); report: {args.out / 'report.html'}"
    )
    return 0
