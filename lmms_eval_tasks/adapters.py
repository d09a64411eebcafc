"""Benchmark adapters: one dataset row -> one canonical `Question`.

With the benchmark's description (benchmarks.py) this is the only benchmark-specific code of the task
layer: each adapter is named by its BenchmarkSpec and called as adapter(row, position, spec). Field names
follow the hub dataset each BenchmarkSpec names (and VLMEvalKit's TSVs for AI2D); a missing
or malformed field raises DocError naming the benchmark, the row and the field.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .benchmarks import BenchmarkSpec
from .cait import balance_answer_positions, cait  # noqa: F401  (CAIT's adapter and finalizer, named by its spec)
from .question import LETTERS, MCQ, NUMERIC, OPEN, YES_NO, DocError, Question

MISSING_TEXT = {"", "nan", "none", "null"}


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in MISSING_TEXT


def _field(row: dict, name: str, where: str) -> Any:
    if name not in row:
        raise DocError(f"{where}: missing field '{name}' (fields present: {sorted(row)})")
    return row[name]


def _text(row: dict, name: str, where: str) -> str:
    value = _field(row, name, where)
    if _is_missing(value):
        raise DocError(f"{where}: field '{name}' is empty")
    return str(value)


def _lettered_columns(row: dict, where: str) -> list[str]:
    """Options held in columns A, B, C ... (null or 'nan' when absent); a gap before a filled column is an error,
    since the options after it would be lost or re-lettered."""
    present = [letter for letter in LETTERS if letter in row and not _is_missing(row[letter])]
    expected = list(LETTERS[: len(present)])
    if present != expected:
        raise DocError(f"{where}: option columns {present} leave a gap (expected {expected})")
    return [str(row[letter]) for letter in present]


def _gold_letter(value: Any, options: list[str], where: str) -> str:
    if _is_missing(value):
        raise DocError(f"{where}: field 'answer' is empty")
    letter = str(value).strip().strip("()").upper()
    if letter not in LETTERS[: len(options)]:
        raise DocError(f"{where}: answer {value!r} is not one of the {len(options)} option letters")
    return letter


def _parse_list(value: Any, name: str, where: str) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    if hasattr(value, "tolist"):
        return list(value.tolist())
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        raise DocError(f"{where}: field '{name}' is not a list literal: {str(value)[:80]!r}") from None
    if not isinstance(parsed, (list, tuple)):
        raise DocError(f"{where}: field '{name}' holds {type(parsed).__name__}, expected a list")
    return list(parsed)


def _lettered_options(row: dict, where: str) -> list[str]:
    options = _lettered_columns(row, where)
    if len(options) < 2:
        raise DocError(f"{where}: fewer than two options in columns A..")
    return options


def mmt_bench(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    where = f"{spec.name} row {position}"
    options = _lettered_options(row, where)
    return Question(
        benchmark=spec.name, split=spec.split, subtask=_text(row, spec.subtask_field, where),
        question_id=_text(row, "index", where), kind=MCQ, text=_text(row, "question", where),
        image_fields=["image"], options=options, gold=_gold_letter(_field(row, "answer", where), options, where),
        prompt_style=spec.prompt_style, details={"category": row.get("category")},
    )


IMAGE_PLACEHOLDER = re.compile(r"<image (\d+)>")


def mmmu(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    qid = _text(row, "id", f"{spec.name} row {position}")
    where = f"{spec.name} {qid}"
    text = _text(row, "question", where)
    question_type = _text(row, "question_type", where)
    options = [str(o) for o in _parse_list(_field(row, "options", where), "options", where)]
    referenced = [f"image_{n}" for n in dict.fromkeys(IMAGE_PLACEHOLDER.findall(" ".join([text, *options])))]
    # the referenced images must be there; without placeholders, whichever of image_1..7 the row has
    answer = row.get("answer")
    unanswered = _is_missing(answer) or str(answer).strip() == "?"
    if unanswered and spec.split != "test":  # only the test split's answers are withheld
        raise DocError(f"{where}: field 'answer' is empty")
    common = dict(benchmark=spec.name, split=spec.split, subtask=_text(row, spec.subtask_field, where), question_id=qid, text=text,
                  image_fields=referenced or [f"image_{n}" for n in range(1, 8)], images_optional=not referenced, details={"subject": row.get("subject"), "question_type": question_type})
    if question_type == "open":
        return Question(kind=OPEN, gold=None if unanswered else _open_golds(answer), prompt_style="open", **common)
    if len(options) < 2:
        raise DocError(f"{where}: multiple-choice question with {len(options)} options")
    return Question(kind=MCQ, options=options, gold=None if unanswered else _gold_letter(answer, options, where),
                    prompt_style=spec.prompt_style, **common)


def _open_golds(answer: Any) -> list[str]:
    text = str(answer).strip()
    if text.startswith("["):
        try:
            return [str(a) for a in ast.literal_eval(text)]
        except (ValueError, SyntaxError):
            pass
    return [text]


def scienceqa(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    where = f"{spec.name} row {position}"
    options = [str(c) for c in _parse_list(_field(row, "choices", where), "choices", where)]
    answer = _field(row, "answer", where)
    if not isinstance(answer, (int,)) and not str(answer).isdigit():
        raise DocError(f"{where}: answer {answer!r} is not an option index")
    if not 0 <= int(answer) < len(options):
        raise DocError(f"{where}: answer index {answer} outside the {len(options)} choices")
    return Question(
        benchmark=spec.name, split=spec.split, subtask=_text(row, spec.subtask_field, where),
        question_id=f"scienceqa-{spec.split}-{position}", kind=MCQ, text=_text(row, "question", where),
        image_fields=["image"], options=options, gold=LETTERS[int(answer)], prompt_style=spec.prompt_style,
        details={"subject": row.get("subject"), "hint": row.get("hint")},
    )


def mme(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    where = f"{spec.name} row {position}"
    gold = _text(row, "answer", where).strip().capitalize()
    if gold not in ("Yes", "No"):
        raise DocError(f"{where}: answer {gold!r} is not Yes/No")
    return Question(
        benchmark=spec.name, split=spec.split, subtask=_text(row, spec.subtask_field, where),
        question_id=_text(row, "question_id", where), kind=YES_NO, text=_text(row, "question", where),
        image_fields=["image"], gold=gold, prompt_style=spec.prompt_style,
    )


def ai2d(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    where = f"{spec.name} row {position}"
    options = _lettered_options(row, where)
    return Question(
        benchmark=spec.name, split=spec.split, subtask=_text(row, spec.subtask_field, where),
        question_id=_text(row, "index", where), kind=MCQ, text=_text(row, "question", where),
        image_fields=["image"], options=options, gold=_gold_letter(_field(row, "answer", where), options, where),
        prompt_style=spec.prompt_style,
    )


def mathvista(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    qid = _text(row, "pid", f"{spec.name} row {position}")
    where = f"{spec.name} pid {qid}"
    metadata = _field(row, "metadata", where)
    if not isinstance(metadata, dict) or _is_missing(metadata.get("task")):
        raise DocError(f"{where}: field 'metadata.task' is missing")
    answer = _text(row, "answer", where)
    answer_type = _text(row, "answer_type", where)
    precision = row.get("precision")
    common = dict(benchmark=spec.name, split=spec.split, subtask=str(metadata["task"]), question_id=qid,
                  text=_text(row, "query", where), image_fields=["decoded_image"], answer_type=answer_type,
                  precision=None if _is_missing(precision) else int(float(precision)),
                  details={"question_type": row.get("question_type")})
    choices = row.get("choices")
    if row.get("question_type") == "multi_choice":
        options = [str(c) for c in _parse_list(choices, "choices", where)]
        if answer not in options:
            raise DocError(f"{where}: answer {answer!r} is not one of the choices {options}")
        return Question(kind=MCQ, options=options, gold=LETTERS[options.index(answer)], prompt_style=spec.prompt_style, **common)
    return Question(kind=NUMERIC if answer_type in ("integer", "float", "list") else OPEN,
                    gold=answer if answer_type in ("integer", "float", "list") else [answer], prompt_style="as_is", **common)


def blink(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    qid = _text(row, "idx", f"{spec.name} row {position}")
    where = f"{spec.name} {qid}"
    options = [str(c) for c in _parse_list(_field(row, "choices", where), "choices", where)]
    subtask = row.get(spec.subtask_field)
    if _is_missing(subtask):  # the idx carries it too: val_Multi-view_Reasoning_12
        found = re.match(r"^[a-z]+_(.+)_\d+$", qid)
        if not found:
            raise DocError(f"{where}: no 'sub_task' field and the idx does not name one")
        subtask = found.group(1).replace("_", " ")
    return Question(
        benchmark=spec.name, split=spec.split, subtask=str(subtask), question_id=qid, kind=MCQ,
        text=_text(row, "prompt", where), image_fields=list(spec.image_columns), images_optional=True, options=options,
        gold=_gold_letter(_field(row, "answer", where), options, where), prompt_style=spec.prompt_style,
    )


def mmbench(row: dict, position: int, spec: BenchmarkSpec) -> Question:
    where = f"{spec.name} row {position}"
    options = _lettered_options(row, where)
    l2 = row.get(spec.subtask_field, row.get(spec.subtask_field.lower()))
    if _is_missing(l2):
        raise DocError(f"{where}: missing field '{spec.subtask_field}'")
    index = _text(row, "index", where)
    hint = row.get("hint")
    return Question(
        benchmark=spec.name, split=spec.split, subtask=str(l2), question_id=index, kind=MCQ,
        text=_text(row, "question", where), image_fields=["image"], options=options, prompt_style=spec.prompt_style,
        gold=_gold_letter(_field(row, "answer", where), options, where), hint=None if _is_missing(hint) else str(hint),
        details={"category": row.get("category"), "circular_group": int(float(index)) % 1_000_000},
    )


def mme_question_ids(rows: Iterable[Question]) -> None:
    """MME's question_id names the image, shared by its two questions: suffix the occurrence (#0, #1) in file order."""
    seen: Counter[str] = Counter()
    for question in rows:
        base = question.question_id
        question.question_id = f"{base}#{seen[base]}"
        seen[base] += 1
