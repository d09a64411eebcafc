"""What a commitment says (`Reading`), a letter as written (`Token`) and where the response commits (`Commitment`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    """What a commitment says: one | several | hedge | listed | null | out_of_range | conflict."""

    kind: str
    letters: tuple[str, ...] = ()
    reason: str | None = None  # a null answer's: refusal or none_fit
    by_text: bool = False  # the letter comes from the option's text
    withheld_as: str | None = None  # the rule under which the letter goes to the judge, where readers differ on it
    written_out: bool = False  # the options written out line by line under a statement ("The closest match:\n(A) ...")

    def same_as(self, other: Reading) -> bool:
        return (self.kind, self.letters, self.reason) == (other.kind, other.letters, other.reason)


KIND_REASONS = {"several": "several_answers", "hedge": "hedge", "listed": "all_options_listed",
                "out_of_range": "out_of_range", "conflict": "self_contradiction"}


TOKEN_FORMS = {"named_b": "named", "named": "named", "bracket": "bracket", "square": "bracket", "brace": "bracket",
               "quoted": "quoted", "dquoted": "quoted", "bare": "bare"}


@dataclass(frozen=True)
class Token:
    letter: str
    start: int
    end: int
    form: str  # named ("option B"), bracket ("(B)", "[B]"), quoted ("'B'"), closed ("B)"), bare ("B")
    described: bool = False  # stated, and the subject of a claim about it that does not rate it: "Answer: C is the first"

    @property
    def strong(self) -> bool:
        """Written as an option label; a bare capital counts only when a ")" closes it ("B)")."""
        return self.form != "bare"


@dataclass(frozen=True)
class Commitment:
    start: int
    reading: Reading
    rule: str
    priority: int = 1  # at the same position a statement (1) comes after a line reading (0)
