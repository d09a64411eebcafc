"""CAIT: the data format's validator, the balanced answer positions, and the metrics by hand."""

import json

import pytest

from lmms_eval_tasks import cait
from lmms_eval_tasks.benchmarks import BY_KEY, BY_TASK
from lmms_eval_tasks.metrics import macro_f1
from lmms_eval_tasks.question import DocError
from lmms_eval_tasks.variants import VARIANTS, apply_variant


def record(**changes):
    base = {"id": "s1", "image": "images/a.png", "category": "Animal-Animal",
            "characteristic": "Transposition of traditional predator and prey roles", "verb": "chase",
            "common_text": "A tiger chases a rabbit.", "uncommon_text": "A rabbit chases a tiger.",
            "gt_prompt": "A rabbit chasing a tiger.", "style": "cartoon"}
    return {**base, **changes}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"category": "Plant-Plant"}, "field 'category' is 'Plant-Plant'"),
        ({"characteristic": "Inanimate objects gaining autonomy"}, "field 'characteristic'"),
        ({"style": "sketch"}, "field 'style' is 'sketch'"),
        ({"uncommon_text": "A tiger chases a rabbit."}, "are the same sentence"),
        ({"gt_prompt": ""}, "field 'gt_prompt' is missing or empty"),
        ({"verb": 3}, "field 'verb' must be a string"),
    ],
)
def test_validator_names_the_record_and_field(changes, message):
    with pytest.raises(DocError, match=message):
        cait.validate_cait_record(record(**changes), "scene s1")


def test_folder_errors_name_the_file_line_and_field(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "cait.jsonl").write_text(json.dumps(record()) + "\n{broken\n")
    with pytest.raises(DocError, match=r"cait.jsonl:2: not valid JSON"):
        cait.read_folder(tmp_path)
    (tmp_path / "cait.jsonl").write_text(json.dumps(record()) + "\n")
    with pytest.raises(DocError, match=r"record 1 \(id 's1'\): field 'image' names .*a.png, which does not exist"):
        cait.read_folder(tmp_path)
    (tmp_path / "images" / "a.png").write_bytes(b"")
    (tmp_path / "cait.jsonl").write_text(json.dumps(record()) + "\n" + json.dumps(record()) + "\n")
    with pytest.raises(DocError, match=r"record 2 \(id 's1'\): duplicate id"):
        cait.read_folder(tmp_path)


def test_right_answer_positions_are_balanced_and_deterministic():
    rows = [record(id=f"scene_{i}") for i in range(11)]
    first = [cait.cait(r, i, BY_KEY["CAIT:test"]) for i, r in enumerate(rows)]
    again = [cait.cait(r, i, BY_KEY["CAIT:test"]) for i, r in enumerate(reversed(rows))]
    cait.balance_answer_positions(first)
    cait.balance_answer_positions(again)
    assert sorted(q.gold for q in first).count("A") in (5, 6)
    assert {q.question_id: q.gold for q in first} == {q.question_id: q.gold for q in again}
    for q in first:
        assert q.options[ord(q.gold) - 65] == "A rabbit chases a tiger." and q.details["right_option"] == q.gold


def test_swap_presents_the_other_order():
    q = cait.cait(record(), 0, BY_KEY["CAIT:test"])
    swapped = apply_variant(q, VARIANTS["swap"])
    assert swapped.options == list(reversed(q.options)) and swapped.gold == "B"


def test_cait_is_registered_with_its_balancing_step():
    assert BY_TASK["cait"].finalize == cait.balance_answer_positions.__name__


def test_always_a_model_on_balanced_data():
    golds = ["A", "B"] * 50
    predictions = ["A"] * 100
    assert sum(p == g for p, g in zip(predictions, golds)) / 100 == 0.5
    assert macro_f1(predictions, golds) == pytest.approx(1 / 3)


def test_macro_f1_ignores_a_letter_that_occurs_nowhere():
    assert macro_f1(["A", "A"], ["A", "A"]) == 1.0


def test_macro_f1_by_hand():
    # A: tp=2 fp=1 fn=0 -> 4/5; B: tp=1 fp=0 fn=2 (one answered A, one unparsed) -> 2/4
    assert macro_f1(["A", "A", "A", "B", None], ["A", "A", "B", "B", "B"]) == pytest.approx((4 / 5 + 2 / 4) / 2)
