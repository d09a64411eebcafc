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


@dataclass(frozen=True)
class Rule:
    """One rule of the reading, as the explorer and the docs show it."""

    tier: str | None  # STRICT | READING for a rule that gives a prediction; None for one that withholds or abstains
    commits: bool  # a multiple-choice letter it finds is committed (COMMITTING_CHOICE_RULES); else withheld
    letters: int | None  # multiple-choice letters it found on the fitted samples (committed or withheld); None: not read there
    right: int | None  # how many of those are the labelled letter
    says: str  # plain words, "{option}" for the letter it found: "the last line names {option}"

    @property
    def precision(self) -> float | None:
        return self.right / self.letters if self.letters else None


# Every rule, its tier and whether its multiple-choice letters are committed, decided on the labelled real responses
# of the fitted samples (extraction_bench.fitted: every M3CoT sample, 17,208 items; the long-prose samples long_dev
# and long_heldout to long_heldout6 and the VLMEvalKit sample vlmevalkit_dev, 3,777; MathVista's multiple-choice
# samples mc_dev_1, mc_heldout_1 and mc_heldout2 to 8, 1,891 -- 22,876 items; the counts are
# extraction_bench.real.rule_table there, docs/extraction_precision.md). A rule commits unless its errors there show
# it below 99.9% precision (one-sided exact binomial test at 5%: answer_statement's 9 letters labelled otherwise in
# 5,339 (p = 0.092), answer_line's 1 in 509 do not); a reading rule must also show it on 20 letters or more
# (choice_statement's 18 of 18 does not yet). The test, not the raw share, because the readers' labels themselves
# differ on about one answer in sixty: a rule read on thousands of letters meets disputed labels by the handful. A
# letter that is not committed is withheld: abstain reason `inconclusive`, the letter kept as `candidate`, for the
# adjudication judge. Yes/no and number rules are not read on those samples (letters None).
RULES = {
    # multiple choice: a stated letter
    "whole": Rule(STRICT, True, 2865, 2865, "the whole answer is {option}"),
    "first_line": Rule(STRICT, True, 716, 716, "the first line is {option}, and the rest explains it"),
    "answer_line": Rule(STRICT, True, 509, 508, "an \"Answer:\" line names {option}"),
    "letter_line": Rule(STRICT, True, 201, 201, "a line or sentence of its own names {option}"),
    "leading": Rule(STRICT, True, 8642, 8634, "a line opens with {option}"),
    "option_text": Rule(STRICT, True, 15, 15, "the first line or sentence is the text of {option}"),
    "boxed": Rule(STRICT, True, 185, 184, "the boxed answer is {option}"),
    # multiple choice: prose read
    "answer_statement": Rule(READING, True, 5339, 5330, "the response says the answer is {option}"),
    "mention_with_text": Rule(READING, True, 282, 282, "the response names only {option}, with its text, as its answer"),
    "choice_statement": Rule(READING, False, 18, 18, "the response says it chooses {option}"),
    "so_statement": Rule(READING, False, 3, 3, "a sentence \"So, ...\" names {option}"),
    "verdict": Rule(READING, False, 0, 0, "a \"Conclusion:\" line names {option}"),
    "predicate": Rule(READING, False, 27, 22, "the response says {option} is correct"),
    "mention": Rule(READING, False, 77, 68, "the conclusion names only {option}"),
    "closing_text": Rule(READING, True, 67, 66, "the one sentence of the answer ends on the text of {option}"),
    "conclusion_text": Rule(READING, False, 243, 210, "the conclusion gives only the text of {option}"),
    "capital": Rule(READING, False, 23, 17, "the conclusion holds one capital letter, {option}"),
    "yes_no_option": Rule(STRICT, True, 41, 41, "the answer opens with the Yes or No of {option}"),
    "value_option": Rule(READING, True, 35, 35, "the number the answer gives is the value of {option}"),
    # yes/no and numbers
    "first_word": Rule(STRICT, False, None, None, "the answer opens with {option}"),
    "only_word": Rule(READING, False, None, None, "{option} is the only yes or no in the answer"),
    "calculation": Rule(READING, False, None, None, "a calculation ends at {option}"),
    "only_number": Rule(READING, False, None, None, "{option} is the only number in the answer"),
    "number_line": Rule(STRICT, False, None, None, "the last line is only the number {option}"),
    "final_value": Rule(STRICT, False, None, None, "a \"final value\" line or statement gives {option}"),
    "conclusion": Rule(READING, False, None, None, "the last sentence says the result is {option}"),
    "stated_number": Rule(READING, False, None, None, "{option} is the only number the answer states a result to be"),
    "bracketed_list": Rule(READING, False, None, None, "the last bracketed list the answer gives is {option}"),
    # guards: a letter stated, withheld for the judge
    "explained_otherwise": Rule(None, False, 42, 21, "{option} is stated, but what follows points to another option"),
    "image_lettering": Rule(None, False, 34, 27, "{option} is stated, but the image letters the options another way"),
    "none_with_answer": Rule(None, False, 20, 14, "{option} says no option fits, and the answer gives one of its own"),
    "letter_as_subject": Rule(None, False, 7, 4, "{option} is stated as the subject of a description (\"Answer: A is ...\")"),
    # no letter: why
    "empty": Rule(None, False, 0, 0, "the response is empty"),
    "unfinished": Rule(None, False, 0, 0, "the response stops mid-sentence"),
    "listing": Rule(None, False, 0, 0, "the response lists the options"),
    "hedge": Rule(None, False, 0, 0, "the answer hedges between options"),
    "refusal": Rule(None, False, 0, 0, "the response declines to answer"),
    "none_of_the_options": Rule(None, False, 0, 0, "the response says no option fits"),
    "all_of_the_above": Rule(None, False, None, None, "the response chooses all of them"),
    "no_option": Rule(None, False, 0, 0, "the response names no option"),
    "yes_no": Rule(None, False, None, None, "the response says neither yes nor no alone"),
    "number": Rule(None, False, None, None, "the response gives no single number"),
}
RULE_TIERS = {name: rule.tier for name, rule in RULES.items() if rule.tier is not None}
COMMITTING_CHOICE_RULES = frozenset(name for name, rule in RULES.items() if rule.commits)


def describe(rule: str, letter: str | None) -> str:
    """Plain words for how a rule read an answer, for the explorer: "the whole answer is option B"; a withheld letter
    says so, with its rule's record on the fitted samples; without a letter, that none was read there."""
    if rule not in RULES:
        raise ValueError(f"extraction rule {rule!r} is not one of the rules (extraction.RULES)")
    entry = RULES[rule]
    if "{option}" not in entry.says:
        return entry.says
    if letter is None:
        return entry.says.format(option="...") + ": no single option"
    option = f"option {letter}" if len(letter) == 1 and letter.isalpha() else f"\"{letter}\""
    said = entry.says.format(option=option)
    if entry.commits or entry.letters is None:
        return said
    if entry.tier is None:
        return f"{said}: left to the judge (the stated letter is right {entry.right} of {entry.letters} times on the labelled samples)"
    record = f" (this rule's letter is right {entry.right} of {entry.letters} times on the labelled samples)" if entry.letters else ""
    return f"{said}: withheld for the judge{record}"


# A letter stated before more text (an explanation, a working) is committed only where that text does not point to
# another option (_Reader.explained_otherwise): with EXPLAINED_WORDS words or more from the letter on, the response must
# not say more of another option's telling words than of its own; with WORKING_WORDS or more, it must say more of its
# own than of any other's. Else rule `explained_otherwise`, `inconclusive`. On held-out rounds 1-9, each read with its
# own round's rules, 16 of the 43 letters this withholds were wrong (of all the 34 wrong there), for 27 of the 8,851
# right ones (0.3%).
EXPLAINED_WORDS = 10
WORKING_WORDS = 40
# The rules that read a letter the response states as its answer ("The answer is (D) Wolf."): the words of its working
# do not overturn it, only a last sentence that names another option's text (issue 31: on the fitted samples the word
# count withheld 21 such letters, all right; on the long-prose dev sample 33 of 34, the other a non-answer), and a text
# that stops mid-sentence after it does not withhold it (7 and 4 letters, all right).
ANSWER_STATEMENT_RULES = frozenset({"answer_line", "answer_statement", "boxed"})


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


def _committed(extraction: Extraction, cut: bool, stated_in_full: bool = False) -> Extraction:
    """The extraction, or `inconclusive` with its letter as the candidate where its rule does not commit, or where
    a reading rule read a text that stops mid-sentence (working cut off mid-elimination is no choice) -- unless the
    response stated that letter as its answer in a sentence that ends after it (`stated_in_full`: "The answer is (A)
    oblique.\n\nExplanation: ... less than "): the answer was written before the text stopped."""
    cut_reading = cut and extraction.tier == READING and not (stated_in_full and extraction.rule in ANSWER_STATEMENT_RULES)
    if extraction.found and (extraction.rule not in COMMITTING_CHOICE_RULES or cut_reading):
        return Extraction(None, "none", extraction.rule, "inconclusive", candidate=extraction.prediction)
    return extraction
