"""Stage 3, the human review of the scene pairs (Section 3.2 step 2, Table 20), through Label Studio
(invscale/label_studio.py) or by editing WORK/review.csv directly.

Per scene the reviewer decides what the paper's GUI sets: keep or reject (reject nonsensical inversions),
whether the subject is anthropomorphized ("Normal" vs. "Anthropomorphic": does the inverted subject
need human-like traits to act?) and the style (realistic or cartoon); and, ours because the CAIT format
needs it, the scene's domain and characteristic of Table 1.

WORK/review.csv: scene_id, verb, common_text, uncommon_text, keep (yes/no/blank), anthropomorphize (yes/no),
style, characteristic, category (follows from the characteristic), annotators, note. The sentences may be
corrected here: from now on the file's are used.

`export_review` adds the scenes of scenes.jsonl the file lacks and writes the Label Studio task set of the
undecided ones (WORK/review_tasks/scene-review_*: one task per scene, item_key = scene_id, the scenes in
file order so that a verb's pairs come together as in the paper's GUI); `import_review` fills undecided
rows from the annotations (a server project or an export file). Where several annotators answered, they
must agree; a disagreement is left undecided with a note naming the answers. Decided rows are never
overwritten; an import that disagrees with one is counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.cait import CHARACTERISTICS, STYLES
from invscale.label_studio import CONTROL, TaskSet, choices_xml

from .files import NO, REVIEW, REVIEW_TASKS, YES, BuildError, read_keyed_csv, write_csv, yes_no
from .scenes import read_scenes

COLUMNS = ["scene_id", "verb", "common_text", "uncommon_text", "keep", "anthropomorphize", "style", "characteristic",
           "category", "annotators", "note"]
SET_NAME = "scene-review"
KEEP, REJECT = "keep", "reject"
NORMAL, ANTHROPOMORPHIC = "normal", "anthropomorphic"
CONTROLS = ("anthropomorphize", "style", "characteristic")  # the further choice controls, shown on keep
CATEGORY_OF = {characteristic: category for category, items in CHARACTERISTICS.items() for characteristic in items}
DOMAIN_LABELS = {f"{category}: {characteristic}": characteristic for characteristic, category in CATEGORY_OF.items()}


LABEL_CONFIG = f"""<View>
  <Header value="Verb"/>
  <Text name="verb" value="$verb"/>
  <Header value="Common scene"/>
  <Text name="common" value="$common_text"/>
  <Header value="Uncommon scene (subject and object swapped): the scene to be pictured"/>
  <Text name="uncommon" value="$uncommon_text"/>
  <Header value="Keep the scene if the inversion still makes logical sense; reject nonsensical ones"/>
{choices_xml((KEEP, REJECT), to_name="uncommon", indent="    ")}
  <View visibleWhen="choice-selected" whenTagName="{CONTROL}" whenChoiceValue="{KEEP}">
    <Header value="Subject: does the inverted subject need human-like traits to perform the action?"/>
{choices_xml((NORMAL, ANTHROPOMORPHIC), "anthropomorphize", "uncommon", indent="    ")}
    <Header value="Visual style of the image"/>
{choices_xml(STYLES, "style", "uncommon", indent="    ")}
    <Header value="Domain of the scene (CAIT Table 1)"/>
{choices_xml(DOMAIN_LABELS, "characteristic", "uncommon", indent="    ")}
  </View>
</View>
"""


def _non_empty(value: str, where: str) -> str:
    if not value.strip():
        raise BuildError(f"{where} is empty")
    return value


def read_review(work: Path) -> pd.DataFrame:
    """WORK/review.csv checked and normalised (keep and anthropomorphize to yes/no/blank; the category
    filled from the characteristic); a kept scene needs anthropomorphize, style and characteristic."""
    path = Path(work) / REVIEW
    frame = read_keyed_csv(path, COLUMNS, "scene_id", _non_empty)
    for index, row in frame.iterrows():
        where = f"{path}:{row['line']}"
        keep = {KEEP: YES, REJECT: NO}.get(row["keep"].strip().lower(), row["keep"])
        anthropomorphize = {ANTHROPOMORPHIC: YES, NORMAL: NO}.get(row["anthropomorphize"].strip().lower(),
                                                                  row["anthropomorphize"])
        frame.at[index, "keep"] = yes_no(keep, f"{where}: field 'keep'")
        frame.at[index, "anthropomorphize"] = yes_no(anthropomorphize, f"{where}: field 'anthropomorphize'")
        style, characteristic = row["style"].strip().lower(), row["characteristic"].strip()
        if style and style not in STYLES:
            raise BuildError(f"{where}: field 'style' is {row['style']!r}, not one of {list(STYLES)}")
        characteristic = DOMAIN_LABELS.get(characteristic, characteristic)
        if characteristic and characteristic not in CATEGORY_OF:
            raise BuildError(f"{where}: field 'characteristic' is {row['characteristic']!r}, not one of "
                             f"{list(CATEGORY_OF)}")
        category = CATEGORY_OF.get(characteristic, "")
        if row["category"].strip() and category and row["category"].strip() != category:
            raise BuildError(f"{where}: field 'category' is {row['category']!r}, but characteristic "
                             f"{characteristic!r} belongs to {category!r}")
        frame.at[index, "style"], frame.at[index, "characteristic"] = style, characteristic
        frame.at[index, "category"] = category or row["category"].strip()
        if frame.at[index, "keep"] == YES:
            missing = [name for name in ("anthropomorphize", "style", "characteristic") if not frame.at[index, name]]
            if missing:
                raise BuildError(f"{where}: a kept scene needs {' and '.join(missing)}")
        for name in ("common_text", "uncommon_text"):
            if not row[name].strip():
                raise BuildError(f"{where}: field '{name}' is empty")
    return frame


def kept_scenes(work: Path) -> pd.DataFrame:
    """The review's kept scenes, in file order."""
    review = read_review(work)
    return review[review["keep"] == YES].reset_index(drop=True)


@dataclass(frozen=True)
class ReviewExport:
    added: int  # scenes added to review.csv
    undecided: int  # tasks written
    updated: int  # undecided rows whose sentences were updated from scenes.jsonl
    kept_text: int  # decided rows whose sentences differ from scenes.jsonl (review.csv's are used)
    paths: dict[str, Path]
    task_set: TaskSet


def update_review(work: Path) -> tuple[pd.DataFrame, int, int, int]:
    """review.csv with the scenes of scenes.jsonl it lacks appended; (frame, added, updated, kept_text)."""
    scenes = read_scenes(work)
    if not scenes:
        raise BuildError(f"{Path(work) / 'scenes.jsonl'}: no scenes yet (run the scenes stage first)")
    review = read_review(work).drop(columns="line")
    rows = {row["scene_id"]: row for row in review.to_dict("records")}
    added = updated = kept_text = 0
    for scene in scenes:
        texts = {name: scene[name] for name in ("verb", "common_text", "uncommon_text")}
        row = rows.get(scene["scene_id"])
        if row is None:
            rows[scene["scene_id"]] = {**{column: "" for column in COLUMNS}, "scene_id": scene["scene_id"], **texts}
            added += 1
        elif any(row[name] != value for name, value in texts.items()):
            if row["keep"]:
                kept_text += 1
            else:
                row.update(texts)
                updated += 1
    frame = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    write_csv(frame, Path(work) / REVIEW, COLUMNS)
    return frame, added, updated, kept_text


def review_task_set(frame: pd.DataFrame, annotators: int = 1) -> TaskSet:
    undecided = frame[(frame["keep"] == "")]
    tasks = [{"item_key": row.scene_id, "verb": row.verb, "common_text": row.common_text,
              "uncommon_text": row.uncommon_text} for row in undecided.itertuples()]
    items = undecided[["scene_id", "verb"]].rename(columns={"scene_id": "item_key"}).reset_index(drop=True)
    return TaskSet(SET_NAME, "CAIT construction: scene review (Table 20)", LABEL_CONFIG, (KEEP, REJECT), tasks,
                   items, annotators)


def export_review(work: Path, annotators: int = 1) -> ReviewExport:
    from invscale.label_studio import write_task_set

    frame, added, updated, kept_text = update_review(work)
    task_set = review_task_set(frame, annotators)
    paths = write_task_set(task_set, Path(work) / REVIEW_TASKS)
    return ReviewExport(added, len(task_set.tasks), updated, kept_text, paths, task_set)


@dataclass(frozen=True)
class ReviewImport:
    decided: int  # rows decided now
    kept: int  # of those, kept
    conflicts: list[str]  # "scene: why", left undecided
    differing: int  # decided rows the annotations disagree with (left as they were)
    unknown: list[str]  # annotated item keys that are no scene of review.csv
    undecided: int  # rows still undecided


def choice_text(value: object) -> str | None:
    return value if isinstance(value, str) else None  # a control without an answer reads as None or NaN


def decisions(annotations: pd.DataFrame) -> tuple[dict[str, dict], dict[str, str]]:
    """({scene: decided row values}, {scene: why undecided}) from an annotations frame with the controls."""
    decided, conflicts = {}, {}
    answered = annotations[~annotations["skipped"].astype(bool)]
    for scene, group in answered.groupby("item_key", sort=False):
        answers = set()
        for row in group.itertuples():
            if row.label not in (KEEP, REJECT):
                conflicts[scene] = f"annotation {row.annotation_id}: answer {row.label!r} is not keep or reject"
                break
            values = (row.label, *(choice_text(getattr(row, control)) if row.label == KEEP else None for control in CONTROLS))
            if row.label == KEEP and None in values:
                missing = [c for c, v in zip(CONTROLS, values[1:]) if v is None]
                conflicts[scene] = f"annotation {row.annotation_id}: kept without {' and '.join(missing)}"
                break
            answers.add(values)
        else:
            if len(answers) > 1:
                conflicts[scene] = "annotators disagree: " + " | ".join(
                    ", ".join(value for value in answer if value) for answer in sorted(answers, key=str))
                continue
            label, anthropomorphize, style, domain = answers.pop()
            characteristic = DOMAIN_LABELS.get(domain, domain) if domain else ""
            decided[scene] = {"keep": YES if label == KEEP else NO,
                              "anthropomorphize": "" if anthropomorphize is None else
                              (YES if anthropomorphize == ANTHROPOMORPHIC else NO),
                              "style": style or "", "characteristic": characteristic,
                              "category": CATEGORY_OF.get(characteristic, ""),
                              "annotators": ",".join(str(a) for a in sorted(set(group["annotator"])))}
    return decided, conflicts


def import_review(work: Path, annotations: pd.DataFrame) -> ReviewImport:
    """Fill review.csv's undecided rows from Label Studio annotations (annotations_from_export or
    annotations_from_server with controls=CONTROLS)."""
    review = read_review(work).drop(columns="line")
    decided, conflicts = decisions(annotations)
    rows = {row["scene_id"]: row for row in review.to_dict("records")}
    unknown = sorted(set(annotations["item_key"]) - set(rows))
    now = kept = differing = 0
    for scene, values in decided.items():
        row = rows.get(scene)
        if row is None:
            continue
        if row["keep"]:
            differing += any(row[name] != value for name, value in values.items() if name != "annotators")
            continue
        row.update(values)
        row["note"] = ""
        now += 1
        kept += values["keep"] == YES
    for scene, why in conflicts.items():
        if scene in rows and not rows[scene]["keep"]:
            rows[scene]["note"] = why
    frame = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    write_csv(frame, Path(work) / REVIEW, COLUMNS)
    return ReviewImport(now, kept, [f"{scene}: {why}" for scene, why in conflicts.items()], differing, unknown,
                        int((frame["keep"] == "").sum()))
