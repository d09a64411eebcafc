"""The launch plan: one lmms-eval run per (model, task), its command, its GPUs and an estimate of its cost.

Rows. Each selected model (registry key; CAIT models by "<name>-<params>") is paired with each entry of
--tasks. A group (`invscale`, `invscale_cot`, ...) is split into its tasks, one row each (the paper's
171 runs are 19 models x 9 splits), unless keep_groups: then the group is one run, which loads the model
once. A row writes to OUT/<model key>/<task or group>/, which postprocess ingestion walks recursively.

One protocol per family. Every size of a family must be sent the same thing: the plan refuses a family
whose launchable models differ in LaunchSpec.protocol() (backend, dtype, pixel budget, HF batch size,
model_args other than resources) unless allow_mixed_protocol, and then lists what differs. Run-wide
options (RunOptions: --gen-kwargs, --model-args, --device, --hf-wrappers, --limit) apply to every
selected model; the plan notes the sizes of a family they would miss when only part of it is selected.

GPU layout, from the model's launch settings (model_configs):
- HF wrappers (some CAIT models; every model with --hf-wrappers): one copy per GPU of the node, data parallel:
  `accelerate launch --num_processes <gpus per node> -m lmms_eval ...` (a plain `python -m lmms_eval`
  when the node has one GPU). The row occupies the whole node.
- vllm: one process, `--model vllm --model_args model=ID,tensor_parallel_size=N,...`, on N GPUs.
- --device cpu / cuda:N: one process on that device (HF wrappers only; see LaunchSpec.on_device); a CPU
  row has no GPU-hour estimate.

GPU-hour estimate -- an ESTIMATE from assumed constants, not a measurement; calibrate the constants
from a pilot run (results.json `total_evaluation_time_seconds`) before booking a cluster:

    GPU-seconds per question = (FIXED_GPU_SECONDS + GPU_SECONDS_PER_BILLION_ACTIVE x active params in B)
                               x LONG_ANSWER_FACTOR  (prompts that ask for reasoning or a description)
                               / VLLM_BATCHING_SPEEDUP  (vllm rows: continuous batching)
    GPU-hours of a row = questions x GPU-seconds per question / 3600
                         + (LOAD_SECONDS + LOAD_SECONDS_PER_BILLION_TOTAL x total params in B) x GPUs / 3600
    wall hours of a row = GPU-hours / GPUs of the row (data and tensor parallelism assumed to scale linearly)

Questions are the paper's N per split (Table 1; CAIT: 400 images) for every variant of the split; the
option-shift variants keep only four-option questions, so they are overestimated. Compute scales with
active parameters (an MoE model pays for its active experts); loading scales with total parameters.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from lmms_eval_tasks.benchmarks import BENCHMARKS
from lmms_eval_tasks.catalog import GROUPS, TASKS
from lmms_eval_tasks.variants import VARIANTS
from model_configs import LaunchSpec, Registry, RegistryError
from model_configs.launch_settings import hf_launch

from .runner import lmms_eval_command

# Questions per base task: the paper's N (benchmarks.py: inverse-scaling Table 1; CAIT: 400 images).
PAPER_QUESTIONS: dict[str, int] = {spec.task: spec.paper_n for spec in BENCHMARKS}

FIXED_GPU_SECONDS = 0.3               # image decoding, vision encoder, prompt prefill of a small model
GPU_SECONDS_PER_BILLION_ACTIVE = 0.1  # HF generate, batch 1, one H100, an answer of a few tokens
LONG_ANSWER_FACTOR = 8.0              # cot / structured / describe: hundreds of tokens instead of a letter
VLLM_BATCHING_SPEEDUP = 4.0
LOAD_SECONDS = 120.0                  # process start, imports, dataset preparation
LOAD_SECONDS_PER_BILLION_TOTAL = 1.0  # reading bfloat16 weights (2 GB per B params) and starting the engine
LONG_ANSWER_PROMPTS = ("cot", "structured", "describe")

CAIT_FAMILY = "CAIT"  # --family CAIT: the CAIT paper's models outside the registry
DEFAULT_LMMS_EVAL_CMD = "python -m lmms_eval"
DEFAULT_GPUS_PER_NODE = 8


class PlanError(ValueError):
    """A selection or layout the launcher cannot run; the message names the model, task or option."""


@dataclass(frozen=True)
class Target:
    """A launchable model: a registry model, or a CAIT model with its own launch settings."""
    key: str
    hf_id: str
    family: str
    total_params: int
    active_params: int
    launch: LaunchSpec
    lmms_eval_model: str | None = None  # its lmms-eval HF wrapper (--hf-wrappers)


@dataclass(frozen=True)
class RunOptions:
    """Run-wide settings from the command line; each applies to every selected model."""
    limit: float | None = None        # lmms-eval --limit: questions per task (a smoke test)
    gen_kwargs: str | None = None     # lmms-eval --gen_kwargs "k=v,...": replaces the tasks' generation settings
    model_args: str | None = None     # "k=v,..." added to every model's --model_args
    device: str | None = None         # cpu or cuda:N: one process on that device
    hf_wrappers: bool = False         # run each model on its lmms-eval HF wrapper instead of its registry backend
    allow_mixed_protocol: bool = False

    @property
    def protocol_changes(self) -> list[str]:
        """The options that change what a model is sent or how it decodes (--limit only shortens a run)."""
        changes = [f"--gen-kwargs {self.gen_kwargs}" if self.gen_kwargs else "",
                   f"--model-args {self.model_args}" if self.model_args else "",
                   f"--device {self.device}" if self.device else "", "--hf-wrappers" if self.hf_wrappers else ""]
        return [change for change in changes if change]


@dataclass(frozen=True)
class Row:
    index: int
    model: str
    item: str                 # the task or group as run; the run folder's name
    tasks: tuple[str, ...]    # the tasks whose samples files make the run complete
    backend: str
    gpus: int                 # GPUs the run occupies
    processes: int            # accelerate processes; 1 = a single process
    questions: int
    gpu_hours: float
    wall_hours: float
    run_dir: Path
    command: tuple[str, ...]

    @property
    def log(self) -> Path:
        return self.run_dir / "lmms_eval.log"

    @property
    def layout(self) -> str:
        device = option_after(self.command, "--device")
        if device is not None and device != "cuda":
            return "CPU" if device == "cpu" else f"1 GPU ({device})"
        if self.backend == "vllm":
            return f"vllm tensor parallel {self.gpus}" if self.gpus > 1 else "vllm on 1 GPU"
        return f"data parallel {self.processes} x 1 GPU" if self.processes > 1 else "1 GPU"


# ---------------------------------------------------------------------------------------------- selection
def launch_targets(registry: Registry) -> dict[str, Target]:
    """Every model with launch settings by key: the registry's, then the CAIT models that are not one of them."""
    targets = {spec.key: Target(spec.key, spec.hf_id, spec.family, spec.total_params, spec.active_params, spec.launch,
                                spec.lmms_eval_model)
               for spec in registry if spec.launch is not None}
    for cait in registry.cait_models:
        if cait.launch is not None:
            own_wrapper = None if cait.launch.wrapper.tensor_parallel else cait.launch.backend
            targets[cait.key] = Target(cait.key, cait.hf_id, CAIT_FAMILY, cait.total_params, cait.active_params,
                                       cait.launch, own_wrapper)
    return targets


def _family_token(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).lower()


def resolve_family(registry: Registry, name: str) -> str:
    """A family by its name, case-insensitive, with spaces, hyphens and underscores ignored ("Gemma-3",
    "gemma_3" and "Gemma 3" are the same family); CAIT for the CAIT paper's models."""
    candidates = [*registry.families, CAIT_FAMILY]
    matches = [family for family in candidates if _family_token(family) == _family_token(name)]
    if len(matches) != 1:
        raise PlanError(f"unknown family {name!r}; families: {', '.join(candidates)}")
    return matches[0]


def select_models(registry: Registry, models: Sequence[str] = (), families: Sequence[str] = ()) -> list[Target]:
    """Models by key ("all": the registry's models) or by family ("CAIT": the CAIT paper's launchable models
    outside the registry), in the order asked, registry models smallest first within a family."""
    targets = launch_targets(registry)
    by_lower = {key.lower(): target for key, target in targets.items()}
    chosen: list[Target] = []
    for name in models:
        if name == "all":
            chosen += [targets[spec.key] for family in registry.families for spec in registry.family_order(family)
                       if spec.key in targets]
        elif name.lower() in by_lower:
            chosen.append(by_lower[name.lower()])
        elif name in registry:
            raise PlanError(f"model {registry.get(name).key!r} has no launch settings in {registry.source}")
        else:
            raise PlanError(f"unknown model {name!r}; launchable: {', '.join(targets)}")
    for name in families:
        family = resolve_family(registry, name)
        if family == CAIT_FAMILY:
            chosen += [t for t in targets.values() if t.family == CAIT_FAMILY]
        else:
            chosen += [targets[spec.key] for spec in registry.family_order(family) if spec.key in targets]
    if not chosen:
        raise PlanError("no model selected")
    return list({target.key: target for target in chosen}.values())


def family_protocol_differences(registry: Registry, families: Iterable[str]) -> dict[str, dict[str, dict[str, str]]]:
    """family -> setting -> {model: value} for every protocol setting (LaunchSpec.protocol) on which the
    family's launchable models disagree, over ALL its sizes in the registry, selected or not."""
    differences: dict[str, dict[str, dict[str, str]]] = {}
    for family in dict.fromkeys(families):
        if family == CAIT_FAMILY:  # not a scaling family: compared across architectures
            continue
        protocols = {spec.key: spec.launch.protocol() for spec in registry.family_order(family) if spec.launch}
        names = dict.fromkeys(name for protocol in protocols.values() for name in protocol)
        for name in names:
            values = {key: protocol.get(name, "(not set)") for key, protocol in protocols.items()}
            if len(set(values.values())) > 1:
                differences.setdefault(family, {})[name] = values
    return differences


def describe_differences(family: str, settings: dict[str, dict[str, str]]) -> str:
    """One line: `family F: backend qwen3_vl (A, B) vs vllm (C); ...`."""
    parts = []
    for name, values in settings.items():
        by_value: dict[str, list[str]] = {}
        for model, value in values.items():
            by_value.setdefault(value, []).append(model)
        parts.append(f"{name} " + " vs ".join(f"{value} ({', '.join(models)})" for value, models in by_value.items()))
    return f"family {family}: " + "; ".join(parts)


def check_protocol(registry: Registry, targets: Sequence[Target], allow_mixed: bool = False) -> list[str]:
    """Refuse (PlanError) a selected family whose sizes differ in protocol, unless allow_mixed: then the
    differences, one line per family, for the plan to print."""
    differences = family_protocol_differences(registry, [t.family for t in targets])
    lines = [describe_differences(family, settings) for family, settings in differences.items()]
    if lines and not allow_mixed:
        raise PlanError("every size of a family must be sent the same prompt, images and decoding settings, but "
                        + " | ".join(lines) + ". Make the family's launch settings agree in "
                        f"{registry.source}, or pass --allow-mixed-protocol to run it anyway")
    return lines


def partial_family_notes(registry: Registry, targets: Sequence[Target], options: RunOptions) -> list[str]:
    """Families that run-wide options would reach only in part (the other sizes would differ from them)."""
    if not options.protocol_changes:
        return []
    chosen = {t.key for t in targets}
    notes = []
    for family in dict.fromkeys(t.family for t in targets if t.family != CAIT_FAMILY):
        missed = [spec.key for spec in registry.family_order(family) if spec.launch and spec.key not in chosen]
        if missed:
            notes.append(f"NOTE: {' '.join(options.protocol_changes)} apply to the selected models only; family "
                         f"{family} also has {', '.join(missed)}, whose runs would then differ from them "
                         f"(select the whole family: --family \"{family}\")")
    return notes


def apply_options(targets: Sequence[Target], options: RunOptions) -> list[Target]:
    """The targets with the run-wide options applied to their launch settings (errors name the model)."""
    applied = []
    for target in targets:
        where = f"model {target.key}"
        try:
            launch = hf_launch(target.lmms_eval_model, where) if options.hf_wrappers else target.launch
            if options.model_args:
                launch = launch.with_model_args(options.model_args, where)
            if options.device:
                launch = launch.on_device(options.device, where)
        except RegistryError as err:
            raise PlanError(str(err)) from err
        applied.append(replace(target, launch=launch))
    return applied


def expand_tasks(items: Sequence[str], keep_groups: bool = False) -> list[tuple[str, tuple[str, ...]]]:
    """(run name, tasks) per run: a task alone, a group split into its tasks unless keep_groups."""
    runs: list[tuple[str, tuple[str, ...]]] = []
    for item in items:
        if item in GROUPS:
            runs += [(item, tuple(GROUPS[item]))] if keep_groups else [(task, (task,)) for task in GROUPS[item]]
        elif item in TASKS:
            runs.append((item, (item,)))
        else:
            raise PlanError(f"unknown task or group {item!r}; groups: {', '.join(GROUPS)}; "
                            "tasks: `invscale tasks list`")
    if not runs:
        raise PlanError("no task selected")
    return list(dict.fromkeys(runs))


# ---------------------------------------------------------------------------------------------- estimate
def gpu_seconds_per_question(target: Target, task: str) -> float:
    seconds = FIXED_GPU_SECONDS + GPU_SECONDS_PER_BILLION_ACTIVE * target.active_params / 1e9
    if VARIANTS[TASKS[task].variant].prompt in LONG_ANSWER_PROMPTS:
        seconds *= LONG_ANSWER_FACTOR
    if target.launch.backend == "vllm":
        seconds /= VLLM_BATCHING_SPEEDUP
    return seconds


def estimate(target: Target, tasks: Iterable[str], gpus: int) -> tuple[int, float, float]:
    """(questions, GPU-hours, wall hours) of one run; formula in the module docstring. A CPU run (gpus 0) has
    no estimate: NaN hours."""
    tasks = list(tasks)
    questions = sum(PAPER_QUESTIONS[TASKS[task].base] for task in tasks)
    if gpus == 0:
        return questions, math.nan, math.nan
    compute = sum(PAPER_QUESTIONS[TASKS[task].base] * gpu_seconds_per_question(target, task) for task in tasks)
    load = LOAD_SECONDS + LOAD_SECONDS_PER_BILLION_TOTAL * target.total_params / 1e9
    gpu_hours = (compute + load * gpus) / 3600
    return questions, gpu_hours, gpu_hours / gpus


def formula_text() -> str:
    return (f"GPU-hours are an ESTIMATE, not a measurement: per question ({FIXED_GPU_SECONDS:g} + "
            f"{GPU_SECONDS_PER_BILLION_ACTIVE:g} x active params in B) GPU-seconds, x{LONG_ANSWER_FACTOR:g} for "
            f"{'/'.join(LONG_ANSWER_PROMPTS)} prompts, /{VLLM_BATCHING_SPEEDUP:g} on vllm; plus loading "
            f"({LOAD_SECONDS:g} s + {LOAD_SECONDS_PER_BILLION_TOTAL:g} s per B total params) on every GPU of the "
            "run. Questions: the paper's N per split. Formula and constants: launch/plan.py.")


# ---------------------------------------------------------------------------------------------- plan
def _gen_kwargs(model: str | None, run: str | None) -> str | None:
    """The model's own --gen_kwargs (a thinking model's budget) with the run-wide ones over them, key by key."""
    merged = {}
    for text in (model, run):
        merged.update(part.split("=", 1) for part in (text or "").split(",") if "=" in part)
    return ",".join(f"{key}={value}" for key, value in merged.items()) or None


def build_plan(targets: Sequence[Target], runs: Sequence[tuple[str, tuple[str, ...]]], out: Path, *,
               gpus_per_node: int = DEFAULT_GPUS_PER_NODE, include_path: Path | None = None,
               lmms_eval_cmd: str = DEFAULT_LMMS_EVAL_CMD, options: RunOptions = RunOptions()) -> list[Row]:
    """One row per (model, run), models outermost; commands use absolute paths so they run from anywhere.
    `targets` already carry the options' launch changes (apply_options); the rest of `options` (limit,
    gen_kwargs, device) goes on the lmms-eval command line."""
    if gpus_per_node < 1:
        raise PlanError(f"--gpus-per-node must be at least 1, got {gpus_per_node}")
    out = Path(out).resolve()
    include_path = Path(include_path).resolve() if include_path is not None else None
    program = shlex.split(lmms_eval_cmd)
    if not program:
        raise PlanError("--lmms-eval-cmd is empty")
    rows: list[Row] = []
    for target in targets:
        launch = target.launch
        if launch.gpus > gpus_per_node:
            raise PlanError(f"model {target.key} needs {launch.gpus} GPUs (launch.gpus) but a node has "
                            f"{gpus_per_node} (--gpus-per-node)")
        single = launch.wrapper.tensor_parallel or options.device is not None
        processes = 1 if single else gpus_per_node
        gpus = launch.gpus if launch.wrapper.tensor_parallel else 0 if options.device == "cpu" else 1 if single else gpus_per_node
        if processes > 1 and len(program) < 2:
            raise PlanError(f"--lmms-eval-cmd {lmms_eval_cmd!r}: data-parallel runs need an interpreter and a script "
                            "or `-m module` (e.g. `python -m lmms_eval`) to hand to accelerate launch")
        # accelerate takes the script or `-m module` that follows the interpreter
        launcher = ["accelerate", "launch", "--num_processes", str(processes), *program[1:]] if processes > 1 else program
        for item, tasks in runs:
            run_dir = out / target.key / item
            command = lmms_eval_command(launch.backend, launch.model_args_for(target.hf_id), [item], run_dir,
                                        include_path=include_path, batch_size=launch.batch_size, launcher=launcher,
                                        limit=options.limit, gen_kwargs=_gen_kwargs(launch.gen_kwargs, options.gen_kwargs),
                                        device=options.device)
            questions, gpu_hours, wall_hours = estimate(target, tasks, gpus)
            rows.append(Row(len(rows), target.key, item, tasks, launch.backend, gpus, processes, questions,
                            gpu_hours, wall_hours, run_dir, tuple(command)))
    return rows


def _hours(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def option_after(command: Sequence[str], flag: str) -> str | None:
    """The value that follows `flag` in a command, or None."""
    return command[command.index(flag) + 1] if flag in command[:-1] else None


def format_plan(rows: Sequence[Row], gpus_per_node: int, notes: Sequence[str] = ()) -> str:
    models = list(dict.fromkeys(row.model for row in rows))
    items = list(dict.fromkeys(row.item for row in rows))
    lines = [f"Launch plan: {len(models)} models x {len(items)} task runs = {len(rows)} runs "
             f"(nodes of {gpus_per_node} GPUs)", formula_text(), ""]
    header = ("row", "model", "task", "backend", "GPUs", "layout", "questions", "GPU-h", "wall-h")
    table = [header] + [(str(r.index), r.model, r.item, r.backend, str(r.gpus), r.layout, str(r.questions),
                         _hours(r.gpu_hours), _hours(r.wall_hours)) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    total_gpu = sum(r.gpu_hours for r in rows if not math.isnan(r.gpu_hours))
    total_wall = sum(r.wall_hours for r in rows if not math.isnan(r.wall_hours))
    on_cpu = sum(math.isnan(r.gpu_hours) for r in rows)
    lines += ["", f"Total: {len(rows)} runs, {total_gpu:.1f} GPU-hours (estimate), {total_wall:.1f} h wall-clock "
                  "one run after another on one node" + (f"; {on_cpu} CPU runs not estimated" if on_cpu else "")]
    lines += list(notes)
    lines += ["", "Commands (each writes OUT/<model>/<task or group>/):"]
    if any("max_new_tokens=1" in part for row in rows for part in row.command):
        lines += ["# max_new_tokens=1 in --model_args is a floor, not the budget: lmms-eval takes the larger of it and"
                  " the task's own max_new_tokens, so each task's generation budget stays in force"]
    for row in rows:
        lines += [f"# row {row.index}: {row.model} / {row.item} on {row.gpus} GPU(s)", shlex.join(row.command)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- manifest
MANIFEST_COLUMNS = ("row", "model", "item", "tasks", "backend", "gpus", "processes", "questions", "gpu_hours",
                    "wall_hours", "run_dir", "command")


def manifest_text(rows: Sequence[Row]) -> str:
    """The rows as TSV, one line per run (no quoting: no field holds a tab or a newline); Slurm array
    index = `row`; `tasks` comma-separated; `command` shell-quoted."""
    lines = ["\t".join(MANIFEST_COLUMNS)]
    for r in rows:
        fields = [str(r.index), r.model, r.item, ",".join(r.tasks), r.backend, str(r.gpus), str(r.processes),
                  str(r.questions), f"{r.gpu_hours:.3f}", f"{r.wall_hours:.3f}", str(r.run_dir), shlex.join(r.command)]
        if any("\t" in field or "\n" in field for field in fields):
            raise PlanError(f"row {r.index}: a tab or newline in {fields} cannot go into the TSV manifest")
        lines.append("\t".join(fields))
    return "\n".join(lines) + "\n"


def read_manifest(path: Path) -> list[Row]:
    lines = Path(path).read_text().splitlines()
    if not lines or tuple(lines[0].split("\t")) != MANIFEST_COLUMNS:
        raise PlanError(f"{path}: not a launch manifest (expected the columns {', '.join(MANIFEST_COLUMNS)})")
    rows = []
    for line in lines[1:]:
        r = dict(zip(MANIFEST_COLUMNS, line.split("\t")))
        rows.append(Row(int(r["row"]), r["model"], r["item"], tuple(r["tasks"].split(",")), r["backend"], int(r["gpus"]),
                        int(r["processes"]), int(r["questions"]), float(r["gpu_hours"]), float(r["wall_hours"]),
                        Path(r["run_dir"]), tuple(shlex.split(r["command"]))))
    return rows
