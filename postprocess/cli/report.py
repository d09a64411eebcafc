"""`report`: ingest logs, run the inverse-scaling analysis, write tables, figures and the report.

Everything goes to OUT whole or not at all (postprocess.render.outputs.written_whole), problems.csv
(every skipped, repaired or reported run, file and line: PROBLEM_COLUMNS) included; OUT's check comes
first, so a bad --out fails before the logs are read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from postprocess.cli.logs import add_log_arguments, inputs_named, read_judged_logs
from postprocess.inverse_scaling.parameters import UNSETTLED_TREATMENTS, Parameters

DEFAULTS = Parameters()
PROBLEMS_FILE = "problems.csv"
ANSWERS_FILE = "answers.parquet"  # every analysed answer: source, letter, rule, tier, settled-by, correctness


def _subtask(text: str) -> tuple[str, str, str]:
    parts = text.split("/", 2)
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected BENCHMARK/SPLIT/SUBTASK, got {text!r}")
    return parts[0], parts[1], parts[2]


def add_analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """The analysis parameters (the cases), shared by every command that finds cases."""
    parser.add_argument("--min-n", type=int, default=DEFAULTS.min_n,
                        help=f"shared questions for an eligible comparison ({DEFAULTS.min_n})")
    parser.add_argument("--min-net", type=int, default=DEFAULTS.min_net, help=f"Net for a case ({DEFAULTS.min_net})")
    parser.add_argument("--fdr", type=float, default=DEFAULTS.fdr,
                        help=f"Benjamini-Hochberg false discovery rate ({DEFAULTS.fdr})")
    parser.add_argument("--variant", default=DEFAULTS.variant, help=f"prompt variant analysed ({DEFAULTS.variant})")
    parser.add_argument("--unsettled", choices=UNSETTLED_TREATMENTS, default=DEFAULTS.unsettled,
                        help="answers whose letter the rules withheld and no judge settled: exclude (the question "
                             "leaves that pair's shared questions), wrong (scored wrong, as before), candidate (the "
                             f"withheld letter counts) ({DEFAULTS.unsettled})")


def analysis_parameters(args: argparse.Namespace) -> Parameters:
    return Parameters(min_n=args.min_n, min_net=args.min_net, fdr=args.fdr, variant=args.variant,
                      unsettled=args.unsettled)


def add(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="ingest logs, run the analysis, write tables, figures and report")
    add_log_arguments(report)
    report.add_argument("--out", required=True, type=Path, metavar="OUT",
                        help="output folder, replaced whole when the report is complete (files of yours in it are "
                             "kept)")
    add_analysis_arguments(report)
    report.add_argument("--figure-subtask", nargs="+", default=[], type=_subtask, metavar="BENCHMARK/SPLIT/SUBTASK",
                        help="Figure 1 panels (default: the most replicated subtasks)")
    report.add_argument("--reeval", type=Path, metavar="DIR",
                        help="a `cait-reeval` output folder: adds the judges' tables to the CAIT section")
    report.add_argument("--taxonomy", type=Path, metavar="DIR",
                        help="a `taxonomy` output folder: adds the error-taxonomy section (Section 5.6)")
    report.add_argument("--human", nargs="+", default=[], type=Path, metavar="DIR",
                        help="`human-stats` output folders: adds the human-annotation section (Table 39, CAIT "
                             "Table 12, failure modes) and the CAIT human baseline row")
    report.add_argument("--human-annotations", nargs=3, action="append", default=[],
                        metavar=("SET", "ANNOTATIONS", "ITEMS"),
                        help="a task set's annotations CSV (human-import) and items CSV (human-export), computed "
                             "here instead of read from a human-stats folder; repeatable")
    report.add_argument("--annotator-profiles", type=Path, metavar="CSV",
                        help="annotator,age,description per Label Studio user id: CAIT Table 12's Age and Description")
    report.add_argument("--explorer", choices=("cases", "comparisons", "none"), default="cases",
                        help="the flip explorer beside report.html: a page per case (cases), also per eligible "
                             "comparison, behind a switch on its index (comparisons), or none (cases)")
    report.add_argument("--explorer-max-mb", type=_megabytes, default=300, metavar="MB",
                        help="the explorer folder's budget: full-size images are capped at the long side that keeps "
                             "it within MB megabytes (10^6 bytes), and its pages say so; 0 keeps them as the models "
                             "got them (default: 300)")
    report.add_argument("--tasks-dir", type=Path, metavar="DIR",
                        help="task folder whose dataset blocks hold the questions the explorer shows (default: the "
                             "package's tasks, i.e. the hub datasets)")
    report.add_argument("--data", action="append", default=[], metavar="TASK=PATH",
                        help="a base task's local data for the explorer, as `python -m lmms_eval_tasks export --data`")
    report.set_defaults(handler=run_report)


def _runs_found(runs):
    """The runs table as the report shows it: results files relative to the folder they share, and the number
    of tasks (a run of 20 tasks would otherwise list them in one 600-character cell; each task's rows are in
    the other quality tables)."""
    import os

    import pandas as pd

    shown = runs.copy()
    files = [str(path) for path in shown["results_file"]]
    if files:
        root = os.path.commonpath([os.path.dirname(f) for f in files])
        shown["results_file"] = [os.path.relpath(f, root) for f in files]
    shown["tasks"] = pd.array([len(t.split(",")) if isinstance(t, str) and t else 0 for t in shown["tasks"]],
                              dtype="Int64")
    return shown.drop(columns=["model_path"]).rename(columns={"tasks": "n_tasks"})


def _quality_frames(result, registry, settings, unsettled=None) -> dict:
    """Ingestion's data-quality frames, titled for the report's data-quality section; `settings`: the
    generation settings that differ within compared pairs, `unsettled`: the analysis' unsettled answers per model
    and benchmark (both None without an inverse-scaling analysis)."""
    from postprocess.logs.imports.audit import scoring_audit
    from postprocess.logs.quality import quality_summary

    summary = quality_summary(result, registry)
    audit, differences = scoring_audit(result.table)
    frames = {}
    if settings is not None:
        frames["Generation settings that differ within compared pairs (smaller vs. larger model)"] = settings
    frames.update({
        "Runs and samples files not read": summary.runs_not_read,
        "Duplicate runs (runs of one model holding the same questions)": summary.duplicate_runs,
        "Ingestion overview": summary.overview,
        "Runs found": _runs_found(result.runs),
        "Problems by kind (rows skipped, kept or reported)": summary.problems,
        "Unparsed answers per model x benchmark": summary.unparsed,
        **({"Unsettled answers per model x benchmark (letter withheld, no judge verdict)": unsettled}
           if unsettled is not None else {}),
        "Answers per extraction tier (model x benchmark)": summary.tiers,
        "Missing model x split runs": summary.missing_runs,
        "Partial runs": summary.partial_runs,
    })
    if len(audit):  # only imported files carry a harness's own scoring
        frames["Scoring audit: our accuracy against the harness's own scoring"] = audit
        frames["Scoring audit: the questions our reading and the harness's score differently"] = differences
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


def _human_statistics(args: argparse.Namespace) -> dict:
    """{task set: agreement.py's frames} from --human folders and --human-annotations triples; a set given
    twice is an error (which one would the report show?)."""
    if not (args.human or args.human_annotations or args.annotator_profiles):
        return {}  # without importing the human-annotation modules
    from postprocess.cli.human import read_items
    from invscale.label_studio import read_annotations
    from postprocess.human.stats_files import read_annotator_profiles, read_statistics, set_statistics
    from postprocess.human.task_sets import SET_NAMES

    found: dict[str, tuple[str, dict]] = {}

    def add(task_set: str, source: str, tables: dict) -> None:
        if task_set in found:
            raise ValueError(f"human task set {task_set!r} is given twice: {found[task_set][0]} and {source}")
        found[task_set] = (source, tables)

    for folder in args.human:
        for task_set, tables in read_statistics(folder).items():
            add(task_set, str(folder), tables)
    for task_set, annotations_file, items_file in args.human_annotations:
        if task_set not in SET_NAMES:
            raise ValueError(f"--human-annotations: unknown task set {task_set!r}; task sets: {', '.join(SET_NAMES)}")
        add(task_set, annotations_file, set_statistics(task_set, read_annotations(Path(annotations_file)),
                                                       read_items(Path(items_file))))
    if args.annotator_profiles:
        if "cait-baseline" not in found:
            raise ValueError(f"--annotator-profiles {args.annotator_profiles}: no cait-baseline statistics to add "
                             f"them to (--human or --human-annotations)")
        found["cait-baseline"][1]["profiles"] = read_annotator_profiles(args.annotator_profiles)
    return {task_set: tables for task_set, (_, tables) in found.items()}


def _human_tables(human: dict) -> list:
    """render.human_tables of the task sets' statistics; none without any (its modules, with the task sets', are
    imported only then)."""
    if not human:
        return []
    from postprocess.render.human_tables import human_tables

    return human_tables(human)


def _taxonomy_section(folder: Path, registry) -> list:
    """The taxonomy tables of a `taxonomy` output folder."""
    from postprocess.inverse_scaling.taxonomy.judging import read_taxonomy
    from postprocess.inverse_scaling.taxonomy.numbers import taxonomy_numbers
    from postprocess.order import family_order
    from postprocess.render.taxonomy_tables import taxonomy_tables

    verdicts, strata = read_taxonomy(folder)
    return taxonomy_tables(taxonomy_numbers(verdicts, family_order(registry.models_frame())), strata)


def _cait_section(result, registry, reeval_items, human=None) -> list:
    """The CAIT tables of the CAIT rows, with the re-evaluation and the human baseline row when given."""
    from postprocess.cait.metrics import cait_models_frame, cait_numbers, run_timing
    from postprocess.render.cait_tables import cait_tables

    rows = result.table[result.table["benchmark"] == "CAIT"]
    if rows.empty:
        return []
    numbers = cait_numbers(rows, cait_models_frame(registry), run_timing(result.runs, result.run_tasks), reeval_items)
    return cait_tables(numbers, human)


def _adjudication_section(benchmarks, registry, params, analysis, merged) -> list:
    """With answers a judge settled (or adjudications read beside the logs): the analysis again as the
    rules alone score the table, and what the judge changes."""
    from postprocess.inverse_scaling.adjudication import adjudication_effect
    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.logs.adjudications import rules_only
    from postprocess.render.adjudication_tables import adjudication_tables

    outcomes = merged.counts() if merged is not None else None
    if not (benchmarks["match"] == "judge").any() and not (outcomes and sum(outcomes.values())):
        return []
    without = run_analysis(rules_only(benchmarks), registry.models_frame(), params)
    return adjudication_tables(adjudication_effect(benchmarks, analysis, without), outcomes)


def _most_unsettled(counts) -> str:
    """The model x benchmark pairs with the most unsettled answers, for the console."""
    top = counts[counts["unsettled"] > 0].sort_values("unsettled_percent", ascending=False, kind="stable").head(3)
    named = "; ".join(f"{r.model} on {r.benchmark}: {r.unsettled} of {r.answers} ({r.unsettled_percent:.1f}%)"
                      for r in top.itertuples())
    return f"Most: {named}; the report's data-quality section lists every model and benchmark."


def _say_kept(folder) -> None:
    if folder.kept:
        print(f"note: kept {len(folder.kept)} file(s) of yours in {folder.path} that report does not write: "
              f"{', '.join(folder.kept[:5])}{' ...' if len(folder.kept) > 5 else ''}", file=sys.stderr)
    if folder.replaced:
        print(f"note: replaced {len(folder.replaced)} file(s) in {folder.path} by outputs of the same name: "
              f"{', '.join(folder.replaced[:5])}{' ...' if len(folder.replaced) > 5 else ''}", file=sys.stderr)


def _megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of megabytes: {text!r}") from None
    if not 0 <= value < float("inf"):  # NaN and inf too: int() of the bytes would fail later
        raise argparse.ArgumentTypeError(f"megabytes must be a finite number, 0 (no budget) or more, not {text!r}")
    return value


def _add_image_problems(path, problems, image_problems: list[tuple[str, str, str]]) -> None:
    """problems.csv with the explorer's unreadable images added (after the explorer has read them), each said once
    on the console."""
    import pandas as pd

    rows = pd.DataFrame([{"kind": "unreadable_image", "action": "left out of the explorer page", "benchmark": benchmark,
                          "field": "image", "detail": f"question {question_id}: {why}"}
                         for benchmark, question_id, why in dict.fromkeys(image_problems)])
    pd.concat([problems, rows], ignore_index=True).to_csv(path, index=False)
    print(f"warning: {len(rows)} image(s) of flipped questions cannot be read and are left out of their explorer "
          f"pages (first: {rows['detail'].iloc[0]}); problems.csv lists them", file=sys.stderr)


def run_report(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.install import parse_overrides
    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.inverse_scaling.settlement import answers_table
    from postprocess.logs.quality import settings_differences
    from postprocess.logs.questions import question_loading
    from postprocess.logs.adjudications import adjudication_files
    from postprocess.render import reuse as reusing
    from postprocess.render.explorer import FOLDER as EXPLORER_FOLDER, MB, ExplorerInput, write_explorer
    from postprocess.render.outputs import check_output_folder, write_outputs, write_sections_only, written_whole
    from postprocess.render.report import has_pairs

    check_output_folder(args.out)
    explorer_data = parse_overrides(args.data)  # a malformed --data fails before the logs are read
    params = analysis_parameters(args)
    reeval_items = read_reeval(args.reeval) if args.reeval else None
    human = _human_statistics(args)
    registry, result, merged = read_judged_logs(args, details=f"all in {args.out / PROBLEMS_FILE}")
    if result.table.empty:
        raise ValueError(f"no per-question rows found in {inputs_named(args)} (runs found: {len(result.runs)}, lines "
                         f"skipped: {result.counts.get('lines_skipped', 0)})")
    baseline = human["cait-baseline"]["baseline"] if "cait-baseline" in human else None

    def extra_sections() -> list:
        return [
            ("Error taxonomy (Section 5.6)", _taxonomy_section(args.taxonomy, registry) if args.taxonomy else []),
            ("Human annotation (Appendix H; CAIT Appendix A.2 and Section 5.3)", _human_tables(human)),
            ("CAIT (Seeing vs. Believing)", _cait_section(result, registry, reeval_items, baseline)),
        ]

    # CAIT is not one of the paper's benchmark splits: it has its own section, never pairwise flips.
    cait = result.table["benchmark"] == "CAIT"
    benchmarks = result.table[~cait] if cait.any() else result.table  # a filtered copy holds every response again
    if benchmarks.empty:
        with written_whole(args.out) as folder:
            result.problems.to_csv(folder.staging / PROBLEMS_FILE, index=False)
            write_sections_only(folder.staging, extra_sections(), _quality_frames(result, registry, None))
        _say_kept(folder)
        print(f"no benchmark rows for the inverse-scaling analysis; CAIT report: {args.out / 'report.html'}")
        return 0
    explorer = None if args.explorer == "none" else ExplorerInput(
        benchmarks, args.tasks_dir, explorer_data, every_comparison=args.explorer == "comparisons",
        cache_dir=args.cache_dir / "explorer" if args.cache_dir else None, refresh=args.refresh,
        max_bytes=int(args.explorer_max_mb * MB) or None)
    # With --cache-dir, the outputs of a run whose inputs, options and code are all unchanged are copied from the
    # cache rather than computed (render/reuse.py); the explorer is written again from the stored analysis.
    reuse = reusing.reuse_for(args, result.fingerprint, adjudication_files(args.logs))
    stored = None if reuse is None or args.refresh else reuse.stored(with_analysis=explorer is not None)
    if stored is not None:
        analysis = stored.analysis
        with written_whole(args.out) as folder, question_loading() as loading:
            result.problems.to_csv(folder.staging / PROBLEMS_FILE, index=False)
            reusing.restore(stored, folder.staging)
            if explorer is not None and has_pairs(analysis):
                write_explorer(analysis, explorer, folder.staging)
            if explorer is not None and explorer.image_problems:
                _add_image_problems(folder.staging / PROBLEMS_FILE, result.problems, explorer.image_problems)
        _say_missing(loading)
        _say_kept(folder)
        reusing.say(stored.console)
        return 0
    sections = extra_sections()
    analysis = run_analysis(benchmarks, registry.models_frame(), params)
    sections.insert(0, ("Answer adjudication", _adjudication_section(benchmarks, registry, params, analysis, merged)))
    settings = settings_differences(result.table, result.settings, analysis.comparisons)
    analysis.summary["data_quality"] = _quality_counts(result, settings)
    closing = _closing_lines(analysis, settings, params, args.out)
    with written_whole(args.out) as folder, question_loading() as loading:
        result.problems.to_csv(folder.staging / PROBLEMS_FILE, index=False)
        answers_table(benchmarks, params.unsettled, analysis.scored_table(benchmarks)).to_parquet(
            folder.staging / ANSWERS_FILE, index=False)
        write_outputs(analysis, folder.staging, quality=_quality_frames(result, registry, settings, analysis.unsettled),
                      extra_sections=sections, figure_subtasks=args.figure_subtask or None,
                      figure_cache=args.cache_dir / "figures" if args.cache_dir else None, explorer=explorer)
        if reuse is not None:  # what the analysis wrote, before the explorer's unreadable images join problems.csv
            reuse.store(folder.staging, reusing.output_files(folder.staging, (EXPLORER_FOLDER, PROBLEMS_FILE)),
                        analysis, closing)
        if explorer is not None and explorer.image_problems:
            _add_image_problems(folder.staging / PROBLEMS_FILE, result.problems, explorer.image_problems)
    _say_missing(loading)
    _say_kept(folder)
    reusing.say(closing)
    return 0


def _say_missing(loading) -> None:
    if loading.missing():
        print(f"warning: the explorer shows the flipped questions of these splits without their text and images (the "
              f"options, gold and answers are from the logs): {loading.missing()}", file=sys.stderr)


def _closing_lines(analysis, settings, params, out: Path) -> list[tuple[str, str]]:
    """What the console says once the outputs are in place, as (stream, text) lines: the settings that differ
    within compared pairs, the cases found and where the report is, the unsettled answers, a --min-n too high."""
    from postprocess.render.report import count, unsettled_sentence

    lines = []
    if len(settings):
        pairs = settings[["family", "small", "large"]].drop_duplicates()
        named = "; ".join(f"{r.small} vs {r.large}" for r in pairs.head(3).itertuples())
        lines.append(("stderr", f"warning: {len(pairs)} compared pairs ran with different generation settings ({named}"
                                f"{' ...' if len(pairs) > 3 else ''}); the report's data-quality section lists them"))
    summary = analysis.summary
    if analysis.comparisons.empty:
        lines.append(("stdout", f"{count(summary['models'], 'model')} and no two of one family to compare: accuracy "
                                f"report: {out / 'report.html'}"))
        return lines
    lines.append(("stdout", f"{count(summary['cases'], 'case')} over "
                            f"{count(summary['eligible_comparisons'], 'eligible comparison')} "
                            f"({count(len(summary['replicated_subtasks']), 'replicated subtask')}); report: "
                            f"{out / 'report.html'}"))
    if summary["unsettled"]["unsettled"]:
        lines.append(("stderr", f"note: {unsettled_sentence(summary['unsettled'])} "
                                f"{_most_unsettled(analysis.unsettled)}"))
    if summary["eligible_comparisons"] == 0:
        largest = int(analysis.comparisons["n"].max())
        lines.append(("stderr", f"note: no comparison is eligible: the largest shares {largest} questions of a "
                                f"subtask, fewer than --min-n {params.min_n} (a --limit run is too small); run more "
                                "questions, or lower --min-n for a smoke test"))
    return lines
