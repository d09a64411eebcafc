"""Prompt and option-order variants (paper Appendices J and L).

  direct   the benchmark's own option order and the direct prompt
  cot      the direct order with the chain-of-thought prompt (max_new_tokens 4096)
  identity the direct prompt unchanged, as a task of its own: re-running it measures the run-to-run
           variation of greedy decoding (Table 43's "identity" row), against which reorderings are read
  reverse  every multiple-choice question's options reversed
  shiftK   (K = 1, 2, 3) the option at position i moves to position (i + K) mod 4; only questions
           with exactly four options take part, the others are left out of the task and counted
CAIT (two options) adds:
  swap        the two options in the other order (position-bias check)
  structured  the structured Description / Options / Reasoning / Conclusion prompt (CAIT Table 15)
  describe    no question: the model describes the image (the caption LLM re-evaluation judges from)

Reordering remaps the gold letter and keeps the question_id, so runs of different orders join
question by question. Questions that are not multiple choice (MMMU open, MathVista free-form) are
unchanged by `reverse`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from .question import LETTERS, MCQ, Question


class Variant(NamedTuple):
    name: str
    prompt: str = "direct"  # direct | cot | structured | describe (see prompts.build_prompt)
    reorders: bool = False
    shift: int | None = None  # cyclic shift; None for reverse/swap


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("direct"),
        Variant("cot", prompt="cot"),
        Variant("identity"),
        Variant("reverse", reorders=True),
        Variant("shift1", reorders=True, shift=1),
        Variant("shift2", reorders=True, shift=2),
        Variant("shift3", reorders=True, shift=3),
        Variant("swap", reorders=True),
        Variant("structured", prompt="structured"),
        Variant("describe", prompt="describe"),
    )
}
SHIFT_OPTION_COUNT = 4


def permutation_for(variant: Variant, n_options: int) -> list[int]:
    """permutation[j] = the original index of the option shown at position j (reverse and swap: reversed)."""
    if variant.shift is None:
        return list(reversed(range(n_options)))
    return [(j - variant.shift) % n_options for j in range(n_options)]


def takes_part(variant: Variant, question: Question) -> bool:
    if variant.shift is None:
        return True
    return question.kind == MCQ and len(question.options) == SHIFT_OPTION_COUNT


def apply_variant(question: Question, variant: Variant) -> Question:
    """The question as the variant presents it (a new object; the input is unchanged)."""
    if not variant.reorders or question.kind != MCQ:
        return replace(question, variant=variant.name)
    permutation = permutation_for(variant, len(question.options))
    gold = question.gold
    if gold is not None:
        gold = LETTERS[permutation.index(LETTERS.index(gold))]
    return replace(
        question,
        options=[question.options[i] for i in permutation],
        gold=gold,
        variant=variant.name,
        permutation=permutation,
    )
