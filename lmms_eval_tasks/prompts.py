"""Every prompt the tasks send, in one place (inverse-scaling paper, Appendix G; CoT: Appendix L).

Direct prompts, by the question's prompt_style:
  lettered          MMT-Bench, MMMU multiple-choice, ScienceQA, MMBench (hint first when present):
                    [hint]\\n[question]\\nA. [option]\\nB. [option]\\n...\\n + MCQ_INSTRUCTION
  open              MMMU open questions: [question]\\n + OPEN_INSTRUCTION
  as_is             MME, MathVista free-form: the dataset's text unchanged
  vlmevalkit        AI2D (VLMEvalKit's pre-formatted prompt): Question: ...\\nOptions:\\nA. ...\\n + VLMEVALKIT_SUFFIX
  embedded_choices  BLINK `prompt`, MathVista `query`: the dataset's text; its "(A) ..." lines are
                    rewritten only when a variant reorders the options.
  cait              CAIT (Seeing vs. Believing, Table 13): CAIT_DIRECT with the two options.

CoT prompts (variant `cot`): for the lettered style the direct instruction is replaced by
COT_MCQ_INSTRUCTION (asking for a one-letter answer and for step-by-step reasoning contradict each
other); every other style keeps the dataset prompt and appends the CoT instruction for its kind, as
Appendix L describes ("appends a step-by-step instruction to the dataset prompt"). The yes/no and
open-answer CoT wordings are ours, written in the same format as the paper's MCQ wording.
"""

from __future__ import annotations

import re

from .question import MCQ, YES_NO, DocError, Question
from .variants import VARIANTS

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

# CAIT, Appendix A.3-A.4. The paper prints Table 13 in full; Tables 14 and 15 are printed with their
# sentences cut ("Please begin with a brief analysis..."): the completions below are ours, written to
# ask for what the paper's cut sentences describe, and ending with the 'Answer: X' line we extract.
CAIT_QUESTION = "Which of the following option better describes the image?\nOption A: {a}\nOption B: {b}\n"
CAIT_DIRECT = CAIT_QUESTION + "Important Note: Answer directly with the option letter (A or B) only."
CAIT_COT = CAIT_QUESTION + (
    "Please begin with a brief analysis of the image and of the two options, then decide which option better "
    "describes the image.\nImportant Note: You must write your final answer on the last line in the format "
    "'Answer: A' or 'Answer: B'."
)
CAIT_STRUCTURED = (
    "Which of the following option better describes the image? Answer in four parts.\n"
    "1. Description: Describe the content of the image in detail: The primary objects or scene in the image. "
    "Visual features such as colors, shapes, and textures. Any text, symbols, or logos. The overall layout and "
    "composition of the image.\n"
    "2. Options: Analyze the meaning of each option. Option A: {a} Option B: {b}\n"
    "3. Reasoning: Compare the image content with the description in Option A. Compare the image content with "
    "the description in Option B. Analyze which option describes the image content more accurately. Consider the "
    "possibility of uncommon or counter-intuitive scenes: judge by what the image shows, not by what is usual.\n"
    "4. Conclusion: Based on your analysis, choose the better option. Summarize your reasoning process. Clearly "
    "state the reasons for choosing A or B. Provide the final answer.\n"
    "Important Note: At the very end of your response, write the final answer on its own line in the format "
    "'Answer: A' or 'Answer: B'."
)
# The paper does not print its description prompt; ours asks for the scene without naming the task.
CAIT_DESCRIBE = "Describe the image in detail: who or what is in it, what each of them is doing, and how they interact."
CAIT_TEMPLATES = {"direct": CAIT_DIRECT, "cot": CAIT_COT, "structured": CAIT_STRUCTURED, "describe": CAIT_DESCRIBE}

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


def build_prompt(question: Question, mode: str = "direct", original_options: list[str] | None = None) -> str:
    """The text sent to the model for a variant's prompt mode (direct, cot; CAIT also structured, describe).
    `original_options` is the dataset order, needed only to rewrite embedded choices after a reordering."""
    style = question.prompt_style
    if style == "cait":
        a, b = question.options
        return CAIT_TEMPLATES[mode].format(a=a, b=b)
    if mode not in ("direct", "cot"):
        raise ValueError(f"{question.benchmark}: prompt mode {mode!r} is only defined for CAIT")
    cot = mode == "cot"
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


def shown_prompt(question: Question) -> str:
    """The prompt a task sent for this question as its variant shows it (what hooks.prepare_docs stored),
    rebuilt from the question alone: its permutation gives back the dataset's option order."""
    original = question.options
    if question.permutation is not None:
        original = [""] * len(question.options)
        for shown, source in enumerate(question.permutation):
            original[source] = question.options[shown]
    return build_prompt(question, VARIANTS[question.variant].prompt, original_options=original)
