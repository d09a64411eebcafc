"""Per-question outputs from other harnesses, scored by the project's own scoring core into ingestion's table.

Two inputs (docs/importing-outputs.md has the full description and examples), each a module of its own:

- the per-question table (`.parquet`, `.csv`, `.jsonl`), one row per model and question (table.py);
- VLMEvalKit prediction files (`<model>_<dataset>.xlsx` / `.tsv` / `.csv`, as VLMEvalKit writes them into
  `<work_dir>/<model>/` or `<work_dir>/<model>/T<date>_G<commit>/`), mapped to a table (vlmevalkit.py), its
  scoring files joined to the predictions they score and the newest of several runs kept (_read_sources).

Before scoring, every source is read and every model name resolved: an unknown one stops the import at once.
Then per file: answers given as lists unwrapped, subtask labels of the paper's benchmarks in our spelling
(SUBTASK_SPELLINGS), true_false rows as the choice between True and False, lower-case gold letters upper-cased;
the question text, hint and the harness's own reading (ROW_EXTRA_COLUMNS) go to `extra` (audit.py, the
explorer).

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
key in two files raises DuplicateRunsError (imported files carry no timestamps to choose by, but VLMEvalKit's
run folders do). A file that
cannot be read, or lacks a required column, raises ImportFormatError naming the file and the column.

In CSV, TSV and xlsx an empty `response` cell (VLMEvalKit: `prediction`) of a row without a prediction is the empty
response (abstain reason `empty`): those formats cannot tell an empty text from a missing one.

Speed (perf/bench_import.py): files are read with Arrow, every column becomes codes into its distinct values
(table.Column), each check runs once per distinct value and the table is built from the codes; scoring forks one
process per core when there are thousands of distinct answers (the extraction rules cost ~0.5 ms per text).
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

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lmms_eval_tasks.benchmarks import BENCHMARKS as BENCHMARK_SPECS
from lmms_eval_tasks.question import LETTERS, MCQ, OPEN, YES_NO, Question
from lmms_eval_tasks.record import (
    BENCHMARKS,
    MATCH_KINDS,
    REQUIRED_FIELDS,
    SPLITS,
    RecordError,
    imported_benchmark_problem,
    validate_record,
)
from lmms_eval_tasks.scoring import (
    current_adjudicator,
    per_question_record,
    score,
    score_prediction,
)
from model_configs import Registry
from model_configs.registry import ModelSpec
from postprocess.logs.imports.table import (
    ANSWER_COLUMNS,
    KINDS,
    ROW_EXTRA_COLUMNS,
    TABLE_FIELDS,
    TEXT_CELL_SUFFIXES,
    Column,
    ImportFormatError,
    cell_text,
    check_columns,
    derived_column,
    mapped_column,
    read_file,
)
from postprocess.logs.imports.vlmevalkit import (
    OTHER_SPLIT,
    is_scoring_file,
    run_date,
    split_vlmevalkit_name,
    vlmevalkit_table,
)
from postprocess.logs.ingest import (
    DUPLICATE_RUN_COLUMNS,
    ROW_KEY,
    RUNS_COLUMNS,
    TABLE_COLUMNS,
    DuplicateRunsError,
    IngestResult,
    Problems,
    UnresolvedModelError,
    FIXED_CATEGORIES,
    _categorical,
    empty_result,
    order_table_categories,
    problem_dtypes,
)
from postprocess.logs.lines import PROMOTED_FIELDS, TEXT, encode_json

DEFAULT_VARIANT = "direct"
# the record's fields that describe the question (the rest describe the outcome and are scored once per answer)
QUESTION_FIELDS = frozenset(("benchmark", "split", "subtask", "question_id", "variant", "gold", "kind", "options",
                             "permutation", "details"))
_NOT_EXTRA = frozenset(REQUIRED_FIELDS) | frozenset(PROMOTED_FIELDS) | {"response"}  # as lines.py files them
_SPLITS_OF_OURS = {name: sorted({spec.split for spec in BENCHMARK_SPECS if spec.name == name})
                   for name in {spec.name for spec in BENCHMARK_SPECS}}


@dataclass(frozen=True)
class ImportSource:
    """One file to import: a per-question table, or a VLMEvalKit prediction file (`dataset`: its dataset name,
    None to read it from the file name; `subtask_column`: for a dataset not in VLMEVALKIT_DATASETS)."""
    path: Path
    harness: str  # "table" | "vlmevalkit"
    dataset: str | None = None
    subtask_column: str | None = None


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
class _Unplaceable:
    """Per row: the first reason found why it cannot be placed (an index into `reasons`, -1: placeable)."""

    def __init__(self, n: int) -> None:
        self.reason = np.full(n, -1, dtype=np.int64)
        self.reasons: list[tuple[str | None, str]] = []  # (field, detail)
        self._ids: dict[tuple[str | None, str], int] = {}

    def reason_id(self, field_name: str | None, detail: str) -> int:
        if (field_name, detail) not in self._ids:
            self._ids[(field_name, detail)] = len(self.reasons)
            self.reasons.append((field_name, detail))
        return self._ids[(field_name, detail)]

    def mark(self, rows: np.ndarray, field_name: str | None, detail: str) -> None:
        fresh = rows & (self.reason < 0)
        if fresh.any():
            self.reason[fresh] = self.reason_id(field_name, detail)

    @property
    def placed(self) -> np.ndarray:
        return self.reason < 0


UNRESOLVED = "model matches no registry model"  # reported per file and name, not per row


def _combined(*codes: np.ndarray) -> np.ndarray:
    """One code per distinct combination of the given code columns (-1 counts as a value)."""
    combined = np.zeros(len(codes[0]), dtype=np.int64)
    for column in codes:
        combined = pd.factorize(combined * (int(column.max(initial=-1)) + 2) + column + 1)[0]
    return combined


def _splits(benchmark: Column, given: Column, bad: _Unplaceable) -> Column:
    """Each row's split: given, else the only split of one of our benchmarks, else OTHER_SPLIT; for one of our
    benchmarks a split not its own, or none for one of two splits (MMMU), makes the row unplaceable."""
    pairs = _combined(benchmark.codes, given.codes)
    present, firsts = np.unique(pairs, return_index=True)
    per_pair = np.full(len(present), None, dtype=object)
    benchmarks, splits = benchmark.value_array(), given.value_array()
    for i, first in enumerate(firsts):
        label, split = benchmarks[benchmark.codes[first]], splits[given.codes[first]]
        ours = _SPLITS_OF_OURS.get(label)
        rows = pairs == present[i]
        if label is None:
            continue
        if ours is None:
            per_pair[i] = split or OTHER_SPLIT
        elif split is None and len(ours) == 1:
            per_pair[i] = ours[0]
        elif split is None:
            bad.mark(rows, "split", f"{label} has the splits {ours}: the row must name one")
        elif split not in ours:
            bad.mark(rows, "split", f"the split of {label} is one of {ours}, not {split!r}")
        else:
            per_pair[i] = split
    lookup = np.empty(int(present.max(initial=-1)) + 1, dtype=np.int64)
    lookup[present] = np.arange(len(present))
    return mapped_column(lookup[pairs], per_pair)


def _replaced(column: Column, rows: np.ndarray, values) -> Column:
    """The column with the values of `rows` (a mask) replaced."""
    full = column.value_array()[column.codes].copy()
    full[rows] = values
    return derived_column(full)


def _unwrap_answers(table: pa.Table, columns: dict[str, Column], bad: _Unplaceable) -> None:
    """A response or prediction given as a list (JSONL, Parquet) is its one text; a list of several texts makes
    the row unplaceable (which text was the answer cannot be told)."""
    for name in ANSWER_COLUMNS:
        if name not in table.column_names:
            continue
        array = table.column(name).combine_chunks()
        if not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
            continue
        lengths = pc.list_value_length(array).fill_null(1).to_numpy(zero_copy_only=False)
        bad.mark(lengths > 1, name, f"{name} is a list of several texts: give the one answer")
        bad.mark(lengths == 0, name, f"{name} is an empty list")
        first = [None if items is None or len(items) != 1 else cell_text(items[0]) for items in array.to_pylist()]
        columns[name] = derived_column(np.array(first, dtype=object))


# benchmark -> our spelling of a subtask label another harness spells differently (VLMEvalKit's BLINK:
# Functional_Correspondence, ours Functional Correspondence, as the BLINK dataset's sub_task)
SUBTASK_SPELLINGS = {"BLINK": lambda label: label.replace("_", " ")}


def _our_subtasks(benchmark: Column, subtask: Column) -> Column:
    """Subtask labels of the paper's benchmarks in our spelling (SUBTASK_SPELLINGS), whatever the source."""
    named = [name for name in SUBTASK_SPELLINGS if name in benchmark.values]
    if not named:
        return subtask
    labels = subtask.value_array()[subtask.codes]
    for name in named:
        rows = (benchmark.codes == benchmark.values.index(name)) & ~subtask.null
        labels[rows] = [SUBTASK_SPELLINGS[name](label) for label in labels[rows]]
    return derived_column(labels)


TRUE_FALSE = "true_false"  # a kind of the table format: scored as the choice between the options True and False
TRUE_FALSE_OPTIONS = json.dumps(["True", "False"])


def _true_false_as_choices(columns: dict[str, Column], bad: _Unplaceable) -> None:
    """Rows of kind true_false as multiple choice between "True" (A) and "False" (B), so the scoring core reads
    True/False answers by its option-text rules; a gold other than true or false (any case) is unplaceable."""
    kind = columns["kind"]
    if TRUE_FALSE not in kind.values:
        return
    rows = kind.codes == kind.values.index(TRUE_FALSE)
    gold = columns["gold"].value_array()[columns["gold"].codes[rows]]
    letters = np.array([{"true": "A", "false": "B"}.get(str(g).strip().lower()) for g in gold], dtype=object)
    unknown = np.zeros(len(rows), dtype=bool)
    unknown[np.flatnonzero(rows)[letters == None]] = True
    bad.mark(unknown & ~columns["gold"].null, "gold", "gold of a true_false row is not True or False")
    columns["gold"] = _replaced(columns["gold"], rows, letters)
    columns["options"] = _replaced(columns["options"], rows, TRUE_FALSE_OPTIONS)
    columns["kind"] = _replaced(kind, rows, MCQ)


def _upper_case_letters(gold: Column, kind: Column) -> Column:
    """A multiple-choice gold written as a lower-case letter ("b") is that letter."""
    if MCQ not in kind.values or not any(len(v) == 1 and v.islower() and v.upper() in LETTERS for v in gold.values):
        return gold
    rows = (kind.codes == kind.values.index(MCQ)) & gold.rows_where(lambda v: len(v) == 1 and v.islower())
    return _replaced(gold, rows, [g.upper() for g in gold.value_array()[gold.codes[rows]]])


def _kinds(kind: Column, has_options: np.ndarray, bad: _Unplaceable) -> Column:
    """Each row's kind: given, else mcq when it has options; rows with neither, or an unknown kind, unplaceable."""
    for value in kind.values:
        if value not in KINDS:
            bad.mark(kind.codes == kind.values.index(value), "kind",
                     f"kind {value!r} is not one of {', '.join((*KINDS, TRUE_FALSE))}")
    bad.mark(kind.null & ~has_options, "kind", f"no options and no kind (one of {', '.join((*KINDS, TRUE_FALSE))})")
    given = np.array([*kind.values, MCQ, None], dtype=object)
    derived = mapped_column(np.where(kind.null, np.where(has_options, len(kind.values), -1), kind.codes), given)
    bad.mark(derived.rows_where(lambda v: v == MCQ) & ~has_options, "options", "a multiple-choice row without options")
    return derived


def resolve_compared(name: str, registry: Registry, benchmarks) -> ModelSpec | None:
    """The model a name denotes for these benchmarks' rows: a model of the CAIT paper's table only (cait_models)
    is one of the families compared on CAIT alone, so on any other benchmark it is unknown (the analysis would
    refuse it after scoring)."""
    spec = registry.resolve(name) if name.strip() else None
    compared = {model.key for model in registry.models}
    if spec is not None and spec.key not in compared and any(b != "CAIT" for b in benchmarks):
        return None
    return spec


def _resolve(model: Column, benchmark: Column, registry: Registry, bad: _Unplaceable) -> tuple[list, dict[str, int]]:
    """The registry key of each distinct model name (None: unknown), and the unknown names' placeable row counts."""
    keys, unresolved = [], {}
    benchmarks = benchmark.value_array()
    for code, name in enumerate(model.values):
        spec = resolve_compared(name, registry, set(benchmarks[benchmark.codes[model.codes == code]]))
        keys.append(spec.key if spec else None)
        if spec is None and name.strip():
            rows = model.codes == code
            unresolved[name] = int((rows & bad.placed).sum())
            bad.mark(rows, "model", UNRESOLVED)
    return keys, unresolved


def _options_at(options: list, code: int) -> list[str]:
    """The parsed options of an options code (-1: the row has none)."""
    return (options[code] or []) if code >= 0 else []


def _score_distinct(columns: dict[str, Column], kind: Column, options: list, rows: np.ndarray,
                    has_response: bool) -> tuple[np.ndarray, list]:
    """(group of each of `rows`, the _Scored of each group): every distinct answer scored once."""
    names = ("benchmark", "gold", "answer_type", "precision", "response", "prediction")
    group = _combined(*(columns[name].codes[rows] for name in names), kind.codes[rows], columns["options"].codes[rows])
    present, firsts = np.unique(group, return_index=True)
    values = {name: columns[name].value_array() for name in names}
    kinds = kind.value_array()
    work = []
    for first in rows[firsts]:
        cell = {name: values[name][columns[name].codes[first]] for name in names}
        precision = _precision_of(cell["precision"])[0]
        work.append((cell["benchmark"], kinds[kind.codes[first]], _options_at(options, columns["options"].codes[first]),
                     cell["gold"], cell["answer_type"], precision, cell["response"], cell["prediction"], has_response))
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


def _extra(fields: dict, options: list[str]) -> str | None:
    """The row's `extra`, as lines.py composes it from a record: the fields outside the contract's and the
    promoted ones (abstain_reason, judge fields, ...), and the options shown."""
    extra = {name: value for name, value in fields.items() if name not in _NOT_EXTRA}
    if options:
        extra["options"] = options
    return encode_json(extra).decode() if extra else None


def _with_row_extra(extra: pa.Array, columns: dict[str, Column], kept: np.ndarray) -> pa.Array:
    """Each kept row's `extra` with its ROW_EXTRA_COLUMNS (question text and hint shown in the explorer, the
    harness's own reading for the scoring audit): fields of the row, not of its scored answer."""
    present = [name for name in ROW_EXTRA_COLUMNS if not columns[name].null[kept].all()]
    if not present:
        return extra
    values = {name: columns[name].value_array()[columns[name].codes[kept]] for name in present}
    merged = []
    for row, text in enumerate(extra.to_pylist()):
        fields = json.loads(text) if text else {}
        for name in present:
            value = values[name][row]
            if value is not None:
                fields[name] = (value == "True") if name == "harness_correct" else value
        merged.append(encode_json(fields).decode() if fields else None)
    return pa.array(merged, pa.large_string())


def _category(codes: np.ndarray, values: list, order=()) -> pd.Categorical:
    """Codes into `values` (-1: null) as a categorical ordered as ingestion orders that column."""
    ordered = _categorical(values, order)
    position = np.append(pd.Index(ordered.categories).get_indexer(values), -1)
    return pd.Categorical.from_codes(position[codes], categories=ordered.categories)


def _text_series(array: pa.Array) -> pd.Series:
    return pa.table({"v": array}).to_pandas(types_mapper=lambda t: TEXT if t == pa.large_string() else None)["v"]


def _place(table: pa.Table, lines: np.ndarray, path: Path, order: int, task: str, registry: Registry,
           problems: Problems) -> tuple[pd.DataFrame, dict[str, int]]:
    """The placeable rows of one table-format file, scored, as a table of TABLE_COLUMNS (plus `_name`), and the
    model names the registry does not know (with their row counts); every other unplaceable row is reported."""
    check_columns(table, path)
    n = table.num_rows
    bad = _Unplaceable(n)
    columns = {name: Column.of(table, name) for name in TABLE_FIELDS}
    if path.suffix.lower() in TEXT_CELL_SUFFIXES and "response" in table.column_names:
        # a CSV cell cannot tell an empty response from a missing one: without a prediction it is the empty response
        response = columns["response"]
        empty = response.null & columns["prediction"].null
        if empty.any():
            if "" not in response.values:
                response.values.append("")
            response.codes = np.where(empty, response.values.index(""), response.codes)
    for name in ("model", "benchmark", "subtask", "question_id"):
        bad.mark(columns[name].null | columns[name].rows_where(lambda v: not v.strip()), name, f"no {name}")
    for code, label in enumerate(columns["benchmark"].values):
        problem = imported_benchmark_problem(label) if label.strip() else None
        if problem is not None:
            bad.mark(columns["benchmark"].codes == code, "benchmark",
                     problem.replace("per_question field 'benchmark'", "benchmark"))
    _unwrap_answers(table, columns, bad)
    columns["subtask"] = _our_subtasks(columns["benchmark"], columns["subtask"])
    _true_false_as_choices(columns, bad)
    split = _splits(columns["benchmark"], columns["split"], bad)
    variant = columns["variant"]
    variant = mapped_column(variant.codes, np.array([*variant.values, DEFAULT_VARIANT], dtype=object))
    parsed = [_options_of(value) for value in columns["options"].values]
    for code, (_, problem) in enumerate(parsed):
        if problem is not None:
            bad.mark(columns["options"].codes == code, "options", problem)
    options = [value for value, _ in parsed]
    has_options = np.append(np.array([bool(o) for o in options], dtype=bool), False)[columns["options"].codes]
    kind = _kinds(columns["kind"], has_options, bad)
    columns["gold"] = _upper_case_letters(columns["gold"], kind)
    for code, value in enumerate(columns["precision"].values):
        if _precision_of(value)[1] is not None:
            bad.mark(columns["precision"].codes == code, "precision", _precision_of(value)[1])
    keys, unresolved = _resolve(columns["model"], columns["benchmark"], registry, bad)
    # score each distinct answer once; an answer that cannot be scored makes its rows unplaceable
    placed = np.flatnonzero(bad.placed)
    group, scored = _score_distinct(columns, kind, options, placed, "response" in table.column_names)
    problem_of_group = np.array([-1 if o.problem is None else bad.reason_id(*o.problem) for o in scored], dtype=np.int64)
    if len(group):
        problem = problem_of_group[group]
        bad.reason[placed[problem >= 0]] = problem[problem >= 0]
    for index in np.flatnonzero(~bad.placed):
        field_name, detail = bad.reasons[bad.reason[index]]
        if detail != UNRESOLVED:
            model, benchmark = (columns[name].value_array()[columns[name].codes[index]] for name in ("model", "benchmark"))
            problems.add(order, "unplaceable_row", path, int(lines[index]), field_name, detail, model, benchmark)
    kept_in_placed = bad.placed[placed]
    kept, group = placed[kept_in_placed], group[kept_in_placed]
    kept, group = _first_of_each_key(kept, group, columns, keys, split, variant, lines, path, order, problems)
    return _file_table(kept, group, scored, columns, keys, split, variant, kind, options, lines, path, task,
                       registry), unresolved


def _first_of_each_key(kept, group, columns, keys, split, variant, lines, path, order, problems):
    """The first row of each (model, benchmark, split, variant, question_id) in the file; later ones reported."""
    key_of_name = np.array([*keys, None], dtype=object)
    model = mapped_column(columns["model"].codes[kept], key_of_name)
    codes = _combined(model.codes, columns["benchmark"].codes[kept], split.codes[kept], variant.codes[kept],
                      columns["question_id"].codes[kept])
    first = np.zeros(len(kept), dtype=bool)
    first[np.unique(codes, return_index=True)[1]] = True
    for index in kept[~first]:
        question_id = columns["question_id"].value_array()[columns["question_id"].codes[index]]
        benchmark = columns["benchmark"].value_array()[columns["benchmark"].codes[index]]
        model_key = key_of_name[columns["model"].codes[index]]
        problems.add(order, "duplicate", path, int(lines[index]), "question_id",
                     f"a second row of (model {model_key!r}, {benchmark}, question_id {question_id!r}) in this file; "
                     "the first is kept", model_key, benchmark)
    return kept[first], group[first]


def _file_table(kept, group, scored, columns, keys, split, variant, kind, options, lines, path, task, registry
                ) -> pd.DataFrame:
    """The kept rows in TABLE_COLUMNS, with ingestion's dtypes and category orders, plus `_name`."""
    _validate_outcomes(kept, group, scored, columns, split, variant)
    model_order = [spec.key for family in registry.families for spec in registry.family_order(family)]
    key_of_name = np.array([*keys, None], dtype=object)
    model = mapped_column(columns["model"].codes[kept], key_of_name)
    specs = [registry.get(key) for key in model.values]
    frame = pd.DataFrame({"model": _category(model.codes, model.values, model_order)})
    for name, order in (("family", registry.families), ("size", [registry.get(k).size for k in model_order]),
                        ("encoder_tier", ())):
        per_model = mapped_column(model.codes, np.array([getattr(spec, name) for spec in specs], dtype=object))
        frame[name] = _category(per_model.codes, per_model.values, order)
    for name, dtype in (("total_params", np.int64), ("active_params", np.int64), ("moe", bool)):
        frame[name] = np.array([getattr(spec, name) for spec in specs], dtype=dtype)[model.codes]
    for name, column, order in (("benchmark", columns["benchmark"], BENCHMARKS), ("split", split, SPLITS),
                                ("subtask", columns["subtask"], ()), ("variant", variant, ())):
        frame[name] = _category(column.codes[kept], column.values, order)
    frame["question_id"] = _text_series(columns["question_id"].arrow(kept))
    frame["variant"] = frame.pop("variant")
    frame["gold"] = _text_series(columns["gold"].arrow(kept))
    frame["response"] = _text_series(columns["response"].arrow(kept))
    fields = [s.fields or {} for s in scored]
    present, firsts = np.unique(group, return_index=True)
    options_of_group = {g: _options_at(options, columns["options"].codes[kept[f]]) for g, f in zip(present, firsts)}
    per_group = {
        "prediction": [f.get("prediction") for f in fields],
        "correct": [f.get("correct") for f in fields],
        "match": [f.get("match") for f in fields],
        **{name: [f.get(name) for f in fields] for name in PROMOTED_FIELDS if name != "kind"},
        "extra": [_extra(f, options_of_group.get(g, [])) if g in options_of_group else None
                  for g, f in enumerate(fields)],
    }
    frame["prediction"] = _text_series(pa.array(per_group["prediction"], pa.large_string()).take(group))
    correct = np.array([c is True for c in per_group["correct"]], dtype=bool)[group]
    unknown = np.array([c is None for c in per_group["correct"]], dtype=bool)[group]
    frame["correct"] = pd.arrays.BooleanArray(correct, unknown)
    match = mapped_column(group, np.array(per_group["match"], dtype=object))
    frame["match"] = _category(match.codes, match.values, MATCH_KINDS)
    for name in PROMOTED_FIELDS:
        if name == "kind":
            frame["kind"] = _category(kind.codes[kept], kind.values)
        else:
            promoted = mapped_column(group, np.array(per_group[name], dtype=object))
            frame[name] = _category(promoted.codes, promoted.values)
    frame["extra"] = _text_series(_with_row_extra(pa.array(per_group["extra"], pa.large_string()).take(group),
                                                  columns, kept))
    frame["task"] = pd.Categorical.from_codes(np.zeros(len(kept), dtype=np.int8), categories=[task])
    frame["doc_id"] = pd.arrays.IntegerArray(np.zeros(len(kept), dtype=np.int64), np.ones(len(kept), dtype=bool))
    frame["source_file"] = pd.Categorical.from_codes(np.zeros(len(kept), dtype=np.int8), categories=[str(path)])
    frame["source_line"] = lines[kept].astype(np.int32)
    for name in TABLE_COLUMNS:  # a record field the table gains as a column of its own (outcome fields only)
        if name not in frame:
            values = mapped_column(group, np.array([f.get(name) for f in fields], dtype=object))
            frame[name] = _category(values.codes, values.values)
    for name, categories in FIXED_CATEGORIES.items():  # as ingestion types them: a column without a value keeps its type
        frame[name] = pd.Categorical(frame[name], categories=pd.Index(categories, dtype="str"))
    table = frame[TABLE_COLUMNS]
    table.insert(len(TABLE_COLUMNS), "_name", _category(columns["model"].codes[kept], columns["model"].values))
    return table


def _validate_outcomes(kept, group, scored, columns, split, variant) -> None:
    """Each distinct outcome, with the question fields of its first kept row, against the record contract."""
    present, firsts = np.unique(group, return_index=True)
    for g, first in zip(present, kept[firsts]):
        cell = {name: columns[name].value_array()[columns[name].codes[first]]
                for name in ("benchmark", "subtask", "question_id", "gold")}
        record = {**cell, "split": split.value_array()[split.codes[first]],
                  "variant": variant.value_array()[variant.codes[first]], **scored[g].fields}
        try:
            validate_record(record, imported=True)
        except RecordError as error:  # the scoring core wrote a record the contract refuses: a bug, not bad input
            raise AssertionError(f"row {first}: scored record breaks the contract: {error}") from None


# ---------------------------------------------------------------------------------------------- import
@dataclass
class _Read:
    """One source as read: its table-format rows, where each is in its file, its task label (the VLMEvalKit
    dataset, or "imported") and the number of its lines that hold no row (reported)."""
    source: ImportSource
    table: pa.Table
    lines: np.ndarray
    task: str
    bad_lines: int


def _read_sources(sources: list[ImportSource], problems: Problems) -> tuple[list[_Read], pd.DataFrame]:
    """Every source read, VLMEvalKit's scoring files joined to the prediction files they score and, of several
    runs of one model and dataset (VLMEvalKit's T<date> folders), the newest kept: (the reads, the duplicate
    runs frame, one row per dropped run)."""
    frames = {}
    for order, source in enumerate(sources):
        table, lines, bad_lines = read_file(source.path)
        for line, reason in bad_lines:
            problems.add(order, "unplaceable_row", source.path, line, None, reason)
        frames[order] = (table, lines, bad_lines)
    vlmevalkit = {order: frames[order][0].to_pandas() for order, s in enumerate(sources) if s.harness == "vlmevalkit"}
    scoring = {order for order, frame in vlmevalkit.items() if is_scoring_file(frame)}
    scored_by: dict[int, int] = {}
    for order in sorted(scoring):
        path = sources[order].path
        owners = [o for o in vlmevalkit if o not in scoring and sources[o].path.parent == path.parent
                  and path.stem.startswith(f"{sources[o].path.stem}_")]
        if not owners:
            raise ImportFormatError(f"{path}: VLMEvalKit's scoring of a prediction file (it has `hit` or `res`), "
                                    "not the predictions: give the prediction file it scores (<model>_<dataset>"
                                    f"{path.suffix}, in the same folder) with it")
        scored_by[max(owners, key=lambda o: len(sources[o].path.stem))] = order
    runs: dict[tuple[str, str], list[int]] = {}
    for order in vlmevalkit:
        if order not in scoring:
            runs.setdefault(split_vlmevalkit_name(sources[order].path, sources[order].dataset), []).append(order)
    dropped, duplicate_rows = set(), []
    for (model, dataset), orders in sorted(runs.items()):
        if len(orders) < 2:
            continue
        dates = {o: run_date(sources[o].path) for o in orders}
        if None in dates.values() or len(set(dates.values())) < len(orders):
            raise DuplicateRunsError(f"{len(orders)} VLMEvalKit runs of {model} on {dataset} "
                                     f"({', '.join(str(sources[o].path) for o in orders)}) and no run-folder dates "
                                     "(T<date>_G<commit>) to choose the newest by: keep one of them")
        kept = max(orders, key=dates.get)
        for o in orders:
            if o != kept:
                dropped.add(o)
                duplicate_rows.append({
                    "model": model, "kept_run": str(sources[kept].path), "kept_timestamp": dates[kept],
                    "dropped_run": str(sources[o].path), "dropped_timestamp": dates[o], "datasets": dataset,
                    "duplicate_rows": len(vlmevalkit[o]), "answers_differ": 0, "settings_differ": None,
                    "kept_because": "newest"})
                problems.add(o, "duplicate", sources[o].path, None, None,
                             f"an older VLMEvalKit run of {model} on {dataset} ({dates[o]}); the newest, "
                             f"{sources[kept].path} ({dates[kept]}), is kept", model, dataset)
    reads = []
    for order, source in enumerate(sources):
        table, lines, bad_lines = frames[order]
        if order in scoring or order in dropped:
            continue
        if source.harness == "vlmevalkit":
            model, dataset = split_vlmevalkit_name(source.path, source.dataset)
            judged = vlmevalkit[scored_by[order]] if order in scored_by else None
            frame = vlmevalkit_table(vlmevalkit[order], source.path, model, dataset, source.subtask_column, judged)
            table, task = pa.Table.from_pandas(frame, preserve_index=False), dataset
        else:
            task = "imported"
        reads.append(_Read(source, table, lines, task, len(bad_lines)))
    return reads, pd.DataFrame(duplicate_rows, columns=DUPLICATE_RUN_COLUMNS).astype(
        {"duplicate_rows": "int64", "answers_differ": "int64"})


def _unknown_names(reads: list[_Read], registry: Registry) -> dict[tuple[str, str], int]:
    """(file, model name) -> its row count, for the names the registry does not resolve: found before any
    scoring, so that the error comes at once."""
    unknown = {}
    for read in reads:
        if "model" not in read.table.column_names:
            continue
        # the distinct (model, benchmark) pairs and their row counts, by Arrow (a Python pass over 558k rows cost 2 s)
        columns = {name: _plain(read.table.column(name)) for name in ("model", "benchmark")
                   if name in read.table.column_names}
        pairs = pa.table(columns).group_by(list(columns)).aggregate([([], "count_all")]).to_pylist()
        by_name: dict[str, tuple[int, set]] = {}
        for pair in pairs:
            if pair["model"] is not None:
                rows, benchmarks = by_name.setdefault(str(pair["model"]), (0, set()))
                by_name[str(pair["model"])] = (rows + pair["count_all"], benchmarks | ({pair["benchmark"]} if
                                                                                      "benchmark" in pair else set()))
        for name, (rows, benchmarks) in sorted(by_name.items()):
            if name.strip() and resolve_compared(name, registry, benchmarks) is None:
                unknown[(str(read.source.path), name)] = rows
    return unknown


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded column (a categorical written to Parquet) as its values, which Arrow can group by."""
    return column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column


def _unresolved_message(unresolved: dict) -> str:
    lines = [f"{len(unresolved)} model name(s) in imported files match no registry model, so their rows cannot be "
             "attributed:"]
    lines += [f"  {file}: {name!r} ({n} rows)" for (file, name), n in sorted(unresolved.items())]
    lines.append("Describe your models in a models YAML passed with --extra-models FILE (its key, hf_id or aliases "
                 "naming them as the file does); --model-map NAME=KEY for another name of a registry model; or skip "
                 "these rows: --skip-unknown-models.")
    return "\n".join(lines)


def _refuse_keys_in_two_files(table: pd.DataFrame) -> None:
    clash = table.duplicated(ROW_KEY, keep=False)
    if clash.any():
        first = table[clash].iloc[0]
        files = sorted(set(table.loc[clash, "source_file"].astype(str)))
        raise DuplicateRunsError(f"{int(clash.sum())} rows of the same (model, benchmark, split, variant, question_id) "
                                 f"are in {len(files)} imported files ({', '.join(files[:3])}), e.g. {first['model']} "
                                 f"{first['benchmark']} question_id {first['question_id']!r}: imported files carry no "
                                 "timestamps to choose by; keep one of each")


def import_outputs(sources: list[ImportSource], registry: Registry, model_overrides: dict[str, str] | None = None,
                   strict: bool = True) -> IngestResult:
    """The per-question table of the imported files (rules in the module docstring), as an IngestResult whose
    `runs` has one row per file and model (status "imported: <harness>") and whose run_tasks and settings are
    empty: the files say nothing of how the models were run."""
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    problems = Problems()
    reads, duplicate_runs = _read_sources(sources, problems)
    if strict:
        unknown = _unknown_names(reads, registry)
        if unknown:
            raise UnresolvedModelError(_unresolved_message(unknown))
    unresolved: dict[tuple[str, str], int] = {}
    parts, runs, lines_read = [], [], 0
    for order, read in enumerate(reads):
        lines_read += len(read.lines) + read.bad_lines
        part, names = _place(read.table, read.lines, read.source.path, order, read.task, registry, problems)
        unresolved.update({(str(read.source.path), name): count for name, count in names.items()})
        runs.append(_runs_of(part, read.source.harness))
        parts.append(part.drop(columns="_name"))
    for (file, name), count in sorted(unresolved.items()):
        problems.add(-1, "unresolved_model", file, None, "model",
                     f"model {name!r} matches no registry model; {count} rows not imported (--extra-models describes "
                     "it)", name)
    result = empty_result()
    if len(parts) == 1:
        result.table = parts[0]
    elif parts:
        table = pd.concat([p.astype({c: object for c in p.columns if isinstance(p[c].dtype, pd.CategoricalDtype)})
                           for p in parts], ignore_index=True)
        result.table = order_table_categories(table, registry)
        _refuse_keys_in_two_files(result.table)
    if runs:
        result.runs = pd.concat(runs, ignore_index=True)
    result.problems = problems.frame()
    result.duplicate_runs = duplicate_runs
    kinds = problems.counts()
    result.counts.update({"import_files": len(sources), "imported_rows": len(result.table), "rows": len(result.table),
                          "lines_read": lines_read, "lines_skipped": lines_read - len(result.table),
                          **{kind: kinds[kind] for kind in kinds}})
    return result


def _runs_of(part: pd.DataFrame, harness: str) -> pd.DataFrame:
    """One runs-frame row per model (and its name in the file) of one imported file."""
    records = [{
        "results_file": str(file), "timestamp": None, "model": str(key), "model_path": str(name),
        "lmms_eval_model": None, "lmms_eval_version": None, "tasks": str(task), "n_samples_files": 1,
        "n_lines": int(count), "n_rows": int(count), "n_skipped": 0, "status": f"imported: {harness}", "detail": None,
        "elapsed_s": float("nan"),
    } for (file, key, name, task), count in part.groupby(["source_file", "model", "_name", "task"], observed=True,
                                                         sort=True).size().items()]
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
    duplicate_runs = pd.concat([frame for frame in (logs.duplicate_runs, imported.duplicate_runs) if len(frame)],
                               ignore_index=True) if len(imported.duplicate_runs) else logs.duplicate_runs
    return IngestResult(table=table, runs=runs, problems=problem_dtypes(problems), run_tasks=logs.run_tasks,
                        settings=logs.settings, duplicate_runs=duplicate_runs, counts=counts,
                        from_cache=logs.from_cache and imported.from_cache)


class MixedSourcesError(ValueError):
    """One model's rows come from two harnesses and mixing was not asked for."""

