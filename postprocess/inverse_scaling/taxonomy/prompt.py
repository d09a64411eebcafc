"""The error-taxonomy judge prompt (inverse-scaling paper, Appendix G.1) and its strict JSON verdict.

JUDGE_PROMPT is the paper's prompt as printed, line breaks included, with its five placeholders
({question}, {options}, {answer}, {response_small}, {response_large}); it is sent after the question's
image(s), at temperature 0 with at most 200 output tokens (the judges file sets both). G.1 fixes the
roles: "Model A" is the correct model (in an inverse-scaling flip, the smaller one) and "Model B" the
incorrect one, and neither model's name or size is shown. `prompt_for(..., correct_label="Model B")`
is the same prompt with the two labels exchanged throughout, for a run that randomises which label the
correct model gets (Section 5.6 blinds the models "to reduce bias"; a label swap checks that the label
itself does not sway the verdict). The paper's runs are the default: correct_label "Model A".

What fills the placeholders (the paper does not say; ours, from the canonical question of
lmms_eval_tasks): question: the hint (MMBench) and the question text as the model saw it (for AI2D,
BLINK and MathVista the dataset's pre-formatted prompt, which lists the choices itself); options: the
options lettered "A. ..." one a line, in the order the models saw them, "Yes / No" for yes/no questions
and "None (free-form answer)" for open ones; answer: the gold letter, Yes/No, the accepted answers
joined by " / ", or the value; the responses: each model's raw output, unchanged.

The verdict must be the JSON object the prompt asks for and nothing else (whitespace around it
aside): keys exactly category, confidence and explanation; category one of the three names;
confidence high, medium or low; explanation a non-empty string. Anything else (markdown fences, extra
text, another key, a cut-off answer) is a ValueError naming what is wrong: the judge client asks again
(parse_retries) and then keeps the answer as unparsed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from lmms_eval_tasks.question import MCQ, YES_NO, Question
from postprocess.human.task_sets import BAD_ANNOTATION, FORMAT_MISMATCH, GENUINE

JUDGE_PROMPT = """You are analyzing VLM (Vision-Language Model)
benchmark results. Two models answered this
question. Model A answered correctly and Model B
answered incorrectly. Your job is to figure out
why Model B failed.

Question: {question}
Options: {options}
Correct Answer: {answer}

Model A response: {response_small}
  -> CORRECT

Model B response: {response_large}
  -> INCORRECT

Categorize Model B’s failure into exactly
ONE of these categories:

1. GENUINE_ERROR - Model B made a clear mistake --
   whether through visual misidentification, wrong
   reasoning, incorrect knowledge, falling for a
   plausible distractor, or simply picking the wrong
   answer. This covers any case where the model
   genuinely got it wrong.
2. FORMAT_MISMATCH - Model B effectively gives the
   correct answer content, but in a form that would
   not match the benchmark answer format (e.g.,
   numeric value instead of option letter, or full
   option text instead of just the letter). If the
   response is self-contradictory or clearly commits
   to the wrong answer, use GENUINE_ERROR.
3. BAD_ANNOTATION_OR_AMBIGUOUS - Use this only when
   there is strong evidence that the ground-truth
   answer is wrong, the question is genuinely
   ambiguous, or multiple answers would reasonably
   be acceptable. Do NOT use this category just
   because Model B’s answer seems plausible; if the
   benchmark answer is still clearly better
   supported, use GENUINE_ERROR.

Reply with ONLY a JSON object (no markdown,
no extra text):
{"category": "CATEGORY_NAME",
 "confidence": "high/medium/low",
 "explanation": "One concise sentence
  explaining why."}"""
CATEGORIES = {"GENUINE_ERROR": GENUINE, "FORMAT_MISMATCH": FORMAT_MISMATCH, "BAD_ANNOTATION_OR_AMBIGUOUS": BAD_ANNOTATION}
CONFIDENCES = ("high", "medium", "low")
VERDICT_KEYS = ("category", "confidence", "explanation")
LABELS = ("Model A", "Model B")
NO_OPTIONS = {YES_NO: "Yes / No"}
FREE_FORM = "None (free-form answer)"
_PLACEHOLDER = re.compile(r"\{(question|options|answer|response_small|response_large)\}")
_LABEL = re.compile(r"Model ([AB])")


@dataclass(frozen=True)
class Verdict:
    label: str  # one of postprocess.human.task_sets.TAXONOMY_LABELS
    confidence: str
    explanation: str


def question_text(question: Question) -> str:
    return f"{question.hint}\n{question.text}" if question.hint else question.text


def options_text(question: Question) -> str:
    if question.kind == MCQ:
        return "\n".join(f"{letter}. {option}" for letter, option in zip(question.letters, question.options))
    return NO_OPTIONS.get(question.kind, FREE_FORM)


def answer_text(question: Question) -> str:
    if question.gold is None:
        raise ValueError(f"{question.benchmark} {question.question_id}: no gold answer, so no flip to judge")
    return " / ".join(question.gold) if isinstance(question.gold, list) else str(question.gold)


def prompt_for(question: Question, response_correct: str, response_incorrect: str,
               correct_label: str = "Model A") -> str:
    """The G.1 prompt for one flip: the correct model's response as `correct_label`."""
    if correct_label not in LABELS:
        raise ValueError(f"correct_label must be one of {LABELS}, got {correct_label!r}")
    template = JUDGE_PROMPT if correct_label == "Model A" else \
        _LABEL.sub(lambda m: "Model B" if m.group(1) == "A" else "Model A", JUDGE_PROMPT)
    values = {"question": question_text(question), "options": options_text(question), "answer": answer_text(question),
              "response_small": response_correct, "response_large": response_incorrect}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)  # one pass: filled text is never re-read


def parse_verdict(answer: str) -> Verdict:
    """The judge's JSON verdict; ValueError (saying what is wrong) for anything but the asked-for object."""
    try:
        verdict = json.loads(answer)
    except json.JSONDecodeError as error:
        raise ValueError(f"not a JSON object: {error.msg} at character {error.pos}") from None
    if not isinstance(verdict, dict):
        raise ValueError(f"not a JSON object but a {type(verdict).__name__}")  # noqa: TRY004 (the parse contract: ValueError)
    missing = [key for key in VERDICT_KEYS if key not in verdict]
    extra = sorted(set(verdict) - set(VERDICT_KEYS))
    if missing or extra:
        raise ValueError(f"keys must be exactly {list(VERDICT_KEYS)}" + (f"; missing {missing}" if missing else "")
                         + (f"; unexpected {extra}" if extra else ""))
    if verdict["category"] not in CATEGORIES:
        raise ValueError(f"category {verdict['category']!r} is not one of {list(CATEGORIES)}")
    if verdict["confidence"] not in CONFIDENCES:
        raise ValueError(f"confidence {verdict['confidence']!r} is not one of {list(CONFIDENCES)}")
    if not isinstance(verdict["explanation"], str) or not verdict["explanation"].strip():
        raise ValueError("explanation must be a non-empty string")
    return Verdict(CATEGORIES[verdict["category"]], verdict["confidence"], verdict["explanation"])
