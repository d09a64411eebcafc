"""Stage 6, human image filtering (Section 3.2 step 4): keep or reject each image, steered toward the
domain proportions of the paper's Table 1.

WORK/filter.csv, one image a line: image (its file under WORK), scene_id, candidate, generator,
characteristic, category, keep (yes/no/blank), annotators, note. `export_filter` adds the current images
(images.py's current_images) the file lacks and writes the Label Studio task set of the undecided ones
(WORK/filter_tasks/image-filter_*: one task per image, item_key = the image's file name); with a target
size, the images of characteristics whose kept images already fill their Table 1 quota are left out of
the task set (and counted), so that annotation goes where scenes are missing. `import_filter` fills
undecided rows from the annotations (agreement required, as in review.py).

`proportions` compares the scenes with a kept image per characteristic with Table 1: the share reached,
and the quota (Table 1's shares of the target size, or of the number of scenes, by largest remainder)
and what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.cait import TABLE1_SHARES
from invscale.label_studio import ImageOutput, TaskSet, choices_xml
from invscale.quotas import largest_remainder

from .files import FILTER, FILTER_TASKS, NO, YES, BuildError, read_keyed_csv, write_csv, yes_no
from .images import current_images
from .review import CATEGORY_OF, KEEP, REJECT, choice_text

COLUMNS = ["image", "scene_id", "candidate", "generator", "characteristic", "category", "keep", "annotators", "note"]
SET_NAME = "image-filter"
LABEL_CONFIG = f"""<View>
  <Image name="image" value="$image"/>
  <Header value="The image should show this counter-intuitive scene"/>
  <Text name="uncommon" value="$uncommon_text"/>
  <Header value="and not the usual one"/>
  <Text name="common" value="$common_text"/>
  <Text name="details" value="$details"/>
  <Header value="Keep the image if it clearly shows the counter-intuitive scene, without ambiguous or distracting elements"/>
{choices_xml((KEEP, REJECT))}
</View>
"""


def quotas(size: int) -> pd.Series:
    """Table 1's shares of `size` scenes per characteristic, whole numbers summing to size."""
    if size < 1:
        raise BuildError(f"the target size must be positive, got {size}")
    return largest_remainder(pd.Series(TABLE1_SHARES), size).astype(int)


def read_filter(work: Path) -> pd.DataFrame:
    path = Path(work) / FILTER
    frame = read_keyed_csv(path, COLUMNS, "image")
    for index, row in frame.iterrows():
        where = f"{path}:{row['line']}"
        keep = {KEEP: YES, REJECT: NO}.get(row["keep"].strip().lower(), row["keep"])
        frame.at[index, "keep"] = yes_no(keep, f"{where}: field 'keep'")
    return frame


def filter_rows(work: Path) -> tuple[dict[str, dict], list[dict]]:
    """(filter.csv rows by image, with a row added for each current image it lacks; the current images).
    The domain columns follow the review (a changed characteristic is taken over)."""
    images = current_images(work)
    rows = {row["image"]: row for row in read_filter(work).drop(columns="line").to_dict("records")}
    for image in images:
        scene = image["scene"]
        row = rows.setdefault(image["file"], {**{column: "" for column in COLUMNS}, "image": image["file"]})
        row.update(scene_id=image["scene_id"], candidate=str(image["candidate"]), generator=image["generator"],
                   characteristic=scene["characteristic"], category=scene["category"])
    return rows, images


def _write(work: Path, rows: dict[str, dict]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    write_csv(frame, Path(work) / FILTER, COLUMNS)
    return frame


def kept_counts(rows: dict[str, dict], images: list[dict]) -> pd.Series:
    """Scenes with a kept current image, per characteristic (every Table 1 characteristic, 0 when none)."""
    current = {image["file"] for image in images}
    kept = {(row["scene_id"], row["characteristic"]) for row in rows.values()
            if row["keep"] == YES and row["image"] in current}
    counts = pd.Series([characteristic for _, characteristic in kept], dtype=object).value_counts()
    return counts.reindex(list(TABLE1_SHARES), fill_value=0).astype(int)


def proportions_table(counts: pd.Series, size: int | None = None) -> pd.DataFrame:
    """category, characteristic, table1_share, scenes (the counts per characteristic), share, quota and
    missing (for `size`, or for the number of scenes when no size is given)."""
    counts = counts.reindex(list(TABLE1_SHARES), fill_value=0).astype(int)
    total = int(counts.sum())
    target = quotas(size) if size else (quotas(total) if total else counts * 0)
    return pd.DataFrame({
        "category": [CATEGORY_OF[c] for c in TABLE1_SHARES], "characteristic": list(TABLE1_SHARES),
        "table1_share": list(TABLE1_SHARES.values()), "scenes": counts.values,
        "share": (counts / total).round(4).values if total else [0.0] * len(counts),
        "quota": target.values, "missing": (target - counts).clip(lower=0).values,
    })


def proportions(work: Path, size: int | None = None) -> pd.DataFrame:
    """proportions_table of the scenes with a kept image."""
    rows, images = filter_rows(work)
    return proportions_table(kept_counts(rows, images), size)


@dataclass(frozen=True)
class FilterExport:
    added: int  # images added to filter.csv
    undecided: int  # tasks written
    quota_full: int  # undecided images left out: their characteristic's quota is filled
    paths: dict[str, Path]
    task_set: TaskSet


def filter_task_set(work: Path, rows: dict[str, dict], images: list[dict], size: int | None = None,
                    output: ImageOutput = ImageOutput(), annotators: int = 1) -> tuple[TaskSet, int]:
    full = set()
    if size:
        kept, target = kept_counts(rows, images), quotas(size)
        full = {characteristic for characteristic in TABLE1_SHARES if kept[characteristic] >= target[characteristic]}
    tasks, keys, left_out = [], [], 0
    for image in images:
        if rows[image["file"]]["keep"]:
            continue
        scene = image["scene"]
        if scene["characteristic"] in full:
            left_out += 1
            continue
        key = Path(image["file"]).stem
        details = (f"Domain: {scene['category']}, {scene['characteristic']}. Style: {scene['style']}. Subject "
                   f"{'anthropomorphized' if scene['anthropomorphize'] == YES else 'not anthropomorphized'}.")
        tasks.append({"item_key": key, "image": output.reference(Path(work) / image["file"], key,
                                                                 f"image {image['file']}"),
                      "uncommon_text": scene["uncommon_text"], "common_text": scene["common_text"], "details": details})
        keys.append((key, image["file"], image["scene_id"], scene["characteristic"]))
    items = pd.DataFrame(keys, columns=["item_key", "image", "scene_id", "characteristic"])
    return TaskSet(SET_NAME, "CAIT construction: image filtering", LABEL_CONFIG, (KEEP, REJECT), tasks, items,
                   annotators), left_out


def export_filter(work: Path, size: int | None = None, output: ImageOutput = ImageOutput(),
                  annotators: int = 1) -> FilterExport:
    from invscale.label_studio import write_task_set

    work = Path(work)
    before = len(read_filter(work))
    rows, images = filter_rows(work)
    if not images:
        raise BuildError(f"{work}: no current images yet (run the images stage first)")
    _write(work, rows)
    task_set, left_out = filter_task_set(work, rows, images, size, output, annotators)
    paths = write_task_set(task_set, work / FILTER_TASKS)
    return FilterExport(len(rows) - before, len(task_set.tasks), left_out, paths, task_set)


@dataclass(frozen=True)
class FilterImport:
    decided: int
    kept: int
    conflicts: list[str]
    differing: int
    unknown: list[str]
    undecided: int  # current images still undecided


def import_filter(work: Path, annotations: pd.DataFrame) -> FilterImport:
    """Fill filter.csv's undecided rows from Label Studio annotations of the image-filter task set."""
    work = Path(work)
    rows, images = filter_rows(work)
    by_key = {Path(image).stem: image for image in rows}
    decided, conflicts = {}, {}
    for key, group in annotations[~annotations["skipped"].astype(bool)].groupby("item_key", sort=False):
        labels = {choice_text(label) for label in group["label"]}
        if not labels <= {KEEP, REJECT}:
            conflicts[key] = f"answers {sorted(map(str, labels))} are not keep or reject"
        elif len(labels) > 1:
            conflicts[key] = "annotators disagree: " + " | ".join(sorted(labels))
        else:
            decided[key] = (YES if labels.pop() == KEEP else NO,
                            ",".join(str(a) for a in sorted(set(group["annotator"]))))
    now = kept = differing = 0
    for key, (keep, annotators) in decided.items():
        row = rows.get(by_key.get(key, ""))
        if row is None:
            continue
        if row["keep"]:
            differing += row["keep"] != keep
            continue
        row.update(keep=keep, annotators=annotators, note="")
        now += 1
        kept += keep == YES
    for key, why in conflicts.items():
        row = rows.get(by_key.get(key, ""))
        if row is not None and not row["keep"]:
            row["note"] = why
    _write(work, rows)
    current = {image["file"] for image in images}
    unknown = sorted(set(annotations["item_key"]) - set(by_key))
    return FilterImport(now, kept, [f"{key}: {why}" for key, why in conflicts.items()], differing, unknown,
                        sum(1 for row in rows.values() if row["image"] in current and not row["keep"]))
