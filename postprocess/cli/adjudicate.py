"""`adjudicate`: an LLM judge, shown the image(s), settles the answers the extraction rules left unparsed
in existing logs (postprocess/adjudication/from_logs.py), so that a cluster run never waits on an API.

  python -m postprocess adjudicate --logs DIR [DIR ...] --out OUT [--judges YAML] [--judge NAME]
      [--judge-cache DIR] [--tasks-dir DIR] [--data TASK=PATH ...] [--dry-run] [--model-map ... (as report)]

1. reads the logs and finds the answers the rules left unparsed that have a known gold (answers a judge
   settled during the run are not asked again; CAIT is not judged);
2. reloads each question and its images from the task's data (--tasks-dir: a task folder, default the
   package's tasks, i.e. the hub datasets; --data: a local copy, as `lmms_eval_tasks export`);
3. prints the calls still to make with their estimated cost; --dry-run stops here;
4. asks the judge (model_configs/adjudication_judges.yaml by default: GPT-5.4, the paper's adjudicator),
   caching every call under OUT/judge_cache (or --judge-cache): a failed or killed run resumes;
5. writes each samples file's adjudications beside it, `<PREFIX>_adjudications_<task>.jsonl`, where
   every command that reads these logs merges them (postprocess/logs/adjudications.py; `--no-judge`
   leaves them out), and OUT/adjudications.csv (all of them, with the file each went to) and
   OUT/adjudication_calls.csv.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from model_configs.registry import DEFAULT_REGISTRY_PATH
from postprocess.cli.logs import add_log_arguments, ingest

DEFAULT_JUDGES = DEFAULT_REGISTRY_PATH.with_name("adjudication_judges.yaml")  # shipped beside models.yaml


def add(subparsers: argparse._SubParsersAction) -> None:
    command = subparsers.add_parser("adjudicate", help="an LLM judge shown the image(s) settles the answers the "
                                                       "extraction rules left unparsed; written beside the logs")
    add_log_arguments(command, judge_option=False)
    command.add_argument("--out", required=True, type=Path, metavar="OUT",
                         help="output folder: the judge cache and the adjudications' summary")
    command.add_argument("--judges", type=Path, default=DEFAULT_JUDGES, metavar="YAML",
                         help="judges file (default: model_configs/adjudication_judges.yaml, the paper's GPT-5.4)")
    command.add_argument("--judge", metavar="NAME", help="the judge of the file to ask (default: its first)")
    command.add_argument("--judge-cache", type=Path, help="judge answer cache (default: OUT/judge_cache)")
    command.add_argument("--tasks-dir", type=Path, metavar="DIR",
                         help="task folder whose dataset blocks hold the questions (default: the package's tasks)")
    command.add_argument("--data", action="append", default=[], metavar="TASK=PATH",
                         help="a base task's local data, as `python -m lmms_eval_tasks export --data`")
    command.add_argument("--dry-run", action="store_true",
                         help="count the answers and the calls, print their estimated cost, ask nothing")
    command.set_defaults(handler=run_adjudicate_command)


def _judge(args: argparse.Namespace):
    from invscale.judges import choose_judges

    return choose_judges(args.judges, [args.judge] if args.judge else [])[0]


def _print_unparsed(rows, table) -> None:
    known = table[table["gold"].notna()]
    counts = rows.groupby("benchmark", sort=False).size()
    cells = ", ".join(f"{benchmark} {n}" for benchmark, n in counts.items())
    print(f"{len(rows)} answers the rules left unparsed ({len(rows) / max(1, len(known)):.2%} of {len(known):,} "
          f"answers with a known gold), in {rows['source_file'].nunique()} samples files" + (f": {cells}" if cells else ""))


def run_adjudicate_command(args: argparse.Namespace) -> int:
    import pandas as pd

    from lmms_eval_tasks.install import parse_overrides
    from postprocess.adjudication import from_logs
    from invscale.judges import JudgeError, progress_printer
    from postprocess.logs.imports import imported_files
    from postprocess.logs.questions import reload_questions

    judge = _judge(args)
    _, ingested = ingest(args)
    rows = from_logs.rows_to_judge(ingested.table)
    imported = rows["source_file"].isin(imported_files(ingested.runs))
    if imported.any():
        print(f"note: {int(imported.sum())} unparsed answers of imported files are not adjudicated: the judge is shown "
              "the question and its images from the task's data, which imported rows do not point to", file=sys.stderr)
        rows = rows[~imported].reset_index(drop=True)
    _print_unparsed(rows, ingested.table)
    if rows.empty:
        print("nothing to adjudicate")
        return 0
    shown = reload_questions(from_logs.wanted_questions(rows), args.tasks_dir, parse_overrides(args.data))
    items = from_logs.adjudication_requests(rows, shown)
    cache_dir = args.judge_cache or args.out / "judge_cache"
    estimate = from_logs.pending_calls(items, judge, cache_dir)
    print(estimate.line())
    if args.dry_run:
        return 0
    try:
        adjudications, calls = from_logs.adjudicate_rows(items, judge, cache_dir,
                                                         on_call=progress_printer({judge.name: estimate.calls}))
    except JudgeError as error:
        print(f"error: {error}\nCompleted calls are cached in {cache_dir}; rerun to continue.", file=sys.stderr)
        return 1
    files = from_logs.write_beside_logs(adjudications)
    args.out.mkdir(parents=True, exist_ok=True)
    adjudications.assign(adjudications_file=files).to_csv(args.out / "adjudications.csv", index=False)
    statuses = adjudications["judge_status"].value_counts()
    summary = {"judge": judge.name, "model": judge.model, "answers": len(adjudications), **calls,
               **{status: int(statuses.get(status, 0)) for status in ("settled", "no_answer", "unparsed")}}
    pd.DataFrame([summary]).to_csv(args.out / "adjudication_calls.csv", index=False)
    print(f"{judge.name}: {calls['requests']} requests, {calls['cached']} cached, {calls['made']} asked; of "
          f"{len(adjudications)} answers {summary['settled']} settled, {summary['no_answer']} commit to no answer, "
          f"{summary['unparsed']} verdicts unparsed after the retries")
    print(f"adjudications written beside the logs in {files.nunique()} file(s); summary: {args.out / 'adjudications.csv'}")
    return 0
