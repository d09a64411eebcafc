"""Deterministic answer extraction that commits only when the response commits; shared by every task.

Every extractor returns an `Extraction`: the prediction, the rule that found it and, when there is no
prediction, the reason (one of record.ABSTAIN_REASONS). A response that does not choose exactly one
existing option gets no prediction -- never a guess or a default letter; it is scored wrong (match
"none") unless an adjudicator decides it (scoring.set_adjudicator).

Precision first: every rule has a tier (RULE_TIERS: `strict` reads a stated letter, `reading` interprets prose),
and a letter from a multiple-choice rule that is not in COMMITTING_CHOICE_RULES -- its measured precision on the
labelled real responses is below 99.9%, or too thinly supported -- is withheld: abstain reason `inconclusive`,
the letter kept as `candidate`, for the adjudication judge. So is a letter a reading rule takes from a text that
stops mid-sentence. `tier_of` gives the tier of a record written before the tier was recorded.

Multiple choice (`extract_choice`) is read in two layers, after a copy of the option list on one line ("[Choices]
(A) 7 (B) 5 Answer: 1", the prompt repeated) is blanked.

1. Commitments, the places where a response states its answer:
     answer_line       an "Answer: X" line (the CoT format), "Final answer: X", "Answer: (B" cut short
     answer_statement  "the (correct|best|closest) answer/option is X"
     choice_statement  "my choice: X", "I'd go with X";  so_statement "So, X.";  verdict "Conclusion: X"
     predicate         "X is correct", "X best describes the image", "the third image is more similar"
     boxed             \\boxed{X}
     whole             the response is a letter: "B", "(B)", "**B**", "Option B", "c", "b)", "Point A"
     first_line        the first line is a letter and the rest explains: "B\\n\\nBecause ..."; it also stands
                       before a list that analyses each option
     leading           a line opens with a letter: "B. Paris", "(B) the second image", "A is closer.", "b. Paris"
     option_text       the first line, or the opening sentence, is exactly one option's text
     letter_line       a later line or sentence is only a letter: "...\\n\\n**C**", "... well lit. (A)", "... b)"
   `_Reader.read_phrase` reads what a commitment says: one letter (with or without its option text),
   an option's text, several letters ("A, C"; "A or C" and "B/C" are hedges), the option list, a null
   answer ("N/A", "none of the options"), a letter that is not an option, or a letter followed by
   another option's text. The last commitment decides; if it contradicts an earlier one, it wins only
   when a correction ("wait", "actually", "on second thought", ...) stands between them, else the
   response contradicts itself; a letter that a committing rule also reads is committed by that rule. Lines
   led by different letters (the option list, or an analysis of each option) are no commitment. A letter
   followed by what belongs to another option contradicts itself: its text or opening words ("(A) 0.27" where
   (B) is 0.27, "(C). Country 3"), its value ("(C). The point lies at -11.8 km"), or a letter label that another
   option's text names ("(A) Container A" where (C) is "Option A in the image"; "Answer: Option C" where (A) is
   "Option C in the image"), or words that tell options apart which only another option's text accounts for
   ("(A). The magnetic forces are the same", "(C), ... on Thursday", "(C). ... the same property: hardness" where
   (A) is "hard"; case counts where options differ only in case: "(C) EE"), or a reason that restates another
   option and nothing of its own ("(A), because all temperatures are lower, no condensation ..."). An option's
   text that goes on as a longer option beginning with it ("Her Excellency the Governor-General, ..., or the Prime
   Minster" beside "Her Excellency the Governor-General, the Prime Minister, ...") is neither. Where the options
   name the image's letters ("option B in the image"), a bare letter beside that label or with a value is
   ambiguous and "option (D) in the image" is the image's D; where they give them in
   another order, a letter written without its own option's text or image letter, in a response that names the
   image's labels ("container C", "labeled as (C) in the image"), may be either lettering: `image_lettering`
   withholds it (`inconclusive`, for the judge, who sees the image). A letter stated before an explanation that favours
   another option -- says more of the words that tell another option's text apart than of its own, or, before a working
   of 40 words or more, no more of its own than of another's (EXPLAINED_WORDS, WORKING_WORDS) --, before a later line
   that says no option fits ("But this option still does not match. None of the choices provided are accurate."), with
   another option's values nearly ("(A) -0.1, -1.35" where (B) is -0.10, -1.32), or before a last sentence that names
   another option's image label ("... container C will exhibit droplets first.") is withheld the same way
   (`explained_otherwise`): what follows a letter may point elsewhere. The option list written out again and again
   ("(A) 7:00 AM. | (B) 7:15 AM. | ... | (A) 7:00 AM. | ...") is no answer, and neither is a last line that is a
   letter under a line opening a list ("By inspection:\n(A)": a check cut off). An opening letter
   whose last sentence names another option, and an option line quoted while the working goes on, are no
   answer. A letter followed by other letters written as items ("(A), she studies. (B), she sleeps.") or a
   bracket of letters ("(A, B) 7") names several. The letter of the option that says no option fits, followed by an
   answer of the model's own ("(C) jump" where (C) is "None of the options are correct."), is withheld
   (`none_with_answer`, `inconclusive`): readers label it both ways.
2. Without a commitment: a text that stops mid-sentence is truncated; otherwise, within the conclusion
   (all of a short response, the last two sentences of a long one, the last sentence of one that opens
   as working: "Let's analyze ..."), so that letters named in the working are not taken for the answer:
     mention      exactly one letter written as an option label: "(B)", "B)", "option B", "'B'" (inside a
                  refusal it is none); mention_with_text: followed by its own option text ("is (B) Lynx rufus")
     (then "none of the options", and hedges such as "either ... or", "equally")
     conclusion_text  exactly one option's text that nothing rejects ("not the first image", "rather than ...")
     capital      exactly one stand-alone capital option letter: "I think it's B"
   and otherwise the reason: refusal, hedge, several answers, the option list, or no answer.

How letters are recognised (`LETTER`, `_Reader._token`): "(b)", "[B]", "'B'", "option B" and a stand-alone
capital. A capital "A" or "I" before a lower-case word is the article or the pronoun unless that word is a
verb of a third-person subject ("A is closer", "I matches"); "I" is a numeral where the response or the
options write Roman numerals; a capital before "=" or "+" is a variable. A letter that is the subject of a
sentence about it ("A is farther away", "Option A says ...") is chosen only when the sentence rates it
("A is correct", "B seems the better fit") or is its own option's text ("A is closer"); right after "Answer:" or
"the answer is", such a letter ("Answer: Option A is more informal.") is withheld (`letter_as_subject`,
`inconclusive`): readers differ on it, and the judge reads it with the question. A letter right after a noun ("point
A", "Points A and B", "the third image (C)") labels something in the picture, and a bracketed list "(A, B, or C)"
names the options without choosing: neither is a mention.

Yes/no, numbers and open answers (`extract_yes_no`, `extract_number`, `extract_answer_part`) take the
answer line or statement, else the plain answer; refusals, hedges ("yes and no", "3 or 4") and null
answers abstain, and a lone option letter answering an open question is out_of_range.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from dataclasses import dataclass

from .record import ABSTAIN_REASONS


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


# ---------------------------------------------------------------- the text a reader looks at

THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
UNCLOSED_THINK = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)
BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
BOX_OPEN, BOX_CLOSE = "\u27e6", "\u27e7"  # \boxed{X} becomes ⟦X⟧, an answer statement
LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
LATEX_WRAPPER = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
LATEX_DELIMITER = re.compile(r"\$+|\\[()\[\],;! ]|\\[a-zA-Z]+")
BOLD_LETTER = re.compile(r"(\*\*|__)[ \t]*\(?([A-Za-z])\)?[ \t]*\1")  # "**B**" is written as an option label: "(B)"
EMPHASIS = re.compile(r"\*\*|__|`+|(?<![\w*])\*(?=[^\s*])|(?<=[^\s*])\*(?![\w*])")
LINE_DECORATION = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*•][ \t]+)", re.MULTILINE)
SPECIAL_TOKENS = re.compile(r"<\|[a-z_]{2,20}\|>|</?s>|<(?:end_of_turn|start_of_turn|eos|bos|pad|unk)>", re.IGNORECASE)
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def strip_reasoning(response: str) -> str:
    """Drop <think>...</think> blocks; a dangling </think> ends the reasoning, an unclosed <think> is all reasoning."""
    text = THINK_BLOCK.sub(" ", response)
    if re.search(r"</think>", text, re.IGNORECASE):
        text = re.split(r"</think>", text, flags=re.IGNORECASE)[-1]
    text = UNCLOSED_THINK.sub(" ", text)
    return text.strip()


def prepare(response: str) -> str:
    """The response without reasoning blocks, full-width forms folded ("（Ｂ）" is "(B)"), LaTeX wrappers,
    markdown emphasis and line decoration (headings, bullets, quotes) removed, curly quotes made straight;
    a bold letter ("**B**") becomes a bracketed one."""
    text = SPECIAL_TOKENS.sub(" ", unicodedata.normalize("NFKC", strip_reasoning(response)).translate(QUOTES))
    text = LATEX_FRACTION.sub(r"(\1)/(\2)", text)
    text = BOXED.sub(lambda m: f"{BOX_OPEN}{m.group(1)}{BOX_CLOSE}", text)
    for _ in range(2):  # \text{\textbf{B}}
        text = LATEX_WRAPPER.sub(r"\1", text)
    text = LATEX_DELIMITER.sub(" ", text)
    text = EMPHASIS.sub("", BOLD_LETTER.sub(r"(\2)", text))
    return LINE_DECORATION.sub("", text).strip()


FINAL_ANSWER_LINE = re.compile(r"^\W*(?:final\s+)?answer\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def final_answer_segment(text: str) -> str | None:
    """The text after the last 'Answer:' line (the CoT format), if any."""
    matches = FINAL_ANSWER_LINE.findall(text)
    return matches[-1] if matches else None


def normalise_text(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s%.-]", " ", text.lower())).strip(" .")


# ---------------------------------------------------------------- what the words mean

# A letter written as an option label. A bracketed, quoted or named letter may be lower case ("(c)").
LETTER = re.compile(
    r"(?i:option|choice|letter)s?[ \t]*[:#]?[ \t]*(?:\(\s*(?P<named_b>[A-Za-z])\s*\)|(?P<named>[A-Z])(?![\w']))"
    r"|\(\s*(?P<bracket>[A-Za-z])\s*\)"
    r"|\[\s*(?P<square>[A-Za-z])\s*\]"
    r"|\{\s*(?P<brace>[A-Za-z])\s*\}"
    r"|(?<![\w'])'(?P<quoted>[A-Za-z])'(?![\w'])|\"(?P<dquoted>[A-Za-z])\""
    r"|(?<![\w'\-.])(?P<bare>[A-Z])(?![\w'\-])(?!\.[A-Za-z]\.)"
)
# "A" and "I" before a lower-case word are the article and the pronoun, unless the word is a verb whose
# subject is a third person (a pronoun "I" takes "am", "think"; an article takes a noun).
ARTICLE_OR_PRONOUN = ("A", "I")
THIRD_PERSON_VERBS = frozenset({
    "is", "isn't", "seems", "appears", "looks", "matches", "shows", "describes", "depicts", "represents", "fits",
    "corresponds", "captures", "reflects", "aligns", "has", "hasn't", "does", "doesn't", "best", "remains", "contains",
    "indicates", "suggests", "illustrates", "portrays", "gives", "includes", "and", "or", "nor", "vs", "versus",
})
A_SUBJECT_VERBS = THIRD_PERSON_VERBS | {"was", "wasn't", "would", "could", "should", "must", "might", "will", "cannot",
                                        "can't", "also", "alone", "only", "because", "since"}
# A capital that is the subject of a verb ("A is farther away") names a thing, unless the sentence rates it as
# the answer ("A is correct", "B seems the best fit") or is its own option's text ("A is closer").
SUBJECT_VERB = re.compile(r"[ \t]+(?:is|isn't|was|wasn't|seems|appears|looks|has|hasn't|does|doesn't|remains|would|could|"
                          r"should|must|might|will|can|cannot|can't|says|states|describes|suggests|claims|mentions|shows|"
                          r"depicts|represents|refers|assumes|implies|matches|fits|corresponds)\b")
# Words that rate an option as the answer: "correct", "the best fit", "more similar", "my choice".
RATING = (
    r"(?:correct|true|best|answer|closest|nearest|my\s+(?:answer|choice|pick)|(?:more|most)\s+(?:similar|likely|plausible|"
    r"accurate|appropriate|suitable|fitting|consistent|probable|reasonable|alike)|(?:a|the)\s+(?:better|closer|best|closest)"
    r"\s+(?:match|fit|choice|option|answer|description)|(?:correct|right|best|better|only|closest|most\s+\w+)\s+"
    r"(?:answer|option|choice|one|fit|match|description))"
)
EVALUATIVE = re.compile(
    r"(?i)[ \t]+(?:is|seems|appears|looks|would\s+be|must\s+be|should\s+be|remains)(?:\s+to\s+be)?[ \t]+"
    r"(?:(?:clearly|definitely|indeed|probably|likely|most\s+likely|certainly|also|still)[ \t]+)?"
    rf"(?:the[ \t]+)?(?:right|better|accurate|plausible|likely|{RATING})\b"
    r"|[ \t]+(?:matches|fits|describes|depicts|captures|reflects|represents|shows|corresponds\s+to)\s+(?:the\s+|what\s+)?"
    r"(?:image|picture|scene|photo|situation|is\s+shown|reference)\b(?!\s+(?:less|worse|poorly))"
    r"|[ \t]+(?:best|better|more\s+accurately|most\s+accurately|accurately|correctly)\s+(?:describes|matches|fits|"
    r"represents|captures|depicts|reflects|answers|illustrates|corresponds|aligns)\b|[ \t]+(?:fits|matches)\s+best\b"
)
PLURAL_VERB = re.compile(r"(?i)[ \t]+(?:are|were|both|all|show|share|have|look|seem|appear|describe|depict|match|contain|"
                         r"differ|would|could|might|can|cannot|do|don't)\b")
PLURAL_RATED = re.compile(r"(?i)[ \t]+(?:are|were|seem\s+to\s+be|appear\s+to\s+be)\s+(?:both\s+|all\s+)?(?:correct|right|true|valid|"
                          r"the\s+(?:correct\s+|right\s+)?answers)\b")
EQUATION = re.compile(r"[ \t]*(?:[=+*^<>≈≠≤≥×÷]|-[ \t]*[\dA-Z(])")  # a variable: "R = V/I", "A + B"
FOLLOWING_WORD = re.compile(r"[ \t]+([a-z]+(?:'[a-z]+)?)")
ROMAN_NUMERALS = re.compile(r"\b(?:II|III|IV|VI|VII|VIII|IX)\b")

# Nouns whose letter names a thing in the picture, not an option: "point A", "Points A and B", "box (C)".
LABEL_NOUNS = (
    "point|box|image|picture|photo|photograph|figure|fig|panel|region|circle|square|object|line|segment|angle|"
    "vertex|vertices|side|node|step|part|plot|graph|curve|arrow|position|location|marker|mark|area|label|site|cell|"
    "column|row|stage|phase|type|group|sample|tube|beaker|container|structure|layer|zone|compound|person|player|"
    "frame|view|shape|block|plate|resistor|bulb|switch|gene|species|section|route|path|city|country|company|firm|"
    "project|plan|strategy|model|version|item|case|scenario|particle|body|island|room|car|building|tree|vitamin|"
    "triangle|rectangle|quadrant|corner|edge|face|plane|axis|peak|wave|chart|table|map|bar|pole|charge|mass|ball|"
    "element|atom|molecule|ring|bond|hormone|protein|chain|strand|well|tank|wire|pipe|gate|window|door|room|patient"
)
ORDINALS = r"first|second|third|fourth|fifth|sixth|last|other|reference|left|right"
_LABEL_LETTER = r"(?:\(\s*[A-Z]\s*\)|[A-Z](?![\w']))"
_LIST_JOIN = r"(?:,\s*(?:and|or)|,|and|or|&|/|-|–|to|through|vs\.?)"
LABELLED = re.compile(
    rf"(?i:\b(?:{LABEL_NOUNS})(?:s|es)?|\b(?:{ORDINALS})(?:\s+(?:one|image|picture|photo|panel))?)"
    rf"[ \t]*{_LABEL_LETTER}(?:\s*{_LIST_JOIN}\s*{_LABEL_LETTER})*"
)
LABEL_ANSWER = re.compile(rf"(?:the\s+)?(?i:{LABEL_NOUNS}|option|choice)\s+\(?([A-Z])\)?(?=\s*(?:[.,;!)]|$))")
BRACKET_LIST = re.compile(
    rf"\(\s*[A-Z]\s*(?:{_LIST_JOIN}\s*[A-Z]\s*)+\)|\(\s*[A-Z]\s*\)\s*(?:-|–|to|through)\s*\(\s*[A-Z]\s*\)"
)
# Joins a list of letters: "A, C", "A and C", "A or C", "A/C".
LETTER_JOIN = re.compile(r"[ \t]*(?:,[ \t]*(?:and|or)[ \t]+|,|;|/|&|\+|[ \t]+(?:and/or|and|or)[ \t]+)[ \t]*", re.IGNORECASE)
OR_WORD = re.compile(r"\b(?:or|either)\b", re.IGNORECASE)
DELIMITER = re.compile(r"[ \t]*(?:[.:)–—,]|-(?!\d))*[ \t]*")  # not a sign: "(A) -5.43" is (A) with its value
SENTENCE_END = re.compile(r"(?<![A-Z])[.!?](?=\s|$)|\n")

# Statement triggers. The connective tolerates an adverb: "the answer is therefore (B)".
QUALIFIER = (
    r"(?:correct|right|best|closest|nearest|likeliest|only|true|appropriate|accurate|suitable|proper|matching|valid|"
    r"final|better|most\s+(?:likely|appropriate|accurate|suitable|reasonable|plausible|fitting|probable|correct|"
    r"similar|consistent|logical|relevant|precise|sensible))"
)
CONNECTIVE = (
    r"[ \t]*(?:(?:is|are|was|would\s+be|should\s+be|will\s+be|must\s+be|seems\s+to\s+be|appears\s+to\s+be|could\s+be|"
    r"might\s+be|may\s+be|remains|becomes)\b[ \t]*:?|[:=]|[-–—](?=\s))[ \t]*"
    r"(?:(?:therefore|thus|then|probably|likely|clearly|definitely|indeed|actually|still|simply|just|most\s+likely)"
    r"\b[ \t]*,?[ \t]*)*"
)
ANSWER_TRIGGER = re.compile(
    rf"(?i)\b(?:{QUALIFIER}\s+)*answers?\b(?!\s+(?:choices|options))(?:\s+(?:to|for)\s+(?:this|the)\s+(?:question|problem))?"
    rf"(?:\s+(?:choice|option|letter))?{CONNECTIVE}"
)
VERDICT_TRIGGER = re.compile(r"(?im)^[ \t]*(?:\d+\.[ \t]*)?(?:final[ \t]+)?(?:conclusion|verdict|decision|choice|selection)[ \t]*:[ \t]*")
ANSWER_HEADING = re.compile(r"(?im)^[ \t]*(?:the\s+)?(?:final\s+|correct\s+)?answers?[ \t]*$")
QUALIFIED_TRIGGER = re.compile(
    rf"(?i)\b{QUALIFIER}\s+(?:option|choice|letter|selection|one|match|description|statement|image|picture|figure|"
    rf"point|box|sequence|graph|diagram|shape|caption)s?\b{CONNECTIVE}"
)
MY_TRIGGER = re.compile(rf"(?i)\bmy\s+(?:final\s+|best\s+)?(?:choice|pick|selection|guess|vote|prediction|response){CONNECTIVE}")
CHOOSE_TRIGGER = re.compile(
    r"(?i)\b(?:I|we)(?:'d|'ll|\s+would|\s+will|\s+should|\s+must|\s+can|\s+now|\s+therefore|\s+thus)?\s+"
    r"(?:(?:definitely|probably|confidently|therefore|thus|then|finally)\s+)?"
    r"(?:choose|select|pick|go\s+with|opt\s+for|say|answer\s+with|vote\s+for|lean\s+(?:towards?|to)|settle\s+on|conclude)\b"
    r"[ \t]*:?[ \t]*(?:that\s+)?(?:it(?:'s|\s+is|\s+would\s+be|\s+should\s+be)\s+)?"
    r"(?:(?:the\s+)?(?:closest|nearest|best|most\s+\w+)(?:\s+(?:one|option|answer|choice|match))?[ \t]*[:,]?[ \t]*)?"
)
CONCLUDE_TRIGGER = re.compile(
    r"(?im)(?:^|(?<=[.!?;:,])[ \t]+)[ \t]*(?:so|thus|therefore|hence|consequently|accordingly)\b[ \t]*,?[ \t]*"
    r"(?:it(?:'s|\s+is|\s+must\s+be|\s+should\s+be|\s+would\s+be)[ \t]+)?"
)
STATEMENT_RULES = ((ANSWER_TRIGGER, "answer_statement"), (QUALIFIED_TRIGGER, "answer_statement"), (MY_TRIGGER, "choice_statement"),
                   (CHOOSE_TRIGGER, "choice_statement"), (CONCLUDE_TRIGGER, "so_statement"), (VERDICT_TRIGGER, "verdict"),
                   (ANSWER_HEADING, "verdict"))
# What follows a letter that states it is the answer: "B is correct", "(B) is the best answer", "A best describes".
PREDICATE = re.compile(
    r"(?i)[ \t]*[.:][ \t]*(?:correct|true)\b(?![ \t]+(?:if|when))"  # "B. Correct"
    r"|[ \t]*(?:[):,\-–—][ \t]*)?(?:(?:is|are|seems|appears|would\s+be|must\s+be|should\s+be|remains)\s+)?(?:to\s+be\s+)?"
    r"(?:(?:clearly|definitely|indeed|therefore|thus|probably|likely|certainly|still|both)\s+)?(?:the\s+)?"
    rf"(?:(?:only|single)\s+)?(?:{RATING}|best|(?:most\s+)?(?:accurate|appropriate|likely|plausible|suitable|fitting)"
    r"\s+(?:answer|option|choice|one))\b"
    r"(?!\s+(?:if|when|only|for\s+\w+\s+(?:reason|case)))"
    r"|[ \t]+(?:best|better|most\s+accurately|more\s+accurately|accurately|correctly)\s+(?:describes|matches|fits|"
    r"represents|captures|depicts|reflects|answers|illustrates|corresponds|aligns)\b|[ \t]+(?:fits|matches)\s+best\b"
)
HYPOTHETICAL = re.compile(
    r"(?i)\b(?:if|whether|suppose|supposing|assuming|assume|unless|format|e\.g\.|for\s+example|such\s+as|instead\s+of|"
    r"rather\s+than|not\s+that|nor|neither)\b"
)
CONDITIONAL = re.compile(r"(?i)\b(?:if|assuming|suppose|supposing|unless)\b")
CONDITIONAL_VERB = re.compile(r"(?i)\b(?:would|could|might)\b")
QUESTION_END = re.compile(r"[!?\n]|\.(?=\s|$)")
# A letter or option text that the words around it reject.
NEGATIVE_AFTER = re.compile(
    r"(?i)(?:[ \t)]*(?:[:;\-–—][ \t]*)?|[ \t)]*,[ \t]*(?=which|that|this|it\b))(?:(?:this|which|that|it)\s+)?"
    r"(?:(?:is|are|was|seems|appears|would\s+be|can\s+be|must\s+be)\s+)?"
    r"(?:not\b|incorrect|wrong|false|unlikely|impossible|ruled\s+out|eliminated|excluded|doesn't|don't|does\s+not|"
    r"do\s+not|isn't|aren't|can't|cannot|fails)"
)
NEGATIVE_BEFORE = re.compile(
    r"(?i)\b(?:not|nor|neither|no|isn't|aren't|wasn't|except|excluding|eliminate|eliminating|rule\s+out|ruling\s+out|"
    r"rules?\s+out|ruled\s+out|than|unlike|instead\s+of|rather\s+than|besides|whether|if|over)\W+(?:\w+\W+){0,2}$"
)
# A later answer replaces an earlier one only after words like these.
REVISION = re.compile(
    r"(?i)\b(?:wait|actually|correction|oops|hmm+|hold\s+on|scratch\s+that|on\s+second\s+thought|"
    r"on\s+(?:further|closer|second)\s+(?:reflection|inspection|examination|look|analysis|review|glance)|"
    r"upon\s+(?:closer|further|second)\s+\w+|re-?(?:evaluat|examin|consider|think|check|assess|analy[sz]|visit|read)\w*|"
    r"double[- ]check\w*|let\s+me\s+(?:check|verify|look|think|correct|fix)\w*|looking\s+(?:again|more\s+closely|closer)|"
    r"(?:made|make)\s+(?:a|an)\s+(?:mistake|error)|mistake|mistaken|misread|apologi[sz]e|i\s+was\s+wrong|"
    r"that(?:'s|\s+is)\s+(?:wrong|incorrect|not\s+right)|correcting|instead)\b|(?:^|[.!?,]\s*)no[,.!:]"
)
NULL_ANSWER = re.compile(
    r"(?i)(?P<none_fit>none\b|neither\b|no\s+(?:correct\s+|valid\s+|right\s+|matching\s+)?(?:answer|option|choice)s?\b|"
    r"not\s+(?:listed|among|in\s+the\s+options))"
    r"|(?P<several_answers>all\s+(?:of\s+)?(?:the\s+)?(?:above|options|choices|of\s+them)\b)"
    r"|(?P<refusal>n/?a\b|not\s+applicable|unknown|unclear|undetermined|indeterminate|undeterminable|"
    r"(?:cannot|can't|can\s+not)\s+be\s+determined|not\s+(?:determinable|possible|sure|clear|certain|enough)|"
    r"insufficient|impossible|uncertain|\?+(?!\w))"
)
NONE_FIT = re.compile(
    r"(?i)\bnone\s+of\s+(?:the|these|those|them)\b|\bno\s+(?:correct|matching|valid|suitable|right)\s+(?:option|answer|choice)s?\b"
    r"|^\W*none\W*$|\b(?:is|are)\s+not\s+(?:listed|(?:among|in|one\s+of)\s+the\s+(?:options|choices))\b"
    r"|\b(?:options|choices)\b[^.\n]{0,40}\b(?:do|does|did)\s*(?:not|n't)\s+(?:accurately\s+|correctly\s+|really\s+)?"
    r"(?:describe|match|fit|apply|correspond|provide|include|contain|list|offer|show)"
    r"|\b(?:does|do|did)\s*(?:not|n't)\s+(?:match|correspond\s+to|fit)\s+any\b|\bnot\s+(?:among|listed\s+in|one\s+of)\s+the\s+(?:options|choices)\b"
)
NO_OPTION_FITS = re.compile(  # said of the options, not of the things in the picture ("none of the containers")
    r"(?i)\bnone\s+of\s+the\s+(?:\w+\s+){0,2}(?:options|choices|answers)\b|\bno\s+(?:correct|matching|valid|suitable|right)\s+"
    r"(?:option|answer|choice)s?\b|\b(?:options|choices)\b[^.\n]{0,40}\b(?:do|does)\s*(?:not|n't)\s+(?:match|fit|correspond)"
)
HEDGE = re.compile(
    r"(?i)\beither\b[^.\n]*\bor\b|\b(?:could|might|may)\s+be\b[^.\n]*\bor\b|\bequally\b|\bit\s+depends\b|\bdepending\s+on\b|\b(?:could|might|may)\s+be\s+(?:either|both|any)\b"
    r"|\bboth\s+(?:\w+\s+){0,4}?(?:are|seem|appear|look|could|might|may)\s+(?:\w+\s+)?(?:correct|plausible|possible|valid|"
    r"right|equally|similar|the\s+same|likely)\b|\b(?:hard|difficult)\s+to\s+(?:choose|decide|distinguish)\s+between\b"
    r"|\bcan't\s+decide\b|\bcannot\s+decide\b|\bsomewhere\s+between\b"
)
TENTATIVE_WORDS = re.compile(r"(?i)\b(?:could|might|may|maybe|perhaps|possibly|probably|likely|torn)\b")
# "Neither ..." rejects options; it is no answer only when it leaves none ("neither Paris nor London; it is Rome").
NEITHER = re.compile(r"(?i)\bneither\s+(?:option|choice|answer|image|of\s+(?:the|them|these))\b|\bneither\b[^.\n]{0,60}\bnor\b"
                     r"|^\W*neither\W*$")
ALL_OPTIONS = re.compile(r"(?i)\ball\s+(?:of\s+)?(?:the\s+)?(?:above|options|choices|of\s+them)\b")
UNCERTAIN = re.compile(r"(?i)\bnot\s+(?:entirely\s+|completely\s+|100%\s+|quite\s+)?(?:sure|certain)\b|\bunsure\b|\buncertain\b"
                       r"|\bambiguous\b")
REFUSAL = re.compile(
    r"(?i)\b(?:can\s*not|can't|cannot|could\s+not|couldn't|unable\s+to|not\s+able\s+to|impossible\s+to|not\s+possible\s+to|"
    r"no\s+way\s+to|hard\s+to|difficult\s+to)\s+(?:\w+\s+){0,3}?(?:determine|tell|say|answer|identify|see|view|access|"
    r"decide|know|judge|be\s+determined|conclude|assess|provide|make\s+out|infer|ascertain|discern|confirm|verify|"
    r"choose|select|find|read|process|open|analy[sz]e|evaluate|compare|help)\b"
    r"|\b(?:not|insufficient|not\s+enough|lack\s+of|no|without\s+(?:more|enough|additional))\s+(?:enough\s+)?"
    r"(?:information|details?|context|data|visual\s+(?:information|evidence|cues))\b"
    r"|\bsorry\b|\bn/a\b|\bnot\s+applicable\b|\bI\s+(?:do\s+not|don't)\s+know\b|\bno\s+idea\b"
    r"|\bI\s+apologi[sz]e\b|\bonly\s+one\s+image\s+(?:was|is|has\s+been)\b|\b(?:was|were|has\s+not\s+been)\s+not\s+provided\b"
    r"|\bno\s+(?:options|choices|images?)\s+(?:(?:are|were|is|was|have\s+been|has\s+been)\s+)?(?:provided|given|listed|shown|attached)\b"
    r"|\b(?:could|can|would)\s+you\s+(?:please\s+)?(?:provide|clarify|share|upload|specify|send)\b|\bplease\s+(?:provide|upload)\b"
    r"|\bno\s+image\b|\bimage\s+(?:is\s+)?(?:not|isn't)\s+(?:provided|available|visible|shown|attached|loaded|clear)\b"
    r"|\bcannot\s+be\s+determined\b|\bindeterminate\b|\bundeterminable\b|\bnot\s+visible\b|\btoo\s+(?:blurry|small|dark)\b"
)
# Words of the option-text comparison: numbers keep their sign and decimals, "1,000" is "1000".
WORD = re.compile(r"(?:(?<!\w)-)?\d+(?:[.,]\d+)*%?|[^\W\d_]+")
ARTICLES = ("the", "a", "an")
FUNCTION_WORDS = frozenset({"the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "and", "or", "is", "are", "it", "its",
                            "this", "that"})
# A generation cut mid-sentence ends on a word no sentence ends with, or on ":" or ",".
UNFINISHED = re.compile(
    r"(?:\b(?:a|an|the|and|or|but|of|to|in|on|at|by|for|from|with|into|than|as|is|are|was|were|be|that|which|who|this|"
    r"these|its|their|his|her|our|my|so|because|since|then|if|we|it)|(?:^|[.!?:]\s+)(?:I|The|A|An|This|It|We|So|But|And|"
    r"Then|To|In|Let|First|Next)|[:,])\s*$"
)
SENTENCE_DONE = re.compile(r"[ \t]*[.!]?[ \t]*$|[ \t]*[.!][ \t]")
ALONE_BEFORE = re.compile(r"(?:^|\n|(?<![\d\s])[.!?]|(?<=[a-z]{2}),)[ \t]*$")  # a line or sentence starts here
ALONE_AFTER = re.compile(r"[^\w\n]*(?:\n|$)|[^\w\n.!]*[.!][ \t]+(?=[A-Z])")  # ... and ends here
WORKING_OPENING = re.compile(
    r"(?i)\W*(?:let'?s|let\s+me|to\s+(?:answer|determine|identify|solve|find|decide|figure)|first(?:ly)?\b|step\s*1\b|"
    r"we\s+need\s+to|i\s+need\s+to|i\s+will\b|i'll\b|analy[sz]ing\b|looking\s+at\s+each|okay,?\s+let'?s)"
)
BOTH_OR_EITHER = re.compile(r"[ \t]*(?:(?i:either|both)[ \t]+)?")
LOWER_LETTER = re.compile(r"\s*(?:\(\s*([a-z])\s*\)|([a-z])\s*[.:)]?)\s*")  # "b", "b.", "b)", "(b)"
EITHER_BOTH = re.compile(r"(?i)(either|both)\s+")
NOT_APPLICABLE = re.compile(r"(?i)n/a\b")
SPACES = re.compile(r"[ \t]+")
LIST_GAP = re.compile(r"[\s,;.]*")
FOLLOWING_BLOCK = re.compile(r"\s*\n((?:[^\n]*\S[^\n]*(?:\n|$))+)")
LINE = re.compile(r"[^\n]*\S[^\n]*")
ANSWER_LINE_START = re.compile(r"(?i)[ \t]*(?:final\s+)?answer\b")
HEDGE_AFTER_LETTER = re.compile(
    r"(?i)\b(?:or|either|also\s+(?:possible|plausible|correct|likely|valid|right)|could\s+also|might\s+also|alternatively|"
    r"as\s+well|possibly|perhaps|maybe)\b"
)
BOTH = re.compile(r"(?i)\bboth\b")
UNIT_BEFORE = re.compile(r"[\d°]\s*$")
CLAUSE_BREAK = re.compile(r"[.!?;\n]")
CONTRAST = re.compile(r"(?i)(?:,|;|\.)\s*(?:but|however|yet|whereas|instead)\b(?!.*(?:,|;|\.)\s*(?:but|however|yet|whereas|instead)\b)",
                      re.DOTALL)


@dataclass(frozen=True)
class Reading:
    """What a commitment says: one | several | hedge | listed | null | out_of_range | conflict."""

    kind: str
    letters: tuple[str, ...] = ()
    reason: str | None = None  # a null answer's: refusal or none_fit
    by_text: bool = False  # the letter comes from the option's text
    withheld_as: str | None = None  # the rule under which the letter goes to the judge, where readers differ on it

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


def _words(text: str, offset: int = 0) -> list[tuple[str, int, int]]:
    return [(m.group().lower().replace(",", "").lstrip("+"), m.start() + offset, m.end() + offset) for m in WORD.finditer(text)]


def _without_article(words: list[str]) -> list[str]:
    return words[1:] if len(words) > 1 and words[0] in ARTICLES else words


SENTENCE_TEXT = re.compile(r"(?:^|(?<=\n)|(?<=[a-z0-9'\"][.!?]))[ \t]*([^.!?\n]+?)[ \t]*(?:[.!?]+(?=\s|$)|(?=\n)|$)")  # one sentence
LOWER_LEAD = re.compile(r"([a-z])([.)])(?=[ \t]|$)")  # a lower-case letter opening a line: "b. Paris", "b) Paris"
LAST_LOWER_LETTER = re.compile(r"(?<=[.!?,])[ \t]+\(?([a-z])\)[ \t]*[.!]?[ \t]*$", re.MULTILINE)  # a line's last sentence: "b)"
LOWER_CLOSED = re.compile(r"([a-z])\)")
CUT_LETTER = re.compile(r"[ \t]*\([ \t]*([A-Za-z])[ \t]*")  # a bracket the generation never closed, at the text's end
ITEM_BEFORE = re.compile(r"(?:^|[.!?;,:|]|\band)[ \t]*$")  # where an item of a list starts: "(A) 7:00 AM. | (B) ..."
# Where the clause after a letter stops stating the option: a negation, a reason, a comparison, another option named.
NONE_LIKE = re.compile(r"(?i)\b(?:none|incorrect|wrong|error|no\s+(?:correct|right))\b|\bnot\s+(?:listed|given|correct|right)\b")
NEGATION_WORD = re.compile(r"(?i)\b(?:not|no|never|neither|nor|unlike|otherwise|less|rather|instead|wrong|incorrect)\b|n't\b")
META_WORDS = frozenset({"answer", "correct", "right", "option", "choice", "solution", "response", "appropriate", "best",
                        "selected", "image", "picture", "given", "text", "choices", "options"})  # about options, not in them
BRACKETED_LETTER = re.compile(r"\(([A-Z])\)")
IN_THE_IMAGE = re.compile(r"[ \t]+(?:in|of|from|shown\s+in)[ \t]+the[ \t]+(?:image|picture|figure|diagram)\b", re.IGNORECASE)
IMAGE_LABEL = re.compile(r"(?<![\w'])\(?[A-Z]\)?(?=[ \t]+(?:in|of|from|shown\s+in)[ \t]+the[ \t]+(?:image|picture|figure|diagram)\b)"
                         r"|(?i:\blabell?ed[ \t]+(?:as[ \t]+)?)\(?[A-Z]\)?(?![\w'])")  # "C in the image", "labeled as (C)"
NEGATION_OR_REASON = re.compile(r"(?i)\b(?:not|no|never|neither|nor|rather\s+than|instead\s+of|unlike|because|since|as|"
                                r"due\s+to|given|while|whereas|than|compared|option|choice)\b|n't\b")
NAMED_LETTER = re.compile(r"(?i:\b(?:option|choice)s?)[ \t]*\(?([A-Z])\)?(?![\w'])")


def _stem(word: str) -> str:
    """ "pairs" is "pair", "hardness" is "hard": a plural, or a quality named as a noun."""
    if len(word) > 6 and word.endswith("ness"):
        word = word[:-4]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


CONTENT_TOKEN = re.compile(r"[^\s,;()\[\]{}\"'!?]+")


def _content_words(text: str) -> set[str]:
    """The words and values of a text as the discriminating-word check compares them: a time or a decimal is one value
    ("11:05", "-3.0"), plurals are singular, function words and single letters are left out."""
    found = set()
    for token in CONTENT_TOKEN.findall(text.lower()):
        token = token.strip(".:")
        if token and token not in FUNCTION_WORDS and (len(token) > 1 or token.isdigit()):
            found.add(_stem(token))
    return found


def _discriminating_words(options: dict[str, str]) -> dict[str, set[str]]:
    """Per option, the content words and values of its text that not every option's text has: what tells options
    apart ({"same", "both", "strength"} for "The strength ... is the same in both pairs" beside "... stronger in Pair
    1"; {"thursday", "hunt"} for "on Thursday ... at Hunt Museum" beside the Tuesday and Digital Museum options)."""
    words = {letter: _content_words(text) for letter, text in options.items()}
    shared = set.intersection(*words.values()) if words else set()
    return {letter: own - shared for letter, own in words.items()}


def _named_letters(text: str) -> set[str]:
    """The letters a text names as labels: "Option B in the image" {B}, "Point C" {C}, "containers A and B" {A, B}."""
    named = set(NAMED_LETTER.findall(text))
    for m in LABELLED.finditer(text):
        named.update(re.findall(r"(?<![\w'])\(?([A-Z])\)?(?![\w'])", m.group()))
    return named


class _Reader:
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
        """The option whose text the text at pos begins with (the longest), and where that text ends."""
        i = bisect.bisect_left(self.word_starts, pos)
        if i < len(self.words) and self.text[pos : self.words[i][1]].strip(" \t\"'(:-–—"):
            return None  # something other than punctuation comes first
        best = None
        for letter, option in self.option_words.items():
            if only is not None and letter != only:
                continue
            for start in (i, i + 1) if i < len(self.words) and self._article(i) else (i,):
                for words in {tuple(option), tuple(_without_article(option))}:
                    span = self.words[start : start + len(words)]
                    matched = len(span) == len(words) and [w for w, _, _ in span] == list(words) and span[-1][2] <= end \
                        and self.same_case(letter, span)
                    if matched and (best is None or span[-1][2] > best[1]):
                        best = (letter, span[-1][2])
        return best

    def same_case(self, letter: str, span: list[tuple[str, int, int]]) -> bool:
        """Whether the words of a span that match the option's text case-blind match it as written, where case is all
        that tells the option from another."""
        cased = self.cased_options.get(letter)
        return cased is None or [self.text[s:e] for _, s, e in span] == cased[len(cased) - len(span) :]

    def _article(self, i: int) -> bool:
        """Whether word i is an article; "A" written as a letter ("(A) 0.27", "A) 0.27", "A. 0.27") is not."""
        word, start, end = self.words[i]
        if word not in ARTICLES:
            return False
        return not (word == "a" and (self.text[start - 1 : start] == "(" or re.match(r"[ \t]*[).:]", self.text[end : end + 2])))

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

    def _checked(self, letter: str) -> Reading:
        return Reading("one", (letter,)) if letter in self.valid else Reading("out_of_range", (letter,))

    def _one_letter(self, token: Token, with_text: bool, after: int, end: int) -> Reading:
        if token.letter not in self.valid:
            # a letter the model gave an option itself ("(C) the third image" of two options): its text decides
            named = self.option_at(DELIMITER.match(self.text, token.end, end).end(), end)
            return Reading("one", (named[0],), by_text=True) if named else Reading("out_of_range", (token.letter,))
        if not with_text:
            named = self.option_at(DELIMITER.match(self.text, token.end, end).end(), end)
            if named is not None and named[0] != token.letter:
                return Reading("conflict", (token.letter, named[0]))  # "B. a red square" where A is the red square
        if (imaged := self.image_letter(token)) is not None:
            return imaged
        if (conflict := self.label_conflict(token, end, with_text)) is not None:
            return Reading("conflict", (token.letter, conflict))
        if not with_text and (conflict := self.label_ambiguity(token, end)) is not None:
            return Reading("conflict", (token.letter, conflict))
        if not with_text and self.none_with_content(token, end):  # "(C) jump" where (C) is "None of the options are correct."
            return Reading("one", (token.letter,), withheld_as="none_with_answer")
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
        named = _named_letters(self.text[after:clause_end]) - own
        pointed = {o for o, labels in self.option_labels.items() if o != token.letter and labels & named}
        third = named - {token.letter} if any(self.option_labels.values()) else set()
        if pointed or third:  # a letter that another option's text names, or a third one where the options name letters
            return min(pointed or third)
        label = LABELLED.match(self.text, after, clause_end)
        if label and "." not in self.text[token.end : after] and (opening := _named_letters(label.group()) - own - {token.letter}):
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
        if target and any(said[i : i + len(target)] == target for i in range(len(said) - len(target) + 1)):
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
        (C).") or gives a value for it ("(A) 25" where the options are "option B in the image", ...)."""
        holders = self.label_holders.get(token.letter)
        if not holders:
            return None
        after, clause_end = self.after_token(token, end)
        if NUMBER.match(self.text, after, clause_end):
            return min(holders)
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
        begins = {o for o, option in self.option_words.items() if _without_article(option)[: len(words)] == _without_article(words)}
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

    def read_block(self, start: int, end: int) -> Reading | None:
        """Lines after "The correct answer is:": one answer, or a list of options."""
        block_lines = [(s, e) for s, e in self.lines if start <= s and e <= end]
        leads = [tok for s, e in block_lines if (tok := self.token_at(s, e)) is not None]
        if len({t.letter for t in leads}) > 1:
            letters = tuple(dict.fromkeys(t.letter for t in leads))
            return Reading("listed" if set(letters) >= self.valid else "several", letters)
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
            weak = m.re is CONCLUDE_TRIGGER  # "so ..." commits only to an option ("So, B."), not to a null or a list
            if ANSWER_LINE_START.match(self.text[self.text.rfind("\n", 0, m.start()) + 1 : m.end()]):
                rule = "answer_line"
            start, end, is_block = self.phrase_span(m.end())
            reading = self.read_block(start, end) if is_block else self.read_phrase(start, end, stated=True)[0]
            if reading is not None and not (weak and reading.kind != "one"):
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
        return found

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
        none where the lines list the options or analyse each one."""
        if self.listing():  # the first line may answer before the list: "B\n\n- (A) ...: wrong\n- (B) ...: right"
            return self._first_line() if self._answer_before_list() else []
        found = self._first_line()
        for token in self.tokens(0, len(self.text)):  # "...\n\n**C**", "... well lit. **A**", "... lit. A. the bridge"
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
            if lower and not REFUSAL.search(self.text, 0, start):
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

    def list_cut_short(self, line: int) -> bool:
        """Whether a line is the text's last and follows a line that opens a list without stating an answer ("By
        inspection:\n(A)", "Let's check the choices:\n(A)"): the first item of a check cut off, not a choice
        ("The correct answer is:\n(A)" states one)."""
        if line != len(self.lines) - 1 or line == 0:
            return False
        before = self.text[slice(*self.lines[line - 1])]
        return before.rstrip().endswith(":") and not any(
            trigger.search(before) for trigger in (ANSWER_TRIGGER, QUALIFIED_TRIGGER, MY_TRIGGER, VERDICT_TRIGGER, ANSWER_HEADING))

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

    def explained_otherwise(self, letter: str, start: int) -> bool:
        """Whether what the response says from a letter stated at `start` on points away from it, so that the judge
        should read it: the letter's line gives another option's values nearly (`nearer_values`); the last sentence
        names another option's image label (`final_label_option`); a later line says no option fits; or the words
        favour another option ("Answer: (A). The magnetic forces are the same ..." where only (C) says "same";
        "(D)\n\n... none of the objects will sink" of 0-3: see EXPLAINED_WORDS). An option whose text has no telling
        words ("Option B in the image") cannot be favoured by words."""
        if self.nearer_values(letter, start) is not None:
            return True  # "(A) -0.1 x 10^12 $, -1.35 x 10^12 $" where (A) is -0.10, -0.51 and (B) -0.10, -1.32
        if self.final_label_option(start) not in (None, letter):
            return True  # "(A) Option A in the image\n\n... Therefore, ... container C will exhibit droplets first."
        line_end = self.line_end(start)
        if NO_OPTION_FITS.search(self.masked(line_end, len(self.text))) and not NONE_LIKE.search(self.options.get(letter, "")):
            return True  # "... would be:\n(C) $ 11340.11\nBut ... none of the choices provided are accurate."
        if not self.discriminating.get(letter, set()) - META_WORDS:
            return False
        after = len(self.text[start:].split())
        if after < EXPLAINED_WORDS:
            return False
        own, other = self.support(letter)
        return own < other or after >= WORKING_WORDS and own == other

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

    def final_sentence_names(self) -> str | None:
        """The one option whose text the last sentence names, with no letter there ("... The phenotype of this pea
        plant is constricted pods."): where the response opened with another letter, the working concluded against it.
        A negation after the text rejects it ("Option B shows ..., which does not match"); one before it belongs to the
        working ("The ratio of offspring that do not have it to those that have it is 1:3")."""
        if len(self.lines) < 2:
            return None
        start = self.last_sentence_start()
        last = self.text[start:]
        if start <= self.lines[0][1] or self.tokens(start, len(self.text)) or NAMED_LETTER.search(last) \
                or BRACKETED_LETTER.search(last):
            return None  # a letter there
        occurrences = self.option_occurrences(start, len(self.text))
        named = {letter for letter, _, _ in occurrences}
        if len(named) != 1 or NEGATION_WORD.search(self.text, min(e for _, _, e in occurrences)):
            return None
        return named.pop()

    def nearer_values(self, letter: str, start: int) -> str | None:
        """The one other option whose values the letter's line (from the letter stated at or after start) gives
        nearly, each within 10%, where it does not give the letter's own so, and every option and that line give as many
        values: "(A) -0.1, -1.35, 0.946" where (A) is -0.10, -0.51, 0.91 and (B) -0.10, -1.32, 0.91."""
        token = next((t for t in self.tokens(start, len(self.text)) if t.letter == letter), None)
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

    def without_commitment(self) -> Extraction:
        if len(self.text.split()) >= 6 and UNFINISHED.search(self.text):
            return abstain("unfinished", "truncated")  # the conclusion was never written
        echoed = {t.letter for i, t in self.leads.items() if self._own_text_end(t, self.lines[i][1]) is not None}
        if len(echoed) > 1 and echoed >= self.valid:
            return abstain("listing", "all_options_listed")
        start, end = self.conclusion()
        span = self.masked(start, end)
        if NONE_FIT.search(span):
            return abstain("none_of_the_options", "none_fit")
        mentions = [t for t in self.tokens(start, end) if t.strong and not self.rejected(t.start, t.end)]
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
            return Extraction(named.pop(), "option_text", "conclusion_text")
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


ECHO_GAP = re.compile(r"[ \t,;.|]*")
ECHO_ITEM = re.compile(r"[(\[]([A-Za-z])[)\]][ \t]*")


def _words_end(text: str, words: str) -> int | None:
    """Where `words` (joined by single spaces) end at the start of `text`, whatever spaces or tabs stand between them."""
    pos = 0
    for i, word in enumerate(words.split(" ")):
        if i:
            spaces = len(text) - len(text[pos:].lstrip(" \t")) - pos
            if not spaces:
                return None
            pos += spaces
        if not text.startswith(word, pos):
            return None
        pos += len(word)
    return pos


def without_option_echo(text: str, options: list[str], letters: list[str]) -> str:
    """The text with a copy of the option list on one line blanked ("[Choices] (A) 7 (B) 5 (C) 1 Answer: 1"): every
    option's letter with its own text, one after the other, is the prompt repeated, not an answer, and the trigger
    words inside ("(A) the answer is option D") state nothing; a copy may stop early where the text stops, its last
    item cut short. Some options only, with text after them, are several answers, not a copy. A text that
    is only the list is kept (it is read as the options listed). `options`: as `prepare` leaves them."""
    shown = {letter: " ".join(option.split()) for letter, option in zip(letters, options) if option.strip()}
    items = []
    for m in ECHO_ITEM.finditer(text):
        letter = m.group(1).upper()
        option = shown.get(letter)
        if option is None:
            continue
        line_end = text.find("\n", m.end())
        rest = text[m.end() : len(text) if line_end < 0 else line_end]
        if (end := _words_end(rest, option)) is not None:
            items.append((m.start(), m.end() + end, letter))
        elif len(rest.strip()) >= 3 and option.startswith(" ".join(rest.split())) and not text[m.end() + len(rest) :].strip():
            items.append((m.start(), m.end() + len(rest), letter))  # the last item, cut short
    runs, run = [], []
    for item in items:
        if run and not (item[0] >= run[-1][1] and ECHO_GAP.fullmatch(text, run[-1][1], item[0])):
            runs.append(run)
            run = []
        run.append(item)
    runs.append(run)
    blanked = text
    for run in filter(None, runs):
        listed = {letter for _, _, letter in run}
        whole = listed >= set(shown) or not text[run[-1][1] :].strip()  # every option, or up to where the text stops
        if len(listed) >= 2 and whole:  # not "the answer is (A) 6, (B) 4, and (C) 7": several answers
            start, end = run[0][0], run[-1][1]
            blanked = blanked[:start] + " " * (end - start) + blanked[end:]
    return blanked if re.search(r"\w", blanked) else text


def extract_choice(response: str, options: list[str], letters: list[str] | None = None) -> Extraction:
    """The option letter a free-text response to a multiple-choice question chooses (see the module docstring)."""
    letters = letters or [chr(ord("A") + i) for i in range(len(options))]
    text = prepare(response)
    if not text:
        return abstain("empty", "empty")
    shown = [prepare(str(option)) for option in options]
    reader = _Reader(without_option_echo(text, shown, letters), shown, letters)
    commitments = reader.statements() + reader.line_commitments()
    cut = len(text.split()) >= 6 and bool(UNFINISHED.search(text))
    if not commitments:
        return _committed(reader.without_commitment(), cut)
    settled = _settle(text, commitments, lambda reading: "option_text" if reading.by_text else "letter")
    if settled.found and settled.rule in ("first_line", "leading") and reader.final_sentence_names() not in (None, settled.prediction):
        return abstain(settled.rule, "self_contradiction")  # "(B)\n\n... The phenotype is constricted pods." (A's text)
    final_start = max(commitments, key=lambda c: (c.start, c.priority)).start
    if settled.found and reader.explained_otherwise(settled.prediction, final_start):  # the judge reads it
        return Extraction(None, "none", "explained_otherwise", "inconclusive", candidate=settled.prediction)
    if settled.found and reader.lettering_ambiguous(settled.prediction):  # the judge sees which lettering is meant
        return Extraction(None, "none", "image_lettering", "inconclusive", candidate=settled.prediction)
    return _committed(settled, cut)


def _committed(extraction: Extraction, cut: bool) -> Extraction:
    """The extraction, or `inconclusive` with its letter as the candidate where its rule does not commit, or where
    a reading rule read a text that stops mid-sentence (working cut off mid-elimination is no choice)."""
    if extraction.found and (extraction.rule not in COMMITTING_CHOICE_RULES or cut and extraction.tier == READING):
        return Extraction(None, "none", extraction.rule, "inconclusive", candidate=extraction.prediction)
    return extraction


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

NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")
ANSWER_IS = re.compile(r"answer\s*(?:is|:|=)\s*([^\n]+)", re.IGNORECASE)
FRACTION = re.compile(r"\(?\s*([-+]?\d+(?:\.\d+)?)\s*\)?\s*/\s*\(?\s*(\d+(?:\.\d+)?)\s*\)?")
NUMBER_HEDGE = re.compile(r"(?i)\b(?:or|between|either)\b|\d\s*(?:to|-|–)\s*\d")


def parse_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


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
