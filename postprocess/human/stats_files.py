"""The statistics of a task set as files: `human-stats` writes them, `report --human` reads them back.

A folder holds `human_<set>_<table>.csv` for each frame agreement.py returns for the set (set names
with "-" written as "_": human_taxonomy_fleiss.csv, human_cait_baseline_annotators.csv, ...).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from postprocess.human import agreement
from postprocess.human.task_sets import SET_NAMES


def set_statistics(task_set: str, annotations: pd.DataFrame, items: pd.DataFrame, by: str = "group"
                   ) -> dict[str, pd.DataFrame]:
    """agreement.py's frames for one task set."""
    if task_set == "taxonomy":
        return agreement.taxonomy_tables(annotations, items)
    if task_set == "cait-baseline":
        return agreement.cait_baseline_tables(annotations, items)
    if task_set == "cait-failures":
        return agreement.failure_mode_tables(annotations, items, by)
    raise ValueError(f"unknown task set {task_set!r}; task sets: {', '.join(SET_NAMES)}")


PROFILE_COLUMNS = ["annotator", "age", "description"]


def read_annotator_profiles(path: Path) -> pd.DataFrame:
    """CAIT Table 12's Age and Description per annotator (Label Studio records neither): a CSV with columns
    annotator (the Label Studio user id), age (a whole number or empty) and description. A missing column, an
    id that is not a whole number or appears twice, or an age that is not a whole number is a ValueError
    naming the file and line."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, UnicodeDecodeError, OSError) as error:
        raise ValueError(f"{path}: not a readable annotator profiles CSV ({str(error).strip()[:200]})") from None
    missing = [column for column in PROFILE_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected {PROFILE_COLUMNS}")
    for line, (annotator, age) in enumerate(zip(frame["annotator"], frame["age"]), 2):
        if not annotator.strip().isdigit():
            raise ValueError(f"{path}: line {line}: annotator {annotator!r} is not a Label Studio user id")
        if age.strip() and not age.strip().isdigit():
            raise ValueError(f"{path}: line {line}: age {age!r} is not a whole number")
    frame = frame[PROFILE_COLUMNS].assign(annotator=frame["annotator"].astype(int))
    twice = frame["annotator"][frame["annotator"].duplicated()]
    if len(twice):
        raise ValueError(f"{path}: annotator {twice.iloc[0]} has more than one profile")
    return frame


def _prefix(task_set: str) -> str:
    return f"human_{task_set.replace('-', '_')}_"


def write_statistics(task_set: str, tables: dict[str, pd.DataFrame], out: Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in tables.items():
        paths.append(out / f"{_prefix(task_set)}{name}.csv")
        frame.to_csv(paths[-1], index=False)
    return paths


def read_statistics(folder: Path) -> dict[str, dict[str, pd.DataFrame]]:
    """{set name: {table name: frame}} of every set with files in `folder`; FileNotFoundError when none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    found: dict[str, dict[str, pd.DataFrame]] = {}
    for task_set in SET_NAMES:
        for path in sorted(folder.glob(f"{_prefix(task_set)}*.csv")):
            found.setdefault(task_set, {})[path.stem.removeprefix(_prefix(task_set))] = pd.read_csv(path)
    if not found:
        raise FileNotFoundError(f"{folder}: no human_<set>_<table>.csv files (not a `human-stats` output folder)")
    return found
