"""Answer extraction: real-looking responses (table) and the properties every extractor must keep.
The labelled corpus (tests/lmms_eval_tasks/extraction_corpus) is read in test_extraction_corpus.py."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmms_eval_tasks.extraction import (
    COMMITTING_CHOICE_RULES,
    FUNCTION_WORDS,
    Extraction,
    extract_answer_part,
    extract_choice,
    extract_list,
    extract_number,
    extract_yes_no,
    prepare,
    strip_reasoning,
    tier_of,
)
from lmms_eval_tasks.record import ABSTAIN_REASONS

deterministic = settings(derandomize=True, database=None)


def letter_read(extraction: Extraction) -> str | None:
    """The letter the rules read: committed, or withheld as `inconclusive` (its rule does not commit)."""
    return extraction.prediction if extraction.reason != "inconclusive" else extraction.candidate

OPTIONS = ["a red square", "a green circle", "a blue triangle", "a dark red square"]


@pytest.mark.parametrize(
    "response, letter, rule",
    [
        ("B", "B", "whole"),
        ("(C)", "C", "whole"),
        ("D.", "D", "whole"),
        ("**A**", "A", "whole"),
        ("Option B", "B", "whole"),
        ("The correct answer is (B).", "B", "answer_statement"),  # lmms-eval's BLINK read this as "T"
        ("The answer is C", "C", "answer_statement"),
        ("I think the answer is C because the shape has three sides.", "C", "answer_statement"),
        ("Final answer: **D**", "D", "answer_line"),
        ("The shape has three sides and is blue, so it is a triangle.\nAnswer: C", "C", "answer_line"),
        ("Looking closely...\nAnswer: (c)", "C", "answer_line"),
        ("B. a green circle", "B", "leading"),
        ("(A) a red square, since the square is red.", "A", "leading"),
        ("It is a green circle.", "B", "closing_text"),
        ("The image shows a dark red square.", "D", "closing_text"),  # the contained option yields
        ("I believe B is right", "B", "capital"),
        ("I pick (B) after looking.", "B", "choice_statement"),
        ("Looking closely, (B) stands out.", "B", "mention"),
        ("Looking closely, it is (B).", "B", "answer_statement"),  # the last sentence says what it is: option B
        ("<think>Could be A or maybe D, D looks darker.</think>\nB", "B", "whole"),
        ("Let me reason. The shape is round and green.</think>The answer is B.", "B", "answer_statement"),
        ("The answer is first (A), no wait, the answer is (C).", "C", "answer_statement"),
        ("B\n\nBecause option A is wrong, B fits.", "B", "first_line"),
        ("**B**\n\nOption A is a distractor.", "B", "first_line"),
        ("B, because there is no red square", "B", "leading"),
        ("B (the circle is green)", "B", "leading"),
        ("B because the circle is green", "B", "leading"),
        # the opening letter is the answer; the explanation rejects another option (formerly read as inconclusive)
        ("B. Because option A is wrong", "B", "leading"),
    ],
)
def test_choice_is_extracted_from_verbose_responses(response, letter, rule):
    extraction = extract_choice(response, OPTIONS)
    assert (letter_read(extraction), extraction.rule) == (letter, rule)
    if rule in COMMITTING_CHOICE_RULES:
        assert extraction.match == ("option_text" if rule in ("option_text", "closing_text") else "letter")
    else:  # a rule below 99.9% on real text: the letter is withheld for the judge
        assert (extraction.prediction, extraction.match, extraction.reason) == (None, "none", "inconclusive")


@pytest.mark.parametrize(
    "response, reason",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("<think>The answer is B</think>", "empty"),  # only reasoning, no answer
        ("<think>still thinking about (A)", "empty"),  # unclosed reasoning block
        ("(A) or (B)", "hedge"),
        ("Either A) or C) could be right.", "hedge"),
        ("A cat sits on the mat.", "no_answer"),  # an article, not an option
        ("the answer is a cat", "no_answer"),
        ("Z", "out_of_range"),
        ("I cannot tell from this image.", "refusal"),
        ("It is a red square or a green circle.", "hedge"),
        ("Answer: (A) or (B)", "hedge"),  # an answer line naming two options
        ("Answer: A. a red square, but C. a blue triangle is also possible", "hedge"),
        ("Answer: N/A", "refusal"),  # not the letters N and A
        ("None of the options match.", "none_fit"),
        ("Answer: A, C", "several_answers"),
        ("The correct answer is:\n(A) a red square\n(B) a green circle\n(C) a blue triangle\n(D) a dark red square",
         "all_options_listed"),
        ("The answer is (B). Since the square is red, the answer is (A).", "self_contradiction"),
        ("B. a red square", "self_contradiction"),  # B's letter with A's text
        ("To answer this, we first look at the", "truncated"),
    ],
)
def test_inconclusive_responses_yield_no_prediction_and_say_why(response, reason):
    extraction = extract_choice(response, OPTIONS)
    assert (extraction.prediction, extraction.match, extraction.reason) == (None, "none", reason)


@pytest.mark.parametrize("response", ["I am unable to tell. B", "I cannot tell. B", "Unable to determine. B"])
def test_a_lone_capital_after_a_refusal_is_not_an_answer(response):
    """The refusal decides: the capital letter that follows it is not scored as option B."""
    extraction = extract_choice(response, OPTIONS)
    assert (extraction.prediction, extraction.match, extraction.reason) == (None, "none", "refusal")


@pytest.mark.parametrize(
    "response, answer",
    [("Yes", "Yes"), ("no", "No"), ("No, there is no dog in the image.", "No"), ("**Yes**, it is.", "Yes"),
     ("There is a dog on the left, yes.", "Yes"), ("Let me check.\nAnswer: No", "No"), ("<think>no?</think>Yes", "Yes")],
)
def test_yes_no(response, answer):
    assert extract_yes_no(response).prediction == answer


@pytest.mark.parametrize(
    "response, reason",
    [("", "empty"), ("Maybe.", "hedge"), ("I see yes and no arguments here.", "hedge"), ("Answer: N/A", "refusal"),
     ("I cannot tell whether there is a dog.", "refusal"), ("No idea.", "refusal"),
     ("Yes. The answer is no.", "self_contradiction")],
)
def test_yes_no_inconclusive(response, reason):
    extraction = extract_yes_no(response)
    assert (extraction.prediction, extraction.reason) == (None, reason)


def test_yes_no_takes_a_correction():
    assert extract_yes_no("Yes.\n\nWait, looking again, there is no second dog. The answer is no.").prediction == "No"


@pytest.mark.parametrize(
    "response, number",
    [("42", "42"), ("The answer is 3.5 cm", "3.5"), ("1,234", "1234"), ("Answer: -2.5", "-2.5"), ("12%", "12"),
     ("First 3 apples, then 4 more, so 7 in all.\nAnswer: 7", "7"), ("There are 5 birds.", "5"),
     ("-2", "-2"), (".5", ".5"), ("\u22122", "-2"), ("-12 cm", "-12"), ("Answer: 12 - 5 = 7", "7"),
     ("So the answer is 3 + 4 = 7.", "7")],
)
def test_numbers(response, number):
    assert extract_number(response).prediction == number


@pytest.mark.parametrize("response, number", [("Answer: $\\frac{1}{2}$", 0.5), ("The answer is 1/4.", 0.25),
                                              ("\\boxed{42}", 42), ("The difference is 35 - 10 = 25.", 25)])
def test_fractions_boxes_and_a_closing_calculation(response, number):
    assert float(extract_number(response).prediction) == number


@pytest.mark.parametrize("response, reason", [("x = 4, y = 5", "no_answer"), ("no digits here", "no_answer"),
                                              ("Answer: 3 or 4", "hedge"), ("Answer: N/A", "refusal"),
                                              ("I cannot determine the length from the image.", "refusal")])
def test_numbers_refuse_ambiguity(response, reason):
    extraction = extract_number(response)
    assert (extraction.prediction, extraction.reason) == (None, reason)


@pytest.mark.parametrize(
    "response, number, rule",
    [
        # MathVista's hint asks for "the final value": its line or statement is the answer (issue 31 item 5)
        ("Step 1: 5 + 2 = 7 apples.\n\nFinal value: 36", "36", "final_value"),
        ("* The average increase is 4.5%.\n\nThe final value is: 4", "4", "final_value"),
        # the last sentence states the result
        ("The width is 20 cm.\n\nTherefore, the estimated area is 368,740 cm^2.", "368740", "conclusion"),
        ("There are five snowmen in the image.", "5", "conclusion"),
        ("The smallest individual bar in the whole chart has a value of 1.", "1", "conclusion"),
        ("The age gap is 13 years, with the younger man being 13 years old and the older 26.", "13", "conclusion"),
        ("So Tim needs $85.", "85", "conclusion"),  # after "so", its only number
        ("Since there are 6 racks in total, 0 ties are on 3 of them, and therefore 3 racks have at least 0 ties.", "3",
         "conclusion"),  # only what follows "therefore", and "at least 0" bounds
        ("The final value is 52 km/h + (negative of 78 km/h), which simplifies to 12 km/h.", "12", "conclusion"),
        ("The rate of change is -$2 per day.", "-2", "conclusion"),
        ("So, the rate of change between 2014 and 2015 is \\(-1\\) employees per year.", "-1", "conclusion"),  # no range
        ("Therefore, the greatest number of people received a score of 8.", "8", "conclusion"),
        ("Therefore, the magnitude of the field is **2.18x10^5** N/C.", "218000.0", "conclusion"),
        ("So the answer to your question is 3.\n\nIs there anything else I can help you with?", "3", "conclusion"),
        # what comes after the answer as new questions of its own is not read
        ("The answer is: 2\n\nQuestion: How many apples are there?\nSolution: 3 + 3 + 3 = 9 apples.", "2",
         "answer_statement"),
        # a last line that is only a number
        ("* So there were 9 objects, 6 subtracted.\n\n3", "3", "number_line"),
        # the one number the response states a result to be, the rest explaining it
        ("The maximum rating is **70**. It is reached in the year **2009**.\n\nI hope this answers your question.",
         "70", "stated_number"),
        # a numbered working below "how I got the answer:" is no answer statement
        ("The length of CD is **19**.\n\nHere's how I got the answer:\n\n1. We know that AB + CD = AD + BC, so:\n\n"
         "CD = 23 + 16 - 24\n\nTherefore, the length of segment CD is 19.", "19", "conclusion"),
        ("The answer is:\n\n19", "19", "number_line"),
        # the one number of a one-sentence answer that is not a bound ("greater than 0.4%")
        ("The percentage is greater than 0.4% in 3 years.", "3", "conclusion"),
    ],
)
def test_numbers_stated_in_prose(response, number, rule):
    extraction = extract_number(response)
    assert (extraction.prediction, extraction.rule) == (number, rule)


@pytest.mark.parametrize(
    "response, reason",
    [
        ("Final value: N/A", "refusal"),
        ("For example, if the smallest segment is 2 units and the largest 5, the ratio would be 2/5 = 0.40.", "no_answer"),
        ("If the shape is made up of 10 unit squares, then the area of the shape is 10 square units.", "no_answer"),
        ("The range of the numbers is from 6 to 10, with the exception of Friday, which is 5.", "no_answer"),
        ("Therefore, the range is 0 to infinity, or 0-.", "no_answer"),
        ("The rate of change between Wednesday and Thursday is a decrease of $1.00 per day.", "no_answer"),  # no sign
        ("Therefore, the voltage across RL is 4.5V, and the current across RL is 2.1A.", "no_answer"),  # two results
        ("Count the objects preferred by more than 7 people. The final answer will be the total count.", "no_answer"),
        ("Predict the relative increase based on a temperature rise of 2.0 K.", "no_answer"),
        ("The taxi driver drove a total of 1,200 miles in January and 1,500 miles in April.", "no_answer"),
        ("To determine the number of shipments that had exactly 56 boxes, we need more information.", "refusal"),
        ("The question does not provide enough information to determine the value of f(0).", "refusal"),
        ("Hence the time is approximately equal to $1.33 \\cdot T$.", "no_answer"),  # a product, not a value
        ("The image shows a grid of 16 blocks, each 2 meters long.\n\nQuestion: What is the height?\n\nAnswer: The height is 32 meters.", "no_answer"),
        ("We get $ \\frac{12}{290} = 0.067 $\n\nTherefore, the relative increase is $0.0", "truncated"),
    ],
)
def test_numbers_not_committed_in_prose(response, reason):
    extraction = extract_number(response)
    assert (extraction.prediction, extraction.reason) == (None, reason)


@pytest.mark.parametrize("response, letter", [("No, the function is not convex.", "B"),
                                              ("Yes, Violet Red is less than Crimson.", "A")])
def test_yes_or_no_options_are_answered_by_the_opening_yes_or_no(response, letter):
    extraction = extract_choice(response, ["Yes", "No"])
    assert (extraction.prediction, extraction.rule) == (letter, "yes_no_option")


def test_a_value_option_is_read_from_the_number_given_and_committed():
    extraction = extract_choice("The perimeter of △OAB is 17.", ["15", "17", "21", "27"])  # 27 of 27 right, fitted
    assert (extraction.prediction, extraction.rule, extraction.reason) == ("B", "value_option", None)


@pytest.mark.parametrize("response", ["Based on the image, Country 4 has a fiscal deficit of $4.",  # a label too
                                      "The correct answer is (A) 2, (B) 3, (C) 0, (D) 4."])  # letters named
def test_a_value_option_needs_the_value_alone(response):
    assert extract_choice(response, ["4", "1", "2", "3"]).rule != "value_option"


@pytest.mark.parametrize("response, letter", [("所以，∠AOB为48°，答案选项为D。", "D"), ("因此，答案是C（64）。", "C"),
                                              ("正确答案是：D", "D"),
                                              ("The length of AB is 25 units. The correct option letter for this "
                                               "question is C.", "C")])
def test_answer_statements_in_chinese_and_naming_the_option_letter(response, letter):
    extraction = extract_choice(response, ["6", "36", "64", "8"])
    assert (extraction.prediction, extraction.rule) == (letter, "answer_statement")


def test_a_chinese_answer_line_is_an_answer_line():
    extraction = extract_choice("答案:D", ["6", "36", "64", "8"])
    assert (extraction.prediction, extraction.rule) == ("D", "answer_line")


def test_a_chinese_character_is_spaced_from_the_latin_letter_after_it():
    assert prepare("答案为D（64）") == "答案为 D(64)"


def test_a_price_is_no_unclosed_formula():
    assert extract_number("So the total is 120 dollars.\nAnswer: $120").prediction == "120"


@pytest.mark.parametrize("response", ["A", "(B)", "Answer: C", "The answer is D."])
def test_a_letter_answering_an_open_question_is_out_of_range(response):
    extraction = extract_answer_part(response)
    assert (extraction.prediction, extraction.reason) == (None, "out_of_range")


@pytest.mark.parametrize("response, reason", [
    ("I can't see the figure. For example, if your code was [2, 3, 0, 1], the normalized code would be [0, 1, 2, 3].",
     "refusal"),
    ("The code depends on the contour.\n\nFor example, the normalized code would be [0, 1, 2, 3].", "no_answer"),
])
def test_a_bracketed_list_given_as_an_example_or_beside_a_refusal_is_no_answer(response, reason):
    read = extract_list(response)
    assert (read.prediction, read.reason) == (None, reason)


def test_a_list_answer_is_its_bracketed_list_or_a_part_that_is_only_numbers():
    response = "The answer is a list of 8 directions, normalised. The final list is [1, 2, 3, 4, 5, 6, 7, 8]."
    assert (extract_list(response).prediction, extract_list(response).rule) == ("[1, 2, 3, 4, 5, 6, 7, 8]", "bracketed_list")
    assert extract_list("[2014, 2016]").rule == "whole"
    assert extract_list("Answer: 2012 and 2014.").prediction == "2012 and 2014."
    prose = "The line graph saw its peak in 2014, with 8.1 units for women and 10.8 units for men."
    assert (extract_list(prose).prediction, extract_list(prose).reason) == (None, "no_answer")  # which numbers are the list?
    assert extract_list("I cannot determine the years from the image.").reason == "refusal"


def test_a_year_asked_is_the_year_the_conclusion_names_not_its_value():
    question = "Which year recorded the highest share of urban schools with access to electricity?"
    read = extract_number("In 2012, the share of urban schools with access to electricity was 88%.", question)
    assert (read.prediction, read.rule) == ("2012", "conclusion")
    assert extract_number("In 2012, the share was 88%.", "What share did 2012 record?").prediction == "88"
    assert extract_number("The share peaked at 88%.", question).reason == "no_answer"  # a value, and no year
    assert extract_number("The differences are 6.4 and 5.9.\n\nTherefore, the answer is 6.", question).prediction == "6"


@pytest.mark.parametrize("response, number, rule", [
    ("six", "6", "whole"), ("Two.", "2", "whole"),
    ("Final number of objects left: 7", "7", "final_value"),
    ("Initial number: 10\nRemaining: 10 - 2 = 8\nFinal number of objects left: 7\nThanks.", "7", "final_value"),
    ("Dan's Deep Dish made a total of $125,500 in pizza sales.", "125500", "conclusion"),
    ("There is an age gap of 17 years between the two people in the image.", "17", "conclusion"),
])
def test_a_number_word_a_final_line_and_a_one_sentence_answer_are_read(response, number, rule):
    read = extract_number(response, "How many objects are left?")
    assert (read.prediction, read.rule) == (number, rule)


@pytest.mark.parametrize("response", [
    "The model has 2 groups of 4 dots, for a total of 8 dots.",  # which one answers?
    "The two people in the image are the same age.",  # a number word names things, not the answer
    "The highest rate was recorded as 10.8% in 1992, while the lowest rate was 3.8% in 1979.",  # two values
    "Karen bought silk for $36.32 and canvas for $32.68. Karen spent $69.",  # not one sentence: not read this way
])
def test_an_answer_sentence_with_several_numbers_or_none_alone_gives_none(response):
    assert extract_number(response, "The model has 4 dots divided into 2 equal groups. How many?").prediction is None


@pytest.mark.parametrize("response", [
    "The value of y is **4**.\n\nThe angles of a triangle add to 180, so y + 70 + 90 = 180.\n\nTherefore, y is **20**.",
    "The answer to the question is 2.\n\nThere are five red spheres and one green cube. Once the cube is taken away, the number of objects left is 5.",
    "Sure. The number of tiles is **9**.\n\nEach row holds 4 tiles and there are 3 rows.\nSo the count is 12.",
    ("The gap between two major ticks is **5**.\n\nThe major ticks are at 10 and 15.\n\nThe minor ticks are every 2.5 units, "
     "so the gap between minor ticks is 2.5."),
])
def test_an_opening_answer_the_working_then_contradicts_is_no_answer(response):
    # the labelling guide: two different final answers with no correction between them are a self-contradiction
    read = extract_number(response, "What is the value?")
    assert (read.prediction, read.reason) == (None, "self_contradiction")


@pytest.mark.parametrize("response, number", [
    ("The value of y is **20**.\n\nThe angles add to 180, so y + 70 + 90 = 180.\n\nTherefore, y is **20**.", "20"),
    ("The answer is 4.\n\nWait, I miscounted: there is a fifth cube behind the sphere.\n\nSo the answer is 5.", "5"),
    ("After removing the cubes, the answer is zero. Removing the small objects too leaves 1, so the answer is 1.", "1"),
    ("The year with the lowest value was **2013**. Its value that year was $44,068.\n\nThe lowest point is 2013.", "2013"),
    ("There are 3 boxes on the shelf.\n\nEach box holds 4 cans, so there are 12 cans in all.", "12"),  # a fact, not an answer
])
def test_an_opening_answer_agreeing_revised_or_no_answer_at_all_is_no_contradiction(response, number):
    question = "In which year was the value lowest?" if "2013" in response else "How many?"
    assert extract_number(response, question).prediction == number


def test_a_number_bounded_after_it_or_copied_from_the_question_is_no_answer():
    # "60 or more" bounds, as "more than 60" does; "into 2 equal groups" copies the question's words around its 2
    assert extract_number("Of the people listed, at least 6 people did 60 or more push-ups.",
                          "How many people did at least 60 push-ups?").prediction is None
    question = "The model has 4 dots divided into 2 equal groups. There are (_) dots in each group."
    assert extract_number("The model has ___ dots divided into 2 equal groups.", question).prediction is None
    assert extract_number("The model has 2 dots in each group.", question).prediction == "2"  # its own words: an answer


@pytest.mark.parametrize("response, number", [
    ("Therefore, the estimated components of the vector are:\n\na_x = 9.0 cm/s^2\na_y = 5.0 cm/s^2", None),
    ("So the results are:\nVoltage = 4.5 V\nCurrent = 2.1 A", None),
    ("Let's go through this step by step:\nf(1) = 1\nf(2) = 2\nf(4) = 4", "4"),  # working, not results announced
    ("The value of the smallest bar is 0.\n\nThe other bars have the following values:\n* silk: 6\n* tunnel: 2", "0"),
])
def test_closing_lines_that_give_several_announced_results_answer_no_one_number(response, number):
    read = extract_number(response, "What is the value?")
    assert read.prediction == number
    if number is None:
        assert read.reason == "several_answers"


@pytest.mark.parametrize("response, number, reason", [
    ("The smallest bar is at approximately \\(10^3\\).", "1000.0", None),  # a power of ten is its value
    ("The answer is 10^{-2}.", "0.01", None),
    ("The answer is 1.\n\nThe numbers in order are 1, 2, 3 and 5.\n\nTherefore, the median of the numbers is 3.", None,
     "self_contradiction"),  # an opening answer, then a conclusion of another number
    ("The answer is 3.\n\nThe numbers in order are 1, 2, 3 and 5.\n\nTherefore, the median of the numbers is 3.", "3", None),
    ("Every week gains 5 kg, so the answer is 1, 2, 3, 4, 5, 6.", None, "several_answers"),  # a run of numbers
    ("The answer is 1,200.", "1200", None),  # a thousands separator is no run
    ("Simplifying, we have Total objects - 15.\n\nTherefore, the number of objects left is Total objects - 15.", None,
     "no_answer"),  # an expression in words, not its value
])
def test_powers_of_ten_a_contradicted_opening_runs_and_worded_expressions(response, number, reason):
    read = extract_number(response, "What is the value?")
    assert (read.prediction, read.reason) == (number, reason)


@pytest.mark.parametrize("response, question, number", [
    # an answer that copies the question's numbers, words around them and all, answers with its own
    ("Sure! Here is the answer:\n\nThe model has 9 dots divided into 3 equal groups. There are 4 dots in each group.",
     "The model has 9 dots divided into 3 equal groups. There are (_) dots in each group.", "4"),
    # a one-sentence answer that repeats one of the question's numbers gives the other
    ("The function value first reaches 2 at 1.", "When does the function value first reach 2?", "1"),
    ("In the 1990s, Canada had 1 more Nobel Prize winner than Italy.", "In the 1990s, how many more did Canada have?", "1"),
    ("The model has 2 groups of 4 dots, for a total of 8 dots.", "The model has 4 dots divided into 2 equal groups.", None),
    ("The mat costs $12 more than the towel. The final value would be 12.", "How much more does the mat cost?", "12"),
    ("Therefore, the y coordinate of the center of mass is a/2.", "What is the y coordinate?", None),  # a term, no value
])
def test_the_questions_own_numbers_and_terms_of_a_formula_are_not_the_answer(response, question, number):
    assert extract_number(response, question).prediction == number


@pytest.mark.parametrize("response, number, reason", [
    ("The model has 3 dots per group.\n\nTherefore, the final answer would be: 9, 3", None, "several_answers"),
    ("First number: 335 + 150 = 485\nSecond number: 5 - 2 = 3\n\nTherefore, the missing item is 485, 3.", None, "no_answer"),
    ("Therefore, the missing item is 485, which ends the first row.", "485", None),  # one number and words
    ("E = 2 x 4 = 8\nThen:\nE = 8 x 1.5\nE = 8 x 1.5\nE = 8 x 1.5\nE = 8 x", None, "truncated"),  # a loop, cut off
    ("The answer is 0.\n\nThe bars are red.\nThe bars are red.\nThe bars are red.\nThe bars", "0", None),  # said before it
])
def test_a_pair_of_numbers_or_a_loop_cut_off_answers_no_one_number(response, number, reason):
    read = extract_number(response, "What is the value?")
    assert (read.prediction, read.reason) == (number, reason)


def test_open_answers_keep_their_answer_part():
    assert extract_answer_part("The reaction gives water.\nAnswer: water").prediction == "water"
    assert extract_answer_part("24").prediction == "24"


def test_reasoning_is_stripped_but_the_answer_kept():
    assert strip_reasoning("<think>A?\nB?</think>\n\nC") == "C"
    assert strip_reasoning("<think>unfinished") == ""


# ---------------------------------------------------------------- properties

# an option whose text is only a function word ("the", "and") cannot be told from the words around it
option_text = st.text(alphabet=st.characters(whitelist_categories=("Ll",), max_codepoint=127), min_size=3,
                      max_size=12).filter(lambda text: text not in FUNCTION_WORDS)
option_lists = st.lists(option_text, min_size=2, max_size=9, unique=True)
TEMPLATES = ["{L}", "({L})", "{L}.", "**{L}**", "The answer is {L}", "The correct answer is ({L}).", "Answer: {L}",
             "Option {L}", "I pick ({L}) after looking at the picture.", "Final answer: {L}"]


@deterministic
@given(options=option_lists, data=st.data())
def test_a_single_letter_in_a_recognised_pattern_is_that_letter(options, data):
    letter = data.draw(st.sampled_from([chr(65 + i) for i in range(len(options))]))
    template = data.draw(st.sampled_from(TEMPLATES))
    assert letter_read(extract_choice(template.format(L=letter), options)) == letter


@deterministic
@given(options=option_lists, data=st.data())
def test_two_conflicting_letters_yield_no_prediction(options, data):
    letters = [chr(65 + i) for i in range(len(options))]
    first = data.draw(st.sampled_from(letters))
    second = data.draw(st.sampled_from([letter for letter in letters if letter != first]))
    template = data.draw(st.sampled_from(["({a}) or ({b})", "Either {a}) or {b})", "option {a} and option {b}"]))
    assert extract_choice(template.format(a=first, b=second), options).prediction is None


@deterministic
@given(options=option_lists, data=st.data())
def test_naming_one_option_text_selects_it(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    if any(options[index] in other for i, other in enumerate(options) if i != index):
        return  # the text is part of another option: naming it is not unique
    assert letter_read(extract_choice(f"It is {options[index]}.", options)) == chr(65 + index)


@deterministic
@given(options=st.lists(st.lists(option_text.filter(lambda word: not word.endswith("s")), min_size=1, max_size=3, unique=True),
                        min_size=2, max_size=5), data=st.data())  # no plurals: "cats" and "cat" are one word to the check
def test_a_letter_followed_only_by_another_options_own_words_is_never_committed(options, data):
    texts = [" ".join(words) for words in options]
    own = [set(words) - set().union(*(set(other) for j, other in enumerate(options) if j != i)) for i, words in enumerate(options)]
    chosen, other = data.draw(st.permutations(range(len(texts))))[:2]
    if not own[chosen] or not own[other]:
        return  # an option with no word of its own cannot be told apart by words
    word = data.draw(st.sampled_from(sorted(own[other])))
    response = data.draw(st.sampled_from(["Answer: ({L}). It is {W}.", "({L}) {W}", "The correct answer is ({L}) {W}."]))
    extraction = extract_choice(response.format(L=chr(65 + chosen), W=word), texts)
    assert extraction.prediction != chr(65 + chosen), (texts, response, word)


# Options as benchmarks write them (with capitals, digits, punctuation); framing that names no option.
NOUNS = ["the bridge", "a red kite", "Lake Geneva", "3.5 cm", "Vitamin K", "the second image", "about the same",
         "a snowy owl", "Tap 'Settings'", "45°", "Mount Fuji", "the fourth image", "a cat bathes a woman.", "12"]
option_sets = st.lists(st.sampled_from(NOUNS), min_size=2, max_size=10, unique=True)
BEFORE = ["", "Looking at the picture carefully.\n", "The scene is outdoors and well lit. ", "Let me think step by step.\n\n",
          "<think>hmm, the lighting is odd</think>", "Based on the visual evidence in the image, ",
          "**Analysis:** the colors and shapes were compared.\n\n", "Here is my reasoning.\n\n"]
AFTER = ["", "\nHope this helps!", " The scene is outdoors and well lit.", "\n\nThe colors and shapes were compared.",
         "\n\n**Explanation:** the lighting and the outline decide it."]
COMMITMENTS = ["The answer is ({L}).", "Answer: {L}", "**{L}**", "{L}. {T}", "({L}) {T}", "I choose {L}.",
               "\\boxed{{{L}}}", "The correct option is {L}.", "Final answer: {L}", "Option {L}", "My answer: ({L}) {T}",
               "{L} is correct.", "So the answer is {L}.", "The best choice is '{L}'."]


def _letters(options):
    return [chr(65 + i) for i in range(len(options))]


def _framed(data, commitment):
    return data.draw(st.sampled_from(BEFORE)) + commitment + data.draw(st.sampled_from(AFTER))


@deterministic
@given(options=option_sets, data=st.data())
def test_a_committed_answer_in_neutral_framing_is_read(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    letter = _letters(options)[index]
    commitment = data.draw(st.sampled_from(COMMITMENTS)).format(L=letter, T=options[index])
    assert letter_read(extract_choice(_framed(data, commitment), options)) == letter


@deterministic
@given(options=option_sets, data=st.data())
def test_a_second_different_answer_makes_it_abstain(options, data):
    first, second = data.draw(st.lists(st.sampled_from(_letters(options)), min_size=2, max_size=2, unique=True))
    one = data.draw(st.sampled_from(COMMITMENTS)).format(L=first, T=options[ord(first) - 65])
    other = data.draw(st.sampled_from(["The answer is ({L}).", "Answer: {L}", "So the correct option is {L}.",
                                       "Therefore, the answer is {L}."])).format(L=second)
    extraction = extract_choice(_framed(data, f"{one}\nThe texture is smooth.\n{other}"), options)
    assert (extraction.prediction, extraction.reason) == (None, "self_contradiction")


@deterministic
@given(options=option_sets, data=st.data())
def test_a_correction_replaces_the_earlier_answer(options, data):
    first, second = data.draw(st.lists(st.sampled_from(_letters(options)), min_size=2, max_size=2, unique=True))
    marker = data.draw(st.sampled_from(["Wait, no:", "Actually,", "On second thought,", "Hmm, let me re-check.",
                                        "I made a mistake above."]))
    response = f"The answer is ({first}). {marker} the answer is ({second})."
    assert extract_choice(response, options).prediction == second


@deterministic
@given(n=st.integers(2, 10), text=st.text(st.sampled_from(list("ABCDEFGHIJKLMNOPQRSTUVWXYZabc ()[].,:;'\n*/-")),
                                         max_size=60))
def test_the_prediction_is_never_a_letter_outside_the_options(n, text):
    options = [f"choice number {i}" for i in range(n)]
    extraction = extract_choice(text, options)
    assert extraction.prediction is None or extraction.prediction in _letters(options)
    assert (extraction.prediction is None) == (extraction.reason in ABSTAIN_REASONS)


@deterministic
@given(options=option_sets, data=st.data())
def test_permuting_the_options_relabels_the_answer(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    shuffled = data.draw(st.permutations(options))
    template = data.draw(st.sampled_from(["It is {T}.", "The answer is {T}.", "({L}) {T}", "Answer: {L}. {T}",
                                          "{T}", "I would pick {T}."]))
    before = extract_choice(template.format(L=_letters(options)[index], T=options[index]), options)
    moved = shuffled.index(options[index])
    after = extract_choice(template.format(L=_letters(shuffled)[moved], T=options[index]), shuffled)
    assert letter_read(before) == _letters(options)[index]
    assert letter_read(after) == _letters(shuffled)[moved]


# ---------------------------------------------------------------- precision first (issue 17)

STRICT_ANSWERS = ["{L}", "({L})", "**{L}**", "Answer: {L}", "Answer: ({L}) {T}", "{L}. {T}", "({L}) {T}", "Final answer: {L}"]
DISCUSSIONS = ["Option {X} shows {U}, which does not match the picture.", "As for ({X}) {U}, the picture shows otherwise.",
               "{U} ({X}) is less likely here.", "The other choice, {X}, does not fit."]
BULLETS = ["- ({X}) {U}: {why}", "* {X}. {U} - {why}", "{X}) {U}: {why}", "- Option {X} ({U}): {why}"]
RATED, REJECTED = ["correct", "the best fit", "this matches the image"], ["not what the image shows", "ruled out", "wrong"]


def _other(options, letter, data):
    others = [x for x in _letters(options) if x != letter]
    x = data.draw(st.sampled_from(others))
    return x, options[ord(x) - 65]


@deterministic
@given(options=option_sets, data=st.data())
def test_a_discussion_of_other_options_after_a_strict_answer_keeps_its_letter(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    letter = _letters(options)[index]
    answer = data.draw(st.sampled_from(STRICT_ANSWERS)).format(L=letter, T=options[index])
    before = extract_choice(answer, options)
    assert (before.prediction, before.tier) == (letter, "strict")
    discussion = []
    for _ in range(data.draw(st.integers(1, 3))):
        x, text = _other(options, letter, data)
        discussion.append(data.draw(st.sampled_from(DISCUSSIONS)).format(X=x, U=text))
    after = extract_choice(answer + "\n\n" + " ".join(discussion), options)
    assert (after.prediction, after.tier) == (letter, "strict"), after


@deterministic
@given(options=option_sets, data=st.data())
def test_a_per_option_bullet_list_after_a_strict_answer_keeps_its_letter(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    letter = _letters(options)[index]
    answer = data.draw(st.sampled_from(STRICT_ANSWERS)).format(L=letter, T=options[index])
    style = data.draw(st.sampled_from(BULLETS))
    bullets = [style.format(X=x, U=text, why=data.draw(st.sampled_from(RATED if x == letter else REJECTED)))
               for x, text in zip(_letters(options), options)]
    after = extract_choice(answer + "\n\n" + "\n".join(bullets), options)
    assert (after.prediction, after.tier) == (letter, "strict"), after


WORKING = ["Let's look at each option.", "Option {X} shows {U}.", "({X}) {U} seems plausible.", "The answer is ({X})",
           "I think it is {U}", "so the best fit is ({X}) {U}", "Comparing ({X}) and the rest,", "{U} is"]
CUT_ENDS = [" and the", ", but", " which is", " because the", " so", " of the", ","]


@deterministic
@given(options=option_sets, data=st.data())
def test_a_truncated_text_never_commits_through_a_reading_rule(options, data):
    parts = []
    for _ in range(data.draw(st.integers(1, 4))):
        x = data.draw(st.sampled_from(_letters(options)))
        parts.append(data.draw(st.sampled_from(WORKING)).format(X=x, U=options[ord(x) - 65]))
    text = " ".join(parts) + data.draw(st.sampled_from(CUT_ENDS))
    extraction = extract_choice(text, options)
    assert extraction.tier != "reading", (text, extraction)


# Letters written as option letters. A bare lower-case letter running into a sentence ("a The scene ...") is the
# article; a response that is only "b" reads as B (test_choice_is_extracted_from_verbose_responses, the corpus).
LETTER_FORMS = ["({L})", "{L})", "Answer: {L}", "Answer: ({L})", "{L}. {T}", "({L}) {T}", "The answer is ({L}).",
                "{L}) {T}", "The correct option is ({L}) {T}.", "Final answer: {L})", "Answer: {L}. {T}"]


@deterministic
@given(options=option_sets, data=st.data())
def test_upper_and_lower_case_option_letters_read_alike(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    letter = _letters(options)[index]
    form = _framed(data, data.draw(st.sampled_from(LETTER_FORMS)))
    upper = extract_choice(form.format(L=letter, T=options[index]), options)
    lower = extract_choice(form.format(L=letter.lower(), T=options[index]), options)
    assert (lower.prediction, lower.tier) == (upper.prediction, upper.tier)  # the same letter committed, or none
    assert letter_read(upper) == letter


@pytest.mark.parametrize("response", ["I am unable to tell. B", "I cannot tell from the image.\n\nB",
                                      "Sorry, I can't determine which one. B"])
def test_a_lone_capital_after_a_refusal_does_not_score(response):
    extraction = extract_choice(response, OPTIONS)
    assert (extraction.prediction, extraction.candidate) == (None, None)
    assert extraction.reason == "refusal"


@pytest.mark.parametrize(
    "response, options, reason",
    [
        ("Answer: Option C", ["Option C in the image", "Option B in the image", "Option A in the image"], "self_contradiction"),
        ("The correct answer is (A) Container A.", ["Option B in the image", "none", "Option A in the image"], "self_contradiction"),
        ("(C) Point C", ["Point D", "Point A", "Point B", "Point C"], "self_contradiction"),
        ("The correct answer is (A) 0.27.", ["1.17", "0.27", "-0.27", "-1.17"], "self_contradiction"),
        ("Answer: (C). The point lies at -11.8 km.", ["-11.8 km", "-3.2 km", "1.8 km"], "self_contradiction"),
        ("Answer: (C). Country 3", ["Country 3 is richer.", "Country 4 is richer.", "Country 5 is richest."], "self_contradiction"),
        ("Answer: (A, B) 7", ["7", "6", "4"], "several_answers"),
        ("Answer: (A), she is studying. (B), she sleeps. (C), she works.", ["studying", "sleeping", "working"],
         "all_options_listed"),
        # options told apart only by case: "EE" is (D)'s text
        ("The correct answer is (C) EE, as the genotype shows.", ["AA", "ee", "Ee", "EE"], "self_contradiction"),
        # the clause after the letter says only another option's distinctive words or values
        ("Answer: (A). The magnetic forces are the same between the two pairs.",
         ["The magnetic force is stronger in Pair 2.", "The magnetic force is stronger in Pair 1.",
          "The strength of the magnetic force is the same in both pairs."], "self_contradiction"),
        ("Answer: (C). The easternmost points are located at -3.0 and -0.4 kilometers, respectively.",
         ["-3.0 km", "-0.4 km", "-10.4 km"], "self_contradiction"),
        # a label of another letter written as the letter's content: the letter, or the object?
        ("(C) Object A\n\nObject A is denser than water.", ["1", "3", "2", "0"], "self_contradiction"),
        # options whose texts letter other options: a bare letter beside that label, or with a value, means either
        ("The depth is at its minimum at point C.\nThe answer is (C).", ["Point C", "Point B", "Point D", "Point A"],
         "self_contradiction"),
        # the letter of the option that says none fits, with a value (the image's option A?): readers label it both ways
        # (the letter 5 times of 7 on the fitted samples), so it is the judge's
        ("The correct answer is (A) 25.", ["None of the choices is correct.", "option B in the image is right.",
                                           "option A in the image is the right option.", "option C in the image is right."],
         "inconclusive"),
        # no option's word unique to it, but the clause fits another option where it contradicts its own
        ("Answer: (C), the symposium is held at Digital Museum on Thursday.",
         ["Symposium on Thursday at Digital Museum.", "Symposium on Thursday at Hunt Museum.",
          "Symposium on Tuesday at Digital Museum.", "Symposium on Tuesday at Hunt Museum."], "self_contradiction"),
        # the image's own lettering where the options name it: no listed option says "option D in the image"
        ("So, the answer is option (D) in the image.", ["None of the choices is correct.", "option C in the image is right.",
                                                        "the answer is option B in the image", "the answer is option A in the image"],
         "out_of_range"),
        # some options with their texts after "the answer is": several answers, not a copy of the prompt's list
        ("Therefore, the correct answer is (A) 6, (B) 4, and (C) 7.", ["6", "4", "7", "5", "1"], "several_answers"),
        ("The correct answer is (A) 6.7, 7.3 for Point A and (B) 7.3, 5.9 for Point B.",
         ["6.7, 7.3", "7.3, 5.9", "5.9, 7.3", "7.3, 6.7"], "several_answers"),
        # an opening letter whose working ends by naming another option
        ("(B)\n\nThe plant has two alleles d. The phenotype of this pea plant is constricted pods.",
         ["constricted pods", "inflated pods"], "self_contradiction"),
        # options told apart by case: a text in the wrong case is no option's
        ("Answer: Aa", ["aa", "ii", "Ii", "ll"], "no_answer"),
        # an answer whose own line says the choices do not hold it
        ("Five countries.\nAnswer:\n(A) 1. The given choices do not provide this option.", ["2", "3", "5", "4"], "none_fit"),
        # an option quoted to check it, the working going on after it (here cut off)
        ("None matches. Let's recheck using the choices:\n(A) $ 485, $ 184\nCountry 3 GDP = 36426 * 621 = 22.6\nCountry 4 GDP = 18481",
         ["$ 485, $ 184", "$ 364, $ 184", "$ 485, $ 320"], "no_answer"),
        # a quality named as a noun: "hardness" is (A)'s "hard"
        ("Answer: (C). The four objects in the image have the same property: hardness.", ["hard", "opaque", "translucent"],
         "self_contradiction"),
        # a reason that restates another option, and nothing of the letter's own
        ("Answer: (A), because all temperatures in the room are lower, no condensation will develop on the inner wall.",
         ["Option B in the image", "Because all temperatures are lower than the room temperature of 25°C, no containers "
          "will exhibit inner wall condensation.", "Option A in the image"], "self_contradiction"),
        # an option's text continued as a longer option that begins with it: neither text
        ("Answer: Her Excellency The Governor-General, the Governor General, or the Prime Minster, or Her Majesty",
         ["Her Excellency the Governor-General", "The Prime Minister or a local Member of Parliament",
          "Her Excellency the Governor-General, the Prime Minister, or a local Member of Parliament"], "self_contradiction"),
        # an opening letter whose working ends on another option's text, a negation earlier in that sentence
        ("(C) 3:1\n\nThe genotypes are MM, Mm, Mm and mm. The ratio of offspring that do not have it to those that have it is 1:3.",
         ["4:0", "0:4", "3:1", "1:3"], "self_contradiction"),
        # each option described in turn after "Answer: Option A is ..."
        ("Answer: Option A is the sea of darkness. Option B is the light in the darkness.",
         ["Option A in the image", "Option B in the image", "All given choices are wrong."], "several_answers"),
    ],
)
def test_a_letter_with_another_options_text_label_or_value_is_no_answer(response, options, reason):
    extraction = extract_choice(response, options)
    assert (extraction.prediction, extraction.reason) == (None, reason)


@pytest.mark.parametrize(
    "response, options, letter",
    [
        ("[Question] Which? [Choices] (A) 7 (B) 5 (C) 1 Answer: 1", ["7", "5", "1"], "C"),
        ("[Choices] (A) the answer is option D in the image. (B) the solution is option B. Answer: (B",
         ["the answer is option D in the image.", "the solution is option B.", "none"], "B"),
        ("b)", ["x", "y", "z"], "B"),
        ("Answer: b)", ["x", "y", "z"], "B"),
        ("(c) True", ["Not sure", "False", "True"], "C"),
    ],
)
def test_a_copied_option_list_and_letter_forms_are_read_at_their_depth(response, options, letter):
    extraction = extract_choice(response, options)
    assert extraction.prediction == letter, extraction


@pytest.mark.parametrize(
    "response, options, letter",
    [
        ("(c) -0.74", ["-0.41", "0.74", "-0.74", "0.41"], "C"),  # the sign is the option's, not a delimiter
        ("(C) -1.19\n\nThe slope is negative.", ["-5.43", "1.19", "-1.19", "5.43"], "C"),
        ("Answer: Her Excellency the Governor-General.", ["Her Excellency the Governor-General", "The Prime Minister",
                                                          "Her Excellency the Governor-General, the Prime Minister"], "A"),
        ("(A) hard, because the objects do not bend or break when pressed.", ["hard", "opaque", "translucent"], "A"),
        ("(A) Option B in the image, because its temperature is lower than the room temperature.",
         ["Option B in the image", "Because all temperatures are lower than the room temperature of 25°C, no containers "
          "will exhibit inner wall condensation.", "Option A in the image"], "A"),
        ("The correct answer is (C) Ee.", ["AA", "ee", "Ee", "EE"], "C"),
        ("B. Because option A (mitochondrion) lacks the green thylakoid stacks.",
         ["Mitochondrion", "Chloroplast", "Nucleus", "Golgi apparatus"], "B"),  # another option named to reject it
        ("Answer: (C). The game ends at 11:05 AM.", ["10:35 AM.", "2:05 PM.", "12:00 PM.", "11:15 AM."], "C"),  # no option's value
        ("Answer: (E). Point B is at the top left of the map.", ["4.2, 4.2", "4.2, 0.3", "-4.2, 4.2", "0.3, 4.2", "0.3, -6.1"], "E"),
        ("[Answer]\n(C) the correct choice is option D in the image.\n\n[Explanation]\nx + y = 30, so y = 7.5.",
         ["All given choices are wrong.", "option B in the image.", "the correct choice is option D in the image.", "option C"], "C"),
        ("The correct answer is (C) as none of the options in the image are correct.",
         ["Option A in the image", "Option B in the image", "The listed options all appear to be incorrect."], "C"),
        ("(C) is the correct answer.", ["option C in the image is the answer.", "the solution is option D in the image.",
                                        "the solution is option B in the image.", "option A in the image is right."], "C"),
        ("The correct answer is (C) sample B has the higher temperature.",
         ["sample A", "neither; the samples have the same temperature", "sample B"], "C"),  # its own text, then a predicate
        ("The answer is C: statements I and II are true, III is false.", ["I only", "II only", "I and II", "I, II, and III"], "C"),
        ("(B)\n\nThe plant has two alleles d, and the allele D gives inflated pods, not constricted pods.",
         ["constricted pods", "inflated pods"], "B"),  # the last sentence rejects the other option
        ("Therefore, the two samples have the same temperature.\nThe correct answer is (B).",
         ["sample B", "neither; the samples have the same temperature", "sample A"], "B"),  # label B far from the answer
    ],
)
def test_a_letter_whose_clause_fits_it_or_no_option_is_kept(response, options, letter):
    extraction = extract_choice(response, options)
    assert extraction.prediction == letter, extraction


PERMUTED_CONTAINERS = ["Option B in the image", "Option C in the image", "Option A in the image",
                       "No container shows droplets at room temperature."]


@pytest.mark.parametrize(
    "response, options",
    [
        # the response names the image's labels: is "(A)" the prompt's option A or the image's container A (= C)?
        ("The answer is (A).\nThe closest temperature is 28 °C, which is container C.", PERMUTED_CONTAINERS),
        ("Object A is at 9 °C, the coldest.\n\nThe correct answer is (A).", PERMUTED_CONTAINERS),
        ("This corresponds to the option labeled as (C) in the image. Therefore, the correct answer is (C).", PERMUTED_CONTAINERS),
        # the letter with an image letter its option does not name: prompt's (D), or the image's D?
        ("The correct answer is (D) Option D in the image.", ["x", "Option C in the image", "y", "Option A in the image"]),
        ("The correct answer is (C) option C in the image is the appropriate response.",
         ["option B in the image is the right option.", "The given choices are misleading.",
          "option A in the image is the correct answer.", "option D in the image is the appropriate response."]),
    ],
)
def test_a_letter_that_may_be_the_images_lettering_goes_to_the_judge(response, options):
    extraction = extract_choice(response, options)
    assert (extraction.prediction, extraction.reason) == (None, "inconclusive")
    assert extraction.candidate is not None  # kept for the judge, who sees the image


@pytest.mark.parametrize(
    "response, letter",
    [
        ("The answer is (B).", "B"),  # no image label named: the prompt's letter
        ("(B) Option C in the image\n\nContainer C is the coldest.", "B"),  # with its own text
        ("(B) Container C in the image\n\nIt is the coldest.", "B"),  # with its own image letter
        ("Container C is the coldest, so the answer is (B) Option C in the image.", "B"),
    ],
)
def test_a_letter_written_with_its_own_image_letter_is_kept(response, letter):
    assert extract_choice(response, PERMUTED_CONTAINERS).prediction == letter


@pytest.mark.parametrize(
    "response, options",
    [
        ("(A) 7:00 AM. | (B) 7:15 AM. | (C) 5:40 PM. | (D) 7:35 AM. | (A) 7:00 AM. | (B) 7:15 AM.",
         ["7:00 AM.", "7:15 AM.", "5:40 PM.", "7:35 AM."]),
        ("(A) -5.43\n(B) 1.19\n(C) -1.19\n(D) 5.43\n(A) -5.43\n(B) 1.19\n(C) -1.19\n(D) 5.43",
         ["-5.43", "1.19", "-1.19", "5.43"]),
    ],
)
def test_the_option_list_written_out_again_and_again_is_no_answer(response, options):
    extraction = extract_choice(response, options)
    assert (extraction.prediction, extraction.reason) == (None, "all_options_listed")


@pytest.mark.parametrize("response, letter", [
    ("f(0) = 0 or f(0) = 1, so we check the choices.\nBy inspection:\n(A)", None),  # the check's first item, cut off
    ("Let's check the options one by one:\n(B)", None),
    ("f(0) = 0 or f(0) = 1.\nThe correct answer is:\n(A)", "A"),
    ("f(0) = 0 or f(0) = 1.\nFinal answer:\n(A)", "A"),
])
def test_a_last_letter_under_a_line_that_opens_a_list_is_no_choice(response, letter):
    assert extract_choice(response, OPTIONS).prediction == letter


TRADE_BALANCES = ["-0.10 x 10^12 $, -0.51 x 10^12 $, 0.91 x 10^12 $", "-0.10 x 10^12 $, -1.32 x 10^12 $, 0.91 x 10^12 $",
                  "0.91 x 10^12 $, -1.32 x 10^12 $, -0.10 x 10^12 $", "0.91 x 10^12 $, -0.51 x 10^12 $, -0.10 x 10^12 $"]
SINKING = ("(D)\n\nObjects sink if their density is greater than that of water, 1000 kg/m^3.\n\nObject A: 370 kg/m^3 < 1000 "
           "kg/m^3.\nObject B: 117 kg/m^3 < 1000 kg/m^3.\nObject C: 388 kg/m^3 < 1000 kg/m^3.\nObject D: 117 kg/m^3 < 1000 "
           "kg/m^3.\n\nTherefore, none of the objects will sink.")


@pytest.mark.parametrize(
    "response, options, letter",
    [
        # an explanation of ten words or more that says more of another option than of the letter's own
        ("Answer: (B). The ferry is the earliest one of the day. It leaves the harbour at 5:40 AM.",
         ["5:40 AM.", "3:45 PM.", "5:20 PM."], "B"),
        # a working of forty words or more that says no more of the letter's option than of another's
        (SINKING, ["0", "1", "3", "2"], "D"),
        ("(B)\n\nThe first image shows a cat on a mat, and the second one shows a dog on a rug; they differ in the animal "
         "and the floor, and both are photographs taken indoors in daylight by the same camera, so nothing else tells "
         "them apart.", ["a cat", "a dog"], "B"),
        # a later sentence says no option fits
        ("The closest option would be:\n(C) $ 113, $ 368\nBut this option still does not match. None of the choices "
         "provided are accurate.", ["$ 368, $ 113", "$ 113, $ 121", "$ 113, $ 368", "$ 121, $ 113"], "C"),
        # the letter with another option's values, nearly
        ("(A) -0.1 x 10^12 $, -1.35 x 10^12 $, 0.946 x 10^12 $", TRADE_BALANCES, "A"),
        # a working that ends on another image label than the letter's
        ("(A) Option A in the image\n\nContainer A is at 78 °C, container B at 56 °C and container C at 31 °C.\nTherefore, "
         "container C will show droplets on its inner wall first.", ["Option A in the image", "No container shows droplets.",
                                                                     "Option B in the image"], "A"),
    ],
)
def test_a_letter_whose_explanation_favours_another_option_goes_to_the_judge(response, options, letter):
    extraction = extract_choice(response, options)
    assert (extraction.prediction, extraction.reason, extraction.candidate) == (None, "inconclusive", letter)
    assert extraction.rule == "explained_otherwise"


@pytest.mark.parametrize(
    "response, options, letter",
    [
        # the explanation favours the letter's own option
        ("(B) inflated pods\n\nThe allele D gives inflated pods, and this plant has the allele D from one parent.",
         ["constricted pods", "inflated pods"], "B"),
        # other options discussed, each by its letter: what is said of them counts for none
        ("(A)\n\nAs for (B) a red kite, the picture shows otherwise. Lake Geneva (C) is less likely here, and so is (D).",
         ["the bridge", "a red kite", "Lake Geneva", "3.5 cm"], "A"),
        # an option with no telling words of its own ("Option A in the image") cannot be favoured by words
        ("Answer: (A). Option A will develop droplets on the inner wall of the container at room temperature.",
         ["Option A in the image", "Option B in the image", "None: every liquid is below the room temperature of 25 °C, "
          "so no container shows droplets on its inner wall."], "A"),
        # fewer than ten words after the letter
        ("(B) inflated pods. The other one is wrong.", ["constricted pods", "inflated pods"], "B"),
        # values near no option's: the letter, miscalculated
        ("(A) -0.10 x 10^12 $, -5.136 x 10^12 $, 0.91 x 10^12 $", TRADE_BALANCES, "A"),
        # the working ends on the letter's own image label
        ("(C) Option B in the image\n\nContainer A is at 78 °C and container B at 31 °C.\nTherefore, container B shows "
         "droplets first.", ["Option A in the image", "No container shows droplets.", "Option B in the image"], "C"),
    ],
)
def test_a_letter_whose_explanation_does_not_favour_another_option_is_kept(response, options, letter):
    assert extract_choice(response, options).prediction == letter


@pytest.mark.parametrize("response, letter", [
    ("Answer: C is the first n terms in the infinite geometric sequence", "C"),
    ("Answer: Option A is more informal.", "A"),
    ("Answer: Option A is formal because Ms. Dodson wants to bring it up at the next council meeting.", "A"),
])
def test_a_stated_letter_that_is_the_subject_of_a_claim_goes_to_the_judge(response, letter):
    # readers differ on these (the letter, or a description?): the judge reads them with the question
    extraction = extract_choice(response, ["Option A in the image", "Option B in the image", "True"])
    assert (extraction.prediction, extraction.reason, extraction.candidate, extraction.rule) == \
        (None, "inconclusive", letter, "letter_as_subject")


@pytest.mark.parametrize("response, letter", [
    ("Answer: Option A is correct.", "A"), ("The answer is C is the best fit.", "C"), ("Answer: (A) is more formal.", "A"),
])
def test_a_stated_letter_rated_or_bracketed_is_kept(response, letter):
    assert extract_choice(response, ["Option A in the image", "Option B in the image", "True"]).prediction == letter


NONE_LAST = ["Option A in the image", "Option B in the image", "None of the options are correct."]


@pytest.mark.parametrize("response, letter", [("(C) jump", "C"), ("(C) in the mountains of New Guinea", "C"),
                                              ("The correct answer is (C) Acetylene.", "C")])
def test_the_none_option_with_an_answer_of_its_own_goes_to_the_judge(response, letter):
    # none of the options, or that answer? readers label it both ways
    extraction = extract_choice(response, NONE_LAST)
    assert (extraction.prediction, extraction.reason, extraction.candidate, extraction.rule) == \
        (None, "inconclusive", letter, "none_with_answer")


@pytest.mark.parametrize("response", ["(C)", "(C) None of the options are correct.", "(C), as no option matches the image.",
                                      "Answer: (C). None of", "(C) none"])
def test_the_none_option_alone_or_with_its_reason_is_kept(response):
    assert extract_choice(response, NONE_LAST).prediction == "C"


def test_a_withheld_letter_is_inconclusive_with_its_candidate_and_no_tier():
    extraction = extract_choice("The shape is small. The image depicts a green circle.", OPTIONS)
    assert (extraction.prediction, extraction.match, extraction.reason) == (None, "none", "inconclusive")
    assert (extraction.candidate, extraction.rule, extraction.tier) == ("B", "conclusion_text", None)


@pytest.mark.parametrize("rule, match, tier", [("whole", "letter", "strict"), ("answer_statement", "letter", "reading"),
                                               ("option_text", "option_text", "reading"), ("leading", "judge", "judge"),
                                               ("mention", "none", None), (None, "letter", None), ("unknown", "letter", None)])
def test_tier_of_a_record_without_the_field(rule, match, tier):
    assert tier_of(rule, match) == tier


@pytest.mark.parametrize("other, kept", [
    ("2.8, 5.6", True),  # 15% off each value: within 25% but not 10%, so (A) stands
    ("3.1, 6.4", False),  # within 10%: the values are (B)'s, for the judge
])
def test_a_letter_with_values_is_withheld_only_when_another_option_has_them_within_ten_percent(other, kept):
    options = ["5.0, 9.9", other, "1.0, 2.0", "7.0, 8.0"]
    extraction = extract_choice("(A) 3.3, 6.6", options)
    if kept:
        assert (extraction.prediction, extraction.rule) == ("A", "leading")
    else:
        assert (extraction.prediction, extraction.rule, extraction.candidate) == (None, "explained_otherwise", "A")


@pytest.mark.parametrize("response", [
    "(D) None of the above, since none of the options match the colour in the image.",
    "Answer: (D)\n\nThe car is purple. None of the choices provided are accurate.",
])
def test_choosing_the_none_of_the_above_option_and_saying_no_choice_fits_commits_it(response):
    options = ["red", "blue", "green", "None of the above"]
    extraction = extract_choice(response, options)
    assert (extraction.prediction, extraction.reason) == ("D", None)
    other = extract_choice(response.replace("(D)", "(C)"), options)  # any other letter so explained is no answer
    assert other.prediction is None


SHARED_WORDS = {  # options that differ in one word: the sentence's last words are all there is to read
    "points": ["Point A", "Point B", "Point C", "Point D"],
    "images": ["the first image", "the second image", "the third image", "the fourth image"],
    "closer": ["A is closer", "B is closer"],
}


@pytest.mark.parametrize("family, response, letter", [
    ("points", "The point closest to the camera is Point C.", "C"),
    ("points", "Looking at the figure, the highest point is Point B.", "B"),
    ("points", "It is Point D.", "D"),
    ("images", "The image most similar to the reference is the third image.", "C"),
    ("images", "It is the fourth image.", "D"),
    ("closer", "B is closer.", "B"),
    ("closer", "Judging by the size of the objects, A is closer.", "A"),
])
def test_a_sentence_ending_on_an_option_text_that_shares_most_words_commits(family, response, letter):
    extraction = extract_choice(response, SHARED_WORDS[family])
    assert (extraction.prediction, extraction.reason) == (letter, None), extraction


@pytest.mark.parametrize("family, response", [
    ("points", "It might be Point C."),  # tentative
    ("points", "Is it Point C?"),  # a question
    ("points", "The point is not Point C."),  # rejected
    ("images", "The picture is blurry. It is the fourth image."),  # the last of several sentences: conclusion_text
    ("images", "If anything, it is the second image."),  # a condition
])
def test_a_sentence_ending_on_an_option_text_that_hedges_or_asks_does_not_commit(family, response):
    assert extract_choice(response, SHARED_WORDS[family]).prediction is None


def test_a_number_that_runs_away_is_truncated_not_an_answer():
    read = extract_number("The answer is 0." + "0" * 200)
    assert (read.prediction, read.reason) == (None, "truncated")
    assert extract_number("The answer is 0.000001.").prediction == "0.000001"


@pytest.mark.parametrize("response", [
    "There are 1 green matte block and 2 tiny brown cylinders left after subtracting all yellow matte blocks.",
    "There are two large objects behind the shiny double bus and two tiny gray metal objects.",
    "The sums for the two groups are 2.85 and 3.1, respectively.",
])
def test_counts_of_two_things_or_values_given_respectively_answer_no_one_number(response):
    assert extract_number(response).prediction is None


def test_two_counts_added_up_still_answer():
    assert extract_number("There are 3 red cubes and 4 blue cubes, so there are 7 cubes in total.").prediction == "7"
