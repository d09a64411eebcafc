"""Multiple choice: one response read by every stage (`_Reader`), and `extract_choice`."""

from __future__ import annotations

import re

from .admission import ANSWER_STATEMENT_RULES, Extraction, _committed, abstain
from .guards import Guards
from .locate import Locating, _settle
from .normalise import prepare, without_invented_questions, without_option_echo
from .open_answers import declines, extract_number, extract_yes_no
from .options import OptionReading
from .readings import Token
from .vocabulary import (
    BOTH_OR_EITHER,
    BRACKET_LIST,
    BRACKETED_LETTER,
    FUNCTION_WORDS,
    LABELLED,
    LINE,
    NUMBER,
    ROMAN_NUMERALS,
    UNFINISHED,
    _discriminating_words,
    _named_letters,
    _words,
    option_value,
    parse_number,
)

LABELLED_LETTER = re.compile(r"(?<![\w'])[A-Z][ \t]*:[ \t]*\S")  # "The solution is B: 5"


class _Reader(Locating, Guards, OptionReading):
    """One response to one multiple-choice question, with the spans a letter must not be read from."""

    def __init__(self, text: str, options: list[str], letters: list[str]):
        """`options`: the option texts as `prepare` leaves them."""
        self.text = text
        self.letters = letters
        self.options = dict(zip(letters, options))
        self.valid = set(letters)
        self.option_words = {}
        for letter, option in zip(letters, options):
            words = [w for w, _, _ in _words(option)]
            if words and not (len(words) == 1 and len(words[0]) == 1 and words[0].isalpha()) and not set(words) <= FUNCTION_WORDS:
                self.option_words[letter] = words  # a one-letter option text is read as a letter; "the" cannot be recognised
        # where options differ only in case ("Ee", "EE", "ee"), case tells them apart: "(C) EE" is (D)'s text, not (C)'s
        lowered = [tuple(w for w, _, _ in _words(option)) for option in options]
        cased = any(low and lowered.count(low) > 1 for low in lowered)  # "Ii" beside "ii": "Aa" is not "aa" either
        self.cased_options = {letter: [option[s:e] for _, s, e in _words(option)]
                              for letter, option, low in zip(letters, options, lowered) if low and cased}
        self.discriminating = _discriminating_words(dict(zip(letters, options)))
        # the letters an option's text names ("Option B in the image", "Point C"): a letter written after another
        # option's letter contradicts it ("(A) Container A" where (A) is "Option B in the image")
        self.option_labels = {letter: _named_letters(option) for letter, option in zip(letters, options)}
        self.option_numbers = {letter: set(NUMBER.findall(option)) for letter, option in zip(letters, options)}
        # where every option is a value ("26.0", "45°"), each one's: a stated number can name an option by its value
        values = {letter: option_value(option) for letter, option in zip(letters, options)}
        self.option_values = values if None not in values.values() else {}
        # letters the options' texts give to other options ("(C) Option A in the image", "(A) Point C"): a letter
        # written alone may then mean either, and what the response says around it decides
        self.label_holders = {named: {o for o, labels in self.option_labels.items() if named in labels and o != named}
                              for named in letters}
        self.words = _words(text)
        self.word_starts = [start for _, start, _ in self.words]
        self.roman = bool(ROMAN_NUMERALS.search(text) or any(re.search(r"\bI\b", o) and ROMAN_NUMERALS.search(o) for o in options))
        self.labels = [m.span() for m in LABELLED.finditer(text)]
        self._tokens: list[Token] | None = None  # every letter of the text that may be an option letter, in order
        self._lists_by_line: dict[int, set[str]] = {}
        self.lists = [m.span() for m in BRACKET_LIST.finditer(text)]
        self.lines = [m.span() for m in LINE.finditer(text)]
        self.leads = {i: tok for i, (s, e) in enumerate(self.lines)
                      if (tok := self.token_at(BOTH_OR_EITHER.match(text, s, e).end(), e)) is not None}


# What a response without a committed letter may still answer by an option's content: the readings of the conclusion
# (extraction.locate's without_commitment), not a stated letter or a guard's.
CONCLUSION_RULES = frozenset({"mention", "conclusion_text", "closing_text", "capital", "no_option"})


def _by_content(response: str, options: list[str], letters: list[str]) -> Extraction | None:
    """Where the options are Yes and No, the yes or no the response opens with ("No, the function is not convex.");
    where every option is a number, the option whose value is the number the response gives ("The perimeter of
    △OAB is 17."), in a response that writes no bracketed letter and that number nowhere else: the letter of that
    option (rules yes_no_option, value_option); None otherwise."""
    lowered = [option.strip().lower() for option in options]
    if sorted(lowered) == ["no", "yes"]:
        said = extract_yes_no(response)
        if said.found and said.rule == "first_word":
            return Extraction(letters[lowered.index(said.prediction.lower())], "option_text", "yes_no_option")
        return None
    values = [option_value(option) for option in options]
    text = prepare(response)
    if None in values or BRACKETED_LETTER.search(text) or LABELLED_LETTER.search(text):
        return None  # a response that names letters ("(B)", "B: 5") is read by its letters
    if declines(text):
        return None  # "The given statement is not sufficient to determine ... PS = 90": no value chosen
    number = extract_number(response)
    read = parse_number(number.prediction) if number.found else None
    if read is None or sum(parse_number(n) == read for n in NUMBER.findall(text)) > 1:  # "Country 4 ... $4": which?
        return None
    matching = [letter for letter, value in zip(letters, values) if value == read]
    return Extraction(matching[0], "option_text", "value_option") if len(matching) == 1 else None


def extract_choice(response: str, options: list[str], letters: list[str] | None = None) -> Extraction:
    """The option letter a free-text response to a multiple-choice question chooses (see the package docstring)."""
    letters = letters or [chr(ord("A") + i) for i in range(len(options))]
    read = _extract_choice(response, options, letters)
    if not read.found and read.rule in CONCLUSION_RULES and (by_content := _by_content(response, options, letters)):
        return _committed(by_content, cut=False)
    return read


def _extract_choice(response: str, options: list[str], letters: list[str]) -> Extraction:
    text = prepare(response)
    if not text:
        return abstain("empty", "empty")
    shown = [prepare(str(option)) for option in options]
    return _read(without_option_echo(without_invented_questions(text, shown, letters), shown, letters), shown, letters)


def _read(text: str, shown: list[str], letters: list[str]) -> Extraction:
    """A prepared response read; where it lists the options (or analyses each) and says no more than that list, the
    text after the list is read as its conclusion ("(A) ...: doesn't match.\n...\n(E) ...\nThe best choice would
    be:\n(C) subtropical monsoon climate.")."""
    reader = _Reader(text, shown, letters)
    commitments = reader.statements() + reader.line_commitments()
    cut = len(text.split()) >= 6 and bool(UNFINISHED.search(text))
    if not commitments:
        read = _committed(reader.without_commitment(), cut)
        if read.rule == "listing" and (after := reader.after_list()) is not None:
            concluded = _read(text[after:].strip(), shown, letters)
            if concluded.found or concluded.reason == "inconclusive":
                return concluded
        return read
    final = max(commitments, key=lambda c: (c.start, c.priority))
    # Earlier readings that choose nothing do not contradict the final one: letters that are no option, read by a rule
    # that is no answer statement ("P, Q, and R lie on the same line", "choose M and N so that"), and a letter given a
    # value where no option holds one ("the correct answer is (A) 40°" before "[Answer]\n(B) False" of True / False /
    # Not sure: a question of the image's, not the prompt's options).
    commitments = [c for c in commitments if c is final or (
        (c.rule in ANSWER_STATEMENT_RULES or not c.reading.letters or set(c.reading.letters) & reader.valid)
        and not reader.foreign_value(c))]
    settled = _settle(text, commitments, lambda reading: "option_text" if reading.by_text else "letter")
    if settled.found and settled.rule in ("first_line", "leading") and reader.final_sentence_names() not in (None, settled.prediction):
        return abstain(settled.rule, "self_contradiction")  # "(B)\n\n... The phenotype is constricted pods." (A's text)
    final_start = final.start
    if settled.found and not final.reading.by_text and reader.result_before(settled.prediction, final_start) is not None:
        return abstain(settled.rule, "self_contradiction")  # "... the degree of angle C is 40°. So the answer is (A)."
    if settled.found and not final.reading.by_text and reader.written_with_other_text(settled.prediction):
        return abstain(settled.rule, "self_contradiction")  # "The answer is (B). ... Therefore, ∠EOD = (B) 40°." (C)'s text
    stated = settled.rule in ANSWER_STATEMENT_RULES
    if settled.found and reader.explained_otherwise(settled.prediction, final_start, stated):  # the judge reads it
        return Extraction(None, "none", "explained_otherwise", "inconclusive", candidate=settled.prediction)
    if settled.found and reader.image_lettering_unresolved(settled.prediction, final_start, stated):  # the judge sees the image
        return Extraction(None, "none", "image_lettering", "inconclusive", candidate=settled.prediction)
    return _committed(settled, cut, settled.found and reader.stated_in_full(settled.prediction, final_start))
