"""Per-question outputs from other harnesses, scored by the project's own scoring core into ingestion's table.

Two inputs (docs/importing-outputs.md has the full description and examples):

- the per-question table (`.parquet`, `.csv`, `.jsonl`), one row per model and question (TABLE_FIELDS);
- VLMEvalKit prediction files (`<model>_<dataset>.xlsx` / `.tsv` / `.csv`, as VLMEvalKit writes them into
  `<work_dir>/<model>/`), mapped to a table by `vlmevalkit_table` (VLMEVALKIT_DATASETS for the paper's
  benchmarks; another dataset's subtask column is named by the user).

Scoring. A row's raw `response` goes through lmms_eval_tasks.scoring.score (the same extraction rules, abstain
reasons and adjudicator seam as an in-run answer) and scoring.per_question_record; a row without a response
but with an already extracted `prediction` goes through scoring.score_prediction (matched by the same rules).
Each distinct (question form, gold, answer) is scored once: the outcome depends on nothing else. The record's
fields then fill the table's columns as ingestion fills them from a samples line (lines.py: the contract's
fields, PROMOTED_FIELDS, every other field in `extra`), validated by record.validate_record(imported=True):
a benchmark outside the paper's nine is allowed, one of ours spelled differently is not.

Nothing is dropped silently. A row the importer cannot place (a missing or malformed field, an option letter
that does not exist, ...) is skipped and reported (unplaceable_row, with file, row, field and reason); a model
name the registry does not resolve raises UnresolvedModelError naming every one (with strict=False: skipped
and reported as unresolved_model, one problem per file and name with its row count); a second row of one
(model, benchmark, split, variant, question_id) in a file is skipped and reported (duplicate), and the same
key in two files raises DuplicateRunsError (imported files carry no timestamps to choose by). A file that
cannot be read, or lacks a required column, raises ImportFormatError naming the file and the column.

In CSV, TSV and xlsx an empty `response` cell (VLMEvalKit: `prediction`) of a row without a prediction is the empty
response (abstain reason `empty`): those formats cannot tell an empty text from a missing one.

`source_line` is where a row is in its file as a person finds it: the spreadsheet row for CSV, TSV and xlsx
(the header is row 1), the line for JSONL, the 1-based row position for Parquet.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from lmms_eval_tasks.benchmarks import BENCHMARKS as BENCHMARK_SPECS
from lmms_eval_tasks.question import LETTERS, MCQ, NUMERIC, OPEN, YES_NO, Question
from lmms_eval_tasks.record import (REQUIRED_FIELDS, RecordError, imported_benchmark_problem,
                                    validate_record)
from lmms_eval_tasks.scoring import current_adjudicator, per_question_record, score, score_prediction
from model_configs import Registry
from postprocess.logs.ingest import (ROW_KEY, RUNS_COLUMNS, TABLE_COLUMNS, DuplicateRunsError, IngestResult, Problems,
                                     UnresolvedModelError, empty_result, order_table_categories, problem_dtypes)
from postprocess.logs.lines import PROMOTED_FIELDS, TEXT, encode_json

TABLE_SUFFIXES = (".parquet", ".csv", ".jsonl")
VLMEVALKIT_SUFFIXES = (".xlsx", ".tsv", ".csv")
TEXT_CELL_SUFFIXES = (".csv", ".tsv", ".xlsx")  # formats whose empty cell is read as null
KINDS = (MCQ, YES_NO, NUMERIC, OPEN)
REQUIRED_COLUMNS = ("model", "benchmark", "subtask", "question_id", "gold")
ANSWER_COLUMNS = ("response", "prediction")  # at least one
OPTIONAL_COLUMNS = ("split", "variant", "options", "kind", "answer_type", "precision")
TABLE_FIELDS = (*REQUIRED_COLUMNS, *ANSWER_COLUMNS, *OPTIONAL_COLUMNS)
DEFAULT_VARIANT = "direct"
OTHER_SPLIT = "test"  # the split of a benchmark that is not one of ours, when the table gives none
# the record's fields that describe the question (the rest describe the outcome and are scored once per answer)
QUESTION_FIELDS = frozenset(("benchmark", "split", "subtask", "question_id", "variant", "gold", "kind", "options",
                             "permutation", "details"))
_NOT_EXTRA = frozenset(REQUIRED_FIELDS) | frozenset(PROMOTED_FIELDS) | {"response"}  # as lines.py files them

# VLMEvalKit dataset -> (benchmark, split, the column holding the paper's subtask label). VLMEvalKit lower-cases
# every column name but the option letters before scoring (its image_mcq.py), so columns are matched ignoring case.
VLMEVALKIT_DATASETS = {
    "MMT-Bench_VAL": ("MMT-Bench", "val", "l2-category"),
    "MMMU_DEV_VAL": ("MMMU", "dev_val", "subfield"),
    "MMMU_TEST": ("MMMU", "test", "subfield"),
    "ScienceQA_TEST": ("ScienceQA", "test", "category"),
    "MME": ("MME", "test", "category"),
    "AI2D_TEST": ("AI2D", "test", "category"),
    "BLINK": ("BLINK", "val", "category"),
    "MMBench_DEV_EN": ("MMBench", "dev_en", "l2-category"),
}
VLMEVALKIT_COLUMNS = ("index", "question", "answer", "prediction")
_SPLITS_OF_OURS = {name: sorted({spec.split for spec in BENCHMARK_SPECS if spec.name == name})
                   for name in {spec.name for spec in BENCHMARK_SPECS}}


class ImportFormatError(ValueError):
    """An imported file that cannot be read or lacks a required column; the message names the file and column."""


@dataclass(frozen=True)
class ImportSource:
    """One file to import: a per-question table, or a VLMEvalKit prediction file (`dataset`: its dataset name,
    None to read it from the file name; `subtask_column`: for a dataset not in VLMEVALKIT_DATASETS)."""
    path: Path
    harness: str  # "table" | "vlmevalkit"
    dataset: str | None = None
    subtask_column: str | None = None


# ---------------------------------------------------------------------------------------------- reading
def _read_jsonl(path: Path) -> tuple[pd.DataFrame, list[tuple[int, str]]]:
    """Rows of a JSONL file with their line numbers, and the lines that are not JSON objects (line, reason)."""
    rows, lines, bad = [], [], []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.isspace():
                continue
            try:
                value = msgspec.json.decode(raw)
            except msgspec.DecodeError as error:
                bad.append((number, f"not valid JSON: {error}"))
                continue
            if not isinstance(value, dict):
                bad.append((number, f"line is a JSON {type(value).__name__}, not an object"))
                continue
            rows.append(value)
            lines.append(number)
    frame = pd.DataFrame(rows)
    frame["_line"] = np.array(lines, dtype=np.int64)
    return frame, bad


def read_file(path: Path) -> tuple[pd.DataFrame, list[tuple[int, str]]]:
    """The rows of a table or prediction file (column `_line`: where each is, module docstring) and its lines
    that hold no row (JSONL). Text stays text: only an empty CSV/TSV cell is null ("None" and "NA" are options)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            return _read_jsonl(path)
        if suffix == ".parquet":
            frame, first = pd.read_parquet(path), 1
        elif suffix in (".csv", ".tsv"):
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False,
                                na_values=[""])
            first = 2
        elif suffix == ".xlsx":
            frame = pd.read_excel(path, dtype=str, keep_default_na=False, na_values=[""])
            first = 2
        else:
            raise ImportFormatError(f"{path}: not a file type the importer reads (.parquet, .csv, .tsv, .jsonl, .xlsx)")
    except ImportFormatError:
        raise
    except FileNotFoundError:
        raise ImportFormatError(f"{path}: no such file") from None
    except (OSError, ValueError, KeyError) as error:  # pandas' and pyarrow's parse errors are ValueErrors
        raise ImportFormatError(f"{path}: cannot be read as {suffix[1:]}: {str(error).strip()}") from None
    frame = frame.reset_index(drop=True)
    frame["_line"] = np.arange(first, first + len(frame), dtype=np.int64)
    return frame, []


def _text(value: Any) -> str | None:
    """A cell as text: null stays null, integral numbers lose their ".0" (a question id read as a float)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple, np.ndarray, dict)):
        return json.dumps(value.tolist() if isinstance(value, np.ndarray) else value, ensure_ascii=False)
    return str(value)


def _text_column(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame:
        return np.full(len(frame), None, dtype=object)
    column = frame[name]
    if column.dtype == object and all(type(v) is str for v in column.dropna().head(1000)) and \
            column.map(lambda v: v is None or type(v) is str or (isinstance(v, float) and math.isnan(v))).all():
        return column.where(column.notna(), None).to_numpy(dtype=object)
    return np.array([_text(v) for v in column], dtype=object)


# ---------------------------------------------------------------------------------------------- VLMEvalKit
def _column_named(frame: pd.DataFrame, name: str) -> str | None:
    return next((column for column in frame.columns if str(column).lower() == name.lower()), None)


def split_vlmevalkit_name(path: Path, dataset: str | None = None) -> tuple[str, str]:
    """(model, dataset) of a VLMEvalKit prediction file `<model>_<dataset>.<ext>`: the dataset given, else the
    model as the folder VLMEvalKit writes it into, else the longest VLMEVALKIT_DATASETS name the stem ends with."""
    stem = path.stem
    if dataset is not None:
        if not stem.endswith(f"_{dataset}") or stem == f"_{dataset}":
            raise ImportFormatError(f"{path}: the file name does not end in _{dataset} (<model>_<dataset>{path.suffix})")
        return stem[: -len(dataset) - 1], dataset
    folder = path.parent.name
    if folder and stem.startswith(f"{folder}_") and len(stem) > len(folder) + 1:
        return folder, stem[len(folder) + 1:]
    known = [name for name in VLMEVALKIT_DATASETS if stem.endswith(f"_{name}") and len(stem) > len(name) + 1]
    if not known:
        raise ImportFormatError(f"{path}: cannot tell the model from the dataset in {stem!r}: name the dataset "
                                f"(--vlmevalkit-dataset) or keep the file in the folder named after the model, as "
                                f"VLMEvalKit writes it")
    name = max(known, key=len)
    return stem[: -len(name) - 1], name


def vlmevalkit_table(frame: pd.DataFrame, path: Path, model: str, dataset: str,
                     subtask_column: str | None = None) -> pd.DataFrame:
    """A VLMEvalKit prediction frame as a per-question table: benchmark, split and subtask column from
    VLMEVALKIT_DATASETS (a dataset not there: benchmark = the dataset's name, split "test", the subtask column
    the user names); question_id = `index`; options = the non-empty letter columns A, B, ... in order; gold =
    `answer`; response = `prediction` (the model's raw text). Kind: mcq with options; without, yes_no when every
    answer is Yes or No (MME), numeric when an `answer_type` column says integer or float, else open."""
    if dataset in VLMEVALKIT_DATASETS:
        benchmark, split, paper_column = VLMEVALKIT_DATASETS[dataset]
        subtask_column = subtask_column or paper_column
    else:
        if subtask_column is None:
            raise ImportFormatError(f"{path}: VLMEvalKit dataset {dataset!r} is not one of the paper's "
                                    f"({', '.join(VLMEVALKIT_DATASETS)}): name its subtask column "
                                    f"(--vlmevalkit-subtask-column, e.g. category)")
        benchmark, split = dataset, OTHER_SPLIT
    columns = {name: _column_named(frame, name) for name in (*VLMEVALKIT_COLUMNS, subtask_column)}
    missing = [name for name, column in columns.items() if column is None]
    if missing:
        raise ImportFormatError(f"{path}: lacks the column(s) {missing} of a VLMEvalKit {dataset} prediction file "
                                f"(columns: {', '.join(map(str, frame.columns))})")
    letters = [letter for letter in LETTERS if letter in frame.columns]
    options = [[option for option in row if option is not None]
               for row in zip(*(_text_column(frame, letter) for letter in letters))] if letters else [[]] * len(frame)
    answers = _text_column(frame, columns["answer"])
    kind = np.full(len(frame), MCQ, dtype=object)
    if not letters:
        if all(a in ("Yes", "No") for a in answers if a is not None):
            kind[:] = YES_NO
        else:
            answer_types = _text_column(frame, "answer_type")
            kind = np.where(np.isin(answer_types, ["integer", "float"]), NUMERIC, OPEN).astype(object)
    table = pd.DataFrame({
        "model": model, "benchmark": benchmark, "split": split, "subtask": _text_column(frame, columns[subtask_column]),
        "question_id": _text_column(frame, columns["index"]), "gold": answers,
        "response": _text_column(frame, columns["prediction"]), "options": options, "kind": kind,
        "_line": frame["_line"].to_numpy(),
    })
    for name in ("answer_type", "precision"):
        if name in frame:
            table[name] = _text_column(frame, name)
    return table


# ---------------------------------------------------------------------------------------------- rows
class _Unplaceable:
    """Per row of a file: why it cannot be placed (field, reason); the first reason found is kept."""

    def __init__(self, n: int) -> None:
        self.field = np.full(n, None, dtype=object)
        self.reason = np.full(n, None, dtype=object)

    def mark(self, rows: np.ndarray, field_name: str, reasons: Any) -> None:
        """Mark the rows (a boolean mask) not marked yet, with one reason or one per row."""
        fresh = rows & self.placed
        self.field[fresh] = field_name
        self.reason[fresh] = reasons if isinstance(reasons, str) else np.asarray(reasons, dtype=object)[fresh]

    @property
    def placed(self) -> np.ndarray:
        return np.equal(self.field, None)


# ---------------------------------------------------------------------------------------------- scoring
def _options_of(text_or_list: Any) -> tuple[list[str] | None, str | None]:
    """(options, problem) of an `options` cell: a list of texts, JSON text of one, or null (no options)."""
    value = text_or_list
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return [], None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None, f"options {text_or_list[:80]!r} is not a JSON list of option texts"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return None, "options is not a list of option texts"
    if len(value) > len(LETTERS):
        return None, f"options has {len(value)} entries, more than the {len(LETTERS)} letters"
    return list(value), None


def _gold_of(kind: str, text: str | None) -> str | list | None:
    """The question's gold from its text: an open question's JSON list of acceptable answers becomes the list."""
    if text is not None and kind == OPEN and text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return text


def _precision_of(text: str | None) -> tuple[int | None, str | None]:
    if text is None:
        return None, None
    try:
        value = float(text)
    except ValueError:
        return None, f"precision {text!r} is not a whole number"
    return (int(value), None) if value.is_integer() else (None, f"precision {text!r} is not a whole number")


@dataclass
class _Scored:
    """The outcome fields of one distinct answer: the record's non-question fields, or why it cannot be scored."""
    fields: dict | None
    problem: tuple[str, str] | None = None  # (field, reason)


def _score_answer(benchmark: str, kind: str, options: list[str], gold: str | None, answer_type: str | None,
                  precision: int | None, response: str | None, prediction: str | None, has_response: bool) -> _Scored:
    question = Question(benchmark, "", "", "", kind, "", [], options=options, gold=_gold_of(kind, gold),
                        answer_type=answer_type, precision=precision)
    if kind == MCQ and gold is not None and gold not in question.letters:
        return _Scored(None, ("gold", f"gold {gold!r} is not one of the option letters {''.join(question.letters)}"))
    if kind == YES_NO and gold is not None and gold not in ("Yes", "No"):
        return _Scored(None, ("gold", f"gold {gold!r} is not Yes or No"))
    if response is not None:
        outcome = score(question, response)
    elif not has_response or prediction is not None:
        try:
            outcome = score_prediction(question, prediction)
        except ValueError as error:
            return _Scored(None, ("prediction", str(error)))
    else:
        return _Scored(None, ("response", "no response (and no prediction)"))
    record = per_question_record(question, outcome)
    return _Scored({name: value for name, value in record.items() if name not in QUESTION_FIELDS})


# ---------------------------------------------------------------------------------------------- one file
def _check_columns(frame: pd.DataFrame, path: Path) -> None:
    missing = [name for name in REQUIRED_COLUMNS if name not in frame]
    if not any(name in frame for name in ANSWER_COLUMNS):
        missing.append("response or prediction")
    if missing:
        raise ImportFormatError(f"{path}: lacks the column(s) {missing} of a per-question table (required: "
                                f"{', '.join(REQUIRED_COLUMNS)}, and response or prediction; docs/importing-outputs.md)")


def _mask(values: np.ndarray, test) -> np.ndarray:
    return np.fromiter((test(v) for v in values), dtype=bool, count=len(values))


def _splits(benchmarks: np.ndarray, given: np.ndarray, bad: _Unplaceable) -> np.ndarray:
    """Each row's split: given, else the only split of one of our benchmarks, else OTHER_SPLIT; a split that is
    not one of ours for our benchmark, or none for MMMU (two splits), makes the row unplaceable."""
    splits = given.copy()
    absent = _mask(given, lambda v: v is None)
    for label in {b for b in benchmarks if b}:
        rows = benchmarks == label
        ours = _SPLITS_OF_OURS.get(label)
        if ours is None:
            splits[rows & absent] = OTHER_SPLIT
            continue
        if len(ours) == 1:
            splits[rows & absent] = ours[0]
        else:
            bad.mark(rows & absent, "split", f"{label} has the splits {ours}: the row must name one")
        bad.mark(rows & ~absent & ~np.isin(given.astype(str), ours), "split", f"the split of {label} is one of {ours}")
    return splits


def _models(names: np.ndarray, registry: Registry, bad: _Unplaceable) -> tuple[np.ndarray, dict[str, int]]:
    """Registry keys per row, and the names no registry model has (with their placeable row counts)."""
    keys = np.full(len(names), None, dtype=object)
    unresolved = {}
    for name in {v for v in names if v and v.strip()}:
        rows = names == name
        spec = registry.resolve(name)
        if spec is None:
            unresolved[name] = int((rows & bad.placed).sum())
            bad.mark(rows, "model", UNRESOLVED)
        else:
            keys[rows] = spec.key
    return keys, unresolved


UNRESOLVED = "model matches no registry model"  # reported per file and name, not per row


def _score_distinct(answer: pd.DataFrame, parsed_options: dict, has_response: bool) -> tuple[np.ndarray, list]:
    """(group of each row, the _Scored of each group): every distinct answer scored once."""
    group = answer.groupby(list(answer.columns), dropna=False, sort=False).ngroup().to_numpy()
    firsts = np.unique(group, return_index=True)[1]
    work = [(row.benchmark, row.kind, parsed_options[_none(row.options)][0], _none(row.gold), _none(row.answer_type),
             None if _none(row.precision) is None else int(float(row.precision)), _none(row.response),
             _none(row.prediction), has_response) for row in answer.iloc[firsts].itertuples(index=False)]
    workers = _workers(len(work))
    if workers == 1:
        return group, [_score_answer(*item) for item in work]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return group, pool.starmap(_score_answer, work, chunksize=max(1, len(work) // (8 * workers)))


PARALLEL_MIN_ANSWERS = 2000  # distinct answers to score (~0.5 ms each) before forking workers pays


def _workers(answers: int) -> int:
    """Processes to score with: one per core for many answers on Linux (fork), one otherwise, and one while an
    adjudicator is registered (its calls keep their own order, rate limits and cache in this process)."""
    if answers < PARALLEL_MIN_ANSWERS or not sys.platform.startswith("linux") or current_adjudicator() is not None:
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), answers // (PARALLEL_MIN_ANSWERS // 2)))


def _place(frame: pd.DataFrame, path: Path, order: int, task: str, registry: Registry, problems: Problems
           ) -> tuple[pd.DataFrame, dict[str, int]]:
    """The placeable rows of one table-format frame, scored, in table columns (plus `_key`, `_name`), and the
    model names the registry does not know (with their row counts); every other unplaceable row is reported."""
    _check_columns(frame, path)
    bad = _Unplaceable(len(frame))
    text = {name: _text_column(frame, name) for name in TABLE_FIELDS if name != "options"}
    if path.suffix.lower() in TEXT_CELL_SUFFIXES and "response" in frame:
        # a CSV cell cannot tell an empty response from a missing one: without a prediction it is the empty response
        text["response"][_mask(text["response"], lambda v: v is None) & _mask(text["prediction"], lambda v: v is None)] = ""
    for name in ("model", "benchmark", "subtask", "question_id"):
        bad.mark(_mask(text[name], lambda v: v is None or not v.strip()), name, f"no {name}")
    benchmarks = text["benchmark"]
    for label in {b for b in benchmarks if b}:
        problem = imported_benchmark_problem(label)
        if problem is not None:
            bad.mark(benchmarks == label, "benchmark", problem.replace("per_question field 'benchmark'", "benchmark"))
    splits = _splits(benchmarks, text["split"], bad)
    variants = np.where(_mask(text["variant"], lambda v: v is None), DEFAULT_VARIANT, text["variant"]).astype(object)
    # options (parsed once per distinct cell), kind and precision
    cells = frame["options"].to_numpy(dtype=object) if "options" in frame else np.full(len(frame), None, dtype=object)
    options = np.array([_text(v) for v in cells], dtype=object)
    parsed_options = {}
    for value, cell in zip(options, cells):
        if value not in parsed_options:
            parsed_options[value] = _options_of(cell)
    options_problem = np.array([parsed_options[v][1] for v in options], dtype=object)
    bad.mark(~np.equal(options_problem, None), "options", options_problem)
    has_options = _mask(options, lambda v: bool(parsed_options[v][0]))
    kinds = text["kind"].copy()
    no_kind = _mask(kinds, lambda v: v is None)
    kinds[no_kind & has_options] = MCQ
    bad.mark(no_kind & ~has_options, "kind", f"no options and no kind (one of {', '.join(KINDS)})")
    bad.mark(~np.isin(kinds.astype(str), KINDS), "kind", [f"kind {k!r} is not one of {', '.join(KINDS)}" for k in kinds])
    bad.mark((kinds == MCQ) & ~has_options, "options", "a multiple-choice row without options")
    precision_problem = np.array([_precision_of(v)[1] for v in text["precision"]], dtype=object)
    bad.mark(~np.equal(precision_problem, None), "precision", precision_problem)
    keys, unresolved = _models(text["model"], registry, bad)
    # score each distinct answer once
    placed = np.flatnonzero(bad.placed)
    answer = pd.DataFrame({"benchmark": benchmarks, "kind": kinds, "options": options, "gold": text["gold"],
                           "answer_type": text["answer_type"], "precision": text["precision"],
                           "response": text["response"], "prediction": text["prediction"]}).iloc[placed]
    group, scored = _score_distinct(answer, parsed_options, "response" in frame)
    unscorable = np.array([s.problem is not None for s in scored], dtype=bool)
    rows_unscorable = unscorable[group] if len(group) else np.zeros(0, dtype=bool)
    for index, g in zip(placed[rows_unscorable], group[rows_unscorable]):
        bad.mark(np.arange(len(frame)) == index, *scored[g].problem)
    lines = frame["_line"].to_numpy()
    for index in np.flatnonzero(~bad.placed):
        if bad.reason[index] != UNRESOLVED:
            problems.add(order, "unplaceable_row", path, int(lines[index]), bad.field[index], bad.reason[index],
                         text["model"][index], benchmarks[index])
    kept, group = placed[~rows_unscorable], group[~rows_unscorable]
    rows = pd.DataFrame({
        "_key": keys[kept], "_name": text["model"][kept], "benchmark": benchmarks[kept], "split": splits[kept],
        "subtask": text["subtask"][kept], "question_id": text["question_id"][kept], "variant": variants[kept],
        "gold": text["gold"][kept], "response": text["response"][kept], "kind": kinds[kept], "task": task,
        "source_file": str(path), "source_line": lines[kept].astype(np.int32), "_order": order,
    })
    fields = [s.fields for s in scored]
    _validate_outcomes(fields, rows, group)
    group_options = [parsed_options[_none(v)][0] for v in answer["options"].to_numpy(dtype=object)[
        np.unique(group, return_index=True)[1]]] if len(group) else []
    per_group = {name: [None if f is None else f.get(name) for f in fields]
                 for name in ("prediction", "correct", "match", *PROMOTED_FIELDS) if name != "kind"}
    per_group["extra"] = [None if f is None else _extra(f, o) for f, o in zip(fields, _options_per_group(
        fields, group, group_options))]
    for name, values in per_group.items():
        rows[name] = np.array(values, dtype=object)[group] if len(group) else np.array([], dtype=object)
    return rows, unresolved


def _options_per_group(fields: list, group: np.ndarray, group_options: list) -> list:
    """The options of each group, None for groups no kept row belongs to."""
    present = np.unique(group)
    by_group = dict(zip(present, group_options))
    return [by_group.get(g, []) for g in range(len(fields))]


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _extra(fields: dict, options: list[str]) -> str | None:
    """The row's `extra`, as lines.py composes it from a record: the fields outside the contract's and the
    promoted ones (abstain_reason, judge fields, ...), and the options shown."""
    extra = {name: value for name, value in fields.items() if name not in _NOT_EXTRA}
    if options:
        extra["options"] = options
    return encode_json(extra).decode() if extra else None


def _validate_outcomes(fields: list, rows: pd.DataFrame, group: np.ndarray) -> None:
    """Each distinct outcome, with the question fields of its first kept row, against the record contract."""
    if not len(group):
        return
    present, first_rows = np.unique(group, return_index=True)
    for g, index in zip(present, first_rows):
        row = rows.iloc[index]
        record = {"benchmark": row["benchmark"], "split": row["split"], "subtask": row["subtask"],
                  "question_id": row["question_id"], "variant": row["variant"], "gold": row["gold"], **fields[g]}
        try:
            validate_record(record, imported=True)
        except RecordError as error:  # the scoring core wrote a record the contract refuses: a bug, not bad input
            raise AssertionError(f"{row['source_file']}:{row['source_line']}: scored record breaks the contract: "
                                 f"{error}") from None


# ---------------------------------------------------------------------------------------------- import
def _table_of(source: ImportSource, order: int, problems: Problems) -> tuple[pd.DataFrame, str]:
    """The table-format frame of a source and its task label (the VLMEvalKit dataset, or "imported")."""
    frame, bad_lines = read_file(source.path)
    for line, reason in bad_lines:
        problems.add(order, "unplaceable_row", source.path, line, None, reason)
    if source.harness == "vlmevalkit":
        model, dataset = split_vlmevalkit_name(source.path, source.dataset)
        return vlmevalkit_table(frame, source.path, model, dataset, source.subtask_column), dataset
    return frame, "imported"


def _unresolved_message(unresolved: dict) -> str:
    lines = [f"{len(unresolved)} model name(s) in imported files match no registry model, so their rows cannot be "
             "attributed:"]
    lines += [f"  {file}: {name!r} ({n} rows)" for (file, name), n in sorted(unresolved.items())]
    lines.append("Describe your models in a models YAML passed with --extra-models FILE (its key, hf_id or aliases "
                 "naming them as the file does); --model-map NAME=KEY for another name of a registry model; or skip "
                 "these rows: --skip-unknown-models.")
    return "\n".join(lines)


def _drop_duplicates(rows: pd.DataFrame, problems: Problems) -> pd.DataFrame:
    """The first row of each ROW_KEY in a file (later ones reported); the same key in two files is an error."""
    keyed = rows.assign(model=rows["_key"])
    later = keyed.duplicated(["source_file", *ROW_KEY], keep="first").to_numpy()
    for row in keyed[later].to_dict("records"):
        problems.add(row["_order"], "duplicate", row["source_file"], row["source_line"], "question_id",
                     f"a second row of (model {row['model']!r}, {row['benchmark']} {row['split']} {row['variant']}, "
                     f"question_id {row['question_id']!r}) in this file; the first is kept", row["model"],
                     row["benchmark"])
    keyed = keyed[~later]
    across = keyed[keyed.duplicated(ROW_KEY, keep=False)]
    if len(across):
        first = across.iloc[0]
        files = sorted(set(across["source_file"]))
        raise DuplicateRunsError(f"{len(across)} rows of the same (model, benchmark, split, variant, question_id) are "
                                 f"in {len(files)} imported files ({', '.join(files[:3])}), e.g. {first['model']} "
                                 f"{first['benchmark']} question_id {first['question_id']!r}: imported files carry no "
                                 "timestamps to choose by; keep one of each")
    return rows[~later].reset_index(drop=True)


def import_outputs(sources: list[ImportSource], registry: Registry, model_overrides: dict[str, str] | None = None,
                   strict: bool = True) -> IngestResult:
    """The per-question table of the imported files (rules in the module docstring), as an IngestResult whose
    `runs` has one row per file and model (status "imported: <harness>") and whose run_tasks and settings are
    empty: the files say nothing of how the models were run."""
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    problems = Problems()
    unresolved: dict[tuple[str, str], int] = {}
    parts, lines_read = [], 0
    for order, source in enumerate(sources):
        frame, task = _table_of(source, order, problems)
        lines_read += len(frame)
        rows, names = _place(frame, source.path, order, task, registry, problems)
        parts.append(rows.assign(_harness=source.harness))
        unresolved.update({(str(source.path), name): n for name, n in names.items()})
    if unresolved and strict:
        raise UnresolvedModelError(_unresolved_message(unresolved))
    for (file, name), n in sorted(unresolved.items()):
        problems.add(-1, "unresolved_model", file, None, "model",
                     f"model {name!r} matches no registry model; {n} rows not imported (--extra-models describes it)",
                     name)
    rows = _drop_duplicates(pd.concat(parts, ignore_index=True), problems) if parts else None
    result = empty_result()
    if rows is not None and len(rows):
        result.table = _finish(rows, registry)
        result.runs = _runs_frame(rows)
    result.problems = problems.frame()
    kinds = problems.counts()
    result.counts.update({"import_files": len(sources), "imported_rows": len(result.table),
                          "rows": len(result.table), "lines_read": lines_read,
                          "lines_skipped": lines_read - len(result.table), **{k: kinds[k] for k in kinds}})
    return result


def _finish(rows: pd.DataFrame, registry: Registry) -> pd.DataFrame:
    """TABLE_COLUMNS: the registry's model columns per row, the dtypes ingestion gives them."""
    keys = rows["_key"]
    specs = {key: registry.get(key) for key in keys.unique()}
    table = pd.DataFrame({"model": keys.to_numpy()})
    for column in ("family", "size", "encoder_tier", "total_params", "active_params", "moe"):
        table[column] = keys.map({key: getattr(spec, column) for key, spec in specs.items()}).to_numpy()
    for column in TABLE_COLUMNS:
        if column not in table:
            table[column] = rows[column].to_numpy() if column in rows else None
    table = table.astype({"total_params": "int64", "active_params": "int64", "moe": "bool"})
    table["correct"] = pd.array(table["correct"].to_numpy(dtype=object), dtype="boolean")
    table["doc_id"] = pd.array(table["doc_id"].to_numpy(dtype=object), dtype="Int64")
    table["source_line"] = table["source_line"].astype(np.int32)
    for column in ("question_id", "gold", "response", "prediction", "extra"):
        table[column] = table[column].astype(object).astype(TEXT)
    return order_table_categories(table[TABLE_COLUMNS], registry)


def _runs_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per imported file and model, in the runs frame's columns."""
    records = [{
        "results_file": file, "timestamp": None, "model": key, "model_path": name, "lmms_eval_model": None,
        "lmms_eval_version": None, "tasks": ",".join(sorted(set(part["task"]))), "n_samples_files": 1,
        "n_lines": len(part), "n_rows": len(part), "n_skipped": 0, "status": f"imported: {harness}", "detail": None,
        "elapsed_s": float("nan"),
    } for (file, key, name, harness), part in rows.groupby(["source_file", "_key", "_name", "_harness"], sort=True)]
    return pd.DataFrame(records, columns=RUNS_COLUMNS).astype(
        {"n_samples_files": "int64", "n_lines": "int64", "n_rows": "int64", "n_skipped": "int64",
         "elapsed_s": "float64"})


# ---------------------------------------------------------------------------------------------- combine
LMMS_EVAL = "lmms-eval"


def sources_of_models(runs: pd.DataFrame) -> dict[str, set[str]]:
    """model -> the harnesses its rows come from (lmms-eval, vlmevalkit, table)."""
    found: dict[str, set[str]] = {}
    for model, status in runs.loc[runs["n_rows"] > 0, ["model", "status"]].itertuples(index=False):
        harness = LMMS_EVAL if status == "ingested" else str(status).removeprefix("imported: ")
        found.setdefault(str(model), set()).add(harness)
    return found


def imported_files(runs: pd.DataFrame) -> set[str]:
    """The files of the runs frame that were imported (not lmms-eval logs)."""
    return set(runs.loc[runs["status"].astype(str).str.startswith("imported: "), "results_file"].astype(str))


def combine(logs: IngestResult | None, imported: IngestResult, registry: Registry,
            mix_sources: bool = False) -> IngestResult:
    """The lmms-eval logs' result and the imported one as one. A model whose rows come from two harnesses is
    refused (MixedSourcesError) unless `mix_sources`: its answers were produced and scored by different prompts
    and pipelines, so its comparisons would mix them. The same row key in both raises DuplicateRunsError."""
    runs = imported.runs if logs is None else pd.concat([logs.runs, imported.runs], ignore_index=True)
    mixed = {model: sorted(found) for model, found in sources_of_models(runs).items() if len(found) > 1}
    if mixed and not mix_sources:
        named = "; ".join(f"{model}: {', '.join(found)}" for model, found in sorted(mixed.items())[:3])
        raise MixedSourcesError(f"{len(mixed)} model(s) have rows from more than one harness ({named}"
                                f"{' ...' if len(mixed) > 3 else ''}): their prompts and scoring pipelines differ, so "
                                "one model's comparisons would mix them; pass --mix-sources to analyse them together")
    if logs is None:
        return imported
    tables = [frame.astype({c: object for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})
              for frame in (logs.table, imported.table) if len(frame)]
    table = pd.concat(tables, ignore_index=True) if tables else logs.table
    if len(tables) == 2:
        table = order_table_categories(table, registry)
        clash = table.duplicated(ROW_KEY, keep=False)
        if clash.any():
            first = table[clash].iloc[0]
            raise DuplicateRunsError(f"{int(clash.sum()) // 2} rows of the same (model, benchmark, split, variant, "
                                     f"question_id) are both in the lmms-eval logs and in an imported file, e.g. "
                                     f"{first['model']} {first['benchmark']} question_id {first['question_id']!r} "
                                     f"({first['source_file']}): keep one of them")
    counts = dict(logs.counts)
    for key, value in imported.counts.items():
        counts[key] = counts.get(key, 0) + value
    problems = pd.concat([logs.problems.astype({"kind": object}), imported.problems.astype({"kind": object})],
                         ignore_index=True)
    return IngestResult(table=table, runs=runs, problems=problem_dtypes(problems), run_tasks=logs.run_tasks,
                        settings=logs.settings, duplicate_runs=logs.duplicate_runs, counts=counts,
                        from_cache=logs.from_cache and imported.from_cache)


class MixedSourcesError(ValueError):
    """One model's rows come from two harnesses and mixing was not asked for."""


__all__ = ["ANSWER_COLUMNS", "LMMS_EVAL", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "TABLE_FIELDS", "VLMEVALKIT_DATASETS",
           "ImportFormatError", "ImportSource", "MixedSourcesError", "combine", "import_outputs", "imported_files",
           "read_file",
           "sources_of_models", "split_vlmevalkit_name", "vlmevalkit_table"]
