"""CAIT: the data format's validator, the balanced answer positions, and the metrics by hand."""

import json

import pytest
from cait_logs import scene_record as record

from lmms_eval_tasks import cait
from lmms_eval_tasks.benchmarks import BY_KEY, BY_TASK
from lmms_eval_tasks.metrics import macro_f1
from lmms_eval_tasks.question import DocError
from lmms_eval_tasks.variants import VARIANTS, apply_variant


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


def png(path, size=(8, 8)):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 30, 30)).save(path)
    return path


def test_folder_errors_name_the_file_line_and_field(tmp_path):
    folder = tmp_path / "cait"
    png(folder / "images" / "a.png")
    (folder / "images" / "empty.png").write_bytes(b"")
    lines = [json.dumps(record()), "{broken", json.dumps(record(id="s2", image="images/missing.png")),
             json.dumps(record()), json.dumps(record(id="s3", image="images/empty.png", style="sketch", verb=3))]
    (folder / "cait.jsonl").write_text("\n".join(lines) + "\n")
    source = folder / "cait.jsonl"
    check = cait.check_folder(folder)
    assert check.problems == [
        f"{source}:2: not valid JSON (Expecting property name enclosed in double quotes)",
        f"{source}:3 (id 's2'): field 'image' names {folder / 'images' / 'missing.png'}, which does not exist",
        f"{source}:4 (id 's1'): duplicate id",
        f"{source}:5 (id 's3'): field 'verb' must be a string, got int; field 'style' is 'sketch', not one of "
        f"['realistic', 'cartoon']; field 'image' {folder / 'images' / 'empty.png'} is not a readable image: "
        f"cannot identify image file '{folder / 'images' / 'empty.png'}'"]
    with pytest.raises(DocError, match=r"cait: 4 bad line\(s\) or record\(s\) among 4 CAIT records:\n  .*cait.jsonl:2: not valid JSON"):
        cait.read_folder(folder)


def test_every_bad_record_is_counted_and_a_corrupt_png_is_named(tmp_path, capsys):
    from lmms_eval_tasks.__main__ import main

    folder = tmp_path / "cait"
    good = png(folder / "images" / "good.png", size=(64, 64)).read_bytes()
    (folder / "images" / "cut.png").write_bytes(good[: len(good) // 2])  # a truncated download
    flipped = bytearray(good)
    flipped[40] ^= 0xFF  # a flipped byte inside a chunk: its CRC no longer matches
    (folder / "images" / "crc.png").write_bytes(bytes(flipped))
    rows = [record(id=f"s{i}", style="sketch") for i in range(30)]
    rows += [record(id="cut", image="images/cut.png"), record(id="crc", image="images/crc.png"),
             record(id="fine", image="images/good.png")]
    (folder / "cait.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["cait-validate", str(folder), "--max-errors", "5"]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"{folder}: 32 bad line(s) or record(s) among 33 CAIT records:\n")
    assert error.count("field 'style' is 'sketch'") == 5 and "  ... and 27 more (raise the limit to list them)" in error
    assert main(["cait-validate", str(folder), "--max-errors", "100"]) == 1
    error = capsys.readouterr().err
    assert f"(id 'cut'): field 'image' {folder / 'images' / 'cut.png'} is not a readable image: " in error
    assert f"(id 'crc'): field 'image' {folder / 'images' / 'crc.png'} is not a readable image: " in error
    assert "(id 'fine')" not in error and "more (raise" not in error
    assert main(["cait-prepare", str(folder), str(tmp_path / "out")]) == 2  # refuses a folder that does not validate
    assert "32 bad line(s)" in capsys.readouterr().err and not (tmp_path / "out").exists()
    (folder / "cait.jsonl").write_text(json.dumps(rows[-1]) + "\n")
    assert main(["cait-validate", str(folder)]) == 0
    assert capsys.readouterr().out == f"1 valid CAIT records in {folder}\n"


def test_a_byte_that_is_not_utf8_is_named_and_never_stored_replaced(tmp_path, capsys):
    from lmms_eval_tasks.__main__ import main

    folder = tmp_path / "cait"
    png(folder / "images" / "a.png")
    latin1 = json.dumps(record(id="s2", common_text="A tiger chases a rabbit.")).encode().replace(b"tiger", b"tig\xe9r")
    (folder / "cait.jsonl").write_bytes(json.dumps(record()).encode() + b"\n" + latin1 + b"\n")
    assert main(["cait-validate", str(folder)]) == 1
    column = latin1.index(b"\xe9") + 1
    assert f"{folder / 'cait.jsonl'}:2: byte 0xe9 at column {column} is not UTF-8" in capsys.readouterr().err
    assert main(["cait-prepare", str(folder), str(tmp_path / "out")]) == 2
    assert "not UTF-8" in capsys.readouterr().err and not (tmp_path / "out").exists()


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
