"""Benchmark adapters over rows with the real column names, the paper's prompts, and bad input."""

import datasets
import pytest
import yaml

from lmms_eval_tasks.benchmarks import BY_KEY
from invscale_demo import fixtures
from lmms_eval_tasks import adapters
from lmms_eval_tasks.catalog import TASKS
from lmms_eval_tasks.generate import TASKS_DIR
from lmms_eval_tasks.hooks import (
    PROMPT_COLUMN,
    QUESTION_COLUMN,
    doc_to_visual,
    prepare_docs,
    process_results,
    question_of,
)
from lmms_eval_tasks.prompts import COT_MCQ_INSTRUCTION, MCQ_INSTRUCTION, build_prompt
from lmms_eval_tasks.question import DocError
from lmms_eval_tasks.record import validate_record


def mmbench_row(**changes):
    rows, _ = fixtures.mmbench_rows()
    return {**{k: v for k, v in rows[2].items() if k != "image"}, **changes}


def test_lettered_prompt_is_appendix_g_with_the_mmbench_hint_first():
    q = adapters.mmbench(mmbench_row(), 2, BY_KEY["MMBench:dev_en"])
    assert build_prompt(q) == (
        "The picture shows a kitchen.\nWhat is in the picture 2?\nA. thing a2\nB. thing b2\nC. thing c2\nD. thing d2\n"
        "Please select the correct answer from the options above. Respond with only the letter of the correct option. "
        "Do not explain. Answer:"
    )


@pytest.mark.parametrize("hint", [None, "nan", float("nan"), ""])
def test_absent_mmbench_hints_are_left_out(hint):
    q = adapters.mmbench(mmbench_row(hint=hint), 2, BY_KEY["MMBench:dev_en"])
    assert q.hint is None and build_prompt(q).startswith("What is in the picture 2?")


def test_mmmu_open_question_uses_the_concise_answer_suffix():
    row = {k: v for k, v in fixtures.mmmu_rows("validation")[3].items() if not k.startswith("image_")}
    q = adapters.mmmu(row, 3, BY_KEY["MMMU:dev_val"])
    assert q.gold == ["24", "24.0"] and q.image_fields == ["image_1"]
    assert build_prompt(q).endswith("\nAnswer concisely with just the final value or term. Answer:")


def test_mmmu_images_follow_their_placeholders():
    row = fixtures.mmmu_rows("dev")[1]
    assert adapters.mmmu(row, 1, BY_KEY["MMMU:dev_val"]).image_fields == ["image_1", "image_2"]


def test_cot_replaces_the_direct_instruction_and_appends_to_preformatted_prompts():
    q = adapters.mmbench(mmbench_row(), 2, BY_KEY["MMBench:dev_en"])
    assert build_prompt(q, "cot").endswith(COT_MCQ_INSTRUCTION) and MCQ_INSTRUCTION not in build_prompt(q, "cot")
    rows, _ = fixtures.blink_rows()
    blink = adapters.blink(rows[0], 0, BY_KEY["BLINK:val"])
    assert build_prompt(blink) == rows[0]["prompt"]
    assert build_prompt(blink, "cot") == rows[0]["prompt"] + "\n" + COT_MCQ_INSTRUCTION


def test_mme_and_mathvista_prompts_are_the_dataset_text():
    row = {"question_id": "count/1.png", "question": "Is it red? Please answer yes or no.", "answer": "Yes", "category": "count"}
    mme = adapters.mme(row, 0, BY_KEY["MME:test"])
    assert build_prompt(mme) == "Is it red? Please answer yes or no."
    rows, _ = fixtures.mathvista_rows()
    assert build_prompt(adapters.mathvista(rows[1], 1, BY_KEY["MathVista:testmini"])) == rows[1]["query"]


def test_scienceqa_integer_answer_becomes_a_letter_and_ids_use_the_split_row():
    rows, _ = fixtures.scienceqa_rows()
    q = adapters.scienceqa(rows[3], 3, BY_KEY["ScienceQA:test"])
    assert q.gold == "D" and q.question_id == "scienceqa-test-3"


def test_mathvista_multi_choice_gold_is_the_letter_of_the_answer_text():
    rows, _ = fixtures.mathvista_rows()
    q = adapters.mathvista(rows[0], 0, BY_KEY["MathVista:testmini"])
    assert q.options == ["3", "4", "5", "6"] and q.gold == "C" and q.subtask == "geometry problem solving"


# ---------------------------------------------------------------- bad input


def test_missing_field_names_the_row_and_field():
    row = mmbench_row()
    del row["question"]
    with pytest.raises(DocError, match=r"MMBench row 7: missing field 'question'"):
        adapters.mmbench(row, 7, BY_KEY["MMBench:dev_en"])


def test_malformed_options_string_names_the_question():
    row = {**fixtures.mmmu_rows("dev")[0], "options": "['unclosed', "}
    with pytest.raises(DocError, match=r"MMMU dev_Chemistry_1: field 'options' is not a list literal"):
        adapters.mmmu(row, 0, BY_KEY["MMMU:dev_val"])


def test_answer_outside_the_options_is_refused():
    with pytest.raises(DocError, match=r"answer 'F' is not one of the 4 option letters"):
        adapters.mmbench(mmbench_row(answer="F"), 2, BY_KEY["MMBench:dev_en"])


def test_a_gap_in_the_option_columns_is_refused():
    with pytest.raises(DocError, match=r"option columns \['A', 'B', 'D'\] leave a gap"):
        adapters.mmbench(mmbench_row(C=None), 2, BY_KEY["MMBench:dev_en"])


def test_only_the_mmmu_test_split_may_lack_answers():
    row = {**fixtures.mmmu_rows("validation")[0], "answer": ""}
    with pytest.raises(DocError, match=r"MMMU validation_Chemistry_1: field 'answer' is empty"):
        adapters.mmmu(row, 0, BY_KEY["MMMU:dev_val"])
    assert adapters.mmmu(row, 0, BY_KEY["MMMU:test"]).gold is None


def test_a_referenced_image_that_is_missing_is_an_error_not_a_silent_omission():
    rows = [{**row, "image_2": None} for row in fixtures.mmmu_rows("dev")]  # row 1 references <image 2>
    doc = prepare_docs(datasets.Dataset.from_list(rows, features=fixtures.MMMU_FEATURES), "invscale_mmmu_dev_val")[1]
    with pytest.raises(DocError, match=r"image field\(s\) \['image_2'\] are empty"):
        doc_to_visual(doc)
    blink = prepare_docs(datasets.Dataset.from_list(*fixtures.blink_rows()), "blink_val")[0]
    assert len(doc_to_visual(blink)) == 2  # BLINK's unused image slots are simply empty


def test_empty_response_is_scored_wrong_and_recorded_unparsed():
    dataset = datasets.Dataset.from_list([{k: v for k, v in r.items()} for r in fixtures.mmbench_rows()[0]],
                                         features=fixtures.mmbench_rows()[1])
    doc = prepare_docs(dataset, "invscale_mmbench_dev_en")[0]
    result = process_results(doc, [""])
    record = validate_record(result["per_question"])
    assert (record["prediction"], record["correct"], record["match"]) == (None, False, "none")
    assert (result["accuracy"], result["unparsed_rate"]) == (False, True)


def test_duplicate_question_ids_are_refused():
    rows, features = fixtures.mmbench_rows()
    rows[1]["index"] = rows[0]["index"]
    with pytest.raises(DocError, match="duplicate question ids"):
        prepare_docs(datasets.Dataset.from_list(rows, features=features), "invscale_mmbench_dev_en")


# ---------------------------------------------------------------- whole datasets through process_docs


def test_scienceqa_keeps_only_questions_with_an_image():
    rows, features = fixtures.scienceqa_rows()
    docs = prepare_docs(datasets.Dataset.from_list(rows, features=features), "invscale_scienceqa_img_test")
    assert len(docs) == len(rows) - 1
    assert "scienceqa-test-2" not in {question_of(d).question_id for d in docs}


def test_mme_questions_sharing_an_image_get_distinct_ids(tmp_path):
    dataset = datasets.Dataset.from_list(fixtures.mme_rows(tmp_path))
    ids = [question_of(d).question_id for d in prepare_docs(dataset, "invscale_mme_test")]
    assert ids[:2] == ["existence/0000.png#0", "existence/0000.png#1"] and len(set(ids)) == len(ids)


ROWS_WITH_FEATURES = {"MMBench": fixtures.mmbench_rows, "BLINK": fixtures.blink_rows, "MathVista": fixtures.mathvista_rows,
                      "MMT-Bench": fixtures.mmt_bench_rows, "ScienceQA": fixtures.scienceqa_rows}


@pytest.mark.parametrize("task", [t for t, e in TASKS.items() if e.variant in ("reverse", "shift1")
                                  and e.spec.name in ROWS_WITH_FEATURES])
def test_variants_keep_ids_and_the_gold_option_text(task):
    entry = TASKS[task]
    dataset = datasets.Dataset.from_list(*ROWS_WITH_FEATURES[entry.spec.name]())
    direct = {question_of(d).question_id: question_of(d) for d in prepare_docs(dataset, entry.base)}
    for doc in prepare_docs(dataset, task):
        shown, original = question_of(doc), direct[question_of(doc).question_id]
        if shown.kind == "mcq" and shown.gold is not None:
            assert shown.options[shown.letters.index(shown.gold)] == original.options[original.letters.index(original.gold)]
        assert doc[PROMPT_COLUMN] and doc[QUESTION_COLUMN]


@pytest.mark.parametrize("task, rows, with_accuracy", [
    ("invscale_mmbench_dev_en", lambda: fixtures.mmbench_rows(), True),
    ("invscale_mmmu_test", lambda: (fixtures.mmmu_rows("test", with_answers=False), fixtures.MMMU_FEATURES), False),
])
def test_process_results_returns_the_tasks_metrics_and_nothing_else(task, rows, with_accuracy):
    """Every key becomes a results.json entry; a key without its metric in the task's YAML would be an empty one."""
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    metrics = {entry["metric"] for entry in yaml.load((TASKS_DIR / f"{task}.yaml").read_text(), Loader)["metric_list"]}
    doc = prepare_docs(datasets.Dataset.from_list(*rows()), task)[0]
    result = process_results(doc, ["B"])
    assert set(result) == metrics - ({"accuracy"} if not with_accuracy else set())
    assert "response" not in result["per_question"]


@pytest.mark.parametrize("task", [t for t, e in TASKS.items() if e.variant == "identity"
                                  and e.spec.name in ROWS_WITH_FEATURES])
def test_the_identity_variant_re_asks_the_direct_prompt_unchanged(task):
    """Table 43's "identity" row: the same questions, options, gold and prompt as the base task, recorded as
    variant "identity" so that a re-run joins the direct run question by question."""
    entry = TASKS[task]
    dataset = datasets.Dataset.from_list(*ROWS_WITH_FEATURES[entry.spec.name]())
    direct, identity = prepare_docs(dataset, entry.base), prepare_docs(dataset, task)
    assert direct[PROMPT_COLUMN] == identity[PROMPT_COLUMN]
    for before, after in zip(direct, identity):
        shown, original = question_of(after), question_of(before)
        assert shown.variant == "identity" and original.variant == "direct"
        assert (shown.question_id, shown.options, shown.gold, shown.permutation) == \
               (original.question_id, original.options, original.gold, None)


# ---------------------------------------------------------------------------------------------- images
def test_an_image_that_cannot_be_decoded_is_a_doc_error_naming_it(tmp_path, monkeypatch):
    import io

    from PIL import Image

    from lmms_eval_tasks.question import DocError, load_image

    picture = tmp_path / "big.png"
    Image.new("L", (100, 100)).save(picture)
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    damaged = io.BytesIO()
    Image.new("RGB", (50, 50), "red").save(damaged, format="PNG")
    cases = {
        str(tmp_path / "gone.png"): r"gone\.png\): no such file",
        str(empty): r"empty\.png\): not a readable image",
        "not/base64!": r"neither an existing file nor base64",
        "aGVsbG8=": r"\(base64 image\): not a readable image",
    }
    for value, message in cases.items():
        with pytest.raises(DocError, match=rf"^X field 'image'.*{message}"):
            load_image(value, "X field 'image'")
    from PIL import ImageFile

    for truncated_allowed in (False, True):  # lmms-eval's task module allows truncated images when it is imported
        monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", truncated_allowed)
        with pytest.raises(DocError, match=r"\(image bytes\): not a readable image"):
            load_image({"bytes": damaged.getvalue()[:60], "path": None}, "X field 'image'")
        assert ImageFile.LOAD_TRUNCATED_IMAGES is truncated_allowed  # left as it was found
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 100 x 100 is above twice it: Pillow's bomb error
    with pytest.raises(DocError, match=r"big\.png\): refused, too large to decode safely"):
        load_image(str(picture), "X field 'image'")
