"""Stage 4, detailed scene descriptions (Section 3.2 step 3, Table 21): the kept scenes of a verb, with
their anthropomorphize and style settings, sent together (at most `group_size` per call) and described
one by one for the image model (the paper: GPT-4o-mini, temperature 0.7).

WORK/descriptions.jsonl, one kept scene a line: scene_id, verb, common_text, uncommon_text,
anthropomorphize, style (what the description was made from), description, llm, llm_key. A person may
edit the description. A scene is described again when its review row changes (its sentences, settings or
verb differ from what its line records); a rerun otherwise asks only for the kept scenes without a line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from invscale.judges import CallEstimate, JudgeConfig, JudgeRequest, estimate_calls, parse_error, run_judges
from invscale.judges.batch import OnCall

from . import answers, prompts
from .files import DESCRIPTIONS, LLM_CACHE, YES, BuildError, read_jsonl, text_field, write_jsonl
from .review import kept_scenes

INPUTS = ("verb", "common_text", "uncommon_text", "anthropomorphize", "style")
GROUP_SIZE = prompts.PER_VERB  # scenes per call: the paper sends a verb's reviewed scene sets together


def read_descriptions(work: Path) -> dict[str, dict]:
    """WORK/descriptions.jsonl by scene_id, checked."""
    path = Path(work) / DESCRIPTIONS
    if not path.exists():
        return {}
    records = {}
    for record in read_jsonl(path, ("scene_id", "description", *INPUTS)):
        where = f"{path}:{record['line']}"
        record["description"] = text_field(record, "description", where)
        if record["scene_id"] in records:
            raise BuildError(f"{where}: scene_id {record['scene_id']!r} is also on line "
                             f"{records[record['scene_id']]['line']}")
        records[record["scene_id"]] = record
    return records


def _inputs(scene: dict) -> dict:
    return {name: scene[name] for name in INPUTS}


def described_scenes(work: Path) -> tuple[list[dict], list[dict]]:
    """(kept scenes with a current description: the review row plus `description`, the kept scenes still to
    describe), in review order."""
    done, todo = [], []
    stored = read_descriptions(work)
    for scene in kept_scenes(work).to_dict("records"):
        record = stored.get(scene["scene_id"])
        if record is not None and _inputs(record) == _inputs(scene):
            done.append({**scene, "description": record["description"], "llm": record.get("llm"),
                         "llm_key": record.get("llm_key")})
        else:
            todo.append(scene)
    return done, todo


def _prompt_scene(scene: dict) -> dict:
    return {"common_text": scene["common_text"], "uncommon_text": scene["uncommon_text"],
            "anthropomorphize": scene["anthropomorphize"] == YES, "style": scene["style"]}


def description_groups(scenes: list[dict], group_size: int = GROUP_SIZE) -> list[tuple[list[dict], JudgeRequest]]:
    """The scenes by verb (in order of first appearance), cut into groups of at most group_size, each with
    its Table 21 request."""
    if group_size < 1:
        raise BuildError(f"the group size must be positive, got {group_size}")
    by_verb: dict[str, list[dict]] = {}
    for scene in scenes:
        by_verb.setdefault(scene["verb"], []).append(scene)
    groups = []
    for verb, members in by_verb.items():
        for start in range(0, len(members), group_size):
            group = members[start:start + group_size]
            shown = [_prompt_scene(scene) for scene in group]
            groups.append((group, JudgeRequest(prompts.description_user(verb, shown),
                                               system=prompts.description_system(verb, shown))))
    return groups


def estimate_descriptions(work: Path, llm: JudgeConfig, group_size: int = GROUP_SIZE) -> CallEstimate:
    _, todo = described_scenes(work)
    requests = [request for _, request in description_groups(todo, group_size)]
    return estimate_calls([(llm, requests)], Path(work) / LLM_CACHE)[0]


@dataclass(frozen=True)
class DescribeResult:
    asked: int  # scenes asked about now
    made: int  # calls made now
    described: int  # scenes given a description now
    unparsed: list[str]  # "verb 'x' scenes a, b: why"
    pending: int  # kept scenes still without a current description


def describe_scenes(work: Path, llm: JudgeConfig, group_size: int = GROUP_SIZE,
                    on_call: OnCall | None = None) -> DescribeResult:
    work = Path(work)
    _, todo = described_scenes(work)
    groups = description_groups(todo, group_size)
    stored = read_descriptions(work)
    made, unparsed = 0, []
    # the parser checks the answer covers exactly the scenes asked about, so requests are run by group size
    for size in sorted({len(group) for group, _ in groups}):
        sized = [(group, request) for group, request in groups if len(group) == size]
        parse = partial(answers.descriptions, count=size)
        run = run_judges([(llm, [request for _, request in sized])], work / LLM_CACHE, parse=parse,
                         on_call=on_call)[llm.name]
        made += run.made
        for (group, _), key in zip(sized, run.keys):
            record = run.cache.answers[key]
            error = parse_error(record, parse)
            if error:
                unparsed.append(f"verb {group[0]['verb']!r} scenes {', '.join(s['scene_id'] for s in group)}: {error}")
                continue
            for scene, text in zip(group, parse(record["answer"])):
                stored[scene["scene_id"]] = {"scene_id": scene["scene_id"], **_inputs(scene), "description": text,
                                             "llm": llm.name, "llm_key": key}
    write_jsonl(stored.values(), work / DESCRIPTIONS)
    _, pending = described_scenes(work)
    return DescribeResult(len(todo), made, len(todo) - len(pending), unparsed, len(pending))
