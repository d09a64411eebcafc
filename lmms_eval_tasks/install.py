"""Export the task folder (optionally pointing tasks at local data) and install it into lmms-eval.

  export DIR [--data TASK=PATH ...]   write the task YAMLs to DIR, for `lmms-eval --include_path DIR`
  install [--data TASK=PATH ...]      write them into the installed lmms-eval's tasks/ folder, so that
                                      `lmms-eval --tasks blink_val` finds them without --include_path
  uninstall                           remove that folder again

A local override replaces the dataset keys of the named base task; its variants include the base
task file, so they follow. PATH is, by its form:
  a .parquet / .json / .jsonl / .csv / .tsv file, or several joined by commas (one split made of all)
  a folder written by `DatasetDict.save_to_disk` holding the task's split (or a single split)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from .catalog import BASE_TASKS, TASKS

TASKS_DIR = Path(__file__).parent / "tasks"
INSTALLED_FOLDER = "invscale"
MARKER = ".installed-by-vlm-inverse-scaling"
DATASET_KEYS = ("dataset_path", "dataset_name", "dataset_kwargs", "test_split")
FILE_BUILDERS = {".parquet": ("parquet", {}), ".json": ("json", {}), ".jsonl": ("json", {}),
                 ".csv": ("csv", {}), ".tsv": ("csv", {"sep": "\t"})}


class OverrideError(ValueError):
    """A --data override that cannot work; the message names the task and the path."""


def _split_of(base: str) -> str:
    return yaml.safe_load(_yaml_without_tags((TASKS_DIR / f"{base}.yaml").read_text()))["test_split"]


def _yaml_without_tags(text: str) -> str:
    return text.replace("!function ", "")


def dataset_block(base: str, source: str) -> dict:
    """The dataset keys that make `base` read `source` (see the module docstring for accepted forms)."""
    if base not in BASE_TASKS:
        hint = f" (a variant follows its base task {TASKS[base].base})" if base in TASKS else ""
        raise OverrideError(f"--data {base}=...: not a base task{hint}; base tasks: {', '.join(BASE_TASKS)}")
    split = _split_of(base)
    paths = [Path(p).expanduser().resolve() for p in source.split(",") if p]
    missing = [str(p) for p in paths if not p.exists()]
    if not paths or missing:
        raise OverrideError(f"--data {base}={source}: no such file or folder: {', '.join(missing) or source}")
    if len(paths) == 1 and paths[0].is_dir():
        return _disk_block(base, paths[0], split)
    suffixes = {p.suffix.lower() for p in paths}
    if len(suffixes) != 1 or next(iter(suffixes)) not in FILE_BUILDERS:
        raise OverrideError(
            f"--data {base}={source}: expected .parquet, .json, .jsonl, .csv or .tsv files of one kind, "
            f"or a save_to_disk folder; got {sorted(suffixes)}"
        )
    builder, extra = FILE_BUILDERS[suffixes.pop()]
    return {"dataset_path": builder, "dataset_kwargs": {"data_files": {split: [str(p) for p in paths]}, **extra},
            "test_split": split}


def _disk_block(base: str, folder: Path, split: str) -> dict:
    if (folder / "dataset_dict.json").exists():
        splits = json.loads((folder / "dataset_dict.json").read_text())["splits"]
        if split not in splits:
            if len(splits) != 1:
                raise OverrideError(f"--data {base}={folder}: the saved DatasetDict has splits {splits}, none named '{split}'")
            split = splits[0]
        return {"dataset_path": str(folder), "dataset_kwargs": {"load_from_disk": True}, "test_split": split}
    if (folder / "state.json").exists():
        raise OverrideError(
            f"--data {base}={folder}: this folder holds a single Dataset; lmms-eval needs a DatasetDict. "
            f"Save it as DatasetDict({{'{split}': dataset}}).save_to_disk(...)"
        )
    raise OverrideError(f"--data {base}={folder}: not a save_to_disk folder (no dataset_dict.json)")


def _with_dataset(text: str, block: dict) -> str:
    """Replace the dataset keys of a task YAML, keeping everything else (including !function tags) verbatim."""
    kept, skipping = [], False
    for line in text.splitlines():
        top_key = line.split(":", 1)[0] if line and not line[0].isspace() and not line.startswith("#") else None
        if top_key is not None:
            skipping = top_key in DATASET_KEYS
        if not skipping and not line.startswith("#"):  # the comments described the hub source
            kept.append(line)
    kept.append("# dataset: a local override written by `python -m lmms_eval_tasks export/install --data`")
    return "\n".join(kept) + "\n" + yaml.safe_dump(block, sort_keys=False, default_flow_style=False)


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        task, sep, path = pair.partition("=")
        if not sep or not task or not path:
            raise OverrideError(f"--data {pair!r}: expected TASK=PATH")
        overrides[task] = path
    return overrides


def export_tasks(destination: Path, data: dict[str, str] | None = None) -> Path:
    """Write the task folder to destination, with the dataset of each task in `data` replaced."""
    blocks = {base: dataset_block(base, source) for base, source in (data or {}).items()}
    destination = Path(destination)
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(TASKS_DIR, destination, ignore=shutil.ignore_patterns("__pycache__"))
    for base, block in blocks.items():
        path = destination / f"{base}.yaml"
        path.write_text(_with_dataset(path.read_text(), block))
    return destination


def lmms_eval_tasks_dir() -> Path:
    import lmms_eval.tasks

    return Path(lmms_eval.tasks.__file__).parent


def install(data: dict[str, str] | None = None) -> Path:
    target = lmms_eval_tasks_dir() / INSTALLED_FOLDER
    if target.exists() and not (target / MARKER).exists():
        raise OverrideError(f"{target} exists and was not installed by this tool; refusing to overwrite it")
    export_tasks(target, data)
    (target / MARKER).write_text("remove with: python -m lmms_eval_tasks uninstall\n")
    return target


def uninstall() -> Path | None:
    target = lmms_eval_tasks_dir() / INSTALLED_FOLDER
    if not target.exists():
        return None
    if not (target / MARKER).exists():
        raise OverrideError(f"{target} was not installed by this tool; not removing it")
    shutil.rmtree(target)
    return target
