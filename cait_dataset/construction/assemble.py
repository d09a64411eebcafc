"""Stage 7, the CAIT folder the tasks read (lmms_eval_tasks/cait.py): one record per scene with a kept
image, in WORK/cait/ (cait.jsonl + images/<scene_id>.png), checked by the same validator as
`python -m lmms_eval_tasks cait-validate`.

Each record: id (the scene id), image, category, characteristic, verb, common_text, uncommon_text,
gt_prompt (the scene's description: the text the image was generated from), style, and the optional
fields anthropomorphized, generator ("<kind>:<model>") and prompts (the Table 19, 21 and 22 prompts as
sent, read back from the LLM cache and images.jsonl; a scene added by hand has no scene_pairs prompt).

A scene may have at most one kept image (reject the others in filter.csv). With a target size, each
characteristic contributes at most its Table 1 quota, drawn at random with the seed among its kept
scenes; WORK/selection.csv lists every kept scene and whether it was taken, WORK/proportions.csv the
proportions of the folder against Table 1 (filtering.proportions_table).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from lmms_eval_tasks.cait import check_folder
from invscale.judges.cache import JudgeCache

from . import prompts
from .files import CAIT_DIR, LLM_CACHE, YES, BuildError, write_csv
from .filtering import filter_rows, proportions_table, quotas
from .scenes import read_scenes

SELECTION_COLUMNS = ["scene_id", "characteristic", "image", "selected", "reason"]


def _llm_prompt(work: Path, llm: str | None, key: str | None, caches: dict[str, JudgeCache]) -> str | None:
    """The request (system and user prompt) an LLM answer was given for, from the cache."""
    if not llm or not key:
        return None
    if llm not in caches:
        caches[llm] = JudgeCache(Path(work) / LLM_CACHE / f"{llm}.jsonl")
    record = caches[llm].answers.get(key)
    return None if record is None else prompts.messages_text(record.get("system"), record["prompt"])


def kept_images(work: Path) -> list[dict]:
    """The current image records kept in filter.csv, one per scene (BuildError naming scenes with more)."""
    rows, images = filter_rows(work)
    kept = [image for image in images if rows[image["file"]]["keep"] == YES]
    by_scene: dict[str, list[str]] = {}
    for image in kept:
        by_scene.setdefault(image["scene_id"], []).append(image["file"])
    several = {scene: files for scene, files in by_scene.items() if len(files) > 1}
    if several:
        scene, files = next(iter(several.items()))
        raise BuildError(f"{Path(work) / 'filter.csv'}: {len(several)} scene(s) have more than one kept image, e.g. "
                         f"{scene}: {', '.join(files)}; keep one image per scene")
    return kept


def select(kept: list[dict], size: int | None, seed: int) -> pd.DataFrame:
    """SELECTION_COLUMNS for the kept images: all of them without a size; else at most each
    characteristic's quota, drawn with the seed."""
    frame = pd.DataFrame({"scene_id": [image["scene_id"] for image in kept],
                          "characteristic": [image["scene"]["characteristic"] for image in kept],
                          "image": [image["file"] for image in kept]})
    frame["selected"], frame["reason"] = YES, ""
    if size:
        rng = np.random.default_rng(seed)
        for characteristic, quota in quotas(size).items():
            members = frame.index[frame["characteristic"] == characteristic]
            if len(members) > quota:
                dropped = rng.choice(members, size=len(members) - quota, replace=False)
                frame.loc[dropped, ["selected", "reason"]] = ["no", f"beyond the Table 1 quota of {quota}"]
    return frame


@dataclass(frozen=True)
class AssembleResult:
    folder: Path
    records: int
    left_out: int  # kept scenes beyond their quota
    proportions: pd.DataFrame
    missing_prompts: int  # prompts not found in the LLM cache (hand-added scenes, deleted caches)


def assemble(work: Path, size: int | None = None, seed: int = 0) -> AssembleResult:
    work = Path(work)
    kept = kept_images(work)
    if not kept:
        raise BuildError(f"{work / 'filter.csv'}: no kept image yet (filter the images first)")
    selection = select(kept, size, seed)
    write_csv(selection, work / "selection.csv", SELECTION_COLUMNS)
    taken = set(selection.loc[selection["selected"] == YES, "image"])
    scene_prompts = {scene["scene_id"]: scene for scene in read_scenes(work)}
    caches: dict[str, JudgeCache] = {}
    staging = work / f"{CAIT_DIR}.partial"
    if staging.exists():
        shutil.rmtree(staging)
    (staging / "images").mkdir(parents=True)
    records, missing = [], 0
    for image in kept:
        if image["file"] not in taken:
            continue
        scene = image["scene"]
        source = scene_prompts.get(scene["scene_id"], {})
        used = {"scene_pairs": _llm_prompt(work, source.get("llm"), source.get("llm_key"), caches),
                "description": _llm_prompt(work, scene.get("llm"), scene.get("llm_key"), caches),
                "image": image["prompt"]}
        missing += sum(text is None for text in used.values())
        target = f"images/{scene['scene_id']}.png"
        shutil.copyfile(work / image["file"], staging / target)
        records.append({"id": scene["scene_id"], "image": target, "category": scene["category"],
                        "characteristic": scene["characteristic"], "verb": scene["verb"],
                        "common_text": scene["common_text"], "uncommon_text": scene["uncommon_text"],
                        "gt_prompt": scene["description"], "style": scene["style"],
                        "anthropomorphized": scene["anthropomorphize"] == YES, "generator": image["label"],
                        "prompts": {stage: text for stage, text in used.items() if text is not None}})
    (staging / "cait.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                        encoding="utf-8")
    check = check_folder(staging)
    if check.problems:
        raise BuildError(f"the assembled CAIT folder does not validate:\n{check.summary()}")
    folder = work / CAIT_DIR
    if folder.exists():
        shutil.rmtree(folder)
    staging.rename(folder)
    chosen = selection.loc[selection["selected"] == YES, "characteristic"].value_counts()
    table = proportions_table(chosen, size)
    table.to_csv(work / "proportions.csv", index=False)
    return AssembleResult(folder, len(records), int((selection["selected"] != YES).sum()), table, missing)
