"""`python -m launch check-offline`: is every file a plan needs on this machine? (For air-gapped nodes.)

For each model of the plan (the checkpoint its --model_args name, after --hf-wrappers / --model-args):
  a local folder, or its snapshot in the Hugging Face hub cache (HF_HUB_CACHE; huggingface_hub's own
  snapshot_download(local_files_only=True), which also reports a snapshot its cached file listing shows
  incomplete), holding config.json, every weight file (every shard of a *.index.json weight map), a
  tokenizer (tokenizer_config.json and tokenizer.json / tokenizer.model / vocab.json), a processor
  config (preprocessor_config.json or processor_config.json) and the remote-code modules that
  config.json, tokenizer_config.json or the processor config name in `auto_map`. A file is there when
  its cache symlink resolves (a dangling link counts as missing).
For each task of the plan: the base task's dataset, read from the task YAML in the plan's --include_path:
  local data_files must exist; a save_to_disk folder must hold the split; a hub dataset id must be
  prepared in HF_DATASETS_CACHE (the `<org>___<name>/<config>/<version>/<hash>/` folder that datasets
  reads offline, with the split in its dataset_info.json and its .arrow files); data files named by
  hf:// or https:// are not readable offline: the task must be pointed at local copies
  (`python -m lmms_eval_tasks export DIR --data TASK=PATH`).
Protocol files: for each family, the chat template and the processor config of every cached size are
compared, and the sizes that differ are named (the launcher cannot check this without the checkpoints).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from model_configs import Registry, RegistryError

from .plan import Row, option_after

TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
REMOTE_PREFIXES = ("hf://", "http://", "https://")


@dataclass
class Check:
    """One model or dataset: where it was found, and what is missing (empty: complete)."""
    name: str
    what: str
    found: str | None = None
    missing: list[str] = field(default_factory=list)

    def line(self) -> str:
        status = "MISSING" if self.missing else "ok     "
        detail = "; ".join(self.missing) if self.missing else self.found
        return f"  {status} {self.name}: {self.what} -> {detail}"


def _exists(path: Path) -> bool:
    return path.exists()  # follows symlinks: a link to a blob that is not there is missing


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def snapshot_problems(folder: Path) -> list[str]:
    """What a model folder lacks to load offline (module docstring); [] when complete."""
    missing = []
    if not _exists(folder / "config.json"):
        missing.append("config.json")
    indexes = [folder / name for name in WEIGHT_INDEXES if _exists(folder / name)]
    if indexes:
        shards = sorted({shard for index in indexes for shard in _json(index).get("weight_map", {}).values()})
        absent = [shard for shard in shards if not _exists(folder / shard)]
        if not shards:
            missing.append(f"the weight map of {indexes[0].name} (unreadable or empty)")
        elif absent:
            missing.append(f"{len(absent)} of {len(shards)} weight shards ({', '.join(absent[:3])}"
                           f"{', ...' if len(absent) > 3 else ''})")
    elif not any(_exists(folder / name) for name in WEIGHT_FILES) and not list(folder.glob("*.safetensors")):
        missing.append("the weights (model.safetensors, its index, or pytorch_model.bin)")
    if not _exists(folder / "tokenizer_config.json"):
        missing.append("tokenizer_config.json")
    if not any(_exists(folder / name) for name in TOKENIZER_FILES):
        missing.append(f"a tokenizer file ({' / '.join(TOKENIZER_FILES)})")
    if not any(_exists(folder / name) for name in PROCESSOR_FILES):
        missing.append(f"a processor config ({' / '.join(PROCESSOR_FILES)})")
    modules = set()
    for config in ("config.json", "tokenizer_config.json", *PROCESSOR_FILES):
        auto_map = _json(folder / config).get("auto_map", {})
        for reference in auto_map.values() if isinstance(auto_map, dict) else ():
            for name in reference if isinstance(reference, list) else [reference]:
                if isinstance(name, str) and "." in name and "--" not in name:  # "repo--module.Class": another repo
                    modules.add(name.rsplit(".", 1)[0] + ".py")
    missing += [f"remote code {module}" for module in sorted(modules) if not _exists(folder / module)]
    return missing


def check_model(key: str, weights: str, hub_cache: Path | None) -> Check:
    """A model's checkpoint: a local folder, else a snapshot in the hub cache."""
    check = Check(key, weights)
    local = Path(weights).expanduser()
    if local.is_dir():
        folder = local
    else:
        from huggingface_hub import snapshot_download

        try:
            folder = Path(snapshot_download(weights, local_files_only=True, cache_dir=hub_cache))
        except (OSError, ValueError) as err:  # LocalEntryNotFoundError (incl. an incomplete snapshot) is an OSError
            # huggingface_hub names the missing files of a snapshot its cached listing shows incomplete
            reason = f"an incomplete snapshot: {err}" if "incomplete" in str(err) else "not in the hub cache"
            check.missing.append(f"{reason}; download it on a machine with internet: "
                                 f"python -c \"from huggingface_hub import snapshot_download; "
                                 f"snapshot_download('{weights}')\"")
            return check
    check.found = str(folder)
    check.missing += snapshot_problems(folder)
    return check


def _task_dataset(include_path: Path, base: str) -> tuple[dict, Path]:
    from lmms_eval_tasks.install import yaml_without_tags

    path = include_path / f"{base}.yaml"
    try:
        return yaml.safe_load(yaml_without_tags(path.read_text(encoding="utf-8"))) or {}, path
    except (OSError, yaml.YAMLError) as err:
        raise RegistryError(f"{path}: cannot read the task's dataset keys: {err}") from None


def prepared_dataset(datasets_cache: Path, repo_id: str, config: str | None, split: str) -> Path | None:
    """The folder datasets reads offline for (repo_id, config), holding `split`; None when not prepared."""
    from datasets.naming import camelcase_to_snakecase

    *namespace, name = repo_id.split("/")
    root = datasets_cache / "___".join([*namespace, camelcase_to_snakecase(name)])
    for folder in sorted(root.glob(f"{config or '*'}/*/*"), reverse=True):
        info = _json(folder / "dataset_info.json")
        if split in info.get("splits", {}) and list(folder.glob(f"*-{split}*.arrow")):
            return folder
    return None


def check_dataset(task: str, include_path: Path, datasets_cache: Path) -> Check:
    from lmms_eval_tasks.catalog import TASKS

    base = TASKS[task].base
    data, yaml_path = _task_dataset(include_path, base)
    source, kwargs = str(data.get("dataset_path")), data.get("dataset_kwargs") or {}
    split = data.get("test_split")
    check = Check(task, f"{source} ({yaml_path.name}, split {split})")
    if kwargs.get("load_from_disk"):
        folder = Path(source)
        saved = json.loads((folder / "dataset_dict.json").read_text()).get("splits", []) if _exists(
            folder / "dataset_dict.json") else []
        if split not in saved or not _exists(folder / split / "dataset_info.json"):
            check.missing.append(f"save_to_disk folder {folder} with split {split}")
        check.found = str(folder)
        return check
    data_files = kwargs.get("data_files")
    if data_files:
        files = [file for value in (data_files.values() if isinstance(data_files, dict) else [data_files])
                 for file in (value if isinstance(value, list) else [value])]
        remote = [file for file in files if str(file).startswith(REMOTE_PREFIXES)]
        local = [Path(file) if Path(file).is_absolute() else yaml_path.parent / file
                 for file in files if file not in remote]
        check.missing += [f"remote data file {file}: not readable offline; download it and point the task at the "
                          f"copy: python -m lmms_eval_tasks export DIR --data {base}=PATH" for file in remote]
        check.missing += [f"data file {file}" for file in local if not _exists(file)]
        check.found = ", ".join(str(file) for file in local) or None
        return check
    folder = prepared_dataset(datasets_cache, source, data.get("dataset_name"), split)
    if folder is None:
        name = data.get("dataset_name")
        check.missing.append(f"not prepared in {datasets_cache}; prepare it on a machine with internet (same "
                             f"datasets version, same HF_DATASETS_CACHE): python -c \"import datasets; "
                             f"datasets.load_dataset('{source}'{f', {name!r}' if name else ''}, split='{split}')\"")
    check.found = str(folder) if folder else None
    return check


def _digest(text: str | None) -> str | None:
    return hashlib.sha256(text.encode()).hexdigest()[:12] if text is not None else None


def protocol_files(folder: Path) -> dict[str, str | None]:
    """Digests of what decides a checkpoint's prompt and image preprocessing: its chat template (in
    tokenizer_config.json, chat_template.jinja or chat_template.json) and its processor config."""
    template = _json(folder / "tokenizer_config.json").get("chat_template")
    for name in ("chat_template.jinja", "chat_template.json"):
        if template is None and _exists(folder / name):
            template = (folder / name).read_text(encoding="utf-8")
    processor = next(((folder / name).read_text(encoding="utf-8") for name in PROCESSOR_FILES
                      if _exists(folder / name)), None)
    return {"chat template": _digest(json.dumps(template)) if template is not None else None,
            "processor config": _digest(json.dumps(json.loads(processor), sort_keys=True)) if processor else None}


def compare_families(found: dict[str, Path], families: dict[str, str]) -> list[str]:
    """One line per family with two or more cached sizes: identical protocol files, or which sizes differ."""
    lines = []
    by_family: dict[str, list[str]] = {}
    for key in found:
        by_family.setdefault(families.get(key, key), []).append(key)
    for family, keys in by_family.items():
        if len(keys) < 2:
            continue
        digests = {key: protocol_files(found[key]) for key in keys}
        for name in ("chat template", "processor config"):
            groups: dict[str | None, list[str]] = {}
            for key in keys:
                groups.setdefault(digests[key][name], []).append(key)
            if len(groups) == 1:
                lines.append(f"  same      {family}: {name} identical across {', '.join(keys)}")
            else:
                lines.append(f"  DIFFERENT {family}: {name}: " + " vs ".join(
                    f"{', '.join(members)} ({digest or 'none'})" for digest, members in groups.items()))
    return lines


def check_offline(rows: Sequence[Row], registry: Registry, hub_cache: Path | None = None,
                  datasets_cache: Path | None = None) -> tuple[str, int]:
    """(the report, the number of models and datasets with something missing) for the plan's rows."""
    if datasets_cache is None:
        import datasets.config

        datasets_cache = Path(datasets.config.HF_DATASETS_CACHE)
    if hub_cache is None:
        from huggingface_hub import constants

        hub_cache = Path(constants.HF_HUB_CACHE)
    models: dict[str, str] = {}
    tasks: dict[str, Path] = {}
    for row in rows:
        args = dict(part.split("=", 1) for part in _model_args(row.command))
        models.setdefault(row.model, args.get("pretrained") or args.get("model") or "?")
        include = option_after(row.command, "--include_path")
        for task in row.tasks:
            tasks.setdefault(task, Path(include) if include else Path("."))
    model_checks = [check_model(key, weights, hub_cache) for key, weights in models.items()]
    dataset_checks = [check_dataset(task, include, Path(datasets_cache)) for task, include in tasks.items()]
    families = {}
    for key in models:
        try:
            families[key] = registry.get(key).family
        except RegistryError:
            families[key] = key
    found = {check.name: Path(check.found) for check in model_checks if check.found}
    missing = sum(bool(check.missing) for check in [*model_checks, *dataset_checks])
    lines = [f"check-offline: {len(models)} models, {len(tasks)} tasks (hub cache {hub_cache}, datasets cache "
             f"{datasets_cache})", "models:", *(check.line() for check in model_checks),
             "datasets:", *(check.line() for check in dataset_checks)]
    compared = compare_families(found, families)
    if compared:
        lines += ["protocol files of a family's cached sizes:", *compared]
    lines.append(f"{missing} of {len(model_checks) + len(dataset_checks)} models and datasets incomplete"
                 if missing else "everything the plan needs is on this machine")
    return "\n".join(lines) + "\n", missing


def _model_args(command: Iterable[str]) -> list[str]:
    from model_configs.launch_settings import split_args

    text = option_after(list(command), "--model_args") or ""
    return [part for part in split_args(text) if "=" in part]


__all__ = ["Check", "check_dataset", "check_model", "check_offline", "compare_families", "prepared_dataset",
           "snapshot_problems"]
