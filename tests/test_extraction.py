"""Answer extraction: real-looking responses (table) and the properties every extractor must keep."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmms_eval_tasks.extraction import extract_choice, extract_number, extract_yes_no, strip_reasoning

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
        ("It is a green circle.", "B", "option_text"),
        ("The image shows a dark red square.", "D", "option_text"),  # the contained option yields
        ("I believe B is right", "B", "capital"),
        ("<think>Could be A or maybe D, D looks darker.</think>\nB", "B", "whole"),
        ("Let me reason. The shape is round and green.</think>The answer is B.", "B", "answer_statement"),
        ("The answer is first (A), no wait, the answer is (C).", "C", "answer_statement"),
        ("B\n\nBecause option A is wrong, B fits.", "B", "first_line"),
        ("**B**\n\nOption A is a distractor.", "B", "first_line"),
        ("B, because there is no red square", "B", "leading"),
        ("B (the circle is green)", "B", "leading"),
        ("B because the circle is green", "B", "leading"),
    ],
)
def test_choice_is_extracted_from_verbose_responses(response, letter, rule):
    extraction = extract_choice(response, OPTIONS)
    assert (extraction.prediction, extraction.rule) == (letter, rule)
    assert extraction.match == ("option_text" if rule == "option_text" else "letter")


@pytest.mark.parametrize(
    "response",
    [
        "",
        "   ",
        "<think>The answer is B</think>",  # only reasoning, no answer
        "<think>still thinking about (A)",  # unclosed reasoning block
        "(A) or (B)",
        "Either A) or C) could be right.",
        "A cat sits on the mat.",  # an article, not an option
        "the answer is a cat",
        "Z",
        "I cannot tell from this image.",
        "It is a red square or a green circle.",
        "Answer: (A) or (B)",  # an answer line naming two options
        "Answer: A. a red square, but C. a blue triangle is also possible",
        "B. Because option A is wrong",  # the opening line names another option
    ],
)
def test_inconclusive_responses_yield_no_prediction(response):
    extraction = extract_choice(response, OPTIONS)
    assert extraction.prediction is None and extraction.match == "none"


@pytest.mark.parametrize(
    "response, answer",
    [("Yes", "Yes"), ("no", "No"), ("No, there is no dog in the image.", "No"), ("**Yes**, it is.", "Yes"),
     ("There is a dog on the left, yes.", "Yes"), ("Let me check.\nAnswer: No", "No"), ("<think>no?</think>Yes", "Yes")],
)
def test_yes_no(response, answer):
    assert extract_yes_no(response).prediction == answer


@pytest.mark.parametrize("response", ["", "Maybe.", "I see yes and no arguments here."])
def test_yes_no_inconclusive(response):
    assert extract_yes_no(response).prediction is None


@pytest.mark.parametrize(
    "response, number",
    [("42", "42"), ("The answer is 3.5 cm", "3.5"), ("1,234", "1234"), ("Answer: -2.5", "-2.5"), ("12%", "12"),
     ("First 3 apples, then 4 more, so 7 in all.\nAnswer: 7", "7"), ("There are 5 birds.", "5"),
     ("-2", "-2"), (".5", ".5"), ("\u22122", "-2"), ("-12 cm", "-12"), ("Answer: 12 - 5 = 7", "7"),
     ("So the answer is 3 + 4 = 7.", "7")],
)
def test_numbers(response, number):
    assert extract_number(response).prediction == number


def test_numbers_refuse_ambiguity():
    assert extract_number("x = 4, y = 5").prediction is None
    assert extract_number("no digits here").prediction is None


def test_reasoning_is_stripped_but_the_answer_kept():
    assert strip_reasoning("<think>A?\nB?</think>\n\nC") == "C"
    assert strip_reasoning("<think>unfinished") == ""


# ---------------------------------------------------------------- properties

option_text = st.text(alphabet=st.characters(whitelist_categories=("Ll",), max_codepoint=127), min_size=3, max_size=12)
option_lists = st.lists(option_text, min_size=2, max_size=9, unique=True)
TEMPLATES = ["{L}", "({L})", "{L}.", "**{L}**", "The answer is {L}", "The correct answer is ({L}).", "Answer: {L}",
             "Option {L}", "I pick ({L}) after looking at the picture.", "Final answer: {L}"]


@given(options=option_lists, data=st.data())
def test_a_single_letter_in_a_recognised_pattern_is_that_letter(options, data):
    letter = data.draw(st.sampled_from([chr(65 + i) for i in range(len(options))]))
    template = data.draw(st.sampled_from(TEMPLATES))
    assert extract_choice(template.format(L=letter), options).prediction == letter


@given(options=option_lists, data=st.data())
def test_two_conflicting_letters_yield_no_prediction(options, data):
    letters = [chr(65 + i) for i in range(len(options))]
    first = data.draw(st.sampled_from(letters))
    second = data.draw(st.sampled_from([letter for letter in letters if letter != first]))
    template = data.draw(st.sampled_from(["({a}) or ({b})", "Either {a}) or {b})", "option {a} and option {b}"]))
    assert extract_choice(template.format(a=first, b=second), options).prediction is None


@given(options=option_lists, data=st.data())
def test_naming_one_option_text_selects_it(options, data):
    index = data.draw(st.integers(0, len(options) - 1))
    if any(options[index] in other for i, other in enumerate(options) if i != index):
        return  # the text is part of another option: naming it is not unique
    assert extract_choice(f"It is {options[index]}.", options).prediction == chr(65 + index)
