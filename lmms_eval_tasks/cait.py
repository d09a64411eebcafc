"""CAIT (Seeing vs. Believing): the data format, its validator, the adapter and a drawn fixture.

No public release of CAIT exists, so this module defines the format the tasks read. One record per
scene:

  id              unique scene id (string)
  image           the image (an image feature, or a path relative to the folder, or absolute)
  category        Human-Human | Human-Animal | Animal-Animal | Bio-StillLife
  characteristic  the finer characteristic of the paper's Table 1 (one of CHARACTERISTICS[category])
  verb            the action verb
  common_text     the commonsense sentence (the wrong option)
  uncommon_text   the counter-intuitive sentence the image shows (the right option)
  gt_prompt       the text the image was generated from (the re-evaluation upper bound)
  style           realistic | cartoon

A local folder holds `cait.jsonl` (or `cait.parquet`) and the images; `python -m lmms_eval_tasks
cait-prepare FOLDER OUT` validates it and writes a save_to_disk dataset for `--data cait=OUT`.

Which option letter holds the right answer is balanced and deterministic: scenes are ranked by the
SHA-256 of their id and every other one gets the right answer at A (so exactly half, +-1, at A); the
letter is in each log record (`gold`, and `details.right_option`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import pandas as pd

from .question import MCQ, DocError, Question

CHARACTERISTICS = {
    "Human-Human": ("Inversion of institutional power", "Reversal of caretaking duties across generations"),
    "Human-Animal": ("Animals replacing humans as dominant figures", "Animals providing domestic care to humans"),
    "Animal-Animal": ("Transposition of traditional predator and prey roles",),
    "Bio-StillLife": ("Inanimate objects gaining autonomy",),
}
STYLES = ("realistic", "cartoon")
TEXT_FIELDS = ("id", "category", "characteristic", "verb", "common_text", "uncommon_text", "gt_prompt", "style")
FIELDS = ("image", *TEXT_FIELDS)


def validate_cait_record(record: dict, where: str) -> None:
    """Raise DocError naming the record and the field that breaks the format."""
    for field in FIELDS:
        value = record.get(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise DocError(f"{where}: field '{field}' is missing or empty")
    for field in TEXT_FIELDS:
        if not isinstance(record[field], str):
            raise DocError(f"{where}: field '{field}' must be a string, got {type(record[field]).__name__}")
    if record["category"] not in CHARACTERISTICS:
        raise DocError(f"{where}: field 'category' is {record['category']!r}, not one of {list(CHARACTERISTICS)}")
    if record["characteristic"] not in CHARACTERISTICS[record["category"]]:
        raise DocError(f"{where}: field 'characteristic' {record['characteristic']!r} is not one of "
                       f"{list(CHARACTERISTICS[record['category']])} for category {record['category']}")
    if record["style"] not in STYLES:
        raise DocError(f"{where}: field 'style' is {record['style']!r}, not one of {list(STYLES)}")
    if record["common_text"].strip() == record["uncommon_text"].strip():
        raise DocError(f"{where}: fields 'common_text' and 'uncommon_text' are the same sentence")


def cait(row: dict, position: int, spec) -> Question:
    """The adapter named by CAIT's BenchmarkSpec (benchmarks.py)."""
    where = f"CAIT record {position} (id {row.get('id')!r})"
    validate_cait_record({**row, "image": row.get("image", True)}, where)  # images are checked when read
    return Question(
        benchmark=spec.name, split=spec.split, subtask=row[spec.subtask_field], question_id=row["id"], kind=MCQ,
        text="", image_fields=list(spec.image_columns), options=[row["uncommon_text"], row["common_text"]], gold="A",
        prompt_style=spec.prompt_style,
        details={key: row[key] for key in ("characteristic", "verb", "style", "gt_prompt", "common_text", "uncommon_text")},
    )


def balance_answer_positions(questions: list[Question]) -> None:
    """Every other scene by SHA-256 rank of its id gets the right answer at B."""
    ranked = sorted(questions, key=lambda q: hashlib.sha256(q.question_id.encode()).hexdigest())
    for rank, question in enumerate(ranked):
        if rank % 2:
            question.options = list(reversed(question.options))
            question.gold = "B"
        question.details["right_option"] = question.gold


def read_folder(folder: Path) -> list[dict]:
    """The records of a CAIT folder (cait.jsonl or cait.parquet), images resolved against the folder."""
    folder = Path(folder)
    if (folder / "cait.jsonl").exists():
        records = []
        for number, line in enumerate((folder / "cait.jsonl").read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise DocError(f"{folder / 'cait.jsonl'}:{number}: not valid JSON ({error.msg})") from None
    elif (folder / "cait.parquet").exists():
        records = pd.read_parquet(folder / "cait.parquet").to_dict("records")
    else:
        raise DocError(f"{folder}: no cait.jsonl or cait.parquet")
    seen = set()
    for number, record in enumerate(records, 1):
        where = f"{folder} record {number} (id {record.get('id')!r})"
        validate_cait_record(record, where)
        if record["id"] in seen:
            raise DocError(f"{where}: duplicate id")
        seen.add(record["id"])
        if isinstance(record["image"], str):
            path = Path(record["image"]) if Path(record["image"]).is_absolute() else folder / record["image"]
            if not path.is_file():
                raise DocError(f"{where}: field 'image' names {path}, which does not exist")
            record["image"] = str(path)
    return records


def prepare(folder: Path, out: Path) -> Path:
    """Validate a CAIT folder and write it as a DatasetDict({'test': ...}) with embedded images."""
    records = read_folder(folder)
    features = datasets.Features({"image": datasets.Image(), **{field: datasets.Value("string") for field in TEXT_FIELDS}})
    dataset = datasets.Dataset.from_list([{field: record[field] for field in FIELDS} for record in records], features=features)
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(out))
    return Path(out)
