"""Match options: the letters a response writes, where it writes an option's text, and what the phrase at a place
says the answer is (`OptionReading.read_phrase`)."""

from __future__ import annotations

import bisect
import re

from .readings import TOKEN_FORMS, Reading, Token
from .vocabulary import (
    A_SUBJECT_VERBS,
    ARTICLE_OR_PRONOUN,
    ARTICLES,
    BRACKET_LIST,
    CLAUSE_BREAK,
    CUT_LETTER,
    DELIMITER,
    EITHER_BOTH,
    EQUATION,
    EVALUATIVE,
    FOLLOWING_WORD,
    HEDGE_AFTER_LETTER,
    LABEL_ANSWER,
    LETTER,
    LETTER_JOIN,
    LIST_GAP,
    LOWER_CLOSED,
    LOWER_LEAD,
    LOWER_LETTER,
    NEGATIVE_AFTER,
    NEGATIVE_BEFORE,
    NONE_FIT,
    NONE_LIKE,
    NOT_APPLICABLE,
    NULL_ANSWER,
    NUMBER,
    OR_WORD,
    PLURAL_RATED,
    PLURAL_VERB,
    PREDICATE,
    SENTENCE_END,
    SPACES,
    SUBJECT_VERB,
    THIRD_PERSON_VERBS,
    UNIT_BEFORE,
    VALUE_END,
    _without_article,
    parse_number,
)


class OptionReading:
    """Letters and option texts of one response (the state is set up by choice._Reader)."""


    # ------------------------------------------------------------ letters

    def is_word(self, letter: str, end: int) -> bool:
        """A capital that is the article "A", the pronoun "I" or a Roman numeral, not an option letter."""
        if letter == "I" and self.roman:
            return True
        if letter not in ARTICLE_OR_PRONOUN:
            return False
        following = FOLLOWING_WORD.match(self.text, end)
        if following is None:
            return False
        verbs = THIRD_PERSON_VERBS if letter == "I" else A_SUBJECT_VERBS
        word = following.group(1)
        if word == "better":  # "A better describes ..." (a letter) / "A better view" (an article)
            return not re.match(r"\s+better\s+(?:describes|matches|fits|captures|represents|depicts)\b", self.text[end:])
        return word not in verbs

    def _token(self, m: re.Match, stated: bool = False) -> Token | None:
        """The letter of a LETTER match, or None where it is a word or the subject of a sentence about it; right after
        "the answer is", "Answer:", "I'd say" ... (`stated`) such a letter is kept, marked `described`: readers differ
        on "Answer: Option A is formal." (A, or a description?), and the judge reads it with the question."""
        form = next(name for name, value in m.groupdict().items() if value)
        letter = m.group(form).upper()
        end = m.end()
        if form == "bare" and (self.is_word(letter, end) or EQUATION.match(self.text, end)):
            return None
        described = form in ("bare", "named") and bool(SUBJECT_VERB.match(self.text, end)) and not EVALUATIVE.match(self.text, end) \
            and not PREDICATE.match(self.text, end) and self.option_at(m.start(), len(self.text), only=letter) is None
        if described and not stated:
            return None  # "Option A is the common reading", "A is farther away": about the option, not choosing it
        form = TOKEN_FORMS[form]
        if form == "bare" and self.text.startswith(")", end):  # "B)"
            end, form = end + 1, "closed"
        return Token(letter, m.start(), end, form, described)

    def token_at(self, pos: int, end: int, stated: bool = False) -> Token | None:
        """The letter that the text at pos (after spaces) begins with."""
        pos = len(self.text[:end]) - len(self.text[pos:end].lstrip()) if pos < end else pos
        m = LETTER.match(self.text, pos, end)
        if m is None and (pos == 0 or self.text[pos - 1] == "\n") and (lower := LOWER_LEAD.match(self.text, pos, end)):
            return Token(lower.group(1).upper(), pos, pos + 1 + (lower.group(2) == ")"), "closed")  # "b. Paris", "b) Paris"
        return self._token(m, stated) if m else None

    def first_token(self, letter: str, start: int, end: int) -> Token | None:
        """The first token of the letter in a span."""
        return next((token for token in self.tokens(start, end) if token.letter == letter), None)

    def value_follows(self, token: Token, end: int) -> bool:
        """Whether a number opens the clause after the token ("(A) 2100", "(B) 40°")."""
        return bool(NUMBER.match(self.text, *self.after_token(token, end)))

    def tokens(self, start: int, end: int) -> list[Token]:
        """The letters in a span that may be option letters: not labels, not inside a bracketed list."""
        if self._tokens is None:
            excluded = bytearray(len(self.text))
            for s, e in self.labels + self.lists:
                excluded[s:e] = b"\x01" * (e - s)
            self._tokens = []
            for m in LETTER.finditer(self.text):
                token = self._token(m)
                if token is None or all(excluded[token.start : token.end - (token.form == "closed")]):
                    continue
                if token.form == "bare" and UNIT_BEFORE.search(self.text, max(0, token.start - 2), token.start):
                    continue  # a unit: "10 A", "25 °C"
                self._tokens.append(token)
            self._token_starts = [t.start for t in self._tokens]
        found = []
        for token in self._tokens[bisect.bisect_left(self._token_starts, start) :]:
            if token.start >= end:
                break
            if token.end <= end:
                found.append(token)
        return found

    def rejected_before(self, start: int) -> bool:
        """Whether the words before a letter or option text, in its clause, reject it: "not (A)", "than the first image"."""
        return bool(NEGATIVE_BEFORE.search(CLAUSE_BREAK.split(self.text[max(0, start - 40) : start])[-1]))

    def rejected(self, start: int, end: int) -> bool:
        """Whether the words around a letter or option text reject it: also "(A) is wrong"."""
        return self.rejected_before(start) or bool(NEGATIVE_AFTER.match(self.text, end))

    # ------------------------------------------------------------ option texts

    def option_at(self, pos: int, end: int, only: str | None = None) -> tuple[str, int] | None:
        """The option whose text the text at pos begins with (the longest), and where that text ends; None when two
        options read the same there ("18" where (C) and (D) are both 18: no one option is named)."""
        i = bisect.bisect_left(self.word_starts, pos)
        if i < len(self.words) and self.text[pos : self.words[i][1]].strip(" \t\"'(:-–—"):
            return None  # something other than punctuation comes first
        best, tied = None, False
        for letter, option in self.option_words.items():
            if only is not None and letter != only:
                continue
            for start in (i, i + 1) if i < len(self.words) and self._article(i) else (i,):
                for words in {tuple(option), tuple(_without_article(option))}:
                    span = self.words[start : start + len(words)]
                    matched = len(span) == len(words) and [w for w, _, _ in span] == list(words) and span[-1][2] <= end \
                        and self.same_case(letter, span)
                    if matched and (best is None or span[-1][2] > best[1]):
                        best, tied = (letter, span[-1][2]), False
                    elif matched and span[-1][2] == best[1] and letter != best[0]:
                        tied = True
        return None if best is not None and tied else best

    def same_case(self, letter: str, span: list[tuple[str, int, int]]) -> bool:
        """Whether the words of a span that match the option's text case-blind match it as written, where case is all
        that tells the option from another."""
        cased = self.cased_options.get(letter)
        return cased is None or [self.text[s:e] for _, s, e in span] == cased[len(cased) - len(span) :]

    def _article(self, i: int) -> bool:
        """Whether word i is an article; "A" written as a letter ("(A) 0.27", "A) 0.27", "A. 0.27", "A - No") is not."""
        word, start, end = self.words[i]
        if word not in ARTICLES:
            return False
        return not (word == "a" and (self.text[start - 1 : start] == "(" or re.match(r"[ \t]*(?:[).:]|[-–—][ \t])", self.text[end : end + 3])))

    def option_occurrences(self, start: int, end: int) -> list[tuple[str, int, int]]:
        """Where option texts occur in a span, an occurrence inside another option's dropped, rejected ones dropped."""
        words = [w for w in self.words if start <= w[1] and w[2] <= end]
        found = []
        for letter, option in self.option_words.items():
            target = _without_article(option)
            for i in range(len(words) - len(target) + 1):
                if [w for w, _, _ in words[i : i + len(target)]] == target and self.same_case(letter, words[i : i + len(target)]):
                    found.append((letter, words[i][1], words[i + len(target) - 1][2]))
        found += self._elided(words, found)
        kept = [(letter, s, e) for letter, s, e in found
                if not any(other != letter and os <= s and e <= oe and (os, oe) != (s, e) for other, os, oe in found)]
        return [(letter, s, e) for letter, s, e in kept
                if not self.rejected(s, e) and not any(ls < e and s < le for ls, le in self.lists)]

    def _elided(self, words: list[tuple[str, int, int]], found: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
        """Options named with a shared ending left out: "the second and the third image" names "the second image"."""
        starts = {start: i for i, (_, start, _) in enumerate(words)}
        elided = []
        for letter, start, end in found:
            named = _without_article(self.option_words[letter])
            i = starts[start]
            for other, option in self.option_words.items():
                other_words = _without_article(option)
                shared = 0
                while shared < min(len(named), len(other_words)) - 1 and named[-1 - shared] == other_words[-1 - shared]:
                    shared += 1
                head = other_words[: len(other_words) - shared]
                if other == letter or not shared or named[: len(named) - shared] == head:
                    continue
                j = i - 1 if i > 0 and words[i - 1][0] in ARTICLES else i
                if j > 0 and words[j - 1][0] in ("and", "or", "nor") and [w for w, _, _ in words[j - 1 - len(head) : j - 1]] == head:
                    elided.append((other, words[j - 1 - len(head)][1], words[j - 2][2]))
        return elided

    # ------------------------------------------------------------ reading what a commitment says

    def _own_text_end(self, token: Token, end: int) -> int | None:
        """Where the token's own option text ends, when it follows ("B. Paris") or begins with it ("A is closer")."""
        starting = self.option_at(token.start, end, only=token.letter)
        if starting is not None:
            return starting[1]
        after = DELIMITER.match(self.text, token.end, end).end()
        following = self.option_at(after, end, only=token.letter)
        return following[1] if following is not None else None

    def sequence(self, pos: int, end: int, stated: bool = False) -> tuple[list[Token], list[str], list[bool], int]:
        """A letter or a list of letters at pos: "B", "A, C", "(A) or (B)", "(A) A is closer (B) B is closer"."""
        tokens, joins, with_text = [], [], []
        token = self.token_at(pos, end, stated)
        while token is not None:
            tokens.append(token)
            text_end = self._own_text_end(token, end)
            with_text.append(text_end is not None)
            pos = text_end if text_end is not None else token.end
            join = LETTER_JOIN.match(self.text, pos, end)  # a later letter's verb is the whole list's: "A and D could be"
            if join and (token := self.token_at(join.end(), end, stated=True)) is not None:
                joins.append(join.group().strip().lower())
                continue
            spaced = SPACES.match(self.text, pos, end)
            if spaced and tokens[-1].form == "bare" and not with_text[-1] and (token := self.token_at(spaced.end(), end)) \
                    and token.form == "bare" and not FOLLOWING_WORD.match(self.text, token.end):
                joins.append(" ")
                continue
            gap = LIST_GAP.match(self.text, pos, end).end()
            token = self.token_at(gap, end) if with_text[-1] else None
            if token is not None and token.strong:
                joins.append("")
                continue
            token = None
        return tokens, joins, with_text, pos

    def clause_end(self, pos: int, end: int) -> int:
        m = SENTENCE_END.search(self.text, pos, end)
        return m.start() if m else end

    def line_end(self, pos: int) -> int:
        """Where the line holding pos ends (the text's end on the last line)."""
        return self.text.find("\n", pos) % (len(self.text) + 1)

    def after_token(self, token: Token, end: int) -> tuple[int, int]:
        """The clause that follows a letter on its line: (its start past the delimiter, its end)."""
        after = DELIMITER.match(self.text, token.end, end).end()
        return after, self.clause_end(after, min(end, self.line_end(token.end)))

    def read_phrase(self, start: int, end: int, stated: bool = False) -> tuple[Reading | None, int]:
        """What the text at start says the answer is, and where that reading ends; `stated`: it follows an
        answer statement's trigger ("the answer is ..."), so a letter there is chosen whatever verb follows."""
        pos = start + len(self.text[start:end]) - len(self.text[start:end].lstrip(" \t:"))
        option = self.option_at(pos, end)
        lead = EITHER_BOTH.match(self.text, pos, end)
        if lead:
            pos = lead.end()
        if NOT_APPLICABLE.match(self.text, pos, end):  # not the letters N and A
            return Reading("null", reason="refusal"), pos + 3
        bracketed = BRACKET_LIST.match(self.text, pos, end)
        if bracketed:  # "Answer: (A, B) 7", "(A-F)": several letters in one bracket
            letters = tuple(dict.fromkeys(re.findall(r"[A-Z]", bracketed.group())))
            if OR_WORD.search(bracketed.group()) or "/" in bracketed.group():
                return Reading("hedge", letters), bracketed.end()
            return Reading("listed" if set(letters) >= self.valid else "several", letters), bracketed.end()
        tokens, joins, with_text, after = self.sequence(pos, end, stated)
        option = option or self.option_at(pos, end)
        if option is not None and option[1] > after:  # an option text naming letters: "Both A and B are possible."
            tokens = []
        if tokens:
            if NEGATIVE_AFTER.match(self.text, after, end):
                return None, after
            letters = tuple(dict.fromkeys(t.letter for t in tokens))
            if len(letters) > 1 and not stated and PLURAL_VERB.match(self.text, after) and not PLURAL_RATED.match(self.text, after):
                return None, after  # "Options A and B both show a landscape": about them, not choosing them
            if len(letters) > 1:
                if (lead and lead.group(1).lower() == "either") or any("or" in re.split(r"[\s/]", j) or j == "/" for j in joins):
                    return Reading("hedge", letters), after
                if set(letters) == self.valid and (len(letters) > 2 or all(with_text)):
                    return Reading("listed", letters), after
                return Reading("several", letters), after
            reading = self._one_letter(tokens[0], with_text[0], after, end)
            if tokens[0].described and reading.kind == "one":  # "Answer: Option A is formal."
                reading = Reading("one", reading.letters, by_text=reading.by_text, withheld_as="letter_as_subject")
            return reading, after
        if option is not None:
            letter, after = option
            if NEGATIVE_AFTER.match(self.text, after, end):
                return None, after
            if SUBJECT_VERB.match(self.text, after, end) and not EVALUATIVE.match(self.text, after, end) \
                    and not PREDICATE.match(self.text, after, end):
                return None, after  # "Answer: Solution A has a concentration of 35": about the option, not choosing it
            rest_end = self.clause_end(after, end)
            others = {o for o, _, _ in self.option_occurrences(after, rest_end)} - {letter}
            if others and OR_WORD.search(self.text, after, rest_end):
                return Reading("hedge", tuple(sorted({letter, *others}))), after
            if (longer := self.continued_as_longer(letter, after, end)) is not None:
                return Reading("conflict", (letter, longer)), after
            return Reading("one", (letter,), by_text=True), after
        label = LABEL_ANSWER.match(self.text, pos, end)
        if label:  # "The answer is point B": the thing labelled B
            return self._checked(label.group(1)), label.end()
        if stated and (valued := self._option_value_at(pos, end)) is not None:
            return Reading("one", (valued[0],), by_text=True), valued[1]  # "x = \boxed{26} cm" where (D) is "26.0"
        null = NULL_ANSWER.match(self.text, pos, end)
        if null:
            return Reading("null", reason=null.lastgroup), null.end()
        closed = LOWER_CLOSED.match(self.text, pos, end)
        if closed:  # "Final answer: b) the bridge"
            token = Token(closed.group(1).upper(), pos, closed.end(), "closed")
            own_end = self._own_text_end(token, end)
            return self._one_letter(token, own_end is not None, own_end or token.end, end), own_end or token.end
        cut = CUT_LETTER.fullmatch(self.text, pos)
        if cut:  # "Answer: (B" where the generation stopped
            return self._checked(cut.group(1).upper()), len(self.text)
        lower = LOWER_LETTER.fullmatch(self.text, pos, self.clause_end(pos, end))
        if lower:
            return self._checked((lower.group(1) or lower.group(2)).upper()), end
        return None, pos

    def _option_value_at(self, pos: int, end: int) -> tuple[str, int] | None:
        """Where every option is a value ("26.0", "45°"), the one option whose value a number stated at pos equals, the
        number ending its sentence ("26 cm.", "26"), and where that number ends."""
        number = NUMBER.match(self.text, pos, end)
        if not self.option_values or number is None or not VALUE_END.match(self.text, number.end(), end):
            return None
        read = parse_number(number.group())
        same = [letter for letter, value in self.option_values.items() if read is not None and value == read]
        return (same[0], number.end()) if len(same) == 1 else None

    def _checked(self, letter: str) -> Reading:
        return Reading("one", (letter,)) if letter in self.valid else Reading("out_of_range", (letter,))

    def _one_letter(self, token: Token, with_text: bool, after: int, end: int) -> Reading:
        if token.letter not in self.valid:
            # a letter the model gave an option itself ("(C) the third image" of two options): its text decides
            named = self.option_at(DELIMITER.match(self.text, token.end, end).end(), end)
            return Reading("one", (named[0],), by_text=True) if named else Reading("out_of_range", (token.letter,))
        text_at = DELIMITER.match(self.text, token.end, end).end()
        named = self.option_at(text_at, end)  # the longest option text there
        if named is not None and named[0] != token.letter:
            own = self.option_at(text_at, end, only=token.letter)
            if not with_text or (own is not None and named[1] > own[1]):  # "B. a red square" where A is the red square;
                return Reading("conflict", (token.letter, named[0]))  # "C: 6 √2 units" where (C) is 6 and (D) 6 √2
        if (imaged := self.image_letter(token)) is not None:
            return imaged
        if (conflict := self.label_conflict(token, end, with_text)) is not None:
            return Reading("conflict", (token.letter, conflict))
        if not with_text and self.none_with_content(token, end):  # "(C) jump" where (C) is "None of the options are correct."
            return Reading("one", (token.letter,), withheld_as="none_with_answer")
        if not with_text and self.valued_image_letter(token, end):
            return Reading("one", (token.letter,))  # "(B) 336": the prompt's (B) or the image's? (image_lettering_unresolved)
        if not with_text and (conflict := self.label_ambiguity(token, end)) is not None:
            return Reading("conflict", (token.letter, conflict))
        line_end = self.line_end(after)
        if NONE_FIT.search(self.masked(after, line_end)) and not NONE_LIKE.search(self.options.get(token.letter, "")):
            # "(A) 1. The given choices do not provide this option." (not "(C) as none are correct", C saying so)
            return Reading("null", reason="none_fit")
        if others := self.other_items(token, after, line_end):  # "(A), she is studying. (B), she sleeps."
            letters = (token.letter, *sorted(others))
            return Reading("listed" if set(letters) >= self.valid else "several", letters)
        rest_end = self.clause_end(after, end)
        if HEDGE_AFTER_LETTER.search(self.text, after, rest_end):
            others = {t.letter for t in self.tokens(after, rest_end) if t.letter in self.valid}
            others |= {o for o, _, _ in self.option_occurrences(after, rest_end)}
            others.discard(token.letter)
            if others:
                return Reading("hedge", tuple(sorted({token.letter, *others})))
        return Reading("one", (token.letter,))
