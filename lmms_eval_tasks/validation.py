"""`validate`: a benchmark's local data checked row by row before any model loads, as `cait-validate` checks
a CAIT folder.

`export` checks only the columns of a file's header. Bad values (a gold answer that is not among the
options, a missing option, an image that does not decode) would otherwise surface inside lmms-eval, after
the model has loaded, as a single error about the first bad row. Here every row goes through the task's
adapter (adapters.py: the code lmms-eval's process_docs runs), every image the question shows is decoded,
question ids are checked for duplicates, and every bad row is listed with its file, row and field.

Each bad row is one line, `FILE row N (question ID): what is wrong`: rows are numbered from 1 within their file
(a JSON Lines file's line, a CSV's record after the header, a parquet file's row), the only numbering on the
line; a save_to_disk folder's rows are numbered within its split. Only local data can be checked: a task that
reads a hub dataset is listed as not checked, never as valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import adapters
from .benchmarks import BY_TASK
from .catalog import TASKS
from .install import FILE_BUILDERS, dataset_block, yaml_without_tags
from .question import DocError, Question, load_image

MAX_REPORTED = 20  # bad rows listed in the summary; the rest are counted


@dataclass
class DataCheck:
    """One base task's local data: rows read, questions made, and every problem in file order."""
    task: str
    source: str
    rows: int = 0
    questions: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self, limit: int = MAX_REPORTED) -> str:
        if not self.problems:
            return f"{self.task}: {self.questions} valid questions in {self.rows} rows of {self.source}"
        lines = [f"{self.task}: {len(self.problems)} bad row(s) among {self.rows} rows of {self.source}:" if self.rows
                 else f"{self.task}: no rows in {self.source}:"]
        lines += [f"  {problem}" for problem in self.problems[:limit]]
        if len(self.problems) > limit:
            lines.append(f"  ... and {len(self.problems) - limit} more (raise --max-errors to list them)")
        return "\n".join(lines)


def _file_list(data_files, split: str) -> list[str]:
    """A dataset block's files of `split` (data_files holds a path or a list of paths per split)."""
    files = (data_files or {}).get(split, []) if isinstance(data_files, Mapping) else data_files or []
    return [files] if isinstance(files, str) else list(files)


def _parts(block: Mapping) -> Iterator[tuple[str, object]]:
    """(file label, datasets.Dataset) for each file of a dataset block, or the saved split of a folder, in the
    order lmms-eval concatenates them; images left undecoded (they are decoded one by one below)."""
    import datasets
    import pyarrow.parquet

    split = block["test_split"]
    kwargs = dict(block.get("dataset_kwargs") or {})
    if kwargs.pop("load_from_disk", False):
        yield f"{block['dataset_path']} split {split}", datasets.load_from_disk(block["dataset_path"])[split]
        return
    files = _file_list(kwargs.pop("data_files"), split)
    for path in files:
        if str(path).endswith(".parquet") and pyarrow.parquet.ParquetFile(path).metadata.num_rows == 0:
            yield path, datasets.Dataset(pyarrow.parquet.read_table(path))  # datasets' builder fails on no rows
            continue
        dataset = datasets.load_dataset(block["dataset_path"], data_files={split: [path]}, split=split, **kwargs)
        yield path, dataset


def _undecoded(dataset):
    import datasets

    for name, feature in dataset.features.items():
        if isinstance(feature, datasets.Image):
            dataset = dataset.cast_column(name, datasets.Image(decode=False))
    return dataset


def _has_value(value) -> bool:
    return value is not None and value != "" and value != {"bytes": None, "path": None}


def _image_problems(question: Question, row: Mapping) -> list[str]:
    """What doc_to_visual would fail on: an image the question needs that is empty, or one that does not decode."""
    problems = []
    for name in question.image_fields:
        value = row.get(name)
        if not _has_value(value):
            if not question.images_optional:
                problems.append(f"field '{name}': empty, but the question shows this image")
            continue
        try:
            load_image(value, f"field '{name}'")
        except DocError as error:
            problems.append(str(error))
        except Exception as error:  # PIL raises OSError, SyntaxError, ValueError ... on a broken image
            problems.append(f"field '{name}': not a decodable image ({type(error).__name__}: {error})")
    return problems


ID_COLUMNS = ("index", "id", "question_id", "pid", "idx")  # the adapters' question-id columns (ScienceQA has none)


def _row_id(row: Mapping) -> str:
    found = next((row[name] for name in ID_COLUMNS if _has_value(row.get(name))), None)
    return "no question id" if found is None else f"question {str(found)!r}"


def _without_adapter_place(message: str, benchmark: str) -> str:
    """An adapter's DocError without its own place (`MMBench row 2: `, the 0-based position lmms-eval's runs
    name): the line already says the file's row and the question."""
    place, separator, detail = message.partition(": ")
    return detail if separator and place.startswith(f"{benchmark} ") else message


def check_block(task: str, block: Mapping, source: str) -> DataCheck:
    """Every row of the data a dataset block points at, through `task`'s adapter (see the module docstring)."""
    spec = BY_TASK[task]
    check = DataCheck(task, source)
    adapter = getattr(adapters, spec.adapter)
    made: list[tuple[str, Question]] = []
    position = 0
    for label, dataset in _parts(block):
        if len(dataset) == 0:
            check.problems.append(f"{label}: the file has no rows")
        for number, row in enumerate(_undecoded(dataset), 1):
            check.rows += 1
            where = f"{label} row {number}"
            position += 1
            if spec.require_image and not _has_value(row.get(spec.image_columns[0])):
                continue  # as the task does: a row without an image is not one of its questions
            try:
                question = adapter(row, position - 1, spec)
            except DocError as error:
                check.problems.append(f"{where} ({_row_id(row)}): {_without_adapter_place(str(error), spec.name)}")
                continue
            problems = _image_problems(question, row)
            if problems:
                check.problems.append(f"{where} (question {question.question_id!r}): " + "; ".join(problems))
                continue
            made.append((where, question))
    if spec.finalize:
        try:
            getattr(adapters, spec.finalize)([question for _, question in made])
        except DocError as error:
            check.problems.append(f"{source}: {error}")
    first: dict[str, str] = {}
    for where, question in made:
        if question.question_id in first:
            check.problems.append(f"{where} (question {question.question_id!r}): the question id repeats "
                                  f"{first[question.question_id]}")
        first.setdefault(question.question_id, where)
    check.questions = len(made)
    return check


def check_data(task: str, source: str) -> DataCheck:
    """A `--data TASK=PATH` override checked: columns (OverrideError, as export), then every row."""
    return check_block(task, dataset_block(task, source), source)


def local_block(task_file: Path) -> dict | None:
    """The dataset keys of a task YAML when they point at local files or a save_to_disk folder, else None."""
    config = yaml.safe_load(yaml_without_tags(task_file.read_text(encoding="utf-8"))) or {}
    kwargs = config.get("dataset_kwargs") or {}
    files = _file_list(kwargs.get("data_files"), config.get("test_split"))
    on_hub = any("://" in str(path) for path in files)  # hf://datasets/... (MMMU's two splits as one)
    if kwargs.get("load_from_disk") or (config.get("dataset_path") in {b for b, _ in FILE_BUILDERS.values()}
                                         and files and not on_hub):
        return {key: config[key] for key in ("dataset_path", "dataset_kwargs", "test_split") if key in config}
    return None


def check_task_folder_data(tasks_dir: Path, tasks: Iterable[str]) -> tuple[list[DataCheck], list[str]]:
    """The local data of the base tasks behind `tasks` (task names of this catalog; other names are not
    ours and are left alone) in a task folder: (checks, base tasks that read a hub dataset, not checked)."""
    bases = list(dict.fromkeys(TASKS[task].base for task in tasks if task in TASKS))
    checks, hub = [], []
    for base in bases:
        task_file = Path(tasks_dir) / f"{base}.yaml"
        if not task_file.is_file():
            checks.append(DataCheck(base, str(task_file), problems=[f"{task_file}: no such task file (is {tasks_dir} "
                                                                    "a folder written by `invscale tasks export`?)"]))
            continue
        block = local_block(task_file)
        if block is None:
            hub.append(base)
            continue
        kwargs = block.get("dataset_kwargs") or {}
        source = (block["dataset_path"] if kwargs.get("load_from_disk")
                  else ",".join(_file_list(kwargs["data_files"], block["test_split"])))
        checks.append(check_block(base, block, source))
    return checks, hub
