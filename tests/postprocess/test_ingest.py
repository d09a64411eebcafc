"""Ingestion of lmms-eval sample logs, its Parquet cache and the data-quality frames."""

import json
import os
import tempfile

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from logfactory import make_record, make_records, sample_line, tiny_family_registry_dict, write_run

from model_configs import Registry, load_registry
from postprocess.logs import cache, ingest
from postprocess.logs.ingest import (PROBLEM_COLUMNS, RUNS_COLUMNS, SETTINGS_COLUMNS, TABLE_COLUMNS, DuplicateRunsError,
                                     UnresolvedModelError, ingest_logs)
from postprocess.logs.quality import quality_summary

QWEN_2B, QWEN_8B = "Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3-VL-8B-Instruct"


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def _problems(result, kind):
    return result.problems[result.problems["kind"] == kind].reset_index(drop=True)


def test_good_run(tmp_path, registry):
    records = make_records([True, False, None], benchmark="BLINK", split="val", subtask="Jigsaw")
    records.append(make_record(question_id="open1", gold=["3", "three"], match="numeric", prediction="3", kind="open",
                               options=[],
                               response="3", details={"judge": None}))
    paths = write_run(tmp_path, "/data/ckpts/Qwen3-VL-2B-Instruct", "blink_val", records)
    result = ingest_logs([tmp_path], registry)

    table = result.table
    assert list(table.columns) == TABLE_COLUMNS and len(table) == 4
    assert result.problems.empty and list(result.problems.columns) == PROBLEM_COLUMNS
    assert str(table["correct"].dtype) == "boolean" and table["correct"].tolist() == [True, False, pd.NA, True]
    for column in ("model", "family", "size", "encoder_tier", "benchmark", "split", "subtask", "variant", "match",
                   "task", "source_file"):
        assert isinstance(table[column].dtype, pd.CategoricalDtype), column
    first = table.iloc[0]
    assert (first["model"], first["family"], first["size"], first["encoder_tier"]) == (
        "Qwen3-VL-2B", "Qwen3-VL", "2B", "siglip2-large")
    assert (first["total_params"], first["active_params"], first["moe"]) == (2_000_000_000, 2_000_000_000, False)
    assert (first["task"], first["source_file"], first["source_line"], first["doc_id"]) == (
        "blink_val", str(paths.samples), 1, 0)
    assert (first["rule"], first["kind"]) == ("answer_is", "mcq")
    assert json.loads(first["extra"]) == {"details": {}, "options": records[0]["options"],
                                          "permutation": [0, 1, 2, 3]}
    assert pd.isna(table["prediction"].iloc[2]) and table["match"].iloc[2] == "none"
    assert json.loads(table["gold"].iloc[3]) == ["3", "three"]
    assert list(result.runs.columns) == RUNS_COLUMNS
    run = result.runs.iloc[0]
    assert (run["model"], run["model_path"], run["tasks"], run["n_rows"], run["status"]) == (
        "Qwen3-VL-2B", "/data/ckpts/Qwen3-VL-2B-Instruct", "blink_val", 4, "ingested")
    assert result.counts["rows"] == result.counts["lines_read"] == 4 and result.counts["lines_skipped"] == 0


def test_model_args_as_dict_and_several_tasks(tmp_path, registry):
    write_run(tmp_path, QWEN_8B, "blink_val", make_records([True] * 2, benchmark="BLINK", split="val"),
              model_args_style="dict")
    write_run(tmp_path, QWEN_8B, "invscale_mme_test", make_records([False] * 3, benchmark="MME", split="test"),
              model_args_style="dict")
    result = ingest_logs([tmp_path], registry)
    assert result.runs["tasks"].tolist() == ["blink_val,invscale_mme_test"]
    assert result.table.groupby("benchmark", observed=True).size().to_dict() == {"MME": 3, "BLINK": 2}
    assert set(result.table["model"]) == {"Qwen3-VL-8B"}


def test_truncated_last_line_is_skipped_and_reported(tmp_path, registry):
    paths = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True] * 5, benchmark="BLINK", split="val"),
                      truncate_last=True)
    result = ingest_logs([tmp_path], registry)
    assert len(result.table) == 4
    truncated = _problems(result, "truncated_line")
    assert truncated[["action", "file", "line", "model"]].values.tolist() == [
        ["skipped", str(paths.samples), 5, "Qwen3-VL-2B"]]
    assert result.counts["truncated_line"] == 1 and result.counts["lines_skipped"] == 1


def test_bad_lines_are_skipped_and_reported(tmp_path, registry):
    records = make_records([True] * 3)
    no_record = sample_line(make_record(question_id="x"), 7, with_per_question=False)
    invalid = sample_line(make_record(question_id="bad", match="guess"), 8)
    unparsed_but_right = sample_line(make_record(question_id="bad2", match="none", correct=True), 9)
    write_run(tmp_path, QWEN_2B, "invscale_mmmu_dev_val", records,
              extra_lines=['{"doc_id": 5, "per_question": {', "", "[1, 2]", no_record, invalid, unparsed_but_right])
    result = ingest_logs([tmp_path], registry)
    assert len(result.table) == 3
    got = result.problems[["kind", "line"]].astype(object).values.tolist()
    assert got == [["malformed_json", 4], ["malformed_json", 6], ["missing_per_question", 7],
                   ["invalid_record", 8], ["invalid_record", 9]]
    assert "'match' is 'guess'" in result.problems["detail"].iloc[3]
    assert "match 'none' but correct true" in result.problems["detail"].iloc[4]
    assert result.problems["benchmark"].iloc[3] == "MMMU"
    assert result.counts["blank_lines"] == 1 and result.counts["lines_read"] == 8


def test_unknown_model_names_file_and_fix(tmp_path, registry):
    paths = write_run(tmp_path, "/scratch/step-500", "blink_val", make_records([True]))
    write_run(tmp_path, QWEN_2B, "blink_val", make_records([True, True]))
    with pytest.raises(UnresolvedModelError) as error:
        ingest_logs([tmp_path], registry)
    message = str(error.value)
    assert str(paths.results) in message and "'/scratch/step-500'" in message and "--model-map" in message

    lenient = ingest_logs([tmp_path], registry, strict=False)
    assert set(lenient.table["model"]) == {"Qwen3-VL-2B"} and len(lenient.table) == 2
    skipped = _problems(lenient, "unresolved_model")
    assert skipped[["action", "file"]].values.tolist() == [["skipped", str(paths.results)]]
    assert lenient.runs.set_index("model_path").loc["/scratch/step-500", "status"] == "skipped: unresolved_model"

    mapped = ingest_logs([tmp_path], registry, model_overrides={"/scratch/step-500": "Qwen3-VL-8B"})
    assert mapped.table.groupby("model", observed=True).size().to_dict() == {"Qwen3-VL-2B": 2, "Qwen3-VL-8B": 1}
    assert ingest_logs([tmp_path], registry.with_overrides({"step-500": "Qwen3-VL-8B"})).counts["rows"] == 3


def test_results_without_model_path(tmp_path, registry):
    paths = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True]))
    results = json.loads(paths.results.read_text())
    results["config"]["model_args"] = "device_map=cpu"
    paths.results.write_text(json.dumps(results))
    with pytest.raises(UnresolvedModelError, match="no pretrained=, model= or model_version= entry"):
        ingest_logs([tmp_path], registry)
    skipped = _problems(ingest_logs([tmp_path], registry, strict=False), "unresolved_model")
    assert skipped["line"].isna().all() and skipped["field"].tolist() == ["config.model_args"]


def test_duplicates_keep_the_newest_run_by_its_own_timestamp(tmp_path, registry):
    older = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True, False], benchmark="BLINK", split="val"),
                      timestamp="20250101_000000", mtime=2_000_000)  # the older run has the newer file
    newer = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True, True, True], benchmark="BLINK",
                                                                   split="val"),
                      timestamp="20250102_000000", mtime=1_000_000)
    # a repeated line inside the newer file, and the same question under another variant (not a duplicate)
    write_run(tmp_path, QWEN_2B, "blink_val", make_records([True], benchmark="BLINK", split="val"),
              timestamp="20250102_000000")
    write_run(tmp_path, QWEN_2B, "blink_val_cot", make_records([False], benchmark="BLINK", split="val",
                                                               variant="cot"), timestamp="20250101_000000")
    result = ingest_logs([tmp_path], registry)
    direct = result.table[result.table["variant"] == "direct"]
    assert direct["question_id"].tolist() == ["q0", "q1", "q2"]
    assert direct["correct"].tolist() == [True, True, True]
    assert direct["source_file"].tolist() == [str(newer.samples)] * 3
    duplicates = _problems(result, "duplicate")
    assert duplicates[["file", "line"]].values.tolist() == [[str(newer.samples), 4], [str(older.samples), 1],
                                                           [str(older.samples), 2]]
    assert duplicates["detail"].tolist() == [
        f"duplicate of {newer.samples}:1 (question_id 'q0', variant 'direct'); identical content",
        f"duplicate of {newer.samples}:1 (question_id 'q0', variant 'direct'); identical content",
        f"duplicate of {newer.samples}:2 (question_id 'q1', variant 'direct'); differs in response, prediction, correct",
    ]
    assert result.counts["duplicate"] == 3 and result.counts["rows"] == 4
    assert result.runs.set_index("timestamp").loc["20250101_000000", "n_skipped"] == 2
    pair = result.duplicate_runs.iloc[0]
    assert len(result.duplicate_runs) == 1 and result.counts["duplicate_run_pairs"] == 1
    assert (pair["kept_run"], pair["dropped_run"]) == (str(newer.results), str(older.results))
    assert (pair["duplicate_rows"], pair["answers_differ"], pair["datasets"]) == (2, 1, "BLINK val direct")
    assert (pair["settings_differ"], pair["kept_because"]) == ("none", "newest timestamp")

    oldest = ingest_logs([tmp_path], registry, duplicates="oldest")
    assert oldest.table[oldest.table["variant"] == "direct"]["correct"].tolist() == [True, False, True]
    with pytest.raises(DuplicateRunsError, match="1 pairs of runs hold the same questions.*--duplicates"):
        ingest_logs([tmp_path], registry, duplicates="error")


def test_a_renamed_copy_keeps_its_results_json_date(tmp_path, registry):
    """A run's time is results.json `date`; the file name comes second, so a copy renamed to a later
    prefix does not become the newest run."""
    older = write_run(tmp_path, QWEN_2B, "blink_val", make_records([False], benchmark="BLINK", split="val"),
                      timestamp="20250101_000000")
    newer = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True], benchmark="BLINK", split="val"),
                      timestamp="20250102_000000")
    for path in (older.results, older.samples):
        path.rename(path.with_name(path.name.replace("20250101_000000", "20250301_000000")))
    result = ingest_logs([tmp_path], registry)
    assert result.table["correct"].tolist() == [True]
    assert result.table["source_file"].tolist() == [str(newer.samples)]
    assert sorted(result.runs["timestamp"]) == ["20250101_000000", "20250102_000000"]


def test_file_ages_never_choose_between_runs(tmp_path, registry):
    """`touch` on either run changes nothing: rows, problems and duplicate pairs are the same."""
    runs = [write_run(tmp_path, QWEN_2B, "blink_val", make_records([True, outcome], benchmark="BLINK", split="val"),
                      timestamp=timestamp) for timestamp, outcome in (("20250101_000000", False),
                                                                      ("20250301_000000", True))]
    before = ingest_logs([tmp_path], registry)
    for ages in ((1e9, 2e9), (2e9, 1e9)):
        for paths, age in zip(runs, ages):
            for path in (paths.samples, paths.results):
                os.utime(path, (age, age))
        after = ingest_logs([tmp_path], registry)
        for name in ("table", "problems", "duplicate_runs"):
            pd.testing.assert_frame_equal(getattr(before, name), getattr(after, name))
    assert before.table["correct"].tolist() == [True, True]


def test_the_results_date_is_the_run_timestamp_and_a_run_without_one_cannot_be_ranked(tmp_path, registry):
    renamed = write_run(tmp_path, QWEN_2B, "blink_val", make_records([False], benchmark="BLINK", split="val"),
                        timestamp="copy")
    write_run(tmp_path, QWEN_2B, "blink_val", make_records([True], benchmark="BLINK", split="val"),
              timestamp="20250101_000000")
    results = json.loads(renamed.results.read_text())
    results["date"] = "20250201_000000"  # lmms-eval's own record of when the run started
    renamed.results.write_text(json.dumps(results))
    result = ingest_logs([tmp_path], registry)
    assert result.table["correct"].tolist() == [False]
    assert result.runs.set_index("results_file").loc[str(renamed.results), "timestamp"] == "20250201_000000"

    del results["date"]
    renamed.results.write_text(json.dumps(results))
    with pytest.raises(DuplicateRunsError, match="cannot tell which .* is newer.*copy_results.json"):
        ingest_logs([tmp_path], registry)


def test_generation_settings_of_a_run(tmp_path, registry):
    paths = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True], benchmark="BLINK", split="val"))
    results = json.loads(paths.results.read_text())
    results["config"].update(model_args="pretrained=Qwen/Qwen3-VL-2B-Instruct,device_map=cpu,max_pixels=1605632,"
                                        'mm_processor_kwargs={"a": 1, "b": 2}',
                             gen_kwargs={"max_new_tokens": 16})
    results["configs"]["blink_val"]["generation_kwargs"] = {"temperature": 0.0, "do_sample": False, "until": ["\n\n"]}
    results.update({"n-shot": {"blink_val": 0}, "lmms_eval_version": "0.7.3", "system_instruction": None,
                    "chat_template_sha": "abc"})
    paths.results.write_text(json.dumps(results))
    settings = ingest_logs([tmp_path], registry).settings
    assert list(settings.columns) == SETTINGS_COLUMNS
    assert dict(zip(settings["setting"], settings["value"])) == {
        "backend": "qwen3_vl", "chat_template_sha": "abc", "gen_kwargs.max_new_tokens": "16",
        "generation_kwargs.do_sample": "false", "generation_kwargs.temperature": "0",
        "generation_kwargs.until": '["\\n\\n"]', "lmms_eval_version": "0.7.3", "model_args.max_pixels": "1605632",
        "model_args.mm_processor_kwargs": '{"a":1,"b":2}', "n_shot": "0", "system_instruction": "null",
    }  # the checkpoint and device_map are not settings two sizes share
    assert set(settings["task"]) == {"blink_val"} and set(settings["model"]) == {"Qwen3-VL-2B"}


ODD_RESULTS = {
    "a JSON array": ([], None),
    "config not an object": ({"config": ["qwen3_vl"]}, "config"),
    "no config": ({"results": {}}, "config"),
    "model_args a number": ({"config": {"model_args": 5}}, "config.model_args"),
    "gen_kwargs a list": ({"config": {"model_args": "pretrained=x", "gen_kwargs": [1]}}, "config.gen_kwargs"),
    "n-samples a list": ({"config": {"model_args": "pretrained=x"}, "n-samples": [3]}, "n-samples"),
    "effective a string": ({"config": {"model_args": "pretrained=x"}, "n-samples": {"t": {"effective": "3"}}},
                           "n-samples.t.effective"),
    "effective a boolean": ({"config": {"model_args": "pretrained=x"}, "n-samples": {"t": {"effective": True}}},
                            "n-samples.t.effective"),
    "configs of a string": ({"config": {"model_args": "pretrained=x"}, "configs": {"t": "x"}}, "configs.t"),
    "elapsed a string": ({"config": {"model_args": "pretrained=x"}, "throughput": {"total_elapsed_time": "1"}},
                         "throughput.total_elapsed_time"),
    "output tokens a list": ({"config": {"model_args": "pretrained=x"}, "n-samples": {"t": {"effective": 1}},
                              "efficiency": {"by_task": {"t": {"total_output_tokens": [1]}}}},
                             "efficiency.by_task.t.total_output_tokens"),
}


@pytest.mark.parametrize("case", sorted(ODD_RESULTS))
def test_an_odd_results_json_skips_its_run_and_names_the_field(tmp_path, registry, case):
    content, field = ODD_RESULTS[case]
    odd = write_run(tmp_path, QWEN_8B, "blink_val", make_records([True]), timestamp="20250102_000000")
    odd.results.write_text(json.dumps(content))
    write_run(tmp_path, QWEN_2B, "blink_val", make_records([True, False]))
    result = ingest_logs([tmp_path], registry)  # never raises: the run is skipped and named
    assert set(result.table["model"]) == {"Qwen3-VL-2B"}
    skipped = _problems(result, "bad_results_file")
    assert skipped["file"].tolist() == [str(odd.results)]
    assert (skipped["field"].tolist() == [field]) if field else skipped["field"].isna().all()
    assert result.runs.set_index("results_file").loc[str(odd.results), "status"] == "skipped: bad_results_file"


def test_an_unreadable_results_json_is_skipped(tmp_path, registry):
    bad = write_run(tmp_path, QWEN_8B, "blink_val", make_records([True]))
    for content in (b'{"config": ', b"\xff\xfe not utf-8"):
        bad.results.write_bytes(content)
        skipped = _problems(ingest_logs([tmp_path], registry), "bad_results_file")
        assert skipped["detail"].str.startswith("cannot read results.json").all()


@pytest.mark.parametrize("shape", ["string", "list", "nested"])
def test_the_response_is_the_lines_filtered_resps(tmp_path, registry, shape):
    """Records do not repeat the response (lmms_eval_tasks/record.py): it is read from filtered_resps, silently."""
    records = make_records([True, False])
    write_run(tmp_path, QWEN_2B, "invscale_mmmu_dev_val", records, resps_shape=shape, drop_response=True)
    result = ingest_logs([tmp_path], registry)
    assert result.table["response"].tolist() == [r["response"] for r in records]
    assert result.problems.empty


@pytest.mark.parametrize("shape", ["string", "list", "nested"])
def test_record_response_wins_over_filtered_resps(tmp_path, registry, shape):
    write_run(tmp_path, QWEN_2B, "invscale_mmmu_dev_val", make_records([True]), resps_shape=shape)
    result = ingest_logs([tmp_path], registry)
    assert result.table["response"].tolist() == ["The answer is (A)."] and result.problems.empty


def test_filtered_resps_wins_over_resps_when_they_differ(tmp_path, registry):
    """lmms-eval's filters turn `resps` into `filtered_resps`: the filtered text is what was scored."""
    line = sample_line(make_record(), 0, drop_response=True)
    line["filtered_resps"], line["resps"] = ["B"], [["The answer is (B) because the square is red."]]
    write_run(tmp_path, QWEN_2B, "invscale_mmmu_dev_val", [], extra_lines=[line])
    result = ingest_logs([tmp_path], registry)
    assert result.table["response"].tolist() == ["B"]


def test_missing_response_without_resps_is_invalid(tmp_path, registry):
    line = sample_line(make_record(), 0, drop_response=True)
    del line["filtered_resps"]
    write_run(tmp_path, QWEN_2B, "invscale_mmmu_dev_val", [], extra_lines=[line])
    result = ingest_logs([tmp_path], registry)
    assert result.table.empty
    assert _problems(result, "invalid_record")["detail"].tolist() == [
        "no response: neither filtered_resps, resps nor per_question.response holds a string"]


@pytest.mark.parametrize("fast", [True, False])
def test_letters_outside_the_options_are_invalid_records(tmp_path, fast):
    from postprocess.logs.lines import parse_samples_file

    two = ["a tiger chases a rabbit", "a rabbit chases a tiger"]
    records = [make_record(question_id="ok", options=two, gold="B", prediction="B"),
               make_record(question_id="gold", options=two, gold="C", prediction="A", correct=False),
               make_record(question_id="pred", options=two, gold="A", prediction="D", correct=False)]
    paths = write_run(tmp_path, QWEN_2B, "blink_val", records)
    parsed = parse_samples_file(paths.samples, fast=fast)
    assert parsed.rows.num_rows == 1
    assert [(kind, line, field) for kind, line, field, _, _ in parsed.problems] == [
        ("invalid_record", 2, "per_question.gold"), ("invalid_record", 3, "per_question.prediction")]
    assert parsed.problems[0][3] == "per_question field 'gold' is 'C', not the letter of one of its 2 options (A, B)"


@pytest.mark.parametrize("fast", [True, False])
def test_cait_letters_outside_the_scenes_two_options_and_unknown_variants_are_invalid(tmp_path, fast):
    """A CAIT scene has two sentences: its letters are A and B whether the record lists them or not; a variant
    is one of the tasks' (`sideways` is none)."""
    from lmms_eval_tasks.record import VARIANT_NAMES
    from postprocess.logs.lines import parse_samples_file

    cait = dict(benchmark="CAIT", split="test", subtask="animals", kind="mcq")
    records = [make_record(question_id="ok", gold="B", prediction="B", **cait),
               make_record(question_id="gold", gold="C", prediction="A", correct=False, **cait),
               make_record(question_id="pred", gold="A", prediction="D", correct=False, **cait),
               make_record(question_id="odd", variant="sideways", gold="A", prediction="A")]
    for record in records:
        record.pop("options", None)
    paths = write_run(tmp_path, QWEN_2B, "cait", records)
    parsed = parse_samples_file(paths.samples, fast=fast)
    assert parsed.rows.num_rows == 1
    assert [(line, detail) for _, line, _, detail, _ in parsed.problems] == [
        (2, "per_question field 'gold' is 'C', not the letter of one of its 2 options (A, B)"),
        (3, "per_question field 'prediction' is 'D', not the letter of one of its 2 options (A, B)"),
        (4, f"per_question field 'variant' is 'sideways', not one of {VARIANT_NAMES}")]


def test_orphan_and_missing_samples_files(tmp_path, registry):
    orphan = write_run(tmp_path, QWEN_8B, "blink_val", make_records([True]), timestamp="20250103_000000",
                       write_results=False)
    good = write_run(tmp_path, QWEN_2B, "blink_val", make_records([True]))
    write_run(tmp_path, QWEN_2B, "invscale_mme_test", make_records([True], benchmark="MME", split="test"))
    (good.results.parent / good.results.name.replace("_results.json", "_samples_invscale_mme_test.jsonl")).unlink()
    result = ingest_logs([tmp_path], registry)
    assert set(result.table["model"]) == {"Qwen3-VL-2B"} and len(result.table) == 1
    assert _problems(result, "orphan_samples")[["action", "file"]].values.tolist() == [["skipped", str(orphan.samples)]]
    missing = _problems(result, "missing_samples")
    assert missing["action"].tolist() == ["reported"] and "'invscale_mme_test'" in missing["detail"].iloc[0]
    assert result.counts["orphan_samples_files"] == 1


def test_nothing_to_read_gives_typed_empty_frames(tmp_path, registry):
    result = ingest_logs([tmp_path], registry)
    assert list(result.table.columns) == TABLE_COLUMNS and result.table.empty
    assert str(result.table["correct"].dtype) == "boolean"
    with pytest.raises(FileNotFoundError):
        ingest_logs([tmp_path / "absent"], registry)


def test_parallel_parsing_matches_serial(tmp_path, registry):
    for i, model in enumerate([QWEN_2B, QWEN_8B, "google/gemma-3-4b-it"]):
        write_run(tmp_path, model, "blink_val", make_records([True, False, None] * 20, benchmark="BLINK",
                                                             split="val"), truncate_last=True, mtime=1e6 + i)
        write_run(tmp_path, model, "blink_val_cot", make_records([True] * 10, benchmark="BLINK", split="val",
                                                                 variant="cot"), mtime=1e6 + i)
    serial = ingest_logs([tmp_path], registry, workers=1)
    parallel = ingest_logs([tmp_path], registry, workers=2, progress=True)
    pd.testing.assert_frame_equal(serial.table, parallel.table)
    pd.testing.assert_frame_equal(serial.problems, parallel.problems)
    assert serial.counts == parallel.counts


def test_tiny_family_from_an_extra_registry(tmp_path, registry):
    tiny = registry.merge(Registry.from_dict(tiny_family_registry_dict(), source="tiny"))
    for size in ("l", "s", "m"):
        write_run(tmp_path, f"/tmp/models/tiny-{size}", "blink_val", make_records([True, False]))
    table = ingest_logs([tmp_path], tiny).table
    assert table["model"].cat.categories.tolist() == ["Tiny-S", "Tiny-M", "Tiny-L"]
    assert table["size"].cat.categories.tolist() == ["S", "M", "L"]


# ------------------------------------------------------------------------------------------ cache
def _no_reading(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the logs were read again")

    monkeypatch.setattr(ingest, "ingest_logs", fail)


def _entries(cache_dir):
    return sorted(path for path in cache_dir.iterdir() if path.name.startswith("ingest-"))


def test_cache_hit_does_not_read_logs_and_an_edit_of_the_same_size_and_time_is_seen(tmp_path, registry,
                                                                                      monkeypatch):
    logs, cache_dir = tmp_path / "logs", tmp_path / "cache"
    paths = write_run(logs, QWEN_2B, "blink_val", make_records([True, None, False], benchmark="BLINK", split="val"),
                      truncate_last=True)
    first = cache.load_or_ingest([logs], cache_dir, registry)
    assert not first.from_cache
    with monkeypatch.context() as patched:
        _no_reading(patched)
        second = cache.load_or_ingest([logs], cache_dir, registry)
        os.utime(paths.samples, (3e6, 3e6))  # `touch` changes no byte: the same entry
        touched = cache.load_or_ingest([logs], cache_dir, registry)
    assert second.from_cache and touched.from_cache
    for name in ingest.FRAMES:
        pd.testing.assert_frame_equal(getattr(first, name), getattr(second, name))
    assert second.counts == first.counts

    stat = paths.samples.stat()
    data = paths.samples.read_bytes()
    paths.samples.write_bytes(data.replace(b'"correct": true', b'"correct": 1234'))  # same size
    os.utime(paths.samples, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same mtime
    assert paths.samples.stat().st_size == stat.st_size
    edited = cache.load_or_ingest([logs], cache_dir, registry)
    assert not edited.from_cache and edited.counts["invalid_record"] == 1
    with monkeypatch.context() as patched, pytest.raises(AssertionError, match="read again"):
        _no_reading(patched)  # another model mapping is another entry
        cache.load_or_ingest([logs], cache_dir, registry, model_overrides={"elsewhere": "Qwen3-VL-8B"})


def test_another_duplicates_rule_is_another_cache_entry(tmp_path, registry):
    """A second report with --duplicates oldest must not reuse the table the newest rule built."""
    logs, cache_dir = tmp_path / "logs", tmp_path / "cache"
    for timestamp, outcome in (("20250101_000000", False), ("20250102_000000", True)):
        write_run(logs, QWEN_2B, "blink_val", make_records([outcome], benchmark="BLINK", split="val"),
                  timestamp=timestamp)
    newest = cache.load_or_ingest([logs], cache_dir, registry, duplicates="newest")
    oldest = cache.load_or_ingest([logs], cache_dir, registry, duplicates="oldest")
    assert not oldest.from_cache and len(_entries(cache_dir)) == 2
    assert newest.table["correct"].tolist() == [True] and oldest.table["correct"].tolist() == [False]
    assert cache.load_or_ingest([logs], cache_dir, registry, duplicates="oldest").table["correct"].tolist() == [False]


def test_remembered_hashes_follow_the_ctime_rule(tmp_path, monkeypatch):
    path = tmp_path / "x_samples_t.jsonl"
    path.write_bytes(b"one\n")
    hashes = cache.FileHashes(tmp_path / cache.HASHES_FILE)
    first = hashes(path)
    assert str(path) not in hashes.memo  # changed within the last 2 s: hashed again next time (racy)
    monkeypatch.setattr(cache.time, "time_ns", lambda: path.stat().st_ctime_ns + cache.RACY_MARGIN_NS + 1)
    assert hashes(path) == first and str(path) in hashes.memo
    hashes.save()
    again = cache.FileHashes(tmp_path / cache.HASHES_FILE)
    assert again.memo == hashes.memo

    stat = path.stat()
    path.write_bytes(b"two\n")  # same size; times put back: only the ctime tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert again(path) != first


@pytest.mark.parametrize("damage", ["delete meta.json", "garble meta.json", "truncate table.parquet",
                                    "overwrite runs.parquet", "delete settings.parquet", "another frame"])
def test_a_damaged_entry_is_rebuilt_with_a_notice(tmp_path, registry, damage):
    logs, cache_dir = tmp_path / "logs", tmp_path / "cache"
    write_run(logs, QWEN_2B, "blink_val", make_records([True, False], benchmark="BLINK", split="val"))
    first = cache.load_or_ingest([logs], cache_dir, registry)
    entry = _entries(cache_dir)[0]
    if damage == "delete meta.json":
        (entry / "meta.json").unlink()
    elif damage == "garble meta.json":
        (entry / "meta.json").write_text("{not json")
    elif damage == "truncate table.parquet":
        data = (entry / "table.parquet").read_bytes()
        (entry / "table.parquet").write_bytes(data[: len(data) // 2])
    elif damage == "overwrite runs.parquet":
        size = (entry / "runs.parquet").stat().st_size
        (entry / "runs.parquet").write_bytes(b"\0" * size)
    elif damage == "delete settings.parquet":
        (entry / "settings.parquet").unlink()
    else:
        (entry / "problems.parquet").write_bytes((entry / "runs.parquet").read_bytes())
    notices = []
    rebuilt = cache.load_or_ingest([logs], cache_dir, registry, notice=notices.append)
    assert not rebuilt.from_cache and len(notices) == 1
    assert notices[0].startswith(f"cache: {entry} is damaged (") and notices[0].endswith("); rebuilding it")
    pd.testing.assert_frame_equal(rebuilt.table, first.table)
    assert cache.load_or_ingest([logs], cache_dir, registry, notice=notices.append).from_cache and len(notices) == 1


def test_cache_refresh_rewrites_the_entry(tmp_path, registry):
    write_run(tmp_path / "logs", QWEN_2B, "blink_val", make_records([True]))
    cache.load_or_ingest([tmp_path / "logs"], tmp_path / "cache", registry)
    again = cache.load_or_ingest([tmp_path / "logs"], tmp_path / "cache", registry, refresh=True)
    assert not again.from_cache and len(_entries(tmp_path / "cache")) == 1
    assert cache.load_or_ingest([tmp_path / "logs"], tmp_path / "cache", registry).from_cache


def test_a_cache_that_cannot_be_written(tmp_path, registry):
    write_run(tmp_path / "logs", QWEN_2B, "blink_val", make_records([True]))
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        cache.load_or_ingest([tmp_path / "logs"], tmp_path / "file", registry)
    notices = []
    result = cache.load_or_ingest([tmp_path / "logs"], "/proc/no-cache-here", registry, notice=notices.append)
    assert len(result.table) == 1 and len(notices) == 1 and "continuing without the cache" in notices[0]


# ------------------------------------------------------------------------------------------ quality
def test_quality_frames(tmp_path, registry):
    write_run(tmp_path, QWEN_2B, "blink_val", make_records([True, None, None, False], benchmark="BLINK",
                                                           split="val"), truncate_last=True)
    write_run(tmp_path, QWEN_2B, "invscale_mmmu_test", make_records([True, True], benchmark="MMMU", split="test"))
    write_run(tmp_path, QWEN_8B, "blink_val", make_records([True, False, True, True], benchmark="BLINK",
                                                           split="val"))
    write_run(tmp_path, "google/gemma-3-4b-it", "blink_val", make_records([True], benchmark="BLINK", split="val"))
    result = ingest_logs([tmp_path], registry)
    summary = quality_summary(result, registry)

    overview = summary.overview.set_index("item")["value"]
    assert overview["rows kept"] == 10 and overview["runs ingested"] == 3 and overview["models"] == 3

    problems = summary.problems.set_index("kind")
    assert problems.loc["truncated_line", ["action", "n", "n_files"]].tolist() == ["skipped", 1, 1]
    assert problems.loc["duplicate", "n"] == 0

    unparsed = summary.unparsed.set_index(["model", "benchmark"])
    assert unparsed.loc[("Qwen3-VL-2B", "BLINK"), ["n_rows", "n_unparsed"]].tolist() == [3, 2]
    assert unparsed.loc[("Qwen3-VL-8B", "BLINK"), "unparsed_pct"] == 0.0

    missing = summary.missing_runs
    qwen_8b = missing[missing["model"] == "Qwen3-VL-8B"]
    assert qwen_8b[["benchmark", "split", "n_family_models_with", "n_models_with"]].values.tolist() == [
        ["MMMU", "test", 1, 1]]
    gemma_4b = missing[missing["model"] == "Gemma-3-4B"]
    assert gemma_4b[["benchmark", "split", "n_family_models_with"]].values.tolist() == [["MMMU", "test", 0]]
    # with the registry, family members without any rows are missing everything
    assert set(missing.loc[missing["model"] == "Qwen3-VL-32B", "split"]) == {"val", "test"}
    assert "InternVL3.5-1B" not in set(missing["model"])

    partial = summary.partial_runs
    assert partial[["model", "n_questions", "max_questions", "n_missing"]].values.tolist() == [
        ["Qwen3-VL-2B", 3, 4, 1], ["Gemma-3-4B", 1, 4, 3]]  # registry order


# ------------------------------------------------------------------------------------------ accounting
LINE_KINDS = ["good", "duplicate", "malformed", "no_record", "invalid", "blank", "filled"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(LINE_KINDS), max_size=12), truncate=st.booleans())
def test_every_line_is_kept_or_reported(registry, kinds, truncate):
    lines = []
    for i, kind in enumerate(kinds):
        record = make_record(question_id="dup" if kind == "duplicate" else f"q{i}")
        lines.append({"good": sample_line(record, i), "duplicate": sample_line(record, i), "malformed": "{oops",
                      "no_record": sample_line(record, i, with_per_question=False),
                      "invalid": sample_line(make_record(question_id=f"q{i}", match="guess"), i), "blank": "",
                      "filled": sample_line(record, i, drop_response=True)}[kind])
    with tempfile.TemporaryDirectory() as folder:
        write_run(folder, QWEN_2B, "invscale_mmmu_dev_val", [], extra_lines=lines, truncate_last=truncate)
        result = ingest_logs([folder], registry)
    line_problems = result.problems[result.problems["action"] == "skipped"]
    assert result.counts["lines_read"] == len(result.table) + len(line_problems)
    assert result.counts["lines_skipped"] == len(line_problems)
    assert result.table["question_id"].is_unique
    whole_duplicate_lines = kinds.count("duplicate") - (truncate and kinds[-1:] == ["duplicate"])
    assert result.counts["duplicate"] == max(0, whole_duplicate_lines - 1)
    assert result.counts["invalid_record"] == kinds.count("invalid") - (truncate and kinds[-1:] == ["invalid"])
