"""The launcher: launch settings in the registry, the dry-run plan and the Slurm arrays (golden files),
resume and failure detection (a fake lmms-eval, tests/support/fake_lmms_eval.py), and one real lmms-eval run.

Golden files live in tests/launch/golden_launch/ (tests/postprocess/test_tables.py owns every file in
tests/postprocess/golden/).
Regenerate them after an intended change:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/launch/test_launch.py
"""

import ast
import copy
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from launch.__main__ import executable, main
from launch.plan import PAPER_QUESTIONS, family_protocol_differences, read_manifest
from launch.runner import lmms_eval_command
from launch.slurm import REPO_ROOT
from lmms_eval_tasks.catalog import BASE_TASKS
from model_configs import BACKENDS, DEFAULT_REGISTRY_PATH, Registry, RegistryError, load_registry
from postprocess.logs.ingest import ingest_logs

GOLDEN = Path(__file__).with_name("golden_launch")
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
FAKE_LMMS_EVAL = f"python {Path(__file__).parents[1] / 'support' / 'fake_lmms_eval.py'}"
SIZES = ["--models", "Qwen3-VL-2B,Qwen3-VL-30B-A3B,InternVL3.5-241B-A28B",
         "--tasks", "invscale_mme_test,blink_val_cot", "--include-path", "/data/invscale_tasks"]


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing {path}: rerun with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}: rerun with UPDATE_GOLDEN=1 if intended"


def normalised(text: str, out: Path) -> str:
    return (text.replace(str(out.resolve()), "<OUT>").replace(sys.executable, "<PYTHON>")
            .replace(str(REPO_ROOT), "<REPO>"))


def launch(*argv: str) -> int:
    return main([str(arg) for arg in argv])


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


@pytest.fixture
def registry_data() -> dict:
    return yaml.safe_load(DEFAULT_REGISTRY_PATH.read_text(encoding="utf-8"))


@pytest.fixture
def fake_env(tmp_path, monkeypatch):
    """The fake lmms-eval's call log; the mode is set per test with monkeypatch.setenv."""
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("FAKE_LMMS_EVAL_CALLS", str(calls))
    return lambda: calls.read_text().splitlines() if calls.exists() else []


# ------------------------------------------------------------------------------------------ registry
def test_every_size_of_every_family_runs_on_vllm_at_the_processor_defaults(registry):
    assert all(spec.launch is not None and spec.launch.backend == "vllm" for spec in registry)
    layout = {spec.key: (spec.launch.gpus, spec.launch.tensor_parallel_size) for spec in registry}
    for key in ("Qwen3-VL-235B-A22B", "InternVL3.5-241B-A28B"):
        assert layout[key] == (8, 8)
    for key in ("Qwen3-VL-30B-A3B", "Qwen3-VL-32B", "InternVL3.5-30B-A3B", "InternVL3.5-38B"):
        assert layout[key] == (2, 2)
    assert all(layout[s.key] == (1, 1) for s in registry if s.total_params <= 27e9)  # fits one 80 GB GPU
    for spec in registry:
        args = spec.launch.model_args_for(spec.hf_id)
        assert spec.launch.max_pixels is None and "max_pixels" not in args and "mm_processor_kwargs" not in args
        assert spec.launch.dtype == "bfloat16" and "max_new_tokens=1," in args  # the tasks' budgets decide
    assert family_protocol_differences(registry, registry.families) == {}
    assert registry.get("Qwen3-VL-235B-A22B").launch.model_args_for("Qwen/Qwen3-VL-235B-A22B-Instruct").startswith(
        "model=Qwen/Qwen3-VL-235B-A22B-Instruct,tensor_parallel_size=8,dtype=bfloat16,")


def test_the_protocol_leaves_out_resources_only(registry):
    small, large = (registry.get(key).launch for key in ("Qwen3-VL-2B", "Qwen3-VL-235B-A22B"))
    assert small.protocol() == large.protocol() == {
        "backend": "vllm", "dtype": "bfloat16", "max_pixels": "the processor's default", "max_new_tokens": "1",
        "limit_mm_per_prompt": '{"image":8,"video":0}'}
    hf = registry.cait_models[4].launch  # Qwen2.5-VL-Instruct 7B on the qwen2_5_vl wrapper
    assert hf.protocol() == {"backend": "qwen2_5_vl", "dtype": "bfloat16", "max_pixels": "1605632", "batch_size": "1",
                             "attn_implementation": "sdpa"}


def test_cait_models_launch_where_a_wrapper_exists(registry):
    launchable = {c.key: c.launch.backend for c in registry.cait_models if c.launch is not None}
    assert launchable == {
        "Qwen2.5-VL-Instruct-7B": "qwen2_5_vl", "Qwen2.5-VL-Instruct-3B": "qwen2_5_vl",
        "LLaMA3.2-Vision-11B": "llama_vision", "Qwen3-VL-Thinking-8B": "qwen3_vl", "Qwen3-VL-Thinking-4B": "qwen3_vl",
        "GLM-4.1V-Thinking-9B": "vllm", "Kimi-VL-A3B-Thinking-16B": "vllm",
        "InternVL-3.5-8B": "internvl_thinking", "InternVL-3.5-4B": "internvl_thinking"}
    # the others: API-only, no checkpoint named, or one of the 19 models (launched under its registry key)
    assert {c.key for c in registry.cait_models if c.launch is None and c.registry_key} == {
        "Qwen3-VL-8B", "Gemma-3-12B", "Qwen3-VL-4B", "Gemma-3-4B"}


def _init_parameters(backend: str) -> set[str]:
    """Parameter names of the wrapper's __init__ (for internvl3_5 and internvl_thinking, also their base
    class's, which receives their **kwargs), read from the source without importing the wrapper."""
    import lmms_eval.models as models

    simple = Path(models.__file__).parent / "simple"
    sources = {"internvl3_5": [simple / "internvl3_5.py", simple / "internvl3.py"],
               "molmo2": [REPO_ROOT / "lmms_eval_models" / "molmo2.py"],
               "internvl_thinking": [REPO_ROOT / "lmms_eval_models" / "internvl_thinking.py",
                                     simple.parent / "chat" / "internvl_hf.py"]}.get(backend, [simple / f"{backend}.py"])
    return {arg.arg for path in sources for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef) and node.name == "__init__" for arg in node.args.args}


def test_backends_are_lmms_eval_wrappers_and_model_args_are_their_parameters(registry):
    import lmms_eval.models as models

    assert {name for name, backend in BACKENDS.items() if backend.built_in} <= set(models.AVAILABLE_MODELS)
    launches = [(s.key, s.hf_id, s.launch) for s in registry] + [
        (c.key, c.hf_id, c.launch) for c in registry.cait_models if c.launch is not None]
    for key, hf_id, launch in launches:
        if launch.backend == "vllm":  # vllm passes unknown keys on to vllm.LLM
            continue
        keys = {pair.split("=", 1)[0] for pair in launch.model_args_for(hf_id).split(",")}
        assert keys <= _init_parameters(launch.backend), key  # an unknown key fails `assert kwargs == {}`


def _launch_error(data: dict, match: str, key: str = "Qwen3-VL-2B", **changes) -> None:
    """The registry with model `key`'s launch fields changed (a value `...` removes the field) fails to load."""
    broken = copy.deepcopy(data)
    entry = next(m for m in broken["models"] if m["key"] == key)
    entry["launch"] = {**entry["launch"], **changes}
    entry["launch"] = {k: v for k, v in entry["launch"].items() if v is not ...}
    with pytest.raises(RegistryError, match=match):
        Registry.from_dict(broken, source="models.yaml")


def test_launch_validation_names_the_model_and_field(registry_data):
    where = r"models.yaml: model 'Qwen3-VL-2B': "
    hf = {"backend": "qwen3_vl", "model_args": {}, "batch_size": ..., "tensor_parallel_size": ...}
    _launch_error(registry_data, where + r"launch field 'backend' is 'qwen4_vl', not a known wrapper", backend="qwen4_vl")
    _launch_error(registry_data, where + r"unknown launch field 'gpu'", gpu=1)
    _launch_error(registry_data, where + r"required launch field 'backend' is missing", backend=...)
    _launch_error(registry_data, where + r"required launch field 'gpus' is missing", gpus=...)
    _launch_error(registry_data, where + r"launch field 'gpus' must be a positive whole number, got 0", gpus=0)
    _launch_error(registry_data, where + r"launch fields 'gpus' \(2\) and 'tensor_parallel_size' \(1\) must be 1: backend "
                                 r"'qwen3_vl' puts one copy of the model on each GPU", **{**hf, "gpus": 2})
    _launch_error(registry_data, where + r"launch field 'tensor_parallel_size' \(3\) does not divide gpus \(8\)",
                  gpus=8, tensor_parallel_size=3)
    _launch_error(registry_data, where + r"launch field 'gpus' \(8\) must equal tensor_parallel_size \(4\)",
                  gpus=8, tensor_parallel_size=4)
    _launch_error(registry_data, where + r"launch field 'dtype' is 'float16' but the qwen3_vl wrapper always loads bfloat16",
                  **hf, dtype="float16")
    _launch_error(registry_data, where + r"launch model_args key 'model' is set by the field 'hf_id'",
                  model_args={"model": "/elsewhere"})
    _launch_error(registry_data, where + r"launch model_args key 'max_pixels' is set by the field 'max_pixels'",
                  **{**hf, "model_args": "max_pixels=100"})
    _launch_error(registry_data, where + r"launch model_args system_prompt='Be brief, please.' has a comma",
                  **{**hf, "model_args": {"system_prompt": "Be brief, please."}})
    _launch_error(registry_data, where + r"launch field 'backend' is 'gemma3' but lmms_eval_model is 'qwen3_vl'",
                  **{**hf, "backend": "gemma3"})
    _launch_error(registry_data, r"'Gemma-3-4B': .*the gemma3 wrapper has no pixel budget", key="Gemma-3-4B",
                  **{**hf, "backend": "gemma3"}, max_pixels=1000)
    _launch_error(registry_data, r"'InternVL3.5-1B': .*'batch_size' is 4 but the internvl3_5 wrapper accepts at most 1",
                  key="InternVL3.5-1B", **{**hf, "backend": "internvl3_5", "batch_size": 4})
    _launch_error(registry_data, r"'InternVL3.5-38B': .*mm_processor_kwargs must be a mapping, got 'tiles'", key="InternVL3.5-38B",
                  max_pixels=1000, model_args={"mm_processor_kwargs": "tiles"})


def test_model_args_as_a_string_and_cait_rules(registry_data):
    entry = next(m for m in registry_data["models"] if m["key"] == "Qwen3-VL-2B")
    entry["launch"] = {"backend": "qwen3_vl", "gpus": 1, "max_pixels": 1605632,
                       "model_args": 'attn_implementation=eager,system_prompt={"a":1,"b":2}'}
    spec = Registry.from_dict(registry_data).get("Qwen3-VL-2B")
    assert spec.launch.model_args_for("p") == 'pretrained=p,max_pixels=1605632,attn_implementation=eager,system_prompt={"a":1,"b":2}'
    cait = next(c for c in registry_data["cait_models"] if c.get("registry_key") == "Gemma-3-4B")
    cait["launch"] = {"backend": "gemma3", "gpus": 1}
    with pytest.raises(RegistryError, match=r"\(Gemma-3-it\): field 'launch' is not allowed with registry_key"):
        Registry.from_dict(registry_data)


def test_every_base_task_has_a_question_count():
    assert set(PAPER_QUESTIONS) == set(BASE_TASKS)
    assert sum(n for task, n in PAPER_QUESTIONS.items() if task != "cait") == 29386  # the paper's per-model total


# ------------------------------------------------------------------------------------------ plan and slurm
@pytest.fixture
def newest_lmms_eval(monkeypatch):
    """The golden commands are lmms-eval >= 0.7.1's: no --force_simple, vLLM's max_new_tokens floor kept."""
    monkeypatch.setattr("launch.runner._lmms_eval_0_7_0", lambda: False)


def test_on_lmms_eval_0_7_0_the_commands_take_what_its_wrappers_accept(tmp_path, monkeypatch):
    """0.7.0's vllm wrapper would hand max_new_tokens to vllm.LLM, which refuses it; its qwen3_vl and qwen2_5_vl
    chat wrappers fail on every request, so their simple wrappers run instead."""
    model_args = 'model=Qwen/Qwen3-VL-2B-Instruct,max_model_len=32768,max_new_tokens=1,limit_mm_per_prompt={"image":8,"video":0}'
    for oldest, sent_args in ((False, model_args),
                              (True, 'model=Qwen/Qwen3-VL-2B-Instruct,max_model_len=32768,limit_mm_per_prompt={"image":8,"video":0}')):
        monkeypatch.setattr("launch.runner._lmms_eval_0_7_0", lambda oldest=oldest: oldest)
        command = lmms_eval_command("vllm", model_args, ["blink_val"], tmp_path)
        assert command[command.index("--model_args") + 1] == sent_args and "--force_simple" not in command
        for wrapper in ("qwen3_vl", "qwen2_5_vl"):
            command = lmms_eval_command(wrapper, "pretrained=x,max_pixels=100", ["blink_val"], tmp_path)
            assert command[command.index("--model_args") + 1] == "pretrained=x,max_pixels=100"
            assert ("--force_simple" in command) == oldest


def test_plan_golden(tmp_path, capsys, newest_lmms_eval):
    assert launch("plan", *SIZES, "--out", tmp_path / "runs") == 0
    text = normalised(capsys.readouterr().out, tmp_path / "runs")
    assert "python -m lmms_eval --model vllm --model_args 'model=Qwen/Qwen3-VL-2B-Instruct,tensor_parallel_size=1," in text
    assert "python -m lmms_eval --model vllm --model_args 'model=OpenGVLab/InternVL3_5-241B-A28B-Instruct,tensor_parallel_size=8" in text
    check_golden("plan_sizes.txt", text)


def test_plan_of_the_paper_and_group_runs(tmp_path, capsys):
    assert launch("plan", "--models", "all", "--tasks", "invscale", "--out", tmp_path) == 0
    text = capsys.readouterr().out
    assert text.startswith("Launch plan: 19 models x 9 task runs = 171 runs") and "NOTE" not in text
    assert launch("plan", "--family", "Gemma 3", "--tasks", "invscale,cait", "--keep-groups", "--out", tmp_path) == 0
    text = capsys.readouterr().out
    assert "3 models x 2 task runs = 6 runs" in text
    assert f"--tasks invscale --batch_size 64 --log_samples --output_path {tmp_path.resolve()}/Gemma-3-27B/invscale " in text
    assert launch("plan", "--family", "CAIT", "--tasks", "cait", "--out", tmp_path) == 0
    text = capsys.readouterr().out
    assert "9 models x 1 task runs" in text and "Kimi-VL-A3B-Thinking-16B  cait  vllm" in text and "NOTE" not in text


@pytest.mark.parametrize("spelling", ["Gemma 3", "Gemma-3", "gemma_3", "GEMMA3"])
def test_a_family_is_found_however_its_name_is_spelled(tmp_path, capsys, spelling):
    assert launch("plan", "--family", spelling, "--tasks", "blink_val", "--out", tmp_path) == 0
    assert "3 models x 1 task runs" in capsys.readouterr().out


def test_the_plan_refuses_a_family_whose_sizes_differ(tmp_path, capsys, registry_data):
    """Qwen3-VL-2B on the HF wrapper beside vLLM for the other sizes: refused, then allowed and described."""
    entry = next(m for m in registry_data["models"] if m["key"] == "Qwen3-VL-2B")
    entry["launch"] = {"backend": "qwen3_vl", "gpus": 1, "max_pixels": 1605632}
    registry_data["cait_models"] = []
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(yaml.safe_dump(registry_data))
    base = ["--models", "Qwen3-VL-4B", "--tasks", "blink_val", "--out", tmp_path, "--gpus-per-node", "1"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("launch.__main__.load_registry", lambda extra=(): load_registry(mixed))
        assert launch("plan", *base) == 2  # Qwen3-VL-4B itself is on vllm: the family is checked as a whole
        error = capsys.readouterr().err
        assert "every size of a family must be sent the same prompt, images and decoding settings" in error
        assert "family Qwen3-VL: backend qwen3_vl (Qwen3-VL-2B) vs vllm (Qwen3-VL-4B, Qwen3-VL-8B," in error
        assert "max_pixels 1605632 (Qwen3-VL-2B) vs the processor's default (Qwen3-VL-4B," in error
        assert "--allow-mixed-protocol" in error
        assert launch("plan", *base, "--allow-mixed-protocol") == 0
        assert "MIXED PROTOCOL (--allow-mixed-protocol): family Qwen3-VL: backend qwen3_vl" in capsys.readouterr().out
        assert launch("plan", "--family", "Gemma 3", *base[2:]) == 0  # other families are not held back


def test_run_wide_settings_reach_every_command_and_partial_families_are_noted(tmp_path, capsys):
    args = ["--models", "Qwen3-VL-2B,Qwen3-VL-4B", "--tasks", "blink_val", "--out", tmp_path, "--limit", "5",
            "--gen-kwargs", "max_new_tokens=8", "--model-args", 'mm_processor_kwargs={"max_pixels":1605632}']
    assert launch("plan", *args) == 0
    text = capsys.readouterr().out
    commands = [line for line in text.splitlines() if line.startswith("python -m lmms_eval")]
    assert len(commands) == 2 and all(
        'mm_processor_kwargs={"max_pixels":1605632}\' --tasks blink_val' in c and c.endswith("--limit 5.0 --gen_kwargs max_new_tokens=8")
        for c in commands)
    assert ("NOTE: --gen-kwargs max_new_tokens=8 --model-args mm_processor_kwargs={\"max_pixels\":1605632} apply to the "
            "selected models only; family Qwen3-VL also has Qwen3-VL-8B, Qwen3-VL-30B-A3B, Qwen3-VL-32B, "
            "Qwen3-VL-235B-A22B") in text
    assert launch("plan", "--family", "Qwen3-VL", *args[2:]) == 0
    assert "NOTE" not in capsys.readouterr().out  # the whole family: nothing to note
    assert launch("plan", *args[:6], "--model-args", "model=/elsewhere") == 2
    assert "model Qwen3-VL-2B: launch model_args key 'model' is set by the field 'hf_id'" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):  # argparse names the option
        launch("plan", *args[:6], "--gen-kwargs", "max_new_tokens")
    assert "--gen-kwargs: expected key=value pairs" in capsys.readouterr().err


def test_cpu_runs_use_the_hf_wrappers_on_one_process(tmp_path, capsys):
    args = ["--tasks", "blink_val", "--out", tmp_path, "--device", "cpu"]
    assert launch("plan", "--models", "Qwen3-VL-2B", *args) == 2
    assert ("model Qwen3-VL-2B: backend 'vllm' is a GPU engine that picks its GPUs itself (use --hf-wrappers for a "
            "CPU run on the family's lmms-eval HF wrapper)") in capsys.readouterr().err
    assert launch("plan", "--family", "Qwen3-VL", "--hf-wrappers", *args) == 0
    text = capsys.readouterr().out
    assert "Qwen3-VL-2B         blink_val  qwen3_vl  0     CPU     1901       n/a    n/a" in text
    assert "6 CPU runs not estimated" in text
    assert (f"python -m lmms_eval --model qwen3_vl --model_args pretrained=Qwen/Qwen3-VL-2B-Instruct,device_map=cpu "
            f"--tasks blink_val --batch_size 1 --log_samples --output_path {tmp_path.resolve()}/Qwen3-VL-2B/blink_val "
            "--device cpu") in text
    assert launch("plan", "--family", "InternVL3.5", "--hf-wrappers", *args) == 2
    assert "the internvl3_5 wrapper places the model on CUDA whatever device it is given" in capsys.readouterr().err
    assert launch("plan", "--family", "Gemma 3", "--hf-wrappers", "--tasks", "blink_val", "--out", tmp_path) == 0
    assert "accelerate launch --num_processes 8 -m lmms_eval --model gemma3 --model_args pretrained=google/gemma-3-4b-it " \
        in capsys.readouterr().out  # HF wrappers on GPUs: one copy per GPU, data parallel


def test_commands_run_with_this_interpreter_and_its_accelerate():
    assert executable(["python", "-m", "lmms_eval"]) == [sys.executable, "-m", "lmms_eval"]
    accelerate = executable(["accelerate", "launch", "--num_processes", "8", "-m", "lmms_eval"])
    assert accelerate[0] == str(Path(sys.executable).with_name("accelerate")) and Path(accelerate[0]).exists()
    assert executable(["/opt/lmms-eval", "--model", "x"]) == ["/opt/lmms-eval", "--model", "x"]


def test_plan_errors_name_the_problem(tmp_path, capsys):
    assert launch("plan", "--models", "Qwen3-VL-3B", "--tasks", "invscale", "--out", tmp_path) == 2
    assert "unknown model 'Qwen3-VL-3B'; launchable: Qwen3-VL-2B," in capsys.readouterr().err
    assert launch("plan", "--family", "Gemma 4", "--tasks", "invscale", "--out", tmp_path) == 2
    assert "unknown family 'Gemma 4'; families: Qwen3-VL, InternVL3.5, Gemma 3, Molmo 2, CAIT" in capsys.readouterr().err
    assert launch("plan", "--models", "Qwen3-VL-2B", "--tasks", "mmmu", "--out", tmp_path) == 2
    assert "unknown task or group 'mmmu'" in capsys.readouterr().err
    assert launch("plan", "--models", "all", "--tasks", "invscale", "--out", tmp_path, "--gpus-per-node", "4") == 2
    assert "model Qwen3-VL-235B-A22B needs 8 GPUs (launch.gpus) but a node has 4" in capsys.readouterr().err
    assert launch("plan", "--models", "Gemma-3-4B", "--hf-wrappers", "--tasks", "invscale", "--out", tmp_path,
                  "--lmms-eval-cmd", "lmms-eval") == 2
    assert "data-parallel runs need an interpreter and a script or `-m module`" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        launch("plan", "--models", "Gemma-3-4B", "--tasks", "invscale", "--out", tmp_path, "--limit", "0")
    assert "--limit: must be a positive number" in capsys.readouterr().err


def test_slurm_golden(tmp_path, capsys, newest_lmms_eval):
    out = tmp_path / "runs"
    assert launch("slurm", *SIZES, "--out", out) == 0
    slurm = out / "slurm"
    assert sorted(p.name for p in slurm.iterdir()) == [
        "invscale_gpu1.sbatch", "invscale_gpu2.sbatch", "invscale_gpu8.sbatch", "logs", "manifest.tsv", "submit.sh"]
    written = "".join(f"==> {name} <==\n{(slurm / name).read_text()}\n" for name in (
        "manifest.tsv", "invscale_gpu1.sbatch", "invscale_gpu2.sbatch", "invscale_gpu8.sbatch", "submit.sh"))
    check_golden("slurm_sizes.txt", normalised(written, out))
    rows = read_manifest(slurm / "manifest.tsv")
    assert [(r.model, r.item, r.gpus) for r in rows[:2]] == [("Qwen3-VL-2B", "invscale_mme_test", 1),
                                                          ("Qwen3-VL-2B", "blink_val_cot", 1)]
    assert "#SBATCH --array=0-1" in (slurm / "invscale_gpu1.sbatch").read_text()
    assert "#SBATCH --array=4-5" in (slurm / "invscale_gpu8.sbatch").read_text()
    capsys.readouterr()
    assert launch("slurm", *SIZES, "--out", out, "--dry-run") == 0  # prints what it writes
    assert (slurm / "manifest.tsv").read_text() in capsys.readouterr().out
    assert launch("slurm", "--models", "Gemma-3-4B", "--tasks", "blink_val", "--out", out) == 2
    assert "exists with other rows" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ run: resume and failures
def test_resume_skips_complete_runs_and_reruns_truncated_ones(tmp_path, capsys, fake_env):
    out = tmp_path / "runs"
    args = ["run", "--models", "Qwen3-VL-2B", "--tasks", "invscale_mme_test,blink_val", "--out", out,
            "--gpus-per-node", "1", "--lmms-eval-cmd", FAKE_LMMS_EVAL]
    assert launch(*args) == 0
    assert len(fake_env()) == 2
    assert launch(*args) == 0
    assert len(fake_env()) == 2
    assert capsys.readouterr().out.count("complete run found (results.json + 1 samples files), skipped") == 2

    samples = next((out / "Qwen3-VL-2B" / "blink_val").rglob("*_samples_blink_val.jsonl"))
    samples.write_bytes(samples.read_bytes()[:-40])  # a writer killed mid-line
    assert launch(*args, "--dry-run") == 0
    assert "blink_val: would run" in capsys.readouterr().out and len(fake_env()) == 2
    assert launch(*args) == 0
    printed = capsys.readouterr().out
    assert "blink_val: incomplete (" in printed and "ends in a cut-off line); deleted its 2 partial" in printed
    assert fake_env() == [str((out / "Qwen3-VL-2B" / s).resolve()) for s in ("invscale_mme_test", "blink_val",
                                                                             "blink_val")]
    run_dir = out / "Qwen3-VL-2B" / "blink_val"
    assert not samples.exists() or samples.read_bytes().endswith(b"\n")
    assert len(list(run_dir.glob("lmms_eval.*.log"))) == 1  # the failed attempt's log, kept under a new name
    table = ingest_logs([out], load_registry(), workers=1).table  # postprocess finds the layout
    assert table.groupby("benchmark", observed=True).size().to_dict() == {"MME": 10, "BLINK": 10}


def test_a_short_samples_file_is_incomplete(tmp_path, capsys, fake_env):
    out = tmp_path / "runs"
    args = ["run", "--models", "Gemma-3-4B", "--tasks", "invscale_ai2d_test", "--out", out, "--gpus-per-node", "1",
            "--lmms-eval-cmd", FAKE_LMMS_EVAL]
    assert launch(*args) == 0
    samples = next(out.rglob("*_samples_*.jsonl"))
    samples.write_text("".join(samples.read_text().splitlines(keepends=True)[:7]))  # whole lines, 3 missing
    assert launch(*args, "--dry-run") == 0
    assert "has 7 lines, results.json n-samples says 10" in capsys.readouterr().out


def test_a_run_without_samples_fails_loudly(tmp_path, capsys, fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_LMMS_EVAL_MODE", "no_samples")
    out = tmp_path / "runs"
    args = ["run", "--models", "Qwen3-VL-2B", "--tasks", "invscale_ai2d_test,invscale_mme_test", "--out", out,
            "--gpus-per-node", "1", "--lmms-eval-cmd", FAKE_LMMS_EVAL]
    assert launch(*args) == 1
    error = capsys.readouterr().err
    log = (out / "Qwen3-VL-2B" / "invscale_ai2d_test" / "lmms_eval.log").resolve()
    assert (f"[row 0] Qwen3-VL-2B / invscale_ai2d_test FAILED (model Qwen3-VL-2B, tasks invscale_ai2d_test): "
            f"lmms-eval run failed (no samples for ['invscale_ai2d_test']; lmms-eval exited 0, but a task failed: "
            f"the log above says why); log: {log}") in error
    assert len(fake_env()) == 1  # stopped at the first failure
    assert launch(*args, "--keep-going") == 1
    error = capsys.readouterr().err
    assert "2 of 2 runs failed:" in error and "invscale_mme_test FAILED" in error
    monkeypatch.setenv("FAKE_LMMS_EVAL_MODE", "crash")
    assert launch(*args) == 1
    assert "lmms-eval run failed (exit code 1)" in capsys.readouterr().err


def test_an_array_task_runs_its_manifest_row(tmp_path, capsys, fake_env):
    out = tmp_path / "runs"
    assert launch("slurm", "--family", "Gemma 3", "--tasks", "invscale_mme_test,blink_val", "--out", out,
                  "--gpus-per-node", "1", "--lmms-eval-cmd", FAKE_LMMS_EVAL) == 0
    manifest = out / "slurm" / "manifest.tsv"
    script = (out / "slurm" / "invscale_gpu1.sbatch").read_text()
    assert script.splitlines()[-1] == (f'exec "${{INVSCALE_PYTHON:-{sys.executable}}}" '
                                       f"{shlex.join(['-m', 'launch', 'run', '--manifest', str(manifest.resolve()), '--only'])} "
                                       '"$SLURM_ARRAY_TASK_ID"')
    assert launch("run", "--manifest", manifest, "--only", "3") == 0
    assert fake_env() == [str((out / "Gemma-3-12B" / "blink_val").resolve())]
    assert launch("run", "--manifest", manifest, "--only", "3") == 0
    assert "[row 3] Gemma-3-12B / blink_val: complete run found" in capsys.readouterr().out
    assert launch("run", "--manifest", manifest, "--only", "9") == 2
    assert "--only [9]: no such row (rows 0-5)" in capsys.readouterr().err


def test_a_complete_run_with_other_settings_is_not_taken_for_this_one(tmp_path, capsys, fake_env):
    out = tmp_path / "runs"
    args = ["run", "--models", "Gemma-3-4B", "--tasks", "blink_val", "--out", out, "--gpus-per-node", "1",
            "--lmms-eval-cmd", FAKE_LMMS_EVAL]
    assert launch(*args, "--limit", "5") == 0  # a smoke test
    assert launch(*args) == 1
    assert (f"a complete run with other settings is in {(out / 'Gemma-3-4B' / 'blink_val').resolve()} (--limit 5 where "
            "this run asks for (none)); use another --out, or delete that folder to replace it") in capsys.readouterr().err
    assert launch(*args, "--limit", "5") == 0 and "complete run found" in capsys.readouterr().out
    assert launch(*args, "--limit", "5", "--gen-kwargs", "max_new_tokens=8") == 1
    assert "(--gen_kwargs (none) where this run asks for max_new_tokens=8)" in capsys.readouterr().err
    assert len(fake_env()) == 1


# ------------------------------------------------------------------------------------------ run: one launcher per row
def _launcher(*args, **env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "launch", *map(str, args)], cwd=REPO_ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **env})


def _wait_for(path: Path, process: subprocess.Popen) -> None:
    """Until `path` exists (the first launcher's fake lmms-eval has started); fail if the launcher ends first."""
    deadline = time.monotonic() + 120
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the first launcher did not start its run: {process.communicate()}")
        time.sleep(0.05)


def test_a_second_launcher_on_the_same_row_names_the_holder_and_fails(tmp_path):
    out, release = tmp_path / "runs", tmp_path / "release"
    args = ["run", "--models", "Gemma-3-4B", "--tasks", "blink_val", "--out", out, "--gpus-per-node", "1",
            "--lmms-eval-cmd", FAKE_LMMS_EVAL]
    run_dir = (out / "Gemma-3-4B" / "blink_val").resolve()
    first = _launcher(*args, FAKE_LMMS_EVAL_MODE="wait", FAKE_LMMS_EVAL_RELEASE=str(release))
    try:
        _wait_for(run_dir / "started", first)
        second = _launcher(*args)
        _, error = second.communicate(timeout=120)
        assert second.returncode == 1
        assert (f"{run_dir} is being run by another launcher: pid {first.pid} on host {socket.gethostname()}, "
                "started ") in error
        assert f"command: {sys.executable} -m launch run --models Gemma-3-4B" in error
    finally:
        release.touch()
        output, error = first.communicate(timeout=120)
    assert first.returncode == 0, error
    assert "[row 0] Gemma-3-4B / blink_val: done in" in output and not (run_dir / "launch.lock").exists()


def test_releasing_a_lock_another_launcher_has_taken_since_leaves_it(tmp_path):
    from launch.lock import LOCK_NAME, RunLock, read_holder

    lock = RunLock(tmp_path)
    lock.acquire()
    taker = {"pid": os.getpid() + 1, "host": socket.gethostname(), "started": "now", "command": "python -m launch run"}
    (tmp_path / LOCK_NAME).write_text(json.dumps(taker))  # taken over while this launcher was stalled
    lock.release()
    assert read_holder(tmp_path / LOCK_NAME).pid == taker["pid"]
    with RunLock(tmp_path / "own") as own:
        assert own.path.exists()
    assert not own.path.exists()  # its own lock it does remove


def test_a_stale_lock_is_taken_over_on_its_host_and_reported_from_another(tmp_path, capsys, fake_env):
    out = tmp_path / "runs"
    args = ["run", "--models", "Gemma-3-4B", "--tasks", "blink_val", "--out", out, "--gpus-per-node", "1",
            "--lmms-eval-cmd", FAKE_LMMS_EVAL]
    lock = out / "Gemma-3-4B" / "blink_val" / "launch.lock"
    lock.parent.mkdir(parents=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid now names no process
    record = {"pid": gone.pid, "host": socket.gethostname(), "started": "2026-01-01 00:00:00 +0000", "command": "old run"}
    lock.write_text(json.dumps(record))
    assert launch(*args) == 0
    assert (f"[row 0] Gemma-3-4B / blink_val: took over a stale lock of a process that is gone (pid {gone.pid} on host "
            f"{socket.gethostname()}, started 2026-01-01 00:00:00 +0000, command: old run)") in capsys.readouterr().err
    assert len(fake_env()) == 1 and not lock.exists()
    lock.write_text(json.dumps({**record, "host": "node-17"}))
    assert launch(*args) == 1
    error = capsys.readouterr().err
    assert f"is being run by another launcher: pid {gone.pid} on host node-17" in error
    assert f"(another host: if that process has stopped, delete {lock.resolve()})" in error
    assert launch(*args, "--dry-run") == 0
    assert f"[row 0] Gemma-3-4B / blink_val: locked by pid {gone.pid} on host node-17" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ the real lmms-eval
@pytest.mark.cli
def test_real_lmms_eval_through_the_launcher_on_cpu(tmp_path, capsys, fixture_tasks, tiny_qwen3_vl):
    """The README's local CPU run, as written there: --device cpu, --limit and --gen-kwargs, no extra flags."""
    extra = tmp_path / "tiny.yaml"
    extra.write_text(yaml.safe_dump({"families": ["Tiny"], "models": [{
        "key": "Tiny-Qwen3-VL", "hf_id": str(tiny_qwen3_vl), "family": "Tiny", "size": "S", "total_params": 1e6,
        "active_params": 1e6, "moe": False, "lmms_eval_model": "qwen3_vl",
        "launch": {"backend": "qwen3_vl", "gpus": 1, "model_args": {"attn_implementation": "sdpa"}}}]}))
    out = tmp_path / "runs"
    args = ["run", "--models", "Tiny-Qwen3-VL", "--extra-models", extra, "--tasks", "invscale_mme_test", "--out", out,
            "--include-path", fixture_tasks, "--device", "cpu", "--limit", "3", "--gen-kwargs", "max_new_tokens=4"]
    assert launch(*args) == 0
    assert "running on CPU" in capsys.readouterr().out
    assert launch(*args) == 0
    assert "complete run found" in capsys.readouterr().out
    registry = load_registry(extra=[extra])
    table = ingest_logs([out], registry, workers=1).table
    assert set(table["model"]) == {"Tiny-Qwen3-VL"} and set(table["benchmark"]) == {"MME"} and len(table) == 3
