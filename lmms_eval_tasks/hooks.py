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
from .benchmarks import BenchmarkSpec
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
    if column not in dataset.column_names:
        raise DocError(f"dataset has no image column '{column}' (columns: {dataset.column_names})")
    if isinstance(dataset.features[column], datasets.Image):
        dataset = dataset.cast_column(column, datasets.Image(decode=False))
    return [value is not None and value != "" and value != {"bytes": None, "path": None} for value in dataset[column]]


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
    question = question_of(doc)
    where = f"{question.benchmark} {question.question_id}"
    missing = [field for field in question.image_fields if doc.get(field) is None]
    if missing and not question.images_optional:
        raise DocError(f"{where}: image field(s) {missing} are empty but the question needs them")
    return [load_image(doc[field], f"{where} field '{field}'") for field in question.image_fields if field not in missing]


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


def process_results(doc: dict, results: list) -> dict:
    """Each metric gets only what its aggregation needs (every value is also written to each log line);
    the full decision is the `per_question` record."""
    question = question_of(doc)
    response = response_text(results)
    if VARIANTS[question.variant].prompt == "describe":  # a caption, not an answer: nothing to extract or score
        outcome = Outcome(None, None, "none", "describe")
    else:
        outcome = score(question, response, images=lambda: scored_visuals(doc))  # loaded only if a judge is asked
    return {
        "accuracy": outcome.correct,
        "subtask_accuracy": [question.subtask, outcome.correct],
        "unparsed_rate": outcome.match == "none",
        "macro_f1": [outcome.prediction, question.gold],
        "empty_response_rate": not response.strip(),
        "per_question": per_question_record(question, response, outcome),
    }


def aggregate_accuracy(items: list[bool | None]) -> float | None:
    """Mean correctness over questions with a known gold; None when no gold is known (MMMU test)."""
    known = [correct for correct in items if correct is not None]
    return sum(known) / len(known) if known else None


def aggregate_subtask_accuracy(items: list[list]) -> dict[str, float | None]:
    by_subtask: dict[str, list[bool | None]] = {}
    for subtask, correct in items:
        by_subtask.setdefault(subtask, []).append(correct)
    return {subtask: aggregate_accuracy(group) for subtask, group in sorted(by_subtask.items())}


def aggregate_macro_f1(items: list[list]) -> float | None:
    """CAIT: macro F1 over the two option letters (metrics.macro_f1)."""
    known = [(prediction, gold) for prediction, gold in items if gold is not None]
    return macro_f1([p for p, _ in known], [g for _, g in known]) if known else None


def aggregate_share(items: list[bool]) -> float:
    """Share of true items: unparsed responses (scored wrong), or empty responses."""
    return sum(items) / len(items) if items else 0.0
