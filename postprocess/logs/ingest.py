"""Read lmms-eval `--log_samples` output into one per-question table.

`ingest_logs` walks the given folders recursively (run files: postprocess/logs/runs.py) and applies
these rules.

Runs
- A run is a `*_results.json`; its samples files are the `<PREFIX>_samples_<task>.jsonl` files in the
  same folder with the same PREFIX.
- Its model is the `pretrained=` (else `model=`) entry of results.json `config.model_args` (a string
  "pretrained=/x/y,device_map=cpu" or a dict), resolved with the registry plus `model_overrides`
  ({path or last path component: model key}, the CLI's `--model-map PATH=KEY`).
- A run whose model cannot be determined (unknown path, no model path) raises UnresolvedModelError
  naming every such results file and model path and the `--model-map` fix; with strict=False those runs
  are skipped and reported (unresolved_model).
- A results.json that cannot be read or is not the shape lmms-eval writes (runs.read_results) is
  skipped and reported with the field at fault (bad_results_file); so is a samples file without a
  results.json of the same PREFIX beside it (lmms-eval was killed, or the file was copied alone:
  orphan_samples). A task listed in results.json without its samples file is reported (missing_samples);
  so is a samples file with fewer lines than results.json's n-samples[task].effective (short_samples). An
  entry named like a samples file that is not a regular file (a FIFO, a socket) is not opened (not_a_file).

Lines (parsing: postprocess/logs/lines.py): each problem is reported in `problems` with file, 1-based
line, the field at fault and the reason; nothing is dropped silently.
- Blank lines are ignored (counted in counts["blank_lines"]).
- A last line without a newline that is not valid JSON is a write cut short by a killed run: skipped
  (truncated_line). Any other line that is not a JSON object: skipped (malformed_json).
- A line without `per_question`: skipped (missing_per_question).
- The response is the record's own `response` in logs written before records stopped repeating it, else the
  line's `filtered_resps` (else `resps`), "x", ["x"] or [["x"]] (lmms_eval_tasks.record.line_response). A
  line with none of them: skipped (invalid_record).
- A record failing lmms_eval_tasks.record.validate_record, or holding text that is not valid Unicode:
  skipped (invalid_record, with its message).

Duplicates: rows are keyed by (model, benchmark, split, variant, question_id). Runs are ranked by their
own timestamp (runs.RunFacts.timestamp, never file ages) under `duplicates`:
- "newest" (default): the newest run's row is kept; "oldest": the oldest run's;
- "error": two runs holding the same key raise DuplicateRunsError naming them.
Equal timestamps are ranked by results-file path. Inside a run, files go in path order and lines in file
order; the first occurrence of a key is kept. A duplicate between runs when one of them has no timestamp
raises DuplicateRunsError (which is newer cannot be said). Every later occurrence is skipped and reported
(duplicate) with the kept row's file:line and whether response, prediction or correct differ; each pair
of runs that shared keys is a row of `duplicate_runs` (model, both runs and timestamps, the
benchmark/split/variant involved, duplicate rows, rows whose answers differ, generation settings that
differ).

Table (one row per kept record): model, family, size, total_params, active_params, moe, encoder_tier
(from the registry); benchmark, split, subtask, question_id, variant, gold, response, prediction,
correct, match (the record contract); rule, kind (optional record fields: extraction rule and question
kind, null when absent); extra (any other record fields, compact JSON with sorted keys, null when none);
task, doc_id, source_file, source_line (provenance). `gold` is text: lists are JSON-encoded, null stays
null. `correct` is pandas' nullable boolean. Low-cardinality text columns are categoricals ordered like
the registry (models by family, then size) and record.BENCHMARKS / SPLITS / MATCH_KINDS; free text
(question_id, gold, response, prediction, extra) uses pandas' string dtype.

Other frames: `runs` (one row per results.json), `run_tasks` (per ingested run and task: n-samples and
output tokens), `settings` (per ingested run and task: every generation setting, runs.py's rules),
`duplicate_runs` (above), `problems` (PROBLEM_COLUMNS).

Speed: lines.py's fast parser (msgspec, ~12k instructions for a 675-byte line against ~54k for the
standard library's json and ~24k for orjson) reads the well-formed lines. `workers` processes parse the
files, largest first: this one and `workers - 1` forked ones (default: one per core for inputs over
16 MB, fork start method, Linux only); the rows are merged in the order above (perf/bench_ingest.py).
A forked parser hands its rows back through a pickle file in a temporary folder (TMPDIR), removed once read.
Memory (perf/bench_report_memory.py): the frame holds the responses once, and ingestion holds them twice
for one 1,024-row batch at most.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import string
import sys
import tempfile
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lmms_eval_tasks.record import BENCHMARKS, EXTRACTION_TIERS, MATCH_KINDS, SPLITS
from model_configs import ModelSpec, Registry
from postprocess.logs.lines import TEXT, PROMOTED_FIELDS, ParsedFile, joined_rows, parse_samples_file, rows_frame
from postprocess.logs.runs import (DUPLICATE_RULES, RESULTS_SUFFIX, SAMPLES_MARKER, RunFacts, find_runs,
                                   read_results)

PARALLEL_MIN_BYTES = 16 * 2**20  # below this, starting workers costs more than it saves

TABLE_COLUMNS = [
    "model", "family", "size", "total_params", "active_params", "moe", "encoder_tier",
    "benchmark", "split", "subtask", "question_id", "variant", "gold", "response", "prediction", "correct",
    "match", "rule", "kind", "extraction_tier", "candidate", "extra", "task", "doc_id", "source_file", "source_line",
]
# Promoted columns with all their possible values as categories: the tier, and the withheld letter.
FIXED_CATEGORIES = {"extraction_tier": EXTRACTION_TIERS, "candidate": tuple(string.ascii_uppercase)}
ROW_KEY = ["model", "benchmark", "split", "variant", "question_id"]
RUNS_COLUMNS = [
    "results_file", "timestamp", "model", "model_path", "lmms_eval_model", "lmms_eval_version", "tasks",
    "n_samples_files", "n_lines", "n_rows", "n_skipped", "status", "detail", "elapsed_s",
]
RUN_TASK_COLUMNS = ["results_file", "model", "task", "effective", "output_tokens"]
SETTINGS_COLUMNS = ["results_file", "model", "task", "setting", "value"]
DUPLICATE_RUN_COLUMNS = [
    "model", "kept_run", "kept_timestamp", "dropped_run", "dropped_timestamp", "datasets", "duplicate_rows",
    "answers_differ", "settings_differ", "kept_because",
]
PROBLEM_COLUMNS = ["kind", "action", "file", "line", "field", "detail", "model", "benchmark"]

# kind -> what happened to the data (rules in the module docstring)
PROBLEM_ACTIONS = {
    "unresolved_model": "skipped",
    "bad_results_file": "skipped",
    "orphan_samples": "skipped",
    "missing_samples": "reported",
    "short_samples": "reported",
    "not_a_file": "skipped",
    "truncated_line": "skipped",
    "malformed_json": "skipped",
    "missing_per_question": "skipped",
    "invalid_record": "skipped",
    "duplicate": "skipped",
    "unplaceable_row": "skipped",  # a row of an imported file that cannot be placed (postprocess/logs/imports/)
}
RUN_PROBLEMS = ("unresolved_model", "bad_results_file", "orphan_samples", "not_a_file")  # a whole run or file not read
QUESTIONS_LOST = ("missing_samples", "short_samples")  # a run read, but without all the questions it asked


class UnresolvedModelError(ValueError):
    """Runs whose model cannot be determined; the message names each results file and the fix."""


class DuplicateRunsError(ValueError):
    """Runs holding the same questions that the duplicates rule cannot or may not choose between."""


@dataclass
class IngestResult:
    table: pd.DataFrame
    runs: pd.DataFrame  # RUNS_COLUMNS, one row per results.json
    problems: pd.DataFrame  # PROBLEM_COLUMNS
    run_tasks: pd.DataFrame  # RUN_TASK_COLUMNS, one row per task a results.json lists (its n-samples)
    settings: pd.DataFrame  # SETTINGS_COLUMNS, per ingested run and task
    duplicate_runs: pd.DataFrame  # DUPLICATE_RUN_COLUMNS, one row per (kept run, dropped run) pair
    counts: dict[str, int] = field(default_factory=dict)
    from_cache: bool = False
    fingerprint: str | None = None  # the cache's key of these inputs (postprocess/logs/cache.py), when read through it


FRAMES = ("table", "runs", "problems", "run_tasks", "settings", "duplicate_runs")  # IngestResult's frames


@dataclass
class _Run:
    results_path: Path
    samples: dict[str, Path]
    facts: RunFacts
    spec: ModelSpec | None = None
    failure: tuple[str, str | None, str] | None = None  # (problem kind, field, detail) when not ingested

    @property
    def prefix(self) -> str:
        return self.facts.prefix

    @property
    def model_path(self) -> str | None:
        return self.facts.model_path


# ---------------------------------------------------------------------------------------------- runs
def _describe_run(run: _Run, registry: Registry) -> None:
    """Fill the spec (or failure) of a run from its results.json facts."""
    if run.facts.problem:
        run.failure = ("bad_results_file", run.facts.problem_field, run.facts.problem)
    elif run.model_path is None:
        run.failure = ("unresolved_model", "config.model_args",
                       "config.model_args has no pretrained=, model= or model_version= entry")
    else:
        run.spec = registry.resolve(run.model_path)
        if run.spec is None:
            run.failure = ("unresolved_model", "config.model_args",
                           f"model path {run.model_path!r} matches no registry model")


def _unresolved_message(failed: list[_Run]) -> str:
    lines = [f"{len(failed)} run(s) have no known model, so their rows cannot be attributed:"]
    lines += [f"  {run.results_path}: {run.failure[2]}" for run in failed]
    lines.append("A model of your own (or a family of them) is described in a models YAML passed with --extra-models "
                 "FILE: fields key, hf_id, family, size, total_params, active_params, moe (README, 'Your own "
                 "models'). --model-map PATH=KEY is only for another copy of a model the registry already has "
                 "(e.g. a local snapshot of Qwen/Qwen3-VL-8B-Instruct). Or skip these runs: --skip-unknown-models.")
    return "\n".join(lines)


def _run_order(runs: list[_Run], rule: str) -> dict[Path, tuple]:
    """results path -> sort key: the runs the rule prefers first, then unknown timestamps, ties by path."""
    timestamps = sorted({run.facts.timestamp for run in runs if run.facts.timestamp}, reverse=rule != "oldest")
    rank = {timestamp: i for i, timestamp in enumerate(timestamps)}
    return {run.results_path: (rank.get(run.facts.timestamp, len(rank)), str(run.results_path)) for run in runs}


# ---------------------------------------------------------------------------------------------- files
@contextmanager
def _parsed_files(paths: list[str], workers: int) -> Iterator[Iterator[tuple[int, ParsedFile]]]:
    """(index in `paths`, parsed file) for every file as it is done, largest files first. With workers > 1,
    this process parses too, beside `workers - 1` forked ones (forked here, before any progress-bar
    thread exists), each of which it keeps two files ahead: a process fewer than workers-many helpers
    saves the forking and half the rows crossing between processes."""
    queue = deque(sorted(range(len(paths)), key=lambda i: -os.path.getsize(paths[i])))
    if workers <= 1:
        yield ((i, parse_samples_file(paths[i])) for i in queue)
        return
    import lmms_eval_tasks.extraction  # noqa: F401 (lines.tier_of's rules imported once, not in every parser)

    with (tempfile.TemporaryDirectory(prefix="invscale-ingest-") as scratch,
          multiprocessing.get_context("fork").Pool(workers - 1) as pool):
        yield _share_with(pool, workers - 1, paths, queue, Path(scratch))


def _parse_into(path: str, out: Path) -> None:
    """parse_samples_file in a parser process, its result pickled into the file `out`. Read from a file, the rows
    arrive buffer by buffer; the pool's pipe would deliver them as one message, held beside the rows built from it
    (a second copy of the file's responses at the peak: perf/bench_report_memory.py)."""
    with open(out, "wb") as handle:
        pickle.dump(parse_samples_file(path), handle, protocol=pickle.HIGHEST_PROTOCOL)


def _share_with(pool, helpers: int, paths: list[str], queue: deque, scratch: Path
                ) -> Iterator[tuple[int, ParsedFile]]:
    sent: deque = deque()  # (index, AsyncResult) in the order sent

    def received(index: int, result) -> ParsedFile:
        result.get()  # raises the parser process's error
        out = scratch / f"{index}.pickle"
        with open(out, "rb") as handle:
            parsed = pickle.load(handle)
        out.unlink()
        return parsed

    while queue:
        while queue and sum(not result.ready() for _, result in sent) < 2 * helpers:
            index = queue.popleft()
            sent.append((index, pool.apply_async(_parse_into, (paths[index], scratch / f"{index}.pickle"))))
        while sent and sent[0][1].ready():
            index, result = sent.popleft()
            yield index, received(index, result)
        if queue:
            index = queue.popleft()
            yield index, parse_samples_file(paths[index])
    for index, result in sent:
        yield index, received(index, result)


def _default_workers(total_bytes: int, n_files: int) -> int:
    if not sys.platform.startswith("linux") or total_bytes < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), n_files))


def _categorical(values: Any, order: Iterable[str] = ()) -> pd.Categorical:
    """Categorical of the present values: those in `order` first, in that order, then the rest sorted."""
    categorical = pd.Categorical(values)
    present = set(categorical.categories)
    first = [v for v in dict.fromkeys(order) if v in present]
    return categorical.reorder_categories(first + sorted(present - set(first)))


def _repeat_categorical(per_file: list, counts: np.ndarray, order: Iterable[str] = ()) -> pd.Categorical:
    small = _categorical(per_file, order)
    return pd.Categorical.from_codes(np.repeat(small.codes, counts), categories=small.categories)


class Problems:
    """Problem rows, sorted on output by (file read order, line); run-level problems come first (`order` -1)."""

    def __init__(self) -> None:
        self._rows: list[tuple] = []

    def add(self, order: int, kind: str, file: Path | str, line: int | None, field: str | None, detail: str,
            model: str | None = None, benchmark: str | None = None) -> None:
        self._rows.append((order, line or 0, kind, PROBLEM_ACTIONS[kind], str(file), line, field, detail, model,
                           benchmark))

    def counts(self) -> Counter:
        return Counter(row[2] for row in self._rows)

    def frame(self) -> pd.DataFrame:
        return problem_dtypes(pd.DataFrame([row[2:] for row in sorted(self._rows, key=lambda r: r[:2])],
                                           columns=PROBLEM_COLUMNS))


def problem_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    """PROBLEM_COLUMNS with their dtypes: kind categorical in PROBLEM_ACTIONS order, line nullable, the rest text."""
    frame = frame.copy()
    frame["kind"] = _categorical(frame["kind"].astype(object), PROBLEM_ACTIONS)
    frame["line"] = frame["line"].astype("Int64")
    for column in ("action", "file", "field", "detail", "model", "benchmark"):
        frame[column] = frame[column].astype(object).astype(TEXT)
    return frame


@dataclass
class _SamplesFile:
    path: str
    run: _Run
    task: str


def _read_files(files: list[_SamplesFile], workers: int, progress: bool, problems: Problems
                ) -> tuple[pd.DataFrame, Counter, int]:
    """Candidate rows of all files in order (column `_order` = file index), lines per run, blank lines."""
    parts = []
    lines_per_run: Counter = Counter()
    blank_lines = 0
    parsed: list[ParsedFile | None] = [None] * len(files)
    with _parsed_files([f.path for f in files], workers) as done:
        if progress:
            from tqdm.auto import tqdm

            done = tqdm(done, total=len(files), unit="file", desc="ingest logs")
        for index, parsed_file in done:
            parsed[index] = parsed_file
    for order, (file, parsed_file) in enumerate(zip(files, parsed)):
        for kind, line, field_name, detail, benchmark in parsed_file.problems:
            problems.add(order, kind, file.path, line, field_name, detail, file.run.spec.key, benchmark)
        parts.append(parsed_file.rows)
        lines_per_run[file.run.results_path] += parsed_file.lines
        asked = file.run.facts.effective.get(file.task)
        if asked is not None and parsed_file.lines < asked:
            problems.add(order, "short_samples", file.path, None, f"n-samples.{file.task}.effective",
                         f"{parsed_file.lines} lines for the {asked} questions results.json says were asked: "
                         f"{asked - parsed_file.lines} missing (a copy cut short?)", file.run.spec.key)
        blank_lines += parsed_file.blank_lines
    parsed_file = None
    parsed.clear()  # `parts` holds the only reference to the rows, which joined_rows releases as it copies them
    rows_per_file = np.array([len(part) for part in parts], dtype=np.int64)
    rows = rows_frame(joined_rows(parts))
    rows["_order"] = np.repeat(np.arange(len(rows_per_file), dtype=np.int64), rows_per_file)
    rows["model"] = _repeat_categorical([f.run.spec.key for f in files], rows_per_file)
    rows["source_file"] = _repeat_categorical([f.path for f in files], rows_per_file)
    return rows, lines_per_run, blank_lines


# ---------------------------------------------------------------------------------------------- duplicates
def _differing(rows: pd.DataFrame, later: np.ndarray, kept: np.ndarray) -> dict[str, np.ndarray]:
    """Per answer field: whether each later row differs from its kept row (null equals null)."""
    differing = {}
    for name in ("response", "prediction", "correct"):
        a = rows[name].iloc[later].reset_index(drop=True)
        b = rows[name].iloc[kept].reset_index(drop=True)
        same = (a == b).fillna(False).astype(bool) | (a.isna() & b.isna())
        differing[name] = ~same.to_numpy()
    return differing


def _settings_difference(kept: _SamplesFile, dropped: _SamplesFile) -> list[str]:
    """`setting: kept value vs dropped value` for each generation setting the two files' runs differ in."""
    ours, theirs = kept.run.facts.settings_of(kept.task), dropped.run.facts.settings_of(dropped.task)
    return [f"{name}: {ours.get(name, '(absent)')} vs {theirs.get(name, '(absent)')}"
            for name in sorted(ours.keys() | theirs.keys()) if ours.get(name) != theirs.get(name)]


def _duplicate_run_pairs(rows: pd.DataFrame, files: list[_SamplesFile], duplicates: np.ndarray,
                         firsts: np.ndarray, differs: np.ndarray, rule: str) -> pd.DataFrame:
    """One row per (kept run, dropped run) that shared keys (DUPLICATE_RUN_COLUMNS)."""
    if not len(duplicates):
        return pd.DataFrame(columns=DUPLICATE_RUN_COLUMNS).astype({"duplicate_rows": "int64", "answers_differ": "int64"})
    orders = rows["_order"].to_numpy()
    names = [rows[name].iloc[duplicates].astype(str).to_numpy(dtype=object) for name in ("benchmark", "split",
                                                                                         "variant")]
    datasets = {row: f"{benchmark} {split} {variant}" for row, benchmark, split, variant in zip(duplicates, *names)}
    pairs: dict[tuple[int, int], dict] = defaultdict(lambda: {"rows": 0, "differ": 0, "datasets": set(),
                                                              "files": set()})
    for dropped_row, kept_row, differ in zip(duplicates, firsts, differs):
        kept_file, dropped_file = files[orders[kept_row]], files[orders[dropped_row]]
        if kept_file.run is dropped_file.run:
            continue
        pair = pairs[(id(kept_file.run), id(dropped_file.run))]
        if not pair["rows"]:
            pair["runs"] = (kept_file.run, dropped_file.run)
        pair["rows"] += 1
        pair["differ"] += bool(differ)
        pair["datasets"].add(datasets[dropped_row])
        pair["files"].add((orders[kept_row], orders[dropped_row]))
    records = []
    for pair in pairs.values():
        kept, dropped = pair["runs"]
        settings = sorted({text for k, d in pair["files"] for text in _settings_difference(files[k], files[d])})
        if kept.facts.timestamp is None or dropped.facts.timestamp is None:
            because = "no timestamp"
        elif kept.facts.timestamp == dropped.facts.timestamp:
            because = "same timestamp: first results path"
        else:
            because = f"{rule} timestamp"
        records.append({
            "model": kept.spec.key, "kept_run": str(kept.results_path), "kept_timestamp": kept.facts.timestamp,
            "dropped_run": str(dropped.results_path), "dropped_timestamp": dropped.facts.timestamp,
            "datasets": ", ".join(sorted(pair["datasets"])), "duplicate_rows": pair["rows"],
            "answers_differ": pair["differ"], "settings_differ": "; ".join(settings) or "none",
            "kept_because": because,
        })
    frame = pd.DataFrame(records, columns=DUPLICATE_RUN_COLUMNS)
    return frame.astype({"duplicate_rows": "int64", "answers_differ": "int64"})


def _check_duplicate_runs(pairs: pd.DataFrame, rule: str) -> None:
    if pairs.empty:
        return
    untimed = pairs[pairs["kept_because"] == "no timestamp"]
    if rule == "error" or len(untimed):
        shown = pairs if rule == "error" else untimed
        listed = "; ".join(f"{p.kept_run} and {p.dropped_run} ({p.duplicate_rows} questions of {p.datasets})"
                           for p in shown.head(3).itertuples())
        more = f" and {len(shown) - 3} more pairs" if len(shown) > 3 else ""
        if rule == "error":
            raise DuplicateRunsError(f"{len(shown)} pairs of runs hold the same questions: {listed}{more}; "
                                     "keep one of each or choose a rule (--duplicates newest|oldest)")
        raise DuplicateRunsError(f"cannot tell which of two runs holding the same questions is newer: {listed}{more}: "
                                 "a run without a YYYYMMDD_HHMMSS results.json `date` or file prefix has no "
                                 "timestamp; remove or rename one of them")


def _key_codes(rows: pd.DataFrame) -> np.ndarray:
    """One integer per ROW_KEY value, numbered in order of first appearance."""
    combined = np.zeros(len(rows), dtype=np.int64)
    for name in ROW_KEY:
        column = rows[name]
        if isinstance(column.dtype, pd.CategoricalDtype):  # codes -1 (null) .. n - 1
            codes, n = column.cat.codes.to_numpy().astype(np.int64) + 1, len(column.cat.categories) + 1
        else:
            codes, uniques = pd.factorize(column, use_na_sentinel=False)
            n = len(uniques)
        if combined.max(initial=0) >= np.iinfo(np.int64).max // max(n, 1):
            combined = pd.factorize(combined)[0]  # renumber before the product could overflow
        combined = combined * n + codes
    return pd.factorize(combined)[0]


def _drop_duplicates(rows: pd.DataFrame, files: list[_SamplesFile], problems: Problems, rule: str
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows without later occurrences of a ROW_KEY, and the duplicate run pairs; reports every later
    occurrence."""
    codes = _key_codes(rows)
    # codes number the keys in order of first appearance: a row is a key's first when its code is new
    duplicate = codes <= np.maximum.accumulate(np.concatenate([[-1], codes[:-1]])) if len(codes) else codes > 0
    duplicates = np.flatnonzero(duplicate)
    firsts = np.flatnonzero(~duplicate)[codes[duplicates]]
    differing = _differing(rows, duplicates, firsts)
    pairs = _duplicate_run_pairs(rows, files, duplicates, firsts,
                                 np.logical_or.reduce(list(differing.values())), rule)
    _check_duplicate_runs(pairs, rule)
    if len(duplicates):
        where = rows[["_order", "source_line", "source_file", "model", "benchmark"]].astype(object).to_numpy()
        for row, detail in zip(duplicates, _duplicate_details(rows, duplicates, firsts, differing)):
            order, line, file, model, benchmark = where[row]
            problems.add(order, "duplicate", file, line, "per_question.question_id", detail, model, benchmark)
    return (rows[~duplicate].reset_index(drop=True) if len(duplicates) else rows), pairs


def _duplicate_details(rows: pd.DataFrame, duplicates: np.ndarray, firsts: np.ndarray,
                       differing: dict[str, np.ndarray]) -> list[str]:
    """For each duplicate row: where the kept row is and which of response/prediction/correct differ."""
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


# ---------------------------------------------------------------------------------------------- frames
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
                          ("match", MATCH_KINDS), *((name, ()) for name in PROMOTED_FIELDS if name not in FIXED_CATEGORIES)):
        table[column] = _categorical(table[column], order)
    for column, categories in FIXED_CATEGORIES.items():  # every value, so that a column without one keeps its type
        table[column] = pd.Categorical(table[column], categories=pd.Index(categories, dtype="str"))
    return table[TABLE_COLUMNS]


def order_table_categories(table: pd.DataFrame, registry: Registry) -> pd.DataFrame:
    """The table's low-cardinality columns as categoricals ordered as _finish_table orders them (models by family,
    then size; benchmarks, splits and match kinds in the contract's order, other values after them sorted): for
    tables put together from several sources (postprocess/logs/imports/)."""
    model_order = [spec.key for family in registry.families for spec in registry.family_order(family)]
    orders = {"model": model_order, "family": registry.families,
              "size": [registry.get(k).size for k in model_order], "benchmark": BENCHMARKS, "split": SPLITS,
              "match": MATCH_KINDS}
    table = table.copy()
    for column in ("model", "family", "size", "encoder_tier", "benchmark", "split", "subtask", "variant", "match",
                   *PROMOTED_FIELDS, "task", "source_file"):
        values = table[column].astype(object) if isinstance(table[column].dtype, pd.CategoricalDtype) else table[column]
        table[column] = _categorical(values.to_numpy(dtype=object), orders.get(column, ()))
    return table


def empty_result() -> IngestResult:
    """An IngestResult of no input: every frame with its columns and no rows."""
    problems = Problems().frame()
    table = pd.DataFrame({column: pd.Series(dtype=object) for column in TABLE_COLUMNS})
    return IngestResult(table=table, runs=_runs_frame([], table.assign(source_file=pd.Categorical([])), Counter()),
                        problems=problems, run_tasks=_run_tasks_frame([]), settings=_settings_frame([]),
                        duplicate_runs=pd.DataFrame(columns=DUPLICATE_RUN_COLUMNS).astype(
                            {"duplicate_rows": "int64", "answers_differ": "int64"}),
                        counts={kind: 0 for kind in PROBLEM_ACTIONS})


def _runs_frame(runs: list[_Run], table: pd.DataFrame, lines_per_run: Counter) -> pd.DataFrame:
    source_of_results = {str(f): run.results_path for run in runs for f in run.samples.values()}
    rows_per_file = table["source_file"].value_counts()
    rows_per_run = Counter()
    for file, n in rows_per_file.items():
        rows_per_run[source_of_results[file]] += int(n)
    frame = pd.DataFrame([{
        "results_file": str(run.results_path), "timestamp": run.facts.timestamp,
        "model": run.spec.key if run.spec else None, "model_path": run.model_path,
        "lmms_eval_model": run.facts.lmms_eval_model, "lmms_eval_version": run.facts.lmms_eval_version,
        "tasks": ",".join(sorted(run.samples)), "n_samples_files": len(run.samples),
        "n_lines": lines_per_run[run.results_path], "n_rows": rows_per_run[run.results_path],
        "n_skipped": lines_per_run[run.results_path] - rows_per_run[run.results_path],
        "status": "ingested" if not run.failure else f"skipped: {run.failure[0]}",
        "detail": run.failure[2] if run.failure else None,
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


def _settings_frame(runs: list[_Run]) -> pd.DataFrame:
    """Per ingested run and task (listed or read): each generation setting as text."""
    return pd.DataFrame([(str(run.results_path), run.spec.key, task, name, value)
                         for run in runs if not run.failure
                         for task in sorted(set(run.facts.tasks) | set(run.samples))
                         for name, value in sorted(run.facts.settings_of(task).items())],
                        columns=SETTINGS_COLUMNS)


# ---------------------------------------------------------------------------------------------- ingest
def ingest_logs(dirs: Iterable[Path | str], registry: Registry, model_overrides: dict[str, str] | None = None,
                progress: bool = False, strict: bool = True, workers: int | None = None,
                duplicates: str = "newest") -> IngestResult:
    """Read every lmms-eval run under `dirs` (rules in the module docstring).

    model_overrides: {model path or its last component: registry key} for paths the registry does not
    know. strict: raise UnresolvedModelError on runs without a known model (else skip and report them).
    workers: parser processes, this one included (None: automatic, 1: this one alone). duplicates: DUPLICATE_RULES.
    """
    if duplicates not in DUPLICATE_RULES:
        raise ValueError(f"duplicates rule {duplicates!r} is not one of {DUPLICATE_RULES}")
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    found, orphans = find_runs(dirs)
    runs = [_Run(files.results_path, files.samples, read_results(files.results_path)) for files in found]
    for run in runs:
        _describe_run(run, registry)
    unresolved = [run for run in runs if run.failure and run.failure[0] == "unresolved_model"]
    if unresolved and strict:
        raise UnresolvedModelError(_unresolved_message(unresolved))
    good = [run for run in runs if not run.failure]

    problems = Problems()
    for run in runs:
        if run.failure:
            kind, field_name, detail = run.failure
            fix = " (--model-map PATH=KEY maps it)" if kind == "unresolved_model" else ""
            problems.add(-1, kind, run.results_path, None, field_name,
                         f"{detail}; {len(run.samples)} samples file(s) not ingested{fix}")
    for path in orphans:
        problems.add(-1, "orphan_samples", path, None, None,
                     f"no {path.name.split(SAMPLES_MARKER)[0]}{RESULTS_SUFFIX} beside it (killed run?); not ingested")
    for run in good:
        for task in sorted(set(run.facts.tasks) - set(run.samples)):
            problems.add(-1, "missing_samples", run.results_path, None, f"configs.{task}",
                         f"results.json lists task {task!r} but {run.prefix}{SAMPLES_MARKER}{task}.jsonl is absent",
                         run.spec.key)
        for task, path in list(run.samples.items()):
            if not path.is_file():  # opening a FIFO would wait for a writer forever
                problems.add(-1, "not_a_file", path, None, None, "named like a samples file but not a regular "
                             "file (a FIFO, socket or device); not read", run.spec.key)
                del run.samples[task]

    # the duplicates rule's run order decides which of two duplicate rows is kept
    run_order = _run_order(good, duplicates)
    files = sorted((_SamplesFile(str(path), run, task) for run in good for task, path in run.samples.items()),
                   key=lambda f: (run_order[f.run.results_path], f.path))
    if workers is None:
        workers = _default_workers(sum(os.path.getsize(f.path) for f in files), len(files))
    rows, lines_per_run, blank_lines = _read_files(files, workers, progress, problems)
    kept, duplicate_runs = _drop_duplicates(rows, files, problems, duplicates)
    table = _finish_table(kept, files, registry)

    kinds = problems.counts()
    lines_read = sum(lines_per_run.values())
    counts = {
        "results_files": len(runs), "runs_ingested": len(good), "runs_skipped": len(runs) - len(good),
        "samples_files": len(files), "orphan_samples_files": len(orphans), "lines_read": lines_read,
        "rows": len(table), "lines_skipped": lines_read - len(table), "blank_lines": blank_lines,
        "duplicate_run_pairs": len(duplicate_runs),
        **{kind: kinds[kind] for kind in PROBLEM_ACTIONS},
    }
    return IngestResult(table=table, runs=_runs_frame(runs, table, lines_per_run), problems=problems.frame(),
                        run_tasks=_run_tasks_frame(runs), settings=_settings_frame(runs),
                        duplicate_runs=duplicate_runs, counts=counts)


__all__ = [
    "DUPLICATE_RULES",
    "DUPLICATE_RUN_COLUMNS",
    "FRAMES",
    "PROBLEM_ACTIONS",
    "PROBLEM_COLUMNS",
    "PROMOTED_FIELDS",
    "QUESTIONS_LOST",
    "ROW_KEY",
    "RUNS_COLUMNS",
    "RUN_PROBLEMS",
    "RUN_TASK_COLUMNS",
    "SETTINGS_COLUMNS",
    "TABLE_COLUMNS",
    "DuplicateRunsError",
    "IngestResult",
    "Problems",
    "problem_dtypes",
    "empty_result",
    "order_table_categories",
    "UnresolvedModelError",
    "ingest_logs",
    "parse_samples_file",
]
