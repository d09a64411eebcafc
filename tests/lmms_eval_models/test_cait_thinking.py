"""The CAIT "Thinking" rows: InternVL3.5's thinking switch (lmms_eval_models/internvl_thinking.py) and the
thinking models' token budget (launch field max_new_tokens -> --gen_kwargs).

The real-CLI test runs a tiny random-weight InternVL (transformers' native format) through the launcher
with the same launch settings as the paper's InternVL-3.5 rows, and reads lmms-eval's debug log to see
the Thinking System Prompt open the rendered conversation. It cannot show that the real checkpoint then
reasons in <think> tags; that needs the weights.
"""

import json

import pytest
import yaml

from launch.__main__ import main as launch_main
from invscale_demo.tiny_models import ensure_model
from lmms_eval_tasks.record import line_response, validate_record
from model_configs import Registry, RegistryError, load_registry

THINKING_BUDGET = 16384


def launch(*argv) -> int:
    return launch_main([str(arg) for arg in argv])


@pytest.fixture(scope="module")
def registry():
    return load_registry()


def test_every_launchable_thinking_row_gets_the_thinking_budget_and_instruct_rows_keep_the_tasks(registry):
    launchable = [c for c in registry.cait_models if c.launch is not None]
    budgets = {c.key: c.launch.max_new_tokens for c in launchable}
    assert {key for key, budget in budgets.items() if budget == THINKING_BUDGET} == {
        c.key for c in launchable if c.group == "open_thinking"}
    assert {budget for c, budget in zip(launchable, budgets.values()) if c.group != "open_thinking"} == {None}


def test_the_internvl_rows_run_the_hf_checkpoints_in_thinking_mode(registry):
    internvl = [c for c in registry.cait_models if c.name == "InternVL-3.5"]
    assert [c.hf_id for c in internvl] == ["OpenGVLab/InternVL3_5-8B-HF", "OpenGVLab/InternVL3_5-4B-HF"]
    for model in internvl:
        assert model.launch.backend == "internvl_thinking"
        assert model.launch.model_args_for(model.hf_id) == f"pretrained={model.hf_id},thinking=True,max_patches=12"
    for path in ("OpenGVLab/InternVL3_5-8B-HF", "OpenGVLab/InternVL3_5-8B", "/ckpt/InternVL3_5-8B-HF"):
        assert registry.resolve(path).key == "InternVL-3.5-8B"  # logs of either checkpoint format


def test_the_plan_passes_the_budget_as_gen_kwargs(tmp_path, capsys):
    assert launch("plan", "--family", "CAIT", "--tasks", "cait", "--out", tmp_path) == 0
    commands = [line for line in capsys.readouterr().out.splitlines() if "-m lmms_eval " in line]
    budgeted = [c for c in commands if f"--gen_kwargs max_new_tokens={THINKING_BUDGET}" in c]
    assert len(commands) == 9 and len(budgeted) == 6
    assert all("Thinking" in c or "InternVL" in c for c in budgeted)
    assert any("--model internvl_thinking" in c and "thinking=True" in c for c in budgeted)


def test_max_new_tokens_must_be_a_positive_count():
    data = yaml.safe_load(open(load_registry().source, encoding="utf-8"))
    entry = next(c for c in data["cait_models"] if c["name"] == "Qwen2.5-VL-Instruct")
    entry["launch"]["max_new_tokens"] = 0
    with pytest.raises(RegistryError, match=r"Qwen2.5-VL-Instruct\): launch field 'max_new_tokens' must be a positive"):
        Registry.from_dict(data, source="models.yaml")


def test_the_wrapper_rejects_unknown_or_contradictory_arguments_before_loading():
    from lmms_eval_models.internvl_thinking import InternVLThinking

    with pytest.raises(ValueError, match=r"Unexpected model_args for internvl_thinking: \['max_num'\]"):
        InternVLThinking(pretrained="/nowhere", max_num=12)  # internvl_hf would ignore the typo
    with pytest.raises(ValueError, match="thinking=true or a system_prompt, not both"):
        InternVLThinking(pretrained="/nowhere", thinking=True, system_prompt="Be brief.")
    with pytest.raises(ValueError, match="thinking must be true or false"):
        InternVLThinking(pretrained="/nowhere", thinking="yes")


@pytest.mark.cli
def test_a_thinking_row_runs_through_the_launcher_with_the_system_prompt_and_its_budget(tmp_path, fixture_tasks):
    from lmms_eval_models.internvl_thinking import THINKING_SYSTEM_PROMPT

    model = ensure_model(tmp_path / "tiny-internvl", "internvl_hf")
    extra = tmp_path / "tiny.yaml"
    extra.write_text(yaml.safe_dump({"cait_models": [{
        "name": "Tiny-InternVL-Thinking", "group": "open_thinking", "params": None, "hf_id": str(model),
        "total_params": 1_000_000, "active_params": 1_000_000,
        # the InternVL-3.5 rows' settings, with a CPU device map and a budget a random model can afford
        "launch": {"backend": "internvl_thinking", "gpus": 1, "max_new_tokens": 5,
                   "model_args": {"thinking": True, "max_patches": 12, "device_map": "cpu"}}}]}))
    out = tmp_path / "runs"
    assert launch("run", "--models", "Tiny-InternVL-Thinking", "--extra-models", extra, "--tasks", "cait", "--out", out,
                  "--gpus-per-node", "1", "--include-path", fixture_tasks,
                  "--lmms-eval-cmd", "python -m lmms_eval --device cpu --verbosity DEBUG") == 0
    run = out / "Tiny-InternVL-Thinking" / "cait"
    results = json.loads(next(run.rglob("*_results.json")).read_text())
    assert results["config"]["model"] == "internvl_thinking" and "thinking=True" in results["config"]["model_args"]
    assert results["config"]["gen_kwargs"] == {"max_new_tokens": 5}
    lines = [json.loads(line) for line in next(run.rglob("*_samples_cait.jsonl")).read_text().splitlines()]
    assert len(lines) == 8
    for line in lines:
        validate_record(line["per_question"])
        assert line_response(line).strip()  # internvl_hf logs "" when generation raises
        assert 1 <= line["token_counts"][0]["output_tokens"] <= 5
    log = (run / "lmms_eval.log").read_text()
    rendered = log.split("Prompt for doc ID 0:", 1)[1]
    assert rendered.lstrip().startswith(f"<|im_start|>system\n{THINKING_SYSTEM_PROMPT}<|im_end|>")
    assert "You are a helpful assistant." not in rendered.split("<|im_start|>assistant", 1)[0]
