"""Stage 2, scene pairs from the LLM (Section 3.2 step 1, Table 19): for each verb of the library, a
common sentence and its subject-object inversion, `per_verb` pairs asked per call (the paper: 10 from
GPT-4o-mini at temperature 0.7), `samples` calls per verb (each an independent draw, cached apart).

WORK/scenes.jsonl, one scene a line: scene_id (<verb>-<sample>-<nn>), verb, sample, set_id (the model's
id), common_text, uncommon_text, llm, llm_key (the answer in WORK/llm_cache/<llm>.jsonl). A person may edit
the sentences or add scenes by hand (scene_id, verb, common_text, uncommon_text); rejecting a scene is
the review's job. A rerun asks only for the (verb, sample) pairs the file does not hold yet and keeps
every line it holds as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from invscale.judges import CallEstimate, JudgeConfig, JudgeRequest, estimate_calls, parse_error, run_judges
from invscale.judges.batch import OnCall

from . import answers, prompts
from .files import LLM_CACHE, SCENES, BuildError, read_jsonl, slug, text_field, write_jsonl
from .verbs import library, read_verbs

REQUIRED = ("scene_id", "verb", "common_text", "uncommon_text")


def read_scenes(work: Path) -> list[dict]:
    """WORK/scenes.jsonl checked: unique scene ids, two different non-empty sentences per scene."""
    path = Path(work) / SCENES
    if not path.exists():
        return []
    records, seen = read_jsonl(path, REQUIRED), {}
    for record in records:
        where = f"{path}:{record['line']}"
        for name in REQUIRED:
            record[name] = text_field(record, name, where)
        if record["scene_id"] in seen:
            raise BuildError(f"{where}: scene_id {record['scene_id']!r} is also on line {seen[record['scene_id']]}")
        seen[record["scene_id"]] = record["line"]
        if record["common_text"].lower() == record["uncommon_text"].lower():
            raise BuildError(f"{where}: common_text and uncommon_text are the same sentence")
    return records


def scene_request(verb: str, sample: int, per_verb: int) -> JudgeRequest:
    return JudgeRequest(prompts.scene_pairs_user(verb), system=prompts.scene_pairs_system(per_verb), sample=sample)


def pending_requests(work: Path, samples: int, per_verb: int) -> list[tuple[str, int, JudgeRequest]]:
    if samples < 1 or per_verb < 1:
        raise BuildError(f"samples and scene pairs per verb must be positive, got {samples} and {per_verb}")
    verbs = library(read_verbs(work))
    if not verbs:
        raise BuildError(f"{Path(work) / 'verbs.csv'}: no verb has all four principles judged yes yet "
                         "(judge them in the file, or run `verbs` with a list and --principles-met)")
    done = {(record["verb"], record.get("sample")) for record in read_scenes(work)}
    return [(verb, sample, scene_request(verb, sample, per_verb))
            for verb in verbs for sample in range(samples) if (verb, sample) not in done]


def estimate_scenes(work: Path, llm: JudgeConfig, samples: int = 1, per_verb: int = prompts.PER_VERB) -> CallEstimate:
    """The calls this stage would make now, and their estimated cost; makes none."""
    todo = pending_requests(work, samples, per_verb)
    return estimate_calls([(llm, [request for _, _, request in todo])], Path(work) / LLM_CACHE)[0]


@dataclass(frozen=True)
class ScenesResult:
    asked: int  # (verb, sample) pairs asked for now (cached answers included)
    made: int  # calls made now
    scenes: int  # scenes added to the file
    unparsed: list[str]  # "verb 'x' sample n: why", answers that did not parse after the retries
    total: int  # scenes in the file


def make_scenes(work: Path, llm: JudgeConfig, samples: int = 1, per_verb: int = prompts.PER_VERB,
                on_call: OnCall | None = None) -> ScenesResult:
    """Ask for the scene pairs of every library verb and sample the file lacks; append them."""
    work = Path(work)
    todo = pending_requests(work, samples, per_verb)
    existing = read_scenes(work)
    if not todo:
        return ScenesResult(0, 0, 0, [], len(existing))
    run = run_judges([(llm, [request for _, _, request in todo])], work / LLM_CACHE, parse=answers.scene_pairs,
                     on_call=on_call)[llm.name]
    added, unparsed = [], []
    for (verb, sample, _), key in zip(todo, run.keys):
        record = run.cache.answers[key]
        error = parse_error(record, answers.scene_pairs)
        if error:
            unparsed.append(f"verb {verb!r} sample {sample}: {error}")
            continue
        for position, pair in enumerate(answers.scene_pairs(record["answer"]), 1):
            added.append({"scene_id": f"{slug(verb)}-{sample}-{position:02d}", "verb": verb, "sample": sample,
                          "set_id": pair.set_id, "common_text": pair.common, "uncommon_text": pair.uncommon,
                          "llm": llm.name, "llm_key": key})
    taken = {record["scene_id"] for record in existing}
    clashes = [record["scene_id"] for record in added if record["scene_id"] in taken]
    if clashes:
        raise BuildError(f"{work / SCENES}: scene_id {clashes[0]!r} is already used by a line added by hand; "
                         "rename that line's scene_id")
    write_jsonl([*existing, *added], work / SCENES)
    return ScenesResult(len(todo), run.made, len(added), unparsed, len(existing) + len(added))
