"""`python -m launch check-offline` on a Hugging Face hub cache and a datasets cache built here, file by file,
in the layouts huggingface_hub and datasets write (blobs behind snapshot symlinks; prepared Arrow folders)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from launch.offline import check_offline
from launch.plan import RunOptions, apply_options, build_plan, expand_tasks, select_models
from launch.slurm import REPO_ROOT
from lmms_eval_tasks.install import export_tasks
from model_configs import load_registry

QWEN_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}"
PROCESSOR = {"image_processor_type": "Qwen2VLImageProcessorFast", "size": {"longest_edge": 16777216}}


def fake_snapshot(hub: Path, repo: str, files: dict[str, str], dangling: tuple[str, ...] = ()) -> Path:
    """A snapshot as snapshot_download leaves it: refs/main -> commit, snapshots/<commit>/<file> -> ../../blobs/<n>;
    `dangling` names files whose blob is gone (an interrupted download)."""
    storage = hub / f"models--{repo.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (storage / "refs").mkdir(parents=True)
    (storage / "refs" / "main").write_text(commit)
    (storage / "blobs").mkdir()
    snapshot = storage / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for number, name in enumerate([*files, *dangling]):
        blob = storage / "blobs" / f"blob{number}"
        if name in files:
            blob.write_text(files[name])
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


def model_files(template: str = QWEN_TEMPLATE, shards: int = 1, **extra: str) -> dict[str, str]:
    files = {"config.json": json.dumps({"model_type": "x"}), "tokenizer.json": "{}",
             "tokenizer_config.json": json.dumps({"chat_template": template}),
             "preprocessor_config.json": json.dumps(PROCESSOR), **extra}
    weight_map = {f"layer{n}": f"model-{n + 1:05d}-of-{shards:05d}.safetensors" for n in range(shards)}
    files["model.safetensors.index.json"] = json.dumps({"weight_map": weight_map})
    files.update({name: "weights" for name in weight_map.values()})
    return files


def prepared(cache: Path, folder: str, config: str, split: str) -> None:
    """A dataset as datasets.load_dataset prepares it: <org>___<name>/<config>/<version>/<hash>/."""
    target = cache / folder / config / "0.0.0" / "abcdef"
    target.mkdir(parents=True)
    (target / "dataset_info.json").write_text(json.dumps({"config_name": config, "splits": {split: {"name": split}}}))
    (target / f"{folder.split('___')[-1]}-{split}.arrow").write_bytes(b"arrow")


@pytest.fixture
def caches(tmp_path):
    hub, data = tmp_path / "hub", tmp_path / "datasets"
    fake_snapshot(hub, "Qwen/Qwen3-VL-2B-Instruct", model_files(shards=2))
    files = model_files(shards=2)
    fake_snapshot(hub, "Qwen/Qwen3-VL-4B-Instruct", {k: v for k, v in files.items() if not k.startswith("model-00002")},
                  dangling=("model-00002-of-00002.safetensors",))
    remote_code = {"auto_map": {"AutoConfig": "configuration_internvl_chat.InternVLChatConfig",
                                "AutoModel": "modeling_internvl_chat.InternVLChatModel"}}
    internvl = {**model_files("internvl template"), "config.json": json.dumps(remote_code),
                "configuration_internvl_chat.py": "", "modeling_internvl_chat.py": ""}
    fake_snapshot(hub, "OpenGVLab/InternVL3_5-1B-Instruct", internvl)
    fake_snapshot(hub, "OpenGVLab/InternVL3_5-2B-Instruct", {
        **{k: v for k, v in internvl.items() if k != "modeling_internvl_chat.py"},
        "tokenizer_config.json": json.dumps({"chat_template": "another template"})})
    prepared(data, "lmms-lab-encoder___mme", "default", "test")
    prepared(data, "lmms-lab-encoder___mmbench", "cn", "dev")  # another config than the task's `en`
    mmmu = [tmp_path / "mmmu_dev.parquet", tmp_path / "mmmu_validation.parquet"]
    table = pa.table({name: ["x"] for name in ("id", "question", "options", "answer", "question_type", "subfield")})
    for path in mmmu:
        pq.write_table(table, path)
    tasks = export_tasks(tmp_path / "tasks", {"invscale_mmmu_dev_val": ",".join(map(str, mmmu))})
    mmmu[1].unlink()  # copied away, one file forgotten
    return hub, data, tasks


SELECTION = "Qwen3-VL-2B,Qwen3-VL-4B,InternVL3.5-1B,InternVL3.5-2B,Gemma-3-4B"
TASKS = "invscale_mme_test,invscale_mmbench_dev_en,blink_val_cot,invscale_mmmu_dev_val"


def test_check_offline_names_every_missing_file(caches, tmp_path):
    hub, data, tasks = caches
    registry = load_registry()
    targets = apply_options(select_models(registry, SELECTION.split(",")), RunOptions())
    rows = build_plan(targets, expand_tasks(TASKS.split(",")), tmp_path / "runs", include_path=tasks)
    report, missing = check_offline(rows, registry, hub_cache=hub, datasets_cache=data)
    lines = {line.split(":")[0].strip(): line for line in report.splitlines()}
    assert lines["ok      Qwen3-VL-2B"].endswith("snapshots/0123456789abcdef0123456789abcdef01234567")
    assert "1 of 2 weight shards (model-00002-of-00002.safetensors)" in lines["MISSING Qwen3-VL-4B"]
    assert lines["ok      InternVL3.5-1B"]
    assert lines["MISSING InternVL3.5-2B"].endswith("-> remote code modeling_internvl_chat.py")
    assert "not in the hub cache" in lines["MISSING Gemma-3-4B"]
    assert "snapshot_download('google/gemma-3-4b-it')" in lines["MISSING Gemma-3-4B"]
    assert lines["ok      invscale_mme_test"].endswith("lmms-lab-encoder___mme/default/0.0.0/abcdef")
    assert "not prepared in" in lines["MISSING invscale_mmbench_dev_en"]
    assert "datasets.load_dataset('lmms-lab-encoder/MMBench', 'en', split='dev')" in lines["MISSING invscale_mmbench_dev_en"]
    assert ("remote data file hf://datasets/BLINK-Benchmark/BLINK/*/val-*.parquet: not readable offline; download it and "
            "point the task at the copy: python -m lmms_eval_tasks export DIR --data blink_val=PATH") \
        in lines["MISSING blink_val_cot"]  # a variant reads its base task's data
    assert lines["MISSING invscale_mmmu_dev_val"].endswith(f"-> data file {tmp_path / 'mmmu_validation.parquet'}")
    assert "  same      Qwen3-VL: chat template identical across Qwen3-VL-2B, Qwen3-VL-4B" in report
    assert "  DIFFERENT InternVL3.5: chat template: InternVL3.5-1B (" in report
    assert "  same      InternVL3.5: processor config identical across InternVL3.5-1B, InternVL3.5-2B" in report
    assert missing == 6 and report.endswith("6 of 9 models and datasets incomplete\n")


def test_check_offline_command_reads_the_caches_from_the_environment(caches):
    hub, data, tasks = caches
    command = [sys.executable, "-m", "launch", "check-offline", "--models", "Qwen3-VL-2B", "--tasks", "invscale_mme_test",
               "--include-path", str(tasks)]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_CACHE": str(hub), "HF_DATASETS_CACHE": str(data),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("everything the plan needs is on this machine\n")
    done = subprocess.run([*command[:5], "Gemma-3-4B", *command[6:]], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 1 and "MISSING Gemma-3-4B" in done.stdout
