"""The LoRA study's split of CAIT (paper Section 5.2: "a 60% training set and a 40% test set"), stratified
by domain (the record's `category`) so each part keeps Table 1's proportions, seeded, and recorded.

`write_split(FOLDER, WORK)` writes, under the work folder:
  split.json         source folder, fraction, seed, the scene ids of each part and the counts per domain
  train/cait.jsonl   the training records (images as absolute paths): a CAIT folder
  heldout/cait.jsonl the held-out records: a CAIT folder that `cait-validate` accepts
  heldout_dataset/   the held-out part prepared for the tasks (`--data cait=WORK/heldout_dataset`)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from lmms_eval_tasks import cait
from lmms_eval_tasks.question import DocError

PAPER_TRAIN_FRACTION = 0.6
STRATIFY_FIELD = "category"
SPLIT_FILE = "split.json"
PARTS = ("train", "heldout")


def stratified_split(records: Sequence[dict], train_fraction: float = PAPER_TRAIN_FRACTION,
                     seed: int = 0) -> dict[str, list[str]]:
    """{"train": ids, "heldout": ids} (each sorted): scikit-learn's stratified shuffle split by category.
    Every category needs at least two scenes, one for each part."""
    from sklearn.model_selection import train_test_split

    if not 0 < train_fraction < 1:
        raise ValueError(f"train fraction must be between 0 and 1, got {train_fraction}")
    ids = [record["id"] for record in records]
    strata = [record[STRATIFY_FIELD] for record in records]
    small = sorted(category for category, n in Counter(strata).items() if n < 2)
    if small:
        raise DocError(f"categories {small} have fewer than 2 scenes: a stratified split needs one in each part")
    try:
        train, heldout = train_test_split(ids, train_size=train_fraction, stratify=strata, random_state=seed)
    except ValueError as error:  # e.g. fewer held-out scenes than categories
        raise DocError(f"cannot split {len(ids)} scenes of {len(set(strata))} categories with train fraction "
                       f"{train_fraction}: {error}") from None
    return {"train": sorted(train), "heldout": sorted(heldout)}


def _write_folder(records: list[dict], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({field: record[field] for field in cait.FIELDS}, ensure_ascii=False) for record in records]
    (folder / "cait.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def write_split(folder: Path, work: Path, train_fraction: float = PAPER_TRAIN_FRACTION, seed: int = 0) -> dict:
    """Split a CAIT folder and write the parts (module docstring); returns the split.json content."""
    folder, work = Path(folder).resolve(), Path(work)
    records = cait.read_folder(folder)  # validated; image paths made absolute
    parts = stratified_split(records, train_fraction, seed)
    by_id = {record["id"]: record for record in records}
    counts = {}
    for part in PARTS:
        chosen = [by_id[i] for i in parts[part]]
        _write_folder(chosen, work / part)
        for category, n in sorted(Counter(r[STRATIFY_FIELD] for r in chosen).items()):
            counts.setdefault(category, {})[part] = n
    cait.prepare(work / "heldout", work / "heldout_dataset")
    summary = {"source": str(folder), "train_fraction": train_fraction, "seed": seed, "stratified_by": STRATIFY_FIELD,
               "scenes": {part: len(parts[part]) for part in PARTS}, "per_category": counts, **parts}
    (work / SPLIT_FILE).write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


def read_split(work: Path) -> dict:
    path = Path(work) / SPLIT_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path}: no split here; run `cait-lora split FOLDER {work}` first")
    return json.loads(path.read_text(encoding="utf-8"))
