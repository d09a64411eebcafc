"""Stage 5, images (Section 3.2 step 4, Table 22): for every described scene, `candidates` images from a
generator (generators.py), the prompt being Table 22's template around the scene's description (or the
description alone, as the generator's `prompt` says).

WORK/images.jsonl records every image made, one a line, flushed and fsynced as it is made (so a killed
run resumes): key (SHA-256 of generator settings, prompt and candidate), scene_id, candidate, generator,
label (<kind>:<model>), description, prompt, file (images/<scene>-<candidate>-<key>.png), sha256, width,
height, refused (the provider's reason when it declined, else null), attempts, truncated_tokens, at.
A rerun makes only the images whose key has no record (or whose file is gone or changed); editing a
description makes new images for that scene. Refused prompts are not asked again unless retry_refused.
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from invscale.judges.batch import wait_all
from invscale.judges.cache import JudgeCache

from .describe import described_scenes
from .files import IMAGE_DIR, IMAGES, BuildError
from .generators import GeneratorConfig, open_generator


@dataclass(frozen=True)
class ImageJob:
    scene: dict  # the kept, described scene
    candidate: int
    prompt: str
    key: str

    @property
    def file(self) -> str:
        return f"{IMAGE_DIR}/{self.scene['scene_id']}-{self.candidate}-{self.key[:12]}.png"


def image_store(work: Path) -> JudgeCache:
    """images.jsonl as a keyed store (the judges' append-only, fsynced JSONL: the last line of a key wins)."""
    return JudgeCache(Path(work) / IMAGES)


def file_ok(work: Path, record: dict) -> bool:
    path = Path(work) / record["file"]
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == record["sha256"]


def _done(work: Path, record: dict | None, retry_refused: bool) -> bool:
    if record is None:
        return False
    if record.get("refused"):
        return not retry_refused
    return file_ok(work, record)


def image_jobs(work: Path, config: GeneratorConfig, candidates: int = 1) -> list[ImageJob]:
    """Every image the described scenes need from this generator."""
    if candidates < 1:
        raise BuildError(f"candidates per scene must be positive, got {candidates}")
    scenes, _ = described_scenes(work)
    jobs = []
    for scene in scenes:
        prompt = config.prompt_for(scene["description"])
        jobs += [ImageJob(scene, candidate, prompt, config.cache_key(prompt, candidate)) for candidate in range(candidates)]
    return jobs


@dataclass(frozen=True)
class ImagesEstimate:
    generator: str
    images: int  # images the described scenes need
    cached: int
    to_make: int
    usd: float | None

    def line(self) -> str:
        cost = "no price configured" if self.usd is None else f"about ${self.usd:,.2f}"
        return f"{self.generator}: {self.to_make} image(s) to make ({self.cached} of {self.images} made), {cost}"


def estimate_images(work: Path, config: GeneratorConfig, candidates: int = 1,
                    retry_refused: bool = False) -> ImagesEstimate:
    jobs = image_jobs(work, config, candidates)
    store = image_store(work)
    todo = sum(not _done(work, store.answers.get(job.key), retry_refused) for job in jobs)
    usd = None if config.price_per_image is None else todo * config.price_per_image
    return ImagesEstimate(config.name, len(jobs), len(jobs) - todo, todo, usd)


@dataclass(frozen=True)
class ImagesResult:
    images: int  # images the described scenes need
    made: int  # generated now
    refused: int  # of the needed images, declined by the provider
    truncated: int  # of the needed images, with prompts the pipeline's text encoder cut
    undescribed: int  # kept scenes still without a description (no image asked)


def _write_png(path: Path, data: bytes) -> tuple[int, int]:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def generate_images(work: Path, config: GeneratorConfig, candidates: int = 1, retry_refused: bool = False,
                    on_image: Callable[[dict], None] | None = None) -> ImagesResult:
    """Make the images the described scenes lack; every image is stored as it arrives. On a failed call
    (after retries) no new image starts, the ones in flight finish and are kept, and the error is raised."""
    work = Path(work)
    jobs = image_jobs(work, config, candidates)
    store = image_store(work)
    todo = [job for job in jobs if not _done(work, store.answers.get(job.key), retry_refused)]
    made = 0
    if todo:
        generator = open_generator(config)
        stop, lock = threading.Event(), threading.Lock()

        def make(job: ImageJob) -> None:
            nonlocal made
            if stop.is_set():
                return
            try:
                result = generator.generate(job.prompt, job.candidate)
                record = {"key": job.key, "scene_id": job.scene["scene_id"], "candidate": job.candidate,
                          "generator": config.name, "label": config.label, "description": job.scene["description"],
                          "prompt": job.prompt, "file": None, "sha256": None, "width": None, "height": None,
                          "refused": result.refused, "attempts": result.attempts,
                          "truncated_tokens": result.truncated_tokens, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
                if result.png is not None:
                    width, height = _write_png(work / job.file, result.png)
                    record.update(file=job.file, sha256=hashlib.sha256(result.png).hexdigest(), width=width, height=height)
                store.put(record)
                with lock:
                    made += 1
                if on_image is not None:
                    on_image(record)
            except BaseException:
                stop.set()
                raise

        with ThreadPoolExecutor(max_workers=generator.concurrency, thread_name_prefix="images") as pool:
            wait_all([pool.submit(make, job) for job in todo], stop)
    records = [store.answers[job.key] for job in jobs]
    _, undescribed = described_scenes(work)
    return ImagesResult(len(jobs), made, sum(bool(r.get("refused")) for r in records),
                        sum(bool(r.get("truncated_tokens")) for r in records), len(undescribed))


def current_images(work: Path) -> list[dict]:
    """The images of images.jsonl made from the current description of a kept scene, with their file
    intact, each with its scene (the review row plus `description`) under `scene`; in scene order."""
    work = Path(work)
    scenes, _ = described_scenes(work)
    by_scene = {scene["scene_id"]: scene for scene in scenes}
    store = image_store(work)
    images = [{**record, "scene": by_scene[record["scene_id"]]} for record in store.answers.values()
              if record["scene_id"] in by_scene and not record.get("refused")
              and record["description"] == by_scene[record["scene_id"]]["description"] and file_ok(work, record)]
    order = {scene_id: index for index, scene_id in enumerate(by_scene)}
    return sorted(images, key=lambda r: (order[r["scene_id"]], r["generator"], r["candidate"]))
