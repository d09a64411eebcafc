"""Tiers and admission: which rules commit a letter, the tier of each prediction, and the `Extraction` every
extractor returns."""

from __future__ import annotations

from dataclasses import dataclass

from ..record import ABSTAIN_REASONS

# Tiers of the rules that give a prediction. `strict` rules read a shape that states the letter itself (the
# whole response, its first line, an answer line, a line or sentence that is only the letter, a line led by
# the letter); `reading` rules interpret prose (answer statements, a letter or option text named in the
# conclusion, a lone capital). A judge-settled answer is `judge`; a letter another tool extracted (an imported
# table's `prediction`, scoring.score_prediction) is `external`: none of these rules read it.
STRICT, READING, JUDGE, EXTERNAL = "strict", "reading", "judge", "external"
TIERS = (STRICT, READING, JUDGE, EXTERNAL)
RULE_TIERS = {
    "whole": STRICT, "first_line": STRICT, "answer_line": STRICT, "letter_line": STRICT, "leading": STRICT,
    "option_text": STRICT, "first_word": STRICT,
    "boxed": STRICT, "answer_statement": READING, "choice_statement": READING, "so_statement": READING, "verdict": READING,
    "predicate": READING, "mention": READING, "mention_with_text": READING, "conclusion_text": READING, "capital": READING,
    "only_word": READING, "calculation": READING, "only_number": READING,
}
# The multiple-choice rules whose letters are committed, decided on the labelled real responses of the fitted samples
# (extraction_bench.real.FITTED, docs/extraction_precision.md): a reading rule commits when at least 99.9% of the
# letters it finds there are right, shown on 20 letters or more; a strict rule reads a stated letter and commits unless
# its errors there show it below 99.9% (one-sided binomial test at 5%: answer_line's one error in 247 does not; boxed
# has one letter there). Withheld (dev and rounds 1-10): conclusion_text (179/190), mention (48/53), predicate (13/14),
# choice_statement (12/12, too few), so_statement (2/2), capital (0/1) and verdict (none left once the rules above have
# read): abstain reason `inconclusive`, the letter kept as `candidate`, for the adjudication judge.
COMMITTING_CHOICE_RULES = frozenset({"whole", "first_line", "answer_line", "letter_line", "leading", "option_text",
                                     "boxed", "answer_statement", "mention_with_text"})
# A letter stated before more text (an explanation, a working) is committed only where that text does not point to
# another option (_Reader.explained_otherwise): with EXPLAINED_WORDS words or more from the letter on, the response must
# not say more of another option's telling words than of its own; with WORKING_WORDS or more, it must say more of its
# own than of any other's. Else rule `explained_otherwise`, `inconclusive`. On held-out rounds 1-9, each read with its
# own round's rules, 16 of the 43 letters this withholds were wrong (of all the 34 wrong there), for 27 of the 8,851
# right ones (0.3%).
EXPLAINED_WORDS = 10
WORKING_WORDS = 40


def tier_of(rule: str | None, match: str) -> str | None:
    """The tier of a prediction from its rule and match (for records written before `extraction_tier`); None when
    there is no prediction or the rule is unknown. Before the rules were split, "option_text" named both the
    first line that is an option's text and an option text in the conclusion: read it as `reading`."""
    if match == "judge":
        return JUDGE
    if match == "none" or rule is None:
        return None
    if rule == "option_text" and match == "option_text":
        return READING
    return RULE_TIERS.get(rule)


@dataclass(frozen=True)
class Extraction:
    prediction: str | None
    match: str  # letter, option_text, yes_no, numeric, exact, judge, none
    rule: str  # which rule decided, for debugging and the log
    reason: str | None = None  # why there is no prediction (record.ABSTAIN_REASONS); None when there is one
    candidate: str | None = None  # the letter an `inconclusive` rule found and did not commit

    @property
    def found(self) -> bool:
        return self.prediction is not None

    @property
    def tier(self) -> str | None:
        """strict | reading | judge for a prediction (RULE_TIERS), None without one; external is set by scoring.score_prediction."""
        if self.prediction is None:
            return None
        return JUDGE if self.match == "judge" else RULE_TIERS[self.rule]


def abstain(rule: str, reason: str) -> Extraction:
    if reason not in ABSTAIN_REASONS:
        raise ValueError(f"abstain reason {reason!r} is not one of {ABSTAIN_REASONS}")
    return Extraction(None, "none", rule, reason)


def _committed(extraction: Extraction, cut: bool) -> Extraction:
    """The extraction, or `inconclusive` with its letter as the candidate where its rule does not commit, or where
    a reading rule read a text that stops mid-sentence (working cut off mid-elimination is no choice)."""
    if extraction.found and (extraction.rule not in COMMITTING_CHOICE_RULES or cut and extraction.tier == READING):
        return Extraction(None, "none", extraction.rule, "inconclusive", candidate=extraction.prediction)
    return extraction
