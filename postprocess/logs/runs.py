"""lmms-eval runs on disk: which files make a run, and the facts its results.json states, read once.

lmms-eval 0.7.3 writes, per run, `OUT/<model dir>/<PREFIX>_results.json` and one
`<PREFIX>_samples_<task>.jsonl` per task, where PREFIX is the run's timestamp (YYYYMMDD_HHMMSS). A samples
file belongs to the results.json of the same PREFIX in the same folder; one without it is an orphan.
Everything else that reads these files (ingestion, CAIT timing, the launcher's completeness check) goes
through this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS_SUFFIX = "_results.json"
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
    """`config.model_args` as a dict: accepts "k=v,k2=v2" strings and dicts."""
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items() if v is not None}
    if not isinstance(model_args, str):
        return {}
    pairs = (part.split("=", 1) for part in model_args.split(",") if "=" in part)
    return {key.strip(): value.strip() for key, value in pairs}


def model_path_from_args(args: dict[str, str]) -> str | None:
    """The model path lmms-eval was given: `pretrained=`, else `model=`, else `model_version=` (the API
    wrappers: openai, gemini, claude)."""
    return args.get("pretrained") or args.get("model") or args.get("model_version") or None


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class RunFacts:
    """What one results.json states. `problem` is set (and the rest empty) when it cannot be read or is not
    the shape lmms-eval writes."""
    results_path: Path
    prefix: str
    problem: str | None = None
    lmms_eval_model: str | None = None
    model_args: dict[str, str] = field(default_factory=dict)
    tasks: tuple[str, ...] = ()  # the tasks results.json lists (configs, else n-samples)
    effective: dict[str, int | None] = field(default_factory=dict)  # task -> questions asked (n-samples)
    output_tokens: dict[str, float | None] = field(default_factory=dict)  # task -> efficiency output tokens
    elapsed_s: float | None = None  # throughput.total_elapsed_time: the wrapper's timed generate calls

    @property
    def model_path(self) -> str | None:
        return model_path_from_args(self.model_args)


def read_results(results_path: Path | str) -> RunFacts:
    """The facts of one results.json (never raises for a bad file: `problem` says what is wrong)."""
    path = Path(results_path)
    prefix = prefix_of(path)
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return RunFacts(path, prefix, problem=f"cannot read results.json: {err}")
    if not isinstance(results, dict):
        return RunFacts(path, prefix, problem=f"results.json holds a JSON {type(results).__name__}, not an object")
    config = _mapping(results.get("config"))
    n_samples = _mapping(results.get("n-samples"))
    by_task = _mapping(_mapping(results.get("efficiency")).get("by_task"))
    tasks = tuple(sorted(_mapping(results.get("configs")) or n_samples))
    elapsed = _mapping(results.get("throughput")).get("total_elapsed_time")
    return RunFacts(
        path, prefix,
        lmms_eval_model=config.get("model") if isinstance(config.get("model"), str) else None,
        model_args=parse_model_args(config.get("model_args")),
        tasks=tasks,
        effective={task: _mapping(n_samples.get(task)).get("effective") for task in n_samples},
        output_tokens={task: _mapping(by_task.get(task)).get("total_output_tokens") for task in n_samples},
        elapsed_s=float(elapsed) if isinstance(elapsed, (int, float)) else None,
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
