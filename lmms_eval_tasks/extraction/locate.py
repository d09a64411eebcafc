"""Locate the final answer: the places where a response commits (statements, lines), the conclusion read when it
does not, and how the last commitment settles the answer."""

from __future__ import annotations

import bisect
import re

from .admission import COMMITTING_CHOICE_RULES, Extraction, abstain
from .normalise import BOX_CLOSE, BOX_OPEN
from .readings import KIND_REASONS, Commitment, Reading, Token
from .vocabulary import (
    ALL_OPTIONS,
    ALONE_AFTER,
    ALONE_BEFORE,
    ANSWER_HEADING,
    ANSWER_LINE_START,
    ANSWER_TRIGGER,
    BOTH,
    CONCLUDE_TRIGGER,
    CONCLUDING_INTRO,
    CONDITIONAL,
    CONDITIONAL_VERB,
    CONTRAST,
    EVALUATIVE,
    FOLLOWING_BLOCK,
    HEDGE,
    HYPOTHETICAL,
    LABEL_ANSWER,
    LAST_LOWER_LETTER,
    LOWER_LETTER,
    MY_TRIGGER,
    NEITHER,
    NONE_FIT,
    OR_WORD,
    PREDICATE,
    QUALIFIED_TRIGGER,
    QUESTION_END,
    REFUSAL,
    REVISION,
    SENTENCE_DONE,
    SENTENCE_END,
    SENTENCE_TEXT,
    STATEMENT_RULES,
    SUBJECT_TRIGGER,
    TENTATIVE_WORDS,
    UNCERTAIN,
    UNFINISHED,
    VERDICT_TRIGGER,
    WORKING_OPENING,
)

COPULA_BEFORE = re.compile(r"(?i)\b(?:is|are|was|were|be|=)[ \t]*$")  # "... are (C) Snake and raccoon."
CLOSED_AFTER_TEXT = re.compile(r"[°%)\]]?[ \t]*(?:[.!]|\n|$)")  # "(D) 60°." ends its sentence
OWN_TEXT_BRACKETED = re.compile(r"[ \t]*\(([^()\n]+)\)")  # "B (water)"
LINE_LEAD = re.compile(r"[ \t]*(?:[(\[]?[A-Z][)\].:][ \t]*)?")  # nothing, or a letter, before a line's claim


class Locating:
    """Where a response states its answer (mixed into choice._Reader)."""


    def read_block(self, start: int, end: int) -> Reading | None:
        """Lines after "The correct answer is:": one answer, or a list of options."""
        block_lines = [(s, e) for s, e in self.lines if start <= s and e <= end]
        leads = [tok for s, e in block_lines if (tok := self.token_at(s, e)) is not None]
        if len({t.letter for t in leads}) > 1:
            letters = tuple(dict.fromkeys(t.letter for t in leads))
            return Reading("listed", letters, written_out=True) if set(letters) >= self.valid else Reading("several", letters)
        return self.read_phrase(*block_lines[0])[0] if block_lines else None

    # ------------------------------------------------------------ commitments

    def hypothetical(self, start: int, trigger_end: int) -> bool:
        """A statement inside a condition or a question: "if the answer were A", "Is (B) correct?"."""
        clause_start = max(self.text.rfind(c, 0, start) for c in ".!?;,\n") + 1
        if HYPOTHETICAL.search(self.text, clause_start, start):
            return True
        sentence_start = max(self.text.rfind(c, 0, start) for c in ".!?\n") + 1
        if CONDITIONAL.search(self.text, sentence_start, start) and CONDITIONAL_VERB.search(self.text, start, trigger_end):
            return True  # "However, if the edge counts, the answer would be C."
        question = QUESTION_END.search(self.text, trigger_end)
        return bool(question and question.group() == "?")

    def phrase_span(self, pos: int) -> tuple[int, int, bool]:
        """The rest of the line; when that is empty, the block of lines that follows (and True)."""
        line_end = self.text.find("\n", pos)
        line_end = len(self.text) if line_end < 0 else line_end
        if self.text[pos:line_end].strip(" \t:-–—"):
            return pos, line_end, False
        block = FOLLOWING_BLOCK.match(self.text, line_end)
        return (block.start(1), block.end(1), True) if block else (line_end, line_end, False)

    def statements(self) -> list[Commitment]:
        """answer_statement "the answer is X", "the best option is X"; choice_statement "my choice: X", "I'd go
        with X"; so_statement "So, X."; verdict "Conclusion: X", an "Answer" heading; answer_line where the
        statement opens its line ("Answer: X"); boxed \\boxed{X}; predicate "X is correct"."""
        found = []
        triggers = [(m, rule) for t, rule in STATEMENT_RULES for m in t.finditer(self.text)]
        quoted = [(s, e) for _, s, e in self.option_occurrences(0, len(self.text))] if triggers else []
        for m, rule in triggers:
            if self.hypothetical(m.start(), m.end()) or any(s <= m.start() < e for s, e in quoted):
                continue  # also "the answer is option D" inside an option's own text
            if m.re is SUBJECT_TRIGGER and any(t.strong for t in self.tokens(self.sentence_start(m.start()), m.start())):
                continue  # "The correct option letter for (C) C is (C).": a letter in the subject is no question's thing
            weak = m.re is CONCLUDE_TRIGGER  # "so ..." commits only to an option ("So, B."), not to a null or a list
            if ANSWER_LINE_START.match(self.text[self.text.rfind("\n", 0, m.start()) + 1 : m.end()]):
                rule = "answer_line"
            start, end, is_block = self.phrase_span(m.end())
            reading, after = (self.read_block(start, end), end) if is_block else self.read_phrase(start, end, stated=True)
            if weak and not (reading is not None and reading.kind == "one" and SENTENCE_DONE.match(self.text, after, end)):
                continue  # "So, B." commits; "so Sample B particles have ...", "so C(10, 4) = 210" are working
            if reading is not None:
                found.append(Commitment(m.start(), reading, rule))
        for m in re.finditer(f"{BOX_OPEN}([^{BOX_CLOSE}]*){BOX_CLOSE}", self.text):
            reading = self.read_phrase(m.start(1), m.end(1), stated=True)[0]
            if reading is not None:
                found.append(Commitment(m.start(), reading, "boxed"))
        found += self._predicated()
        return found

    def _predicated(self) -> list[Commitment]:
        """ "B is correct", "(A) and (C) are correct", "Option A best describes the image"."""
        found, covered = [], -1
        for token in self.tokens(0, len(self.text)):
            if token.start < covered or self.rejected_before(token.start):
                continue
            reading, after = self.read_phrase(token.start, len(self.text))
            covered = after
            if reading is None or reading.kind == "null" or (token.form == "bare" and reading.kind == "out_of_range"):
                continue
            predicate = PREDICATE.match(self.text, after)
            if predicate is None and reading.kind == "one":
                predicate = PREDICATE.match(self.text, token.end)  # "A is the correct answer" where the text is "A is closer"
            if predicate and not self.hypothetical(token.start, predicate.end()):
                found.append(Commitment(token.start, reading, "predicate"))
        for letter, start, end in self.option_occurrences(0, len(self.text)):  # "the third image is more similar"
            predicate = EVALUATIVE.match(self.text, end)
            if predicate and not self.hypothetical(start, predicate.end()):
                found.append(Commitment(start, Reading("one", (letter,), by_text=True), "predicate"))
        leading = [c for c in found if LINE_LEAD.fullmatch(self.text, self.text.rfind("\n", 0, c.start) + 1, c.start)]
        if len({c.reading.letters for c in leading}) > 1:  # "Option A is true because ...\nOption B is true ...",
            found = [c for c in found if c not in leading]  # "(B) Option A in the image is correct for ...": each option
        return found  # analysed in turn, none chosen

    def inline_list(self, token: Token) -> bool:
        """Whether the token's line names another option with its text too: "Options: Option A: ... Option B: ..."."""
        line_start = self.text.rfind("\n", 0, token.start) + 1
        if line_start not in self._lists_by_line:
            line_end = self.line_end(token.start)
            self._lists_by_line[line_start] = {t.letter for t in self.tokens(line_start, line_end)
                                               if self._own_text_end(t, line_end) is not None}
        with_text = self._lists_by_line[line_start]
        return len(with_text - {token.letter}) > 0 and token.letter in with_text

    def listing(self) -> bool:
        """Lines led by different letters ("A. red\nB. green", "Option A: ...\nOption B: ..."): a list of the
        options or an analysis of each, not an answer; a line that is only a letter ("B\n\nOption A is ...") is no item."""
        items = {t.letter for i, t in self.leads.items() if self.text[t.end : self.lines[i][1]].strip(" \t.:)")}
        bare = {t.letter for i, t in self.leads.items() if not self.text[t.end : self.lines[i][1]].strip(" \t.:)")}
        return len(items) > 1 or len(bare) > 1

    def after_list(self) -> int | None:
        """Where the first list of lines led by letters (two letters or more, line after line) ends, when text follows
        it; None otherwise."""
        if not self.leads:
            return None
        first = last = min(self.leads)
        while last + 1 in self.leads:
            last += 1
        if len({self.leads[i].letter for i in range(first, last + 1)}) < 2:
            return None
        end = self.lines[last][1]
        return end if self.text[end:].strip() else None

    def _answer_before_list(self) -> bool:
        """Whether the first line answers apart from the list of lines that follows: it is only a letter, or the
        list leads another line with its letter again (an analysis of each option after the answer)."""
        first = self.leads.get(0)
        if first is None:
            return False
        if not self.text[first.end : self.lines[0][1]].strip(" \t.:)"):
            return True
        if self._option_item(0) and self._option_item(1) and self.leads[1].letter != first.letter:
            return False  # "(A) 12:50 PM.\n(B) 10:50 AM.\n...": the first line is the list's first item
        if self._option_item(0) and 1 not in self.leads and len(self.lines) > 1 \
                and self.text[slice(*self.lines[1])].rstrip().endswith((".", "?", "!")):
            return True  # "(A) 2\n\nLet's think step-by-step. <the prompt again, its options listed>": apart from the list
        if all(self._option_item(i) for i in self.leads) and {t.letter for t in self.leads.values()} >= self.valid:
            return False  # the option list written out again and again: every line a letter with its own text only
        return any(token.letter == first.letter for i, token in self.leads.items() if i > 0)

    def _option_item(self, line: int) -> bool:
        """Whether a line is a letter followed by its own option text and nothing else ("(B) 10:50 AM.")."""
        token = self.leads.get(line)
        own_end = self._own_text_end(token, self.lines[line][1]) if token is not None else None
        return own_end is not None and not self.text[own_end : self.lines[line][1]].strip(" \t.!")

    def line_commitments(self) -> list[Commitment]:
        """The first line, and later lines or sentences that are only a letter (or a letter with its text);
        where the lines list the options or analyse each one, only the first line and letters of their own before
        the list."""
        if self.listing():  # the first line may answer before the list: "B\n\n- (A) ...: wrong\n- (B) ...: right"
            listed_from = min(self.lines[i][0] for i in self.leads)  # or a letter of its own before the list starts:
            before = [Commitment(t.start, self._checked(t.letter), "letter_line", priority=0)  # "... eight. (E)\n\n(A) Half. ..."
                      for t in self.tokens(0, listed_from) if t.start > self.lines[0][0] and self._stands_alone(t)]
            return (self._first_line() if self._answer_before_list() else []) + before + self.concluded_item()
        found = self._first_line()
        # formulas copied a symbol a line ("A\n5\n=(\n5\n−2\n)", "a\ni\n,b\ni"): a bare letter alone on a line is a variable
        vertical = sum(len(self.text[s:e].strip()) <= 3 for s, e in self.lines) >= 4
        for token in self.tokens(0, len(self.text)):  # "...\n\n**C**", "... well lit. **A**", "... lit. A. the bridge"
            if vertical and token.form == "bare":
                continue
            line = bisect.bisect_right([start for start, _ in self.lines], token.start) - 1
            quoted = line < len(self.lines) - 1 and self._own_text_end(token, self.lines[line][1]) is not None \
                and self.working_after(line)  # an option quoted to check it, the working going on after it
            if (0 not in self.leads or token.start != self.leads[0].start) and self._stands_alone(token) and not quoted \
                    and not self.list_cut_short(line) and not REFUSAL.search(self.text, 0, token.start):  # "I cannot tell.\n\nB" is a guess
                found.append(Commitment(token.start, self._checked(token.letter), "letter_line", priority=0))
        opening = SENTENCE_TEXT.match(self.text)  # "It seems like there's an error in all the options. The answer: (D)"
        option = self.option_at(opening.start(1), opening.end(1)) if opening else None
        if option is not None and option[1] == opening.end(1) and len(self.option_words[option[0]]) >= 3:
            found.append(Commitment(opening.start(1), Reading("one", (option[0],), by_text=True), "option_text", priority=0))
        for start, end in self.lines[1:]:  # "... compared.\n\nb)"
            lower = LOWER_LETTER.fullmatch(self.text, start, end)
            if lower and not REFUSAL.search(self.text, 0, start) and not vertical:
                found.append(Commitment(start, self._checked((lower.group(1) or lower.group(2)).upper()), "letter_line", priority=0))
        for last in LAST_LOWER_LETTER.finditer(self.text):  # "... well lit. b)"
            if not REFUSAL.search(self.text, 0, last.start()):
                found.append(Commitment(last.start(1), self._checked(last.group(1).upper()), "letter_line", priority=0))
        for i in range(1, len(self.lines)):  # "Let me look.\n\nA. the bridge"
            token = self.leads.get(i)
            if i < len(self.lines) - 1 and self.working_after(i):
                continue  # "Let's recheck using the choices:\n(A) ...\nCountry 3 GDP = ...": an option quoted to check it
            if token is not None and token.letter in self.valid and self._own_text_end(token, self.lines[i][1]) is not None:
                reading, _ = self.read_phrase(*self.lines[i])
                if reading is not None:
                    found.append(Commitment(self.lines[i][0], reading, "leading", priority=0))
        return found

    def sentence_start(self, pos: int) -> int:
        """Where the sentence holding pos starts: after the last sentence end or line break before it."""
        return max(self.text.rfind(c, 0, pos) for c in ".!?\n") + 1

    def list_cut_short(self, line: int) -> bool:
        """Whether a line is the text's last and follows a line that opens a list without stating an answer ("By
        inspection:\n(A)", "Let's check the choices:\n(A)"): the first item of a check cut off, not a choice
        ("The correct answer is:\n(A)" states one)."""
        if line != len(self.lines) - 1 or line == 0:
            return False
        before = self.text[slice(*self.lines[line - 1])]
        return before.rstrip().endswith(":") and not CONCLUDING_INTRO.match(before) and not any(
            trigger.search(before) for trigger in (ANSWER_TRIGGER, QUALIFIED_TRIGGER, MY_TRIGGER, VERDICT_TRIGGER, ANSWER_HEADING))

    def concluded_item(self) -> list[Commitment]:
        """The text's last line where it is a letter (perhaps with its own text) introduced by a concluding line
        ("Therefore, the logical conclusion ... is:\n\n(D) Some malicious are not viruses" after an analysis of each
        option): the analysis's answer, a line of its own."""
        last = len(self.lines) - 1
        token = self.leads.get(last)
        if token is None or last == 0 or not CONCLUDING_INTRO.match(self.text[slice(*self.lines[last - 1])]):
            return []
        own_end = self._own_text_end(token, self.lines[last][1]) or token.end
        if self.text[own_end : self.lines[last][1]].strip(" \t.!*"):
            return []  # more than the letter and its text
        return [Commitment(token.start, self._checked(token.letter), "letter_line", priority=0)]

    def working_after(self, line: int) -> bool:
        """Whether the lines after a line go on working (a calculation, a check of the option) rather than
        explaining an answer given: they hold "=" or end cut off mid-word or mid-number, and no answer heading
        stands above the line."""
        if line > 0 and re.fullmatch(r"\W*(?i:(?:final\s+|correct\s+)?answers?)\W*", self.text[slice(*self.lines[line - 1])]):
            return False  # "[Answer]\n(C) ...\n\n[Explanation]\n...": the line under an answer heading answers
        rest = self.text[self.lines[line][1] :]
        return "=" in rest or bool(re.search(r"[\w,]\s*$", rest) and not re.search(r"[.!?)\]*]\s*$", rest))

    def _first_line(self) -> list[Commitment]:
        start, end = self.lines[0]
        several_lines = len(self.lines) > 1
        if 0 in self.leads:  # "B", "B. Paris", "(A) A is closer", "B\n\nBecause ..."
            reading, _ = self.read_phrase(start, end)
            if reading is None:
                return []
            letter_only = not self.text[self.leads[0].end : end].strip(" \t.:)*")
            rule = ("first_line" if several_lines else "whole") if letter_only else "leading"
            return [Commitment(start, reading, rule, priority=0)]
        if lower := LOWER_LETTER.fullmatch(self.text, start, end):  # "b", "b)\n\nBecause ..."
            letter = self._checked((lower.group(1) or lower.group(2)).upper())
            return [Commitment(0, letter, "first_line" if several_lines else "whole", priority=0)]
        option = self.option_at(start, end)
        if option is not None and not self.text[option[1] : end].strip(" \t.!"):  # "The second image."
            return [Commitment(start, Reading("one", (option[0],), by_text=True), "option_text", priority=0)]
        label = LABEL_ANSWER.match(self.text, start, end)
        if label and SENTENCE_DONE.match(self.text, label.end(), end):  # "Point A", "Point B. It is on the car."
            return [Commitment(start, self._checked(label.group(1)), "first_line" if several_lines else "whole", priority=0)]
        return []

    def _stands_alone(self, token: Token) -> bool:
        """A letter (perhaps with its option text) that is a line or a sentence of its own, not an item of a list on
        its line; a bare capital ending the text without a full stop may be a cut-off pronoun ("... I")."""
        before = ALONE_BEFORE.search(self.text, max(0, token.start - 40), token.start)
        if not before or not (token.strong or token.letter in self.valid) or self.inline_list(token):
            return False
        own_text = self._own_text_end(token, len(self.text))
        after = ALONE_AFTER.match(self.text, own_text or token.end)
        if not after:
            return False
        own_line = before.group().lstrip(" \t") in ("", "\n") and not after.group().strip(" \t.!")
        return own_line or token.strong or own_text is not None or "." in after.group()

    # ------------------------------------------------------------ without a commitment

    def conclusion(self) -> tuple[int, int]:
        """All of a short response; the last two sentences of a long one's last paragraph; the last sentence of
        one that opens as working ("Let's analyze the images. ..."), whose earlier sentences are the working."""
        ends = []
        for m in SENTENCE_END.finditer(self.text):  # "... mexicanum.\nThe ..." ends one sentence, not two
            if self.text[m.end() :].strip() and not (ends and not self.text[ends[-1] : m.start()].strip()):
                ends.append(m.end())
        sentences = [p for p in SENTENCE_END.split(self.text) if p.strip(" \t*-")]
        if WORKING_OPENING.match(self.text) and ends:
            return ends[-1], len(self.text)
        if len(self.text.split()) <= 60 and len(sentences) <= 3:
            return 0, len(self.text)
        paragraph = max(0, self.text.rfind("\n\n") + 2)
        ends = [e for e in ends if e > paragraph]
        return (ends[-2] if len(ends) >= 2 else paragraph), len(self.text)


    def masked(self, start: int, end: int) -> str:
        """The span with option texts blanked, so that an option such as "None of the above" is no marker."""
        chars = list(self.text[start:end])
        for _, s, e in self.option_occurrences(start, end):
            chars[s - start : e - start] = " " * (e - s)
        return "".join(chars)

    def several_reason(self, start: int, end: int, letters: set[str], by_letter: bool = True) -> str:
        """Why a response that names several options chose none: it hedges, refuses, lists them all, selects
        several (a short list of letters: "A and C"), or only talks about them."""
        span = self.masked(start, end)
        if HEDGE.search(span) or OR_WORD.search(span) or UNCERTAIN.search(span) or TENTATIVE_WORDS.search(span):
            return "hedge"
        if REFUSAL.search(span):
            return "refusal"
        if not by_letter and BOTH.search(span):  # "both the second and the third image share ..."
            return "hedge"
        if by_letter and letters >= self.valid and len(self.valid) > 2:
            return "all_options_listed"
        return "several_answers" if by_letter and len(span.split()) <= 12 else "no_answer"

    def _mention(self, tokens: list[Token]) -> Extraction:
        """The one letter the conclusion names: "mention_with_text" where its own option text follows it ("is (B)
        Lynx rufus"), "mention" otherwise; a letter followed by another option's text or label contradicts itself."""
        with_text = False
        for token in tokens:
            line_end = self.line_end(token.end)
            own = self._own_text_end(token, line_end) is not None
            if self._one_letter(token, own, token.end, line_end).kind == "conflict":
                return abstain("mention", "self_contradiction")
            with_text |= own
        return Extraction(tokens[0].letter, "letter", "mention_with_text" if with_text else "mention")

    def ends_on_option(self, letter: str) -> bool:
        """Whether the response is one sentence on one line that ends on the option's whole text and says it plainly
        ("The point closest to the camera is Point C.", "It is the fourth image."): not a question, no hedge, no
        condition, and an option of two words or more. Options that share most of their words ("Point A" ... "Point D")
        leave nothing else to read."""
        if len(self.option_words[letter]) < 2 or len(self.lines) != 1 or self.last_sentence_start() != 0 \
                or self.text.rstrip().endswith("?"):  # a one-word option ("4") is a value the sentence may give
            return False
        ends = [e for named, _, e in self.option_occurrences(0, len(self.text)) if named == letter]
        return bool(ends) and not self.text[max(ends) :].strip(" \t.!") and not (
            TENTATIVE_WORDS.search(self.text) or HEDGE.search(self.text) or UNCERTAIN.search(self.text)
            or HYPOTHETICAL.search(self.text) or REFUSAL.search(self.text))

    def stated_mention(self) -> Extraction | None:
        """The one letter the response states as what something is, written with its own option's text, in a sentence
        of its own that ends there ("... the organisms most directly affected by a decrease in grass are (C) Snake and
        raccoon.", "Therefore, the degree of ∠DAE is (D) 60°.", "... the food with the least carbs is B (water).") --
        anywhere, not only in the conclusion: mention_with_text. Not under a condition, a refusal or a hedge, and never
        beside another such letter."""
        found = []
        for token in self.tokens(0, len(self.text)):
            line_end = self.line_end(token.end)
            own_end = self._own_text_end(token, line_end)
            if own_end is None and token.form == "bare" and (bracketed := OWN_TEXT_BRACKETED.match(self.text, token.end)):
                own_end = bracketed.end() if self.option_at(bracketed.start(1), bracketed.end(1), only=token.letter) \
                    == (token.letter, bracketed.end(1)) else None  # "B (water)"
            if token.letter not in self.valid or own_end is None or not (token.strong or own_end > token.end) \
                    or not COPULA_BEFORE.search(self.text, max(0, token.start - 24), token.start) \
                    or not CLOSED_AFTER_TEXT.match(self.text, own_end) or self.rejected(token.start, own_end):
                continue
            sentence_start = self.sentence_start(token.start)
            sentence, rest = self.text[sentence_start:own_end], self.text[token.start :]
            if HYPOTHETICAL.search(sentence) or TENTATIVE_WORDS.search(sentence) or REFUSAL.search(rest) \
                    or UNCERTAIN.search(rest) or HEDGE.search(rest):
                continue  # "... is (A) Hystrix cristata, while ... is (B) Ardea cinerea. It could be either."
            if self._one_letter(token, True, own_end, line_end).kind != "one":
                return None
            found.append(token)
        if len({token.letter for token in found}) != 1:
            return None
        return Extraction(found[0].letter, "letter", "mention_with_text")

    def without_commitment(self) -> Extraction:
        if (stated := self.stated_mention()) is not None:
            return stated
        if len(self.text.split()) >= 6 and UNFINISHED.search(self.text):
            return abstain("unfinished", "truncated")  # the conclusion was never written
        echoed = {t.letter for i, t in self.leads.items() if self._own_text_end(t, self.lines[i][1]) is not None}
        if len(echoed) > 1 and echoed >= self.valid:
            return abstain("listing", "all_options_listed")
        start, end = self.conclusion()
        span = self.masked(start, end)
        if NONE_FIT.search(span):
            return abstain("none_of_the_options", "none_fit")
        mentions = [t for t in self.tokens(start, end) if t.strong and not self.rejected(t.start, t.end)
                    and not self.hypothetical(t.start, self.clause_end(t.end, end))]  # "If ..., then (C) would be ..."
        letters = {t.letter for t in mentions}
        if letters & self.valid and REFUSAL.search(span):  # "The options are (A) Winter ... not possible to choose"
            return abstain("mention", "refusal")
        if letters & self.valid:
            if len(letters & self.valid) == 1:
                return self._mention([t for t in mentions if t.letter in self.valid])
            return abstain("mention", self.several_reason(start, end, letters & self.valid))
        if letters:
            return abstain("mention", "out_of_range")
        if HEDGE.search(span):
            return abstain("hedge", "hedge")
        if ALL_OPTIONS.search(span):
            return abstain("all_of_the_above", "several_answers")
        named = {letter for letter, _, _ in self.option_occurrences(start, end)}
        if len(named) > 1 and (contrast := CONTRAST.search(self.text, start, end)):  # "A and B are ..., but it shows C"
            after = {letter for letter, _, _ in self.option_occurrences(contrast.end(), end)}
            if len(after) == 1 and not (TENTATIVE_WORDS.search(self.text, contrast.end(), end) or HEDGE.search(self.text, contrast.end(), end)):
                named = after
        if len(named) == 1:
            letter = named.pop()
            return Extraction(letter, "option_text", "closing_text" if self.ends_on_option(letter) else "conclusion_text")
        if named:
            return abstain("conclusion_text", self.several_reason(start, end, named, by_letter=False))
        capitals = {t.letter for t in self.tokens(start, end) if t.letter in self.valid and not self.rejected(t.start, t.end)}
        if len(capitals) == 1 and not REFUSAL.search(span):
            return Extraction(capitals.pop(), "letter", "capital")
        if capitals:
            return abstain("capital", self.several_reason(start, end, capitals))
        whole = self.masked(0, len(self.text))
        if NONE_FIT.search(whole) or NEITHER.search(whole):
            return abstain("none_of_the_options", "none_fit")
        if REFUSAL.search(whole) or UNCERTAIN.search(whole):
            return abstain("refusal", "refusal")
        return abstain("no_option", "no_answer")


def _settle(text: str, commitments: list[Commitment], match_of) -> Extraction:
    """The last commitment decides, unless it contradicts an earlier one with no correction in between."""
    commitments = sorted(commitments, key=lambda c: (c.start, c.priority))
    final = commitments[-1]
    for earlier in reversed(commitments[:-1]):
        if earlier.reading.written_out:
            continue  # the options written out ("the closest match:\n(A) ...\n(D) ...") choose none of them
        narrowed = (earlier.reading.kind == "hedge" and final.reading.kind == "one"
                    and final.reading.letters[0] in earlier.reading.letters)
        if earlier.reading.same_as(final.reading) or narrowed:
            continue
        if not REVISION.search(text, earlier.start, final.start):
            return abstain(final.rule, "self_contradiction")
        break
    reading = final.reading
    if reading.kind == "one" and reading.withheld_as:  # "Answer: C is the first n terms ...": for the judge
        return Extraction(None, "none", reading.withheld_as, "inconclusive", candidate=reading.letters[0])
    if reading.kind == "one":  # a letter that a committing rule also reads is committed by it: "(c) True" (leading)
        agreeing = [c for c in commitments if c.reading.same_as(reading) and c.rule in COMMITTING_CHOICE_RULES]
        rule = final.rule if final.rule in COMMITTING_CHOICE_RULES or not agreeing else agreeing[-1].rule
        return Extraction(reading.letters[0], match_of(reading), rule)
    return abstain(final.rule, reading.reason if reading.kind == "null" else KIND_REASONS[reading.kind])
