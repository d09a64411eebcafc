"""`taxonomy`: why the larger model fails, classified by two blinded LLM judges (inverse-scaling paper,
Section 5.6, Appendix G.1; postprocess/inverse_scaling/taxonomy/).

  python -m postprocess taxonomy --logs DIR [DIR ...] --out OUT [--judges YAML] [--tasks-dir DIR]
      [--data TASK=PATH ...] [--per-case 10 --family-cap 600 --allocation equal|proportional
      --dataset-quota BENCHMARK=N ... --seed 0 --sides paper|random] [--min-n ... (as report)]
      [--judge NAME ...] [--judge-cache DIR] [--dry-run]

1. reads the logs and finds the cases (the analysis options as for `report`);
2. draws the sample and prints the numbers drawn per family and dataset;
3. reloads each sampled question and its images from the task's data (--tasks-dir: a task folder,
   default the package's tasks, i.e. the hub datasets; --data: a local copy, as `lmms_eval_tasks export`);
4. --dry-run: prints each judge's calls still to make with their estimated cost, and stops;
5. asks the judges (model_configs/taxonomy_judges.yaml by default: GPT-5.4 and Claude Opus 4.6,
   temperature 0, 200 tokens), caching every call (a rerun resumes), and writes the verdicts, the
   questions shown, the sample and its strata, and the tables (OUT/tables/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from model_configs.registry import DEFAULT_REGISTRY_PATH
from postprocess.cli.logs import add_log_arguments, inputs_named, read_logs
from postprocess.cli.report import add_analysis_arguments, analysis_parameters
from postprocess.inverse_scaling.parameters import TaxonomyParameters

DEFAULTS = TaxonomyParameters()
DEFAULT_JUDGES = DEFAULT_REGISTRY_PATH.with_name("taxonomy_judges.yaml")  # shipped beside models.yaml


def _quota(text: str) -> tuple[str, int]:
    benchmark, separator, count = text.rpartition("=")
    if not separator or not benchmark or not count.isdigit():
        raise argparse.ArgumentTypeError(f"--dataset-quota expects BENCHMARK=N (N a whole number), got {text!r}")
    return benchmark, int(count)


def add(subparsers: argparse._SubParsersAction) -> None:
    command = subparsers.add_parser("taxonomy", help="error taxonomy of the cases' flips by two blinded LLM judges "
                                                     "(Section 5.6)")
    add_log_arguments(command)
    command.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    add_analysis_arguments(command)
    command.add_argument("--judges", type=Path, default=DEFAULT_JUDGES, metavar="YAML",
                         help="judges file (default: model_configs/taxonomy_judges.yaml, the paper's two judges)")
    command.add_argument("--judge", nargs="+", default=[], metavar="NAME", help="only these judges of the file")
    command.add_argument("--judge-cache", type=Path, help="judge answer cache (default: OUT/judge_cache)")
    command.add_argument("--tasks-dir", type=Path, metavar="DIR",
                         help="task folder whose dataset blocks hold the questions (default: the package's tasks)")
    command.add_argument("--data", action="append", default=[], metavar="TASK=PATH",
                         help="a base task's local data, as `python -m lmms_eval_tasks export --data`")
    command.add_argument("--per-case", type=int, default=DEFAULTS.per_case,
                         help=f"flip questions per case, at most ({DEFAULTS.per_case})")
    command.add_argument("--family-cap", type=int, default=DEFAULTS.family_cap,
                         help=f"questions per family, at most ({DEFAULTS.family_cap})")
    command.add_argument("--allocation", choices=["equal", "proportional"], default=DEFAULTS.allocation,
                         help=f"how a family's cap is spread over its datasets ({DEFAULTS.allocation})")
    command.add_argument("--dataset-quota", nargs="+", default=[], type=_quota, metavar="BENCHMARK=N",
                         help="at most N questions of this dataset per family")
    command.add_argument("--seed", type=int, default=DEFAULTS.seed, help=f"sampling and side seed ({DEFAULTS.seed})")
    command.add_argument("--sides", choices=["paper", "random"], default=DEFAULTS.sides,
                         help="paper: the correct model is Model A (G.1); random: a seeded coin per question")
    command.add_argument("--dry-run", action="store_true",
                         help="draw the sample, print the calls each judge would make and their cost, make none")
    command.set_defaults(handler=run_taxonomy_command)


def _judges(args: argparse.Namespace):
    from invscale.judges import choose_judges

    return choose_judges(args.judges, args.judge)


def _print_strata(strata) -> None:
    for family, rows in strata.groupby("family", sort=False):
        cells = ", ".join(f"{b} {d}/{c}" for b, d, c in zip(rows["benchmark"], rows["drawn"], rows["candidates"]))
        print(f"{family}: drew {int(rows['drawn'].sum())} of {int(rows['flips'].sum())} flips in "
              f"{int(rows['cases'].sum())} cases ({int(rows['degenerate'].sum())} degenerate left out); "
              f"drawn/candidates: {cells}")
    print(f"sample: {int(strata['drawn'].sum())} questions")


def run_taxonomy_command(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.install import parse_overrides
    from postprocess.human.task_sets import VERDICT_LABELS
    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.inverse_scaling.taxonomy import judging, numbers, sample
    from postprocess.logs.questions import reload_questions
    from invscale.judges import JudgeError, progress_printer
    from postprocess.render.tables import write_table
    from postprocess.render.taxonomy_tables import taxonomy_tables

    params = TaxonomyParameters(per_case=args.per_case, family_cap=args.family_cap, allocation=args.allocation,
                                dataset_quotas=tuple(args.dataset_quota), seed=args.seed, sides=args.sides)
    judges = _judges(args)
    registry, ingested = read_logs(args)
    benchmarks = ingested.table[ingested.table["benchmark"] != "CAIT"]
    if benchmarks.empty:
        raise ValueError(f"no benchmark rows under {inputs_named(args)}: no cases to classify")
    analysis = run_analysis(benchmarks, registry.models_frame(), analysis_parameters(args))
    if analysis.cases.empty:
        raise ValueError("the analysis found no cases: no flips to classify")
    drawn = sample.sample_flips(sample.flip_questions(benchmarks, analysis.cases, args.variant), params,
                                analysis.families)
    _print_strata(drawn.strata)
    if drawn.items.empty:
        raise ValueError("the sample is empty (every flip was degenerate, or the caps are 0)")
    sided = judging.assign_sides(drawn.items, params)
    wanted = [(b, s, q, args.variant) for b, s, q in zip(sided["benchmark"], sided["split"], sided["question_id"])]
    shown = reload_questions(wanted, args.tasks_dir, parse_overrides(args.data))
    cache_dir = args.judge_cache or args.out / "judge_cache"
    estimates = judging.pending_calls(sided, shown, args.variant, judges, cache_dir)
    for estimate in estimates:
        print(estimate.line())
    if args.dry_run:
        return 0
    try:
        result = judging.run_taxonomy(sided, shown, args.variant, judges, cache_dir,
                                      on_call=progress_printer({e.judge: e.calls for e in estimates}))
    except JudgeError as error:
        print(f"error: {error}\nCompleted calls are cached in {cache_dir}; rerun to continue.", file=sys.stderr)
        return 1
    paths = judging.write_taxonomy(result, drawn, sided, args.out)
    figures = numbers.taxonomy_numbers(result.verdicts, analysis.families)
    for table in taxonomy_tables(figures, drawn.strata):
        write_table(table, args.out / "tables")
    overall = figures["by_family"][figures["by_family"]["family"] == "All"]
    for row in overall.to_dict("records"):
        labels = ", ".join(f"{label} {row[label]}" for label in VERDICT_LABELS)
        print(f"{row['judge']}: {row['questions']} questions: {labels}")
    for row in figures["agreement"].itertuples(index=False):
        print(f"{row.judge_a} vs. {row.judge_b}: agree on {row.agreement:.1%} of {row.labelled_by_both} questions "
              f"both labelled, Cohen's kappa {row.cohen_kappa:.2f}")
    print(f"verdicts: {paths['verdicts']}; tables: {args.out / 'tables'}")
    return 0
