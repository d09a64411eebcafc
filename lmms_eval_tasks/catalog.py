"""The task names: one base task per paper split, and its variants.

Naming pattern: `invscale_<benchmark>_<split>` for the base task and `<base task>_<variant>` for a
variant; BLINK's base task is `blink_val` (its exact name was asked for and lmms-eval has no task of
that name), CAIT's is `cait`. Groups: `invscale` runs the nine paper splits' base tasks,
`invscale_<variant>` their tasks of one variant; CAIT's five tasks are named one by one. No name here may equal a built-in lmms-eval task, group or tag: a built-in silently wins a
collision (tests/test_task_catalog.py checks against the installed index).
"""

from __future__ import annotations

from typing import NamedTuple


GROUP = "invscale"


class TaskEntry(NamedTuple):
    name: str
    base: str
    benchmark_key: str  # key of adapters.BENCHMARKS
    variant: str


BASE_TASKS: dict[str, str] = {
    "invscale_mmtbench_val": "MMT-Bench:val",
    "invscale_mmmu_dev_val": "MMMU:dev_val",
    "invscale_mmmu_test": "MMMU:test",
    "invscale_scienceqa_img_test": "ScienceQA:test",
    "invscale_mme_test": "MME:test",
    "invscale_ai2d_test": "AI2D:test",
    "invscale_mathvista_testmini": "MathVista:testmini",
    "blink_val": "BLINK:val",
    "invscale_mmbench_dev_en": "MMBench:dev_en",
    "cait": "CAIT:test",
}
PAPER_VARIANTS = ("direct", "cot", "reverse", "shift1", "shift2", "shift3")
CAIT_VARIANTS = ("direct", "swap", "cot", "structured", "describe")
# MME is yes/no: it has no options to reorder.
VARIANTS_OF: dict[str, tuple[str, ...]] = {
    base: CAIT_VARIANTS if key.startswith("CAIT:") else ("direct", "cot") if key.startswith("MME:") else PAPER_VARIANTS
    for base, key in BASE_TASKS.items()
}


def task_name(base: str, variant: str) -> str:
    return base if variant == "direct" else f"{base}_{variant}"


def group_name(variant: str) -> str:
    return GROUP if variant == "direct" else f"{GROUP}_{variant}"


TASKS: dict[str, TaskEntry] = {
    task_name(base, variant): TaskEntry(task_name(base, variant), base, key, variant)
    for base, key in BASE_TASKS.items()
    for variant in VARIANTS_OF[base]
}
GROUPS: dict[str, list[str]] = {
    group_name(variant): [t.name for t in TASKS.values() if t.variant == variant and t.base != "cait"]
    for variant in PAPER_VARIANTS
}
