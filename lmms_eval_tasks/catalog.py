"""The task names, derived from the benchmark descriptions (benchmarks.py): one base task per split, and its
variants.

Naming pattern: `invscale_<benchmark>_<split>` for the base task and `<base task>_<variant>` for a variant;
BLINK's base task is `blink_val` (its exact name was asked for and lmms-eval has no task of that name),
CAIT's is `cait`. Groups: `invscale` runs the nine paper splits' base tasks, `invscale_<variant>` their
tasks of one variant; CAIT's five tasks are named one by one. No name here may equal a built-in lmms-eval
task, group or tag: a built-in silently wins a collision (tests/lmms_eval_tasks/test_task_catalog.py checks against the
installed index).
"""

from __future__ import annotations

from typing import NamedTuple

from .benchmarks import BENCHMARKS, BenchmarkSpec

GROUP = "invscale"
PAPER_VARIANTS = ("direct", "cot", "identity", "reverse", "shift1", "shift2", "shift3")
CAIT_VARIANTS = ("direct", "swap", "cot", "structured", "describe")
UNORDERED_VARIANTS = ("direct", "cot", "identity")  # a benchmark without options to reorder (MME: yes/no)
# The option-order controls of Appendix J (Table 43): the unchanged order re-run, then the reorderings.
ORDERING_VARIANTS = ("identity", "reverse", "shift1", "shift2", "shift3")


class TaskEntry(NamedTuple):
    name: str
    spec: BenchmarkSpec
    variant: str

    @property
    def base(self) -> str:
        return self.spec.task


def variants_of(spec: BenchmarkSpec) -> tuple[str, ...]:
    if spec.prompt_style == "cait":
        return CAIT_VARIANTS
    return PAPER_VARIANTS if spec.reorderable else UNORDERED_VARIANTS


def task_name(base: str, variant: str) -> str:
    return base if variant == "direct" else f"{base}_{variant}"


def group_name(variant: str) -> str:
    return GROUP if variant == "direct" else f"{GROUP}_{variant}"


BASE_TASKS: tuple[str, ...] = tuple(spec.task for spec in BENCHMARKS)
TASKS: dict[str, TaskEntry] = {
    task_name(spec.task, variant): TaskEntry(task_name(spec.task, variant), spec, variant)
    for spec in BENCHMARKS
    for variant in variants_of(spec)
}
GROUPS: dict[str, list[str]] = {
    group_name(variant): [t.name for t in TASKS.values() if t.variant == variant and t.spec.prompt_style != "cait"]
    for variant in PAPER_VARIANTS
}
