"""Read lmms-eval `--log_samples` output into one per-question table.

`ingest_logs` walks the given folders recursively (run files: postprocess/logs/runs.py) and applies
these rules.

Runs
- A run is a `*_results.json`; its samples files are the `<PREFIX>_samples_<task>.jsonl` files in the
  same folder with the same PREFIX.
- Its model is the `pretrained=` (else `model=`) entry of results.json `config.model_args` (a string
  "pretrained=/x/y,device_map=cpu" or a dict), resolved with the registry plus `model_overrides`
  ({path or last path component: model key}, the CLI's `--model-map PATH=KEY`).
- A run whose model cannot be determined (unknown path, no model path, unreadable results.json) raises
  UnresolvedModelError naming every such results file and model path and the `--model-map` fix; with
  strict=False those runs are skipped and reported (unresolved_model / bad_results_file).
- A samples file without a results.json of the same PREFIX beside it (lmms-eval was killed, or the
  file was copied alone) is an orphan: not ingested, reported (orphan_samples).
- A task listed in results.json without its samples file is reported (missing_samples).

Lines: each problem is reported in `problems` with file and 1-based line; nothing is dropped silently.
- Blank lines are ignored (counted in counts["blank_lines"]).
- A last line without a newline that is not valid JSON is a write cut short by a killed run: skipped
  (truncated_line). Any other line that is not a JSON object: skipped (malformed_json).
- A line without `per_question`: skipped (missing_per_question).
- A record without `response` takes it from the line's `filtered_resps` (else `resps`), accepted as
  "x", ["x"] or [["x"]]: kept and reported (response_from_filtered_resps).
- A record failing lmms_eval_tasks.record.validate_record: skipped (invalid_record, with its message).
- Rows are keyed by (model, benchmark, split, variant, question_id). Samples files are read in
  (file mtime, path) order, lines in file order, and the FIRST occurrence of a key is kept; later ones
  are skipped and reported (duplicate) with the kept row's file:line and whether their response,
  prediction or correct differ.

Table (one row per kept record): model, family, size, total_params, active_params, moe, encoder_tier
(from the registry); benchmark, split, subtask, question_id, variant, gold, response, prediction,
correct, match (the record contract); rule, kind (optional record fields: extraction rule and question
kind, null when absent); extra (any other record fields, JSON-encoded, null when none); task, doc_id,
source_file, source_line (provenance). `gold` is text: lists are JSON-encoded, null stays null.
`correct` is pandas' nullable boolean. Low-cardinality text columns are categoricals ordered like the
registry (models by family, then size) and record.BENCHMARKS / SPLITS / MATCH_KINDS; free text
(question_id, gold, response, prediction, extra) uses pandas' string dtype.

Speed: parsing a line costs ~11 us with the stdlib parser on this project's machines (orjson measured
slower there), so files are parsed in worker processes (`workers`, default: one per core for inputs
over 16 MB, fork start method, Linux only) and merged in the order above.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lmms_eval_tasks.record import BENCHMARKS, MATCH_KINDS, REQUIRED_FIELDS, SPLITS, RecordError, validate_record
from model_configs import ModelSpec, Registry
from postprocess.logs.runs import RESULTS_SUFFIX, SAMPLES_MARKER, RunFacts, find_runs, read_results

PARALLEL_MIN_BYTES = 16 * 2**20  # below this, starting workers costs more than it saves

TABLE_COLUMNS = [
    "model", "family", "size", "total_params", "active_params", "moe", "encoder_tier",
    "benchmark", "split", "subtask", "question_id", "variant", "gold", "response", "prediction", "correct",
    "match", "rule", "kind", "extra", "task", "doc_id", "source_file", "source_line",
]
ROW_KEY = ["model", "benchmark", "split", "variant", "question_id"]
RUNS_COLUMNS = [
    "results_file", "timestamp", "model", "model_path", "lmms_eval_model", "tasks", "n_samples_files",
    "n_lines", "n_rows", "n_skipped", "status", "elapsed_s",
]
RUN_TASK_COLUMNS = ["results_file", "model", "task", "effective", "output_tokens"]
PROBLEM_COLUMNS = ["kind", "action", "file", "line", "detail", "model", "benchmark"]

# kind -> what happened to the data (rules in the module docstring)
PROBLEM_ACTIONS = {
    "unresolved_model": "skipped",
    "bad_results_file": "skipped",
    "orphan_samples": "skipped",
    "missing_samples": "reported",
    "truncated_line": "skipped",
    "malformed_json": "skipped",
    "missing_per_question": "skipped",
    "invalid_record": "skipped",
    "duplicate": "skipped",
    "response_from_filtered_resps": "kept",
}
# Optional record fields with their own categorical columns; other non-contract fields go to `extra`.
PROMOTED_FIELDS = ("rule", "kind")
_NOT_EXTRA = frozenset(REQUIRED_FIELDS) | frozenset(PROMOTED_FIELDS)
_TEXT_COLUMNS = ["benchmark", "split", "subtask", "question_id", "variant", "gold", "response", "prediction",
                 "match", "rule", "kind", "extra"]
_ROW_FIELDS = (*_TEXT_COLUMNS, "correct", "doc_id", "source_line", "response_filled")
_encode_extra = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode


class UnresolvedModelError(ValueError):
    """Runs whose model cannot be determined; the message names each results file and the fix."""


@dataclass
class IngestResult:
    table: pd.DataFrame
    runs: pd.DataFrame  # RUNS_COLUMNS, one row per results.json
    problems: pd.DataFrame
    run_tasks: pd.DataFrame  # RUN_TASK_COLUMNS, one row per task a results.json lists (its n-samples)
    counts: dict[str, int] = field(default_factory=dict)
    from_cache: bool = False


@dataclass
class _Run:
    results_path: Path
    samples: dict[str, Path]
    facts: RunFacts
    spec: ModelSpec | None = None
    failure: tuple[str, str] | None = None  # (problem kind, detail) when the model is not determined

    @property
    def prefix(self) -> str:
        return self.facts.prefix

    @property
    def model_path(self) -> str | None:
        return self.facts.model_path


@dataclass
class _ParsedFile:
    """What one samples file holds: candidate rows before de-duplication, and its line problems."""
    rows: pd.DataFrame
    problems: list[tuple[str, int, str, str | None]]  # (kind, line, detail, benchmark)
    lines: int
    blank_lines: int


# ---------------------------------------------------------------------------------------------- runs
def _describe_run(run: _Run, registry: Registry) -> None:
    """Fill the spec (or failure) of a run from its results.json facts."""
    if run.facts.problem:
        run.failure = ("bad_results_file", run.facts.problem)
    elif run.model_path is None:
        run.failure = ("bad_results_file", "config.model_args has no pretrained=, model= or model_version= entry")
    else:
        run.spec = registry.resolve(run.model_path)
        if run.spec is None:
            run.failure = ("unresolved_model", f"model path {run.model_path!r} matches no registry model")


def _unresolved_message(failed: list[_Run]) -> str:
    lines = [f"{len(failed)} run(s) have no known model, so their rows cannot be attributed:"]
    lines += [f"  {run.results_path}: {run.failure[1]}" for run in failed]
    example = next((run.model_path for run in failed if run.model_path), "/path/to/model")
    lines.append(f"Map each model path to a registry key with --model-map PATH=KEY (e.g. --model-map "
                 f"'{example}=Qwen3-VL-2B'), add the model to an extra models YAML (--extra-models), "
                 "or skip these runs (--skip-unknown-models; strict=False).")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- lines
def _response_from_resps(line: dict) -> str | None:
    """The single response in filtered_resps (else resps): "x", ["x"] or [["x"]]; None otherwise."""
    for name in ("filtered_resps", "resps"):
        value = line.get(name)
        while isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, str):
            return value
    return None


def _as_text(value: Any) -> str | None:
    return value if value is None or type(value) is str else str(value)


def parse_samples_file(path: str | Path) -> _ParsedFile:
    """Every valid record of one samples file as candidate rows, plus the problems of its other lines."""
    kept: list[tuple] = []  # one tuple per record, fields in _ROW_FIELDS order
    problems: list[tuple[str, int, str, str | None]] = []
    decode = json.JSONDecoder().decode  # on str: skips json.loads' per-call encoding detection
    lines = blank = 0
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if raw.isspace():
                blank += 1
                continue
            lines += 1
            try:
                obj = decode(raw.decode("utf-8"))
            except ValueError as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                if raw.endswith(b"\n"):
                    problems.append(("malformed_json", line_no, f"not valid JSON: {err}", None))
                else:
                    problems.append(("truncated_line", line_no,
                                     f"last line cut short ({len(raw)} bytes, no newline): {err}", None))
                continue
            if type(obj) is not dict:
                problems.append(("malformed_json", line_no, f"line is a JSON {type(obj).__name__}, not an object",
                                 None))
                continue
            record = obj.get("per_question")
            if record is None:
                problems.append(("missing_per_question", line_no, f"no per_question (doc_id {obj.get('doc_id')!r})",
                                 None))
                continue
            filled = False
            if type(record) is dict and "response" not in record:
                response = _response_from_resps(obj)
                if response is not None:
                    record["response"] = response
                    filled = True
            try:
                validate_record(record)
            except RecordError as err:
                benchmark = record.get("benchmark") if type(record) is dict else None
                problems.append(("invalid_record", line_no, str(err), _as_text(benchmark)))
                continue
            gold = record["gold"]
            extra_fields = record.keys() - _NOT_EXTRA
            doc_id = obj.get("doc_id")
            kept.append((
                record["benchmark"], record["split"], record["subtask"], record["question_id"], record["variant"],
                gold if gold is None or type(gold) is str else json.dumps(gold, ensure_ascii=False),
                record["response"], record["prediction"], record["match"],
                _as_text(record.get("rule")), _as_text(record.get("kind")),
                _encode_extra({k: record[k] for k in extra_fields}) if extra_fields else None,
                record["correct"], doc_id if type(doc_id) is int else None, line_no, filled,
            ))
    columns = dict(zip(_ROW_FIELDS, zip(*kept))) if kept else dict.fromkeys(_ROW_FIELDS, ())
    rows = pd.DataFrame({name: pd.array(list(columns[name]), dtype="str") for name in _TEXT_COLUMNS})
    correct = np.array(columns["correct"], dtype=object)
    unknown = np.equal(correct, None)
    rows["correct"] = pd.arrays.BooleanArray(np.where(unknown, False, correct).astype(bool), unknown.astype(bool))
    rows["doc_id"] = pd.array(list(columns["doc_id"]), dtype="Int64")
    rows["source_line"] = np.array(columns["source_line"], dtype=np.int32)
    rows["response_filled"] = np.array(columns["response_filled"], dtype=bool)
    return _ParsedFile(rows, problems, lines, blank)


@contextmanager
def _file_parser(workers: int) -> Iterator[Callable[[list[str]], Iterator[_ParsedFile]]]:
    """A map of parse_samples_file that keeps the input order: in `workers` forked processes when
    workers > 1 (forked before any progress-bar thread exists), else in this process."""
    if workers <= 1:
        yield lambda paths: map(parse_samples_file, paths)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield lambda paths: pool.imap(parse_samples_file, paths)


def _default_workers(total_bytes: int, n_files: int) -> int:
    if not sys.platform.startswith("linux") or total_bytes < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), n_files))


# ---------------------------------------------------------------------------------------------- table
def _categorical(values: Any, order: Iterable[str] = ()) -> pd.Categorical:
    """Categorical of the present values: those in `order` first, in that order, then the rest sorted."""
    categorical = pd.Categorical(values)
    present = set(categorical.categories)
    first = [v for v in dict.fromkeys(order) if v in present]
    return categorical.reorder_categories(first + sorted(present - set(first)))


def _repeat_categorical(per_file: list, counts: np.ndarray, order: Iterable[str] = ()) -> pd.Categorical:
    small = _categorical(per_file, order)
    return pd.Categorical.from_codes(np.repeat(small.codes, counts), categories=small.categories)


class _Problems:
    """Problem rows, sorted on output by (file read order, line); run-level problems come first."""

    def __init__(self) -> None:
        self._rows: list[tuple] = []

    def add(self, order: int, kind: str, file: Path | str, line: int | None, detail: str,
            model: str | None = None, benchmark: str | None = None) -> None:
        self._rows.append((order, line or 0, kind, PROBLEM_ACTIONS[kind], str(file), line, detail, model, benchmark))

    def counts(self) -> Counter:
        return Counter(row[2] for row in self._rows)

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame([row[2:] for row in sorted(self._rows, key=lambda r: r[:2])], columns=PROBLEM_COLUMNS)
        frame["kind"] = _categorical(frame["kind"].astype(object), PROBLEM_ACTIONS)
        frame["line"] = frame["line"].astype("Int64")
        for column in ("action", "file", "detail", "model", "benchmark"):
            frame[column] = frame[column].astype("str")
        return frame


@dataclass
class _SamplesFile:
    mtime_ns: int
    path: str
    run: _Run
    task: str


def _read_files(files: list[_SamplesFile], workers: int, progress: bool, problems: _Problems
                ) -> tuple[pd.DataFrame, Counter, int]:
    """Candidate rows of all files in order (column `_order` = file index), lines per run, blank lines."""
    parts = []
    lines_per_run: Counter = Counter()
    blank_lines = 0
    with _file_parser(workers) as parse:
        parsed_files = parse([f.path for f in files])
        if progress:
            from tqdm.auto import tqdm

            parsed_files = tqdm(parsed_files, total=len(files), unit="file", desc="ingest logs")
        for order, (file, parsed) in enumerate(zip(files, parsed_files)):
            for kind, line, detail, benchmark in parsed.problems:
                problems.add(order, kind, file.path, line, detail, file.run.spec.key, benchmark)
            parsed.rows["_order"] = order
            parts.append(parsed.rows)
            lines_per_run[file.run.results_path] += parsed.lines
            blank_lines += parsed.blank_lines
    rows = pd.concat(parts, ignore_index=True) if parts else _empty_rows()
    rows_per_file = np.array([len(part) for part in parts], dtype=np.int64)
    rows["model"] = _repeat_categorical([f.run.spec.key for f in files], rows_per_file)
    rows["source_file"] = _repeat_categorical([f.path for f in files], rows_per_file)
    return rows, lines_per_run, blank_lines


def _empty_rows() -> pd.DataFrame:
    """The candidate-row frame of a file without records (keeps dtypes when nothing was read)."""
    empty = parse_samples_file(os.devnull).rows
    empty["_order"] = np.zeros(0, dtype=np.int64)
    return empty


def _drop_duplicates(rows: pd.DataFrame, problems: _Problems) -> pd.DataFrame:
    """Rows without later occurrences of a ROW_KEY; reports those and the kept filled-in responses."""
    key_codes = rows.groupby(ROW_KEY, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    _, first_of_key = np.unique(key_codes, return_index=True)
    first_row = first_of_key[key_codes] if len(rows) else np.zeros(0, dtype=np.int64)
    duplicate = first_row != np.arange(len(rows))
    duplicates = np.flatnonzero(duplicate)
    filled = np.flatnonzero(rows["response_filled"].to_numpy() & ~duplicate)
    if len(duplicates) or len(filled):
        where = rows[["_order", "source_line", "source_file", "model", "benchmark"]].astype(object).to_numpy()
        for row, detail in zip(duplicates, _duplicate_details(rows, duplicates, first_row[duplicates])):
            order, line, file, model, benchmark = where[row]
            problems.add(order, "duplicate", file, line, detail, model, benchmark)
        for row in filled:
            order, line, file, model, benchmark = where[row]
            problems.add(order, "response_from_filtered_resps", file, line,
                         "per_question had no response; taken from filtered_resps", model, benchmark)
    return rows[~duplicate].reset_index(drop=True)


def _duplicate_details(rows: pd.DataFrame, duplicates: np.ndarray, firsts: np.ndarray) -> list[str]:
    """For each duplicate row: where the kept row is and which of response/prediction/correct differ."""
    differing = {}
    for name in ("response", "prediction", "correct"):
        later = rows[name].iloc[duplicates].reset_index(drop=True)
        kept = rows[name].iloc[firsts].reset_index(drop=True)
        same = (later == kept).fillna(False).astype(bool) | (later.isna() & kept.isna())
        differing[name] = ~same.to_numpy()
    files = rows["source_file"].astype(object).to_numpy()[firsts]
    lines = rows["source_line"].to_numpy()[firsts]
    question_ids = rows["question_id"].to_numpy(dtype=object)[duplicates]
    variants = rows["variant"].to_numpy(dtype=object)[duplicates]
    details = []
    for i in range(len(duplicates)):
        names = [name for name, flags in differing.items() if flags[i]]
        content = f"differs in {', '.join(names)}" if names else "identical content"
        details.append(f"duplicate of {files[i]}:{lines[i]} (question_id {question_ids[i]!r}, "
                       f"variant {variants[i]!r}); {content}")
    return details


def _finish_table(table: pd.DataFrame, files: list[_SamplesFile], registry: Registry) -> pd.DataFrame:
    """Add the registry's model columns per file and make the low-cardinality columns categorical."""
    kept_per_file = np.bincount(table["_order"].to_numpy(), minlength=len(files))
    files_with_rows = [f for f, n in zip(files, kept_per_file) if n]
    counts = kept_per_file[kept_per_file > 0]
    specs = [f.run.spec for f in files_with_rows]
    model_order = [spec.key for family in registry.families for spec in registry.family_order(family)]
    table["model"] = _repeat_categorical([s.key for s in specs], counts, model_order)
    table["family"] = _repeat_categorical([s.family for s in specs], counts, registry.families)
    table["size"] = _repeat_categorical([s.size for s in specs], counts, [registry.get(k).size for k in model_order])
    table["encoder_tier"] = _repeat_categorical([s.encoder_tier for s in specs], counts)
    for column, dtype in (("total_params", "int64"), ("active_params", "int64"), ("moe", "bool")):
        table[column] = np.repeat(np.array([getattr(s, column) for s in specs], dtype=dtype), counts)
    table["task"] = _repeat_categorical([f.task for f in files_with_rows], counts)
    table["source_file"] = table["source_file"].cat.remove_unused_categories()
    for column, order in (("benchmark", BENCHMARKS), ("split", SPLITS), ("subtask", ()), ("variant", ()),
                          ("match", MATCH_KINDS), ("rule", ()), ("kind", ())):
        table[column] = _categorical(table[column], order)
    return table[TABLE_COLUMNS]


def _runs_frame(runs: list[_Run], table: pd.DataFrame, lines_per_run: Counter) -> pd.DataFrame:
    source_of_results = {str(f): run.results_path for run in runs for f in run.samples.values()}
    rows_per_file = table["source_file"].value_counts()
    rows_per_run = Counter()
    for file, n in rows_per_file.items():
        rows_per_run[source_of_results[file]] += int(n)
    frame = pd.DataFrame([{
        "results_file": str(run.results_path), "timestamp": run.prefix,
        "model": run.spec.key if run.spec else None, "model_path": run.model_path,
        "lmms_eval_model": run.facts.lmms_eval_model, "tasks": ",".join(sorted(run.samples)),
        "n_samples_files": len(run.samples), "n_lines": lines_per_run[run.results_path],
        "n_rows": rows_per_run[run.results_path],
        "n_skipped": lines_per_run[run.results_path] - rows_per_run[run.results_path],
        "status": "ingested" if not run.failure else f"skipped: {run.failure[0]}",
        "elapsed_s": run.facts.elapsed_s,
    } for run in runs], columns=RUNS_COLUMNS)
    return frame.astype({"n_samples_files": "int64", "n_lines": "int64", "n_rows": "int64", "n_skipped": "int64",
                         "elapsed_s": "float64"})


def _run_tasks_frame(runs: list[_Run]) -> pd.DataFrame:
    """Per ingested run and task it lists: the questions asked and the output tokens (for timing)."""
    frame = pd.DataFrame([(str(run.results_path), run.spec.key, task, effective, run.facts.output_tokens.get(task))
                          for run in runs if not run.failure for task, effective in run.facts.effective.items()],
                         columns=RUN_TASK_COLUMNS)
    return frame.astype({"effective": "Int64", "output_tokens": "float64"})


def ingest_logs(dirs: Iterable[Path | str], registry: Registry, model_overrides: dict[str, str] | None = None,
                progress: bool = False, strict: bool = True, workers: int | None = None) -> IngestResult:
    """Read every lmms-eval run under `dirs` (rules in the module docstring).

    model_overrides: {model path or its last component: registry key} for paths the registry does not
    know. strict: raise UnresolvedModelError on runs without a known model (else skip and report them).
    workers: parser processes (None: automatic, 1: in this process).
    """
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    found, orphans = find_runs(dirs)
    runs = [_Run(files.results_path, files.samples, read_results(files.results_path)) for files in found]
    for run in runs:
        _describe_run(run, registry)
    failed = [run for run in runs if run.failure]
    if failed and strict:
        raise UnresolvedModelError(_unresolved_message(failed))
    good = [run for run in runs if not run.failure]

    problems = _Problems()
    for run in failed:
        problems.add(-1, run.failure[0], run.results_path, None,
                     f"{run.failure[1]}; {len(run.samples)} samples file(s) not ingested "
                     "(--model-map PATH=KEY maps it)")
    for path in orphans:
        problems.add(-1, "orphan_samples", path, None,
                     f"no {path.name.split(SAMPLES_MARKER)[0]}{RESULTS_SUFFIX} beside it (killed run?); not ingested")
    for run in good:
        for task in sorted(set(run.facts.tasks) - set(run.samples)):
            problems.add(-1, "missing_samples", run.results_path, None,
                         f"results.json lists task {task!r} but {run.prefix}{SAMPLES_MARKER}{task}.jsonl is absent",
                         run.spec.key)

    # (mtime, path) order decides which of two duplicate rows is kept
    files = sorted((_SamplesFile(path.stat().st_mtime_ns, str(path), run, task)
                    for run in good for task, path in run.samples.items()), key=lambda f: (f.mtime_ns, f.path))
    if workers is None:
        workers = _default_workers(sum(os.path.getsize(f.path) for f in files), len(files))
    rows, lines_per_run, blank_lines = _read_files(files, workers, progress, problems)
    table = _finish_table(_drop_duplicates(rows, problems), files, registry)

    kinds = problems.counts()
    lines_read = sum(lines_per_run.values())
    counts = {
        "results_files": len(runs), "runs_ingested": len(good), "runs_skipped": len(failed),
        "samples_files": len(files), "orphan_samples_files": len(orphans), "lines_read": lines_read,
        "rows": len(table), "lines_skipped": lines_read - len(table), "blank_lines": blank_lines,
        **{kind: kinds[kind] for kind in PROBLEM_ACTIONS},
    }
    return IngestResult(table=table, runs=_runs_frame(runs, table, lines_per_run), problems=problems.frame(),
                        run_tasks=_run_tasks_frame(runs), counts=counts)


__all__ = [
    "PROBLEM_ACTIONS",
    "PROBLEM_COLUMNS",
    "PROMOTED_FIELDS",
    "ROW_KEY",
    "RUNS_COLUMNS",
    "RUN_TASK_COLUMNS",
    "TABLE_COLUMNS",
    "IngestResult",
    "UnresolvedModelError",
    "ingest_logs",
    "parse_samples_file",
]
