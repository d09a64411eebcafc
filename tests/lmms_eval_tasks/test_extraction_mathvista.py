"""The labelled MathVista answers (tests/lmms_eval_tasks/extraction_real/mathvista, text from ../shared/data/mathvista):
the label files keep their format, values compare as numbers, and the dev figures are those the docs state
(docs/extraction_precision.md, issue 31 item 5). Skips, saying so, where the data folder is absent."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extraction_bench import long_prose, mathvista

needs_data = pytest.mark.skipif(not mathvista.DATA_FOLDER.is_dir(), reason=f"no MathVista data at {mathvista.DATA_FOLDER}")


@pytest.fixture(scope="module")
def numeric_dev():
    return mathvista.read_sample(mathvista.load_sample("numeric_dev_1"), mathvista.FREE_FORM)


@pytest.fixture(scope="module")
def mc_dev():
    return mathvista.read_sample(mathvista.load_sample("mc_dev_1"), mathvista.MULTIPLE_CHOICE)


def test_the_label_files_keep_their_format():
    for path in sorted(mathvista.LABELS_FOLDER.glob("*.jsonl")):
        labels = mathvista.load_sample(path.stem)
        assert labels, path
        assert all(label.key.startswith(("mathvista:", "vlmevalkit:")) for label in labels)


@pytest.mark.parametrize(
    "line, kind, message",
    [
        ('{"key": "mathvista:bard/1", "expected": "7"}', mathvista.FREE_FORM, "missing field 'reason'"),
        ('{"key": "bard/1", "expected": "7", "reason": null, "note": null}', mathvista.FREE_FORM, "field 'key'"),
        ('{"key": "mathvista:bard/1", "expected": 7, "reason": null, "note": null}', mathvista.FREE_FORM,
         "not a non-empty string"),
        ('{"key": "mathvista:bard/1", "expected": "b", "reason": null, "note": null}', mathvista.MULTIPLE_CHOICE,
         "not an upper-case letter"),
        ('{"key": "mathvista:bard/1", "expected": null, "reason": "inconclusive", "note": null}', mathvista.FREE_FORM,
         "field 'reason'"),
        ('{"key": "mathvista:bard/1", "expected": "7", "reason": "refusal", "note": null}', mathvista.FREE_FORM,
         "exactly one of"),
        ("not json", mathvista.FREE_FORM, "not valid JSON"),
    ],
)
def test_a_malformed_label_line_is_named(tmp_path, line, kind, message):
    path = tmp_path / "numeric_x.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(mathvista.real.LabelError, match=f"{path}:1: .*{message}"):
        mathvista.load_labels(path, kind)


def test_a_repeated_key_is_named(tmp_path):
    path = tmp_path / "mc_x.jsonl"
    line = json.dumps({"key": "mathvista:bard/1", "expected": "A", "reason": None, "note": None})
    path.write_text(f"{line}\n{line}\n")
    with pytest.raises(mathvista.real.LabelError, match=f"{path}:2: field 'key' .* repeats {path}:1"):
        mathvista.load_labels(path, mathvista.MULTIPLE_CHOICE)


def test_a_sample_name_says_its_kind():
    assert mathvista.sample_kind("numeric_heldout_1") == mathvista.FREE_FORM
    assert mathvista.sample_kind("mc_dev_1") == mathvista.MULTIPLE_CHOICE
    with pytest.raises(mathvista.real.LabelError, match="starts with one of"):
        mathvista.sample_kind("long_dev_1")


def test_a_phrase_label_is_an_answer_no_number_reads():
    assert mathvista._label_values("does not exist") is None
    assert not mathvista.same_values(mathvista._read_values("0", "integer"), mathvista._label_values("does not exist"))


@pytest.mark.parametrize("read, labelled", [("17.6", "17.60"), ("0.75", "3/4"), ("1000", "1,000"), ("-2", "-2.0"),
                                            ("1.5", "3:2")])
def test_values_compare_as_numbers(read, labelled):
    assert mathvista.same_values(mathvista._read_values(read, "float"), mathvista._label_values(labelled))


def test_a_list_compares_its_values_in_order():
    assert mathvista.same_values(mathvista._read_values("[2, 7, 9]", "list"), mathvista._label_values("[2, 7, 9]"))
    assert not mathvista.same_values(mathvista._read_values("[2, 9, 7]", "list"), mathvista._label_values("[2, 7, 9]"))


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9))
def test_a_number_written_out_is_its_own_label(value):
    written = repr(value)
    assert mathvista.same_values(mathvista._read_values(written, "float"), mathvista._label_values(written))


@pytest.mark.parametrize("extraction, letter", [("B", "B"), ("45°", "A"), ("N/A", None), ("E", None), ("46", None)])
def test_the_authors_extraction_names_a_letter_or_a_choice_text(extraction, letter):
    assert mathvista._authors_letter(extraction, ["45°", "90°", "135°"]) == letter


@needs_data
def test_the_numeric_dev_figures_are_those_recorded(numeric_dev):
    totals = mathvista.measures(numeric_dev)
    assert (totals["right"], totals["given"], totals["committed"]) == (158, 158, 163)
    assert (totals["gpt4_right"], totals["gpt4_given"]) == (156, 178)
    assert totals["precision"] >= 0.995 and totals["coverage"] >= 0.95  # issue 31's targets


@needs_data
def test_the_multiple_choice_dev_figures_are_those_recorded(mc_dev):
    totals = mathvista.measures(mc_dev)
    assert (totals["right"], totals["given"], totals["committed"], totals["withheld"]) == (121, 121, 129, 4)
    assert (totals["gpt4_right"], totals["gpt4_given"]) == (124, 135)
    assert set(mc_dev.answer_type) == {"choice_yes_no", "choice_values", "choice_text"}


def recorded_figures(name: str) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """A sample's (right, read, committed, withheld) and the saved GPT extraction's (right, read)."""
    totals = mathvista.measures(mathvista.read_sample(mathvista.load_sample(name), mathvista.sample_kind(name)))
    return ((totals["right"], totals["given"], totals["committed"], totals["withheld"]),
            (totals["gpt4_right"], totals["gpt4_given"]))


@pytest.mark.skipif(not long_prose.VLMEVALKIT_FOLDER.is_dir(), reason=f"no VLMEvalKit files at {long_prose.VLMEVALKIT_FOLDER}")
@needs_data
@pytest.mark.parametrize("name, figures", [
    # (right, read, committed, withheld), then the GPT extraction saved with the run's (right, read): the MathVista
    # authors' GPT-4, or VLMEvalKit's GPT-4o-mini for Qwen2.5-VL-7B's rows. Every earlier held-out sample is fitting data
    # now; each was scored once with frozen rules first (docs/extraction_precision.md):
    # - the first (numeric 149/156, multiple choice 116/116);
    # - the second (48e77bf; two readers, differences settled by a third): free form 260/267 = 97.38%, coverage
    #   260/279 = 93.19%; multiple choice 166/167 = 99.40%, coverage 166/195 = 85.13%, 17 withheld;
    # - the third (6166c3f; 26 free-form and 12 multiple-choice answers of Qwen2.5-VL-7B): free form 165/170 = 97.06%,
    #   coverage 165/175 = 94.29%; multiple choice 156/159 = 98.11%, coverage 156/170 = 91.76%, 12 withheld;
    # - the fourth (af1e20b): free form 158/163 = 96.93%, coverage 158/167 = 94.61%; multiple choice 143/146 = 97.95%,
    #   coverage 143/161 = 88.82%, 11 withheld;
    # - the fifth (free form 34333cd, multiple choice 8b57d08 then 34333cd): free form 151/157 = 96.18%, coverage 151/162 =
    #   93.21%; multiple choice 144/147 = 97.96%, coverage 144/172 = 83.72%, 20 withheld;
    # - the sixth (free form 1b60583 then 72af378, multiple choice 31bca7a with the rules of 34333cd): free form 166/173 =
    #   95.95%, coverage 166/175 = 94.86%; multiple choice 141/143 = 98.60%, coverage 141/167 = 84.43%, 15 withheld.
    # - the seventh (3fbbcc7, scored with de283da): free form 153/157 = 97.45%, coverage 153/170 = 90.00% (the GPT
    #   extraction saved with the runs 163/181); multiple choice 152/153 = 99.35%, coverage 152/169 = 89.94%, 6 withheld
    #   (the GPT extraction 165/181).
    # - the eighth (e851a61, scored with 2de4f3c): free form 150/155 = 96.77%, coverage 150/168 = 89.29% (the GPT
    #   extraction 164/174); multiple choice 152/155 = 98.06%, coverage 152/163 = 93.25%, 10 withheld (the GPT extraction
    #   155/178).
    # - the ninth free-form sample (f14094f, scored with 51e8158): 167/171 = 97.66%, coverage 167/178 = 93.82% (the GPT
    #   extraction 174/188).
    # - the tenth, free form only (4e9e18d): with 51e8158's number rules 165/166 = 99.40%, coverage 165/174 = 94.83%
    #   (with 1981640's, withdrawn, 160/161 and 91.95%); the GPT extraction 171/178.
    # - the eleventh, free form only (303c8a2, scored with abc63b6): 165/166 = 99.40%, coverage 165/170 = 97.06% (the GPT
    #   extraction 169/179).
    # - the twelfth free-form sample (9a9a695, scored with f7a2654): 242/245 = 98.78%, coverage 242/250 = 96.80% (the GPT
    #   extraction 241/262).
    # - the thirteenth free-form sample (73e13d8, scored with fdbe85a): 251/259 = 96.91%, coverage 251/260 = 96.54% (the GPT
    #   extraction 252/275).
    # - the fourteenth free-form sample (e45f430, scored with bbfc942): 256/261 = 98.08%, coverage 256/273 = 93.77% (the
    #   GPT extraction 269/279).
    # - the fifteenth free-form sample (54e8209, scored with 1c547a6): 241/248 = 97.18%, coverage 241/256 = 94.14% (the GPT
    #   extraction 251/266).
    # - the sixteenth free-form sample (3c1b7a0, scored with 00ba507): 238/246 = 96.75%, coverage 238/248 = 95.97% (the GPT
    #   extraction 240/262).
    ("numeric_heldout_1", ((153, 153, 164, 0), (157, 173))),
    ("mc_heldout_1", ((120, 120, 134, 8), (130, 143))),
    ("numeric_heldout2", ((260, 262, 279, 0), (269, 286))),
    ("mc_heldout2", ((172, 172, 195, 13), (192, 216))),
    ("numeric_heldout3", ((167, 170, 175, 0), (167, 183))),
    ("mc_heldout3", ((157, 158, 170, 13), (169, 188))),
    ("numeric_heldout4", ((160, 163, 167, 0), (160, 177))),
    ("mc_heldout4", ((145, 145, 161, 10), (159, 179))),
    ("numeric_heldout5", ((153, 155, 162, 0), (156, 173))),
    ("mc_heldout5", ((149, 151, 172, 15), (165, 188))),
    ("numeric_heldout6", ((168, 171, 175, 0), (169, 180))),
    ("mc_heldout6", ((144, 146, 167, 13), (160, 172))),
    ("numeric_heldout7", ((159, 162, 170, 0), (163, 181))),
    ("mc_heldout7", ((152, 152, 169, 6), (165, 181))),
    ("numeric_heldout8", ((150, 153, 168, 0), (164, 174))),
    ("mc_heldout8", ((152, 152, 163, 11), (155, 178))),
    ("numeric_heldout9", ((168, 171, 178, 0), (174, 188))),
    ("numeric_heldout10", ((167, 167, 174, 0), (171, 178))),
    ("numeric_heldout11", ((166, 166, 170, 0), (169, 179))),
    ("numeric_heldout12", ((242, 242, 250, 0), (241, 262))),
    ("numeric_heldout13", ((252, 256, 260, 0), (252, 275))),
    ("numeric_heldout14", ((260, 263, 273, 0), (269, 279))),
    ("numeric_heldout15", ((241, 247, 256, 0), (251, 266))),
    ("numeric_heldout16", ((238, 243, 248, 0), (240, 262))),
])
def test_the_fitted_held_out_figures_are_those_recorded(name, figures):
    assert recorded_figures(name) == figures


@pytest.mark.skipif(not long_prose.VLMEVALKIT_FOLDER.is_dir(), reason=f"no VLMEvalKit files at {long_prose.VLMEVALKIT_FOLDER}")
@needs_data
@pytest.mark.parametrize("name, figures", [
    # The held-out samples of the current rules, each read blind by two readers, committed before the rules it was
    # scored with were frozen (or, for mc_heldout11 and numeric_heldout18, after rules unchanged since), and scored once.
    # (right, read, committed, withheld), then the GPT extraction saved with the runs (right, read); targets 99.5% and
    # 95%. The multiple-choice rules are those of 51e8158 throughout (fitted, mc_heldout9 would put answer_statement below
    # the admission bar).
    # - mc_heldout9 (--kind short_mathvista_mc --per-file 12 --seed 20261322 --vlmevalkit; readers the same on all 216;
    #   f14094f, rules 51e8158): 144/146 = 98.63%, coverage 144/156 = 92.31%, 10 withheld; GPT coverage 98.72%
    ("mc_heldout9", ((144, 146, 156, 10), (154, 175))),
    # - mc_heldout10 (--seed 20261352; the same on 215 of 216, 1 settled by a third; 9a9a695, rules f7a2654): 153/154 =
    #   99.35%, coverage 153/168 = 91.07%, 9 withheld; GPT coverage 96.43%
    ("mc_heldout10", ((153, 154, 168, 9), (162, 180))),
    # - mc_heldout11 (--seed 20261382; the same on all 216; 54e8209, after the rules of bbfc942): 153/154 = 99.35%,
    #   coverage 153/162 = 94.44%, 6 withheld; GPT coverage 94.44%
    ("mc_heldout11", ((153, 154, 162, 6), (153, 179))),
    # - numeric_heldout17 (--kind mathvista_free_form --per-file 21 --seed 20261403 --chunks 3 --vlmevalkit; the same
    #   on all 378; b74024f, rules da3dadd): 245/249 = 98.39%, coverage 245/264 = 92.80%; GPT coverage 97.35%
    ("numeric_heldout17", ((245, 249, 264, 0), (257, 278))),
    # - numeric_heldout18 (--seed 20261413; the same on all 378; 4d10648, after the final rules a44095c): 237/247 =
    #   95.95%, coverage 237/243 = 97.53%; GPT coverage 95.88%
    ("numeric_heldout18", ((237, 247, 243, 0), (233, 254))),
])
def test_the_held_out_figures_of_the_current_rules_are_those_recorded(name, figures):
    assert recorded_figures(name) == figures


def test_two_readers_of_the_numeric_held_out_agree():
    first = {label.key: label.expected for label in mathvista.load_sample("numeric_heldout_1")}
    second = {label.key: label.expected for label in mathvista.load_sample("numeric_heldout_agreement_1")}
    assert first.keys() == second.keys()
    assert sum(first[key] == second[key] for key in first) == 254


@needs_data
def test_the_scorecard_shows_both_extractions(numeric_dev):
    card = mathvista.scorecard(numeric_dev, "numeric_dev_1")
    assert "authors' GPT-4 extraction" in card and "Per answer type" in card and "Per model" in card
