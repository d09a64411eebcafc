"""VLMEvalKit prediction files, mapped to a per-question table (table.py) by `vlmevalkit_table`.

Layouts. VLMEvalKit writes `<work_dir>/<model>/<model>_<dataset>.xlsx` (older versions) or
`<work_dir>/<model>/T<date>_G<commit>/<model>_<dataset>.xlsx` (current): the model is the folder named after it,
either one up or two. Several run folders of one model and dataset are several runs: the newest (the date in
its T folder name) is imported and the others are reported (kind `duplicate_run`), as ingestion does for logs.

Scoring files. Beside its predictions VLMEvalKit writes its own scoring: a judged copy of the prediction file
(`<model>_<dataset>_<judge>.xlsx`: `_openai_result`, `_gpt-4o-mini`, ...) holding its extracted answer (`res`,
or `prediction` overwritten) and often `hit`. Given with its prediction file it is read as VLMEvalKit's reading
of each answer, never as a dataset of its own; given alone it is refused (the raw responses are not in it).

Datasets. VLMEVALKIT_DATASETS for the paper's benchmarks (and the column with the paper's subtask label);
another dataset's subtask column is named by the user. Multiple choice without letter columns takes its
options from the dataset's own fields (OPTIONS_IN_FIELDS: MathVista's `choices`, LogicVista's options written
in the question); a file whose answers are option letters but whose options cannot be found is refused, so a
multiple-choice question is never scored as open text.
"""

from __future__ import annotations

import ast
import re
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
    "MathVista_MINI": ("MathVista", "testmini", "task"),
    "BLINK": ("BLINK", "val", "category"),
    "MMBench_DEV_EN": ("MMBench", "dev_en", "l2-category"),
}
VLMEVALKIT_COLUMNS = ("index", "question", "answer", "prediction")
RUN_FOLDER = re.compile(r"^T(\d{8})_G[0-9a-f]+$")  # the current layout's run folder: T<date>_G<commit>
HARNESS_COLUMNS = ("harness_prediction", "harness_correct")  # VLMEvalKit's own reading, from its scoring file
# options written in a question: "(A) text (B) text", or only named: "Select from A, B, C, D, and E", "A-E"
_WRITTEN_OPTION = re.compile(r"\(([A-Z])\)\s*")
_LETTER_RANGE = re.compile(r"\bA\s*(?:-|to)\s*([B-Z])\b")
_LETTER_LIST = re.compile(r"\bA(?:\s*,\s*[B-Z])*\s*,?\s*(?:and|or)\s+([B-Z])\b")


# ---------------------------------------------------------------------------------------------- VLMEvalKit
def column_named(frame: pd.DataFrame, name: str) -> str | None:
    return next((column for column in frame.columns if str(column).lower() == name.lower()), None)


def model_folder(path: Path) -> str:
    """The folder named after the model: the file's, or the one above its T<date>_G<commit> run folder."""
    parent = path.parent
    return (parent.parent if RUN_FOLDER.match(parent.name) else parent).name


def run_date(path: Path) -> str | None:
    """The date of the file's T<date>_G<commit> run folder (current layout), None in the old layout."""
    found = RUN_FOLDER.match(path.parent.name)
    return found.group(1) if found else None


def split_vlmevalkit_name(path: Path, dataset: str | None = None) -> tuple[str, str]:
    """(model, dataset) of a VLMEvalKit prediction file `<model>_<dataset>.<ext>`: the dataset given, else the
    model as the folder VLMEvalKit writes it into (either layout), else the longest VLMEVALKIT_DATASETS name the
    stem ends with."""
    stem = path.stem
    if dataset is not None:
        if not stem.endswith(f"_{dataset}") or stem == f"_{dataset}":
            raise ImportFormatError(f"{path}: the file name does not end in _{dataset} (<model>_<dataset>{path.suffix})")
        return stem[: -len(dataset) - 1], dataset
    folder = model_folder(path)
    if folder and stem.startswith(f"{folder}_") and len(stem) > len(folder) + 1:
        return folder, stem[len(folder) + 1:]
    known = [name for name in VLMEVALKIT_DATASETS if stem.endswith(f"_{name}") and len(stem) > len(name) + 1]
    if not known:
        raise ImportFormatError(f"{path}: cannot tell the model from the dataset in {stem!r}: name the dataset "
                                f"(--vlmevalkit-dataset) or keep the file where VLMEvalKit writes it, in the folder "
                                f"named after the model (<model>/<model>_<dataset>{path.suffix}, or "
                                f"<model>/T<date>_G<commit>/<model>_<dataset>{path.suffix})")
    name = max(known, key=len)
    return stem[: -len(name) - 1], name


def is_scoring_file(frame: pd.DataFrame) -> bool:
    """VLMEvalKit's judged copy of a prediction file: it has the judge's `res` or the `hit` column."""
    return column_named(frame, "hit") is not None or column_named(frame, "res") is not None


def options_in_question(question: str | None) -> list[str] | None:
    """The options a question writes out, "(A) text (B) text ...", else the letters it names ("Select from A, B,
    C, D, and E", "A-E", "A to F", "(A, B, C, or D)": the options are in the image, each named by its letter); None: none."""
    if question is None:
        return None
    written = list(_WRITTEN_OPTION.finditer(question))
    if written and [m.group(1) for m in written] == list(LETTERS[:len(written)]):
        ends = [m.start() for m in written[1:]] + [len(question)]
        return [question[m.end():end].strip() for m, end in zip(written, ends)]
    span = _LETTER_RANGE.search(question) or _LETTER_LIST.search(question)
    return list(LETTERS[:LETTERS.index(span.group(1)) + 1]) if span else None


def _mathvista(frame: pd.DataFrame, answers: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """MathVista's options from `choices` (a Python list's text), its gold as the letter of the answer among them;
    free-form answers numeric when `answer_type` is integer, float or list (as our MathVista task reads them)."""
    question_types, choices = text_column(frame, "question_type"), text_column(frame, "choices")
    answer_types = text_column(frame, "answer_type")
    options, gold, kind = [], answers.copy(), np.full(len(frame), OPEN, dtype=object)
    for row, (question_type, listed, answer, answer_type) in enumerate(zip(question_types, choices, answers,
                                                                         answer_types)):
        if question_type == "multi_choice":
            try:
                texts = [str(choice) for choice in ast.literal_eval(listed)]
            except (ValueError, SyntaxError, TypeError):
                texts = []  # reported: a multiple-choice row without options
            options.append(texts)
            kind[row] = MCQ
            if answer in texts:
                gold[row] = LETTERS[texts.index(answer)]
        else:
            options.append([])
            kind[row] = NUMERIC if answer_type in ("integer", "float", "list") else OPEN
    return options, gold, kind


def _logicvista(frame: pd.DataFrame, answers: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """LogicVista's options as its question writes or names them; a row without them is multiple choice
    without options (reported), never open text."""
    options = [options_in_question(question) or [] for question in text_column(frame, column_named(frame, "question"))]
    return options, answers, np.full(len(frame), MCQ, dtype=object)


OPTIONS_IN_FIELDS = {"MathVista_MINI": _mathvista, "LogicVista": _logicvista}


def _letter_columns(frame: pd.DataFrame, answers: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    letters = [letter for letter in LETTERS if letter in frame.columns]
    options = [[option for option in row if option is not None]
               for row in zip(*(text_column(frame, letter) for letter in letters))]
    return options, answers, np.full(len(frame), MCQ, dtype=object)


def vlmevalkit_table(frame: pd.DataFrame, path: Path, model: str, dataset: str,
                     subtask_column: str | None = None, scoring: pd.DataFrame | None = None) -> pd.DataFrame:
    """A VLMEvalKit prediction frame as a per-question table: benchmark, split and subtask column from
    VLMEVALKIT_DATASETS (a dataset not there: benchmark = the dataset's name, split "test", the subtask column
    the user names); question_id = `index`; gold = `answer`; response = `prediction` (the model's raw text).
    Kind and options: mcq with the non-empty letter columns A, B, ... in order, or with the options of
    OPTIONS_IN_FIELDS; without either, yes_no when every answer is Yes or No (MME), numeric when an `answer_type`
    column says integer or float, open otherwise, and a file whose answers are all option letters is refused.
    `scoring`, VLMEvalKit's scoring file of these predictions, fills HARNESS_COLUMNS (harness_reading)."""
    if dataset in VLMEVALKIT_DATASETS:
        benchmark, split, subtask_column = VLMEVALKIT_DATASETS[dataset]  # the paper's subtask column
    else:
        if subtask_column is None:
            raise ImportFormatError(f"{path}: VLMEvalKit dataset {dataset!r} is not one of the paper's nine "
                                    f"({', '.join(VLMEVALKIT_DATASETS)}): name its subtask column "
                                    f"(--vlmevalkit-subtask-column, e.g. category)")
        benchmark, split = dataset, OTHER_SPLIT
    columns = {name: column_named(frame, name) for name in (*VLMEVALKIT_COLUMNS, subtask_column)}
    missing = [name for name, column in columns.items() if column is None]
    if missing:
        raise ImportFormatError(f"{path}: lacks the column(s) {missing} of a VLMEvalKit {dataset} prediction file "
                                f"(columns: {', '.join(map(str, frame.columns))})")
    answers = text_column(frame, columns["answer"])
    if any(letter in frame.columns for letter in LETTERS):
        options, gold, kind = _letter_columns(frame, answers)
    elif dataset in OPTIONS_IN_FIELDS:
        options, gold, kind = OPTIONS_IN_FIELDS[dataset](frame, answers)
    else:
        options, gold = [[]] * len(frame), answers
        present = [a for a in answers if a is not None]
        if present and all(a in ("Yes", "No") for a in present):
            kind = np.full(len(frame), YES_NO, dtype=object)
        elif present and all(len(a.strip()) == 1 and a.strip() in LETTERS for a in present):
            raise ImportFormatError(f"{path}: every answer is an option letter but the file has no option columns "
                                    f"(A, B, ...) and the options of VLMEvalKit dataset {dataset!r} are not known "
                                    f"(known: {', '.join(OPTIONS_IN_FIELDS)}): multiple choice cannot be scored "
                                    "as open text")
        else:
            answer_types = text_column(frame, "answer_type")
            kind = np.where(np.isin(answer_types, ["integer", "float"]), NUMERIC, OPEN).astype(object)
    table = pd.DataFrame({
        "model": model, "benchmark": benchmark, "split": split, "subtask": text_column(frame, columns[subtask_column]),
        "question_id": text_column(frame, columns["index"]), "gold": gold,
        "response": text_column(frame, columns["prediction"]), "options": options, "kind": kind,
    })
    for name in ("answer_type", "precision", "question", "hint"):
        if column_named(frame, name) is not None:
            table[name] = text_column(frame, column_named(frame, name))
    if scoring is not None:
        reading = harness_reading(scoring, dataset)
        for name in HARNESS_COLUMNS:
            found = table["question_id"].map(reading[name].to_dict())
            table[name] = np.where(table["question_id"].isin(reading.index),
                                   found.astype(object).map(lambda v: None if v is None else str(v)), None)
    return table


def harness_reading(scoring: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """VLMEvalKit's reading of each answer, by `index`: its extracted answer (`res`, else the `prediction` its
    judge overwrote) and its correctness (`hit`; MathVista's files have none: mathvista_hit recomputes it)."""
    index = text_column(scoring, column_named(scoring, "index"))
    extracted_column = column_named(scoring, "res") or column_named(scoring, "prediction")
    extracted = text_column(scoring, extracted_column)
    hit_column = column_named(scoring, "hit")
    if hit_column is not None:
        correct = [None if h is None else float(h) > 0 for h in text_column(scoring, hit_column)]
    elif dataset.startswith("MathVista"):
        correct = [mathvista_hit(row) for row in scoring.to_dict("records")]
    else:
        correct = [None] * len(scoring)
    return pd.DataFrame({"harness_prediction": extracted, "harness_correct": correct}, index=index)


def mathvista_hit(row: dict) -> bool | None:
    """VLMEvalKit's MathVista correctness of its judge's answer `res` (its post_check, rewritten here): the option
    `res` names equals `answer_option` for multiple choice; `int`/`float` of `res` equals the answer's for integer
    and float answers; the texts are equal otherwise. None when the judge gave no answer."""
    res, answer = row.get("res"), str(row.get("answer"))
    if res is None or (isinstance(res, float) and np.isnan(res)):
        return None
    res = str(res).strip()
    if row.get("question_type") == "multi_choice":
        try:
            choices = [str(choice) for choice in ast.literal_eval(str(row.get("choices")))]
        except (ValueError, SyntaxError):
            return False
        letter = res if res in LETTERS[:len(choices)] else (LETTERS[choices.index(res)] if res in choices else None)
        return letter is not None and letter == str(row.get("answer_option")).strip()
    try:
        if row.get("answer_type") == "integer":
            return int(res) == int(answer)
        if row.get("answer_type") == "float":
            return float(res) == float(answer)
    except ValueError:
        return False
    return res == answer
