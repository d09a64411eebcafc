"""Importing saved per-question outputs (postprocess/logs/imports/): the table format, VLMEvalKit prediction
files, the record contract for imported benchmarks, and every command that reads logs taking them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from import_factory import (OPTIONS, RESPONSES, imported, lmms_eval_logs, table_rows, vlmevalkit_frame,
                            write_table)
from logfactory import make_records, tiny_family_registry_dict
from lmms_eval_tasks.question import MCQ, YES_NO, Question
from lmms_eval_tasks.record import BENCHMARKS, RecordError, canonical_benchmark, validate_record
from lmms_eval_tasks.scoring import IMPORTED_PREDICTION_RULE, per_question_record, score
from model_configs import Registry
from postprocess.cli import main
from postprocess.logs.cache import load_or_import
from postprocess.logs.imports import (ImportFormatError, ImportSource, MixedSourcesError, combine, import_outputs,
                                      split_vlmevalkit_name)
from postprocess.logs.ingest import TABLE_COLUMNS, DuplicateRunsError, UnresolvedModelError, ingest_logs

@pytest.fixture
def registry() -> Registry:
    return Registry.from_dict(tiny_family_registry_dict())


# ---------------------------------------------------------------------------------------------- the table
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_raw_responses_are_scored_by_the_scoring_core(tmp_path, registry, suffix):
    rows = table_rows()
    result = imported([write_table(tmp_path / f"t{suffix}", rows)], registry)
    table = result.table
    assert list(table.columns) == TABLE_COLUMNS and len(table) == len(rows)
    for row, got in zip(rows, table.astype(object).itertuples()):
        question = Question("M3CoT", "test", row["subtask"], row["question_id"], MCQ, "", [], options=OPTIONS,
                            gold=row["gold"])
        expected = per_question_record(question, score(question, row["response"]))
        assert (got.prediction if isinstance(got.prediction, str) else None) == expected["prediction"]
        assert (None if pd.isna(got.correct) else got.correct) == expected["correct"]
        assert (got.match, got.rule, got.kind) == (expected["match"], expected["rule"], "mcq")
        assert json.loads(got.extra)["abstain_reason"] == expected["abstain_reason"]
        assert got.response == row["response"]
    assert (table["split"] == "test").all() and (table["variant"] == "direct").all()
    assert list(table["source_line"]) == [i + (2 if suffix == ".csv" else 1) for i in range(len(rows))]
    assert result.problems.empty


def test_the_three_formats_give_the_same_table(tmp_path, registry):
    rows = table_rows(n=12)
    tables = [imported([write_table(tmp_path / f"t{s}", rows)], registry).table.drop(columns=["source_file",
                                                                                              "source_line"])
              for s in (".parquet", ".csv", ".jsonl")]
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other)


def test_an_extracted_prediction_is_matched_by_the_same_rules(tmp_path, registry):
    rows = [{**row, "prediction": p} for row, p in zip(table_rows(n=3), ["A", None, "Z"])]
    for row in rows:
        del row["response"]
    result = imported([write_table(tmp_path / "t.jsonl", rows)], registry)
    table = result.table.astype(object)
    assert [v if isinstance(v, str) else None for v in table["prediction"]] == ["A", None]
    assert list(table["correct"]) == [True, False] and list(table["match"]) == ["letter", "none"]
    assert set(table["rule"]) == {IMPORTED_PREDICTION_RULE}
    [problem] = result.problems.astype(object).itertuples()
    assert (problem.kind, problem.line, problem.field) == ("unplaceable_row", 3, "prediction")
    assert "'Z' is not one of the option letters ABCD" in problem.detail


def test_unplaceable_rows_are_counted_and_named(tmp_path, registry):
    rows = table_rows(n=9)
    rows[0]["question_id"] = ""
    rows[1]["options"] = "not json"
    rows[2]["gold"] = "E"
    rows[3]["benchmark"] = "mmbench"
    rows[4].update(benchmark="MMMU")  # two splits: the row must name one
    rows[5].update(options=None)  # neither options nor kind
    rows[6].update(kind="essay")
    path = tmp_path / "t.csv"
    frame = pd.DataFrame(rows)
    frame["options"] = [o if o is None or isinstance(o, str) else json.dumps(o) for o in frame["options"]]
    frame.to_csv(path, index=False)
    result = imported([path], registry)
    problems = result.problems.astype(object)
    assert list(problems["line"]) == [2, 3, 4, 5, 6, 7, 8]
    assert list(problems["field"]) == ["question_id", "options", "gold", "benchmark", "split", "kind", "kind"]
    assert "write the paper's benchmark as 'MMBench'" in problems["detail"].iloc[3]
    assert set(problems["kind"]) == {"unplaceable_row"} and set(problems["action"]) == {"skipped"}
    assert len(result.table) == 2 and result.counts["unplaceable_row"] == 7
    assert result.counts["lines_read"] == 9 and result.counts["lines_skipped"] == 7


def test_a_malformed_jsonl_line_is_an_unplaceable_row(tmp_path, registry):
    path = write_table(tmp_path / "t.jsonl", table_rows(n=2))
    path.write_text(path.read_text() + "{not json\n[1, 2]\n")
    problems = imported([path], registry).problems.astype(object)
    assert list(problems["line"]) == [3, 4] and "not valid JSON" in problems["detail"].iloc[0]


def test_a_file_without_a_required_column_is_one_clear_error(tmp_path, registry):
    path = write_table(tmp_path / "t.parquet", [{k: v for k, v in r.items() if k != "gold"} for r in table_rows()])
    with pytest.raises(ImportFormatError, match=r"t\.parquet: lacks the column\(s\) \['gold'\]"):
        imported([path], registry)
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(ImportFormatError, match=r"x\.parquet: cannot be read as parquet"):
        imported([tmp_path / "x.parquet"], registry)


def test_unknown_models_stop_or_are_skipped_and_reported(tmp_path, registry):
    path = write_table(tmp_path / "t.parquet", table_rows() + table_rows(model="Mystery-9B"))
    with pytest.raises(UnresolvedModelError, match=r"'Mystery-9B' \(6 rows\)"):
        imported([path], registry)
    result = import_outputs([ImportSource(path, "table")], registry, strict=False)
    [problem] = result.problems.astype(object).itertuples()
    assert (problem.kind, problem.field, problem.model) == ("unresolved_model", "model", "Mystery-9B")
    assert "6 rows not imported" in problem.detail and len(result.table) == 6


def test_models_resolve_through_the_registry_and_overrides(tmp_path, registry):
    path = write_table(tmp_path / "t.parquet", table_rows(model="local/tiny-s") + table_rows(model="my-ckpt"))
    result = import_outputs([ImportSource(path, "table")], registry, model_overrides={"my-ckpt": "Tiny-M"})
    assert result.table.groupby("model", observed=True).size().to_dict() == {"Tiny-S": 6, "Tiny-M": 6}
    assert list(result.table["family"].unique()) == ["Tiny"]


def test_duplicates_inside_a_file_are_reported_and_across_files_refused(tmp_path, registry):
    rows = table_rows(n=3)
    one = write_table(tmp_path / "one.parquet", rows + rows[:1])
    result = imported([one], registry)
    [problem] = result.problems.astype(object).itertuples()
    assert (problem.kind, problem.line) == ("duplicate", 4) and len(result.table) == 3
    two = write_table(tmp_path / "two.parquet", rows[:1])
    with pytest.raises(DuplicateRunsError, match="no timestamps"):
        imported([write_table(tmp_path / "one.parquet", rows), two], registry)


def test_other_benchmarks_sort_after_the_papers(tmp_path, registry):
    rows = table_rows(benchmark="M3CoT") + table_rows(benchmark="AI2D") + table_rows(benchmark="MMBench")
    table = imported([write_table(tmp_path / "t.parquet", rows)], registry).table
    assert list(table["benchmark"].cat.categories) == ["AI2D", "MMBench", "M3CoT"]
    assert set(table.loc[table["benchmark"] == "AI2D", "split"]) == {"test"}
    assert set(table.loc[table["benchmark"] == "MMBench", "split"]) == {"dev_en"}


# ---------------------------------------------------------------------------------------------- the contract
@given(st.text(min_size=1, max_size=12))
def test_our_logs_stay_held_to_the_papers_benchmarks(label):
    record = make_records([True])[0]
    record["benchmark"] = label
    if label not in BENCHMARKS:
        with pytest.raises(RecordError, match="benchmark"):
            validate_record(record)
    ours = {canonical_benchmark(b) for b in BENCHMARKS}
    if label.strip() and (label in BENCHMARKS or canonical_benchmark(label) not in ours):
        assert validate_record(record, imported=True) is record
    else:
        with pytest.raises(RecordError, match="benchmark"):
            validate_record(record, imported=True)


# ---------------------------------------------------------------------------------------------- VLMEvalKit
@pytest.mark.parametrize("suffix", [".xlsx", ".tsv", ".csv"])
def test_vlmevalkit_predictions_map_to_benchmark_subtask_and_question(tmp_path, registry, suffix):
    folder = tmp_path / "Tiny-S"
    folder.mkdir()
    path = folder / f"Tiny-S_MMBench_DEV_EN{suffix}"
    frame = vlmevalkit_frame()
    if suffix == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    table = imported([path], registry, harness="vlmevalkit").table.astype(object)
    assert set(table["benchmark"]) == {"MMBench"} and set(table["split"]) == {"dev_en"}
    assert list(table["subtask"]) == list(frame["l2-category"])
    assert list(table["question_id"]) == [str(i) for i in frame["index"]]
    assert list(table["gold"]) == list(frame["answer"]) and set(table["task"]) == {"MMBench_DEV_EN"}
    question = Question("MMBench", "dev_en", "", "", MCQ, "", [], options=OPTIONS, gold="B")
    assert table["prediction"].iloc[0] == score(question, RESPONSES[0]).prediction


def test_vlmevalkit_yes_no_and_other_datasets(tmp_path, registry):
    mme = pd.DataFrame({"index": [0, 1], "question": ["Is it red?", "Is it blue?"], "answer": ["Yes", "No"],
                        "category": ["color", "color"], "prediction": ["Yes, it is.", "Yes"]})
    mme.to_csv(tmp_path / "Tiny-S_MME.tsv", sep="\t", index=False)
    table = imported([tmp_path / "Tiny-S_MME.tsv"], registry, harness="vlmevalkit").table.astype(object)
    assert list(table["kind"]) == [YES_NO, YES_NO] and list(table["correct"]) == [True, False]
    other = vlmevalkit_frame().rename(columns={"category": "topic"})
    other.to_csv(tmp_path / "Tiny-S_SEEDBench_IMG.csv", index=False)
    with pytest.raises(ImportFormatError, match="name its subtask column"):
        imported([tmp_path / "Tiny-S_SEEDBench_IMG.csv"], registry, harness="vlmevalkit", dataset="SEEDBench_IMG")
    table = imported([tmp_path / "Tiny-S_SEEDBench_IMG.csv"], registry, harness="vlmevalkit", dataset="SEEDBench_IMG",
                     subtask_column="topic").table
    assert set(table["benchmark"]) == {"SEEDBench_IMG"} and set(table["subtask"]) == {"leaf0", "leaf1", "leaf2"}


def test_vlmevalkit_file_names():
    assert split_vlmevalkit_name(Path("out/Qwen2-VL-7B/Qwen2-VL-7B_MyData_v2.xlsx")) == ("Qwen2-VL-7B", "MyData_v2")
    assert split_vlmevalkit_name(Path("x/llava_v1.5_7b_MMBench_DEV_EN.xlsx")) == ("llava_v1.5_7b", "MMBench_DEV_EN")
    assert split_vlmevalkit_name(Path("x/m_D_E.tsv"), "D_E") == ("m", "D_E")
    with pytest.raises(ImportFormatError, match="cannot tell the model from the dataset"):
        split_vlmevalkit_name(Path("x/m_Unknown.tsv"))


# ---------------------------------------------------------------------------------------------- sources
def test_one_model_from_two_harnesses_is_refused_unless_asked(tmp_path, registry):
    logs = ingest_logs([lmms_eval_logs(tmp_path)], registry)
    table = imported([write_table(tmp_path / "t.parquet", table_rows())], registry)
    with pytest.raises(MixedSourcesError, match="Tiny-S: lmms-eval, table"):
        combine(logs, table, registry)
    both = combine(logs, table, registry, mix_sources=True)
    assert len(both.table) == 4 + 6 and list(both.table["benchmark"].cat.categories) == ["MMMU", "M3CoT"]
    other = imported([write_table(tmp_path / "m.parquet", table_rows(model="Tiny-M"))], registry)
    assert len(combine(logs, other, registry).table) == 10


def test_the_cache_returns_the_same_import(tmp_path, registry):
    sources = [ImportSource(write_table(tmp_path / "t.parquet", table_rows()), "table")]
    first = load_or_import(sources, tmp_path / "cache", registry)
    second = load_or_import(sources, tmp_path / "cache", registry)
    assert not first.from_cache and second.from_cache
    pd.testing.assert_frame_equal(first.table, second.table)


def test_report_and_the_other_commands_take_imported_files(tmp_path, capsys):
    extra = tmp_path / "models.yaml"
    extra.write_text(json.dumps(tiny_family_registry_dict()))
    rows = [row for model in ("Tiny-S", "Tiny-M", "Tiny-L") for row in table_rows(model=model, n=60)]
    path = write_table(tmp_path / "t.parquet", rows)
    logs = lmms_eval_logs(tmp_path)
    out = tmp_path / "report"
    assert main(["report", "--table", str(path), "--extra-models", str(extra), "--out", str(out)]) == 0
    comparisons = pd.read_parquet(out / "comparisons.parquet")
    assert set(comparisons["benchmark"]) == {"M3CoT"} and (out / "problems.csv").exists()
    assert main(["report", "--table", str(path), "--logs", str(logs), "--extra-models", str(extra), "--out",
                 str(tmp_path / "r2")]) == 2
    assert "pass --mix-sources" in capsys.readouterr().err
    assert main(["report", "--table", str(path), "--logs", str(logs), "--extra-models", str(extra), "--mix-sources",
                 "--out", str(tmp_path / "r3")]) == 0
    assert main(["report", "--extra-models", str(extra), "--out", str(tmp_path / "r4")]) == 2
    assert "nothing to read" in capsys.readouterr().err


def test_adjudicate_says_it_leaves_imported_answers_alone(tmp_path, capsys):
    extra = tmp_path / "models.yaml"
    extra.write_text(json.dumps(tiny_family_registry_dict()))
    path = write_table(tmp_path / "t.parquet", table_rows(benchmark="MMBench"))
    assert main(["adjudicate", "--table", str(path), "--extra-models", str(extra), "--out", str(tmp_path / "adj"),
                 "--dry-run"]) == 0
    captured = capsys.readouterr()
    # "Either A or B." and "": "I think it is a green triangle." now commits (closing_text: one plain sentence that
    # ends on an option's whole text)
    assert "2 unparsed answers of imported files are not adjudicated" in captured.err
    assert "nothing to adjudicate" in captured.out


def test_jsonl_rows_keep_their_line_numbers_across_blank_lines(tmp_path, registry):
    path = write_table(tmp_path / "t.jsonl", table_rows(n=3))
    first, *rest = path.read_text().splitlines(keepends=True)
    path.write_text(first + "\n   \n" + "".join(rest))
    result = imported([path], registry)
    assert list(result.table["source_line"]) == [1, 4, 5] and result.problems.empty


def test_a_damaged_xlsx_is_one_clear_error(tmp_path, registry):
    path = tmp_path / "Tiny-S" / "Tiny-S_MMBench_DEV_EN.xlsx"
    path.parent.mkdir()
    path.write_bytes(b"PK\x03\x04" + b"garbage" * 20)
    with pytest.raises(ImportFormatError, match=r"Tiny-S_MMBench_DEV_EN\.xlsx: cannot be read as xlsx"):
        imported([path], registry, harness="vlmevalkit")


def test_a_jsonl_line_that_is_not_utf8_is_an_unplaceable_row_with_its_line(tmp_path, registry):
    path = write_table(tmp_path / "t.jsonl", table_rows(n=4))
    path.write_bytes(path.read_bytes().replace(b'"q2"', b'"q\xff2"'))
    result = imported([path], registry)
    problems = result.problems.astype(object)
    assert list(problems["line"]) == [3] and "utf-8" in problems["detail"].iloc[0]
    assert problems["file"].iloc[0].endswith("t.jsonl")
    assert sorted(result.table["question_id"]) == ["q0", "q1", "q3"]
