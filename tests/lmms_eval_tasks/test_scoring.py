"""Scoring: matching rules per question kind, variants' gold remapping, the adjudicator seam, the record."""

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmms_eval_tasks import scoring
from lmms_eval_tasks.question import MCQ, NUMERIC, OPEN, YES_NO, Question
from lmms_eval_tasks.record import RecordError, validate_record
from lmms_eval_tasks.scoring import Judgement, per_question_record, score
from lmms_eval_tasks.variants import (
    VARIANTS,
    apply_variant,
    permutation_for,
    takes_part,
)


def question(kind=MCQ, **fields):
    base = dict(benchmark="BLINK", split="val", subtask="Jigsaw", question_id="val_Jigsaw_1", kind=kind,
                text="Which piece fits?", image_fields=["image_1"])
    if kind == MCQ:
        base.update(options=["the first piece", "the second piece", "the third piece", "the fourth piece"], gold="B")
    base.update(fields)
    return Question(**base)


def test_mcq_correct_wrong_and_unparsed():
    q = question()
    assert score(q, "The answer is (B).") == scoring.Outcome("B", True, "letter", "answer_statement", tier="reading")
    assert score(q, "A").correct is False
    unparsed = score(q, "I am not sure.")
    assert (unparsed.prediction, unparsed.correct, unparsed.match) == (None, False, "none")


def test_option_text_answers_are_scored_and_labelled():
    assert score(question(), "the second piece").match == "option_text"
    assert score(question(), "the second piece").correct is True


def test_yes_no():
    q = question(kind=YES_NO, gold="No", prompt_style="as_is")
    assert score(q, "No, it is not.").correct is True
    assert score(q, "Yes").correct is False


@pytest.mark.parametrize(
    "answer_type, precision, gold, response, correct",
    [
        ("integer", None, "12", "12", True),
        ("integer", None, "12", "The answer is 12.0", True),
        ("integer", None, "12", "13.5", False),
        ("integer", None, "3", "3.7", True),  # MathVista's official int(float(x))
        ("integer", None, "-2", "-2", True),
        ("integer", None, "7", "Answer: 12 - 5 = 7", True),  # the result, not the first number
        ("float", 2, "1.45", "1.449", True),
        ("float", 2, "1.45", "1.46", False),
        ("float", 1, "0.6", "Answer: 0.61", True),
        ("list", None, "[2, 7, 9]", "[2, 7, 9]", True),
        ("list", None, "[2, 7, 9]", "[2, 9, 7]", False),
    ],
)
def test_mathvista_numeric_answers(answer_type, precision, gold, response, correct):
    q = question(kind=NUMERIC, gold=gold, answer_type=answer_type, precision=precision, options=[], prompt_style="as_is")
    assert score(q, response).correct is correct


def test_mathvista_choice_letter_maps_to_the_gold_option_text():
    q = question(options=["3", "4", "5", "6"], gold="C", prompt_style="embedded_choices")
    assert score(q, "(C) 5").correct is True
    assert score(q, "5").correct is True  # the option text itself


@pytest.mark.parametrize(
    "golds, response, correct, match",
    [
        (["24", "24.0"], "24", True, "numeric"),
        (["24", "24.0"], "The yield is 24.00 percent.\nAnswer: 24.00", True, "numeric"),
        (["3.43"], "3.4", False, "numeric"),
        (["carbon dioxide"], "Answer: Carbon Dioxide", True, "exact"),
        (["carbon dioxide"], "oxygen", False, "exact"),
    ],
)
def test_mmmu_open_answers(golds, response, correct, match):
    q = question(kind=OPEN, gold=golds, options=[], prompt_style="open")
    outcome = score(q, response)
    assert (outcome.correct, outcome.match) == (correct, match)


def test_an_open_question_answered_with_a_letter_is_unparsed():
    q = question(kind=OPEN, gold=["24", "24.0"], options=[], prompt_style="open")
    outcome = score(q, "A")
    assert (outcome.prediction, outcome.correct, outcome.match, outcome.abstain_reason) == (None, False, "none", "out_of_range")


@pytest.mark.parametrize("response, reason", [("(A) or (B)", "hedge"), ("Answer: N/A", "refusal"), ("Answer: A, C", "several_answers"),
                                              ("(E)", "out_of_range"), ("", "empty")])
def test_an_abstention_is_recorded_with_its_reason(response, reason):
    q = question()
    record = per_question_record(q, score(q, response))
    assert validate_record(record) is record
    assert (record["prediction"], record["correct"], record["match"], record["abstain_reason"]) == (None, False, "none", reason)


def test_a_prediction_has_no_abstain_reason():
    q = question()
    assert per_question_record(q, score(q, "(B)"))["abstain_reason"] is None


def test_the_record_rejects_an_unknown_reason_and_a_reason_beside_a_prediction():
    q = question()
    record = per_question_record(q, score(q, "(B)"))
    with pytest.raises(RecordError, match="abstain_reason"):
        validate_record({**record, "abstain_reason": "confused"})
    with pytest.raises(RecordError, match="abstain_reason 'hedge' but match 'letter'"):
        validate_record({**record, "abstain_reason": "hedge"})


def test_unknown_gold_scores_null_not_wrong():
    outcome = score(question(gold=None), "B")
    assert (outcome.prediction, outcome.correct) == ("B", None)


def test_adjudicator_decides_only_inconclusive_responses():
    calls = []

    def judge(q, response, extraction, images):
        calls.append((response, extraction.reason, images()))
        return Judgement("B", "local", "judge-model", "B", "settled")

    scoring.set_adjudicator(judge)
    try:
        judged = score(question(), "The piece that fits is the one on the right.", images=lambda: ["image"])
        assert (judged.match, judged.abstain_reason, judged.correct) == ("judge", "no_answer", True)  # reason kept
        record = per_question_record(question(), judged)
        assert validate_record(record)["judge_model"] == "judge-model" and record["judge_verdict"] == "B"
        assert score(question(), "A").match == "letter"
        assert calls == [("The piece that fits is the one on the right.", "no_answer", ["image"])]
    finally:
        scoring.set_adjudicator(None)


def test_a_judge_that_settles_nothing_leaves_the_answer_unparsed_with_its_reason():
    scoring.set_adjudicator(lambda q, response, extraction, images: Judgement(
        None, "local", "judge-model", None, "failed", "judge 'local': request failed (503) after 3 attempt(s)"))
    try:
        outcome = score(question(), "Hmm.")
    finally:
        scoring.set_adjudicator(None)
    record = validate_record(per_question_record(question(), outcome))
    assert (record["match"], record["correct"], record["judge_status"]) == ("none", False, "failed")
    assert "503" in record["judge_error"] and record["abstain_reason"] == "no_answer"
    with pytest.raises(RecordError, match="judge_status"):
        validate_record({**record, "match": "judge", "prediction": "B"})  # judge's answer without status settled
    with pytest.raises(ValueError, match="exactly when its status is 'settled'"):
        Judgement("B", "local", "m", "B", "no_answer")


def test_record_satisfies_the_contract():
    q = question()
    record = per_question_record(q, score(q, "(B)"))
    assert validate_record(record) is record
    assert record["prediction"] == "B" and record["correct"] is True and record["variant"] == "direct"


@pytest.mark.parametrize("variant", ["reverse", "shift1", "shift2", "shift3"])
def test_reordering_keeps_the_question_id_and_the_gold_option(variant):
    q = question()
    shown = apply_variant(q, VARIANTS[variant])
    assert shown.question_id == q.question_id and shown.variant == variant
    assert shown.options[shown.letters.index(shown.gold)] == q.options[q.letters.index(q.gold)]
    assert sorted(shown.options) == sorted(q.options)


def test_shift_moves_each_option_k_places():
    assert permutation_for(VARIANTS["shift1"], 4) == [3, 0, 1, 2]
    assert permutation_for(VARIANTS["reverse"], 3) == [2, 1, 0]


def test_shift_variants_take_only_four_option_questions():
    assert takes_part(VARIANTS["shift2"], question())
    assert not takes_part(VARIANTS["shift2"], question(options=["x", "y"], gold="A"))
    for n in (5, 9):  # a cyclic shift mod 4 has no meaning for them: they must not leak into the task
        assert not takes_part(VARIANTS["shift1"], question(options=[f"o{i}" for i in range(n)], gold="A"))
    assert takes_part(VARIANTS["reverse"], question(options=["x", "y"], gold="A"))


@given(
    n=st.integers(2, 9),
    data=st.data(),
)
def test_reordering_never_changes_the_correctness_of_a_chosen_option(n, data):
    options = [f"option text {i}" for i in range(n)]
    gold = data.draw(st.integers(0, n - 1))
    chosen = data.draw(st.integers(0, n - 1))
    variant = data.draw(st.sampled_from(["reverse", "shift1", "shift2", "shift3"] if n == 4 else ["reverse"]))
    q = question(options=options, gold=chr(65 + gold))
    shown = apply_variant(q, VARIANTS[variant])
    letter_shown = shown.letters[shown.options.index(options[chosen])]
    assert score(shown, f"Answer: {letter_shown}").correct == score(q, f"Answer: {chr(65 + chosen)}").correct
    assert score(shown, options[chosen]).correct == (chosen == gold)


def test_non_mcq_questions_are_not_reordered():
    q = question(kind=OPEN, gold=["24"], options=[], prompt_style="open")
    assert apply_variant(q, VARIANTS["reverse"]) == replace(q, variant="reverse")


def test_a_withheld_letter_keeps_its_candidate_in_the_record():
    q = question()
    outcome = score(q, "After comparing them all, it looks most like (C) to me.")  # `mention`: withheld
    assert (outcome.prediction, outcome.correct, outcome.candidate) == (None, False, "C")
    record = per_question_record(q, outcome)
    validate_record(record)
    assert (record["prediction"], record["rule"], record["candidate"]) == (None, "mention", "C")
    assert record["abstain_reason"] == "inconclusive"
