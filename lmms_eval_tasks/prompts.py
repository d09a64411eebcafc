"""Every prompt the tasks send, in one place (inverse-scaling paper, Appendix G; CoT: Appendix L).

Direct prompts, by the question's prompt_style:
  lettered          MMT-Bench, MMMU multiple-choice, ScienceQA, MMBench (hint first when present):
                    [hint]\\n[question]\\nA. [option]\\nB. [option]\\n...\\n + MCQ_INSTRUCTION
  open              MMMU open questions: [question]\\n + OPEN_INSTRUCTION
  as_is             MME, MathVista free-form: the dataset's text unchanged
  vlmevalkit        AI2D (VLMEvalKit's pre-formatted prompt): Question: ...\\nOptions:\\nA. ...\\n + VLMEVALKIT_SUFFIX
  embedded_choices  BLINK `prompt`, MathVista `query`: the dataset's text; its "(A) ..." lines are
                    rewritten only when a variant reorders the options.

CoT prompts (variant `cot`): for the lettered style the direct instruction is replaced by
COT_MCQ_INSTRUCTION (asking for a one-letter answer and for step-by-step reasoning contradict each
other); every other style keeps the dataset prompt and appends the CoT instruction for its kind, as
Appendix L describes ("appends a step-by-step instruction to the dataset prompt"). The yes/no and
open-answer CoT wordings are ours, written in the same format as the paper's MCQ wording.
"""

from __future__ import annotations

import re

from .question import MCQ, YES_NO, DocError, Question

MCQ_INSTRUCTION = (
    "Please select the correct answer from the options above. Respond with only the letter of the "
    "correct option. Do not explain. Answer:"
)
OPEN_INSTRUCTION = "Answer concisely with just the final value or term. Answer:"
VLMEVALKIT_SUFFIX = "Please select the correct answer from the options above. \n"

COT_MCQ_INSTRUCTION = (
    "Answer the preceding multiple choice question. The last line of your response should be of the "
    "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of options. Think step by "
    "step before answering."
)
COT_YES_NO_INSTRUCTION = (
    "Answer the preceding question. The last line of your response should be of the following format: "
    "'Answer: $ANSWER' (without quotes) where ANSWER is Yes or No. Think step by step before answering."
)
COT_OPEN_INSTRUCTION = (
    "Answer the preceding question. The last line of your response should be of the following format: "
    "'Answer: $ANSWER' (without quotes) where ANSWER is the final value or term. Think step by step "
    "before answering."
)

EMBEDDED_CHOICE_LINE = re.compile(r"^\(([A-Z])\) ?(.*)$", re.MULTILINE)


def lettered_options(question: Question) -> str:
    return "\n".join(f"{letter}. {option}" for letter, option in zip(question.letters, question.options))


def rewrite_embedded_choices(question: Question, original_options: list[str]) -> str:
    """Re-letter the "(A) ..." lines of a pre-formatted prompt in the question's (reordered) option order."""
    lines = EMBEDDED_CHOICE_LINE.findall(question.text)
    if [text.strip() for _, text in lines] != [o.strip() for o in original_options]:
        raise DocError(
            f"{question.benchmark} {question.question_id}: the prompt's '(A) ...' lines {[t for _, t in lines]} "
            f"do not list the choices {original_options}, so the options cannot be reordered"
        )
    shown = iter(question.options)
    return EMBEDDED_CHOICE_LINE.sub(lambda m: f"({m.group(1)}) {next(shown)}", question.text)


def cot_instruction(question: Question) -> str:
    if question.kind == MCQ:
        return COT_MCQ_INSTRUCTION
    return COT_YES_NO_INSTRUCTION if question.kind == YES_NO else COT_OPEN_INSTRUCTION


def build_prompt(question: Question, cot: bool = False, original_options: list[str] | None = None) -> str:
    """The text sent to the model. `original_options` is the dataset order, needed only to rewrite
    embedded choices after a reordering."""
    style = question.prompt_style
    if style == "lettered":
        body = "\n".join(part for part in (question.hint, question.text, lettered_options(question)) if part)
        return f"{body}\n{COT_MCQ_INSTRUCTION if cot else MCQ_INSTRUCTION}"
    if style == "open":
        base = question.text if cot else f"{question.text}\n{OPEN_INSTRUCTION}"
    elif style == "vlmevalkit":
        base = f"Question: {question.text}\nOptions:\n{lettered_options(question)}\n{VLMEVALKIT_SUFFIX}"
    elif style == "embedded_choices" and question.permutation is not None:
        base = rewrite_embedded_choices(question, original_options or question.options)
    elif style in ("as_is", "embedded_choices"):
        base = question.text
    else:
        raise ValueError(f"unknown prompt style {style!r}")
    return f"{base.rstrip()}\n{cot_instruction(question)}" if cot else base
