"""The stages in order over one working folder: what is done, what is next, and a run of every automatic
stage with whatever the people have decided so far.

`run` makes the scene pairs, adds new scenes to the review, describes the kept scenes, makes their images,
adds new images to the filtering and assembles the CAIT folder from the kept images; it then lists the
human work pending (scenes to review, images to filter). Rerun it after each import: every stage skips
what is done. `estimate` is the dry run: the LLM calls and images a run would make now, with their
cost, and upper bounds for what the pending reviews may still add (were every scene kept).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from invscale.label_studio import ImageOutput
from invscale.judges import JudgeConfig

from . import prompts
from .assemble import assemble, kept_images
from .describe import GROUP_SIZE, describe_scenes, described_scenes, estimate_descriptions
from .files import FILTER, REVIEW, VERBS, YES, BuildError
from .filtering import export_filter, proportions, read_filter
from .generators import GeneratorConfig
from .images import current_images, estimate_images, generate_images
from .review import export_review, read_review
from .scenes import estimate_scenes, make_scenes, pending_requests, read_scenes
from .verbs import PRINCIPLES, library, read_verbs

Say = Callable[[str], None]


@dataclass(frozen=True)
class BuildSettings:
    llm: JudgeConfig | None = None
    generator: GeneratorConfig | None = None
    samples: int = 1  # Table 19 calls per verb
    per_verb: int = prompts.PER_VERB  # scene pairs asked per call
    group_size: int = GROUP_SIZE  # scenes per Table 21 call
    candidates: int = 1  # images per scene
    retry_refused: bool = False
    size: int | None = None  # target number of scenes (Table 1 quotas)
    seed: int = 0
    annotators: int = 1
    image_output: ImageOutput = ImageOutput()


def status(work: Path, size: int | None = None) -> list[str]:
    """One line per stage: what its file holds."""
    work = Path(work)
    lines = []
    verbs = read_verbs(work)
    unjudged = int((verbs[list(PRINCIPLES)] == "").any(axis=1).sum()) if len(verbs) else 0
    lines.append(f"verbs:        {len(verbs)} in {VERBS}, {len(library(verbs))} in the library (all four principles "
                 f"yes), {unjudged} not fully judged")
    scenes = read_scenes(work)
    lines.append(f"scenes:       {len(scenes)} scene pairs from {len({s['verb'] for s in scenes})} verbs")
    review = read_review(work)
    reviewed = review[review["keep"] != ""]
    missing = len({s["scene_id"] for s in scenes} - set(review["scene_id"]))
    lines.append(f"review:       {int((review['keep'] == YES).sum())} kept, {int((review['keep'] == 'no').sum())} "
                 f"rejected, {len(review) - len(reviewed) + missing} to review")
    done, todo = described_scenes(work) if len(review) else ([], [])
    lines.append(f"descriptions: {len(done)} kept scenes described, {len(todo)} to describe")
    if (work / FILTER).exists() or (work / "images.jsonl").exists():
        table = proportions(work, size)
        filtered = read_filter(work)
        lines.append(f"images:       {len(filtered)} in {FILTER}: {int((filtered['keep'] == YES).sum())} kept, "
                     f"{int((filtered['keep'] == 'no').sum())} rejected, {int((filtered['keep'] == '').sum())} to filter")
        lines.append("proportions:  " + "; ".join(f"{row.characteristic} {row.scenes} ({row.share:.1%} vs "
                                                  f"{row.table1_share:.2%}, missing {row.missing})"
                                                  for row in table.itertuples()))
    folder = work / "cait" / "cait.jsonl"
    records = sum(1 for line in folder.read_text(encoding="utf-8").splitlines() if line.strip()) if folder.exists() else 0
    lines.append(f"cait:         {records} records in {work / 'cait'}" if folder.exists() else "cait:         not assembled")
    return lines


def run(work: Path, settings: BuildSettings, say: Say = print) -> None:
    """Every automatic stage once, in order (module docstring)."""
    work = Path(work)
    if not (work / VERBS).exists():
        raise BuildError(f"{work / VERBS}: no verbs yet; start with `cait-build verbs {work} --verbs FILE` "
                         "(or --verbnet)")
    if settings.llm is None or settings.generator is None:
        raise BuildError("a run needs an LLM and an image generator (--config FILE)")
    result = make_scenes(work, settings.llm, settings.samples, settings.per_verb)
    say(f"scenes: {result.scenes} added ({result.made} call(s) made), {result.total} in total")
    for line in result.unparsed:
        say(f"  unparsed: {line}")
    exported = export_review(work, settings.annotators)
    say(f"review: {exported.added} scene(s) added to {REVIEW}; {exported.undecided} to review "
        f"({exported.paths['tasks.json']})")
    described = describe_scenes(work, settings.llm, settings.group_size)
    say(f"descriptions: {described.described} kept scene(s) described now ({described.made} call(s) made)")
    for line in described.unparsed:
        say(f"  unparsed: {line}")
    images = generate_images(work, settings.generator, settings.candidates, settings.retry_refused)
    say(f"images: {images.made} made now, {images.images} needed, {images.refused} refused"
        + (f", {images.truncated} with prompts cut by the text encoder" if images.truncated else ""))
    to_filter = 0
    if current_images(work):  # not when every image was refused
        filtered = export_filter(work, settings.size, settings.image_output, settings.annotators)
        to_filter = filtered.undecided
        say(f"filtering: {filtered.added} image(s) added to {FILTER}; {filtered.undecided} to filter "
            f"({filtered.paths['tasks.json']})" + (f", {filtered.quota_full} left out: quota filled"
                                                   if filtered.quota_full else ""))
        if kept_images(work):
            built = assemble(work, settings.size, settings.seed)
            say(f"cait: {built.records} record(s) in {built.folder}")
    pending = []
    if exported.undecided:
        pending.append(f"{exported.undecided} scene(s) to review")
    if to_filter:
        pending.append(f"{to_filter} image(s) to filter")
    say("pending human work: " + ("; ".join(pending) + " (import the annotations, then run again)"
                                  if pending else "none"))


def estimate(work: Path, settings: BuildSettings) -> list[str]:
    """The dry run: one line per stage (module docstring). Makes no call."""
    work = Path(work)
    if settings.llm is None or settings.generator is None:
        raise BuildError("a dry run needs an LLM and an image generator (--config FILE)")
    lines = []
    scenes_estimate = estimate_scenes(work, settings.llm, settings.samples, settings.per_verb)
    lines.append(f"scene pairs  (Table 19) {scenes_estimate.line()}")
    # scenes that may still be kept: asked for now, not yet reviewed, or undecided
    pending: dict[str, int] = {}
    for verb, _, _ in pending_requests(work, settings.samples, settings.per_verb):
        pending[verb] = pending.get(verb, 0) + settings.per_verb
    review = read_review(work)
    reviewed = dict(zip(review["scene_id"], review["keep"]))
    for scene in read_scenes(work):
        if not reviewed.get(scene["scene_id"]):
            pending[scene["verb"]] = pending.get(scene["verb"], 0) + 1
    if len(review):
        described = estimate_descriptions(work, settings.llm, settings.group_size)
        lines.append(f"descriptions (Table 21) {described.line()}")
        kept_undescribed = len(described_scenes(work)[1])
    else:
        kept_undescribed = 0
    later_calls = sum(math.ceil(count / settings.group_size) for count in pending.values())
    later_scenes = sum(pending.values())
    lines.append(f"descriptions after review: at most {later_calls} more call(s) for up to {later_scenes} scene(s)")
    images = estimate_images(work, settings.generator, settings.candidates, settings.retry_refused)
    lines.append(f"images       (Table 22) {images.line()}")
    bound = (later_scenes + kept_undescribed) * settings.candidates
    price = settings.generator.price_per_image
    cost = "no price configured" if price is None else f"up to ${bound * price:,.2f}"
    lines.append(f"images after review and description: at most {bound} more image(s), {cost}")
    return lines
