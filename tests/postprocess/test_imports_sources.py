"""Importing other harnesses' files as they are used today (issue 27): VLMEvalKit's layouts, scoring files and
datasets without letter columns, the scoring audit, model names, subtask spellings and the table format's
answers; and the real VLMEvalKit files of ../shared, whose accuracy is compared with VLMEvalKit's own."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from import_factory import imported, lmms_eval_logs, table_rows, vlmevalkit_frame, write_table
from logfactory import tiny_family_registry_dict
from lmms_eval_tasks.scoring import IMPORTED_PREDICTION_RULE
from model_configs import Registry, load_registry
from postprocess.logs.imports import ImportFormatError, ImportSource, combine, import_outputs, sources_of_models
from postprocess.logs.imports import mapping
from postprocess.logs.imports.audit import audit_notes, scoring_audit
from postprocess.logs.imports.vlmevalkit import VLMEVALKIT_DATASETS, mathvista_hit, options_in_question
from postprocess.logs.ingest import DuplicateRunsError, UnresolvedModelError, ingest_logs

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "vlmevalkit"


@pytest.fixture
def registry() -> Registry:
    return Registry.from_dict(tiny_family_registry_dict())


def write_vlmevalkit(folder: Path, name: str, frame: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    frame.to_excel(path, index=False)
    return path


def vlmevalkit(paths, registry, **options):
    return import_outputs([ImportSource(Path(p), "vlmevalkit", **options) for p in paths], registry, strict=False)


# ---------------------------------------------------------------------------------------------- the dataset map
@pytest.mark.parametrize("dataset", list(VLMEVALKIT_DATASETS))
def test_each_vlmevalkit_dataset_maps_to_its_benchmark_split_and_subtask_column(tmp_path, registry, dataset):
    benchmark, split, column = VLMEVALKIT_DATASETS[dataset]
    frame = vlmevalkit_frame().drop(columns=["category", "l2-category"]).assign(
        **{column: [f"label {i % 2}" for i in range(8)]})
    path = write_vlmevalkit(tmp_path / "Tiny-S", f"Tiny-S_{dataset}.xlsx", frame)
    table = vlmevalkit([path], registry).table.astype(object)
    assert set(table["benchmark"]) == {benchmark} and set(table["split"]) == {split}
    assert sorted(set(table["subtask"])) == ["label 0", "label 1"]


def test_mmmu_subtasks_come_from_subfield_not_category(tmp_path, registry):
    frame = vlmevalkit_frame().assign(subfield="Optics")
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_MMMU_DEV_VAL.xlsx", frame)
    assert set(vlmevalkit([path], registry).table["subtask"].astype(str)) == {"Optics"}


def test_answers_only_partly_yes_or_no_are_open(tmp_path, registry):
    frame = pd.DataFrame({"index": [0, 1], "question": ["Is it red?", "How many?"], "answer": ["Yes", "3"],
                          "category": ["c", "c"], "prediction": ["Yes", "3"]})
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_MME.xlsx", frame)
    assert list(vlmevalkit([path], registry).table["kind"].astype(str)) == ["open", "open"]


def test_answer_type_float_is_numeric(tmp_path, registry):
    frame = pd.DataFrame({"index": [0], "question": ["How long?"], "answer": ["1.5"], "answer_type": ["float"],
                          "topic": ["t"], "prediction": ["It is 1.5 metres."]})
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_Lengths.xlsx", frame)
    table = vlmevalkit([path], registry, subtask_column="topic").table
    assert list(table["kind"].astype(str)) == ["numeric"]


def test_option_columns_a_to_e_keep_e(tmp_path, registry):
    frame = vlmevalkit_frame(n=1).assign(E="a purple hexagon", answer="E", prediction="E")
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_MMBench_DEV_EN.xlsx", frame)
    table = vlmevalkit([path], registry).table
    assert json.loads(table["extra"].iloc[0])["options"][-1] == "a purple hexagon"
    assert table["correct"].tolist() == [True]


# ---------------------------------------------------------------------------------------------- layouts and runs
def test_the_current_layout_names_the_model_two_folders_up(tmp_path, registry):
    path = write_vlmevalkit(tmp_path / "Tiny-S" / "T20250419_Gfcbe1e42", "Tiny-S_MyData.xlsx",
                            vlmevalkit_frame())
    table = vlmevalkit([path], registry, subtask_column="category").table
    assert set(table["model"].astype(str)) == {"Tiny-S"} and set(table["benchmark"].astype(str)) == {"MyData"}


def test_several_runs_of_one_model_keep_the_newest_and_say_so(tmp_path, registry):
    old = write_vlmevalkit(tmp_path / "Tiny-S" / "T20250101_Gaaaa", "Tiny-S_MMBench_DEV_EN.xlsx", vlmevalkit_frame())
    new = write_vlmevalkit(tmp_path / "Tiny-S" / "T20250301_Gbbbb", "Tiny-S_MMBench_DEV_EN.xlsx",
                           vlmevalkit_frame().assign(prediction="A"))
    result = vlmevalkit([old, new], registry)
    assert set(result.table["source_file"].astype(str)) == {str(new)}
    assert result.duplicate_runs[["kept_run", "dropped_run", "kept_because"]].values.tolist() == [
        [str(new), str(old), "newest"]]
    assert result.problems["kind"].tolist() == ["duplicate"] and "20250101" in result.problems["detail"].iloc[0]
    undated = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_MMBench_DEV_EN.xlsx", vlmevalkit_frame())
    with pytest.raises(DuplicateRunsError, match="no run-folder dates"):
        vlmevalkit([undated, new], registry)


# ---------------------------------------------------------------------------------------------- scoring files
def afrimedqa_like(folder: Path) -> tuple[Path, Path]:
    """A prediction file and VLMEvalKit's judged copy of it (`prediction` overwritten, `hit`), as in its
    _openai_result.xlsx."""
    frame = vlmevalkit_frame()
    predictions = write_vlmevalkit(folder, "Tiny-S_MMBench_DEV_EN.xlsx", frame)
    judged = frame.assign(prediction="A", hit=[int(g == "A") for g in frame["answer"]], log="Match Log: A.")
    return predictions, write_vlmevalkit(folder, "Tiny-S_MMBench_DEV_EN_openai_result.xlsx", judged)


def test_a_scoring_file_is_the_harness_reading_never_a_benchmark(tmp_path, registry):
    predictions, judged = afrimedqa_like(tmp_path / "Tiny-S" / "T20250909_Gd7cda0c6")
    result = vlmevalkit([predictions, judged], registry)
    table = result.table
    assert set(table["benchmark"].astype(str)) == {"MMBench"} and len(table) == 8
    extra = [json.loads(text) for text in table["extra"]]
    assert [e["harness_prediction"] for e in extra] == ["A"] * 8
    assert [e["harness_correct"] for e in extra] == [g == "A" for g in table["gold"]]
    audit, differences = scoring_audit(table)
    ours = table["correct"].fillna(False).astype(bool)
    assert audit[["questions", "ours", "theirs"]].values.tolist() == [[8, round(100 * ours.mean(), 2), 25.0]]
    assert len(differences) == audit["questions_differ"].iloc[0] == int((ours != (table["gold"] == "A")).sum())
    with pytest.raises(ImportFormatError, match="give the prediction file it scores"):
        vlmevalkit([judged], registry)


def test_a_difference_above_two_points_is_said():
    audit = pd.DataFrame([{"model": "m", "benchmark": "b", "questions": 100, "ours": 50.0, "theirs": 52.5,
                           "difference_points": -2.5, "questions_differ": 5, "source_file": "f"},
                          {"model": "m", "benchmark": "c", "questions": 100, "ours": 50.0, "theirs": 52.0,
                           "difference_points": -2.0, "questions_differ": 2, "source_file": "g"}])
    notes = audit_notes(audit)
    assert len(notes) == 1 and "m on b: our accuracy 50.0% against the harness's own 52.5%" in notes[0]


def test_mathvista_scoring_is_recomputed_as_vlmevalkit_does():
    choice = {"question_type": "multi_choice", "choices": "['1', '2']", "answer": "2", "answer_option": "B"}
    assert mathvista_hit({**choice, "res": "B"}) and mathvista_hit({**choice, "res": "2"})
    assert not mathvista_hit({**choice, "res": "A"})
    assert mathvista_hit({"question_type": "free_form", "answer_type": "integer", "answer": "4", "res": "4"})
    assert not mathvista_hit({"question_type": "free_form", "answer_type": "float", "answer": "1.2", "res": "x"})
    assert mathvista_hit({"question_type": "free_form", "answer_type": "integer", "answer": "4", "res": None}) is None


# ---------------------------------------------------------------------------------------------- choices in fields
def test_mathvista_takes_its_options_from_choices(tmp_path, registry):
    frame = pd.DataFrame({
        "question": ["Which?", "How many?"], "choices": ["['135°', '140°']", None], "answer": ["140°", "4"],
        "question_type": ["multi_choice", "free_form"], "answer_type": ["text", "integer"], "index": [1, 2],
        "task": ["geometry problem solving", "figure question answering"], "prediction": ["(B) 140°", "4"]})
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_MathVista_MINI.xlsx", frame)
    table = vlmevalkit([path], registry).table.astype(object)
    assert list(table["kind"]) == ["mcq", "numeric"] and list(table["gold"]) == ["B", "4"]
    assert list(table["correct"]) == [True, True] and set(table["benchmark"]) == {"MathVista"}
    assert set(table["split"]) == {"testmini"}


@pytest.mark.parametrize(("question", "options"), [
    ("Which plan? Select from A, B, C, D, and E. (A) Ferret (B)Owl (C) Wader (D) Fox (E) Hare",
     ["Ferret", "Owl", "Wader", "Fox", "Hare"]),
    ("What choice (A, B, C, or D) should be in place of the question mark?", ["A", "B", "C", "D"]),
    ("Which option from A-E should replace the question mark? (select from A-E)", ["A", "B", "C", "D", "E"]),
    ("How many sides has it?", None),
])
def test_options_written_or_named_in_the_question(question, options):
    assert options_in_question(question) == options


def test_logicvista_rows_without_options_are_refused_not_scored_as_open(tmp_path, registry):
    frame = pd.DataFrame({"index": [0, 1], "question": ["Select from A, B, C and D.", "What next?"],
                          "answer": ["C", "B"], "skill": ["['inductive']"] * 2, "prediction": ["C", "B"]})
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_LogicVista.xlsx", frame)
    result = vlmevalkit([path], registry, subtask_column="skill")
    assert list(result.table["kind"].astype(str)) == ["mcq"] and result.table["correct"].tolist() == [True]
    assert result.problems["detail"].tolist() == ["a multiple-choice row without options"]


def test_letter_answers_without_any_options_refuse_the_file(tmp_path, registry):
    frame = pd.DataFrame({"index": [0], "question": ["Which? (A) x (B) y"], "answer": ["A"], "topic": ["t"],
                          "prediction": ["A"]})
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_SomeMCQ.xlsx", frame)
    with pytest.raises(ImportFormatError, match="cannot be scored as open text"):
        vlmevalkit([path], registry, subtask_column="topic")


# ---------------------------------------------------------------------------------------------- names
def test_vlmevalkit_model_names_are_aliases_of_the_registry():
    registry = load_registry()
    names = {"Gemma3-12B": "Gemma-3-12B", "InternVL3_5-2B": "InternVL3.5-2B",
             "InternVL3_5-241B-A28B": "InternVL3.5-241B-A28B", "Qwen3-VL-8B-Instruct": "Qwen3-VL-8B"}
    assert {name: registry.resolve(name).key for name in names} == names
    # InternVL3_5-8B / -4B are also the repo names of the CAIT paper's thinking models: they stay theirs.
    assert registry.resolve("InternVL3_5-8B").key == "InternVL-3.5-8B"


def test_unknown_models_are_named_before_any_scoring(tmp_path, registry, monkeypatch):
    path = write_table(tmp_path / "t.parquet", table_rows(model="Nobody-7B", n=5))
    monkeypatch.setattr(mapping, "_score_distinct", lambda *a, **k: pytest.fail("scored before the names"))
    with pytest.raises(UnresolvedModelError) as error:
        import_outputs([ImportSource(path, "table")], registry)
    assert f"{path}: 'Nobody-7B' (5 rows)" in str(error.value) and "--extra-models" in str(error.value)


def test_rows_not_imported_for_an_unknown_model_exclude_rows_unplaceable_otherwise(tmp_path, registry):
    rows = table_rows(model="Nobody-7B", n=4)
    rows[0]["subtask"] = None  # unplaceable before the model is looked up
    result = import_outputs([ImportSource(write_table(tmp_path / "t.jsonl", rows), "table")], registry, strict=False)
    unresolved = result.problems[result.problems["kind"] == "unresolved_model"]
    assert "3 rows not imported" in unresolved["detail"].iloc[0]


# ---------------------------------------------------------------------------------------------- subtasks, splits
def test_blink_subtasks_are_spelled_as_ours_whatever_the_source(tmp_path, registry):
    frame = vlmevalkit_frame(n=2).assign(category="Functional_Correspondence")
    path = write_vlmevalkit(tmp_path / "Tiny-S", "Tiny-S_BLINK.xlsx", frame)
    assert set(vlmevalkit([path], registry).table["subtask"].astype(str)) == {"Functional Correspondence"}
    table = imported([write_table(tmp_path / "t.parquet", table_rows(benchmark="BLINK", split="val",
                                                                     subtask="Multi-view_Reasoning"))], registry)
    assert set(table.table["subtask"].astype(str)) == {"Multi-view Reasoning"}


def test_a_split_named_for_another_benchmark_is_kept(tmp_path, registry):
    table = imported([write_table(tmp_path / "t.parquet", table_rows(split="dev"))], registry).table
    assert set(table["split"].astype(str)) == {"dev"}


# ---------------------------------------------------------------------------------------------- table answers
def test_a_response_given_as_a_list_of_one_text_is_that_text(tmp_path, registry):
    rows = table_rows(n=3)
    rows[0]["response"], rows[1]["response"] = ["B"], ["B", "C"]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = imported([path], registry)
    assert result.table["response"].tolist() == ["B", rows[2]["response"]]
    assert result.problems[["line", "field"]].values.tolist() == [[2, "response"]]
    assert "several texts" in result.problems["detail"].iloc[0]


def test_lower_case_gold_letters_are_letters(tmp_path, registry):
    table = imported([write_table(tmp_path / "t.parquet", table_rows(n=1, gold="b", response="B"))], registry).table
    assert table["gold"].tolist() == ["B"] and table["correct"].tolist() == [True]


def test_true_false_answers_are_read(tmp_path, registry):
    rows = table_rows(n=3, kind="true_false", options=None)
    for row, gold, response in zip(rows, ["True", "false", "maybe"], ["True", "False.", "True"]):
        row.update(gold=gold, response=response)
    result = imported([write_table(tmp_path / "t.jsonl", rows)], registry)
    assert result.table["correct"].tolist() == [True, True]
    assert result.problems["detail"].tolist() == ["gold of a true_false row is not True or False"]


def test_an_open_gold_given_as_a_json_list_accepts_any_of_its_answers(tmp_path, registry):
    rows = table_rows(n=2, kind="open", options=None, gold=json.dumps(["cat", "kitten"]))
    rows[0]["response"], rows[1]["response"] = "cat", "kitten"
    assert imported([write_table(tmp_path / "t.parquet", rows)], registry).table["correct"].tolist() == [True, True]


def test_gold_yes_in_lower_case_on_a_yes_no_row_is_unplaceable(tmp_path, registry):
    result = imported([write_table(tmp_path / "t.parquet", table_rows(n=1, kind="yes_no", options=None, gold="yes",
                                                                      response="Yes"))], registry)
    assert result.table.empty and result.problems["detail"].tolist() == ["gold 'yes' is not Yes or No"]


def test_a_csv_row_with_an_empty_response_and_a_prediction_is_scored_by_the_prediction(tmp_path, registry):
    rows = table_rows(n=1, gold="C", response="")
    rows[0]["prediction"] = "C"
    table = imported([write_table(tmp_path / "t.csv", rows)], registry).table
    assert table["correct"].tolist() == [True] and table["rule"].tolist() == [IMPORTED_PREDICTION_RULE]


def test_imported_predictions_carry_tier_external(tmp_path, registry):
    rows = [{k: v for k, v in row.items() if k != "response"} | {"prediction": "B"} for row in table_rows(n=2)]
    table = imported([write_table(tmp_path / "t.parquet", rows)], registry).table
    assert set(table["extraction_tier"].astype(str)) == {"external"}


# ---------------------------------------------------------------------------------------------- combining
def test_one_question_in_the_logs_and_an_import_is_a_duplicate_run_even_when_mixing(tmp_path, registry):
    logs = ingest_logs([lmms_eval_logs(tmp_path)], registry)
    first = logs.table.iloc[0]
    rows = table_rows(n=1, benchmark="MMMU", split="dev_val", question_id=str(first["question_id"]))
    both = imported([write_table(tmp_path / "t.parquet", rows)], registry)
    with pytest.raises(DuplicateRunsError, match="both in the lmms-eval logs and in an imported file"):
        combine(logs, both, registry, mix_sources=True)


def test_a_zero_row_lmms_eval_run_does_not_make_a_model_mixed():
    runs = pd.DataFrame({"model": ["Tiny-S", "Tiny-S"], "status": ["ingested", "imported: table"], "n_rows": [0, 6]})
    assert sources_of_models(runs) == {"Tiny-S": {"table"}}


# ---------------------------------------------------------------------------------------------- the real files
# VLMEvalKit's own accuracy on the questions it scored (its `hit`, or MathVista's judge answer as its post_check
# reads it), ours on the same questions, and the questions read differently, as measured (docs/importing-outputs.md
# explains each difference). LogicVista's folder carries no VLMEvalKit scoring: ours only.
REAL_AUDIT = {
    ("Gemma-3-12B", "AfrimedQA"): (171, 38.01),
    ("Qwen2.5-VL-7B", "MathVista"): (1000, 67.9),
}
REAL_EXTRA_MODELS = {"families": ["Idefics3", "Qwen2.5-VL"], "models": [
    {"key": key, "hf_id": hf_id, "family": family, "size": size, "total_params": params, "active_params": params,
     "moe": False} for key, hf_id, family, size, params in (
        ("Idefics3-8B", "HuggingFaceM4/Idefics3-8B-Llama3", "Idefics3", "8B", 8_000_000_000),
        ("Qwen2.5-VL-3B", "Qwen/Qwen2.5-VL-3B-Instruct", "Qwen2.5-VL", "3B", 3_000_000_000),
        ("Qwen2.5-VL-7B", "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen2.5-VL", "7B", 7_000_000_000))]}


def test_a_model_of_the_cait_table_only_is_unknown_on_other_benchmarks(tmp_path):
    path = write_vlmevalkit(tmp_path / "Qwen2.5-VL-7B-Instruct", "Qwen2.5-VL-7B-Instruct_MMBench_DEV_EN.xlsx",
                            vlmevalkit_frame())
    with pytest.raises(UnresolvedModelError, match=r"'Qwen2.5-VL-7B-Instruct' \(8 rows\)"):
        import_outputs([ImportSource(path, "vlmevalkit")], load_registry())


@pytest.mark.skipif(not SHARED.is_dir(), reason="the real VLMEvalKit files (../shared) are not here")
def test_real_vlmevalkit_files_import_as_given_and_agree_with_vlmevalkit_or_are_explained(tmp_path):
    extra = tmp_path / "models.yaml"  # the two families the files hold beyond the registry's, as a user writes them
    extra.write_text(json.dumps(REAL_EXTRA_MODELS))
    registry = load_registry(extra=[extra])
    files = sorted(SHARED.rglob("*.xlsx"))
    columns = {"AfrimedQA": "specialty", "LogicVista": "skill"}
    sources = [ImportSource(path, "vlmevalkit", None, next((c for d, c in columns.items() if f"_{d}" in path.name),
                                                           None)) for path in files]
    result = import_outputs(sources, registry)
    table = result.table
    assert set(table["benchmark"].astype(str)) == {"AfrimedQA", "LogicVista", "MathVista"}
    audit, differences = scoring_audit(table)
    measured = {(row.model, row.benchmark): (row.questions, row.theirs) for row in audit.itertuples()}
    assert {key: measured[key] for key in REAL_AUDIT} == REAL_AUDIT
    assert ("Idefics3-8B", "AfrimedQA") in measured
    for row in audit.itertuples():
        if abs(row.difference_points) > 2:  # every difference listed with our reading of it
            listed = differences[(differences["model"] == row.model) & (differences["benchmark"] == row.benchmark)]
            assert len(listed) == row.questions_differ and listed["our_reading"].str.len().gt(0).all()
    unplaceable = result.problems[result.problems["kind"] == "unplaceable_row"]
    assert set(unplaceable["detail"]) <= {"a multiple-choice row without options", "gold 'A, C' is not one of the "
                                          "option letters ABCD", "gold 'B, D' is not one of the option letters ABCD",
                                          "gold 'B, D' is not one of the option letters ABCDE",
                                          "gold 'A, C' is not one of the option letters ABCDE"}
