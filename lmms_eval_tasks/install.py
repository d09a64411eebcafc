"""Export the task folder (optionally pointing tasks at local data) and install it into lmms-eval.

  export DIR [--data TASK=PATH ...]   write the task YAMLs to DIR, for `lmms-eval --include_path DIR`
  install [--data TASK=PATH ...]      write them into the installed lmms-eval's tasks/ folder, so that
                                      `lmms-eval --tasks blink_val` finds them without --include_path
  install --from DIR                  install a task folder written by `export` (or `fixtures`) as it is
  uninstall                           remove that folder again
  check [--include-path DIR]          where lmms-eval finds these tasks, and whether an installed copy
                                      shadows the --include_path copy

A local override replaces the dataset keys of the named base task; its variants include the base
task file, so they follow. PATH is, by its form:
  a .parquet / .json / .jsonl / .csv / .tsv file, or several joined by commas (one split made of all)
  a folder written by `DatasetDict.save_to_disk` holding the task's split (or a single split)
Every file (or the saved split) must have the benchmark's columns (benchmarks.py `columns`): they are
read from the file's header alone (parquet schema, first JSON record, CSV header, dataset_info.json),
and an override that lacks one fails here, naming the file and the missing columns.

Shadowing. lmms-eval indexes its own tasks/ folder after --include_path and a built-in name wins
silently, so an installed copy of these tasks is what runs even when --include_path names another.
`shadowing_warnings` finds every YAML under lmms-eval's tasks/ that defines one of this catalog's task
names and compares it with the include path's copy. It cannot see: another lmms-eval installation (an
--lmms-eval-cmd with another interpreter), or a different version of this package's hooks (the YAMLs
call lmms_eval_tasks.hooks by module name, so the copy installed where lmms-eval runs is used).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import shutil
from pathlib import Path

import yaml

from .benchmarks import BY_TASK
from .catalog import BASE_TASKS, TASKS

TASKS_DIR = Path(__file__).parent / "tasks"
INSTALLED_FOLDER = "invscale"
MARKER = ".installed-by-vlm-inverse-scaling"
DATASET_KEYS = ("dataset_path", "dataset_name", "dataset_kwargs", "test_split")
FILE_BUILDERS = {".parquet": ("parquet", {}), ".json": ("json", {}), ".jsonl": ("json", {}),
                 ".csv": ("csv", {}), ".tsv": ("csv", {"sep": "\t"})}
SHARED_FILES = ("_template.yaml", "_cot.yaml")  # included by the task files


class OverrideError(ValueError):
    """A --data override that cannot work; the message names the task and the path."""


def _split_of(base: str) -> str:
    return yaml.safe_load(yaml_without_tags((TASKS_DIR / f"{base}.yaml").read_text()))["test_split"]


def yaml_without_tags(text: str) -> str:
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
    for path in paths:
        _check_columns(base, source, path, file_columns(path))
    return {"dataset_path": builder, "dataset_kwargs": {"data_files": {split: [str(p) for p in paths]}, **extra},
            "test_split": split}


def _check_columns(base: str, source: str, where: Path, columns: list[str]) -> None:
    spec = BY_TASK[base]
    missing = [column for column in spec.columns if column not in columns]
    if missing:
        raise OverrideError(f"--data {base}={source}: {where} lacks the column(s) {', '.join(missing)} that the "
                            f"{spec.name} task reads ({', '.join(spec.columns)}); it has: {', '.join(columns) or 'none'}")


def file_columns(path: Path) -> list[str]:
    """The columns of a data file, read from its header only: the parquet schema, the first JSON record,
    the CSV/TSV header line."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        if suffix in (".csv", ".tsv"):
            with open(path, newline="", encoding="utf-8") as handle:
                return next(csv.reader(handle, delimiter="\t" if suffix == ".tsv" else ","), [])
        return list(_first_json_record(path))
    except (OSError, ValueError, UnicodeDecodeError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise OverrideError(f"{path}: cannot read its columns: {err}") from None


def _first_json_record(path: Path) -> dict:
    """The first record of a JSON Lines file, of a JSON array of records, or the keys of a JSON object of
    columns; reads only as far as that record."""
    decoder = json.JSONDecoder()
    with open(path, encoding="utf-8") as handle:
        text = ""
        while True:
            chunk = handle.read(1 << 20)
            text += chunk
            body = text.lstrip()
            if body.startswith("["):
                body = body[1:].lstrip()
            try:
                record, _ = decoder.raw_decode(body)
            except json.JSONDecodeError:
                if chunk:  # the first record is longer than what was read
                    continue
                raise ValueError("no JSON record at its start") from None
            if not isinstance(record, dict):
                raise ValueError(f"its first JSON value is a {type(record).__name__}, not a record")
            return record


def _disk_block(base: str, folder: Path, split: str) -> dict:
    if (folder / "dataset_dict.json").exists():
        splits = json.loads((folder / "dataset_dict.json").read_text())["splits"]
        if split not in splits:
            if len(splits) != 1:
                raise OverrideError(f"--data {base}={folder}: the saved DatasetDict has splits {splits}, none named '{split}'")
            split = splits[0]
        info = folder / split / "dataset_info.json"
        try:
            columns = list(json.loads(info.read_text(encoding="utf-8"))["features"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise OverrideError(f"--data {base}={folder}: cannot read the columns of split '{split}' from {info}: "
                                f"{err}") from None
        _check_columns(base, str(folder), folder / split, columns)
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
    """lmms-eval's own task folder, found without importing lmms-eval (which indexes every task)."""
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or not spec.submodule_search_locations:
        raise OverrideError("lmms-eval is not installed in this environment")
    return Path(next(iter(spec.submodule_search_locations))) / "tasks"


def check_task_folder(folder: Path) -> None:
    """Refuse a folder that is not a complete task folder of this catalog (as `export` writes it)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise OverrideError(f"--from {folder}: not a folder")
    missing = [name for name in (*SHARED_FILES, *(f"{task}.yaml" for task in TASKS)) if not (folder / name).is_file()]
    if missing:
        raise OverrideError(f"--from {folder}: not a task folder written by `python -m lmms_eval_tasks export`: "
                            f"{len(missing)} file(s) missing, e.g. {', '.join(missing[:5])}")


def install(data: dict[str, str] | None = None, source: Path | None = None) -> Path:
    """Write the task folder (or copy `source`, an exported folder) into lmms-eval's tasks/invscale/."""
    target = lmms_eval_tasks_dir() / INSTALLED_FOLDER
    if target.exists() and not (target / MARKER).exists():
        raise OverrideError(f"{target} exists and was not installed by this tool; refusing to overwrite it")
    if source is not None:
        if data:
            raise OverrideError("--from and --data exclude each other: export the folder with --data, then install it")
        check_task_folder(source)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", MARKER))
    else:
        export_tasks(target, data)
    (target / MARKER).write_text("remove with: python -m lmms_eval_tasks uninstall\n")
    return target


_TASK_LINE = re.compile(r"^task:\s*['\"]?([\w.-]+)", re.MULTILINE)


def installed_task_files() -> dict[Path, list[str]]:
    """Folder under lmms-eval's tasks/ -> the task names of this catalog that its YAML files define."""
    found: dict[Path, list[str]] = {}
    for path in sorted(lmms_eval_tasks_dir().rglob("*.yaml")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found.setdefault(path.parent, []).extend(name for name in _TASK_LINE.findall(text) if name in TASKS)
    return {folder: names for folder, names in found.items() if names}


def shadowing_warnings(include_path: Path | None) -> list[str]:
    """A line per installed copy that lmms-eval would read instead of `include_path` (module docstring):
    which tasks, where, and whether it differs. Empty when nothing is installed or lmms-eval is absent."""
    try:
        installed = installed_task_files()
    except OverrideError:
        return []
    if not installed:
        return []
    include = Path(include_path).resolve() if include_path is not None else None
    warnings = []
    for folder, tasks in installed.items():
        if include is not None and folder.resolve() == include:
            continue
        if include is None:
            warnings.append(f"{len(tasks)} of these tasks are installed into lmms-eval at {folder}; lmms-eval reads "
                            "that copy")
            continue
        names = [*SHARED_FILES, *(f"{task}.yaml" for task in tasks)]
        differ = [name for name in names if (folder / name).exists() != (include / name).exists()
                  or (folder / name).exists() and (folder / name).read_bytes() != (include / name).read_bytes()]
        what = (f"and differs from it in {len(differ)} file(s): {', '.join(differ[:6])}{' ...' if len(differ) > 6 else ''}"
                if differ else "(identical to it today)")
        warnings.append(f"an installed copy of {len(tasks)} of these tasks at {folder} shadows the task folder {include}: "
                        f"lmms-eval runs the installed copy {what}; remove it with `python -m lmms_eval_tasks "
                        "uninstall` (or delete that folder) to run the include path")
    return warnings


def uninstall() -> Path | None:
    target = lmms_eval_tasks_dir() / INSTALLED_FOLDER
    if not target.exists():
        return None
    if not (target / MARKER).exists():
        raise OverrideError(f"{target} was not installed by this tool; not removing it")
    shutil.rmtree(target)
    return target
