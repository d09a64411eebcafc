"""The working folder of a CAIT build: one file per stage, each a file a person can read and edit.

  verbs.csv            the verb library: one row per verb, the four principles of Section 3.2 (yes/no/blank)
  scenes.jsonl         scene pairs from the LLM (Table 19), one scene a line
  review.csv           the human review of each scene (Table 20): keep, anthropomorphize, style, characteristic
  review_tasks/        the Label Studio task set of the scenes not yet reviewed
  descriptions.jsonl   the detailed description of each kept scene (Table 21)
  images.jsonl         every image made (Table 22): scene, candidate, generator, prompt, file; images/ the files
  filter.csv           the human image filtering: keep or reject each image
  filter_tasks/        the Label Studio task set of the images not yet filtered
  cait/                the CAIT folder the tasks read (cait.jsonl + images/), proportions.csv beside it
  llm_cache/           every LLM answer (invscale.judges' cache, one JSONL per LLM)

Yes/no columns take yes or no (true/false, 1/0 and y/n are read as such, in any case); blank is "not decided".
Every problem in a file a person edits is reported with the file, line and field.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pandas as pd

VERBS, SCENES, REVIEW, DESCRIPTIONS = "verbs.csv", "scenes.jsonl", "review.csv", "descriptions.jsonl"
IMAGES, IMAGE_DIR, FILTER = "images.jsonl", "images", "filter.csv"
REVIEW_TASKS, FILTER_TASKS, CAIT_DIR, LLM_CACHE = "review_tasks", "filter_tasks", "cait", "llm_cache"
YES, NO = "yes", "no"
_TRUE, _FALSE = {"yes", "y", "true", "1"}, {"no", "n", "false", "0"}


class BuildError(ValueError):
    """A stage cannot go on: a bad input file (named with line and field), or a missing earlier stage."""


def yes_no(value: object, where: str) -> str:
    """YES, NO or "" (undecided) from a cell a person may have typed."""
    text = "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value).strip().lower()
    if not text:
        return ""
    if text in _TRUE:
        return YES
    if text in _FALSE:
        return NO
    raise BuildError(f"{where}: {value!r} is not yes or no (or blank for undecided)")


def slug(text: str) -> str:
    """A file-name-safe form of a verb: lower case, runs of other characters as one '_'."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def read_csv(path: Path, columns: Sequence[str]) -> pd.DataFrame:
    """A stage CSV as strings (blank cells ""), with `columns` required; its rows keep their file line
    numbers in `line` (the header is line 1)."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.ParserError as error:
        raise BuildError(f"{path}: not a readable CSV ({error})") from None
    missing = [column for column in columns if column not in frame]
    if missing:
        raise BuildError(f"{path}: missing column(s) {missing}; expected {list(columns)}")
    return frame.assign(line=range(2, len(frame) + 2))


def read_keyed_csv(path: Path, columns: Sequence[str], key: str,
                   normalise: Callable[[str, str], str] | None = None) -> pd.DataFrame:
    """A stage CSV (read_csv), empty when the file is absent, whose `key` cells are unique after
    normalise(cell, where) (which raises on a bad cell); a repeated key is a BuildError naming both lines."""
    if not path.exists():
        return pd.DataFrame(columns=[*columns, "line"])
    frame = read_csv(path, columns)
    seen: dict[str, int] = {}
    for index, row in frame.iterrows():
        where = f"{path}:{row['line']}"
        value = normalise(row[key], f"{where}: field '{key}'") if normalise else row[key]
        if value in seen:
            raise BuildError(f"{where}: {key} {value!r} is also on line {seen[value]}")
        seen[value] = row["line"]
        frame.at[index, key] = value
    return frame


def write_csv(frame: pd.DataFrame, path: Path, columns: Sequence[str]) -> Path:
    return _replace(path, frame[list(columns)].to_csv(index=False))


def read_jsonl(path: Path, required: Sequence[str]) -> list[dict]:
    """A stage JSONL's records, each with its file line number in `line`; blank lines are skipped, and a
    line that is not a JSON object with the `required` fields is a BuildError naming it."""
    records = []
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise BuildError(f"{path}:{number}: not valid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise BuildError(f"{path}:{number}: a record must be a JSON object")
        missing = [name for name in required if name not in record]
        if missing:
            raise BuildError(f"{path}:{number}: missing field(s) {missing}")
        records.append({**record, "line": number})
    return records


def write_jsonl(records: Iterable[dict], path: Path) -> Path:
    lines = [json.dumps({k: v for k, v in record.items() if k != "line"}, ensure_ascii=False) for record in records]
    return _replace(path, "".join(line + "\n" for line in lines))


def text_field(record: dict, name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BuildError(f"{where}: field '{name}' must be a non-empty string, got {value!r}")
    return value.strip()


def _replace(path: Path, text: str) -> Path:
    """Write by renaming a finished file over the old one: a kill never leaves half a stage file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path
