"""The answer-adjudication judge's prompt and its strict verdict.

The inverse-scaling paper (Section 4, Appendix A "Answer verification") has GPT-5.4 adjudicate the answers
its rules find inconclusive, "receiving the image, question, options, and model response"; it says the
prompt is in Appendix G, but Appendix G prints only the error-taxonomy prompt. ADJUDICATION_PROMPT is
therefore OURS. It is sent after the question's image(s) and shows the prompt the model was sent
(prompts.shown_prompt: the options in the order the model saw them, after any reordering), the options
again as the letters the verdict must use, and the model's response; it asks for the answer the
response commits to, not for the judge's own answer, and never shows the gold answer.

The verdict (`verdict_parser(question)`) must be exactly one line, whitespace around it aside:
  multiple choice  one of the shown option letters ("B"), upper case
  yes/no           Yes or No (any case)
  numeric          MathVista integer / float: one number ("12", "-0.5", "1,200"); list: "[1, 2.5]"
  open             the answer itself, at most MAX_OPEN_ANSWER characters
or NONE (any case) when the response commits to no answer. Anything else (an explanation, "(B)", a
letter that is not an option, two lines, a number for a yes/no question) is a ValueError naming what is
wrong: the judge client asks again (parse_retries), then the verdict is kept as unparsed and counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lmms_eval_tasks.extraction import NUMBER
from lmms_eval_tasks.question import MCQ, NUMERIC, YES_NO, Question
from lmms_eval_tasks.scoring import Judgement
from invscale.judges import JudgeRequest, parse_error

ADJUDICATION_PROMPT = """A vision-language model answered the benchmark question below, and automatic answer extraction \
could not tell which answer its response gives. The image(s) above are the ones the model was shown.

Report the answer the response commits to. Do not answer the question yourself and do not judge whether \
the response is right: use the image(s) only to understand what the response refers to (for example \
"the left image" or "the red object").

The prompt the model was sent:
<prompt>
{prompt}
</prompt>

{answers}

The model's response:
<response>
{response}
</response>

{instruction}"""

NONE = "NONE"
MAX_OPEN_ANSWER = 200
_NUMBER_LIST = re.compile(rf"\[\s*(?:{NUMBER.pattern})(?:\s*,\s*(?:{NUMBER.pattern}))*\s*\]")


def _form(question: Question) -> str:
    if question.kind in (MCQ, YES_NO):
        return question.kind
    if question.kind == NUMERIC and question.answer_type in ("integer", "float", "list"):
        return "list" if question.answer_type == "list" else "number"
    return "open"


def answers_text(question: Question) -> str:
    """What the verdict may name, as the prompt lists it."""
    if question.kind == MCQ:
        options = "\n".join(f"{letter}. {option}" for letter, option in zip(question.letters, question.options))
        return f"The options, by the letters your reply must use:\n{options}"
    if question.kind == YES_NO:
        return "The question is answered Yes or No."
    return "The question has no options: it is answered with a value or a term."


def instruction(question: Question) -> str:
    form = _form(question)
    if form == MCQ:
        letters = ", ".join(question.letters)
        return (f"Reply with only the letter of the option the response commits to (one of {letters}), or {NONE} if it "
                "commits to no option, to more than one, or contradicts itself.")
    if form == YES_NO:
        return f"Reply with only Yes or No, whichever the response commits to, or {NONE} if it commits to neither."
    if form == "number":
        return (f"Reply with only the number the response gives as its final answer (digits, no units), or {NONE} if "
                "it gives no single final number.")
    if form == "list":
        return (f"Reply with only the numbers the response gives as its final answer, written as [a, b, ...], or {NONE} "
                "if it gives none.")
    return (f"Reply with only the final answer the response gives (the value or term, on one line, without "
            f"explanation), or {NONE} if it gives no single final answer.")


def prompt_for(question: Question, response: str) -> str:
    from lmms_eval_tasks.prompts import shown_prompt

    values = {"prompt": shown_prompt(question), "answers": answers_text(question), "response": response,
              "instruction": instruction(question)}
    return re.sub(r"\{(prompt|answers|response|instruction)\}", lambda m: values[m.group(1)],
                  ADJUDICATION_PROMPT)  # one pass: a response holding "{prompt}" is never re-read


def request_for(question: Question, response: str, images: Sequence[bytes]) -> JudgeRequest:
    """The judge's request: the prompt after the model's images (PNG bytes, in the model's order)."""
    return JudgeRequest(prompt_for(question, response), tuple(images))


def verdict_parser(question: Question) -> Callable[[str], str | None]:
    """A parser of this question's verdicts: the prediction in the question's answer form, or None for
    NONE; ValueError (saying what is wrong) for anything else."""
    form = _form(question)
    letters = question.letters

    def parse(answer: str) -> str | None:
        text = answer.strip()
        if not text:
            raise ValueError("empty verdict")
        if "\n" in text:
            raise ValueError(f"the verdict must be one line, got {len(text.splitlines())}")
        if text.upper() == NONE:
            return None
        if form == MCQ:
            if re.fullmatch(r"[A-Z]", text):
                if text not in letters:
                    raise ValueError(f"{text!r} is not one of the options {''.join(letters)}")
                return text
            raise ValueError(f"not an option letter ({', '.join(letters)}) or {NONE}: {text[:60]!r}")
        if form == YES_NO:
            if text.lower() in ("yes", "no"):
                return text.capitalize()
            raise ValueError(f"not Yes, No or {NONE}: {text[:60]!r}")
        if form == "number":
            if NUMBER.fullmatch(text):
                return text
            raise ValueError(f"not a single number or {NONE}: {text[:60]!r}")
        if form == "list":
            if _NUMBER_LIST.fullmatch(text):
                return text
            raise ValueError(f"not a list of numbers [a, b, ...] or {NONE}: {text[:60]!r}")
        if len(text) > MAX_OPEN_ANSWER:
            raise ValueError(f"an answer of {len(text)} characters (at most {MAX_OPEN_ANSWER}): an explanation, not "
                             "the answer")
        return text

    return parse


def form_key(question: Question) -> tuple:
    """Questions whose verdicts parse alike (one parser serves them all)."""
    return (_form(question), tuple(question.letters) if question.kind == MCQ else ())


def judgement_of(record: dict, question: Question) -> Judgement:
    """A judge's stored answer (a invscale.judges cache record) read as this question's verdict."""
    parse = verdict_parser(question)
    error = parse_error(record, parse)
    if error is not None:
        return Judgement(None, record["judge"], record["model"], record["answer"], "unparsed", error)
    prediction = parse(record["answer"])
    return Judgement(prediction, record["judge"], record["model"], record["answer"],
                     "no_answer" if prediction is None else "settled")
