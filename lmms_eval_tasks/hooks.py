"""The lmms-eval hooks every task YAML points at; none of them is benchmark-specific.

process_docs turns each dataset row into a canonical question (adapters.py), applies the task's
variant and stores the question and its prompt in two columns, so the other hooks only read them:
  invscale_question  the Question as JSON (gold remapped, options in the shown order)
  invscale_prompt    the text sent to the model
Each task's process_docs is `task_hooks.docs_<task name>`, a one-line call of `prepare_docs` written by
generate.py (lmms-eval hands process_docs only the dataset, so the task is fixed by which hook is named).
"""

from __future__ import annotations

from collections import Counter

import datasets
from loguru import logger

from . import adapters
from .benchmarks import BY_KEY, BenchmarkSpec
from .catalog import TASKS
from .prompts import build_prompt
from .question import DocError, Question, load_image
from .metrics import macro_f1
from .scoring import Outcome, per_question_record, response_text, score
from .variants import VARIANTS, apply_variant, takes_part

QUESTION_COLUMN = "invscale_question"
PROMPT_COLUMN = "invscale_prompt"


def _metadata_rows(dataset: datasets.Dataset, benchmark: BenchmarkSpec) -> list[dict]:
    """Rows without image columns (decoding every image just to read the question would be slow)."""
    skip = set(benchmark.image_columns) | {
        name for name, feature in dataset.features.items() if isinstance(feature, datasets.Image)
    }
    return dataset.select_columns([c for c in dataset.column_names if c not in skip]).to_list()


def _has_image(dataset: datasets.Dataset, column: str) -> list[bool]:
    """Per row, whether the image column holds an image: read from the Arrow column (validity and lengths), so
    no image's bytes are copied out (a split's column of 1024 px photos read into Python took gigabytes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column not in dataset.column_names:
        raise DocError(f"dataset has no image column '{column}' (columns: {dataset.column_names})")
    values = dataset.with_format("arrow")[column]

    def filled(array):  # present and not empty ("" as a path, b"" as bytes, [] as a list)
        if pa.types.is_string(array.type) or pa.types.is_large_string(array.type) or pa.types.is_binary(array.type) \
                or pa.types.is_large_binary(array.type):
            return pc.and_kleene(pc.is_valid(array), pc.not_equal(pc.binary_length(array), 0))
        if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
            return pc.and_kleene(pc.is_valid(array), pc.not_equal(pc.list_value_length(array), 0))
        return pc.is_valid(array)

    def present(array):
        if not pa.types.is_struct(array.type):
            return filled(array)
        parts = [filled(pc.struct_field(array, name)) for name in ("bytes", "path") if array.type.get_field_index(name) >= 0]
        if not parts:  # an Image feature is {bytes, path}, either one filled
            return pc.is_valid(array)
        return pc.and_kleene(pc.is_valid(array), parts[0] if len(parts) == 1 else pc.or_kleene(*parts))

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]  # chunk by chunk: nothing copied
    return [bool(flag) for chunk in chunks for flag in present(chunk).fill_null(False).to_pylist()]


def questions_for(dataset: datasets.Dataset, benchmark: BenchmarkSpec) -> tuple[list[int], list[Question]]:
    """(row positions kept, their questions) in dataset order."""
    rows = _metadata_rows(dataset, benchmark)
    keep = _has_image(dataset, benchmark.image_columns[0]) if benchmark.require_image else [True] * len(rows)
    positions = [i for i, kept in enumerate(keep) if kept]
    adapter = getattr(adapters, benchmark.adapter)
    questions = [adapter(rows[i], i, benchmark) for i in positions]
    if benchmark.finalize:
        getattr(adapters, benchmark.finalize)(questions)
    duplicates = [qid for qid, count in Counter(q.question_id for q in questions).items() if count > 1]
    if duplicates:
        raise DocError(f"{benchmark.name} {benchmark.split}: {len(duplicates)} duplicate question ids, e.g. {duplicates[:5]}")
    if benchmark.require_image:
        logger.info(f"{benchmark.name} {benchmark.split}: kept {len(positions)} of {len(rows)} questions that have an image")
    return positions, questions


def prepare_docs(dataset: datasets.Dataset, task: str) -> datasets.Dataset:
    entry = TASKS[task]
    variant = VARIANTS[entry.variant]
    positions, questions = questions_for(dataset, entry.spec)
    selected = [(p, q) for p, q in zip(positions, questions) if takes_part(variant, q)]
    if len(selected) < len(questions):
        logger.info(
            f"{task}: {len(questions) - len(selected)} of {len(questions)} questions do not have exactly four "
            f"options and are not part of the {variant.name} variant"
        )
    shown = [(p, apply_variant(q, variant), q.options) for p, q in selected]
    prompts = [build_prompt(q, variant.prompt, original_options=original) for _, q, original in shown]
    return (
        dataset.select([p for p, _, _ in shown])
        .add_column(QUESTION_COLUMN, [q.to_json() for _, q, _ in shown])
        .add_column(PROMPT_COLUMN, prompts)
    )


def question_of(doc: dict) -> Question:
    return Question.from_json(doc[QUESTION_COLUMN])


def doc_to_visual(doc: dict) -> list:
    images, problems = visuals_and_problems(doc)
    if problems:
        raise DocError(problems[0])
    return images


def visuals_and_problems(doc: dict) -> tuple[list, list[str]]:
    """The question's images that decode, and why each other one does not (the explorer shows a page without
    them; a run stops at the first)."""
    question = question_of(doc)
    where = f"{question.benchmark} {question.question_id}"
    missing = [field for field in question.image_fields if doc.get(field) is None]
    problems = [f"{where}: image field(s) {missing} are empty but the question needs them"] if (
        missing and not question.images_optional) else []
    images = []
    for field in question.image_fields:
        if field not in missing:
            try:
                images.append(load_image(doc[field], f"{where} field '{field}'"))
            except DocError as error:
                problems.append(str(error))
    return images, problems


def scored_visuals(doc: dict) -> list:
    """doc_to_visual for a doc that process_results gets. lmms-eval drops a dataset's image columns from
    those docs unless it runs with --process_with_media; a missing column then says so, rather than
    reading as a question without images."""
    question = question_of(doc)
    dropped = [field for field in question.image_fields if field not in doc]
    if dropped:
        raise DocError(f"{question.benchmark} {question.question_id}: the scored doc has no image column(s) "
                       f"{dropped}: run lmms-eval with --process_with_media to show a judge the images")
    return doc_to_visual(doc)


def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    return doc[PROMPT_COLUMN]


def doc_to_target(doc: dict) -> str:
    gold = question_of(doc).gold
    return "" if gold is None else str(gold)


# What results.json reports per task, by kind of task. process_results returns exactly these keys (accuracy only
# when the question has a known gold), so no metric appears as an empty "[]" entry; generate.py writes them into
# the task YAMLs. `mean` is lmms-eval's own aggregation: lmms-eval computes a standard error only for the
# aggregations it knows, and for `mean` it gives the sample standard error of the mean. The group YAMLs pool
# GROUP_METRICS over their tasks, weighted by each task's number of questions.
MetricSpec = tuple[str, str, bool | None]  # (metric, aggregation: "mean" or a function of this module, higher is better)
ACCURACY: MetricSpec = ("accuracy", "mean", True)
UNPARSED_RATE: MetricSpec = ("unparsed_rate", "mean", False)
PER_QUESTION: MetricSpec = ("per_question", "aggregate_per_question", None)  # the record; its value is a count
METRICS: dict[str, list[MetricSpec]] = {
    "benchmark": [ACCURACY, UNPARSED_RATE, PER_QUESTION],
    # CAIT's two options are balanced, so it also reports macro F1 over A and B (metrics.macro_f1)
    "cait": [ACCURACY, ("macro_f1", "aggregate_macro_f1", True), UNPARSED_RATE, PER_QUESTION],
    # a caption is not scored here: postprocess's re-evaluation asks LLM judges to answer from it
    "describe": [("empty_response_rate", "mean", False), PER_QUESTION],
}
GROUP_METRICS = ("accuracy", "unparsed_rate")


def metric_kind(prompt_style: str, variant: str) -> str:
    """Which METRICS list a task reports: describe for a caption task, cait for CAIT, else benchmark."""
    if VARIANTS[variant].prompt == "describe":
        return "describe"
    return "cait" if prompt_style == "cait" else "benchmark"


def process_results(doc: dict, results: list) -> dict:
    """The task's METRICS values for one question; lmms-eval also writes them on the question's sample line.
    `per_question` is the full decision (record.py); the response itself is the line's `filtered_resps`."""
    question = question_of(doc)
    response = response_text(results)
    kind = metric_kind(BY_KEY[f"{question.benchmark}:{question.split}"].prompt_style, question.variant)
    if kind == "describe":  # a caption, not an answer: nothing to extract or score
        outcome = Outcome(None, None, "none", "describe")
        return {"empty_response_rate": not response.strip(), "per_question": per_question_record(question, outcome)}
    outcome = score(question, response, images=lambda: scored_visuals(doc))  # loaded only if a judge is asked
    values: dict = {} if outcome.correct is None else {"accuracy": outcome.correct}
    if kind == "cait":
        values["macro_f1"] = [outcome.prediction, question.gold]
    values["unparsed_rate"] = outcome.match == "none"
    values["per_question"] = per_question_record(question, outcome)
    return values


def aggregate_per_question(records: list[dict]) -> int:
    """The number of per-question records in the task's samples file (what postprocess reads).

    The accuracy per subtask goes to lmms-eval's log, one line per subtask, rather than into results.json:
    lmms-eval prints every results.json value as one cell of its console table, and a benchmark with 32
    subtasks would make that cell 1,000 characters wide. The records hold subtask and correctness, so
    `python -m postprocess report` tabulates it too (Appendix B subtask accuracy)."""
    by_subtask: dict[str, list[bool]] = {}
    for record in records:
        if record["correct"] is not None:
            by_subtask.setdefault(record["subtask"], []).append(record["correct"])
    if by_subtask:
        first = records[0]
        width = max(map(len, by_subtask))
        lines = [f"  {subtask:<{width}}  {sum(c) / len(c):.3f}  ({len(c)} question{'s' if len(c) > 1 else ''})"
                 for subtask, c in sorted(by_subtask.items())]
        logger.info(f"{first['benchmark']} {first['split']} ({first['variant']}) accuracy by subtask:\n" + "\n".join(lines))
    return len(records)


def aggregate_macro_f1(items: list[list]) -> float:
    """CAIT: macro F1 over the two option letters (metrics.macro_f1); every CAIT question has a gold letter."""
    return macro_f1([prediction for prediction, _ in items], [gold for _, gold in items])
