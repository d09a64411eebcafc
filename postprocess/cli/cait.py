"""`cait-reeval`: the CAIT LLM re-evaluation from the models' descriptions (postprocess/cait/reeval.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from postprocess.cli.logs import add_log_arguments, read_logs


def add(subparsers: argparse._SubParsersAction, name: str = "cait-reeval") -> None:
    reeval = subparsers.add_parser(name, help="CAIT LLM re-evaluation: judges answer from the models' "
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
    reeval.set_defaults(handler=run_cait_reeval)


def run_cait_reeval(args: argparse.Namespace) -> int:
    from postprocess.cait.reeval import pending_calls, run_reeval, write_reeval
    from invscale.judges import JudgeError, choose_judges, progress_printer

    judges = choose_judges(args.judges, args.judge)
    _, ingested = read_logs(args)
    cache_dir = args.judge_cache or args.out / "judge_cache"
    estimates = pending_calls(ingested.table, judges, cache_dir, not args.no_gt_prompt)
    if args.dry_run:
        for estimate in estimates:
            print(estimate.line())
        return 0
    try:
        result = run_reeval(ingested.table, judges, cache_dir, include_gt_prompt=not args.no_gt_prompt,
                            on_call=progress_printer({e.judge: e.calls for e in estimates}))
    except JudgeError as error:
        print(f"error: {error}\nCompleted calls are cached in {cache_dir}; rerun to continue.", file=sys.stderr)
        return 1
    paths = write_reeval(result, args.out)
    for call in result.calls.itertuples():
        print(f"{call.judge}: {call.prompts} prompts, {call.cached} cached, {call.made} asked")
    print(f"re-evaluation: {paths['markdown']}")
    return 0
