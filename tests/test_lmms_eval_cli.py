"""The real lmms-eval CLI, in a subprocess, on tiny random-weight models over the bundled fixtures.

A random-weight model answers noise, so these tests check the protocol, not accuracy: every task and
variant runs, every sample line carries a valid per_question record, question ids join across
variants, and the gold option is the same option in every order; and the answer-adjudication judge
asked from inside the run.
"""

import hashlib
import json
from collections import defaultdict

import pytest
import yaml
from reeval_server import AdjudicationJudge, JudgeServer

from launch.runner import lmms_eval_command, run_lmms_eval
from lmms_eval_tasks import scoring
from lmms_eval_tasks.catalog import GROUPS, TASKS
from lmms_eval_tasks.hooks import doc_to_visual, prepare_docs, question_of
from lmms_eval_tasks.record import validate_record
from postprocess.adjudication import live
from invscale.judges.client import image_bytes
from postprocess.logs.questions import dataset_source, load_split

pytestmark = pytest.mark.cli
TEST_GEN_KWARGS = "max_new_tokens=6"  # random weights never stop by themselves; the tasks' own budget is 2048/4096


def read_records(path):
    lines = path.read_text().splitlines()
    return [validate_record(json.loads(line)["per_question"]) for line in lines]


@pytest.fixture(scope="module")
def every_task_run(tmp_path_factory, fixture_tasks, tiny_qwen3_vl):
    out = tmp_path_factory.mktemp("qwen3_vl_runs")
    cait_tasks = [t for t in TASKS if TASKS[t].base == "cait"]
    command = lmms_eval_command("qwen3_vl", f"pretrained={tiny_qwen3_vl},device_map=cpu", list(GROUPS) + cait_tasks, out,
                                include_path=fixture_tasks, gen_kwargs=TEST_GEN_KWARGS, device="cpu")
    return run_lmms_eval(command, out, list(TASKS), out / "lmms_eval.log")


def test_every_task_and_variant_logs_a_valid_record_per_sample(every_task_run):
    assert set(every_task_run.samples) == set(TASKS)
    for task, path in every_task_run.samples.items():
        records = read_records(path)
        assert records, task
        assert {r["variant"] for r in records} == {TASKS[task].variant}
        assert len({r["question_id"] for r in records}) == len(records), f"{task}: duplicate question ids"


def test_results_json_holds_each_tasks_metrics_and_nothing_empty(every_task_run):
    results = json.loads(every_task_run.results.read_text())["results"]
    for task, entry in results.items():
        assert not any(value == [] for value in entry.values()), f"{task}: empty entries {entry}"
    blink = results["blink_val"]
    metrics = {key.split(",")[0] for key in blink if "," in key and "_stderr" not in key}
    assert metrics == {"accuracy", "unparsed_rate", "per_question"}
    assert 0.0 <= blink["accuracy,none"] <= 1.0 and isinstance(blink["accuracy_stderr,none"], float)  # not "N/A"
    assert blink["per_question,none"] == 6  # the records in the samples file
    assert "accuracy,none" not in results["invscale_mmmu_test"]  # no public answers: no accuracy
    describe = {key.split(",")[0] for key in results["cait_describe"] if "," in key and "_stderr" not in key}
    assert describe == {"empty_response_rate", "per_question"}


def test_groups_pool_accuracy_over_their_tasks_weighted_by_questions(every_task_run):
    output = json.loads(every_task_run.results.read_text())
    results, sizes = output["results"], output["n-samples"]
    scored = [t for t in GROUPS["invscale"] if "accuracy,none" in results[t]]
    pooled = sum(results[t]["accuracy,none"] * sizes[t]["effective"] for t in scored) / sum(
        sizes[t]["effective"] for t in scored)
    assert results["invscale"]["accuracy,none"] == pytest.approx(pooled)
    assert isinstance(results["invscale"]["accuracy_stderr,none"], float)


def test_the_console_table_stays_narrow_and_the_log_has_the_subtask_accuracy(every_task_run):
    log = every_task_run.log.read_text()
    table = [line for line in log.splitlines() if line.startswith("|")]
    assert any("blink_val" in line for line in table)
    assert max(map(len, table)) < 200
    assert "BLINK val (direct) accuracy by subtask:" in log and "Relative Depth" in log


def test_each_sample_line_stores_the_response_once(every_task_run):
    for line in map(json.loads, every_task_run.samples["blink_val"].read_text().splitlines()):
        assert "response" not in line["per_question"] and isinstance(line["filtered_resps"], str)
        assert set(line) & {"subtask_accuracy", "macro_f1", "empty_response_rate"} == set()


def test_variants_join_on_question_id_and_keep_the_gold_option(every_task_run):
    by_base = defaultdict(dict)
    for task, path in every_task_run.samples.items():
        by_base[TASKS[task].base][TASKS[task].variant] = {r["question_id"]: r for r in read_records(path)}
    for base, variants in by_base.items():
        direct = variants["direct"]
        for variant, records in variants.items():
            assert set(records) <= set(direct), f"{base} {variant}: ids not in the direct run"
            for qid, record in records.items():
                if record["kind"] == "mcq" and record["gold"] is not None:
                    gold_text = record["options"][ord(record["gold"]) - 65]
                    original = direct[qid]
                    assert gold_text == original["options"][ord(original["gold"]) - 65], (base, variant, qid)


def test_sample_counts_match_the_fixtures(every_task_run):
    counts = {task: len(path.read_text().splitlines()) for task, path in every_task_run.samples.items()}
    assert counts["blink_val"] == 6 and counts["blink_val_shift1"] == 2  # only the 4-choice questions shift
    assert counts["invscale_scienceqa_img_test"] == 6  # the text-only question is left out
    assert counts["invscale_mmmu_dev_val"] == 8  # dev + validation in one split
    assert counts["invscale_mme_test"] == 6
    assert all(counts[t] == 8 for t in ("cait", "cait_swap", "cait_cot", "cait_structured", "cait_describe"))


def test_cait_results_have_f1_and_the_swap_run_flips_every_answer_position(every_task_run):
    results = json.loads(every_task_run.results.read_text())["results"]
    assert 0.0 <= results["cait"]["macro_f1,none"] <= 1.0 and "accuracy_stderr,none" in results["cait"]
    direct = {r["question_id"]: r for r in read_records(every_task_run.samples["cait"])}
    swapped = {r["question_id"]: r for r in read_records(every_task_run.samples["cait_swap"])}
    assert sorted(r["gold"] for r in direct.values()) == ["A"] * 4 + ["B"] * 4
    assert all({direct[q]["gold"], swapped[q]["gold"]} == {"A", "B"} for q in direct)
    described = read_records(every_task_run.samples["cait_describe"])
    assert all(r["prediction"] is None and r["correct"] is None for r in described)


def test_a_second_model_wrapper_runs_through_its_chat_path(tmp_path, fixture_tasks, tiny_llava):
    tasks = ["invscale_mmbench_dev_en", "blink_val"]  # single- and multi-image
    command = lmms_eval_command("llava_hf", f"pretrained={tiny_llava},device_map=cpu", tasks, tmp_path,
                                include_path=fixture_tasks, gen_kwargs=TEST_GEN_KWARGS, device="cpu")
    run = run_lmms_eval(command, tmp_path, tasks, tmp_path / "lmms_eval.log")
    for path in run.samples.values():
        assert read_records(path)
    assert "llava_hf" in json.loads(run.results.read_text())["config"]["model"]


def test_the_adjudicator_judges_unparsed_answers_during_the_run(tmp_path, fixture_tasks, tiny_qwen3_vl):
    """Two-token answers of a random-weight model rarely name an option: the rules abstain and the seam asks
    the judge (the local server) with the question's images, inside the lmms-eval run."""
    key = "sk-test-adjudication-cli-91b4"
    tasks = ["blink_val_reverse", "invscale_mme_test"]  # multi-image with reordered options; yes/no
    with JudgeServer(keys={key}, answer=AdjudicationJudge(), lifetime_s=600) as server:
        judges = tmp_path / "judges.yaml"
        judges.write_text(yaml.safe_dump({"judges": [{
            "name": "local", "provider": "openai", "model": "judge-model", "base_url": server.openai_url,
            "api_key_env": "ADJUDICATION_CLI_KEY", "requests_per_second": 1000, "max_retries": 1, "backoff_s": 0.01,
            "timeout_s": 30, "max_tokens": 8}]}))
        env = {scoring.ADJUDICATOR_ENV: "postprocess.adjudication.live:adjudicate", live.JUDGES_ENV: str(judges),
               live.CACHE_ENV: str(tmp_path / "cache"), "ADJUDICATION_CLI_KEY": key}
        command = lmms_eval_command("qwen3_vl", f"pretrained={tiny_qwen3_vl},device_map=cpu", tasks, tmp_path / "out",
                                    include_path=fixture_tasks, limit=4, gen_kwargs="max_new_tokens=2", device="cpu")
        command.append("--process_with_media")  # else lmms-eval scores docs without their image columns
        run = run_lmms_eval(command, tmp_path / "out", tasks, tmp_path / "lmms_eval.log", env=env)
        seen = [request.images for request in server.answered]

    records = [record for task in tasks for record in read_records(run.samples[task])]
    judged = [record for record in records if "judge_status" in record]
    assert judged and len(judged) == len(seen)  # one call per answer the rules left unparsed: nothing cached yet
    assert all(record["abstain_reason"] is not None and record["judge_model"] == "judge-model" for record in judged)
    assert not [r for r in records if r["match"] == "none" and r["gold"] is not None and "judge_status" not in r]
    settled = [record for record in judged if record["judge_status"] == "settled"]
    assert settled and all(r["match"] == "judge" and r["prediction"] == r["judge_verdict"] for r in settled)
    assert {record["judge_status"] for record in judged} <= {"settled", "no_answer"}

    # the judge saw each question's images as the model got them
    docs = {}
    for task in tasks:
        spec = TASKS[task].spec
        for doc in prepare_docs(load_split(dataset_source(spec, fixture_tasks), spec.task), task):
            docs[(question_of(doc).benchmark, question_of(doc).question_id)] = doc
    expected = [tuple(hashlib.sha256(image_bytes(image)).hexdigest()
                      for image in doc_to_visual(docs[(r["benchmark"], r["question_id"])])) for r in judged]
    assert sorted(seen) == sorted(expected) and all(seen)
    assert not any(key in path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file())
