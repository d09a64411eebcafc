"""One protocol per family: for the same questions, every size of every family is sent the same request.

What each size would be sent is rendered by lmms-eval's own chat vLLM wrapper (models/chat/vllm.py, what
`--model vllm` resolves to), built from the exact --model_args string the launcher writes, with
vllm.LLM replaced by a recorder (no weights, no GPU): the engine arguments (processor and context
settings), and per question the chat messages (text and images) and the sampling parameters. Only the
checkpoint and the tensor-parallel width may differ between sizes. What vLLM then does with the messages
is the checkpoint's own chat template and processor (`python -m launch check-offline` compares those
across a family's downloaded sizes).
"""

import importlib.metadata

import pytest

from launch.plan import RunOptions, apply_options, select_models
from launch.runner import installed_model_args
from model_configs import load_registry

SIZE_ONLY = ("model", "tensor_parallel_size")  # the checkpoint and where it runs
TASKS = ("blink_val", "invscale_mme_test", "blink_val_cot")  # several images; one image; a 4,096-token budget


class RecordedLLM:
    """Stands in for vllm.LLM: keeps the engine arguments the wrapper passes."""

    def __init__(self, **engine_args):
        self.engine_args = engine_args


@pytest.fixture(scope="module")
def instances(fixture_tasks):
    """(task name -> its dataset, the generation requests of the first questions) as lmms-eval builds them."""
    from lmms_eval.tasks import TaskManager, get_task_dict

    tasks = get_task_dict(list(TASKS), TaskManager(include_path=str(fixture_tasks)), "chat")  # VLLM.is_simple is False
    built = []
    for task in tasks.values():
        task.build_all_requests(limit=3, rank=0, world_size=1)
        built += task.instances
    return {name: task.dataset for name, task in tasks.items()}, built


def rendered(model_args: str, batch_size: int, datasets, requests, monkeypatch) -> tuple[dict, list]:
    """(the engine arguments, [(messages, sampling parameters) per request]) of the chat vLLM wrapper."""
    from lmms_eval.models.chat.vllm import VLLM

    monkeypatch.setattr("lmms_eval.models.simple.vllm.LLM", RecordedLLM)
    monkeypatch.setenv("VLLM_WORKER_MULTIPROC_METHOD", "spawn")  # the wrapper sets it; restored after the test
    model = VLLM.create_from_arg_string(model_args, {"batch_size": batch_size})
    model.task_dict = datasets
    return model.client.engine_args, [model.make_one_request(request) for request in requests]


def test_every_size_of_a_family_is_sent_the_same_request(instances, monkeypatch):
    datasets, requests = instances
    registry = load_registry()
    families = {}
    for target in apply_options(select_models(registry, ["all"]), RunOptions()):
        model_args = installed_model_args("vllm", target.launch.model_args_for(target.hf_id))  # what the launcher sends
        engine, sent = rendered(model_args, target.launch.batch_size, datasets, requests, monkeypatch)
        assert engine["model"] == target.hf_id and engine["tensor_parallel_size"] == target.launch.tensor_parallel_size
        shared = {key: value for key, value in engine.items() if key not in SIZE_ONLY}
        families.setdefault(target.family, []).append((target.key, shared, sent))
    assert {family: len(sizes) for family, sizes in families.items()} == {
        "Qwen3-VL": 6, "InternVL3.5": 8, "Gemma 3": 3, "Molmo 2": 2}
    for family, sizes in families.items():
        (first, engine, sent), *others = sizes
        for key, other_engine, other_sent in others:
            assert other_engine == engine, f"{family}: {key} gets other engine arguments than {first}"
            assert other_sent == sent, f"{family}: {key} is sent other messages or sampling than {first}"

    # what every size is sent, read from the rendering
    _, engine, sent = families["Qwen3-VL"][0]
    expected = {"gpu_memory_utilization": 0.9, "trust_remote_code": True, "disable_log_stats": False, "seed": 1,
                "dtype": "bfloat16", "max_model_len": 32768, "limit_mm_per_prompt": {"image": 8, "video": 0}}
    if importlib.metadata.version("lmms-eval") not in ("0.7", "0.7.0"):  # 0.7.0 passes no data_parallel_size
        expected["data_parallel_size"] = 1
    assert engine == expected  # no processor setting: its defaults; never max_new_tokens (not an engine argument)
    for request, (messages, params) in zip(requests, sent, strict=True):
        assert [message["role"] for message in messages] == ["user"]  # no system prompt added
        content = messages[0]["content"]
        images = [part for part in content if part["type"] == "image_url"]
        assert images and all(part["image_url"]["url"].startswith("data:image/png;base64,") for part in images)
        assert content[-1] == {"type": "text", "text": request.args[0]}  # images first, then the task's prompt
        budget = 4096 if request.task_name.endswith("_cot") else 2048
        assert params == {"max_tokens": budget, "temperature": 0.0, "top_p": 0.95}  # greedy, no stop strings
    assert len({len([p for p in m[0]["content"] if p["type"] == "image_url"]) for m, _ in sent}) > 1  # 1 and 2+ images


def test_a_smaller_generation_budget_reaches_vllm(instances, monkeypatch):
    """--gen-kwargs max_new_tokens=8 replaces the task's budget (lmms-eval updates the task config); the
    registry's max_new_tokens=1 floor never raises it, so vLLM generates 8 tokens."""
    datasets, requests = instances
    target = select_models(load_registry(), ["Gemma-3-27B"])[0]
    request = requests[0]
    request.arguments[2]["max_new_tokens"] = 8
    model_args = installed_model_args("vllm", target.launch.model_args_for(target.hf_id))
    _, [(_, params)] = rendered(model_args, 64, datasets, [request], monkeypatch)
    assert params["max_tokens"] == 8
