"""What a logged answer's model was shown: its question and image(s), reloaded from the task's data by
question_id, through the task layer (lmms_eval_tasks) rather than a copy of it. Used by the judges
that read logged answers: the error taxonomy (postprocess/inverse_scaling/taxonomy/) and answer
adjudication (postprocess/adjudication/).

The logs keep each answer but not the question's text or images. For each benchmark split the data is
the base task's dataset block: read from a task folder's `<base task>.yaml` (the package's own
tasks/ by default, i.e. the hub datasets; or a folder written by `python -m lmms_eval_tasks export
--data ...`), or given as `--data TASK=PATH` the way `export` takes it (install.dataset_block). The
rows become canonical questions with the task's own process_docs steps (hooks.questions_for: the
adapter, the finalizer, the image filter), the record's variant is applied (apply_variant: the options
in the order the models saw them), and the images are what lmms-eval would pass the model
(hooks.doc_to_visual), as PNG bytes. A question_id the data lacks is an error naming the split and the
data source: the logs were made from other data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lmms_eval_tasks.benchmarks import BY_KEY, BenchmarkSpec
from lmms_eval_tasks.install import DATASET_KEYS, TASKS_DIR, dataset_block
from lmms_eval_tasks.question import Question


class QuestionSourceError(ValueError):
    """A task's data that cannot be read, or lacks a logged question; the message names both."""


@dataclass(frozen=True)
class ShownQuestion:
    question: Question  # as the variant showed it (options in the shown order, gold remapped)
    images: tuple[bytes, ...]  # PNG bytes (or reload_questions' `encode` of them), in the order the model got them
    image_problems: tuple[str, ...] = ()  # with partial_images: why each image not in `images` could not be read


def _yaml_block(tasks_dir: Path, base: str) -> dict:
    path = Path(tasks_dir) / f"{base}.yaml"
    if not path.is_file():
        raise QuestionSourceError(f"{path}: no such task file (is {tasks_dir} a task folder?)")
    spec = yaml.safe_load(path.read_text(encoding="utf-8").replace("!function ", ""))
    block = {key: spec[key] for key in DATASET_KEYS if key in spec}
    if "dataset_path" not in block or "test_split" not in block:
        raise QuestionSourceError(f"{path}: no dataset_path / test_split")
    files = (block.get("dataset_kwargs") or {}).get("data_files")
    if isinstance(files, dict):  # lmms-eval resolves relative data files against the YAML's folder
        block["dataset_kwargs"]["data_files"] = {
            split: [str(path.parent / f) if "://" not in f and not Path(f).is_absolute() else f
                    for f in ([paths] if isinstance(paths, str) else paths)]
            for split, paths in files.items()}
    return block


def dataset_source(spec: BenchmarkSpec, tasks_dir: Path | None = None, data: Mapping[str, str] | None = None) -> dict:
    """The dataset keys lmms-eval would load the split's base task from."""
    if data and spec.task in data:
        return dataset_block(spec.task, data[spec.task])
    return _yaml_block(Path(tasks_dir or TASKS_DIR), spec.task)


def load_split(block: dict, where: str):
    """The task's test split as a datasets.Dataset, loaded the way lmms-eval's task loader does."""
    import datasets

    kwargs = dict(block.get("dataset_kwargs") or {})
    try:
        if kwargs.pop("load_from_disk", False):
            return datasets.load_from_disk(block["dataset_path"])[block["test_split"]]
        return datasets.load_dataset(block["dataset_path"], block.get("dataset_name"), split=block["test_split"],
                                     **kwargs)
    except Exception as error:  # noqa: BLE001 (datasets raises many kinds: offline hub, missing file, bad split)
        raise QuestionSourceError(f"{where}: cannot load {block['dataset_path']} split {block['test_split']}: "
                                  f"{type(error).__name__}: {str(error)[:300]}; what the judges are shown is read from "
                                  "the task's dataset: give --tasks-dir DIR (written by `invscale tasks export --data "
                                  "TASK=PATH`) or --data TASK=PATH for local data, or run where the hub is reachable") from None


def reload_questions(wanted: Iterable[tuple[str, str, str, str]], tasks_dir: Path | None = None,
                     data: Mapping[str, str] | None = None,
                     encode: Callable[[Any], Any] | None = None,
                     partial_images: bool = False) -> dict[tuple[str, str, str, str], ShownQuestion]:
    """(benchmark, split, question_id, variant) -> the question as shown, with its images: PNG bytes, or what
    `encode` makes of each image doc_to_visual gives (the explorer takes the PIL images as they are: a PNG of a
    1024 x 1024 photo costs about 0.8 s to encode). An image that cannot be read is a DocError (a judge must see
    every image), or with `partial_images` left out and said in image_problems (the explorer shows the rest)."""
    import datasets

    from lmms_eval_tasks.hooks import QUESTION_COLUMN, doc_to_visual, questions_for, visuals_and_problems
    from lmms_eval_tasks.variants import VARIANTS, apply_variant
    from invscale.judges.client import image_bytes

    by_split: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for benchmark, split, question_id, variant in wanted:
        by_split.setdefault((benchmark, split), set()).add((question_id, variant))
    shown = {}
    for (benchmark, split), keys in by_split.items():
        spec = BY_KEY.get(f"{benchmark}:{split}")
        if spec is None:
            raise QuestionSourceError(f"no task holds {benchmark} {split}")
        block = dataset_source(spec, tasks_dir, data)
        where = f"{benchmark} {split} (task {spec.task}, data {block['dataset_path']})"
        dataset = load_split(block, where)
        positions, questions = questions_for(dataset, spec)
        index = {question.question_id: (position, question) for position, question in zip(positions, questions)}
        absent = sorted(question_id for question_id, _ in keys if question_id not in index)
        if absent:
            raise QuestionSourceError(f"{where}: no question {absent[0]!r} ({len(absent)} of the wanted questions "
                                      "are missing): were the logs made from other data?")
        # Images decoded by load_image, not by datasets: a file that cannot be read is then said for its question.
        dataset = dataset.cast(datasets.Features({name: datasets.Image(decode=False) if isinstance(
            feature, datasets.Image) else feature for name, feature in dataset.features.items()}))
        for question_id, variant in sorted(keys):
            if variant not in VARIANTS:
                raise QuestionSourceError(f"{where}: question {question_id!r} has unknown variant {variant!r}")
            position, question = index[question_id]
            question = apply_variant(question, VARIANTS[variant])
            doc = {**dataset[position], QUESTION_COLUMN: question.to_json()}
            images, problems = visuals_and_problems(doc) if partial_images else (doc_to_visual(doc), [])
            shown[(benchmark, split, question_id, variant)] = ShownQuestion(
                question, tuple((encode or image_bytes)(image) for image in images), tuple(problems))
    return shown
