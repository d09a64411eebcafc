"""What the words mean: the patterns every stage of the reading shares (letters, triggers, negations, hedges,
refusals) and the word lists the option-text comparison uses."""

from __future__ import annotations

import math
import re

# A letter written as an option label. A bracketed, quoted or named letter may be lower case ("(c)").
LETTER = re.compile(
    r"(?i:option|choice|letter)s?[ \t]*[:#]?[ \t]*(?:\(\s*(?P<named_b>[A-Za-z])\s*\)|(?P<named>[A-Z])(?![\w']))"
    r"|\(\s*(?P<bracket>(?<![A-Za-z]\()[a-z]|[A-Z])\s*\)"  # not a function's variable: "f(x)"
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
# a variable: "R = V/I", "A + B", "A - B"; not a letter and its option's text: "C - All of above"
EQUATION = re.compile(r"[ \t]*(?:[=+*^<>≈≠≤≥×÷]|-[ \t]*(?:[\d(]|[A-Z](?![a-z])))")
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
    "element|atom|molecule|ring|bond|hormone|protein|chain|strand|well|tank|wire|pipe|gate|window|door|room|patient|"
    "colou?r"
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
    rf"(?i)\b(?:{QUALIFIER}\s+)*answers?\b(?!\s+(?:choices|options))"
    r"(?:\s+(?:to|for)\s+(?:this|the|your|both|all|these)\s+"  # "for the given question", not "for the first question"
    r"(?:(?!(?:first|second|third|fourth|fifth|\w+th|next|last|other|\d+\w*)\b)[\w-]+\s+){0,2}?(?:questions?|problems?|inquiry|inquiries))?"
    rf"(?:\s+(?:choice|option|letter))?{CONNECTIVE}"
    r"|答案[ \t]*(?:是|为|应为|应该是)?[ \t]*:?[ \t]*"  # "答案:B", "所以答案是C" ("the answer is"; NFKC makes "：" ":")
)
VERDICT_TRIGGER = re.compile(r"(?im)^[ \t]*(?:\d+\.[ \t]*)?(?:final[ \t]+)?(?:conclusion|verdict|decision|choice|selection)[ \t]*:[ \t]*")
ANSWER_HEADING = re.compile(r"(?im)^[ \t]*(?:the\s+)?(?:final\s+|correct\s+)?answers?[ \t]*$")
QUALIFIED_TRIGGER = re.compile(
    rf"(?i)\b{QUALIFIER}\s+(?:option|choice|letter|selection|one|match|description|statement|image|picture|figure|"
    rf"point|box|sequence|graph|diagram|shape|caption)s?\b(?:\s+letter)?(?:\s+(?:to|for)\s+(?:this|the)\s+(?:question|problem))?"
    rf"{CONNECTIVE}"
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
# The same in Chinese, which some models answer MathVista's geometry questions in: "答案是C（64）", "答案:D",
# "正确答案是：D", "答案选项为D" ("the (correct) answer (option) is ...").
ANSWER_TRIGGER_ZH = re.compile(r"(?:正确)?答案(?:选项)?[ \t]*(?:(?:应该|应)?(?:是|为)[ \t]*[:：]?|[:：])[ \t]*")
# The response's last sentence names the thing asked for as an option, the letter ending the text: "Therefore, the most
# aerodynamic shape is (A).", "The odd-one-out is (H).", "The ball that will reach the floor first is (A) A." (where the
# options are the letters themselves): the answer stated with the question's own subject.
SUBJECT_TRIGGER = re.compile(r"(?i)(?<=[\w)\]\"'])[ \t]+(?:is|are|would\s+be|should\s+be|will\s+be|must\s+be)[ \t]+"
                             r"(?:option[ \t]+|choice[ \t]+)?(?=(?-i:\(?([A-Z])\)?(?:[ \t]+\1)?)[ \t]*[.!]?[ \t]*$(?![\s\S]))")
STATEMENT_RULES = ((ANSWER_TRIGGER, "answer_statement"), (SUBJECT_TRIGGER, "answer_statement"), (ANSWER_TRIGGER_ZH, "answer_statement"), (QUALIFIED_TRIGGER, "answer_statement"), (MY_TRIGGER, "choice_statement"),
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
    # "But since 80° is not the correct supplementary angle, the correct answer is: (A)": the earlier answer rejected
    r"|\b(?:but|however)\b[^.!?\n]{0,80}?\b(?:is\s+not|isn't|was\s+not|wasn't)\s+(?:the\s+)?(?:correct|right|valid)\b"
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
    r"|\bnot\s+(?:among|in|one\s+of|listed\s+(?:in|among))\s+the\s+(?:\w+\s+){0,2}(?:options|choices|answers)\b"  # "503, which is not among the choices"
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
SENTENCE_CLOSED = re.compile(r"[ \t]*(?:[.!]|\n|$)")  # what follows a stated answer that ends its sentence
SENTENCE_DONE = re.compile(r"[ \t]*[.!]?[ \t]*$|[ \t]*[.!][ \t]")
# A concluding line that introduces the answer on the line after it: "Therefore, the box that comes next in the sequence
# is:", "Thus, the logical conclusion that can be drawn is:" (an answer, not the opening of a check: "By inspection:").
CONCLUDING_INTRO = re.compile(r"(?i)^\W*(?:therefore|thus|so|hence|consequently|in\s+conclusion|in\s+summary|"
                              r"(?:based\s+on|given|from)\s+(?:the|this|these|my|our)\s+(?:analysis|above|reasoning|observations?)\b)\b[^\n]*?"
                              r"\b(?:is|are|would\s+be|should\s+be|will\s+be|must\s+be)[ \t]*:\W*$")
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
VALUE_END = re.compile(r"[ \t]*(?:°|%|[a-zA-Z]{1,3}\d?\b)?[ \t]*(?:[.!]|\n|$|⟧)")  # "26 cm.", "26", "26⟧"
OPTION_VALUE = re.compile(r"\s*([-+]?\d+(?:\.\d+)?)\s*(?:°|%|[a-zA-Z]{1,3}\d?)?\s*")  # an option that is a value: "45°", "5 cm"


def option_value(option: str) -> float | None:
    """The value of an option that is one ("45°", "5 cm", "26.0"), else None."""
    value = OPTION_VALUE.fullmatch(option)
    return float(value.group(1)) if value else None
ANSWER_LINE_START = re.compile(r"(?i)[ \t]*(?:final\s+)?(?:answer\b|答案)")
HEDGE_AFTER_LETTER = re.compile(
    r"(?i)\b(?:or|either|also\s+(?:possible|plausible|correct|likely|valid|right)|could\s+also|might\s+also|alternatively|"
    r"as\s+well|possibly|perhaps|maybe)\b"
)
BOTH = re.compile(r"(?i)\bboth\b")
UNIT_BEFORE = re.compile(r"[\d°]\s*$")
CLAUSE_BREAK = re.compile(r"[.!?;\n]")
CONTRAST = re.compile(r"(?i)(?:,|;|\.)\s*(?:but|however|yet|whereas|instead)\b(?!.*(?:,|;|\.)\s*(?:but|however|yet|whereas|instead)\b)",
                      re.DOTALL)


NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


def parse_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


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
