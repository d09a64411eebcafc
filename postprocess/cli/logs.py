"""The options every command that reads logs shares, reading the logs they name (lmms-eval folders, and
per-question tables and VLMEvalKit prediction files imported through postprocess/logs/imports/), and saying
on the console what ingestion skipped (runs not read, duplicate runs, lines skipped); `--strict` makes any
skipped run or row an error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from postprocess.logs.runs import DUPLICATE_RULES

SHOWN = 3  # problems named on one console line


class StrictError(ValueError):
    """--strict and something was skipped; the message names the first few."""


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
    judge_option, whether the judge's adjudications count). `required`: at least one of --logs, --table and
    --vlmevalkit must be given (checked when they are read)."""
    parser.set_defaults(logs_required=required)
    parser.add_argument("--logs", nargs="+", default=[], type=Path, metavar="DIR", help="lmms-eval output folders")
    parser.add_argument("--table", nargs="+", default=[], type=Path, metavar="FILE",
                        help="per-question tables (.parquet, .csv, .jsonl) of saved outputs: one row per model and "
                             "question (docs/importing-outputs.md), scored by the project's extraction")
    parser.add_argument("--vlmevalkit", nargs="+", default=[], type=Path, metavar="FILE",
                        help="VLMEvalKit prediction files <model>_<dataset>.xlsx/.tsv/.csv")
    parser.add_argument("--vlmevalkit-dataset", metavar="NAME",
                        help="the dataset of the --vlmevalkit files, when their names do not tell it (a dataset not "
                             "among the paper's, outside a folder named after the model)")
    parser.add_argument("--vlmevalkit-subtask-column", nargs="+", default=[], metavar="[DATASET=]COLUMN",
                        help="the subtask column of a VLMEvalKit dataset that is not one of the paper's (for the "
                             "paper's: the column the paper uses); DATASET=COLUMN for one dataset of several "
                             "(AfrimedQA=specialty LogicVista=skill), a bare COLUMN for the others")
    parser.add_argument("--mix-sources", action="store_true",
                        help="analyse a model whose rows come from more than one harness (lmms-eval logs, VLMEvalKit "
                             "files, tables) instead of stopping")
    parser.add_argument("--model-map", nargs="+", default=[], metavar="PATH=KEY",
                        help="map a model path in results.json to a registry key")
    parser.add_argument("--extra-models", nargs="+", default=[], type=Path, metavar="YAML",
                        help="model registry YAML files adding models to the bundled registry; a file named "
                             "extra_models.yaml in a --logs folder is read without this flag (the demo writes one)")
    parser.add_argument("--skip-unknown-models", action="store_true",
                        help="skip (and report) runs whose model matches no registry entry instead of failing")
    parser.add_argument("--duplicates", choices=DUPLICATE_RULES, default="newest",
                        help="when two runs of one model hold the same questions: keep the newest run's rows "
                             "(by the runs' own timestamps, never file ages), the oldest's, or stop with an error "
                             "(newest)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with an error when any run, file or line is skipped (duplicates included)")
    parser.add_argument("--cache-dir", type=Path,
                        help="reuse / store the ingested table here (report: also the drawn figures, and its outputs "
                             "for a rerun whose inputs, options and code are unchanged)")
    parser.add_argument("--refresh", action="store_true", help="with --cache-dir: ingest again and replace the entry")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on long steps (default: when stderr is a terminal)")
    if judge_option:
        parser.add_argument("--no-judge", action="store_true",
                            help="score as the extraction rules alone do: ignore the adjudications beside the logs "
                                 "and count the answers a judge settled during the run as unparsed")


def import_sources(args: argparse.Namespace) -> list:
    """The files to import that the options name (imports.ImportSource), tables first."""
    if not (args.table or args.vlmevalkit):
        return []  # without importing the importers (their scoring core and Arrow's readers: 0.05 s a run)
    from postprocess.logs.imports import ImportSource, split_vlmevalkit_name

    named = dict(item.split("=", 1) for item in args.vlmevalkit_subtask_column if "=" in item)
    plain = [item for item in args.vlmevalkit_subtask_column if "=" not in item]
    if len(plain) > 1:
        raise ValueError(f"--vlmevalkit-subtask-column: one bare COLUMN at most (the others DATASET=COLUMN), not "
                         f"{plain}")

    def subtask_column(path: Path) -> str | None:
        if not named:
            return plain[0] if plain else None
        return named.get(split_vlmevalkit_name(path, args.vlmevalkit_dataset)[1], plain[0] if plain else None)

    return [*(ImportSource(path, "table") for path in args.table),
            *(ImportSource(path, "vlmevalkit", args.vlmevalkit_dataset, subtask_column(path))
              for path in args.vlmevalkit)]


def inputs_named(args: argparse.Namespace) -> str:
    """The inputs the options name, for messages."""
    return ", ".join(map(str, [*args.logs, *args.table, *args.vlmevalkit]))


def show_progress(args: argparse.Namespace) -> bool:
    """--progress / --no-progress, else whether stderr is a terminal (no bars in CI logs or pipes)."""
    return sys.stderr.isatty() if args.progress is None else args.progress


def _where(row) -> str:
    import pandas as pd

    return row.file + ("" if pd.isna(row.line) else f":{row.line}")


def strict_check(result) -> None:
    """StrictError naming the first skipped runs or rows, if any."""
    skipped = result.problems[result.problems["action"] == "skipped"]
    if skipped.empty:
        return
    named = ", ".join(f"{_where(row)} ({row.kind}: {row.field if isinstance(row.field, str) else 'line'})"
                      for row in skipped.head(SHOWN).astype(object).itertuples())
    more = f" and {len(skipped) - SHOWN} more" if len(skipped) > SHOWN else ""
    raise StrictError(f"--strict: {len(skipped)} runs, files or lines were skipped: {named}{more}")


def console_notes(result, details: str) -> list[str]:
    """One line each for runs not read, runs missing questions they asked, models left without a row,
    duplicate runs and lines skipped; `details` says where the full list is."""
    from postprocess.logs.imports.audit import audit_notes, scoring_audit
    from postprocess.logs.ingest import QUESTIONS_LOST, RUN_PROBLEMS

    notes = audit_notes(scoring_audit(result.table)[0])
    problems = result.problems
    not_read = problems[problems["kind"].isin(RUN_PROBLEMS)].astype(object)
    if len(not_read):
        named = "; ".join(f"{row.file} ({row.kind}: {row.detail})" for row in not_read.head(SHOWN).itertuples())
        more = f"; and {len(not_read) - SHOWN} more" if len(not_read) > SHOWN else ""
        notes.append(f"warning: {len(not_read)} runs or samples files not read: {named}{more} ({details})")
    lost = problems[problems["kind"].isin(QUESTIONS_LOST)].astype(object)
    if len(lost):
        named = "; ".join(f"{row.model}: {row.file} ({row.kind}: {row.detail})" for row in lost.head(SHOWN).itertuples())
        more = f"; and {len(lost) - SHOWN} more" if len(lost) > SHOWN else ""
        notes.append(f"warning: {len(lost)} runs lack questions they asked, so their models have fewer questions "
                     f"to compare on: {named}{more} ({details})")
    ingested = result.runs[result.runs["status"] == "ingested"]
    rows_per_model = ingested.groupby("model", sort=False)["n_rows"].sum()
    empty = [str(model) for model, rows in rows_per_model.items() if rows == 0]
    if empty:
        notes.append(f"warning: {len(empty)} models have runs but no rows, so they drop out of the analysis: "
                     f"{', '.join(empty)} ({details})")
    pairs = result.duplicate_runs
    if len(pairs):
        named = "; ".join(f"{p.model}: kept {p.kept_run} over {p.dropped_run} ({p.duplicate_rows} questions, "
                          f"{p.answers_differ} answers differ, settings differ: {p.settings_differ})"
                          for p in pairs.head(SHOWN).itertuples())
        more = f"; and {len(pairs) - SHOWN} more pairs" if len(pairs) > SHOWN else ""
        notes.append(f"warning: {len(pairs)} pairs of runs hold the same questions ({int(pairs['duplicate_rows'].sum())} "
                     f"duplicate rows): {named}{more} ({details})")
    lines = problems[(problems["action"] == "skipped") & ~problems["kind"].isin(RUN_PROBLEMS)]
    if len(lines):
        kinds = sorted(lines["kind"].astype(str).value_counts().items(), key=lambda item: (-item[1], item[0]))
        first = lines.astype(object).iloc[0]
        notes.append(f"note: {len(lines)} lines skipped ({', '.join(f'{n} {kind}' for kind, n in kinds)}); "
                     f"first: {_where(first)}: {first['detail']} ({details})")
    return notes


def registry_files(logs: list[Path], extra_models: list[Path]) -> list[Path]:
    """--extra-models, then each --logs folder's own extra_models.yaml (said on stderr) not already among them."""
    from model_configs import REGISTRY_BESIDE_LOGS

    given = {Path(path).resolve() for path in extra_models}
    found = [path for path in dict.fromkeys(Path(folder).resolve() / REGISTRY_BESIDE_LOGS for folder in logs)
             if path.is_file() and path not in given]
    for path in found:
        print(f"models: also reading {path} (found in the logs folder)", file=sys.stderr)
    return [*extra_models, *found]


def read_logs(args: argparse.Namespace, details: str = "the report's problems.csv lists them"):
    """(registry, IngestResult) for the log options of add_log_arguments, with the judge's adjudications
    kept beside the logs merged into the table (postprocess/logs/adjudications.py), or with --no-judge
    every answer a judge settled unparsed again."""
    registry, result, _ = read_judged_logs(args, details)
    return registry, result


def read_judged_logs(args: argparse.Namespace, details: str = "the report's problems.csv lists them"):
    """read_logs, with the merge's account of each adjudication (None with --no-judge)."""
    from dataclasses import replace

    from postprocess.logs.adjudications import apply_adjudications, rules_only

    registry, result = ingest(args, details)
    if args.no_judge:
        return registry, replace(result, table=rules_only(result.table)), None
    merged = apply_adjudications(result.table, args.logs)
    return registry, replace(result, table=merged.table), merged


def ingest(args: argparse.Namespace, details: str = "the report's problems.csv lists them"):
    """(registry, IngestResult) of the logs as lmms-eval wrote them (answers settled during the run included);
    prints what was skipped to stderr (`details` says where the full list is) or, with --strict, raises
    StrictError."""
    import hashlib
    from dataclasses import replace

    from model_configs import load_registry
    from postprocess.logs.cache import load_or_import, load_or_ingest
    from postprocess.logs.ingest import ingest_logs

    registry = load_registry(extra=registry_files(args.logs, args.extra_models))
    sources = import_sources(args)
    if not args.logs and not sources and getattr(args, "logs_required", True):
        raise ValueError("nothing to read: give lmms-eval folders (--logs), per-question tables (--table) or "
                         "VLMEvalKit prediction files (--vlmevalkit)")
    overrides, strict = _model_map(args.model_map), not args.skip_unknown_models
    options = {"model_overrides": overrides, "strict": strict, "progress": show_progress(args),
               "duplicates": args.duplicates}
    result = None
    if args.logs or not sources:
        if args.cache_dir:
            result = load_or_ingest(args.logs, args.cache_dir, registry, refresh=args.refresh, **options)
        else:
            result = ingest_logs(args.logs, registry, **options)
    if sources:
        from postprocess.logs.imports import combine, import_outputs

        if args.cache_dir:
            imported = load_or_import(sources, args.cache_dir, registry, overrides, strict, refresh=args.refresh)
        else:
            imported = import_outputs(sources, registry, overrides, strict)
        keys = [part.fingerprint for part in (result, imported) if part is not None]
        result = combine(result, imported, registry, mix_sources=args.mix_sources)
        if result.fingerprint is None and keys and None not in keys:  # both parts read through the cache
            result = replace(result, fingerprint=hashlib.sha256("\0".join(keys).encode()).hexdigest())
    if args.strict:
        strict_check(result)
    for note in console_notes(result, details):
        print(note, file=sys.stderr)
    return registry, result
