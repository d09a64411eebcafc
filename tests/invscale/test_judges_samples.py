"""Extensions of the shared clients that CAIT construction needs: several samples of one request kept apart
by the judges' cache, the judges' retry helper reused by other endpoints, further choice controls read from
Label Studio exports, and the CAIT format's optional construction fields."""

import hashlib
import json

import pytest
from cait_logs import scene_record as record
from reeval_server import JudgeServer

from lmms_eval_tasks import cait
from lmms_eval_tasks.question import DocError
from invscale.label_studio import CONTROL, LabelStudioError, annotations_frame
from invscale.judges import JudgeCache, JudgeConfig, JudgeError, JudgeRequest, estimate_calls, run_judges
from invscale.judges.client import RateLimiter, call_with_retries

KEY = "sk-test-samples"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("SAMPLES_KEY", KEY)
    with JudgeServer(keys={KEY}, answer=lambda prompt: f"an answer to {prompt}") as running:
        yield running


def llm(server, **changes) -> JudgeConfig:
    return JudgeConfig(**{"name": "llm", "provider": "openai", "model": "gpt-4o-mini", "base_url": server.openai_url,
                          "api_key_env": "SAMPLES_KEY", "temperature": 0.7, "max_tokens": 64,
                          "requests_per_second": 1000, "backoff_s": 0, **changes})


def test_a_plain_request_keeps_the_cache_key_it_had_before_samples_existed():
    judge = JudgeConfig(name="j", provider="openai", model="m", temperature=0.7)
    request = JudgeRequest("prompt", system="system")
    before = {"provider": "openai", "model": "m", "prompt": "prompt", "images": [], "system": "system",
              "temperature": 0.7, "max_tokens": 16, "params": {}}
    assert judge.cache_key(request) == hashlib.sha256(json.dumps(before, sort_keys=True).encode()).hexdigest()
    assert judge.cache_key(JudgeRequest("prompt", system="system", sample=0)) == judge.cache_key(request)
    assert len({judge.cache_key(JudgeRequest("prompt", system="system", sample=n)) for n in range(3)}) == 3


@pytest.mark.parametrize("sample", [-1, 1.5, True])
def test_a_sample_number_is_a_whole_number_from_zero(sample):
    with pytest.raises(ValueError, match="sample number"):
        JudgeRequest("prompt", sample=sample)


def test_each_sample_is_a_call_and_a_cache_entry_of_its_own(server, tmp_path):
    judge = llm(server)
    requests = [JudgeRequest("same prompt", system="sys", sample=n) for n in range(3)]
    assert estimate_calls([(judge, requests)], tmp_path)[0].calls == 3
    run = run_judges([(judge, requests)], tmp_path)["llm"]
    assert (run.distinct, run.made) == (3, 3)
    assert [r.prompt for r in server.answered] == ["same prompt"] * 3
    records = [run.cache.answers[key] for key in run.keys]
    assert [(r["sample"], r["system"]) for r in records] == [(0, "sys"), (1, "sys"), (2, "sys")]
    again = run_judges([(judge, [*requests, JudgeRequest("same prompt", system="sys", sample=3)])], tmp_path)["llm"]
    assert (again.cached, again.made) == (3, 1)
    assert len(JudgeCache(tmp_path / "llm.jsonl").answers) == 4


class Flaky(Exception):
    def __init__(self, status):
        super().__init__(f"status {status}")
        self.status_code = status


def test_the_retry_helper_retries_retryable_statuses_and_names_what_failed():
    settings = type("Settings", (), {"max_retries": 2, "backoff_s": 0, "backoff_max_s": 0})()
    outcomes = iter([Flaky(503), Flaky(429), "made"])

    def call():
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert call_with_retries(call, what="generator 'g'", settings=settings, limiter=RateLimiter(1000),
                             errors=(Flaky,)) == ("made", 3)
    with pytest.raises(JudgeError, match=r"generator 'g': request failed \(400\) after 1 attempt"):
        call_with_retries(lambda: (_ for _ in ()).throw(Flaky(400)), what="generator 'g'", settings=settings,
                          limiter=RateLimiter(1000), errors=(Flaky,))


def _task(key, *results, cancelled=False):
    return {"id": 1, "data": {"item_key": key}, "annotations": [
        {"id": 7, "completed_by": 3, "was_cancelled": cancelled, "lead_time": 2.0, "created_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": name, "to_name": "x", "type": "choices", "value": {"choices": [choice]}}
                    for name, choice in results]}]}


def test_further_choice_controls_become_columns_and_may_be_unanswered():
    frame = annotations_frame([_task("a", (CONTROL, "keep"), ("style", "cartoon")),
                               {**_task("b", (CONTROL, "reject")), "id": 2},
                               {**_task("c", cancelled=True), "id": 3}], "export.json", controls=("style", "size"))
    assert list(frame.columns[-2:]) == ["style", "size"]
    shown = frame[["item_key", "label", "style", "size"]].astype(object)
    assert shown.where(shown.notna(), None).values.tolist() == [
        ["a", "keep", "cartoon", None], ["b", "reject", None, None], ["c", None, None, None]]


def test_a_further_control_with_two_results_is_named():
    with pytest.raises(LabelStudioError, match="2 results of the choice control 'style'"):
        annotations_frame([_task("a", (CONTROL, "keep"), ("style", "cartoon"), ("style", "realistic"))], "export.json",
                          controls=("style",))
    with pytest.raises(ValueError, match="other than 'label'"):
        annotations_frame([], "export.json", controls=(CONTROL,))


def test_the_construction_fields_are_optional_and_checked_when_present():
    cait.validate_cait_record(record(), "scene s1")
    cait.validate_cait_record(record(anthropomorphized=True, generator="gemini:gemini-2.5-flash-image",
                                     prompts={"scene_pairs": "a", "description": "b", "image": "c"}), "scene s1")
    cait.validate_cait_record(record(prompts={"image": "c", "description": None}), "scene s1")  # a dataset's nulls
    for changes, message in [({"anthropomorphized": "yes"}, "field 'anthropomorphized' must be true or false"),
                             ({"generator": ""}, "field 'generator' must be a non-empty string"),
                             ({"prompts": "text"}, "field 'prompts' must be an object"),
                             ({"prompts": {"caption": "x"}}, "field 'prompts' has key 'caption'"),
                             ({"prompts": {"image": " "}}, "field 'prompts' holds no text for 'image'")]:
        with pytest.raises(DocError, match=message):
            cait.validate_cait_record(record(**changes), "scene s1")


def test_table_1_shares_cover_every_characteristic_and_sum_to_one():
    assert set(cait.TABLE1_SHARES) == {c for items in cait.CHARACTERISTICS.values() for c in items}
    assert sum(cait.TABLE1_SHARES.values()) == pytest.approx(1.0)
    assert [round(share * 400) for share in cait.TABLE1_SHARES.values()] == [88, 57, 89, 56, 72, 38]
