"""The vLLM path end to end on a GPU machine: tiny models of every family through `python -m launch run`.

    PYTHONPATH=. python perf/vllm_family_check.py --out /tmp/vllm_check      [--families qwen3_vl,gemma3]

For the machine that has a GPU and an environment with lmms-eval and vllm>=0.15 (models.yaml: why). It
  1. reports the vllm version and whether its model registry has the architectures of the four families
     (Qwen3VL / Qwen3VLMoe, InternVLChatModel and InternVLForConditionalGeneration, Gemma3, Molmo2);
  2. builds tiny random-weight models of each family (invscale_demo.tiny_models; transformers-native
     formats, which vLLM must read too) and the fixture task folder;
  3. runs each on backend vllm through the launcher with the registry's vLLM settings (a smaller context
     and memory share; max_new_tokens floor 1), --limit 4 and --gen-kwargs max_new_tokens=4, on the
     fixtures of BLINK (up to four images) and MME (one image);
  4. checks each run's results.json and samples files, ingests them and writes OUT/summary.json and
     prints one line per family: ok, or the failing step with the tail of its log.
Exit 0 only when every family ran. Nothing here is timed; the tiny models' answers are noise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# tiny-model builder -> (registry family, the vLLM architectures that read it)
FAMILIES = {
    "qwen3_vl": ("Qwen3-VL", ("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration")),
    "internvl_hf": ("InternVL3.5", ("InternVLForConditionalGeneration", "InternVLChatModel")),
    "gemma3": ("Gemma 3", ("Gemma3ForConditionalGeneration",)),
    "molmo2": ("Molmo 2", ("Molmo2ForConditionalGeneration",)),
}
TASKS = "blink_val,invscale_mme_test"
VLLM_ARGS = {"max_model_len": 4096, "gpu_memory_utilization": 0.3, "max_new_tokens": 1,
             "limit_mm_per_prompt": {"image": 8, "video": 0}, "enforce_eager": True}


def vllm_facts() -> dict:
    try:
        import vllm
        from vllm import ModelRegistry
    except ImportError as err:
        return {"vllm": None, "error": f"vllm is not importable here: {err}"}
    supported = set(ModelRegistry.get_supported_archs())
    return {"vllm": vllm.__version__,
            "architectures": {arch: arch in supported for _, archs in FAMILIES.values() for arch in archs}}


def tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"vllm": vllm_facts(), "families": {}}
    print(json.dumps(summary["vllm"], indent=1), flush=True)
    if summary["vllm"]["vllm"] is None:
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        return 2

    from invscale_demo.fixtures import write_fixtures
    from invscale_demo.tiny_models import ensure_model
    from lmms_eval_tasks.install import export_tasks

    tasks_dir = export_tasks(out / "tasks", write_fixtures(out / "data"))
    for builder in args.families.split(","):
        family, _ = FAMILIES[builder]
        key = f"Tiny-{builder}"
        result: dict = {"family": family}
        summary["families"][builder] = result
        try:
            path = ensure_model(out / "models" / f"tiny-{builder}", builder)
        except Exception as err:  # report the step that failed, then go on with the next family
            result.update(step="build", error=f"{type(err).__name__}: {err}")
            continue
        registry = out / f"{builder}.yaml"
        registry.write_text(yaml.safe_dump({"families": [f"Tiny {family}"], "models": [{
            "key": key, "hf_id": str(path), "family": f"Tiny {family}", "size": "S", "total_params": 1_000_000,
            "active_params": 1_000_000, "moe": False,
            "launch": {"backend": "vllm", "gpus": 1, "tensor_parallel_size": 1, "batch_size": 64,
                       "model_args": VLLM_ARGS}}]}))
        command = [sys.executable, "-m", "launch", "run", "--extra-models", str(registry), "--models", key,
                   "--tasks", TASKS, "--out", str(out / "runs"), "--include-path", str(tasks_dir), "--limit", "4",
                   "--gen-kwargs", "max_new_tokens=4", "--keep-going"]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        result.update(step="run", exit_code=done.returncode, stdout=done.stdout[-4000:], stderr=done.stderr[-4000:])
        logs = {task: tail(out / "runs" / key / task / "lmms_eval.log") for task in TASKS.split(",")}
        if done.returncode == 0:
            from model_configs import load_registry
            from postprocess.logs.ingest import ingest_logs

            table = ingest_logs([out / "runs" / key], load_registry(extra=[registry]), workers=1).table
            result.update(step="done", records=len(table),
                          answers=table["response"].astype(str).head(8).tolist() if "response" in table else [])
        else:
            result["log_tails"] = logs
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for builder, result in summary["families"].items():
        status = "ok" if result.get("step") == "done" else f"FAILED at {result.get('step')}"
        print(f"{builder:12} {result['family']:12} {status} {result.get('records', '')}")
    return 0 if all(r.get("step") == "done" for r in summary["families"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
