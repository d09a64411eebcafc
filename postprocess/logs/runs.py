"""lmms-eval runs on disk: which files make a run, and the facts its results.json states, read once.

lmms-eval 0.7.3 writes, per run, `OUT/<model dir>/<PREFIX>_results.json` and one
`<PREFIX>_samples_<task>.jsonl` per task, where PREFIX is the run's timestamp (YYYYMMDD_HHMMSS). A samples
file belongs to the results.json of the same PREFIX in the same folder; one without it is an orphan.
Everything else that reads these files (ingestion, CAIT timing, the launcher's completeness check) goes
through this module.

`read_results` checks the shape of every field it reads (config and configs objects, model_args and
gen_kwargs a string or an object, n-samples[task].effective an integer, ...): a field of another type
makes the whole results.json unreadable, with a problem naming the field, never an exception.

A run's own timestamp is results.json `date` when it has the YYYYMMDD_HHMMSS form, else the file PREFIX
when that has it, else unknown; file ages are never used.

Generation settings (what two runs of a comparison should share), as text (`setting_text`: "True" and
true alike, "4" and 4 alike, containers as sorted JSON):
  backend                    config.model, the lmms-eval wrapper
  model_args.<key>           config.model_args except the checkpoint (IDENTITY_ARGS) and where it runs
                             (PLACEMENT_ARGS: device, parallelism, memory share, batch size)
  gen_kwargs.<key>           config.gen_kwargs, the command line's --gen_kwargs
  system_instruction, chat_template_sha, lmms_eval_version
                             (lmms-eval records there the git branch@commit of the folder it ran in, e.g.
                             this repository's; the launcher writes the package version beside the run,
                             VERSION_FILE, and that is used when present)
  generation_kwargs.<key>    per task: configs[task].generation_kwargs, what the task generated with
  n_shot                     per task: n-shot[task]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS_SUFFIX = "_results.json"
# Which of two runs holding the same questions is kept (postprocess.logs.ingest applies the rule).
DUPLICATE_RULES = ("newest", "oldest", "error")
SAMPLES_MARKER = "_samples_"


def prefix_of(path: Path | str) -> str:
    """The run prefix (timestamp) of a results.json or samples file name."""
    name = Path(path).name
    return name[: -len(RESULTS_SUFFIX)] if name.endswith(RESULTS_SUFFIX) else name.split(SAMPLES_MARKER, 1)[0]


def results_file_of(samples_file: Path | str) -> Path:
    """`<PREFIX>_samples_<task>.jsonl` belongs to `<PREFIX>_results.json` in the same folder."""
    path = Path(samples_file)
    return path.with_name(prefix_of(path) + RESULTS_SUFFIX)


def samples_files_of(results_file: Path | str) -> dict[str, Path]:
    """task -> samples file of the run whose results.json this is (the files present on disk)."""
    path = Path(results_file)
    head = prefix_of(path) + SAMPLES_MARKER
    return {p.name[len(head): -len(".jsonl")]: p for p in sorted(path.parent.glob(f"{head}*.jsonl"))}


def parse_model_args(model_args: Any) -> dict[str, str]:
    """`config.model_args` as a dict: accepts "k=v,k2=v2" strings (a comma inside {...} or [...] belongs to
    its value, as in vLLM's mm_processor_kwargs={...}) and dicts."""
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items() if v is not None}
    if not isinstance(model_args, str):
        return {}
    parts, depth, start = [], 0, 0
    for i, char in enumerate(model_args):
        depth += (char in "{[") - (char in "}]")
        if char == "," and depth <= 0:
            parts.append(model_args[start:i])
            start = i + 1
    parts.append(model_args[start:])
    pairs = (part.split("=", 1) for part in parts if "=" in part)
    return {key.strip(): value.strip() for key, value in pairs}


def model_path_from_args(args: dict[str, str]) -> str | None:
    """The model path lmms-eval was given: `pretrained=`, else `model=`, else `model_version=` (the API
    wrappers: openai, gemini, claude)."""
    return args.get("pretrained") or args.get("model") or args.get("model_version") or None


# model_args keys that name the checkpoint (they differ between sizes by design) or only say where and how
# wide it runs; every other key is a setting two runs of a comparison should share.
IDENTITY_ARGS = ("pretrained", "model", "model_version")
PLACEMENT_ARGS = ("device_map", "device", "tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size",
                  "gpu_memory_utilization", "max_num_seqs", "batch_size")
TIMESTAMP = re.compile(r"\d{8}_\d{6}")


class OddShape(ValueError):
    """A results.json field that is not what lmms-eval writes; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


def _json_type(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _get(mapping: dict, key: str, field: str, kinds: tuple[type, ...], required: bool = False) -> Any:
    """mapping[key] checked against `kinds` (a boolean is never a number here); None when absent or null."""
    value = mapping.get(key)
    if value is None:
        if required:
            raise OddShape(field, "missing")
        return None
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        expected = " or ".join(_TYPE_NAMES[kind] for kind in kinds)
        raise OddShape(field, f"is a JSON {_json_type(value)}, expected {expected}")
    return value


def setting_text(value: Any) -> str:
    """A setting as comparable text: strings as lmms-eval's own argument parser reads them ("true" and "True"
    alike, "4" and 4 alike), containers as sorted compact JSON, null as "null"."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return setting_text(json.loads(text))
            except ValueError:
                return text
        if text.lower() in ("true", "false", "none", "null"):
            return {"none": "null"}.get(text.lower(), text.lower())
        for number in (int, float):
            try:
                return setting_text(number(text))
            except ValueError:
                pass
        return text
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _key_values(value: Any) -> dict[str, str]:
    """A "k=v,k2=v2" string or a mapping (model_args, gen_kwargs) as {key: setting text}."""
    if isinstance(value, dict):
        return {str(k): setting_text(v) for k, v in value.items()}
    return {key: setting_text(text) for key, text in parse_model_args(value).items()}


@dataclass(frozen=True)
class RunFacts:
    """What one results.json states. `problem` is set (and the rest empty) when it cannot be read or is not
    the shape lmms-eval writes; `problem_field` then names the field (None: the file as a whole)."""
    results_path: Path
    prefix: str
    problem: str | None = None
    problem_field: str | None = None
    lmms_eval_model: str | None = None
    model_args: dict[str, str] = field(default_factory=dict)
    tasks: tuple[str, ...] = ()  # the tasks results.json lists (configs, else n-samples)
    effective: dict[str, int | None] = field(default_factory=dict)  # task -> questions asked (n-samples)
    output_tokens: dict[str, float | None] = field(default_factory=dict)  # task -> efficiency output tokens
    elapsed_s: float | None = None  # throughput.total_elapsed_time: the wrapper's timed generate calls
    timestamp: str | None = None  # when the run started: results.json `date`, else the file PREFIX
    lmms_eval_version: str | None = None
    settings: dict[str, str] = field(default_factory=dict)  # run-wide generation settings (SETTINGS rules)
    task_settings: dict[str, dict[str, str]] = field(default_factory=dict)  # task -> its own settings

    @property
    def model_path(self) -> str | None:
        return model_path_from_args(self.model_args)

    def settings_of(self, task: str) -> dict[str, str]:
        """Every generation setting of `task` in this run: the run-wide ones and the task's own."""
        return {**self.settings, **self.task_settings.get(task, {})}


VERSION_FILE = "lmms_eval_version.txt"  # the launcher's record of the lmms-eval package a run used


def recorded_version(results_path: Path) -> str | None:
    """The lmms-eval version the launcher wrote beside this results.json's run (its folder or the one above,
    the launcher's --output_path), or None."""
    for folder in (results_path.parent, results_path.parent.parent):
        if (folder / VERSION_FILE).is_file():
            return (folder / VERSION_FILE).read_text(encoding="utf-8").strip() or None
    return None


def read_results(results_path: Path | str) -> RunFacts:
    """The facts of one results.json (never raises for a bad file: `problem` says what is wrong)."""
    path = Path(results_path)
    prefix = prefix_of(path)
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return RunFacts(path, prefix, problem=f"cannot read results.json: {err}")
    if not isinstance(results, dict):
        return RunFacts(path, prefix, problem=f"results.json holds a JSON {_json_type(results)}, not an object")
    try:
        return _facts(path, prefix, results)
    except OddShape as odd:
        return RunFacts(path, prefix, problem=f"results.json {odd}", problem_field=odd.field)


def _facts(path: Path, prefix: str, results: dict) -> RunFacts:
    config = _get(results, "config", "config", (dict,), required=True)
    model_args = _get(config, "model_args", "config.model_args", (str, dict)) or {}
    gen_kwargs = _get(config, "gen_kwargs", "config.gen_kwargs", (str, dict)) or {}
    configs = _get(results, "configs", "configs", (dict,)) or {}
    n_samples = _get(results, "n-samples", "n-samples", (dict,)) or {}
    efficiency = _get(results, "efficiency", "efficiency", (dict,)) or {}
    by_task = _get(efficiency, "by_task", "efficiency.by_task", (dict,)) or {}
    throughput = _get(results, "throughput", "throughput", (dict,)) or {}
    effective, output_tokens, task_settings = {}, {}, {}
    for task in n_samples:
        counts = _get(n_samples, task, f"n-samples.{task}", (dict,)) or {}
        effective[task] = _get(counts, "effective", f"n-samples.{task}.effective", (int,))
        tokens = _get(by_task, task, f"efficiency.by_task.{task}", (dict,)) or {}
        output_tokens[task] = _get(tokens, "total_output_tokens", f"efficiency.by_task.{task}.total_output_tokens",
                                   (int, float))
    n_shot = _get(results, "n-shot", "n-shot", (dict,)) or {}
    for task in configs:
        task_config = _get(configs, task, f"configs.{task}", (dict,)) or {}
        kwargs = _get(task_config, "generation_kwargs", f"configs.{task}.generation_kwargs", (dict,)) or {}
        task_settings[task] = {f"generation_kwargs.{k}": setting_text(v) for k, v in kwargs.items()}
        if task in n_shot:
            task_settings[task]["n_shot"] = setting_text(n_shot[task])
    elapsed = _get(throughput, "total_elapsed_time", "throughput.total_elapsed_time", (int, float))
    date = results.get("date")
    timestamp = next((text for text in (date, prefix) if isinstance(text, str) and TIMESTAMP.fullmatch(text)), None)
    version = recorded_version(path) or _get(results, "lmms_eval_version", "lmms_eval_version", (str,))
    settings = {
        "backend": setting_text(_get(config, "model", "config.model", (str,))),
        **{f"model_args.{k}": v for k, v in _key_values(model_args).items()
           if k not in IDENTITY_ARGS + PLACEMENT_ARGS},
        **{f"gen_kwargs.{k}": v for k, v in _key_values(gen_kwargs).items()},
        "system_instruction": setting_text(_get(results, "system_instruction", "system_instruction", (str,))),
        "chat_template_sha": setting_text(_get(results, "chat_template_sha", "chat_template_sha", (str,))),
        "lmms_eval_version": setting_text(version),
    }
    return RunFacts(
        path, prefix,
        lmms_eval_model=_get(config, "model", "config.model", (str,)),
        model_args=parse_model_args(model_args),
        tasks=tuple(sorted(configs or n_samples)),
        effective=effective,
        output_tokens={task: None if tokens is None else float(tokens) for task, tokens in output_tokens.items()},
        elapsed_s=None if elapsed is None else float(elapsed),
        timestamp=timestamp,
        lmms_eval_version=version,
        settings=settings,
        task_settings=task_settings,
    )


@dataclass
class RunFiles:
    results_path: Path
    samples: dict[str, Path]  # task -> samples file


def find_runs(dirs: Iterable[Path | str]) -> tuple[list[RunFiles], list[Path]]:
    """Pair every results.json under `dirs` with its samples files; also return the orphan samples files."""
    results_paths: dict[Path, Path] = {}
    samples_files: dict[Path, Path] = {}
    for root in map(Path, dirs):
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(f"--logs {root} is a file, not a folder")
        if not root.is_dir():
            raise FileNotFoundError(f"log folder {root} does not exist")
        results_paths.update((p.resolve(), p) for p in root.rglob(f"*{RESULTS_SUFFIX}") if p.is_file())
        samples_files.update((p.resolve(), p) for p in root.rglob(f"*{SAMPLES_MARKER}*.jsonl") if p.is_file())
    runs, claimed = [], set()
    for results_path in sorted(results_paths.values()):
        run = RunFiles(results_path, samples_files_of(results_path))
        claimed.update(path.resolve() for path in run.samples.values())
        runs.append(run)
    orphans = sorted(path for resolved, path in samples_files.items() if resolved not in claimed)
    return runs, orphans
