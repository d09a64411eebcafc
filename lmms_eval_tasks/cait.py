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

Optional fields, written by the construction pipeline (cait_dataset/construction, `cait-build`) and checked when
present:

  anthropomorphized  true when the acting subject was given human-like traits (the paper's Table 20)
  generator          the image generator, "<kind>:<model>" (e.g. "gemini:gemini-2.5-flash-image")
  prompts            the prompts the scene was made with, as sent: an object mapping any of scene_pairs
                     (Table 19), description (Table 21) and image (Table 22) to its text

A local folder holds `cait.jsonl` (or `cait.parquet`) and the images; `python -m lmms_eval_tasks
cait-prepare FOLDER OUT` validates it and writes a save_to_disk dataset for `--data cait=OUT`.
Validation (`check_folder`) reads every record and finds every problem: a line that is not JSON, a field
that breaks the format, a duplicate id, an image that is missing or does not decode (each image is
opened, its checksums verified and its pixels decoded, so a truncated or corrupt PNG is named).
`read_folder` refuses a folder with any problem, listing the first MAX_REPORTED and counting the rest.

Which option letter holds the right answer is balanced and deterministic: scenes are ranked by the
SHA-256 of their id and every other one gets the right answer at A (so exactly half, +-1, at A); the
letter is in each log record (`gold`, and `details.right_option`).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
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
# The paper's Table 1: the share of the 400 scenes of each characteristic (they sum to 1).
TABLE1_SHARES = {
    "Inversion of institutional power": 0.22, "Reversal of caretaking duties across generations": 0.1425,
    "Animals replacing humans as dominant figures": 0.2225, "Animals providing domestic care to humans": 0.14,
    "Transposition of traditional predator and prey roles": 0.18, "Inanimate objects gaining autonomy": 0.095,
}
STYLES = ("realistic", "cartoon")
TEXT_FIELDS = ("id", "category", "characteristic", "verb", "common_text", "uncommon_text", "gt_prompt", "style")
FIELDS = ("image", *TEXT_FIELDS)
OPTIONAL_FIELDS = ("anthropomorphized", "generator", "prompts")
PROMPT_STAGES = ("scene_pairs", "description", "image")  # the keys of the optional field `prompts`
MAX_REPORTED = 20  # problems listed by read_folder / cait-validate; the rest are counted


def record_problems(record: dict) -> list[str]:
    """Every way the record breaks the format ("field 'x' ..."), in field order; [] when it is valid."""
    problems = []
    for name in FIELDS:
        value = record.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append(f"field '{name}' is missing or empty")
        elif name in TEXT_FIELDS and not isinstance(value, str):
            problems.append(f"field '{name}' must be a string, got {type(value).__name__}")
    text = {name: value for name in TEXT_FIELDS
            if isinstance(value := record.get(name), str) and value.strip()}  # each rule reads valid fields only
    if "category" in text and text["category"] not in CHARACTERISTICS:
        problems.append(f"field 'category' is {text['category']!r}, not one of {list(CHARACTERISTICS)}")
    elif "category" in text and "characteristic" in text \
            and text["characteristic"] not in CHARACTERISTICS[text["category"]]:
        problems.append(f"field 'characteristic' {text['characteristic']!r} is not one of "
                        f"{list(CHARACTERISTICS[text['category']])} for category {text['category']}")
    if "style" in text and text["style"] not in STYLES:
        problems.append(f"field 'style' is {text['style']!r}, not one of {list(STYLES)}")
    if "common_text" in text and "uncommon_text" in text \
            and text["common_text"].strip() == text["uncommon_text"].strip():
        problems.append("fields 'common_text' and 'uncommon_text' are the same sentence")
    return problems + optional_field_problems(record)


def optional_field_problems(record: dict) -> list[str]:
    """The ways the optional fields present (not null) break the format."""
    problems = []
    if record.get("anthropomorphized") is not None and not isinstance(record["anthropomorphized"], bool):
        problems.append(f"field 'anthropomorphized' must be true or false, got {record['anthropomorphized']!r}")
    generator = record.get("generator")
    if generator is not None and (not isinstance(generator, str) or not generator.strip()):
        problems.append(f"field 'generator' must be a non-empty string, got {generator!r}")
    prompts = record.get("prompts")
    if prompts is not None:
        if not isinstance(prompts, dict):
            problems.append(f"field 'prompts' must be an object, got {type(prompts).__name__}")
        else:
            unknown = [key for key in prompts if key not in PROMPT_STAGES]
            if unknown:
                problems.append(f"field 'prompts' has key {unknown[0]!r}, not one of {list(PROMPT_STAGES)}")
            # a null entry is an absent one (a dataset's struct column fills absent keys with null)
            empty = [key for key, text in prompts.items() if text is not None and (not isinstance(text, str)
                                                                                  or not text.strip())]
            if empty:
                problems.append(f"field 'prompts' holds no text for {empty[0]!r}")
    return problems


def validate_cait_record(record: dict, where: str) -> None:
    """Raise DocError naming the record and every field that breaks the format."""
    problems = record_problems(record)
    if problems:
        raise DocError(f"{where}: " + "; ".join(problems))


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


@dataclass
class FolderCheck:
    """A CAIT folder's records (images resolved against the folder) and every problem found, in file order."""
    folder: Path
    records: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def summary(self, limit: int = MAX_REPORTED) -> str:
        """The problems (one line per bad line or record), the first `limit` listed and the rest counted."""
        bad = len(self.problems)
        lines = [f"{self.folder}: {bad} bad line(s) or record(s) among {len(self.records)} CAIT records:"]
        lines += [f"  {problem}" for problem in self.problems[:limit]]
        if bad > limit:
            lines.append(f"  ... and {bad - limit} more (raise the limit to list them)")
        return "\n".join(lines)


def image_problem(image, folder: Path) -> tuple[str | None, object]:
    """(None, the image as the dataset stores it) when the image opens and decodes, else (why, image): a
    path (relative to the folder, or absolute) or an image feature's {'bytes': ..., 'path': ...}."""
    from PIL import Image

    if isinstance(image, str):
        path = Path(image) if Path(image).is_absolute() else folder / image
        if not path.is_file():
            return f"field 'image' names {path}, which does not exist", image
        image, opener = str(path), (lambda: Image.open(path))
    elif isinstance(image, dict) and (image.get("bytes") or image.get("path")):
        data, path = image.get("bytes"), image.get("path")
        opener = (lambda: Image.open(io.BytesIO(data))) if data else (lambda: Image.open(path))
    else:
        return f"field 'image' must be a file path or an image, got {type(image).__name__}", image
    try:
        with opener() as handle:
            handle.verify()  # checksums and structure
        with opener() as handle:
            handle.load()  # every pixel: a truncated file fails here
    except Exception as err:  # PIL raises OSError, SyntaxError, ValueError... for broken files
        return f"field 'image' {image if isinstance(image, str) else '(embedded)'} is not a readable image: {err}", image
    return None, image


def check_folder(folder: Path) -> FolderCheck:
    """Read a CAIT folder (cait.jsonl or cait.parquet + images) and find every problem."""
    folder = Path(folder)
    check = FolderCheck(folder)
    raw: list[tuple[str, object]] = []  # (where, record)
    if (folder / "cait.jsonl").exists():
        source = folder / "cait.jsonl"
        for number, data in enumerate(source.read_bytes().splitlines(), 1):
            try:
                line = data.decode("utf-8")  # strictly: a replaced byte would be stored as U+FFFD
            except UnicodeDecodeError as error:
                check.problems.append(f"{source}:{number}: byte 0x{data[error.start]:02x} at column {error.start + 1} "
                                      f"is not UTF-8")
                continue
            if not line.strip():
                continue
            try:
                raw.append((f"{source}:{number}", json.loads(line)))
            except json.JSONDecodeError as error:
                check.problems.append(f"{source}:{number}: not valid JSON ({error.msg})")
    elif (folder / "cait.parquet").exists():
        source = folder / "cait.parquet"
        raw = [(f"{source} row {number}", record)
               for number, record in enumerate(pd.read_parquet(source).to_dict("records"), 1)]
    else:
        raise DocError(f"{folder}: no cait.jsonl or cait.parquet")
    seen: set[str] = set()
    for line, record in raw:
        if not isinstance(record, dict):
            check.problems.append(f"{line}: a record must be a JSON object, got {type(record).__name__}")
            continue
        where = f"{line} (id {record.get('id')!r})"
        problems = record_problems(record)
        if isinstance(record.get("id"), str):
            if record["id"] in seen:
                problems.append("duplicate id")
            seen.add(record["id"])
        if record.get("image") is not None:
            problem, record["image"] = image_problem(record["image"], folder)
            problems += [problem] if problem else []
        if problems:
            check.problems.append(f"{where}: " + "; ".join(problems))
        check.records.append(record)
    return check


def read_folder(folder: Path, max_reported: int = MAX_REPORTED) -> list[dict]:
    """The records of a valid CAIT folder, images resolved against the folder; DocError listing the
    problems (the first `max_reported`, and a count of the rest) otherwise."""
    check = check_folder(folder)
    if check.problems:
        raise DocError(check.summary(max_reported))
    return check.records


def prepare(folder: Path, out: Path) -> Path:
    """Validate a CAIT folder and write it as a DatasetDict({'test': ...}) with embedded images."""
    records = read_folder(folder)
    features = datasets.Features({"image": datasets.Image(), **{field: datasets.Value("string") for field in TEXT_FIELDS}})
    dataset = datasets.Dataset.from_list([{field: record[field] for field in FIELDS} for record in records], features=features)
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(out))
    return Path(out)
