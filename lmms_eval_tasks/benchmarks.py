"""Each benchmark split described once: its task, its paper facts, its data and how its prompt is built.

Everything else is derived from BENCHMARKS: the task catalog (catalog.py: names, variants, groups), the
record contract's benchmark and split lists (record.py), the generated task YAMLs and their process_docs
hooks (generate.py), the launch plan's question counts (launch/plan.py). The adapter named here
(adapters.py) turns one dataset row into the canonical Question; the dataset fields each benchmark
uses are the ones its adapter reads.

This module is plain data (no datasets, no PIL): postprocess imports it through record.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BenchmarkSpec:
    task: str  # the base task's name; a variant appends `_<variant>` (catalog.py)
    name: str  # the record's `benchmark`
    split: str  # the record's `split`
    paper_n: int  # questions in the paper (inverse-scaling Table 1; CAIT: 400 images)
    subtask_field: str  # the dataset field holding the paper's subtask label (read by the adapter)
    prompt_style: str  # how prompts.build_prompt lays out its multiple-choice questions (prompts.py)
    reorderable: bool  # options may be reordered: the reverse / shift (CAIT: swap) variants exist
    adapter: str  # the adapters.py function: (row, position, spec) -> Question
    image_columns: tuple[str, ...]
    dataset: dict[str, Any]  # the task YAML's dataset keys (the hub default; `export --data` replaces them)
    dataset_note: str = ""  # a comment above the dataset keys in the YAML
    require_image: bool = False  # keep only the rows that have an image (ScienceQA-IMG)
    finalize: str | None = None  # an adapters.py function run over all questions once (ids, answer balance)
    columns: tuple[str, ...] = field(default=())  # columns a local copy must have (install.py checks them)

    @property
    def key(self) -> str:
        return f"{self.name}:{self.split}"


def _images(count: int) -> tuple[str, ...]:
    return tuple(f"image_{n}" for n in range(1, count + 1))


_MMMU = dict(subtask_field="subfield", prompt_style="lettered", reorderable=True, adapter="mmmu",
             image_columns=_images(7), columns=("id", "question", "options", "answer", "question_type", "subfield"))

BENCHMARKS: tuple[BenchmarkSpec, ...] = (
    BenchmarkSpec("invscale_mmtbench_val", "MMT-Bench", "val", 3127, "l2-category", "lettered", True, "mmt_bench",
                  ("image",), {"dataset_path": "lmms-lab-encoder/MMT-Benchmark", "test_split": "val"},
                  columns=("index", "question", "A", "B", "answer", "l2-category", "image")),
    BenchmarkSpec("invscale_mmmu_dev_val", "MMMU", "dev_val", 1050, **_MMMU,
                  dataset={"dataset_path": "parquet", "dataset_kwargs": {"data_files": {"dev_val": [
                      "hf://datasets/lmms-lab-encoder/MMMU/data/dev-*.parquet",
                      "hf://datasets/lmms-lab-encoder/MMMU/data/validation-*.parquet"]}}, "test_split": "dev_val"},
                  dataset_note="dev (150) + validation (900) as one split"),
    BenchmarkSpec("invscale_mmmu_test", "MMMU", "test", 10500, **_MMMU,
                  dataset={"dataset_path": "lmms-lab-encoder/MMMU", "test_split": "test"},
                  dataset_note="test answers are not public: `correct` is null unless the data you point at "
                               "carries answers"),
    BenchmarkSpec("invscale_scienceqa_img_test", "ScienceQA", "test", 2017, "category", "lettered", True, "scienceqa",
                  ("image",), {"dataset_path": "lmms-lab-encoder/ScienceQA", "dataset_name": "ScienceQA-IMG",
                               "test_split": "test"},
                  dataset_note="the IMG config still holds text-only questions; process_docs keeps the 2,017 with "
                               "an image",
                  require_image=True, columns=("question", "choices", "answer", "category", "image")),
    BenchmarkSpec("invscale_mme_test", "MME", "test", 2374, "category", "as_is", False, "mme", ("image",),
                  {"dataset_path": "lmms-lab-encoder/MME", "test_split": "test"}, finalize="mme_question_ids",
                  columns=("question_id", "question", "answer", "category", "image")),
    BenchmarkSpec("invscale_ai2d_test", "AI2D", "test", 3088, "category", "vlmevalkit", True, "ai2d", ("image",),
                  {"dataset_path": "csv", "dataset_kwargs": {"data_files": {
                      "test": "https://opencompass.openxlab.space/utils/VLMEval/AI2D_TEST.tsv"}, "sep": "\t"},
                   "test_split": "test"},
                  dataset_note="VLMEvalKit's AI2D_TEST (masked diagrams, with `category`); the hub copies lack "
                               "category and id",
                  columns=("index", "question", "A", "B", "answer", "category", "image")),
    BenchmarkSpec("invscale_mathvista_testmini", "MathVista", "testmini", 1000, "metadata.task", "embedded_choices",
                  True, "mathvista", ("decoded_image",), {"dataset_path": "AI4Math/MathVista", "test_split": "testmini"},
                  columns=("pid", "query", "choices", "answer", "answer_type", "question_type", "metadata",
                           "decoded_image")),
    BenchmarkSpec("blink_val", "BLINK", "val", 1901, "sub_task", "embedded_choices", True, "blink", _images(4),
                  {"dataset_path": "parquet", "dataset_kwargs": {"data_files": {
                      "val": "hf://datasets/BLINK-Benchmark/BLINK/*/val-*.parquet"}}, "test_split": "val"},
                  dataset_note="the 14 sub-task configs' val splits as one split",
                  columns=("idx", "prompt", "choices", "answer", "image_1")),
    BenchmarkSpec("invscale_mmbench_dev_en", "MMBench", "dev_en", 4329, "L2-category", "lettered", True, "mmbench",
                  ("image",), {"dataset_path": "lmms-lab-encoder/MMBench", "dataset_name": "en", "test_split": "dev"},
                  columns=("index", "question", "A", "B", "answer", "L2-category", "image")),
    BenchmarkSpec("cait", "CAIT", "test", 400, "category", "cait", True, "cait", ("image",),
                  {"dataset_path": "CAIT-benchmark/CAIT", "test_split": "test"},
                  dataset_note="No public release of CAIT exists: this hub id is a placeholder. Point the task at "
                               "your copy with `python -m lmms_eval_tasks cait-prepare FOLDER OUT` and "
                               "`export/install --data cait=OUT`.",
                  finalize="balance_answer_positions",
                  columns=("id", "image", "category", "characteristic", "verb", "common_text", "uncommon_text",
                           "gt_prompt", "style")),
)
BY_TASK: dict[str, BenchmarkSpec] = {spec.task: spec for spec in BENCHMARKS}
BY_KEY: dict[str, BenchmarkSpec] = {spec.key: spec for spec in BENCHMARKS}  # "MMMU:dev_val" -> its spec

# The record contract's labels, in the paper's Table 1 order.
BENCHMARK_NAMES: tuple[str, ...] = tuple(dict.fromkeys(spec.name for spec in BENCHMARKS))
SPLIT_NAMES: tuple[str, ...] = tuple(dict.fromkeys(spec.split for spec in BENCHMARKS))
