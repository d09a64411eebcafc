"""Guards: what stands around a stated letter and makes it another option, a contradiction, or a letter for the
judge (`explained_otherwise`, `image_lettering`, `none_with_answer`)."""

from __future__ import annotations

import bisect
import re

from .admission import EXPLAINED_WORDS, WORKING_WORDS
from .readings import Reading, Token
from .vocabulary import (
    BRACKETED_LETTER,
    CONTENT_TOKEN,
    DELIMITER,
    IMAGE_LABEL,
    IN_THE_IMAGE,
    ITEM_BEFORE,
    LABELLED,
    LETTER,
    META_WORDS,
    NAMED_LETTER,
    NEGATION_OR_REASON,
    NEGATION_WORD,
    NO_OPTION_FITS,
    NONE_FIT,
    NONE_LIKE,
    NULL_ANSWER,
    NUMBER,
    PREDICATE,
    SENTENCE_CLOSED,
    SENTENCE_END,
    SUBJECT_VERB,
    _content_words,
    _named_letters,
    _without_article,
    _words,
    parse_number,
)

CONCLUDING = re.compile(r"\s*(?i:therefore|thus|hence|so|consequently)\b")
COUNTED = re.compile(r"(?i)(?:\b(?:there\s+(?:are|is|were|was)|(?:is|are|was|were|equals?|be))|=)\s+(?:a\s+total\s+of\s+)?"
                     r"([-+]?\d+(?:\.\d+)?)(?![\d.]*\s*[-+×*/=^])")  # "there are 3 countries", "is 12", not "= 3 × 4"
PARENTHESIS = re.compile(r"\([^()]*\)")
SUPPOSING = re.compile(r"\s*(?i:if|suppose|assuming|when)\b")
OPERATOR_AFTER = re.compile(r"[ \t]*(?:[-+×*/÷=]|\\times)")
DEFINED_AFTER = re.compile(r"[ \t]*(?::|-|–|—)[ \t]")  # "Mucronate: a leaf apex ...", "Acute - pointed ..."


def _past_own_letter(letter: str, words: list[str]) -> list[str]:
    """An option's words without its own letter or an article before them: "is closer" of (B) "B is closer" (and of
    (A) "A is closer"), so that "B is closer" is (B)'s own text, not (A)'s after the letter."""
    return words[1:] if len(words) > 1 and words[0] == letter.lower() else _without_article(words)


ONLY_ONE = re.compile(r"(?i)\bonly\s+(?:the\s+)?(?:option\s+|choice\s+)?")  # "only option (B) has", "only 180 degrees is"
ONLY_VERB = re.compile(r"(?i)[ \t]*(?:degrees?\s+|°\s*)?(?:has|have|is|are|matches|match|fits|fit|shows|satisfies|gives|meets)\b")


def _spaceless(text: str) -> str:
    return re.sub(r"\s+", "", text).rstrip(".!").lower()


def _contains(items: list, run: list) -> bool:
    """Whether a list holds a run of items in order: words of an option's text, values of an option's list."""
    return any(items[i : i + len(run)] == run for i in range(len(items) - len(run) + 1))


def _word_bag(text: str) -> tuple[str, ...]:
    """A text's words in sorted order, to compare texts that differ only in the order of their words."""
    return tuple(sorted(w for w, _, _ in _words(text)))


CALCULATION_END = re.compile(r"[ \t]*(?:[A-Za-z°%]+\.?[ \t]*)?[.!]?[\s*`]*")  # "20m.", "29 units.", "36\n```"


class Guards:
    """The checks on a letter a commitment states (mixed into choice._Reader)."""


    def none_with_content(self, token: Token, end: int) -> bool:
        """Whether the token's option says that no option fits and the clause after it gives an answer of its own
        ("(C) jump", "(D) Ardea purpurea"): none of the options, or that answer? Readers label it both ways, so the judge
        reads it. Not a reason that says none fits ("(C), as no option matches"), nor the option's own text cut short."""
        option = self.options.get(token.letter, "")
        if not NONE_LIKE.search(option):
            return False
        after, clause_end = self.after_token(token, end)
        clause = self.text[after:clause_end]
        written = " ".join(clause.lower().split())
        if written and " ".join(option.lower().split()).startswith(written):
            return False  # "Answer: (A). All of" where (A) is "All of the answer choices are wrong."
        said = _content_words(clause) - META_WORDS
        return bool(said) and not (NONE_LIKE.search(clause) or NEGATION_WORD.search(clause) or NONE_FIT.search(clause)
                                   or NULL_ANSWER.match(clause.lstrip(" \t.:-")))

    def image_letter(self, token: Token) -> Reading | None:
        """Where the options name the image's letters ("option B in the image"), "option (D) in the image" names the
        image's option D: the token's own option when its text names D, else another (a contradiction) or none."""
        if not any(self.option_labels.values()) or not IN_THE_IMAGE.match(self.text, token.end):
            return None
        holders = {o for o, labels in self.option_labels.items() if token.letter in labels}
        if token.letter in holders:
            return None
        return Reading("conflict", (token.letter, min(holders))) if holders else Reading("out_of_range", (token.letter,))

    def label_conflict(self, token: Token, end: int, with_text: bool = False) -> str | None:
        """Another letter than the token's that the token itself or the clause after it names, when the options
        name letters ("Option B in the image"): "Answer: Option C" where (A) is "Option C in the image", "(A)
        Container A" where (A) is "Option B in the image", "(C) Point C" where (C) is "Point B"."""
        own = self.option_labels.get(token.letter) or {token.letter}
        if token.form == "named" and (others := {o for o, named in self.option_labels.items() if token.letter in named} - {token.letter}):
            return min(others)  # "Option C" names (C) and the option whose text is "Option C in the image"
        after, clause_end = self.after_token(token, end)
        clause = self.text[after:clause_end]
        if with_text:  # "(C) Option A in the image (which is Object B)": a note on the option chosen, not another answer
            clause = PARENTHESIS.sub(" ", clause)
        named = _named_letters(clause) - own
        pointed = {o for o, labels in self.option_labels.items() if o != token.letter and labels & named}
        third = named - {token.letter} if any(self.option_labels.values()) else set()
        if pointed or third:  # a letter that another option's text names, or a third one where the options name letters
            return min(pointed or third)
        label = LABELLED.match(self.text, after, clause_end)
        if label and "." not in self.text[token.end : after] and (opening := (_named_letters(label.group()) & self.valid) - own - {token.letter}):
            return min(opening)  # "(C) Object A", "(A) Object D will sink": the letter, or the object? (not "(E). Point B is ...")
        stated = set(NUMBER.findall(self.text[token.end : clause_end]))  # signs kept: "(C) -2.4 km"  # "(C). The point is at -11.8 km" where (A) is -11.8 km
        valued = {o for o, numbers in self.option_numbers.items() if o != token.letter and numbers and numbers <= stated
                  and not (self.option_numbers.get(token.letter, set()) & stated)}
        if len(valued) == 1:
            return valued.pop()
        if (begins := self.other_option_start(token.letter, after, clause_end)) is not None:
            return begins
        if with_text or SUBJECT_VERB.match(self.text, token.end) or PREDICATE.match(self.text, token.end):
            return None  # its own text follows, or a predicate ("(C) is the correct answer"): not another option's content
        return self.other_content(token.letter, token.end, clause_end)

    def continued_as_longer(self, letter: str, after: int, end: int) -> str | None:
        """The longer option that begins with the option's text and whose further words the text after it goes on
        to say ("Answer: Her Excellency the Governor-General, ... or the Prime Minster, ..." where (C) is "Her Excellency
        the Governor-General, the Prime Minister, ..."): the answer is neither option's text."""
        own = self.option_words[letter]
        said = _content_words(self.text[after:end])
        for other, words in sorted(self.option_words.items()):
            if other != letter and len(words) > len(own) and words[: len(own)] == own \
                    and said & (_content_words(" ".join(words[len(own) :])) - _content_words(" ".join(own))):
                return other
        return None

    def valued_image_letter(self, token: Token, end: int) -> bool:
        """Whether the letter is another option's image letter ("option A in the image" is (C)) and a value follows it
        ("(A) 2100", "The correct answer is (B) 336."): the value of the image's option (A), or the prompt's (A)? Readers
        label the written letter 27 times of 29 on the fitted samples; the judge, who sees the image, reads it."""
        return bool(self.label_holders.get(token.letter)) and self.value_follows(token, end)

    def written_with_other_text(self, letter: str) -> bool:
        """Whether the response writes the letter anywhere with another option's whole text after it, and never with its
        own: "(B) 40°" where (C) is 40°."""
        after = [DELIMITER.match(self.text, t.end, len(self.text)).end() for t in self.tokens(0, len(self.text))
                 if t.letter == letter and t.strong]
        ends = [self.line_end(a) for a in after]
        own = any(self.option_at(a, e, only=letter) is not None for a, e in zip(after, ends))
        other = any((named := self.option_at(a, e)) is not None and named[0] != letter
                    and self.option_at(a, e, only=letter) != (letter, named[1]) for a, e in zip(after, ends))
        # the rest of the line is an option's text but for its spacing: "(C) 45.2% - 65.6%." where (B) is "45.2%-65.6%"
        written = {_spaceless(self.text[a:e]) for a, e in zip(after, ends)}
        own_text = _spaceless(self.options.get(letter, ""))
        other_texts = {_spaceless(text) for option, text in self.options.items() if option != letter} - {own_text}
        # or it is another option's words in another order: "(B) No lawyers are brokers." where (D) is "No brokers are
        # lawyers" and (B) "No lawyers are bankers"
        written_words = {_word_bag(self.text[a:e]) for a, e in zip(after, ends)} - {()}
        own_words = _word_bag(self.options.get(letter, ""))
        other_words = {_word_bag(text) for option, text in self.options.items() if option != letter} - {own_words, ()}
        return (other or bool(other_texts & written) or bool(other_words & written_words)) \
            and not (own or own_text in written or own_words in written_words)

    def foreign_value(self, commitment) -> bool:
        """Whether a commitment's one letter is written with a value ("(A) 40°") while no option's text holds a number."""
        reading = commitment.reading
        if reading.kind != "one" or reading.by_text or any(self.option_numbers.values()):
            return False
        token = self.first_token(reading.letters[0], commitment.start, self.line_end(commitment.start) + 1)
        return token is not None and self.value_follows(token, len(self.text))

    def image_lettering_unresolved(self, letter: str, start: int, stated: bool) -> bool:
        """Whether a letter of options that give the image's letters in another order is left to the judge
        (`lettering_ambiguous`, or a value after it: `valued_image_letter`). A letter the response states as its answer
        ("The correct answer is (D).") is the prompt's option, as readers label it (38 of 39 on the long-prose fitted
        samples) -- unless the response writes an option list of its own ("(A) 295 ... (D) 0 is divisible by 30"), or
        the sentence before the statement names the same letter as an image label that another option's text carries
        ("Point C is the darkest. The answer is C." where (A) is "Point C in the image"): the image's lettering."""
        valued = any(t.letter == letter and self.valued_image_letter(t, len(self.text)) for t in self.tokens(0, len(self.text)))
        if not (valued or self.lettering_ambiguous(letter)):
            return False
        if not stated:
            return True
        return self.own_lettering() or self.image_label_before(letter, start)

    def own_lettering(self) -> bool:
        """Whether the response gives two or more letters a value each ("(A) 295", "(D) 0"), values that are not those
        options' texts: a list of its own, the image's."""
        valued = {t.letter for t in self.tokens(0, len(self.text))
                  if self._own_text_end(t, self.line_end(t.end)) is None and self.value_follows(t, len(self.text))}
        return len(valued) >= 2

    def image_label_before(self, letter: str, start: int) -> bool:
        """Whether the sentence before `start`, or the one holding it, names the letter as a label ("point C",
        "container C", "option C in the image") that another option's text carries ("Point C in the image"), or that the
        letter's own option does not ("(C) option C in the image" where (C) is "option A in the image")."""
        own = self.option_labels.get(letter, set())
        if not (self.label_holders.get(letter) or own and letter not in own):
            return False  # the image's label and the prompt's letter mean the same option
        ends = [0] + [m.end() for m in SENTENCE_END.finditer(self.text, 0, start)]
        sentence = ends[-1]  # the start of the statement's sentence, then of the one before it that holds words
        before = next((e for e in reversed(ends[:-1]) if self.text[e:sentence].strip()), 0)
        if not self.label_holders.get(letter):
            before = start  # a label no option carries counts in the statement itself only: "(C) option C in the image"
        spans = [m for pattern in (LABELLED, IMAGE_LABEL) for m in pattern.finditer(self.text, before, self.line_end(start))]
        return any(letter in _named_letters(m.group()) or m.re is IMAGE_LABEL and letter in m.group() for m in spans)

    def lettering_ambiguous(self, letter: str) -> bool:
        """Where the options give the image's letters in another order ("(B) Option C in the image"), a letter that is
        another option's image letter, or whose own option names another, may mean the prompt's option or the image's;
        a response that also names the image's labels ("container C", "object A", "labeled as (C) in the image") and
        does not write the option's own text does not say which: the judge, who sees the image, decides."""
        permuted = self.label_holders.get(letter) or self.option_labels.get(letter, set()) - {letter}
        return bool(permuted) and not self.written_as_its_own(letter) and bool(self.labels or IMAGE_LABEL.search(self.text))

    def written_as_its_own(self, letter: str) -> bool:
        """Whether the response writes the option's own text somewhere ("(B) option C in the image is the answer"), or
        the letter with its own option's image letter after it ("(B) Object A in the image" where (B) is "Option A
        in the image")."""
        target = self.option_words.get(letter)
        said = [word for word, _, _ in self.words]
        if target and _contains(said, target):
            return True
        own = self.option_labels.get(letter, set())
        for token in self.tokens(0, len(self.text)):
            if token.letter == letter and own:
                after, clause_end = self.after_token(token, len(self.text))
                if (named := _named_letters(self.text[after:clause_end])) and named <= own:
                    return True
        return False

    def other_content(self, letter: str, start: int, end: int) -> str | None:
        """The other option that accounts for what the clause after a letter says where the letter's own does not:
        the clause says a word or value that tells options apart and the letter's text lacks, and another option's
        text has every such word the clause says ("(A). The magnetic forces are the same" where only (C) says
        "same"; "(C), ... on Thursday" where (C) says Tuesday and (A) Thursday; "(C). ... at -3.0 and -0.4 km").
        Words after a negation, a reason or another option ("not the same", "because option A ...") say nothing, unless
        the reason restates another option and nothing of the letter's own ("(A), because all temperatures are lower,
        no condensation will develop on the inner wall" where that is (B)'s text and (A) is "Option B in the image")."""
        if letter not in self.discriminating:
            return None
        stop = NEGATION_OR_REASON.search(self.text, start, end)
        if stop and stop.group().lower() in ("because", "since", "as") and (restated := self.restated(letter, stop.end(), end)):
            return restated
        clause = LABELLED.sub(" ", self.text[start : stop.start() if stop else end])  # labels are label_conflict's
        said = {w for w in _content_words(clause) if (len(w) > 2 or any(c.isdigit() for c in w))  # not units: "am", "km"
                and not (self.roman and re.fullmatch(r"[ivx]+", w))}  # "III" labels a statement, as a letter an option
        said &= set().union(*self.discriminating.values()) - META_WORDS
        if not said - self.discriminating[letter]:
            return None  # the clause says nothing that the letter's own text lacks
        return min((o for o, words in self.discriminating.items() if o != letter and said <= words), default=None) \
            or min((o for o, words in self.discriminating.items() if o != letter and said & words
                    and not said & self.discriminating[letter]), default=None)

    def restated(self, letter: str, start: int, end: int) -> str | None:
        """The other option of four or more telling words of which a span says at least half (three or more), where
        it says none of the letter's own."""
        said = _content_words(self.text[start:end]) - META_WORDS
        if said & self.discriminating[letter]:
            return None
        for other, words in sorted(self.discriminating.items()):
            telling = words - META_WORDS
            if other != letter and len(telling) >= 4 and len(said & telling) >= max(3, len(telling) / 2):
                return other
        return None

    def label_ambiguity(self, token: Token, end: int) -> str | None:
        """Where another option's text holds the token's letter as a label ("Point C" is (A), the answer "(C)"), a
        letter written alone is ambiguous when the response names that label ("... at point C. The answer is
        (C).")."""
        holders = self.label_holders.get(token.letter)
        if not holders:
            return None
        sentence = self.text.rfind("\n", 0, token.start) + 1  # from the sentence before the token's to its line's end
        ends = [m.end() for m in SENTENCE_END.finditer(self.text, 0, token.start)]
        start = ends[-2] if len(ends) >= 2 else 0
        line_end = self.line_end(token.end)
        near = [m for pattern in (LABELLED, NAMED_LETTER) for m in pattern.finditer(self.text, min(start, sentence), line_end)]
        if any(not (m.start() <= token.start < m.end()) and token.letter in _named_letters(m.group()) for m in near):
            return min(holders)
        return None

    def other_option_start(self, letter: str, start: int, end: int) -> str | None:
        """The one other option whose text begins with the (two or more) words at start, where the letter's own
        does not: "(C). Country 3" where (A) is "Country 3 boasts a superior GDP" and (C) "Country 5 ..."."""
        i = bisect.bisect_left(self.word_starts, start)
        words = [w for w, _, e in self.words[i:] if e <= end]
        if len(words) < 2 or self.text[start : self.words[i][1]].strip(" \t\"'(:-–—"):
            return None
        begins = {o for o, option in self.option_words.items() if _past_own_letter(o, option)[: len(words)] == _without_article(words)}
        return next(iter(begins)) if len(begins) == 1 and letter not in begins else None

    def other_items(self, token: Token, start: int, end: int) -> set[str]:
        """Other options' letters written as items after an answer on its line ("(A) x, (B) y", "(A), she is
        studying. (B), she sleeps."), not rejected ("(B) is wrong"); after "Option A is ...", also "Option B is ...":
        each option described in turn."""
        letter = token.letter
        found = {t.letter for t in self.tokens(start, end)
                 if t.letter != letter and t.letter in self.valid and t.form in ("bracket", "closed", "named")
                 and ITEM_BEFORE.search(self.text, max(0, t.start - 8), t.start) and not self.rejected(t.start, t.end)}
        for m in BRACKETED_LETTER.finditer(self.text, start, end):  # "(A) 6.7 for Point A and (B) 7.3, 5.9 for Point B"
            other = m.group(1)
            if other != letter and other in self.valid and ITEM_BEFORE.search(self.text, max(0, m.start() - 8), m.start()) \
                    and self.option_at(DELIMITER.match(self.text, m.end(), end).end(), end, only=other) is not None:
                found.add(other)
        if token.form == "named" and SUBJECT_VERB.match(self.text, token.end):
            found |= {m.group(1) for m in NAMED_LETTER.finditer(self.text, start, end)
                      if m.group(1) != letter and m.group(1) in self.valid and SUBJECT_VERB.match(self.text, m.end())
                      and ITEM_BEFORE.search(self.text, max(0, m.start() - 8), m.start())}
        return found


    def explained_otherwise(self, letter: str, start: int, stated: bool = False) -> bool:
        """Whether what the response says from a letter stated at `start` on points away from it, so that the judge
        should read it: the letter's line gives another option's values nearly (`nearer_values`); the last sentence
        names another option's image label (`final_label_option`); a later line says no option fits; or the words
        favour another option ("(A). The magnetic forces are the same ..." where only (C) says "same";
        "(D)\n\n... none of the objects will sink" of 0-3: see EXPLAINED_WORDS). An option whose text has no telling
        words ("Option B in the image") cannot be favoured by words. A letter the response `stated` as its answer ("The
        answer is (C).", "Answer: C", \\boxed{C}: ANSWER_STATEMENT_RULES) is what it answers whatever words its working
        uses, unless the working's last sentence names another option's text ("The correct answer is (C). ...
        Therefore, the expected ratio ... is 1:3." where (A) is 1:3)."""
        if self.nearer_values(letter, start) is not None:
            return True  # "(A) -0.1 x 10^12 $, -1.35 x 10^12 $" where (A) is -0.10, -0.51 and (B) -0.10, -1.32
        if self.final_label_option(start) not in (None, letter):
            return True  # "(A) Option A in the image\n\n... Therefore, ... container C will exhibit droplets first."
        if stated and self.final_sentence_names(calculated=True) not in (None, letter):
            return True  # "The correct option is (B). ... Therefore, the perimeter = (16 + 13) = 29 units." where (C) is 29
        line_end = self.line_end(start)
        if NO_OPTION_FITS.search(self.masked(line_end, len(self.text))) and not NONE_LIKE.search(self.options.get(letter, "")):
            return True  # "... would be:\n(C) $ 11340.11\nBut ... none of the choices provided are accurate."
        if not self.discriminating.get(letter, set()) - META_WORDS:
            return False
        after = len(self.text[start:].split())
        if after < EXPLAINED_WORDS:
            return False
        own, other = self.support(letter)
        favoured_otherwise = own < other or after >= WORKING_WORDS and own == other and not self.with_own_text(letter, start)
        if favoured_otherwise and stated:
            return self.final_sentence_names() not in (None, letter)
        return favoured_otherwise

    def with_own_text(self, letter: str, start: int) -> bool:
        """Whether the letter stated at `start` is written with its option's whole text ("(D) -2.37 x 10^12 $, 0.87 x
        10^12 $, ..."): a working that says as much of another option as of it (the same values in another order) does
        not point away from it."""
        token = self.first_token(letter, start, len(self.text))
        return token is not None and self._own_text_end(token, self.line_end(token.end)) is not None

    def support(self, letter: str) -> tuple[int, int]:
        """How many of the words that tell the letter's option text apart (`discriminating`) the response says, and the
        most it says of any other option's; a sentence that names another option's letter is about that option ("As
        for (B) a red square, the picture shows otherwise."), and what it says counts for none, nor does a word the text
        rejects ("III is false"). An option's text that ends with a full stop goes with the sentence after it ("A cat
        sleeps. (B) is less likely.")."""
        spoken, start = [], 0
        for end in [m.end() for m in SENTENCE_END.finditer(self.text)] + [len(self.text)]:
            opening = start + len(self.text[start:end]) - len(self.text[start:end].lstrip())
            if end < len(self.text) and (option := self.option_at(opening, end)) and not self.text[option[1] : end].strip(" \t.!"):
                continue  # the option's text is the whole sentence: what follows says what of it
            named = {t.letter for t in self.tokens(start, end)} | set(NAMED_LETTER.findall(self.text, start, end))
            if not named - {letter}:
                spoken += [m.group() for m in CONTENT_TOKEN.finditer(self.text, start, end) if not self.rejected(*m.span())]
            start = end
        said = _content_words(LABELLED.sub(" ", " ".join(spoken))) - META_WORDS
        support = {option: len(said & (words - META_WORDS)) for option, words in self.discriminating.items()}
        own = support.pop(letter, 0)
        return own, max(support.values(), default=0)

    def last_sentence_start(self) -> int:
        """Where the text's last sentence starts (0 for a text of one sentence)."""
        ends = [m.end() for m in SENTENCE_END.finditer(self.text) if self.text[m.end() :].strip()]
        return ends[-1] if ends else 0

    def final_sentence_names(self, calculated: bool = False) -> str | None:
        """The one option whose text the last sentence names, with no letter there ("... The phenotype of this pea
        plant is constricted pods."): where the response opened with another letter, the working concluded against it.
        A negation after the text rejects it ("Option B shows ..., which does not match"); one before it belongs to the
        working ("The ratio of offspring that do not have it to those that have it is 1:3"). `calculated`: only an
        option that ends the last sentence's calculation ("... = (16 + 13) = 29 units.")."""
        one_line = len(self.lines) < 2  # there, only a calculation's result concludes ("... = (16 + 13) = 29 units.")
        start = self.last_sentence_start()
        last = self.text[start:]
        if (one_line and not self.tokens(0, start)) or (not one_line and start <= self.lines[0][1]) \
                or self.tokens(start, len(self.text)) or NAMED_LETTER.search(last) or BRACKETED_LETTER.search(last):
            return None  # a letter there, or none stated before it
        if "|" in last or SUPPOSING.match(last):
            return None  # a table's row, or a supposition ("If the snakes increase, ..."): no conclusion
        occurrences = self.option_occurrences(start, len(self.text))
        named = {letter for letter, _, _ in occurrences}
        if len(named) > 1 or one_line or calculated:  # "... the perimeter of △ABC is 1 x 2 = 2." where (A) is 1, (B) 2
            occurrences = self.calculation_result(occurrences, start, len(self.text))
            named = {letter for letter, _, _ in occurrences}
        if len(named) != 1 or NEGATION_WORD.search(self.text, min(e for _, _, e in occurrences)):
            return None
        if any(DEFINED_AFTER.match(self.text, e) for _, _, e in occurrences):
            return None  # "Mucronate: A leaf apex that has a short, sharp point.": an option defined, not concluded
        result_from = self.text.rfind("=", start) + 1  # "∠1 = 180° - 65° = 115°": the result follows the last "="
        if all(s < result_from or OPERATOR_AFTER.match(self.text, e) for _, s, e in occurrences):
            return None  # the option's value is an operand of the working, not its result
        return named.pop()

    def calculation_result(self, occurrences: list[tuple[str, int, int]], start: int, end: int) -> list[tuple[str, int, int]]:
        """Of the option texts a sentence [start, end) names, the one that ends its calculation: the only one after the
        sentence's last "=", with nothing but a unit and the sentence's end after it ("... = 10m + 10m = 20m.",
        "= (16 + 13) = 29 units."); [] otherwise."""
        result_from = self.text.rfind("=", start, end) + 1
        if not result_from:
            return []
        after = [(o, s, e) for o, s, e in occurrences if s >= result_from]
        if len(after) != 1 or not CALCULATION_END.fullmatch(self.text, after[0][2], end):
            return []
        return after

    def stated_in_full(self, letter: str, start: int) -> bool:
        """Whether the statement at `start` ends its sentence, or the text, after the letter or the letter's own text
        ("The answer is (A) oblique.", "Answer: C\n"), not "The answer is (A) and the"."""
        found = (self._token(m, stated=True) for m in LETTER.finditer(self.text, start))
        token = next((t for t in found if t is not None and t.letter == letter), None)
        if token is None:
            return False
        end = self._own_text_end(token, self.line_end(token.end)) or token.end
        repeated = re.compile(rf"[ \t]*{letter}\b")  # "The answer is (D) D." where the options are the letters themselves
        if self.options.get(letter, "").strip() == letter and (again := repeated.match(self.text, end)):
            end = again.end()
        return bool(SENTENCE_CLOSED.match(self.text, end))

    def result_before(self, letter: str, start: int) -> str | None:
        """The other option whose text the sentence before the one stating a letter at `start` ends on, the only option
        it names, where neither it nor what follows names the letter's own text ("Therefore, the degree of angle C is
        40°. So the answer is (A)." where (C) is 40°; "The length of AB is 2.\n\nD" where (B) is 2): the working's
        result and the letter disagree. A negation after the text rejects it; a sentence with an option's letter in it is
        about that option."""
        ends = [0] + [m.end() for m in SENTENCE_END.finditer(self.text, 0, start)]
        sentence_start = ends[-1]
        if (leading := self.said_before(letter, sentence_start, start)) is not None:
            return leading
        previous = next((e for e in reversed(ends[:-1]) if self.text[e:sentence_start].strip()), None)
        if previous is not None and (only := self.only_one(previous, sentence_start)) not in (None, letter):
            return only  # "Only option (B) has the same number ... as the image. So the answer is (A)."
        if previous is None or any(t.strong for t in self.tokens(previous, sentence_start)) \
                or NAMED_LETTER.search(self.text, previous, sentence_start):
            return None  # a letter written as an option's there ("(B) is 2."; not "angle C is 40°")
        if (counted := self.counted_result(letter, previous, sentence_start)) is not None:
            return counted  # "Therefore, there are 3 countries that ... . The answer is: (C)" where (B) is 3
        if (listed := self.listed_values(letter, previous, sentence_start)) is not None:
            return listed  # "Therefore, the balances are 2.48, -0.46 and 0.44. The correct answer is (D)." where (C) lists them
        occurrences = self.option_occurrences(previous, sentence_start)
        named = {other for other, _, _ in occurrences}
        own_from = previous
        if len(named) > 1:  # "AB = ... = 10m + 10m = 20m." where (A) is 10m and (B) 20m: the result is the last term
            occurrences = self.calculation_result(occurrences, previous, sentence_start)
            named = {other for other, _, _ in occurrences}
            own_from = occurrences[0][2] if occurrences else previous  # the letter's value as an operand is working
        if len(named) != 1 or letter in named or NEGATION_WORD.search(self.text, min(e for _, _, e in occurrences), sentence_start):
            return None
        last_start, last_end = max((s, e) for _, s, e in occurrences)
        if re.search(r"\w", self.text[last_end:sentence_start]) or self.text[last_start - 1 : last_start] not in " \t=:":
            return None  # the sentence goes on after the text, or the text is part of a term ("m^3"): working
        if any(own == letter for own, _, _ in self.option_occurrences(own_from, len(self.text))):
            return None
        return named.pop()

    def said_before(self, letter: str, sentence_start: int, start: int) -> str | None:
        """The other option whose text the statement's own sentence names before it, the only option it names there, where
        the response does not name the letter's own text from that sentence on and no letter is written before the
        statement ("... making it acute, and the answer to the question is B." where (D) is acute)."""
        named = {other for other, _, _ in self.option_occurrences(sentence_start, start)}
        if len(named) != 1:
            return None
        words = [w for w, s, e in self.words if sentence_start <= s and e <= start]
        # every option the span names, rejected or compared ones too ("X is farther north than Y, but Z is ...")
        mentioned = {option for option, text in self.option_words.items() if _contains(words, _without_article(text))}
        if mentioned != named or NEGATION_WORD.search(self.text, sentence_start, start) \
                or any(t.strong for t in self.tokens(sentence_start, start)) \
                or any(own == letter for own, _, _ in self.option_occurrences(sentence_start, len(self.text))):
            return None
        other = named.pop()  # not part of the letter's own text: "acute" of (B) "acute angle"
        return None if _spaceless(self.options[other]) in _spaceless(self.options.get(letter, "")) else other

    def only_one(self, start: int, end: int) -> str | None:
        """The option a sentence says is the only one that fits: "Only option (B) has the same number of circles",
        "Of the choices given, only 180 degrees is greater than 90 degrees" (where (D) is 180); None otherwise."""
        for only in ONLY_ONE.finditer(self.text, start, end):
            token = self.token_at(only.end(), end)
            named = (token.letter, token.end) if token is not None and token.strong else self.option_at(only.end(), end)
            if named is not None and ONLY_VERB.match(self.text, named[1], end):
                return named[0]
        return None

    def counted_result(self, letter: str, start: int, end: int) -> str | None:
        """Where every option is a value, the other option whose value a concluding sentence ("Therefore, there are 3
        countries that ...", "So the total is 12 apples.") states as its one result, where the letter's own value is not
        stated there."""
        sentence = self.text[start:end]
        if not self.option_values or not CONCLUDING.match(sentence):
            return None
        stated = {parse_number(m.group(1)) for m in COUNTED.finditer(sentence)}
        if len(stated) != 1:
            return None
        result = stated.pop()
        matching = [o for o, value in self.option_values.items() if value == result]
        if any(own == letter for own, _, _ in self.option_occurrences(start, len(self.text))):
            return None  # "... the radius is 8 inches. The correct option letter is (A) 7.5.": its own value stated too
        return matching[0] if len(matching) == 1 and matching[0] != letter else None

    def listed_values(self, letter: str, start: int, end: int) -> str | None:
        """Where every option lists two values or more, the other option whose values, in order, a concluding sentence
        ("Therefore, the trade balances ... are 2.48 x 10^12, -0.46 x 10^12 and 0.44 x 10^12, respectively.") states
        one after another, where the response does not state the letter's own so from there on ("The correct answer
        is (A) -0.6, 4.4, -0.8." states its own)."""
        if not CONCLUDING.match(self.text[start:end]):
            return None
        values = {option: [parse_number(n) for n in NUMBER.findall(text)] for option, text in self.options.items()}
        if any(len(v) < 2 or None in v for v in values.values()):
            return None
        def listed(option: str, until: int) -> bool:
            return _contains([parse_number(n) for n in NUMBER.findall(self.text, start, until)], values[option])

        others = [option for option in values if option != letter and listed(option, end)]
        return others[0] if len(others) == 1 and not listed(letter, len(self.text)) else None

    def nearer_values(self, letter: str, start: int) -> str | None:
        """The one other option whose values the letter's line (from the letter stated at or after start) gives
        nearly, each within 10%, where it does not give the letter's own so, and every option and that line give as many
        values: "(A) -0.1, -1.35, 0.946" where (A) is -0.10, -0.51, 0.91 and (B) -0.10, -1.32, 0.91."""
        token = self.first_token(letter, start, len(self.text))
        if token is None:
            return None
        stated = [parse_number(n) for n in NUMBER.findall(self.text, token.end, self.line_end(token.end))]
        values = {option: [parse_number(n) for n in NUMBER.findall(text)] for option, text in self.options.items()}
        if len(stated) < 2 or None in stated or any(len(v) != len(stated) or None in v for v in values.values()):
            return None

        def near(option: str) -> bool:
            return all(abs(a - b) <= 0.1 * max(abs(a), abs(b)) for a, b in zip(stated, values[option]))

        others = [option for option in values if option != letter and near(option)]
        return others[0] if len(others) == 1 and not near(letter) else None

    def final_label_option(self, start: int) -> str | None:
        """Where the options name the image's letters and a letter was stated before the last sentence, the option whose
        image letter is the one label that sentence names ("Therefore, container C will exhibit droplets first."), or
        that letter itself where no option names it (perhaps a thing of the question: "species A")."""
        if not any(self.option_labels.values()):
            return None
        last = self.last_sentence_start()
        if start >= last or NEGATION_WORD.search(self.text, last):
            return None
        labels = {letter for m in LABELLED.finditer(self.text, last) for letter in _named_letters(m.group())}
        if len(labels) != 1:
            return None
        label = labels.pop()
        holders = {o for o, named in self.option_labels.items() if label in named}
        return min(holders) if holders else label
