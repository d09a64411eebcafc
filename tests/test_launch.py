"""The launcher: launch settings in the registry, the dry-run plan and the Slurm arrays (golden files),
resume and failure detection (a fake lmms-eval, tests/fake_lmms_eval.py), and one real lmms-eval run.

Golden files live in tests/golden_launch/ (tests/test_tables.py owns every file in tests/golden/).
Regenerate them after an intended change:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_launch.py
"""

import ast
import copy
import os
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from launch.__main__ import executable, main
from launch.plan import PAPER_QUESTIONS, read_manifest
from launch.slurm import REPO_ROOT
from lmms_eval_tasks.catalog import BASE_TASKS
from model_configs import BACKENDS, DEFAULT_REGISTRY_PATH, Registry, RegistryError, load_registry
from postprocess.ingest import ingest_logs

GOLDEN = Path(__file__).with_name("golden_launch")
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
FAKE_LMMS_EVAL = f"python {Path(__file__).with_name('fake_lmms_eval.py')}"
MIXED = ["--models", "Qwen3-VL-2B,Qwen3-VL-30B-A3B,InternVL3.5-241B-A28B",
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
def test_every_model_has_launch_settings(registry):
    assert all(spec.launch is not None for spec in registry)
    layout = {spec.key: (spec.launch.backend, spec.launch.gpus, spec.launch.tensor_parallel_size) for spec in registry}
    for key in ("Qwen3-VL-235B-A22B", "InternVL3.5-241B-A28B"):
        assert layout[key] == ("vllm", 8, 8)
    for key in ("Qwen3-VL-30B-A3B", "Qwen3-VL-32B", "InternVL3.5-30B-A3B", "InternVL3.5-38B"):
        assert layout[key] == ("vllm", 2, 2)
    dense_small = [s for s in registry if s.total_params <= 27e9]
    assert all(layout[s.key] == (s.lmms_eval_model, 1, 1) for s in dense_small)
    assert all(spec.launch.dtype == "bfloat16" for spec in registry)
    assert registry.get("Qwen3-VL-235B-A22B").launch.model_args_for("Qwen/Qwen3-VL-235B-A22B-Instruct").startswith(
        "model=Qwen/Qwen3-VL-235B-A22B-Instruct,tensor_parallel_size=8,dtype=bfloat16,")


def test_same_image_budget_across_a_familys_backends(registry):
    qwen = [registry.get(k).launch for k in ("Qwen3-VL-2B", "Qwen3-VL-32B", "Qwen3-VL-235B-A22B")]
    assert {launch.max_pixels for launch in qwen} == {1605632}
    assert 'mm_processor_kwargs={"max_pixels":1605632}' in qwen[2].model_args_for("x")
    internvl = [registry.get(k).launch.model_args_for("x") for k in ("InternVL3.5-8B", "InternVL3.5-38B")]
    assert "max_num=12" in internvl[0] and '"max_dynamic_patch":12' in internvl[1]


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
    broken = copy.deepcopy(data)
    entry = next(m for m in broken["models"] if m["key"] == key)
    entry["launch"] = {**entry["launch"], **changes}
    entry["launch"] = {k: v for k, v in entry["launch"].items() if v is not ...}
    with pytest.raises(RegistryError, match=match):
        Registry.from_dict(broken, source="models.yaml")


def test_launch_validation_names_the_model_and_field(registry_data):
    where = r"models.yaml: model 'Qwen3-VL-2B': "
    _launch_error(registry_data, where + r"launch field 'backend' is 'qwen4_vl', not a known wrapper", backend="qwen4_vl")
    _launch_error(registry_data, where + r"unknown launch field 'gpu'", gpu=1)
    _launch_error(registry_data, where + r"required launch field 'backend' is missing", backend=...)
    _launch_error(registry_data, where + r"required launch field 'gpus' is missing", gpus=...)
    _launch_error(registry_data, where + r"launch field 'gpus' must be a positive whole number, got 0", gpus=0)
    _launch_error(registry_data, where + r"launch fields 'gpus' \(2\) and 'tensor_parallel_size' \(1\) must be 1: backend "
                                 r"'qwen3_vl' puts one copy of the model on each GPU", gpus=2)
    _launch_error(registry_data, where + r"launch field 'tensor_parallel_size' \(3\) does not divide gpus \(8\)",
                  backend="vllm", gpus=8, tensor_parallel_size=3, model_args={})
    _launch_error(registry_data, where + r"launch field 'gpus' \(8\) must equal tensor_parallel_size \(4\)",
                  backend="vllm", gpus=8, tensor_parallel_size=4, model_args={})
    _launch_error(registry_data, where + r"launch field 'dtype' is 'float16' but the qwen3_vl wrapper always loads bfloat16",
                  dtype="float16")
    _launch_error(registry_data, where + r"launch model_args key 'pretrained' is set by the field 'hf_id'",
                  model_args={"pretrained": "/elsewhere"})
    _launch_error(registry_data, where + r"launch model_args key 'max_pixels' is set by the field 'max_pixels'",
                  model_args="max_pixels=100")
    _launch_error(registry_data, where + r"launch model_args system_prompt='Be brief, please.' has a comma",
                  model_args={"system_prompt": "Be brief, please."})
    _launch_error(registry_data, where + r"launch field 'backend' is 'gemma3' but lmms_eval_model is 'qwen3_vl'", backend="gemma3",
                  max_pixels=None)
    _launch_error(registry_data, r"'Gemma-3-4B': .*the gemma3 wrapper has no pixel budget", key="Gemma-3-4B",
                  max_pixels=1000)
    _launch_error(registry_data, r"'InternVL3.5-1B': .*'batch_size' is 4 but the internvl3_5 wrapper accepts at most 1",
                  key="InternVL3.5-1B", batch_size=4)
    _launch_error(registry_data, r"'InternVL3.5-38B': .*mm_processor_kwargs must be a mapping, got 'tiles'", key="InternVL3.5-38B",
                  max_pixels=1000, model_args={"mm_processor_kwargs": "tiles"})


def test_model_args_as_a_string_and_cait_rules(registry_data):
    entry = next(m for m in registry_data["models"] if m["key"] == "Qwen3-VL-2B")
    entry["launch"]["model_args"] = 'attn_implementation=eager,system_prompt={"a":1,"b":2}'
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
def test_plan_golden(tmp_path, capsys):
    assert launch("plan", *MIXED, "--out", tmp_path / "runs") == 0
    text = normalised(capsys.readouterr().out, tmp_path / "runs")
    assert "accelerate launch --num_processes 8 -m lmms_eval --model qwen3_vl" in text
    assert "python -m lmms_eval --model vllm --model_args 'model=OpenGVLab/InternVL3_5-241B-A28B-Instruct,tensor_parallel_size=8" in text
    check_golden("plan_mixed.txt", text)


def test_plan_of_the_paper_and_group_runs(tmp_path, capsys):
    assert launch("plan", "--models", "all", "--tasks", "invscale", "--out", tmp_path) == 0
    text = capsys.readouterr().out
    assert text.startswith("Launch plan: 19 models x 9 task runs = 171 runs")
    assert "NOTE: family Qwen3-VL mixes backends (qwen3_vl, vllm)" in text and "family Gemma 3 mixes" not in text
    assert launch("plan", "--family", "Gemma 3", "--tasks", "invscale,cait", "--keep-groups", "--out", tmp_path) == 0
    text = capsys.readouterr().out
    assert "3 models x 2 task runs = 6 runs" in text
    assert f"--tasks invscale --batch_size 1 --log_samples --output_path {tmp_path.resolve()}/Gemma-3-27B/invscale " in text
    assert launch("plan", "--family", "CAIT", "--tasks", "cait", "--out", tmp_path) == 0
    text = capsys.readouterr().out
    assert "9 models x 1 task runs" in text and "Kimi-VL-A3B-Thinking-16B  cait  vllm" in text and "NOTE" not in text


def test_commands_run_with_this_interpreter_and_its_accelerate():
    assert executable(["python", "-m", "lmms_eval"]) == [sys.executable, "-m", "lmms_eval"]
    accelerate = executable(["accelerate", "launch", "--num_processes", "8", "-m", "lmms_eval"])
    assert accelerate[0] == str(Path(sys.executable).with_name("accelerate")) and Path(accelerate[0]).exists()
    assert executable(["/opt/lmms-eval", "--model", "x"]) == ["/opt/lmms-eval", "--model", "x"]


def test_plan_errors_name_the_problem(tmp_path, capsys):
    assert launch("plan", "--models", "Qwen3-VL-3B", "--tasks", "invscale", "--out", tmp_path) == 2
    assert "unknown model 'Qwen3-VL-3B'; launchable: Qwen3-VL-2B," in capsys.readouterr().err
    assert launch("plan", "--models", "Qwen3-VL-2B", "--tasks", "mmmu", "--out", tmp_path) == 2
    assert "unknown task or group 'mmmu'" in capsys.readouterr().err
    assert launch("plan", "--models", "all", "--tasks", "invscale", "--out", tmp_path, "--gpus-per-node", "4") == 2
    assert "model Qwen3-VL-235B-A22B needs 8 GPUs (launch.gpus) but a node has 4" in capsys.readouterr().err
    assert launch("plan", "--models", "Gemma-3-4B", "--tasks", "invscale", "--out", tmp_path,
                  "--lmms-eval-cmd", "lmms-eval") == 2
    assert "data-parallel runs need an interpreter and a script or `-m module`" in capsys.readouterr().err


def test_slurm_golden(tmp_path, capsys):
    out = tmp_path / "runs"
    assert launch("slurm", *MIXED, "--out", out) == 0
    slurm = out / "slurm"
    assert sorted(p.name for p in slurm.iterdir()) == [
        "invscale_gpu2.sbatch", "invscale_gpu8.sbatch", "logs", "manifest.tsv", "submit.sh"]
    written = "".join(f"==> {name} <==\n{(slurm / name).read_text()}\n"
                      for name in ("manifest.tsv", "invscale_gpu2.sbatch", "invscale_gpu8.sbatch", "submit.sh"))
    check_golden("slurm_mixed.txt", normalised(written, out))
    rows = read_manifest(slurm / "manifest.tsv")
    assert [(r.model, r.item, r.gpus) for r in rows[:2]] == [("Qwen3-VL-2B", "invscale_mme_test", 8),
                                                          ("Qwen3-VL-2B", "blink_val_cot", 8)]
    assert "#SBATCH --array=0-1,4-5" in (slurm / "invscale_gpu8.sbatch").read_text()
    capsys.readouterr()
    assert launch("slurm", *MIXED, "--out", out, "--dry-run") == 0  # prints what it writes
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
            f"lmms-eval run failed (no samples for ['invscale_ai2d_test']); log: {log}") in error
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
    assert script.splitlines()[-1] == (f"exec {shlex.join([sys.executable, '-m', 'launch', 'run', '--manifest', str(manifest.resolve()), '--only'])} "
                                       '"$SLURM_ARRAY_TASK_ID"')
    assert launch("run", "--manifest", manifest, "--only", "3") == 0
    assert fake_env() == [str((out / "Gemma-3-12B" / "blink_val").resolve())]
    assert launch("run", "--manifest", manifest, "--only", "3") == 0
    assert "[row 3] Gemma-3-12B / blink_val: complete run found" in capsys.readouterr().out
    assert launch("run", "--manifest", manifest, "--only", "9") == 2
    assert "--only [9]: no such row (rows 0-5)" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ the real lmms-eval
@pytest.mark.cli
def test_real_lmms_eval_through_the_launcher(tmp_path, capsys, fixture_tasks, tiny_qwen3_vl):
    extra = tmp_path / "tiny.yaml"
    extra.write_text(yaml.safe_dump({"families": ["Tiny"], "models": [{
        "key": "Tiny-Qwen3-VL", "hf_id": str(tiny_qwen3_vl), "family": "Tiny", "size": "S", "total_params": 1e6,
        "active_params": 1e6, "moe": False, "lmms_eval_model": "qwen3_vl",
        "launch": {"backend": "qwen3_vl", "gpus": 1, "max_pixels": 1605632,  # as the real Qwen3-VL entries
                   "model_args": {"attn_implementation": "sdpa", "device_map": "cpu"}}}]}))
    out = tmp_path / "runs"
    # extra lmms-eval flags ride on --lmms-eval-cmd: a CPU device and a short budget for random weights
    args = ["run", "--models", "Tiny-Qwen3-VL", "--extra-models", extra, "--tasks", "invscale_mme_test", "--out", out,
            "--gpus-per-node", "1", "--include-path", fixture_tasks,
            "--lmms-eval-cmd", "python -m lmms_eval --device cpu --gen_kwargs max_new_tokens=4"]
    assert launch(*args) == 0
    assert launch(*args) == 0
    assert "complete run found" in capsys.readouterr().out
    registry = load_registry(extra=[extra])
    table = ingest_logs([out], registry, workers=1).table
    assert set(table["model"]) == {"Tiny-Qwen3-VL"} and set(table["benchmark"]) == {"MME"}
