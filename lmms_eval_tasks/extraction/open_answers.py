"""Yes/no, numbers and open answers."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from .admission import Extraction, abstain
from .locate import _settle
from .normalise import (
    BOX_CLOSE,
    BOX_OPEN,
    SPECIAL_TOKENS,
    final_answer_segment,
    prepare,
    without_courtesy,
)
from .readings import Commitment, Reading
from .vocabulary import (
    ANSWER_HEADING,
    ANSWER_TRIGGER,
    CHOOSE_TRIGGER,
    CONCLUDE_TRIGGER,
    NULL_ANSWER,
    NUMBER,
    REFUSAL,
    REVISION,
    SENTENCE_END,
    UNCERTAIN,
    UNFINISHED,
    parse_number,
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
# "Here's how I got the answer:\n\n1. We know that ...": a numbered working opens below the trigger, not the answer
NUMBERED_STEP = re.compile(r"\d+[.)][ \t]+[A-Za-z]")


def _answer_statements(text: str) -> list[str]:
    """What follows each "answer is" / "answer:" of the text, but a numbered step on the lines below it."""
    return [m.group(1) for m in ANSWER_IS.finditer(text)
            if not ("\n" in text[m.start() : m.start(1)] and NUMBERED_STEP.match(m.group(1)))]


FRACTION = re.compile(r"\(?\s*([-+]?\d+(?:\.\d+)?)\s*\)?\s*/\s*\(?\s*(\d+(?:\.\d+)?)\s*\)?")
NUMBER_HEDGE = re.compile(r"(?i)\b(?:or|between|either)\b|\d\s*(?:to|-|–)\s*\d")
# "Final value: 36", "The final value is 4", "final integer value: 37": MathVista's hint asks for "the final value".
FINAL_VALUE = re.compile(r"(?i)\bfinal\s+(?:\w+\s+)?(?:value|answer|result)\s*(?:is|:|=|would\s+be|will\s+be)\s*([^\n]+)")
# a line that opens with "Final" and gives its value after a colon: "Final number of objects left: 7"
FINAL_LINE = re.compile(r"(?im)^[ \t*#]*final\s+(?:[\w'-]+\s+){0,6}?[\w'-]+\s*:\s*([^\n]+)")
# A worked answer that goes on with new questions of its own (few-shot examples continued): only the first counts.
CONTINUATION = re.compile(r"\n[ \t]*(?:Question|Q)[ \t]*:")
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
# A sentence that supposes or illustrates rather than concludes ("If the shape is 10 squares, ...", "For example").
HYPOTHETICAL = re.compile(r"(?i)\b(?:if(?!\s+(?:we|you)\s+(?:add|sum|subtract|multiply|divide|combine|count|total)\b)|"
                          r"for\s+example|for\s+instance|e\.g|suppose|supposing|let's\s+say|would|could|might|"
                          r"depends?|depending)\b")  # not a step: "If we add them together, the total sum is 3."
# What says no number can be given: a refusal, a lack of information, the answer left open.
NO_NUMBER = re.compile(r"(?i)\b(?:cannot|can't|can\s+not|unable|impossible|not\s+possible|insufficient|not\s+sufficient|not\s+enough|"
                       r"(?:does|do|did)\s+not\s+(?:provide|give|include|contain|show|specify|mention)|doesn't\s+(?:provide|give|"
                       r"include|contain|show|specify|mention)|no\s+(?:information|data|way)|without\s+(?:the|any|more|additional|"
                       r"specific|further|knowing)|need\s+(?:more|additional|further)\s+(?:information|data|details|context))\b")
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())}
NUMBER_OR_WORD = rf"(?P<number>{NUMBER.pattern}|\b(?:{'|'.join(NUMBER_WORDS)})\b(?!\s+of\b))"
# A number stated as what something is: after "is", "are", "was", "=" (an adverb such as "approximately" between).
STATED_NUMBER = re.compile(
    r"(?i)(?P<verb>\b(?:is|are|was|were|be|equals?|equal\s+to|(?:simplifies|comes|amounts|works\s+out)\s+to|"
    r"(?:you|we)\s+(?:get|obtain)|gives|yields|results\s+in|"
    r"(?:has|have|had)\s+an?\s+(?:\w+\s+){0,2}?of|(?:recorded|reported|measured|estimated)\s+(?:as|at))\b[ \t]*:?|=)"
    r"[ \t]*(?:(?:approximately|approx\.|about|around|roughly|nearly|almost|likely|only|just|exactly|precisely|"
    rf"a\s+total\s+of|a\s+value\s+of|~|≈)[ \t]*)*{NUMBER_OR_WORD}"
)
CLAUSE_END = re.compile(r"[,;]\s|\s(?:and|but|with|while|which|so)\s")
# A number that bounds or compares rather than answers: "more than 7", "at least 0", "exactly 56 boxes", "rise of 2.0 K".
COMPARED_BEFORE = re.compile(r"(?i)\b(?:than|least|most|over|under|above|below|exceeds?|exceeding)\s*\W?\s*$")
BOUND_BEFORE = re.compile(r"(?i)\b(?:than|least|most|exactly|of|over|under|above|below|exceeds?|exceeding|by)\s*\W?\s*$")
COMPARED_AFTER = re.compile(r"(?i)\s*(?:or|and)\s+(?:more|less|fewer|greater|higher|lower|above|below|over|under)\b")  # "60 or more"
RANGE_AFTER = re.compile(r"(?i)\s*(?:-|–|to|or)\s*(?:\d|infinity|$)|\s*[-–]\W*$")
EXPRESSION_AFTER = re.compile(r"^[^=]*?\s[-+×*/]\s*\(?\s*(?:[^=]*\d|[A-Za-z]\b)")  # "52 km/h + (negative of 78)", "1.33 × T"
EXPRESSION_BEFORE = re.compile(r"(?:[A-Za-z)]\s+[-+×*/]|\b[A-Za-z]\s*[×*/])\s*$")  # "Total objects - 15", "a/2": a term of an expression
CONNECTIVE = re.compile(r"(?i)\b(?:therefore|thus|hence|consequently)\b,?|(?:^|,|\band)\s*\bso\b,?")
# A result stated as a range ("The range is from 6 to 10", "it lies between 10 and 12"), not "between 2014 and 2015".
RANGE_IN = re.compile(r"(?i)\b(?:is|are|was|were|be|lies|lie|ranges?|ranging)\s+(?:\w+\s+)?(?:from|between)\s+\W*\d[\d.,]*\S*"
                      r"\s+(?:to|and|-)\s+\W*\d")
UNCLOSED_MATH = re.compile(r"\$[^$\n]*[^.!?)\s$]\s*$")  # "... is $0.0": cut inside a formula
LATEX_MATH = re.compile(r"\$[^$]*\\[a-zA-Z]+[^$]*\$")  # a formula with a command: "$ \\frac{1}{2} $"
_NEXT_NUMBER = rf"\s*,\s+(?:{NUMBER.pattern})"  # ", 3": another number listed after one
NUMBER_RUN = re.compile(rf"\W*(?:{NUMBER.pattern})(?:{_NEXT_NUMBER}){{2,}}")  # three numbers or more, listed
NUMBER_PAIR = re.compile(rf"\W*(?:{NUMBER.pattern}){_NEXT_NUMBER}\W*")  # two numbers and nothing else
PAIRED_AFTER = re.compile(rf"{_NEXT_NUMBER}\W*")  # ", 3." closing the sentence: a second number beside it
POWER_OF_TEN = re.compile(r"(?<![\d.^])10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?")  # "10^3", "10^{-2}": a scale's value
WORD_BEFORE = re.compile(r"(\w+)\W+$")  # with endpos: the word before a position
WORD_AFTER = re.compile(r"\W+(\w+)")  # at a position: the word after it
BOLD_NUMBER = re.compile(r"\*\*\s*\$?([-+]?\d[\d,]*(?:\.\d+)?)\s*\*\*")  # "**14**": markdown's emphasis on an answer
# a line that announces closing results ("Therefore, the components are:"), and one such result ("a_x = 9.0 cm/s^2")
CONCLUDING_HEADER = re.compile(r"(?i)\b(?:therefore|thus|hence|so|final|answers?|results?)\b")
RESULT_LINE = re.compile(rf"[ \t*-]*([A-Za-z][\w ()'^-]{{0,30}}?)[ \t]*[=:][ \t]*(?:≈[ \t]*)?\$?({NUMBER.pattern})[^\n=]{{0,15}}")
SIGN_WORDS = re.compile(r"(?i)\b(?:decrease|decline|drop|fall|reduction|loss|increase|rise|gain|growth)\s+of\s*$")
SCIENTIFIC = re.compile(r"(\d+(?:\.\d+)?)\s*(?:x|×|\\times|\*)\s*10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?")


# "The ratio of male to female ... is 3:2": a ratio stated as one, its value (not 3:15, a time)
RATIO = re.compile(r"(?i)(\bratio\b[^.\n]{0,120}?\b(?:is|are|of|=)\s*)(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\b(?!\s*[ap]\.?m\b)")
# What no number answers: "the limit does not exist", "is undefined", "is infinite".
NO_VALUE = re.compile(r"(?i)\b(?:does\s+not|doesn't)\s+exist\b|\bis\s+(?:undefined|infinite|infinity)\b")
# An expression in words: "the total number of objects minus 10 minus 5".
WORDED_EXPRESSION = re.compile(r"(?i)\b(?:minus|plus|times|divided\s+by|multiplied\s+by)\b")
RELATIVE_BEFORE = re.compile(r"(?i)\b(?:which|that|who)\s*$")  # "..., which is 296, ...": a description, not the result
_COUNT = rf"(?:\d+(?:\.\d+)?|{'|'.join(w for w, n in NUMBER_WORDS.items() if 1 <= int(n) <= 10)})"  # one .. ten
QUANTITY_LIST = re.compile(rf"(?i)\b{_COUNT}[ \t]+[a-z][a-z -]{{0,40}}?[ \t]+and[ \t]+{_COUNT}[ \t]+[a-z]")
RESPECTIVELY = re.compile(r"(?i)\brespectively\b")  # "The sums are 2.85 and 3.1, respectively.": one value each
# A sentence that only announces a result ("Calculating this expression will give us the field at r=2.00 R_2.").
GIVEN_ONLY = re.compile(r"(?i)\b(?:will|would|can|could)\s+(?:give|yield|get|find|determine|calculate)\b")


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
    if NUMBER_RUN.match(result) or NUMBER_PAIR.fullmatch(result.strip()):  # "the answer is 1, 2, 3, 4", "485, 3.": all of them
        return abstain(rule, "several_answers")
    return Extraction(numbers[0].replace(",", ""), "numeric", rule)


def _cut_in_formula(response: str) -> bool:
    """The response writes LaTeX formulas and stops inside one ("... the relative increase is $0.0"); a "$" of a
    price ("Answer: $120") is no formula."""
    text = SPECIAL_TOKENS.sub("", response).rstrip()
    return text.count("$") % 2 == 1 and bool(LATEX_MATH.search(text)) and bool(UNCLOSED_MATH.search(text))


def _term_of_expression(text: str, number: re.Match) -> bool:
    """Whether a word and an operator stand right before the number ("Total objects - 15", "a/2")."""
    return EXPRESSION_BEFORE.search(text, max(0, number.start() - 12), number.start()) is not None


def _cut_in_a_loop(text: str) -> bool:
    """The response repeats one line, three times or more, and stops inside the next repetition: a generation stuck in
    a loop, cut off."""
    lines = [line.strip() for line in text.rsplit("\n", 8) if line.strip()]  # the last four lines, blank ones between
    return len(lines) >= 4 and len(set(lines[-4:-1])) == 1 and lines[-1] != lines[-2] and lines[-2].startswith(lines[-1])


@functools.lru_cache(maxsize=128)  # the number reader and its checks each ask for it
def _first_answer(text: str) -> str:
    """The text before a continuation with new questions of its own ("...is 85.\n\nQuestion: How many ...") and
    before closing courtesies ("I hope this helps. Let me know if ...")."""
    cut = CONTINUATION.search(text)
    text = text[: cut.start()].rstrip() if cut else text
    return without_courtesy(text)


def _sentence_with(text: str, part: str) -> str:
    """The last sentence of a text that holds `part`."""
    return next((s for s in reversed(SENTENCE_SPLIT.split(text)) if part in s), text)


def _conclusion(text: str) -> str:
    """The last sentence."""
    sentences = [s for s in SENTENCE_SPLIT.split(text) if s.strip()]
    return sentences[-1] if sentences else ""


def _answers(sentence: str) -> set[str] | None:
    """The numbers a sentence states as results; None when one of them is left open ("from 6 to 10", "0-")."""
    stated = [m for m in STATED_NUMBER.finditer(sentence) if not SIGN_WORDS.search(sentence[: m.start("number")])]
    if any(not m.group("verb").startswith("=") for m in stated):  # "... at r=2.00 is 218000": the statement, not the working
        stated = [m for m in stated if not m.group("verb").startswith("=")]
    described = [m for m in stated if RELATIVE_BEFORE.search(sentence[: m.start("verb")])
                 and m.group("verb").lower() in ("is", "are", "was", "were")]  # not "which simplifies to 12"
    if len(described) < len(stated):  # "If you divide the largest bar value by 2, which is 296, you get 148."
        stated = [m for m in stated if m not in described]
    values = set()
    for m in stated:
        word = m.group("number").lower()
        if word in NUMBER_WORDS:
            values.add(NUMBER_WORDS[word])
            continue
        clause_end = CLAUSE_END.search(sentence, m.end())
        segment = sentence[m.start("number") : clause_end.start() if clause_end else len(sentence)]
        if "=" not in segment and (RANGE_AFTER.match(sentence, m.end("number")) or PAIRED_AFTER.fullmatch(sentence, m.end("number"))):
            return None  # "from 6 to 10", "the missing item is 485, 3.": no one number
        if "=" not in segment and EXPRESSION_AFTER.match(segment):
            continue
        found = _number_in(segment, "conclusion")
        if found is None or not found.found:
            return None
        values.add(found.prediction)
    return values


def _stated_numbers(text: str) -> set[str] | None:
    """The numbers the sentences of a text state results to be; None when one of them leaves a number open."""
    stated = set()
    for sentence in SENTENCE_SPLIT.split(text):
        values = None if RANGE_IN.search(sentence) or _several_values(sentence) else _answers(sentence)
        if values is None:
            return None
        stated |= values
    return stated


def declines(text: str) -> bool:
    """Whether a text refuses, is unsure or says no number can be given: none of its numbers is an answer it chose."""
    return bool(REFUSAL.search(text) or UNCERTAIN.search(text) or NO_NUMBER.search(text))


def _several_values(sentence: str) -> bool:
    """Whether a sentence gives one value for each of several things and adds nothing up: it counts two kinds of
    thing ("There are 1 green matte block and 2 tiny brown cylinders left.", "two large objects ... and two tiny gray
    metal objects"), or gives values "respectively" ("The sums are 2.85 and 3.1, respectively.")."""
    numbers = len(NUMBER.findall(sentence))
    return bool(QUANTITY_LIST.search(sentence)) and numbers <= 2 or bool(RESPECTIVELY.search(sentence)) and numbers >= 2


def _unbound(text: str) -> list[re.Match]:
    """The numbers of a text but those that bound or compare ("more than 7", "a rise of 2.0 K")."""
    return [m for m in NUMBER.finditer(text) if not BOUND_BEFORE.search(text[: m.start()]) and not COMPARED_AFTER.match(text, m.end())]


def _unbound_numbers(text: str) -> set[str]:
    return {m.group().replace(",", "") for m in _unbound(text)}


def _given(values: set[str], given: frozenset[float]) -> set[str]:
    """The values but those the question gives ("Linda wants to buy 0.9 pounds ... How much will she spend?": "Linda
    will spend $6.80 to buy 0.9 pounds"), unless that leaves none."""
    kept = {v for v in values if parse_number(v) not in given}
    return kept or values


def _stated_number(sentence: str, given: frozenset[float] = frozenset(), alone: bool = False) -> Extraction | None:
    """The one number a concluding sentence gives ("Therefore, the range is 250 - 31 = 219.", "There are five
    snowmen.", "So Tim needs $85."), after its last "therefore" or "so" if it has one: the one it states something
    to be, else its only number but those that compare ("more than 7"); None when it gives none, several different ones, a range or an
    expression, supposes or refuses, or gives a change without its sign ("a decrease of 1.00")."""
    if HYPOTHETICAL.search(sentence) or NO_NUMBER.search(sentence) or REFUSAL.search(sentence) or RANGE_IN.search(sentence):
        return None
    if _several_values(sentence):
        return None  # "there are 0 small cyan cubes and 0 large yellow rubber cubes left": two counts, no total
    connective = list(CONNECTIVE.finditer(sentence))
    after = sentence[connective[-1].end() :] if connective else sentence  # "Since there are 6 racks ..., so 3 ..."
    if (values := _answers(after)) is None:
        return None
    if len(values) == 1 and parse_number(next(iter(values))) in given and GIVEN_ONLY.search(after):
        return None  # "Calculating this will give the field at r=2.00 R_2.": the question's value, no result
    if not values and (connective or alone):  # "So Tim needs $85."; a one-sentence answer "Dan made $125,500 in sales."
        said = [m for m in NUMBER.finditer(after) if not COMPARED_BEFORE.search(after[: m.start()])]
        own = [m for m in said if parse_number(m.group()) not in given]
        if not connective and len(said) - len(own) == 1 and own:  # "The function value first reaches 2 at 1." (2 is the
            said = own  # question's); not "The model has 2 groups of 4 dots, for a total of 8 dots." (2 and 4 are)
        values = _given({m.group().replace(",", "") for m in said}, given)
        if not connective and (len(said) != 1 or parse_number(said[0].group()) in given):
            return None  # "The model has 2 groups of 4 dots, for a total of 8 dots.": which one answers?
        if any(EXPRESSION_AFTER.match(after[m.start() :]) or _term_of_expression(after, m) for m in said):
            return None  # "1.33 × T", "Total objects - 15": an expression, not its value
        if any(SIGN_WORDS.search(after[: m.start()]) for m in NUMBER.finditer(after)) or any(
                RANGE_AFTER.match(after, m.end()) for m in NUMBER.finditer(after)):
            return None
    return Extraction(values.pop(), "numeric", "conclusion") if len(values) == 1 else None


RUNAWAY_DIGITS = 20  # a number of more digits is generation running away ("0.000000..."), not an answer


YEAR_ASKED = re.compile(r"(?i)\b(?:which|what)\s+year\b")
YEAR = re.compile(r"(?<![\d.,$])(?:1[6-9]\d\d|20\d\d)(?![\d%]|[.,]\d)")  # "in 2013", not "$2013" or "2013.5"
PROSE_RULES = frozenset({"conclusion", "stated_number", "only_number"})  # not "Therefore, the answer is 6.": said so


def extract_number(response: str, question: str | None = None) -> Extraction:
    """The number a response answers (`_read_number`); a number of more than RUNAWAY_DIGITS digits is a generation
    that ran away ("The answer is 0.0000000000..."), truncated rather than an answer. Where the question asks which
    year, a number read from prose that is no year is the value of the year the response names: its last sentence's
    one year is the answer ("In 2012, the share ... was 88%." is 2012), and without one year there none is read."""
    read = _read_number(response, question)
    if not read.found:
        return read
    if sum(c.isdigit() for c in read.prediction) > RUNAWAY_DIGITS:
        return abstain(read.rule, "truncated")
    prepared = prepare(response)
    if read.rule in PROSE_RULES and _cut_in_a_loop(prepared):
        return abstain("unfinished", "truncated")  # a conclusion read from the loop itself, not an answer stated before it
    if read.rule in PROSE_RULES and YEAR_ASKED.search(question or "") and not YEAR.fullmatch(read.prediction.lstrip("+")):
        years = set(YEAR.findall(_conclusion(_first_answer(prepared))))
        read = Extraction(years.pop(), "numeric", read.rule) if len(years) == 1 else abstain("number", "no_answer")
    answered = _first_answer(prepared.replace("\u2212", "-"))
    if read.found and (opening := _opening_answer(answered, response)) is not None and (
            parse_number(opening) != parse_number(read.prediction) or _concludes_otherwise(answered, opening)):
        return abstain(read.rule, "self_contradiction")
    return read


def _concludes_otherwise(text: str, opening: str) -> bool:
    """Whether the last sentence of a prepared text concludes ("Therefore, ...", "So ...") one other number than the
    opening answer: "The answer is 1.\n\n... Therefore, the median of the numbers is 3." (the opening answer is what is
    read there)."""
    conclusion = _conclusion(text)
    concluded = _answers(conclusion) if CONNECTIVE.match(conclusion.strip()) else None
    return bool(concluded) and len(concluded) == 1 and parse_number(next(iter(concluded))) != parse_number(opening)


def _opening_answer(text: str, response: str) -> str | None:
    """The number the first line of a prepared text, with more lines below it, states as its answer ("The answer to
    the question is 0.", "The value of x is **1**.", "I understand. The missing item in the image is **14**." -- the
    bold read in the raw response), where no revision word ("actually", "wait", ...) takes it back: what the working
    below must conclude. A first line that states another number too is no such answer."""
    if "\n" not in text:
        return None
    first = text.split("\n", 1)[0]
    stated = [m for m in STATED_NUMBER.finditer(first) if not m.group("verb").startswith("=")]
    if len(stated) != 1 or (values := _answers(first)) is None or len(values) != 1 or REVISION.search(text):
        return None
    value = values.pop()
    bold = BOLD_NUMBER.search(response.lstrip().split("\n", 1)[0])
    if "answer" in first[: stated[0].start()].lower() or (bold is not None and parse_number(bold.group(1)) == parse_number(value)):
        return value
    return None


def _closing_results(text: str) -> int:
    """How many different values the lines that close the response give, one "name = value" each, below a line that
    concludes by announcing them (a "therefore", "final", "answer" or "result" line ending with ":"): "Therefore, the
    components are:\n\na_x = 9.0 cm/s^2\na_y = 5.0 cm/s^2" gives two."""
    lines = [line for line in text.split("\n") if line.strip()]
    results = []
    while lines and (m := RESULT_LINE.fullmatch(lines[-1])):
        results.append((m.group(1).strip().lower(), parse_number(m.group(2))))
        lines.pop()
    if not lines or not lines[-1].rstrip().endswith(":") or not CONCLUDING_HEADER.search(lines[-1]):
        return 0  # not "Let's go through this step-by-step:", "The other bars have the following values:"
    return len({value for _, value in results}) if len({name for name, _ in results}) == len(results) else 0


def _echoes_question(text: str, number: re.Match, question: str | None) -> bool:
    """Whether a number stands between the same two words in the question: "The model has ___ dots divided into 2 equal
    groups." copies the question's "divided into 2 equal groups", so its 2 is the question's, not an answer."""
    if not question or number.group() not in (in_context := _numbers_in_context(question)).numbers:
        return False
    before, after = WORD_BEFORE.search(text, 0, number.start()), WORD_AFTER.match(text, number.end())
    return before is not None and after is not None and (
        before.group(1).lower(), number.group(), after.group(1).lower()) in in_context.triples


class _InContext(NamedTuple):
    numbers: frozenset[str]  # the question's numbers as written
    triples: frozenset[tuple[str, str, str]]  # each with the word before and the word after it, lowercase


@functools.lru_cache(maxsize=1024)  # a question is asked of every model's response in turn
def _numbers_in_context(question: str) -> _InContext:
    """The question's numbers, and each with its neighbouring words: ("into", "2", "equal")."""
    triples = set()
    for m in NUMBER.finditer(question):
        before, after = WORD_BEFORE.search(question, 0, m.start()), WORD_AFTER.match(question, m.end())
        if before is not None and after is not None:
            triples.add((before.group(1).lower(), m.group(), after.group(1).lower()))
    return _InContext(frozenset(NUMBER.findall(question)), frozenset(triples))


def _without_echoes(segment: str, question: str | None) -> str:
    """An answer segment without the numbers it copies from the question, words around them and all ("Here is the
    answer:\n\nThe model has 9 dots divided into 3 equal groups. There are 3 dots in each group." answers 3)."""
    copied = [m for m in NUMBER.finditer(segment) if _echoes_question(segment, m, question)]
    for m in reversed(copied):
        segment = segment[: m.start()] + "___" + segment[m.end() :]
    return segment


def _read_number(response: str, question: str | None = None) -> Extraction:
    """A number: from the last 'Answer:' line or \\boxed{}, else the whole response if it is one number (units
    allowed), else a last line that is only a number, a closing calculation, a "final value" or 'answer is/='
    statement, a concluding sentence that states one number, else the only distinct number in a response that
    neither refuses nor supposes. What a response adds after its answer as new questions of its own is not read.
    `question`, where given, names the numbers the question gives: where a conclusion states several, those are not
    the answer. A ratio stated as such ("The ratio of male to female is 3:2") is its value, 1.5; a conclusion that
    no number answers ("the limit does not exist") gives none."""
    given = frozenset(v for n in NUMBER.findall(question or "") if (v := parse_number(n)) is not None)
    response = RATIO.sub(lambda m: m.group(1) + repr(float(m.group(2)) / float(m.group(3))) if float(m.group(3)) else m.group(0), response)
    response = SCIENTIFIC.sub(lambda m: repr(float(f"{m.group(1)}e{m.group(2).replace('−', '-')}")), response)
    if "^" in response:
        response = POWER_OF_TEN.sub(lambda m: repr(10.0 ** int(m.group(1).replace("−", "-"))), response)
    response = re.sub(r"([-\u2212])\s*\$(?=\s*\d)", r"\1", response)  # "-$2" is -2 once "$" is blanked
    response = re.sub(r"\\(?:cdot|times)\b", " × ", response)  # a product, which prepare would blank
    text = _first_answer(prepare(response).replace("\u2212", "-"))  # the typographic minus sign
    if not text:
        return abstain("empty", "empty")
    if _cut_in_formula(response) and text == prepare(response):
        return abstain("unfinished", "truncated")
    boxed = re.findall(f"{BOX_OPEN}([^{BOX_CLOSE}]*){BOX_CLOSE}", text)
    for segment, rule in ((final_answer_segment(text), "answer_line"), (boxed[-1] if boxed else None, "answer_statement")):
        if segment is not None and (found := _number_in(segment, rule)) is not None:
            return found
    whole = re.fullmatch(r"[^\w+\-.]*(" + NUMBER.pattern + r")\s*[%°\w]{0,12}\W*", text)
    if whole:
        return Extraction(whole.group(1).replace(",", ""), "numeric", "whole")
    if re.fullmatch(r"\W*" + FRACTION.pattern + r"\W*", text):
        return _number_in(text, "whole")
    if (worded := re.fullmatch(r"\W*(\w+)\W*", text)) and worded.group(1).lower() in NUMBER_WORDS:
        return Extraction(NUMBER_WORDS[worded.group(1).lower()], "numeric", "whole")  # "six", "Two."
    last_line = text.rsplit("\n", 1)[-1]
    if "\n" in text and (line := re.fullmatch(r"[^\w+\-.]*(" + NUMBER.pattern + r")\s*[%°\w]{0,12}\W*", last_line)):
        return Extraction(line.group(1).replace(",", ""), "numeric", "number_line")
    calculation = re.search(r"=\s*(" + NUMBER.pattern + r")\s*[%°a-zA-Z²³]{0,12}\W*$", text)
    steps = text.split("=")[1:-1]  # what stands between the signs of "perimeter = 4 × 7 = 28"
    if calculation and not any(re.search(r"[,;\n]", step) for step in steps) and not HYPOTHETICAL.search(_conclusion(text)):
        return Extraction(calculation.group(1).replace(",", ""), "numeric", "calculation")
    final_values = [m.group(1) for m in sorted([*FINAL_VALUE.finditer(text), *FINAL_LINE.finditer(text)], key=lambda m: m.start())]
    if final_values and ("=" in final_values[-1] or not (EXPRESSION_AFTER.match(final_values[-1])
                                                        or WORDED_EXPRESSION.search(final_values[-1]))) and (
            found := _number_in(final_values[-1], "final_value")) is not None:  # not "is 52 + (-78), which ..."
        return found
    statements = _answer_statements(text)
    if statements and not WORDED_EXPRESSION.search(statements[-1]) and (
            found := _number_in(_without_echoes(statements[-1], question), "answer_statement")) is not None:
        return found
    conclusion = _conclusion(text)
    if NO_VALUE.search(conclusion):
        return abstain("number", "no_answer")  # "Therefore, the limit does not exist as x approaches -1."
    if _closing_results(text) > 1:
        return abstain("number", "several_answers")  # "... the components are:\n\na_x = 9.0 cm/s^2\na_y = 5.0 cm/s^2"
    if (found := _stated_number(_without_echoes(conclusion, question), given, alone=conclusion.strip() == text.strip())) is not None:
        return found
    numbers = {n.replace(",", "") for n in NUMBER.findall(text)}
    refuses = declines(text)
    unbound = _unbound_numbers(text)
    if not refuses and not HYPOTHETICAL.search(text):
        stated = _stated_numbers(text)
        if stated is not None and len(stated) == 1 and parse_number(next(iter(stated))) not in given:
            return Extraction(stated.pop(), "numeric", "stated_number")  # not "... the field at r=2.00 R_2", a given
        uncompared = [m for m in NUMBER.finditer(text)
                      if not COMPARED_BEFORE.search(text[: m.start()]) and not COMPARED_AFTER.match(text, m.end())]
        if ({m.group().replace(",", "") for m in uncompared} == unbound and len(unbound) == 1  # "greater than 0.4% in 3 years"
                and not EXPRESSION_AFTER.match(text[uncompared[-1].start() :])  # not "1.33 × T"
                and not any(_term_of_expression(text, m) for m in uncompared)  # not "Total objects - 15"
                and not any(RANGE_AFTER.match(text, m.end()) for m in uncompared)  # not "0 to infinity"
                and not _echoes_question(text, uncompared[-1], question)):  # not "divided into 2 equal groups" copied
            return Extraction(unbound.pop(), "numeric", "only_number")
    if numbers and not refuses:
        return abstain("number", "hedge" if NUMBER_HEDGE.search(text) and len(numbers) == 2 else "no_answer")
    return abstain("number", "refusal" if refuses else "no_answer")


LONE_LETTER = re.compile(r"\W*(?:(?i:option|choice)\s*)?\(?([A-Z])\)?[\W]*")


def extract_answer_part(response: str) -> Extraction:
    """For open answers: the last 'Answer:' line, else \\boxed{}, else the last 'answer is' statement, else the
    whole text. A lone option letter ("A", "(B)") answers a question that has no options (out_of_range);
    "N/A" or a refusal without any number is a refusal."""
    text = prepare(response)
    if not text:
        return abstain("empty", "empty")
    boxed = re.findall(f"{BOX_OPEN}([^{BOX_CLOSE}]*){BOX_CLOSE}", text)
    statements = _answer_statements(text)
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


BRACKETED_NUMBERS = re.compile(rf"\[\s*(?:{NUMBER.pattern})(?:\s*,\s*(?:{NUMBER.pattern}))*\s*\]")
ONLY_NUMBERS = re.compile(rf"[^\w+\-.]*(?:{NUMBER.pattern})(?:\s*[%°]?\s*(?:,|;|and|&)\s*(?:{NUMBER.pattern}))*\s*[%°]?[\s.!]*")


def extract_list(response: str) -> Extraction:
    """For answers that are a list of numbers: in the answer part (`extract_answer_part`), its last bracketed list ("The
    final list is [1, 2, 3, 4]."), else the part if it is only numbers ("2014, 2016"). A part that writes numbers in
    prose ("The peak was in 2014, with 8.1 units for women and 10.8 for men.") states no list these rules can tell
    from its other numbers (no_answer), and one without numbers answers none (refusal or no_answer)."""
    part = extract_answer_part(response)
    if not part.found:
        return part
    segment = part.prediction
    if listed := BRACKETED_NUMBERS.findall(segment):
        if listed[-1] != segment.strip(" .") and (declines(segment) or HYPOTHETICAL.search(_sentence_with(segment, listed[-1]))):
            return abstain("bracketed_list", "refusal" if declines(segment) else "no_answer")  # "For example, if ..."
        return Extraction(listed[-1], "exact", part.rule if listed[-1] == segment.strip(" .") else "bracketed_list")
    if ONLY_NUMBERS.fullmatch(segment):
        return part
    if NUMBER.search(segment):
        return abstain(part.rule, "no_answer")
    return abstain(part.rule, "refusal" if REFUSAL.search(segment) or UNCERTAIN.search(segment) else "no_answer")

