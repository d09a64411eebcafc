"""Yes/no, numbers and open answers."""

from __future__ import annotations

import re

from .admission import Extraction, abstain
from .locate import _settle
from .normalise import BOX_CLOSE, BOX_OPEN, final_answer_segment, prepare
from .readings import Commitment, Reading
from .vocabulary import (
    ANSWER_HEADING,
    ANSWER_TRIGGER,
    CHOOSE_TRIGGER,
    CONCLUDE_TRIGGER,
    NULL_ANSWER,
    NUMBER,
    REFUSAL,
    SENTENCE_END,
    UNCERTAIN,
    UNFINISHED,
)

# ---------------------------------------------------------------- yes / no

YES_OR_NO = re.compile(r"(?i)[\s:\"'(]*(yes|no)\b")
YES_NO_WORD = re.compile(r"(?i)\b(yes|no)\b")
YES_NO_HEDGE = re.compile(
    r"(?i)\byes\s*(?:and|or|/)\s*no\b|\bno\s*(?:and|or|/)\s*yes\b|\bmaybe\b|\bperhaps\b|\bpossibly\b|\bpartially\b"
    r"|\bpartly\b|\bit\s+depends\b|\bsort\s+of\b|\bkind\s+of\b|\bhard\s+to\s+say\b|\bambiguous\b"
)
NO_IDEA = re.compile(r"(?i)\s+(?:idea|clue|way\s+to\s+(?:tell|know|determine))\b")


def _yes_no_phrase(text: str, pos: int, end: int) -> Reading | None:
    echo = re.compile(r"(?i)[\s\"']*yes\s*(?:or|/)\s*no\s*[:?]").match(text, pos, end)  # "Yes or no: yes"
    m = YES_OR_NO.match(text, echo.end() if echo else pos, end)
    if m:
        if re.match(r"(?i)\s*(?:and|or|/)\s*(?:yes|no)\b", text[m.end() : end]):
            return Reading("hedge", ("Yes", "No"))
        if m.group(1).lower() == "no" and NO_IDEA.match(text, m.end(), end):
            return Reading("null", reason="refusal")
        return Reading("one", (m.group(1).capitalize(),))
    null = NULL_ANSWER.match(text, pos + len(text[pos:end]) - len(text[pos:end].lstrip(" \t:")), end)
    return Reading("null", reason=null.lastgroup) if null else None


def _line_after(text: str, pos: int) -> tuple[int, int]:
    """The rest of the line at pos, or the next non-empty line when that is empty ("Answer:\n\nYes")."""
    m = re.compile(r"[ \t:]*(?:\n\s*)?").match(text, pos)
    end = text.find("\n", m.end())
    return m.end(), len(text) if end < 0 else end


def extract_yes_no(response: str) -> Extraction:
    """Yes/No: an 'Answer:' line or answer statement ("the answer is no", "So, yes"), else the first word,
    else the only one of yes/no in the response; refusals and hedges ("yes and no", "maybe") abstain."""
    text = prepare(response)
    if not text:
        return abstain("empty", "empty")
    commitments = []
    for trigger in (ANSWER_TRIGGER, CONCLUDE_TRIGGER, CHOOSE_TRIGGER, ANSWER_HEADING):
        for m in trigger.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            rule = "answer_line" if re.match(r"(?i)[ \t]*(?:final\s+)?answer\b", text[line_start : m.end()]) else "answer_statement"
            start, end = _line_after(text, m.end())
            if (reading := _yes_no_phrase(text, start, end)) is not None:
                commitments.append(Commitment(m.start(), reading, rule))
    first_sentence = text[: (SENTENCE_END.search(text).start() if SENTENCE_END.search(text) else len(text))]
    if (reading := _yes_no_phrase(text, 0, len(text))) is not None and not REFUSAL.search(first_sentence):
        commitments.append(Commitment(0, reading, "first_word", priority=0))
    if commitments:
        return _settle(text, commitments, lambda r: "yes_no")
    if REFUSAL.search(text) or UNCERTAIN.search(text):
        return abstain("refusal", "refusal")
    if YES_NO_HEDGE.search(text):
        return abstain("hedge", "hedge")
    if len(text.split()) >= 6 and UNFINISHED.search(text):
        return abstain("unfinished", "truncated")
    found = {w.lower() for w in YES_NO_WORD.findall(text)}
    if len(found) == 1:
        return Extraction(found.pop().capitalize(), "yes_no", "only_word")
    return abstain("yes_no", "hedge" if found else "no_answer")


# ---------------------------------------------------------------- numbers and open answers


ANSWER_IS = re.compile(r"answer\s*(?:is|:|=)\s*([^\n]+)", re.IGNORECASE)
FRACTION = re.compile(r"\(?\s*([-+]?\d+(?:\.\d+)?)\s*\)?\s*/\s*\(?\s*(\d+(?:\.\d+)?)\s*\)?")
NUMBER_HEDGE = re.compile(r"(?i)\b(?:or|between|either)\b|\d\s*(?:to|-|–)\s*\d")


def _number_in(segment: str, rule: str) -> Extraction | None:
    """The number an answer segment gives: after its last "=" when it shows a calculation ("12 - 5 = 7");
    a null answer ("N/A") or two numbers left open ("3 or 4", "between 3 and 4") abstain."""
    if NULL_ANSWER.match(segment.strip(" \t:")):
        return abstain(rule, NULL_ANSWER.match(segment.strip(" \t:")).lastgroup)
    result = segment.rsplit("=", 1)[-1]
    numbers = NUMBER.findall(result)
    if not numbers:
        return None
    fraction = FRACTION.search(result)
    if fraction and fraction.start() == NUMBER.search(result).start() - (result[fraction.start()] == "(") and float(fraction.group(2)):
        return Extraction(repr(float(fraction.group(1)) / float(fraction.group(2))), "numeric", rule)  # "1/4", "\frac{1}{2}"
    if len({n.replace(",", "") for n in numbers}) > 1 and NUMBER_HEDGE.search(result):
        return abstain(rule, "hedge")
    return Extraction(numbers[0].replace(",", ""), "numeric", rule)


def extract_number(response: str) -> Extraction:
    """A number: from the last 'Answer:' line or \\boxed{}, else the whole response if it is one number (units
    allowed), else the last 'answer is/=' statement, else the only distinct number in the response."""
    text = prepare(response).replace("\u2212", "-")  # the typographic minus sign
    if not text:
        return abstain("empty", "empty")
    boxed = re.findall(f"{BOX_OPEN}([^{BOX_CLOSE}]*){BOX_CLOSE}", text)
    for segment, rule in ((final_answer_segment(text), "answer_line"), (boxed[-1] if boxed else None, "answer_statement")):
        if segment is not None and (found := _number_in(segment, rule)) is not None:
            return found
    whole = re.fullmatch(r"[^\w+\-.]*(" + NUMBER.pattern + r")\s*[%°\w]{0,12}\W*", text)
    if whole:
        return Extraction(whole.group(1).replace(",", ""), "numeric", "whole")
    if re.fullmatch(r"\W*" + FRACTION.pattern + r"\W*", text):
        return _number_in(text, "whole")
    calculation = re.search(r"=\s*(" + NUMBER.pattern + r")\s*[%°a-zA-Z²³]{0,12}\W*$", text)
    steps = text.split("=")[1:-1]  # what stands between the signs of "perimeter = 4 × 7 = 28"
    if calculation and not any(re.search(r"[,;\n]", step) for step in steps):  # not "x = 4, y = 5"
        return Extraction(calculation.group(1).replace(",", ""), "numeric", "calculation")
    statements = ANSWER_IS.findall(text)
    if statements and (found := _number_in(statements[-1], "answer_statement")) is not None:
        return found
    numbers = {n.replace(",", "") for n in NUMBER.findall(text)}
    if len(numbers) == 1:
        return Extraction(numbers.pop(), "numeric", "only_number")
    if numbers:
        return abstain("number", "hedge" if NUMBER_HEDGE.search(text) and len(numbers) == 2 else "no_answer")
    return abstain("number", "refusal" if REFUSAL.search(text) or UNCERTAIN.search(text) else "no_answer")


LONE_LETTER = re.compile(r"\W*(?:(?i:option|choice)\s*)?\(?([A-Z])\)?[\W]*")


def extract_answer_part(response: str) -> Extraction:
    """For open answers: the last 'Answer:' line, else \\boxed{}, else the last 'answer is' statement, else the
    whole text. A lone option letter ("A", "(B)") answers a question that has no options (out_of_range);
    "N/A" or a refusal without any number is a refusal."""
    text = prepare(response)
    if not text:
        return abstain("empty", "empty")
    boxed = re.findall(f"{BOX_OPEN}([^{BOX_CLOSE}]*){BOX_CLOSE}", text)
    statements = ANSWER_IS.findall(text)
    segment, rule = next((s.strip(), r) for s, r in ((final_answer_segment(text), "answer_line"),
                                                     (boxed[-1] if boxed else None, "answer_statement"),
                                                     (statements[-1] if statements else None, "answer_statement"),
                                                     (text, "whole")) if s is not None and s.strip())
    if LONE_LETTER.fullmatch(segment):
        return abstain(rule, "out_of_range")
    if (null := NULL_ANSWER.match(segment)) and len(segment.split()) <= 4:
        return abstain(rule, null.lastgroup)
    if rule == "whole" and (REFUSAL.search(text) or UNCERTAIN.search(text)) and not re.search(r"\d", text):
        return abstain(rule, "refusal")
    return Extraction(segment, "exact", rule)
