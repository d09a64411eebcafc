"""Scoring shared by every task: extraction -> matching -> (optional) adjudication -> the per-question record.

Matching rules:
  mcq      the extracted letter equals the gold letter (MathVista: the letter of the gold option text).
  yes_no   the extracted Yes/No equals the gold.
  numeric  MathVista integer: int() of the extracted number equals the gold (the official scorer's
           int(float(x)): 3.7 counts as 3); float: both rounded
           to `precision` decimals are equal; list: the numbers of the response's answer, in order,
           equal the gold list's.
  open     MMMU open (and MathVista free text): the response's answer part (its last "Answer:" line,
           else its last "answer is" statement, else the whole response) contains one of the
           acceptable golds after normalisation; numeric golds also match a number in that part when
           both round to the same value at 2 decimals (as MMMU's official evaluator).
When no gold is known (MMMU test without answers) `correct` is None.

Adjudication: when extraction is inconclusive, a registered adjudicator may decide. It is called as
`adjudicator(question, response, extraction, images)`, where `images()` gives the images the model was
shown (decoded only when called), and returns a Judgement (None: it did not ask, e.g. no gold is known).
A Judgement with a prediction is recorded with match "judge"; every Judgement's judge fields are
recorded (record.JUDGE_STATUSES). None is registered by default; set one with `set_adjudicator(fn)` or
the environment variable INVSCALE_ADJUDICATOR="package.module:function" (the LLM judge:
postprocess.adjudication.live:adjudicate). The record's `abstain_reason` says why the rules gave no
prediction (record.ABSTAIN_REASONS); it is kept when a judge then decides, and null when the rules gave one.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .extraction import (
    EXTERNAL,
    NUMBER,
    Extraction,
    extract_answer_part,
    extract_choice,
    extract_list,
    extract_number,
    extract_yes_no,
    normalise_text,
    parse_number,
)
from .question import MCQ, NUMERIC, YES_NO, Question


@dataclass(frozen=True)
class Judgement:
    """What a judge made of a response the rules could not settle (the record's judge_* fields)."""
    prediction: str | None  # in the question's answer form (a shown letter, Yes/No, a value); None: not settled
    judge: str  # the judge's name in its judges file
    model: str  # the model id its endpoint was sent
    verdict: str | None  # the judge's raw answer; None when the call failed
    status: str  # record.JUDGE_STATUSES; "settled" exactly when there is a prediction
    error: str | None = None  # why the verdict did not parse or the call failed

    def __post_init__(self) -> None:
        if (self.status == "settled") != (self.prediction is not None):
            raise ValueError(f"a judgement has a prediction exactly when its status is 'settled'; got status "
                             f"{self.status!r} and prediction {self.prediction!r}")


Images = Callable[[], Sequence]  # the images the model was shown, loaded when called
Adjudicator = Callable[[Question, str, Extraction, Images], Judgement | None]
_adjudicator: Adjudicator | None = None
ADJUDICATOR_ENV = "INVSCALE_ADJUDICATOR"


def set_adjudicator(adjudicator: Adjudicator | None) -> None:
    """Register the fallback for inconclusive extractions (see the module docstring)."""
    global _adjudicator
    _adjudicator = adjudicator


def current_adjudicator() -> Adjudicator | None:
    if _adjudicator is None and os.environ.get(ADJUDICATOR_ENV):
        module, _, name = os.environ[ADJUDICATOR_ENV].partition(":")
        set_adjudicator(getattr(importlib.import_module(module), name))
    return _adjudicator


@dataclass(frozen=True)
class Outcome:
    prediction: str | None
    correct: bool | None
    match: str
    rule: str
    abstain_reason: str | None = None
    judgement: Judgement | None = None  # when an adjudicator was asked
    tier: str | None = None  # extraction.TIERS of the prediction; None without one
    candidate: str | None = None  # the letter an `inconclusive` rule withheld


def extract(question: Question, response: str) -> Extraction:
    if question.kind == MCQ:
        return extract_choice(response, question.options, question.letters)
    if question.kind == YES_NO:
        return extract_yes_no(response)
    if question.kind == NUMERIC and question.answer_type in ("integer", "float"):
        return extract_number(response, question.text)
    if question.kind == NUMERIC and question.answer_type == "list":
        return extract_list(response)
    return extract_answer_part(response)


def is_correct(question: Question, prediction: str) -> tuple[bool, str]:
    """(correct, match kind) for a prediction that extraction found."""
    gold = question.gold
    if question.kind in (MCQ, YES_NO):
        return prediction == gold, "letter" if question.kind == MCQ else "yes_no"
    if question.kind == NUMERIC:
        return numeric_equal(prediction, str(gold), question.answer_type, question.precision), "numeric"
    return open_answer_matches(prediction, gold if isinstance(gold, list) else [str(gold)])


def numeric_equal(prediction: str, gold: str, answer_type: str | None, precision: int | None) -> bool:
    if answer_type == "list":
        predicted = [parse_number(n) for n in NUMBER.findall(prediction)]
        expected = [parse_number(n) for n in NUMBER.findall(gold)]
        return bool(expected) and predicted == expected
    value, target = parse_number(prediction), parse_number(gold)
    if value is None or target is None:
        return False
    if answer_type == "integer":  # MathVista's official scorer: int(float(x)), so 3.7 reads as 3
        return int(value) == int(target)
    digits = precision if precision is not None else 2
    return round(value, digits) == round(target, digits)


def open_answer_matches(prediction: str, golds: list[str]) -> tuple[bool, str]:
    normalised = f" {normalise_text(prediction)} "
    numbers = {round(v, 2) for n in NUMBER.findall(prediction) if (v := parse_number(n)) is not None}
    any_numeric = False
    for gold in golds:
        target = parse_number(gold.strip())
        if target is not None:
            any_numeric = True
            if round(target, 2) in numbers:
                return True, "numeric"
        elif normalise_text(gold) and f" {normalise_text(gold)} " in normalised:
            return True, "exact"
    return False, "numeric" if any_numeric else "exact"


def _no_images() -> list:
    return []


def score(question: Question, response: str, images: Images = _no_images) -> Outcome:
    """The outcome of one response; `images` (the model's images) is called only if a judge is asked."""
    extraction = extract(question, response)
    reason, candidate = extraction.reason, extraction.candidate  # why the rules abstained, kept if a judge decides
    judgement = None
    if not extraction.found and (adjudicator := current_adjudicator()) is not None:
        judgement = adjudicator(question, response, extraction, images)
        if judgement is not None and judgement.prediction is not None:
            extraction = Extraction(judgement.prediction, "judge", extraction.rule)  # the rule that abstained
    if not extraction.found:
        return Outcome(None, None if question.gold is None else False, "none", extraction.rule, reason, judgement,
                       candidate=candidate)
    if question.gold is None:
        return Outcome(extraction.prediction, None, extraction.match, extraction.rule, reason, judgement,
                       extraction.tier, candidate)
    correct, match = is_correct(question, extraction.prediction)
    if extraction.match in ("option_text", "judge"):
        match = extraction.match
    return Outcome(extraction.prediction, correct, match, extraction.rule, reason, judgement, extraction.tier, candidate)


IMPORTED_PREDICTION_RULE = "imported_prediction"  # the rule of an answer extracted elsewhere (score_prediction)
_ANSWER_MATCH = {MCQ: "letter", YES_NO: "yes_no", NUMERIC: "numeric"}  # open answers: "exact"


def prediction_problem(question: Question, prediction: str) -> str | None:
    """Why an answer extracted elsewhere is not in the question's answer form (None: it is)."""
    if question.kind == MCQ and prediction not in question.letters:
        return f"prediction {prediction!r} is not one of the option letters {''.join(question.letters)}"
    if question.kind == YES_NO and prediction not in ("Yes", "No"):
        return f"prediction {prediction!r} is not Yes or No"
    if question.kind == NUMERIC and question.answer_type in ("integer", "float") and parse_number(prediction) is None:
        return f"prediction {prediction!r} is not a number"
    return None


def score_prediction(question: Question, prediction: str | None) -> Outcome:
    """The outcome of an answer another tool already extracted (an imported table's `prediction`), matched by the
    same rules as an extracted one; None is no answer (match "none", scored wrong, no abstain reason: why is not
    known). ValueError (prediction_problem) for one not in the question's answer form."""
    if prediction is None:
        return Outcome(None, None if question.gold is None else False, "none", IMPORTED_PREDICTION_RULE)
    problem = prediction_problem(question, prediction)
    if problem is not None:
        raise ValueError(problem)
    if question.gold is None:
        return Outcome(prediction, None, _ANSWER_MATCH.get(question.kind, "exact"), IMPORTED_PREDICTION_RULE,
                       tier=EXTERNAL)
    correct, match = is_correct(question, prediction)
    return Outcome(prediction, correct, match, IMPORTED_PREDICTION_RULE, tier=EXTERNAL)


def judge_fields(judgement: Judgement) -> dict:
    """The record's judge_* fields (record.py) of a judgement."""
    return {"judge": judgement.judge, "judge_model": judgement.model, "judge_verdict": judgement.verdict,
            "judge_status": judgement.status, "judge_error": judgement.error}


def per_question_record(question: Question, outcome: Outcome) -> dict:
    """The record of record.REQUIRED_FIELDS plus the details a reader needs to audit the decision (and the
    judge's fields when one was asked). The response is not in it: lmms-eval writes it on the same line as
    `filtered_resps` (record.py)."""
    record = {
        "benchmark": question.benchmark,
        "split": question.split,
        "subtask": question.subtask,
        "question_id": question.question_id,
        "variant": question.variant,
        "gold": question.gold,
        "prediction": outcome.prediction,
        "correct": outcome.correct,
        "match": outcome.match,
        "rule": outcome.rule,
        "abstain_reason": outcome.abstain_reason,
        "extraction_tier": outcome.tier,
        "candidate": outcome.candidate,
        "kind": question.kind,
        "options": question.options,
        "permutation": question.permutation,
        "details": json.loads(json.dumps(question.details, default=str)),
    }
    if outcome.judgement is not None:
        record.update(judge_fields(outcome.judgement))
    return record


def response_text(results: list) -> str:
    """lmms-eval hands process_results a list holding the response (older versions nest it once more)."""
    value = results[0] if results else ""
    while isinstance(value, (list, tuple)):
        value = value[0] if value else ""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
