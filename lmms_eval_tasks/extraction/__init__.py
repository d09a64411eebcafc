"""Deterministic answer extraction that commits only when the response commits; shared by every task.

Every extractor returns an `Extraction`: the prediction, the rule that found it and, when there is no
prediction, the reason (one of record.ABSTAIN_REASONS). A response that does not choose exactly one
existing option gets no prediction -- never a guess or a default letter; it is scored wrong (match
"none") unless an adjudicator decides it (scoring.set_adjudicator).

Precision first: every rule has a tier (one table, RULES, with each rule's measured precision and plain words,
`describe`; `strict` reads a stated letter, `reading` interprets prose),
and a letter from a multiple-choice rule that is not in COMMITTING_CHOICE_RULES -- its measured precision on the
labelled real responses is below 99.9%, or too thinly supported -- is withheld: abstain reason `inconclusive`,
the letter kept as `candidate`, for the adjudication judge. So is a letter a reading rule takes from a text that
stops mid-sentence. `tier_of` gives the tier of a record written before the tier was recorded.

Multiple choice (`extract_choice`) is read in two layers, after a copy of the option list on one line ("[Choices]
(A) 7 (B) 5 Answer: 1", the prompt repeated) is blanked. Every extractor reads a response only up to a later line that
opens a new question or turn ("Question: ...", "Hint: ...", "Human: ...") and before its closing courtesies ("I hope
this helps! Let me know if ..."): few-shot prompts make models go on with questions and answers of their own
(`without_continuation`, `without_courtesy`); drawing code ("[asy] ... [/asy]") is not read either; multiple choice
also stops before a question the response makes up
after answering, recognised by a list of options of its own ("Answer: C\n\n1. A triangle ...?\n(A) 100 sq. feet\n(B)
..."; `without_invented_questions`).

1. Commitments, the places where a response states its answer:
     answer_line       an "Answer: X" line (the CoT format), "Final answer: X", "Answer: (B" cut short, "答案:X"
     answer_statement  "the (correct|best|closest) answer/option (letter) is X", "答案是 X", "正确答案是：X",
                       "所以答案是X";
                       a last sentence that says the thing asked for is X, the letter ending the text ("Therefore,
                       the most aerodynamic shape is (A).", "The odd-one-out is (H).", not "... for (C) C is (C).")
     choice_statement  "my choice: X", "I'd go with X";  so_statement "So, X.";  verdict "Conclusion: X"
     predicate         "X is correct", "X best describes the image", "the third image is more similar"
     boxed             \\boxed{X}
     whole             the response is a letter: "B", "(B)", "**B**", "Option B", "c", "b)", "Point A"
     first_line        the first line is a letter and the rest explains: "B\\n\\nBecause ..."; it also stands
                       before a list that analyses each option
     leading           a line opens with a letter: "B. Paris", "(B) the second image", "A is closer.", "b. Paris"
     option_text       the first line, or the opening sentence, is exactly one option's text
     letter_line       a later line or sentence is only a letter: "...\\n\\n**C**", "... well lit. (A)", "... b)"; also
                       the last line, a letter with its own text, under a concluding line that introduces it
                       ("Therefore, the logical conclusion ... is:\\n\\n**D) Some malicious are not viruses**")
                       after an analysis of each option
   `_Reader.read_phrase` reads what a commitment says: one letter (with or without its option text),
   an option's text, several letters ("A, C"; "A or C" and "B/C" are hedges), the option list, a null
   answer ("N/A", "none of the options"), a letter that is not an option, or a letter followed by
   another option's text. The last commitment decides; if it contradicts an earlier one, it wins only
   when a correction ("wait", "actually", "on second thought", "But since 80° is not the correct angle", ...) stands
   between them, else the
   response contradicts itself; a letter that a committing rule also reads is committed by that rule. Earlier readings
   that choose nothing do not contradict it: letters that are no option, read by a rule other than an answer statement
   ("P, Q, and R lie on the same line", "choose M and N"), the options written out under a statement ("the closest
   match:\n(A) ...\n(D) ..."), a letter given a value where no option holds one ("the correct answer is (A) 40°" before
   "[Answer]\n(B) False" of True / False / Not sure: the image's question, not the prompt's). "So, B." commits only
   where the sentence ends on the option ("so Sample B particles have ..." does not). Lines
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
   image's labels ("container C", "labeled as (C) in the image"), or with a value ("(B) 336"), may be either lettering:
   `image_lettering` withholds it (`inconclusive`, for the judge, who sees the image) -- unless the response states it
   as its answer ("The correct answer is (D)."): that is the prompt's option, as readers label it, except where the
   response writes an option list of its own ("(A) 295 ... (D) 0") or the sentence before names the same letter as a
   label another option's text carries ("Point C is the darkest. The answer is C." where (A) is "Point C in the image"). A letter stated before an explanation that favours
   another option -- says more of the words that tell another option's text apart than of its own, or, before a working
   of 40 words or more, no more of its own than of another's (EXPLAINED_WORDS, WORKING_WORDS) --, before a later line
   that says no option fits ("But this option still does not match. None of the choices provided are accurate."), with
   another option's values nearly ("(A) -0.1, -1.35" where (B) is -0.10, -1.32), or before a last sentence that names
   another option's image label ("... container C will exhibit droplets first.") is withheld the same way
   (`explained_otherwise`): what follows a letter may point elsewhere. A letter stated as the answer ("The answer is
   (D) Wolf.", "Answer: D", \\boxed{D}: ANSWER_STATEMENT_RULES) is not withheld for the words of its working, only
   where the working's last sentence names another option's text; nor for a text that stops mid-sentence after it. A
   letter right after a sentence that ends on another option's text as its result ("Therefore, the degree of angle C
   is 40°. So the answer is (A)." where (C) is 40°) contradicts itself. Lines that each rate an option in turn
   ("Option A is true because ...\nOption B is true ...") choose none of them, and a letter of its own before a list of
   the options ("... quarter past eight. (E)\n\n(A) Half. ...") is an answer before the list. The option list written out again and again
   ("(A) 7:00 AM. | (B) 7:15 AM. | ... | (A) 7:00 AM. | ...") is no answer, and neither is a last line that is a
   letter under a line opening a list ("By inspection:\n(A)": a check cut off; "Therefore, the box that comes next is:\n(E)"
   concludes). An opening letter
   whose last sentence names another option, and an option line quoted while the working goes on, are no
   answer. A letter followed by other letters written as items ("(A), she studies. (B), she sleeps.") or a
   bracket of letters ("(A, B) 7") names several. The letter of the option that says no option fits, followed by an
   answer of the model's own ("(C) jump" where (C) is "None of the options are correct."), is withheld
   (`none_with_answer`, `inconclusive`): readers label it both ways.
   A letter written anywhere with another option's whole text and never with its own ("(B) 40°" where (C) is 40°, "C: 6
   √2" where (D) is 6 √2), and a letter stated after a concluding sentence that counts another option's value as its one
   result ("Therefore, there are 3 countries that ...\n\nThe answer is: (C)" where (B) is 3), after a calculation that
   ends on another option's value ("AB = ... = 10m + 10m = 20m.\nSo the correct choice is (C)." where (B) is 20m), or
   after a concluding sentence that lists another option's values in order where every option lists several ("...
   are 2.48, -0.46 and 0.44, respectively. The correct answer is (D)."), contradict themselves; a stated letter whose
   working's last calculation ends on another option's value is withheld (`explained_otherwise`). So does a letter
   after a sentence that calls another option the only one that fits ("Only option (B) has the same number ... So the
   answer is (A)."), and a letter written with another option's text spaced otherwise ("(C) 45.2% - 65.6%" where (B)
   is "45.2%-65.6%"). Two options of the same text ("18" and "18") are neither named by it. A
   stated number that is exactly one option's value answers by it ("x = \\boxed{26} cm" where (D) is "26.0").
2. Without a commitment: a letter the response states anywhere, with its own option's text, as what something is
   ("... the organisms most affected are (C) Snake and raccoon.", "Therefore, the degree of ∠DAE is (D) 60°.", "... is
   B (water).") and in no other such sentence, under no condition, hedge or refusal, is mention_with_text; a list of the
   options (or an analysis of each) followed by a conclusion is read by that conclusion. Then a text that stops
   mid-sentence is truncated; otherwise, within the conclusion
   (all of a short response, the last two sentences of a long one, the last sentence of one that opens
   as working: "Let's analyze ..."), so that letters named in the working are not taken for the answer:
     mention      exactly one letter written as an option label: "(B)", "B)", "option B", "'B'" (inside a
                  refusal or a condition, "If ..., then (C) would be correct", it is none); mention_with_text:
                  followed by its own option text ("is (B) Lynx rufus")
     (then "none of the options", and hedges such as "either ... or", "equally")
     conclusion_text  exactly one option's text that nothing rejects ("not the first image", "rather than ...");
                  closing_text: the response is one plain sentence that ends on that text, of two words or more
                  ("The point closest to the camera is Point C." where the options are "Point A" ... "Point D")
     capital      exactly one stand-alone capital option letter: "I think it's B"
   then, when these name no committed letter, the option's content (`choice._by_content`): where the options are
   Yes and No, the yes or no the answer opens with (yes_no_option: "No, the function is not convex."); where every
   option is a number, the option whose value is the number `extract_number` reads, in a response that names no
   bracketed letter and writes that number only once (value_option: "The perimeter of △OAB is 17."; not in a response
   that names a letter, "B: 5", or says it cannot tell; 35 of 35 right on the fitted samples, committed);
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
answers abstain, and a lone option letter answering an open question is out_of_range. A list of numbers
(`extract_list`) is the answer part's last bracketed list, or the part when it is only numbers; numbers in prose state
none, nor does a list given as an example ("For example, if ...") or beside a refusal. Given the question, the numbers it
gives are not taken for a conclusion's answer where it states several ("Linda will spend $6.80 to buy 0.9 pounds"); a
ratio stated as one is its value ("the ratio ... is 3:2" is 1.5); a conclusion that no number answers ("the limit does
not exist") and an answer in words of arithmetic ("the total minus 10 minus 5") give none. A number is read, in this
order, from an answer line or \\boxed{}, the whole response, a last line that is only a number (number_line), a
closing calculation, a "final value" line or statement (final_value: MathVista's hint asks for it), an "answer is"
statement, the last sentence when it states one result ("Therefore, the range is 250 - 31 = 219.", "There are
five snowmen.", "So Tim needs $85."; conclusion), the one number the response states a result to be
(stated_number), else the only number that is not a bound ("more than 7", "a total of 1,200 ... and 1,500") in a
response that neither refuses nor supposes; what follows the answer as new questions of its own ("Question: ...",
a few-shot continuation) and closing courtesies ("I hope this helps!", "Do you have other questions for me?") are
not read. A sentence that supposes ("If ...", "For example"),
refuses, gives a range ("from 6 to 10"), an expression without its result ("52 + (-78)", "1.33 × T"), a change
without its sign ("a decrease of $1.00"), counts of two kinds of thing ("1 green block and 2 brown cylinders") or
values given "respectively" states no result; a response cut inside a formula, or a number of more than 20 digits
(a generation running away: "0.0000..."), is truncated. A first line that states the answer ("The answer to the
question is 0.", "The value of x is **1**.") and working below it that concludes another number, with no revision
word between ("actually", "wait"), is a self-contradiction: two final answers, as the labelling guide counts them.
Closing lines that give several results, one "name = value" each, below a concluding line that announces them
("Therefore, the components are:\na_x = 9.0\na_y = 5.0"), are several answers. A number bounded after it ("60 or
more") is a bound, and the only number of a response is no answer where it stands between the same two words in the
question ("divided into 2 equal groups"): the question's number, copied. An opening answer that the last sentence
("Therefore, the median is 3.") concludes otherwise is a self-contradiction too; an answer that lists three numbers
or more ("the answer is 1, 2, 3, 4") is several answers; a number that is a term of an expression in words ("Total
objects - 15", "a/2") is none; a power of ten ("10^3") is its value. Numbers an answer copies from the question,
words around them and all ("divided into 3 equal groups"), are not its answer; a one-sentence answer that repeats one
of the question's numbers ("first reaches 2 at 1") gives its other one. Two numbers where one is asked ("the missing
item is 485, 3.") are no answer, and a conclusion read from a loop that repeats one line and is cut off is truncated.

The package reads in stages, one module each: `normalise` (the text a reader looks at), `locate` (where the response
commits, and the conclusion when it does not), `options` (letters and option texts, what a phrase says), `guards`
(what around a stated letter points elsewhere), `admission` (tiers, and which rules commit); `vocabulary` holds the
patterns they share, `readings` the records they pass, `choice` puts multiple choice together and `open_answers`
reads yes/no, numbers and open answers.
"""

from ..record import ABSTAIN_REASONS
from .admission import (
    ANSWER_STATEMENT_RULES,
    COMMITTING_CHOICE_RULES,
    EXPLAINED_WORDS,
    EXTERNAL,
    JUDGE,
    READING,
    RULE_TIERS,
    RULES,
    STRICT,
    TIERS,
    WORKING_WORDS,
    Extraction,
    Rule,
    abstain,
    describe,
    tier_of,
)
from .choice import extract_choice
from .normalise import (
    final_answer_segment,
    normalise_text,
    prepare,
    strip_reasoning,
    without_continuation,
    without_option_echo,
)
from .open_answers import (
    extract_answer_part,
    extract_list,
    extract_number,
    extract_yes_no,
)
from .vocabulary import FUNCTION_WORDS, LETTER, NUMBER, parse_number

__all__ = [
    "ABSTAIN_REASONS", "ANSWER_STATEMENT_RULES", "COMMITTING_CHOICE_RULES", "EXPLAINED_WORDS", "EXTERNAL", "FUNCTION_WORDS", "JUDGE", "LETTER",
    "NUMBER", "READING", "RULE_TIERS", "RULES", "STRICT", "TIERS", "WORKING_WORDS", "Extraction", "Rule", "abstain",
    "describe", "extract_answer_part", "extract_choice", "extract_list", "extract_number", "extract_yes_no", "final_answer_segment",
    "normalise_text", "parse_number", "prepare", "strip_reasoning", "tier_of", "without_continuation",
    "without_option_echo",
]
