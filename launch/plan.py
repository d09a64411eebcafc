"""The launch plan: one lmms-eval run per (model, task), its command, its GPUs and an estimate of its cost.

Rows. Each selected model (registry key; CAIT models by "<name>-<params>") is paired with each entry of
--tasks. A group (`invscale`, `invscale_cot`, ...) is split into its tasks, one row each (the paper's
171 runs are 19 models x 9 splits), unless keep_groups: then the group is one run, which loads the model
once. A row writes to OUT/<model key>/<task or group>/, which postprocess ingestion walks recursively.

GPU layout, from the model's launch settings (model_configs):
- HF wrappers (launch.gpus == 1): one copy of the model per GPU of the node, data parallel:
  `accelerate launch --num_processes <gpus per node> -m lmms_eval ...` (a plain `python -m lmms_eval`
  when the node has one GPU). The row occupies the whole node.
- vllm: one process, `--model vllm --model_args model=ID,tensor_parallel_size=N,...`, on N GPUs.

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

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lmms_eval_tasks.catalog import GROUPS, TASKS
from lmms_eval_tasks.variants import VARIANTS
from model_configs import LaunchSpec, Registry

from .runner import lmms_eval_command

# Table 1 of the inverse-scaling paper (N per split); CAIT: 400 images, one question each (CAIT paper, 3.2).
PAPER_QUESTIONS: dict[str, int] = {
    "invscale_mmtbench_val": 3127,
    "invscale_mmmu_dev_val": 1050,
    "invscale_mmmu_test": 10500,
    "invscale_scienceqa_img_test": 2017,
    "invscale_mme_test": 2374,
    "invscale_ai2d_test": 3088,
    "invscale_mathvista_testmini": 1000,
    "blink_val": 1901,
    "invscale_mmbench_dev_en": 4329,
    "cait": 400,
}

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
        if self.backend == "vllm":
            return f"vllm tensor parallel {self.gpus}" if self.gpus > 1 else "vllm on 1 GPU"
        return f"data parallel {self.processes} x 1 GPU" if self.processes > 1 else "1 GPU"


# ---------------------------------------------------------------------------------------------- selection
def launch_targets(registry: Registry) -> dict[str, Target]:
    """Every model with launch settings by key: the registry's, then the CAIT models that are not one of them."""
    targets = {spec.key: Target(spec.key, spec.hf_id, spec.family, spec.total_params, spec.active_params, spec.launch)
               for spec in registry if spec.launch is not None}
    for cait in registry.cait_models:
        if cait.launch is not None:
            targets[cait.key] = Target(cait.key, cait.hf_id, CAIT_FAMILY, cait.total_params, cait.active_params,
                                       cait.launch)
    return targets


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
    for family in families:
        if family == CAIT_FAMILY:
            chosen += [t for t in targets.values() if t.family == CAIT_FAMILY]
        elif family in registry.families:
            chosen += [targets[spec.key] for spec in registry.family_order(family) if spec.key in targets]
        else:
            raise PlanError(f"unknown family {family!r}; families: {', '.join(registry.families)}, {CAIT_FAMILY}")
    if not chosen:
        raise PlanError("no model selected")
    return list({target.key: target for target in chosen}.values())


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
                            "tasks: `python -m lmms_eval_tasks list`")
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
    """(questions, GPU-hours, wall hours) of one run; formula in the module docstring."""
    tasks = list(tasks)
    questions = sum(PAPER_QUESTIONS[TASKS[task].base] for task in tasks)
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
def build_plan(targets: Sequence[Target], runs: Sequence[tuple[str, tuple[str, ...]]], out: Path, *,
               gpus_per_node: int = DEFAULT_GPUS_PER_NODE, include_path: Path | None = None,
               lmms_eval_cmd: str = DEFAULT_LMMS_EVAL_CMD) -> list[Row]:
    """One row per (model, run), models outermost; commands use absolute paths so they run from anywhere."""
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
        processes = 1 if launch.wrapper.tensor_parallel else gpus_per_node
        gpus = launch.gpus if launch.wrapper.tensor_parallel else gpus_per_node
        if processes > 1 and len(program) < 2:
            raise PlanError(f"--lmms-eval-cmd {lmms_eval_cmd!r}: data-parallel runs need an interpreter and a script "
                            "or `-m module` (e.g. `python -m lmms_eval`) to hand to accelerate launch")
        # accelerate takes the script or `-m module` that follows the interpreter
        launcher = ["accelerate", "launch", "--num_processes", str(processes), *program[1:]] if processes > 1 else program
        for item, tasks in runs:
            run_dir = out / target.key / item
            command = lmms_eval_command(launch.backend, launch.model_args_for(target.hf_id), [item], run_dir,
                                        include_path=include_path, gen_kwargs=launch.gen_kwargs,
                                        batch_size=launch.batch_size, launcher=launcher)
            questions, gpu_hours, wall_hours = estimate(target, tasks, gpus)
            rows.append(Row(len(rows), target.key, item, tasks, launch.backend, gpus, processes, questions,
                            gpu_hours, wall_hours, run_dir, tuple(command)))
    return rows


def mixed_backend_families(targets: Sequence[Target]) -> dict[str, list[str]]:
    """Scaling families whose selected models run on different wrappers (prompts not byte-identical); the
    CAIT models are no family, they are compared across architectures anyway."""
    backends: dict[str, list[str]] = {}
    for target in (t for t in targets if t.family != CAIT_FAMILY):
        family_backends = backends.setdefault(target.family, [])
        if target.launch.backend not in family_backends:
            family_backends.append(target.launch.backend)
    return {family: names for family, names in backends.items() if len(names) > 1}


def format_plan(rows: Sequence[Row], targets: Sequence[Target], gpus_per_node: int) -> str:
    models = list(dict.fromkeys(row.model for row in rows))
    items = list(dict.fromkeys(row.item for row in rows))
    lines = [f"Launch plan: {len(models)} models x {len(items)} task runs = {len(rows)} runs "
             f"(nodes of {gpus_per_node} GPUs)", formula_text(), ""]
    header = ("row", "model", "task", "backend", "GPUs", "layout", "questions", "GPU-h", "wall-h")
    table = [header] + [(str(r.index), r.model, r.item, r.backend, str(r.gpus), r.layout, str(r.questions),
                         f"{r.gpu_hours:.2f}", f"{r.wall_hours:.2f}") for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    total_gpu = sum(r.gpu_hours for r in rows)
    total_wall = sum(r.wall_hours for r in rows)
    lines += ["", f"Total: {len(rows)} runs, {total_gpu:.1f} GPU-hours (estimate), {total_wall:.1f} h wall-clock "
                  "one run after another on one node"]
    for family, backends in mixed_backend_families(targets).items():
        lines.append(f"NOTE: family {family} mixes backends ({', '.join(backends)}): the wrappers do not prompt "
                     "identically (system prompt, chat template, image preprocessing); check parity on a subset "
                     "before reading flips across backends (model_configs/models.yaml).")
    lines += ["", "Commands (each writes OUT/<model>/<task or group>/):"]
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
