"""Reading the LLM's answers to Tables 19 and 21 strictly: a parser raises ValueError saying what is wrong,
so that invscale.judges asks again (up to the LLM's parse_retries) and then counts the answer unparsed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```(?:json)?\s*\n(.*)\n\s*```", re.DOTALL)


def json_object(answer: str) -> dict:
    """The JSON object an answer holds: the whole answer, or the whole content of one ```json fence."""
    text = answer.strip()
    fenced = _FENCE.fullmatch(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not a JSON object ({error.msg} at character {error.pos})") from None
    if not isinstance(value, dict):
        raise ValueError(f"not a JSON object but a {type(value).__name__}")
    return value


def _sentence(value: object, where: str) -> str:
    """Table 19 prints each sentence as a one-element list; a bare string is the same sentence."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where} must be one sentence (a string or a list of one string), got {value!r}")
    return " ".join(value.split())


@dataclass(frozen=True)
class ScenePair:
    set_id: object  # the model's id, as given
    common: str
    uncommon: str


def scene_pairs(answer: str) -> list[ScenePair]:
    """Table 19's output: {"verb": ..., "scene_sets": [{"id", "common": [..], "uncommon": [..]}, ...]}."""
    data = json_object(answer)
    sets = data.get("scene_sets")
    if not isinstance(sets, list) or not sets:
        raise ValueError("no non-empty list 'scene_sets'")
    pairs, ids = [], set()
    for number, item in enumerate(sets, 1):
        where = f"scene_sets[{number}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where} is not an object")
        set_id = item.get("id")
        if isinstance(set_id, (dict, list)) or set_id in ids:
            raise ValueError(f"{where}: id {set_id!r} is not a single unique value")
        ids.add(set_id)
        common, uncommon = _sentence(item.get("common"), f"{where}.common"), _sentence(item.get("uncommon"),
                                                                                        f"{where}.uncommon")
        if common.lower() == uncommon.lower():
            raise ValueError(f"{where}: the common and the uncommon sentence are the same")
        pairs.append(ScenePair(set_id, common, uncommon))
    return pairs


def descriptions(answer: str, count: int) -> list[str]:
    """Table 21's output for `count` scene sets numbered 1..count: one non-empty
    uncommon_image_description per scene_id, every id exactly once, in id order."""
    data = json_object(answer)
    records = data.get("records")
    if not isinstance(records, list):
        raise ValueError("no list 'records'")
    found: dict[int, str] = {}
    for number, record in enumerate(records, 1):
        where = f"records[{number}]"
        if not isinstance(record, dict):
            raise ValueError(f"{where} is not an object")
        scene_id = record.get("scene_id")
        if isinstance(scene_id, str) and scene_id.strip().isdigit():
            scene_id = int(scene_id)
        if isinstance(scene_id, bool) or not isinstance(scene_id, int) or not 1 <= scene_id <= count:
            raise ValueError(f"{where}: scene_id {scene_id!r} is not one of the ids 1..{count} asked about")
        if scene_id in found:
            raise ValueError(f"{where}: scene_id {scene_id} is described twice")
        text = record.get("uncommon_image_description")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}: no uncommon_image_description")
        found[scene_id] = text.strip()
    missing = [number for number in range(1, count + 1) if number not in found]
    if missing:
        raise ValueError(f"no description for scene_id(s) {missing}")
    return [found[number] for number in range(1, count + 1)]
