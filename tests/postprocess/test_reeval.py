"""CAIT LLM re-evaluation (postprocess.cait.reeval, through invscale.judges) against a local server speaking the OpenAI and Anthropic
wire formats (reeval_server.py), through the official clients: answers, the GT-prompt bound, caching,
retries, crash and resume, rate limiting, and keys that never leave the environment."""

import logging
import re
import time
from pathlib import Path

import pandas as pd
import pytest
from reeval_server import JudgeServer
from cait_logs import GEMMA_4B, QWEN_8B, describes, ingest, scene_questions, write_cait_logs

from model_configs import DEFAULT_REGISTRY_PATH
from postprocess.cait import reeval
from postprocess.cait.metrics import GT_PROMPT_LABEL, reeval_by_judge
from postprocess.cait.reeval import run_reeval
from postprocess.cli import build_parser
from postprocess.cli.cait import run_cait_reeval
from postprocess.cli import main as cli_main
from invscale.judges import JudgeCache, JudgeConfig, JudgeConfigError, JudgeError, load_judges

OPENAI_KEY, ANTHROPIC_KEY = "sk-test-openai-5f0c2b", "sk-ant-test-91d7e4"
QUESTIONS = 8 * 2 + 8  # 8 scenes x 2 models, plus the 8 GT prompts


class Crash(Exception):
    pass


@pytest.fixture
def server():
    with JudgeServer(keys={OPENAI_KEY, ANTHROPIC_KEY}) as running:
        yield running


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("TEST_OPENAI_KEY", OPENAI_KEY)
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", ANTHROPIC_KEY)


@pytest.fixture
def table(tmp_path):
    """Qwen3-VL-8B describes what the images show; Gemma-3-4B describes the commonsense scene."""
    write_cait_logs(tmp_path / "logs", {QWEN_8B: {"describe": describes("uncommon")},
                                        GEMMA_4B: {"describe": describes("common")}})
    return ingest(tmp_path / "logs").table


def judge(server: JudgeServer, provider: str = "openai", **changes) -> JudgeConfig:
    settings = {
        "name": f"{provider}-judge", "provider": provider, "model": f"{provider}-model",
        "base_url": server.openai_url if provider == "openai" else server.anthropic_url,
        "api_key_env": "TEST_OPENAI_KEY" if provider == "openai" else "TEST_ANTHROPIC_KEY",
        "requests_per_second": 1000, "concurrency": 2, "max_retries": 3, "backoff_s": 0.01,
    }
    return JudgeConfig(**{**settings, **changes})


def cache_lines(cache_dir: Path, name: str) -> list[str]:
    return (cache_dir / f"{name}.jsonl").read_text().splitlines()


# ---------------------------------------------------------------------------------------------- answers
def test_both_providers_judge_descriptions_and_the_gt_prompt(tmp_path, server, keys, table):
    judges = [judge(server, "openai"), judge(server, "anthropic")]
    result = run_reeval(table, judges, tmp_path / "cache")
    assert len(result.items) == 2 * QUESTIONS and (result.items["status"] == "answered").all()
    scores = result.scores.set_index(["judge", "model"])["accuracy"]
    for name in ("openai-judge", "anthropic-judge"):
        assert scores[(name, "Qwen3-VL-8B")] == 1.0  # its descriptions name what the image shows
        assert scores[(name, "Gemma-3-4B")] == 0.0  # its descriptions name the commonsense scene
        assert scores[(name, GT_PROMPT_LABEL)] == 1.0  # the upper bound
    paths = [r.path for r in server.requests]
    assert paths.count("/v1/chat/completions") == QUESTIONS and paths.count("/v1/messages") == QUESTIONS
    assert all(r.authorized for r in server.requests)
    assert {r.model for r in server.requests} == {"openai-model", "anthropic-model"}
    table4 = reeval_by_judge(result.scores)
    assert table4["model"].tolist()[0] == GT_PROMPT_LABEL
    assert table4.columns.tolist() == ["model", "openai-judge", "anthropic-judge", "Mean"]
    prompt = server.requests[0].prompt
    assert "Which of the following option better describes the image?\nOption A: " in prompt
    assert prompt.endswith("Answer directly with the option letter (A or B) only.")


def test_options_are_in_the_scenes_direct_order(tmp_path, server, keys, table):
    items = run_reeval(table, [judge(server)], tmp_path / "cache").items
    direct = {q.question_id: q for q in scene_questions()}  # as the direct (instant) task shows them
    assert all(gold == direct[scene].gold for scene, gold in zip(items["scene"], items["gold"]))
    for request in server.requests:
        scene = next(q for q in direct.values() if q.options[0] in request.prompt)
        assert f"Option A: {scene.options[0]}\nOption B: {scene.options[1]}\n" in request.prompt


def test_always_a_judge_scores_half_accuracy_and_a_third_macro_f1(tmp_path, server, keys, table):
    server.answer = lambda prompt: "A"
    scores = run_reeval(table, [judge(server)], tmp_path / "cache").scores.set_index("model")
    for model in ("Qwen3-VL-8B", "Gemma-3-4B", GT_PROMPT_LABEL):
        assert scores.loc[model, "accuracy"] == 0.5
        assert scores.loc[model, "macro_f1"] == pytest.approx(1 / 3)


def test_unparsable_judge_answers_count_wrong_and_are_reported(tmp_path, server, keys, table):
    server.answer = lambda prompt: "Both could be right."
    result = run_reeval(table, [judge(server)], tmp_path / "cache")
    assert (result.items["status"] == "unparsed").all() and not result.items["correct"].any()
    assert result.items["prediction"].isna().all()
    assert result.scores.set_index("model").loc["Qwen3-VL-8B", "unparsed"] == 8


def test_empty_descriptions_are_wrong_without_a_call_and_reasoning_is_removed(tmp_path, server, keys):
    def respond(question, i):
        if i == 0:
            return "   "
        return f"<think>Option: {question.details['common_text']}?</think>It shows: {question.details['uncommon_text']}"

    write_cait_logs(tmp_path / "logs", {QWEN_8B: {"describe": respond}})
    result = run_reeval(ingest(tmp_path / "logs").table, [judge(server)], tmp_path / "cache", include_gt_prompt=False)
    empty = result.items[result.items["status"] == "empty_description"]
    assert len(empty) == 1 and not empty["correct"].any() and empty["answer"].isna().all()
    assert len(server.requests) == 7 and not any("<think>" in r.prompt for r in server.requests)
    assert result.scores.iloc[0]["accuracy"] == pytest.approx(7 / 8)


# ---------------------------------------------------------------------------------------------- cache, retries
def test_a_second_run_is_served_from_the_cache(tmp_path, server, keys, table, monkeypatch):
    first = run_reeval(table, [judge(server), judge(server, "anthropic")], tmp_path / "cache")
    asked = len(server.requests)
    assert asked == 2 * QUESTIONS
    monkeypatch.delenv("TEST_OPENAI_KEY")  # a fully cached judge needs no key
    monkeypatch.delenv("TEST_ANTHROPIC_KEY")
    second = run_reeval(table, [judge(server), judge(server, "anthropic")], tmp_path / "cache")
    assert len(server.requests) == asked
    assert second.calls["made"].tolist() == [0, 0] and second.calls["cached"].tolist() == [QUESTIONS, QUESTIONS]
    assert second.items.equals(first.items)
    pending = reeval.pending_calls(table, [judge(server)], tmp_path / "cache")
    assert {estimate.judge: estimate.calls for estimate in pending} == {"openai-judge": 0}


def test_changed_generation_settings_are_not_served_from_the_cache(tmp_path, server, keys, table):
    run_reeval(table, [judge(server)], tmp_path / "cache", include_gt_prompt=False)
    run_reeval(table, [judge(server, max_tokens=32)], tmp_path / "cache", include_gt_prompt=False)
    assert len(server.requests) == 2 * 16


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_server_errors_and_rate_limits_are_retried(tmp_path, server, keys, table, provider, caplog):
    server.fail_next(2, status=500)
    server.fail_next(1, status=429, retry_after=0)
    server.fail_next(1, status=503)
    result = run_reeval(table, [judge(server, provider, concurrency=1, max_retries=4)], tmp_path / "cache")
    assert [r.status for r in server.requests[:5]] == [500, 500, 429, 503, 200]
    assert len(server.requests) == QUESTIONS + 4 and len(server.answered) == QUESTIONS
    assert (result.items["status"] == "answered").all() and result.calls.iloc[0]["made"] == QUESTIONS
    assert caplog.text.count("retry") == 4
    attempts = [line for line in cache_lines(tmp_path / "cache", f"{provider}-judge") if '"attempts": 5' in line]
    assert len(attempts) == 1  # the first question took 4 failures and 1 success


def test_exhausted_retries_stop_the_run_and_name_the_judge(tmp_path, server, keys, table):
    server.fail_next(10, status=503)
    with pytest.raises(JudgeError, match=r"judge 'openai-judge': request failed \(503\) after 3 attempt\(s\)"):
        run_reeval(table, [judge(server, max_retries=2, concurrency=1)], tmp_path / "cache")
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(tmp_path, server, table, monkeypatch):
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-wrong-key-0000")
    with pytest.raises(JudgeError, match=r"request failed \(401\) after 1 attempt") as raised:
        run_reeval(table, [judge(server, concurrency=1)], tmp_path / "cache")
    assert "sk-wrong-key-0000" not in str(raised.value)
    assert len(server.requests) == 1


MALFORMED_BODIES = [b"<html>502 Bad Gateway</html>", b'{"result": "A"}', b'{"id": "x", "choices": []}',
                    b'{"content": "A"}']


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("body", MALFORMED_BODIES)
def test_a_malformed_response_body_is_asked_again(tmp_path, server, keys, table, provider, body):
    server.garble_next(2, body)
    result = run_reeval(table, [judge(server, provider, concurrency=1)], tmp_path / "cache")
    assert len(server.requests) == QUESTIONS + 2 and (result.items["status"] == "answered").all()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("body, says", zip(MALFORMED_BODIES, ["not JSON", "has no", "has no", "has no"]))
def test_a_body_that_stays_malformed_stops_the_run_and_names_the_judge(tmp_path, server, keys, table, provider,
                                                                       body, says):
    server.garble_next(10, body)
    with pytest.raises(JudgeError, match=rf"judge '{provider}-judge': request failed \(malformed response\) "
                                         rf"after 3 attempt\(s\): the response (body is )?{says}"):
        run_reeval(table, [judge(server, provider, max_retries=2, concurrency=1)], tmp_path / "cache")
    assert len(server.requests) == 3


def test_a_crashed_run_resumes_without_repeating_calls(tmp_path, server, keys, table):
    completed = []

    def crash_after_five(judge_name, key):
        completed.append(key)
        if len(completed) == 5:
            raise Crash("killed")

    with pytest.raises(Crash):
        run_reeval(table, [judge(server, concurrency=3)], tmp_path / "cache", on_call=crash_after_five)
    kept = cache_lines(tmp_path / "cache", "openai-judge")
    assert 5 <= len(kept) < QUESTIONS  # calls in flight at the crash finish and are kept; no new one starts
    result = run_reeval(table, [judge(server, concurrency=3)], tmp_path / "cache")
    assert result.calls.iloc[0]["cached"] == len(kept) and result.calls.iloc[0]["made"] == QUESTIONS - len(kept)
    prompts = [r.prompt for r in server.requests]
    assert len(prompts) == QUESTIONS and len(set(prompts)) == QUESTIONS  # every question asked exactly once
    assert len(cache_lines(tmp_path / "cache", "openai-judge")) == QUESTIONS
    assert (result.items["status"] == "answered").all()


def test_a_line_cut_short_by_a_kill_is_asked_again(tmp_path, server, keys, table):
    run_reeval(table, [judge(server)], tmp_path / "cache")
    path = tmp_path / "cache" / "openai-judge.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) - len(text.splitlines()[-1]) // 2 - 1])  # half the last line, no newline
    result = run_reeval(table, [judge(server)], tmp_path / "cache")
    assert result.calls.iloc[0][["made", "ignored_cache_lines"]].tolist() == [1, 1]
    assert len(server.requests) == QUESTIONS + 1
    assert JudgeCache(path).ignored_lines == 1 and len(JudgeCache(path).answers) == QUESTIONS


def test_a_cache_line_with_a_byte_that_is_not_utf8_is_asked_again(tmp_path, server, keys, table):
    run_reeval(table, [judge(server)], tmp_path / "cache")
    path = tmp_path / "cache" / "openai-judge.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"answer": "', b'"answer": "\xff', 1)
    path.write_bytes(b"".join(lines))
    result = run_reeval(table, [judge(server)], tmp_path / "cache")
    assert result.calls.iloc[0][["made", "ignored_cache_lines"]].tolist() == [1, 1]


def test_a_full_disk_under_the_judge_cache_names_the_file(tmp_path):
    path = tmp_path / "judge.jsonl"
    cache = JudgeCache(path)
    path.symlink_to("/dev/full")  # every write fails with ENOSPC, as on a full disk
    with pytest.raises(JudgeError, match=re.escape(f"judge cache {path}: cannot write (No space left on device)")):
        cache.put({"key": "k", "answer": "A"})


def test_requests_respect_the_rate_limit(tmp_path, server, keys, table):
    run_reeval(table, [judge(server, requests_per_second=20, concurrency=4)], tmp_path / "cache",
               include_gt_prompt=False)
    arrivals = sorted(r.at for r in server.requests)
    assert len(arrivals) == 16
    # Starts are >= 1/20 s apart and each arrival comes after its start, so the k-th arrival is at least
    # k/20 s after the first start; only the first request's lag (allowed up to 1/20 s) can shrink that.
    for k, arrival in enumerate(arrivals):
        assert arrival - arrivals[0] >= k * 0.05 - 0.05


# ---------------------------------------------------------------------------------------------- keys, config, CLI
def test_keys_come_from_the_environment_and_are_never_written_or_logged(tmp_path, server, keys, table, caplog,
                                                                        capsys):
    caplog.set_level(logging.DEBUG)
    server.fail_next(1, status=500)  # a retry is logged too
    judges_file = tmp_path / "judges.yaml"
    judges_file.write_text(
        "judges:\n"
        f"  - {{name: oa, provider: openai, model: m1, base_url: '{server.openai_url}', api_key_env: TEST_OPENAI_KEY,"
        " requests_per_second: 1000, backoff_s: 0.01}\n"
        f"  - {{name: an, provider: anthropic, model: m2, base_url: '{server.anthropic_url}',"
        " api_key_env: TEST_ANTHROPIC_KEY, requests_per_second: 1000}\n")
    args = build_parser().parse_args(["cait-reeval", "--logs", str(tmp_path / "logs"), "--judges", str(judges_file),
                                      "--out", str(tmp_path / "out")])
    assert run_cait_reeval(args) == 0
    assert all(r.authorized for r in server.answered) and len(server.answered) == 2 * QUESTIONS
    output = capsys.readouterr()
    for secret in (OPENAI_KEY, ANTHROPIC_KEY):
        assert secret not in caplog.text and secret not in output.out + output.err
        for path in (p for p in tmp_path.rglob("*") if p.is_file()):
            assert secret.encode() not in path.read_bytes(), path
    assert "retry" in caplog.text
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["cait_reeval.md", "cait_reeval_calls.csv", "cait_reeval_items.csv", "cait_reeval_scores.csv",
                       "judge_cache"]
    assert GT_PROMPT_LABEL in (tmp_path / "out" / "cait_reeval.md").read_text()
    args.dry_run = True
    assert run_cait_reeval(args) == 0 and "oa: 0 call(s) to make" in capsys.readouterr().out
    # the report of these (CAIT-only) logs carries the judges' table
    assert cli_main(["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "report"),
                     "--reeval", str(tmp_path / "out")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## CAIT (Seeing vs. Believing)" in report and GT_PROMPT_LABEL in report


def test_a_missing_key_variable_is_named_before_any_judge_calls(tmp_path, server, keys, table, monkeypatch):
    monkeypatch.delenv("TEST_OPENAI_KEY")
    with pytest.raises(JudgeConfigError, match="environment variable TEST_OPENAI_KEY is not set"):
        run_reeval(table, [judge(server, "anthropic"), judge(server)], tmp_path / "cache")
    assert server.requests == []


def test_one_failing_judge_stops_the_others(tmp_path, server, keys, table, monkeypatch):
    monkeypatch.setenv("TEST_BAD_KEY", "sk-not-accepted")
    server.answer = lambda prompt: (time.sleep(0.02), "A")[1]  # slow enough for the failure to land mid-run
    server.reject_after_answers = 2  # the bad key's 401 arrives after the healthy judge's second answer
    judges = [judge(server, "openai"), judge(server, "anthropic", api_key_env="TEST_BAD_KEY")]
    with pytest.raises(JudgeError, match=r"judge 'anthropic-judge': request failed \(401\)"):
        run_reeval(table, judges, tmp_path / "cache")
    assert 2 <= len(server.answered) < QUESTIONS  # the healthy judge stopped early
    assert len(cache_lines(tmp_path / "cache", "openai-judge")) == len(server.answered)  # and kept its answers


def test_the_example_judges_file_holds_the_papers_three_judges_and_the_local_one_is_apart():
    """CAIT Section 4.2: LLM-re-Eval is the mean of three judges, Gemini-2.5-pro, Claude-4.6-Opus and GPT-5.4."""
    judges = load_judges(DEFAULT_REGISTRY_PATH.with_name("judges.example.yaml"))
    assert [(j.name, j.provider) for j in judges] == [
        ("gemini-2.5-pro", "openai"), ("claude-opus-4-6", "anthropic"), ("gpt-5.4", "openai")]
    assert judges[0].base_url.startswith("https://generativelanguage.googleapis.com/")
    local = load_judges(DEFAULT_REGISTRY_PATH.with_name("judges.local.example.yaml"))
    assert [j.name for j in local] == ["local-qwen3-32b"]
    assert local[0].api_key_env is None and local[0].base_url.startswith("http://127.0.0.1")


def _table3_note(scores: pd.DataFrame) -> str:
    from postprocess.cait.metrics import mode_metrics, reeval_mean
    from postprocess.render.cait_tables import _mode_table

    models = pd.DataFrame([{"model": "Qwen3-VL-8B", "name": "Qwen3-VL-8B", "params": "8B", "group": "Instruct",
                            "size_class": "~10B"}])
    from postprocess.logs.ingest import TABLE_COLUMNS

    metrics = mode_metrics(pd.DataFrame(columns=TABLE_COLUMNS))  # only the judges' numbers
    return _mode_table(metrics, models, "direct", "cait_table03", "Table 3", with_time=False,
                       reeval=reeval_mean(scores)).note


def test_the_table3_note_says_over_how_many_judges_the_mean_is():
    scores = pd.DataFrame([{"judge": judge, "model": "Qwen3-VL-8B", "n": 8, "accuracy": 0.5, "macro_f1": 0.5,
                            "unparsed": 0} for judge in ("a", "b", "c", "d")])
    assert "LLM-re-Eval: mean over 4 judge(s) (the paper averages three" in _table3_note(scores)
    assert "mean over 3 judge(s) of" in _table3_note(scores[scores["judge"] != "d"])


@pytest.mark.parametrize("entry, message", [
    ("{name: j, provider: azure, model: m}", "judge 'j': field 'provider' is 'azure'"),
    ("{name: j, provider: openai, model: m, api_key: sk-123}", "judge 'j': unknown field 'api_key'"),
    ("{name: j, provider: openai, model: m, requests_per_second: 0}", "field 'requests_per_second' must be a positive"),
    ("{name: j, provider: openai, model: m, max_retries: 1.5}", "field 'max_retries' must be a whole number"),
    ("{name: j, provider: anthropic, model: m, max_tokens: null}", "field 'max_tokens' is required"),
    ("{name: 'a/b', provider: openai, model: m}", "field 'name' may hold only"),
    ("{provider: openai, model: m}", "field 'name' must be a non-empty string"),
])
def test_invalid_judge_entries_name_the_file_judge_and_field(tmp_path, entry, message):
    path = tmp_path / "judges.yaml"
    path.write_text(f"judges:\n  - {entry}\n")
    with pytest.raises(JudgeConfigError, match=message) as raised:
        load_judges(path)
    assert str(path) in str(raised.value)
