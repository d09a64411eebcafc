"""Label Studio (the annotation server, pip `label-studio`) through its official client, label-studio-sdk.

A task set (task_sets.py) becomes a Label Studio project: one task per item, its data holding the
opaque `item_key` and what the annotator is shown (images as data URIs, or as files under a URL
prefix), and a labelling config whose one choice control is named CONTROL. `write_task_set` writes
the tasks JSON that Label Studio's import accepts, the config and the items file; `create_project`
creates the project on a running server and imports the tasks.

Finished annotations come back as one tidy frame (ANNOTATION_COLUMNS), read either from a running
server (`annotations_from_server`) or from a file written by Label Studio's "Export > JSON"
(`annotations_from_export`); both parse the same task records:
  project, task_id, annotation_id, item_key
  annotator         Label Studio's user id of the annotation's author (`completed_by`)
  annotator_email   the author's e-mail where known (the server's user list; an export file only
                    carries it when its `completed_by` is an expanded user object), else empty
  label             the one choice of CONTROL; empty when skipped
  skipped           the annotator pressed Skip (`was_cancelled`): an answer withheld, not a label
  lead_time         seconds from showing the task to submitting it, as Label Studio measures it
  created_at        when the annotation was submitted (UTC)
Drafts (unsubmitted work) are not annotations and are not read. A task set whose config has further
choice controls (a form of several questions, e.g. CAIT construction's scene review) names them, and
each becomes a column of its own holding its one choice, empty where the annotator was not asked (a
control shown only for some answers of CONTROL) or skipped.

The server's address and key come only from the environment (URL_VARIABLE, KEY_VARIABLE); the key
may be a legacy token or a personal access token (the SDK refreshes the latter). Nothing writes them.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import pandas as pd

URL_VARIABLE = "LABEL_STUDIO_URL"
KEY_VARIABLE = "LABEL_STUDIO_API_KEY"
CONTROL = "label"  # the name of the choice control in every labelling config of task_sets.py
IMPORT_BATCH = 100  # tasks per import request: data-URI images make large requests
ANNOTATION_COLUMNS = ["project", "task_id", "annotation_id", "item_key", "annotator", "annotator_email", "label",
                      "skipped", "lead_time", "created_at"]


def choices_xml(labels, name: str = CONTROL, to_name: str = "image", hints: dict[str, str] | None = None,
                indent: str = "  ") -> str:
    """A single-choice, required <Choices> control of a labelling config, one <Choice> per label (with its
    hint when `hints` has one)."""
    lines = [f'{indent}<Choices name="{name}" toName="{to_name}" choice="single-radio" required="true">']
    for label in labels:
        hint = f" hint={quoteattr(hints[label])}" if hints else ""
        lines.append(f"{indent}  <Choice value={quoteattr(label)}{hint}/>")
    return "\n".join([*lines, f"{indent}</Choices>"])


class LabelStudioError(ValueError):
    """Unusable server answer, export file or task; the message names the project, task or file."""


@dataclass(frozen=True)
class TaskSet:
    """What one Label Studio project needs. `tasks` are the task data records (each with `item_key`);
    `items` maps each item key to what the statistics need and annotators must not see."""

    name: str
    title: str
    label_config: str
    labels: tuple[str, ...]
    tasks: list[dict]
    items: pd.DataFrame
    annotators_per_task: int


@dataclass(frozen=True)
class ImageOutput:
    """Where task images go: inline as data URIs (no folder), or written under `folder` and referenced
    as `url_prefix` + file name (for images served by a web server or Label Studio's local storage)."""

    folder: Path | None = None
    url_prefix: str = ""

    def reference(self, image: Any, name: str, where: str) -> str:
        data, image_format = image_bytes(image, where)
        if self.folder is None:
            return f"data:image/{image_format};base64,{base64.b64encode(data).decode('ascii')}"
        extension = "jpg" if image_format == "jpeg" else image_format
        path = Path(self.folder) / f"{name}.{extension}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return f"{self.url_prefix}{path.name}"


def image_bytes(image: Any, where: str) -> tuple[bytes, str]:
    """The encoded bytes and format ("png", "jpeg", ...) of a PIL image, a file path, raw bytes or a
    datasets image dict ({'bytes', 'path'})."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(image, Image.Image):
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue(), "png"
    if isinstance(image, dict) and (image.get("bytes") or image.get("path")):
        image = image.get("bytes") or image["path"]
    if isinstance(image, (str, Path)):
        if not Path(image).is_file():
            raise LabelStudioError(f"{where}: image file {image} does not exist")
        data = Path(image).read_bytes()
    elif isinstance(image, bytes):
        data = image
    else:
        raise LabelStudioError(f"{where}: image is {type(image).__name__}, not a PIL image, path, bytes or image dict")
    try:
        with Image.open(io.BytesIO(data)) as opened:
            image_format = (opened.format or "").lower()
    except (UnidentifiedImageError, OSError):
        raise LabelStudioError(f"{where}: the image data is not an image file") from None
    return data, image_format


def write_task_set(task_set: TaskSet, out: Path) -> dict[str, Path]:
    """OUT/<name>_tasks.json (Label Studio's import format), <name>_label_config.xml, <name>_items.csv."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {kind: out / f"{task_set.name}_{kind}" for kind in ("tasks.json", "label_config.xml", "items.csv")}
    paths["tasks.json"].write_text(json.dumps([{"data": data} for data in task_set.tasks], ensure_ascii=False))
    paths["label_config.xml"].write_text(task_set.label_config)
    task_set.items.to_csv(paths["items.csv"], index=False)
    return paths


# ---------------------------------------------------------------------------------------------- server
def _require_client() -> None:
    """The SDK is optional (not a dependency: it pins packages that clash with lmms-eval's): say how to get it."""
    try:
        import httpx  # noqa: F401
        import label_studio_sdk  # noqa: F401
    except ImportError as error:
        raise LabelStudioError(
            f"the Label Studio client cannot be imported ({error.name or error}): install it with `bash "
            "scripts/setup_label_studio.sh` (label-studio-sdk 2.1.2 without its dependencies, and the `labelstudio` "
            "extra: pip install 'vlm-inverse-scaling[labelstudio]')") from None


def client_from_environment():
    """A label_studio_sdk.LabelStudio client for the server named by the environment."""
    _require_client()
    from label_studio_sdk import LabelStudio

    missing = [name for name in (URL_VARIABLE, KEY_VARIABLE) if not os.environ.get(name)]
    if missing:
        raise LabelStudioError(f"set {' and '.join(missing)} to reach a Label Studio server "
                               f"(the URL, and a legacy token or personal access token from Account & Settings)")
    return LabelStudio(base_url=os.environ[URL_VARIABLE], api_key=os.environ[KEY_VARIABLE])


def _server_call(where: str, call, *args, **kwargs):
    """Run one SDK call; its failure becomes a LabelStudioError naming `where` and the server's reason."""
    import httpx
    from label_studio_sdk.core.api_error import ApiError

    try:
        return call(*args, **kwargs)
    except ApiError as error:
        body = error.body if isinstance(error.body, dict) else {"detail": error.body}
        reason = body.get("detail") or body
        if body.get("validation_errors"):
            reason = f"{reason}: {body['validation_errors']}"
        raise LabelStudioError(f"{where}: Label Studio answered {error.status_code} ({reason})") from None
    except httpx.HTTPError as error:
        raise LabelStudioError(f"{where}: cannot reach Label Studio ({type(error).__name__}: {error})") from None


def create_project(client, task_set: TaskSet) -> int:
    """Create the project (every task shown to `annotators_per_task` annotators) and import its tasks;
    returns the project id."""
    project = _server_call(
        f"creating project {task_set.title!r}", client.projects.create, title=task_set.title,
        label_config=task_set.label_config, maximum_annotations=task_set.annotators_per_task,
        overlap_cohort_percentage=100, show_skip_button=True)
    for start in range(0, len(task_set.tasks), IMPORT_BATCH):
        batch = [{"data": data} for data in task_set.tasks[start:start + IMPORT_BATCH]]
        answer = _server_call(f"project {project.id}: importing tasks {start + 1}-{start + len(batch)}",
                              client.projects.import_tasks, project.id, request=batch)
        if answer.task_count != len(batch):
            raise LabelStudioError(f"project {project.id}: Label Studio imported {answer.task_count} of "
                                   f"{len(batch)} tasks {start + 1}-{start + len(batch)}")
    return project.id


def annotations_from_server(client, project_id: int, controls: Sequence[str] = ()) -> pd.DataFrame:
    """Every submitted or skipped annotation of a project, with the authors' e-mails (and a column per
    further choice control named in `controls`)."""
    where = f"project {project_id}"
    users = {user.id: user.email for user in _server_call(f"{where}: listing users", client.users.list)}
    pages = _server_call(f"{where}: listing tasks", client.tasks.list, project=project_id, fields="all")
    tasks = [{"id": task.id, "data": task.data, "annotations": task.annotations}
             for task in _server_call(f"{where}: reading tasks", list, pages)]
    return annotations_frame(tasks, where, users, project_id, controls)


def annotations_from_export(path: Path, controls: Sequence[str] = ()) -> pd.DataFrame:
    """The annotations of a Label Studio JSON export file (a list of tasks with their annotations), with a
    column per further choice control named in `controls`."""
    path = Path(path)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise LabelStudioError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None
    except UnicodeDecodeError as error:
        raise LabelStudioError(f"{path}: byte 0x{error.object[error.start]:02x} at offset {error.start} is not UTF-8 "
                               f"(Label Studio exports UTF-8 JSON)") from None
    if not isinstance(tasks, list):
        raise LabelStudioError(f"{path}: a Label Studio JSON export is a list of tasks, got {type(tasks).__name__}")
    return annotations_frame(tasks, str(path), controls=controls)


def annotations_frame(tasks: Iterable[dict], where: str, users: dict[int, str] | None = None,
                      project: int | None = None, controls: Sequence[str] = ()) -> pd.DataFrame:
    """ANNOTATION_COLUMNS (then a column per further choice control in `controls`) from task records as
    Label Studio serialises them ({id, data, annotations})."""
    if CONTROL in controls or len(set(controls)) < len(controls):
        raise ValueError(f"further controls must be distinct and other than {CONTROL!r}, got {list(controls)}")
    users = users or {}
    records, seen_keys, seen_ids = [], {}, set()
    for number, task in enumerate(tasks, 1):
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict) or "id" not in task:
            raise LabelStudioError(f"{where}: record {number} is not a task with 'id' and 'data'")
        task_where = f"{where}: task {task['id']}"
        if task["id"] in seen_ids:
            raise LabelStudioError(f"{task_where}: record {number} repeats the id of an earlier task")
        seen_ids.add(task["id"])
        key = task["data"].get("item_key")
        if not isinstance(key, str) or not key:
            raise LabelStudioError(f"{task_where}: its data has no 'item_key' (not a task exported by postprocess.human)")
        if key in seen_keys:
            raise LabelStudioError(f"{task_where}: item_key {key!r} is also the key of task {seen_keys[key]}")
        seen_keys[key] = task["id"]
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise LabelStudioError(f"{task_where}: 'annotations' is {type(annotations).__name__}, not a list")
        for number_in_task, annotation in enumerate(annotations, 1):
            if not isinstance(annotation, dict):
                raise LabelStudioError(f"{task_where}: annotation {number_in_task} is {type(annotation).__name__}, "
                                       f"not an object")
            records.append(_annotation_record(annotation, task, key, f"{task_where} annotation "
                                              f"{annotation.get('id')}", users, project, controls))
    frame = pd.DataFrame(records, columns=[*ANNOTATION_COLUMNS, *controls])
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    return frame


def _annotation_record(annotation: dict, task: dict, key: str, where: str, users: dict[int, str],
                       project: int | None, controls: Sequence[str]) -> dict:
    author = annotation.get("completed_by")
    email = ""
    if isinstance(author, dict):  # exports made with expanded users
        author, email = author.get("id"), author.get("email") or ""
    if not isinstance(author, int):
        raise LabelStudioError(f"{where}: 'completed_by' is {author!r}, not a user id")
    skipped = bool(annotation.get("was_cancelled"))
    result = annotation.get("result") or []
    label = None if skipped else _choice(result, where)
    lead_time = annotation.get("lead_time")
    if lead_time is not None and not (isinstance(lead_time, (int, float)) and math.isfinite(lead_time) and lead_time >= 0):
        raise LabelStudioError(f"{where}: 'lead_time' is {lead_time!r}, not a number of seconds")
    created_at = annotation.get("created_at")
    try:
        pd.Timestamp(created_at) if created_at is not None else None
    except (ValueError, TypeError):
        raise LabelStudioError(f"{where}: 'created_at' is {created_at!r}, not a date and time") from None
    return {
        "project": project if project is not None else annotation.get("project", task.get("project")),
        "task_id": task["id"], "annotation_id": annotation.get("id"), "item_key": key, "annotator": author,
        "annotator_email": email or users.get(author, ""), "label": label, "skipped": skipped,
        "lead_time": math.nan if lead_time is None else float(lead_time), "created_at": annotation.get("created_at"),
        **{control: None if skipped else _choice(result, where, control, required=False) for control in controls},
    }


def _choice(result: list, where: str, control: str = CONTROL, required: bool = True) -> str | None:
    """The single choice of a choice control in an annotation's result (None for an optional control
    without a result)."""
    choices = [item for item in result if isinstance(item, dict) and item.get("from_name") == control
               and item.get("type") == "choices"]
    if not choices and not required:
        return None
    if len(choices) != 1:
        raise LabelStudioError(f"{where}: {len(choices)} results of the choice control {control!r}, expected 1")
    values = (choices[0].get("value") or {}).get("choices") or []
    if len(values) != 1 or not isinstance(values[0], str):
        raise LabelStudioError(f"{where}: control {control!r} holds {values!r}, expected exactly one choice")
    return values[0]


def write_annotations(frame: pd.DataFrame, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def read_annotations(path: Path) -> pd.DataFrame:
    """An annotations CSV written by write_annotations (the `human-import` output)."""
    try:
        frame = pd.read_csv(path, dtype={"item_key": str, "label": object, "annotator_email": str})
    except (ValueError, UnicodeDecodeError) as error:  # pandas' parser errors are ValueErrors
        raise LabelStudioError(f"{path}: not a readable annotations CSV ({str(error).strip()[:200]})") from None
    missing = [column for column in ANNOTATION_COLUMNS if column not in frame]
    if missing:
        raise LabelStudioError(f"{path}: missing column(s) {missing}; expected {ANNOTATION_COLUMNS}")
    frame["annotator_email"] = frame["annotator_email"].fillna("")
    dates = pd.to_datetime(frame["created_at"], utc=True, errors="coerce", format="ISO8601")
    bad = frame["created_at"].notna() & dates.isna()
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise LabelStudioError(f"{path}: line {row + 2}: created_at {frame['created_at'].iloc[row]!r} is not a date "
                               f"and time")
    frame["created_at"] = dates
    return frame[ANNOTATION_COLUMNS]
