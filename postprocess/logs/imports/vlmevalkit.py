"""VLMEvalKit prediction files (`<model>_<dataset>.xlsx` / `.tsv` / `.csv`, as VLMEvalKit writes them into
`<work_dir>/<model>/`), mapped to a per-question table (table.py) by `vlmevalkit_table`: VLMEVALKIT_DATASETS for
the paper's benchmarks; another dataset's subtask column is named by the user.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lmms_eval_tasks.question import LETTERS, MCQ, NUMERIC, OPEN, YES_NO
from postprocess.logs.imports.table import ImportFormatError, text_column

OTHER_SPLIT = "test"  # the split of a benchmark that is not one of ours, when the table gives none

# VLMEvalKit dataset -> (benchmark, split, the column holding the paper's subtask label). VLMEvalKit lower-cases
# every column name but the option letters before scoring (its image_mcq.py), so columns are matched ignoring case.
VLMEVALKIT_DATASETS = {
    "MMT-Bench_VAL": ("MMT-Bench", "val", "l2-category"),
    "MMMU_DEV_VAL": ("MMMU", "dev_val", "subfield"),
    "MMMU_TEST": ("MMMU", "test", "subfield"),
    "ScienceQA_TEST": ("ScienceQA", "test", "category"),
    "MME": ("MME", "test", "category"),
    "AI2D_TEST": ("AI2D", "test", "category"),
    "BLINK": ("BLINK", "val", "category"),
    "MMBench_DEV_EN": ("MMBench", "dev_en", "l2-category"),
}
VLMEVALKIT_COLUMNS = ("index", "question", "answer", "prediction")


# ---------------------------------------------------------------------------------------------- VLMEvalKit
def column_named(frame: pd.DataFrame, name: str) -> str | None:
    return next((column for column in frame.columns if str(column).lower() == name.lower()), None)


def split_vlmevalkit_name(path: Path, dataset: str | None = None) -> tuple[str, str]:
    """(model, dataset) of a VLMEvalKit prediction file `<model>_<dataset>.<ext>`: the dataset given, else the
    model as the folder VLMEvalKit writes it into, else the longest VLMEVALKIT_DATASETS name the stem ends with."""
    stem = path.stem
    if dataset is not None:
        if not stem.endswith(f"_{dataset}") or stem == f"_{dataset}":
            raise ImportFormatError(f"{path}: the file name does not end in _{dataset} (<model>_<dataset>{path.suffix})")
        return stem[: -len(dataset) - 1], dataset
    folder = path.parent.name
    if folder and stem.startswith(f"{folder}_") and len(stem) > len(folder) + 1:
        return folder, stem[len(folder) + 1:]
    known = [name for name in VLMEVALKIT_DATASETS if stem.endswith(f"_{name}") and len(stem) > len(name) + 1]
    if not known:
        raise ImportFormatError(f"{path}: cannot tell the model from the dataset in {stem!r}: name the dataset "
                                f"(--vlmevalkit-dataset) or keep the file in the folder named after the model, as "
                                f"VLMEvalKit writes it")
    name = max(known, key=len)
    return stem[: -len(name) - 1], name


def vlmevalkit_table(frame: pd.DataFrame, path: Path, model: str, dataset: str,
                     subtask_column: str | None = None) -> pd.DataFrame:
    """A VLMEvalKit prediction frame as a per-question table: benchmark, split and subtask column from
    VLMEVALKIT_DATASETS (a dataset not there: benchmark = the dataset's name, split "test", the subtask column
    the user names); question_id = `index`; options = the non-empty letter columns A, B, ... in order; gold =
    `answer`; response = `prediction` (the model's raw text). Kind: mcq with options; without, yes_no when every
    answer is Yes or No (MME), numeric when an `answer_type` column says integer or float, else open."""
    if dataset in VLMEVALKIT_DATASETS:
        benchmark, split, paper_column = VLMEVALKIT_DATASETS[dataset]
        subtask_column = subtask_column or paper_column
    else:
        if subtask_column is None:
            raise ImportFormatError(f"{path}: VLMEvalKit dataset {dataset!r} is not one of the paper's "
                                    f"({', '.join(VLMEVALKIT_DATASETS)}): name its subtask column "
                                    f"(--vlmevalkit-subtask-column, e.g. category)")
        benchmark, split = dataset, OTHER_SPLIT
    columns = {name: column_named(frame, name) for name in (*VLMEVALKIT_COLUMNS, subtask_column)}
    missing = [name for name, column in columns.items() if column is None]
    if missing:
        raise ImportFormatError(f"{path}: lacks the column(s) {missing} of a VLMEvalKit {dataset} prediction file "
                                f"(columns: {', '.join(map(str, frame.columns))})")
    letters = [letter for letter in LETTERS if letter in frame.columns]
    options = [[option for option in row if option is not None]
               for row in zip(*(text_column(frame, letter) for letter in letters))] if letters else [[]] * len(frame)
    answers = text_column(frame, columns["answer"])
    kind = np.full(len(frame), MCQ, dtype=object)
    if not letters:
        if all(a in ("Yes", "No") for a in answers if a is not None):
            kind[:] = YES_NO
        else:
            answer_types = text_column(frame, "answer_type")
            kind = np.where(np.isin(answer_types, ["integer", "float"]), NUMERIC, OPEN).astype(object)
    table = pd.DataFrame({
        "model": model, "benchmark": benchmark, "split": split, "subtask": text_column(frame, columns[subtask_column]),
        "question_id": text_column(frame, columns["index"]), "gold": answers,
        "response": text_column(frame, columns["prediction"]), "options": options, "kind": kind,
    })
    for name in ("answer_type", "precision"):
        if name in frame:
            table[name] = text_column(frame, name)
    return table

