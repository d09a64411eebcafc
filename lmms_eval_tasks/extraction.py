"""Deterministic answer extraction, shared by every task.

Each extractor returns an `Extraction`: the parsed prediction (or None) and how it was found. Rules
are tried from the most explicit to the least; the first rule that finds anything decides, and if
that rule finds two different answers the response is ambiguous and the prediction is None (the
exceptions, a model's last "the answer is" statement and the result after "=", are named below). An
inconclusive response is never turned into a guess: it stays None and is scored wrong (match
"none"), unless an adjudicator (see `scoring.set_adjudicator`) decides it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
UNCLOSED_THINK = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)
MARKDOWN_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")

# "The answer is (B)", "final answer: **B**", "the correct option is B." -- a bare letter must be a
# capital standing alone ("the answer is a cat" names no option); a bracketed one may be lower case.
ANSWER_STATEMENT = re.compile(
    r"(?:(?i:answer)|(?i:correct|right|best)\s+(?i:option|choice|letter))\s*"
    r"(?i:is|:|=|would be|should be)?\s*(?i:option|choice|letter)?\s*:?\s*"
    r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Z]))(?![A-Za-z0-9'’])"
)
FINAL_ANSWER_LINE = re.compile(r"^\W*(?:final\s+)?answer\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
WHOLE_LETTER = re.compile(r"^\W*(?:option\s+|choice\s+)?\(?([A-Za-z])\)?\W*$", re.IGNORECASE)
# a letter opening a line and followed by a delimiter: "B. Paris", "(B) Paris", "B, because", "B (no cat)"
LEADING_LETTER = re.compile(r"^\s*\(?([A-Z])(?:\)|\.|:|,|;|\s+-|\s+\(|\s+because\b)")
LETTER_MENTION = re.compile(r"\(([A-Za-z])\)|\b([A-Z])\)|(?i:option|choice)\s+([A-Z])\b")
STANDALONE_CAPITAL = re.compile(r"(?<![A-Za-z0-9'’])([A-Z])(?![A-Za-z0-9'’])")
NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")
YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Extraction:
    prediction: str | None
    match: str  # letter, option_text, yes_no, numeric, exact, judge, none
    rule: str  # which rule decided, for debugging and the log

    @property
    def found(self) -> bool:
        return self.prediction is not None


def inconclusive(rule: str) -> Extraction:
    return Extraction(None, "none", rule)


def strip_reasoning(response: str) -> str:
    """Drop <think>...</think> blocks; a dangling </think> ends the reasoning, an unclosed <think> is all reasoning."""
    text = THINK_BLOCK.sub(" ", response)
    if re.search(r"</think>", text, re.IGNORECASE):
        text = re.split(r"</think>", text, flags=re.IGNORECASE)[-1]
    text = UNCLOSED_THINK.sub(" ", text)
    return text.strip()


def final_answer_segment(text: str) -> str | None:
    """The text after the last 'Answer:' line (the CoT format), if any."""
    matches = FINAL_ANSWER_LINE.findall(text)
    return matches[-1] if matches else None


def normalise_text(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s%.-]", " ", text.lower())).strip(" .")


def _decide(letters: list[str], rule: str, match: str = "letter") -> Extraction | None:
    """None when the rule found nothing; else the one distinct letter, or an ambiguous (None) prediction."""
    distinct = sorted(set(letters))
    if not distinct:
        return None
    if len(distinct) == 1:
        return Extraction(distinct[0], match, rule)
    return inconclusive(f"{rule}:ambiguous")


def _mentioned(text: str, valid: set[str]) -> list[str]:
    return [letter for m in LETTER_MENTION.finditer(text) if (letter := next(g for g in m.groups() if g).upper()) in valid]


def _only_letter(line: str, valid: set[str], rule: str) -> Extraction | None:
    """A line that is nothing but a letter: "B", "(B)", "B.", "**B**", "Option B"."""
    whole = WHOLE_LETTER.match(MARKDOWN_EMPHASIS.sub("", line).strip())
    if whole is None:
        return None
    letter = whole.group(1).upper()
    return Extraction(letter, "letter", rule) if letter in valid else inconclusive(f"{rule}:not_an_option")


def _leading_letter(line: str, valid: set[str], rule: str, options: list[str], letters: list[str]) -> Extraction | None:
    """A line opening with a letter and a delimiter; another option named on the same line, by letter
    ("(A) or (B)") or by its text ("A. red, but C. blue is possible"), makes it ambiguous."""
    line = MARKDOWN_EMPHASIS.sub("", line).strip()
    lead = LEADING_LETTER.match(line)
    if lead is None or lead.group(1) not in valid:
        return None
    return _decide([lead.group(1), *_mentioned(line, valid), *_named_options(line, options, letters)], rule)


def _named_options(text: str, options: list[str], letters: list[str]) -> list[str]:
    """Letters of the options whose text the text names; an option contained in another named option yields to it."""
    body = f" {normalise_text(text)} "
    named = [(letter, norm) for letter, option in zip(letters, options) if (norm := normalise_text(option)) and f" {norm} " in body]
    return [letter for letter, norm in named if not any(norm != other and norm in other for _, other in named)]


def _option_text_choice(text: str, options: list[str], letters: list[str]) -> Extraction | None:
    """The one option whose text the response names."""
    return _decide(_named_options(text, options, letters), "option_text", match="option_text")


def extract_choice(response: str, options: list[str], letters: list[str] | None = None) -> Extraction:
    """Extract the chosen option letter from a free-text response to a multiple-choice question.

    Rules, first that finds anything decides; where a rule finds two different letters the response is
    ambiguous (prediction None), except rule 4, whose last statement wins:
      1. the last "Answer: X" line (the CoT format): a letter, a leading letter, or one option's text;
      2. the whole response is a letter: "B", "(B)", "B.", "**B**", "Option B";
      3. the first line is a letter and the rest explains: "B\n\nBecause option A is wrong";
      4. an answer statement: "The answer is B", "correct option: (B)" -- the last statement wins,
         because a model that corrects itself means its final statement;
      5. the first line opens with a letter and a delimiter: "B. Paris", "(B) Paris", "B, because ...",
         "B (no cat)" -- unless that line names another option, by letter ("(A) or (B)") or by text;
      6. letter mentions: "(B)", "B)", "option B" anywhere -- exactly one distinct letter;
      7. option text: exactly one option's text appears (an option contained in another named
         option yields to the longer one);
      8. exactly one distinct stand-alone capital option letter ("I think B is right"), where "A"
         and "I" followed by a lower-case word are read as an article or a pronoun.
    """
    letters = letters or [chr(ord("A") + i) for i in range(len(options))]
    valid = set(letters)
    text = strip_reasoning(response)
    if not text:
        return inconclusive("empty")

    segment = final_answer_segment(text)
    if segment is not None:
        for decide in (lambda: _only_letter(segment, valid, "answer_line"),
                       lambda: _leading_letter(segment, valid, "answer_line", options, letters),
                       lambda: _option_text_choice(segment, options, letters)):
            if (decided := decide()) is not None:
                return decided

    plain = MARKDOWN_EMPHASIS.sub("", text).strip()
    first_line = plain.split("\n", 1)[0]
    for decided in (_only_letter(plain, valid, "whole"), _only_letter(first_line, valid, "first_line")):
        if decided is not None:
            return decided

    statements = [next(g for g in m.groups() if g).upper() for m in ANSWER_STATEMENT.finditer(plain)]
    statements = [letter for letter in statements if letter in valid]
    if statements:
        return Extraction(statements[-1], "letter", "answer_statement")

    for decide in (lambda: _leading_letter(first_line, valid, "leading", options, letters),
                   lambda: _decide(_mentioned(plain, valid), "mention"),
                   lambda: _option_text_choice(plain, options, letters)):
        if (decided := decide()) is not None:
            return decided

    capitals = []
    for m in STANDALONE_CAPITAL.finditer(plain):
        letter = m.group(1)
        following = plain[m.end() : m.end() + 2]
        if letter in {"A", "I"} and re.match(r"\s[a-z]", following):
            continue  # article or pronoun, not an option letter
        if letter in valid:
            capitals.append(letter)
    decided = _decide(capitals, "capital")
    return decided if decided is not None else inconclusive("no_option")


def extract_yes_no(response: str) -> Extraction:
    """Yes/No: the 'Answer:' line, else the first word, else the only one of yes/no that appears."""
    text = strip_reasoning(response)
    if not text:
        return inconclusive("empty")
    segment = final_answer_segment(text)
    for candidate, rule in ((segment, "answer_line"), (text, "first_word")):
        if candidate is None:
            continue
        first = re.match(r"^\W*(yes|no)\b", MARKDOWN_EMPHASIS.sub("", candidate), re.IGNORECASE)
        if first:
            return Extraction(first.group(1).capitalize(), "yes_no", rule)
    found = {w.lower() for w in YES_NO.findall(text)}
    if len(found) == 1:
        return Extraction(found.pop().capitalize(), "yes_no", "only_word")
    return inconclusive("yes_no:ambiguous" if found else "yes_no:absent")


def parse_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


ANSWER_IS = re.compile(r"answer\s*(?:is|:|=)\s*([^\n]+)", re.IGNORECASE)


def _result_number(segment: str) -> str | None:
    """The number an answer segment gives: after its last "=" when it shows a calculation ("12 - 5 = 7")."""
    numbers = NUMBER.findall(segment.rsplit("=", 1)[-1])
    return numbers[0].replace(",", "") if numbers else None


def extract_number(response: str) -> Extraction:
    """A number: from the last 'Answer:' line, else the whole response if it is one number (units allowed),
    else the last 'answer is/=' statement, else the only distinct number in the response."""
    text = strip_reasoning(response).replace("\u2212", "-")  # the typographic minus sign
    if not text:
        return inconclusive("empty")
    plain = MARKDOWN_EMPHASIS.sub("", text)
    segment = final_answer_segment(plain)
    if segment is not None and (number := _result_number(segment)) is not None:
        return Extraction(number, "numeric", "answer_line")
    whole = re.fullmatch(r"[^\w+\-.]*(" + NUMBER.pattern + r")\s*[%°\w]{0,12}\W*", plain.strip())
    if whole:
        return Extraction(whole.group(1).replace(",", ""), "numeric", "whole")
    statements = ANSWER_IS.findall(plain)
    if statements and (number := _result_number(statements[-1])) is not None:
        return Extraction(number, "numeric", "answer_statement")
    numbers = {n.replace(",", "") for n in NUMBER.findall(plain)}
    if len(numbers) == 1:
        return Extraction(numbers.pop(), "numeric", "only_number")
    return inconclusive("number:ambiguous" if numbers else "number:absent")


def extract_answer_part(response: str) -> Extraction:
    """For open answers: the last 'Answer:' line, else the last 'answer is' statement, else the whole text."""
    text = strip_reasoning(response)
    if not text:
        return inconclusive("empty")
    segment = final_answer_segment(text)
    if segment is not None:
        return Extraction(segment, "exact", "answer_line")
    statements = ANSWER_IS.findall(text)
    if statements:
        return Extraction(statements[-1].strip(), "exact", "answer_statement")
    return Extraction(text, "exact", "whole")
