"""The flip explorer: static pages beside report.html (explorer/, opened from file://, offline, no server) that
show every flipped question of every case, and with `every_comparison` of every eligible comparison.

    explorer/index.html              the cases (and comparisons), sortable by a column's heading, each with the
                                     checks that did not pass and their fields; filters by benchmark, family,
                                     subtask and the flip direction a link opens with; a switch shows the other
                                     comparisons
    explorer/pages/<id>.html         one comparison: its numbers, the credibility badge and a row per check (its
                                     fields, check_fields, and question counts), and its flips, FlipInv first
                                     (direction filter FlipInv / FlipNorm), rendered by explorer.js: the first
                                     FIRST_RENDER at once, the others as the list is scrolled or asked for; a flip
                                     opens its answers in the control runs (identity re-run, reordered runs)
    explorer/data/<subtask id>.js    each question of one subtask once (text, options in the shown order, gold,
                                     images) and each model's answer to it once (response, letter, how it was
                                     obtained) in the analysed run and in each control run, for every page of
                                     that subtask
    explorer/images/<sha>.png|.jpg   each image once, at the size the model got it: PNG for a drawing (at most
                                     256 colours), JPEG quality 85 for a photo; thumbs/<sha>.jpg its thumbnail.
                                     Where the folder would pass its budget (ExplorerInput.max_bytes, 300 MB by
                                     default), the full-size images are capped at the long side that fits it
                                     (_fit_images), and every page says so
    explorer/explorer.js, .css

The pages hold their flips as JSON (`<script id="flips">`) and the counts as text; the data files are scripts
(a page opened from file:// may not fetch JSON). Questions are reloaded from the task data by question_id
(postprocess/logs/questions.py: --tasks-dir, --data); a split whose data cannot be read keeps its pages, with
the options, gold and answers of the logs and a note saying why the question and images are missing.
"""

from __future__ import annotations

import gc
import hashlib
import html
import io
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from postprocess.inverse_scaling.analysis import Analysis
from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.compare import GROUP_KEY
from postprocess.inverse_scaling.credibility import (
    CHECKS,
    FLIP_INV,
    FLIP_NORM,
    comparison_flips,
    rests_on_weak_letter,
)
from postprocess.inverse_scaling.parameters import CI_LEVEL, NOISE_VARIANT, POWER, REORDERING_VARIANTS, RERUN_COVERAGE
from postprocess.inverse_scaling.settlement import settled_by
from postprocess.render.trend_tables import trend_html

FOLDER = "explorer"
THUMBNAIL = (192, 192)
PALETTE = 256  # an image of at most this many colours is kept as PNG, any other as JPEG (_stored_bytes)
JPEG_QUALITY = 85
FIRST_RENDER = 50  # flips a case page draws at once; the rest as the list is scrolled (or "show more" / "show all")
MB = 10**6  # the budget's unit: a megabyte as disks count it (300 MB is 286 MiB)
MAX_BYTES = 300 * MB  # the explorer folder's default budget (issue 16's target); None: no budget
PAGE_BYTES = 6_000  # what a page adds, reserved before the pages are written (their largest are about 5 KB)
DIRECTIONS = (FLIP_INV, FLIP_NORM)


@dataclass(frozen=True)
class ExplorerInput:
    """What the explorer reads besides the analysis: the per-question table (responses, letters and how they
    were obtained) and where the questions' data is (questions.reload_questions' tasks_dir and data)."""

    table: pd.DataFrame
    tasks_dir: Path | None = None
    data: Mapping[str, str] = field(default_factory=dict)
    every_comparison: bool = False
    cache_dir: Path | None = None  # reloaded questions and their image files, kept for the next report
    refresh: bool = False  # reload every question, replacing the cached ones
    max_bytes: int | None = MAX_BYTES  # the folder's budget: full-size images are capped to fit it (_fit_images)
    # Filled by write_explorer: (benchmark, question_id, why) of each image left out because it cannot be read,
    # for problems.csv (the page shows the question without it and says why).
    image_problems: list[tuple[str, str, str]] = field(default_factory=list)


def _digest(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:12]


def page_name(key: tuple) -> str:
    """The page of a comparison (CASE_KEY values), relative to explorer/."""
    return f"pages/{_digest(*key)}.html"


def _group_name(benchmark: str, split: str, subtask: str) -> str:
    return f"data/{_digest(benchmark, split, subtask)}.js"


def _text(value: object) -> str | None:
    return None if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA else str(value)


# ---------------------------------------------------------------------------------------------- questions
def _source_digest(spec, source: ExplorerInput) -> str:
    """What a split's questions are read from: its dataset block and the size and time of its local files (a
    changed file is a new key; `--refresh` rebuilds regardless)."""
    from postprocess.logs.questions import dataset_source

    block = dataset_source(spec, source.tasks_dir, source.data)
    files = (block.get("dataset_kwargs") or {}).get("data_files") or {}
    paths = [block.get("dataset_path"), *(f for value in (files.values() if isinstance(files, dict) else [files])
                                          for f in ([value] if isinstance(value, str) else value))]
    stats = []
    for path in (Path(str(p)) for p in paths if p):
        if path.exists():
            for found in sorted(path.rglob("*")) if path.is_dir() else [path]:
                if found.is_file():
                    stat = found.stat()
                    stats.append((str(found), stat.st_size, stat.st_mtime_ns))
    return _digest(json.dumps(block, sort_keys=True, default=str), json.dumps(stats))


def _stored_bytes(picture) -> tuple[bytes, str]:
    """(the bytes the explorer keeps of an image, their extension): PNG, lossless, for a picture of at most
    PALETTE colours (a drawing, a chart, a screenshot of text: small as PNG), else JPEG at JPEG_QUALITY (a photo:
    at 1024 x 1024 about 170 KB instead of 2 MB as PNG, and 0.01 s to encode instead of 0.8 s)."""
    rgb = picture.convert("RGB")
    buffer = io.BytesIO()
    if rgb.getcolors(PALETTE) is not None:
        rgb.save(buffer, format="PNG")
        return buffer.getvalue(), "png"
    rgb.save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue(), "jpg"


def _store_image(image, folder: Path) -> dict:
    """The image (a PIL image, or encoded bytes) under folder/images/ (named by the stored bytes' content:
    _stored_bytes) with its thumbnail under thumbs/, each written only if no file of that name is there yet; their
    paths and the image's size."""
    from PIL import Image

    picture = Image.open(io.BytesIO(image)) if isinstance(image, bytes) else image
    stored, extension = _stored_bytes(picture)
    name = hashlib.sha256(stored).hexdigest()[:20]
    record = {"full": f"images/{name}.{extension}", "thumb": f"thumbs/{name}.jpg"}
    record["width"], record["height"] = picture.size
    if not (folder / record["thumb"]).exists():
        small = picture.convert("RGB")
        small.thumbnail(THUMBNAIL)
        small.save(folder / record["thumb"], format="JPEG", quality=85)
    if not (folder / record["full"]).exists():
        (folder / record["full"]).write_bytes(stored)
    return record


def _shown_payload(shown) -> dict:
    """A reloaded question's entry; its images are already stored (the records of _store_image)."""
    question = shown.question
    return {"text": question.text, "hint": question.hint, "options": list(question.options),
            "images": list(shown.images), "image_problems": list(shown.image_problems)}


def _place(names: set[str], cache: Path, folder: Path) -> None:
    """The image files (paths relative to the explorer, each once), from the cache into the explorer: a hard link
    where the file system allows (about 20 us a file: at paper scale 18,500 of them), else a copy."""
    origin, target = str(cache) + os.sep, str(folder) + os.sep
    for name in names:
        try:
            os.link(origin + name, target + name)
        except FileExistsError:
            pass
        except OSError:  # another file system
            shutil.copyfile(origin + name, target + name)


def _questions(wanted: list[tuple[str, str, str, str]], source: ExplorerInput,
               folder: Path) -> tuple[dict[tuple, dict], dict[tuple, str]]:
    """(each wanted (benchmark, split, question_id, variant) as shown: text, hint, options, image files, a note per
    split whose data cannot be read). With a cache folder, questions reloaded once are read from it."""
    from lmms_eval_tasks.benchmarks import BY_KEY
    from postprocess.logs.questions import QuestionSourceError, reload_questions

    payloads, notes = {}, {}
    by_split: dict[tuple[str, str], list] = {}
    for key in wanted:
        by_split.setdefault(key[:2], []).append(key)
    for split, keys in by_split.items():
        try:
            spec = BY_KEY.get(f"{split[0]}:{split[1]}")
            if spec is None:
                raise QuestionSourceError(f"no task holds {split[0]} {split[1]}")
            store = folder
            cached: dict[str, dict] = {}
            if source.cache_dir is not None:
                store = Path(source.cache_dir)
                entry = store / f"{_source_digest(spec, source)}.json"
                if entry.is_file() and not source.refresh:
                    cached = json.loads(entry.read_text(encoding="utf-8"))
            missing = [key for key in keys if "\x1f".join(key[2:]) not in cached]
            if missing:
                for part in ("images", "thumbs"):
                    (store / part).mkdir(parents=True, exist_ok=True)
                # Each image stored as soon as it is read (a split's thousands of decoded photos would not fit
                # in memory): the reloaded question holds its image records.
                for key, shown in reload_questions(missing, source.tasks_dir, source.data, partial_images=True,
                                                   encode=lambda image: _store_image(image, store)).items():
                    cached["\x1f".join(key[2:])] = _shown_payload(shown)
                if source.cache_dir is not None:
                    entry.write_text(json.dumps(cached, ensure_ascii=False), encoding="utf-8")
            files = set()
            for key in keys:
                payloads[key] = payload = cached["\x1f".join(key[2:])]
                source.image_problems.extend((key[0], key[2], why) for why in payload.get("image_problems", ()))
                files.update(name for image in payload["images"] for name in (image["full"], image["thumb"]))
            if store != folder:
                _place(files, store, folder)
        except QuestionSourceError as error:
            notes[split] = str(error)
    return payloads, notes


def _folder_bytes(folder: Path) -> int:
    total, stack = 0, [str(folder)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_size
    return total


def _cap_side(sizes: list[tuple[int, int]], room: int) -> int:
    """The largest long side (at least a thumbnail's) at which the images, (bytes, long side) each, would take at
    most `room` bytes, an image's bytes taken to scale with its pixels."""
    def estimate(side: int) -> float:
        return sum(size * min(1.0, (side / long) ** 2) for size, long in sizes)
    low, high = THUMBNAIL[0], max(long for _, long in sizes)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if estimate(middle) <= room else (low, middle - 1)
    return low


def _reduced(original: Path, side: int, target: Path) -> None:
    """The image capped at `side` pixels on its long side, in its own format, written to target."""
    from PIL import Image

    with Image.open(original) as picture:
        # a JPEG decoded at the nearest larger scale its DCT allows (draft), then resampled
        picture.thumbnail((side, side), Image.Resampling.LANCZOS, reducing_gap=1.0)
        picture.save(target, **({"format": "JPEG", "quality": JPEG_QUALITY} if original.suffix == ".jpg"
                                else {"format": "PNG"}))


def _fit_images(folder: Path, max_bytes: int | None, pages: int, cache: Path | None) -> str | None:
    """Cap the full-size images under folder/images at the long side that keeps the folder (with `pages` pages
    still to write) within max_bytes; None when it fits as it is, else the note every page shows. The side comes
    from the images' pixels, corrected by reducing a sample (bytes shrink less than pixels); the images are then
    reduced in threads (Pillow decodes, resizes and encodes outside the GIL). Each reduced image replaces the
    explorer's file (a link to the cache is unlinked first); with a cache, reduced copies are kept there by side
    (reduced/<side>/), so a rerun links them, and the cache's originals are never touched."""
    if not max_bytes:
        return None
    from PIL import Image

    images = folder / "images"
    full = {entry.name: entry.stat().st_size for entry in os.scandir(images)}
    fixed = _folder_bytes(folder) - sum(full.values()) + pages * PAGE_BYTES
    if fixed + sum(full.values()) <= max_bytes or not full:
        return None
    room, mb = max_bytes - fixed, max_bytes / MB
    if room < len(full) * 2_000:  # the thumbnails and data alone take the budget
        return (f"The explorer is over its budget of {mb:,.4g} MB: thumbnails, data and pages alone take "
                f"{fixed / MB:,.4g} MB; full-size images are kept as the models got them (--explorer-max-mb).")
    in_cache = {e.name for e in os.scandir(cache / "images")} if cache is not None and (cache / "images").is_dir() else set()
    originals = {name: (cache / "images" / name if name in in_cache else images / name) for name in full}
    fits_file = cache / "reduced" / "fits.json" if cache is not None else None
    fits = json.loads(fits_file.read_text(encoding="utf-8")) if fits_file is not None and fits_file.is_file() else {}
    decision = _digest(json.dumps(sorted(full.items())), max_bytes, fixed)  # these images, this room
    if decision in fits:  # a rerun: the side and the images above it as decided then, their copies kept
        side, wanted = fits[decision]["side"], fits[decision]["reduced"]
        _reduce_into(wanted, originals, side, images, cache / "reduced" / str(side))
        return _capped_note(side, len(wanted), len(full), fixed + _folder_bytes(images), max_bytes)
    longs = {}
    for name, path in originals.items():
        with Image.open(path) as picture:
            longs[name] = max(picture.size)
    sizes = [(full[n], longs[n]) for n in full]
    side = _cap_side(sizes, room)
    side = _cap_side(sizes, int(room * 0.97 / _shrink_ratio(originals, full, longs, side, folder)))
    for _ in range(4):  # a sample's ratio may miss: measure, and cap tighter until it fits
        wanted = [name for name in full if longs[name] > side]
        _reduce_into(wanted, originals, side, images, cache / "reduced" / str(side) if cache is not None else None)
        total = fixed + _folder_bytes(images)
        if total <= max_bytes or side <= THUMBNAIL[0]:
            break
        side = max(THUMBNAIL[0], int(side * ((max_bytes - fixed) / (total - fixed)) ** 0.5 * 0.97))
    if fits_file is not None and total <= max_bytes:
        fits_file.write_text(json.dumps({**fits, decision: {"side": side, "reduced": wanted}}), encoding="utf-8")
    return _capped_note(side, len(wanted), len(full), total, max_bytes)


def _capped_note(side: int, reduced: int, images: int, total: int, max_bytes: int) -> str:
    mb = max_bytes / MB
    capped = (f"full-size images are capped at {side} px on the long side ({reduced:,} of {images:,} reduced; the "
              "models got them at full size, which --explorer-max-mb 0 keeps here)")
    if total > max_bytes:
        return f"The explorer takes {total / MB:,.4g} MB, over its budget of {mb:,.4g} MB, although {capped}."
    return f"So that the explorer stays within {mb:,.4g} MB, {capped}."


def _shrink_ratio(originals: dict[str, Path], full: dict[str, int], longs: dict[str, int], side: int,
                  folder: Path) -> float:
    """Bytes of a sample of images reduced to `side` over the bytes their pixels predict (at least 1)."""
    import tempfile

    larger = sorted(name for name in full if longs[name] > side)
    sample = larger[:: max(1, len(larger) // 48)][:48]
    if not sample:
        return 1.0
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        _reduce_into(sample, originals, side, Path(scratch), None)
        made = sum((Path(scratch) / name).stat().st_size for name in sample)
    predicted = sum(full[name] * (side / longs[name]) ** 2 for name in sample)
    return max(1.0, made / predicted)


def _reduce_into(names: list[str], originals: dict[str, Path], side: int, images: Path, kept: Path | None) -> None:
    """Each named image capped at `side` into images/ (replacing the file there); with `kept`, made there once and
    linked from it. The images to make are made in threads; linking kept ones is plain file work."""
    from concurrent.futures import ThreadPoolExecutor

    made_into = images if kept is None else kept
    made_into.mkdir(parents=True, exist_ok=True)
    present = {entry.name for entry in os.scandir(kept)} if kept is not None else set()

    def make(name: str) -> None:
        part = made_into / (name + ".part")
        _reduced(originals[name], side, part)
        os.replace(part, made_into / name)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(make, [name for name in names if name not in present]))
    if kept is not None:
        target = str(images) + os.sep
        for name in names:
            try:
                os.unlink(target + name)
            except FileNotFoundError:
                pass
        _place(set(names), kept, images)


ANSWER_FIELDS = ("response", "prediction", "match", "rule", "extraction_tier", "candidate")  # the table's, as text
EXTRA_ANSWER_FIELDS = ("abstain_reason", "judge", "judge_status", "judge_verdict")  # `extra`'s


def _rule_words() -> Callable[[str | None, str | None], str | None]:
    """(rule, letter) -> the rule in plain words (extraction.describe); None for a rule these rules do not have
    (older logs, another harness's reading), which the page then names as it is. The rules' module is imported here,
    when pages are written: a report without the explorer needs none of it."""
    from lmms_eval_tasks.extraction import RULES, describe

    return lambda rule, letter: describe(rule, letter) if rule in RULES else None


def _plain(value: object) -> str | None:
    """_text for the values of tolist(): text as it is, None for a missing value (None, NA, NaN)."""
    if type(value) is str:
        return value
    return None if value is None or value is pd.NA or value != value else str(value)


def _values_at(column: pd.Series, positions: np.ndarray) -> np.ndarray:
    """The column's values at `positions`, as objects. An Arrow-backed column is taken chunk by chunk: Arrow's take
    on a column of many chunks first joins them, a copy of every response in the logs."""
    if not hasattr(column.array, "__arrow_array__"):
        return column.iloc[positions].to_numpy(dtype=object)
    chunked = pa.chunked_array(column.array.__arrow_array__())
    starts = np.cumsum([0, *(len(chunk) for chunk in chunked.chunks)])
    chunk_of = np.searchsorted(starts, positions, side="right") - 1
    values = np.empty(len(positions), dtype=object)
    for index in np.unique(chunk_of):
        mine = np.flatnonzero(chunk_of == index)
        values[mine] = chunked.chunk(int(index)).take(pa.array(positions[mine] - starts[index])).to_pylist()
    return values


def _is_in(column: pd.Series, values: set) -> np.ndarray:
    """column.isin(values) as a bool array; an Arrow-backed text column by Arrow's own is_in (pandas' isin of half a
    million question ids took four times as long)."""
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        import pyarrow.compute as pc

        chunked = pa.chunked_array(column.array.__arrow_array__())
        found = pc.is_in(chunked, value_set=pa.array(sorted(values), type=chunked.type))
        return found.to_numpy(zero_copy_only=False).astype(bool, copy=False)
    return column.isin(values).to_numpy(dtype=bool)


def _answers(table: pd.DataFrame, flips: pd.DataFrame, variant: str,
             with_options: bool = False) -> tuple[dict[tuple, dict], dict[tuple, dict]]:
    """(per subtask, {model: {question_id: answer record}} of both models of every flip (the table's rows of the
    analysed variant, one per model and question); per (benchmark, split, subtask, question_id), the options in
    the shown order as the first of its records that logs them has them, and the question text and hint an
    imported file carries, for questions the dataset does not show). Built from whole columns (tolist), not
    from DataFrame rows: at paper scale some 27,000 answers. The rows are matched on the key columns alone and
    only the matched rows' answers are taken: taking the candidate rows of the whole table first copied every
    response of the logs (peak memory of report doubled on long responses; perf/bench_report_memory.py)."""
    key_columns = ["model", *GROUP_KEY, "question_id"]
    keys = pd.concat([flips[["small", *GROUP_KEY, "question_id"]].rename(columns={"small": "model"}),
                      flips[["large", *GROUP_KEY, "question_id"]].rename(columns={"large": "model"})])
    keys = keys.drop_duplicates().astype(object).reset_index(drop=True)
    keep = ((table["variant"] == variant) & table["model"].isin(set(keys["model"]))
            & _is_in(table["question_id"], set(keys["question_id"])))
    # Columns first: .loc[rows, columns] takes the rows of every column (every response) before choosing columns.
    candidates = table[key_columns][keep].assign(_row=np.flatnonzero(keep.to_numpy()))
    # matched in the table's own (categorical) dtypes, which compares codes; the keys' text is kept for the pages
    typed = keys.astype({name: table[name].dtype for name in key_columns}).assign(_key=np.arange(len(keys)))
    joined = typed.merge(candidates, on=key_columns, how="left")
    count, found = len(joined), joined["_row"].notna().to_numpy()
    positions = joined["_row"].to_numpy()[found].astype(np.int64)
    columns = {name: keys[name].to_numpy()[joined["_key"].to_numpy()].tolist() for name in key_columns}
    taken = {}
    for name in [*ANSWER_FIELDS, "correct", "extra"]:
        values = np.full(count, None, dtype=object)
        if name in table.columns:
            values[found] = _values_at(table[name], positions)
        taken[name] = values
    settled = np.full(count, None, dtype=object)
    settled[found] = settled_by(pd.DataFrame({name: taken[name][found] for name in ("match", "extraction_tier",
                                                                                    "extra")})).astype(object)
    # each column as the records hold it, a list at a time (not value by value inside the loop below)
    columns.update({name: [_plain(value) for value in taken[name].tolist()] for name in ANSWER_FIELDS})
    columns["settled_by"] = [_plain(value) for value in settled.tolist()]
    columns["correct"] = [None if value is None or value is pd.NA else bool(value) for value in taken["correct"].tolist()]
    columns["extra"] = taken["extra"].tolist()
    by_group: dict[tuple, dict[str, dict]] = {}
    logged: dict[tuple, dict] = {}
    rule_words = _rule_words()
    decoded: dict[str, dict] = {}  # each distinct `extra` text parsed once (one question's options across models)
    for model, benchmark, split, subtask, question, *fields, settled, correct, extra, hit in zip(*columns.values(),
                                                                                           found.tolist()):
        if with_options and not hit:  # another run that did not ask this question: nothing to show
            continue
        if isinstance(extra, str):
            parsed = decoded.get(extra)
            if parsed is None:
                parsed = decoded[extra] = json.loads(extra)
        else:
            parsed = {}
        record = dict(zip(ANSWER_FIELDS, fields))
        record["settled_by"] = settled
        record["rule_words"] = rule_words(record["rule"], record["prediction"] or record["candidate"])
        record["correct"] = correct
        for name in EXTRA_ANSWER_FIELDS:
            record[name] = _plain(parsed.get(name))
        options = parsed.get("options")
        if with_options:  # another run's answer: the options in the order that run showed them
            record["options"] = [str(o) for o in options] if isinstance(options, list) and options else None
        group = (benchmark, split, subtask)
        by_group.setdefault(group, {}).setdefault(str(model), {})[str(question)] = record
        seen = logged.setdefault((*group, question), {})
        if isinstance(options, list) and options:
            seen.setdefault("options", [str(o) for o in options])
        for name, key in (("text", "question"), ("hint", "hint")):  # imported rows (postprocess/logs/imports/)
            if isinstance(parsed.get(key), str):
                seen.setdefault(name, parsed[key])
    return by_group, logged


def _write_data(flips: pd.DataFrame, table: pd.DataFrame, variant: str, source: ExplorerInput,
                folder: Path) -> dict[tuple[str, str, str], str | None]:
    """One data file per subtask with flips; returns the note of each subtask whose questions were not found."""
    answers, logged = _answers(table, flips, variant)
    # The same questions' answers in the control runs the logs hold (a flip's "other runs"), run by run.
    held = set(table["variant"].unique())
    runs = {run: _answers(table, flips, run, with_options=True)[0]
            for run in (NOISE_VARIANT, *REORDERING_VARIANTS) if run in held and run != variant}
    groups: dict[tuple, dict] = {}  # subtask -> {question_id: gold}, in the flips' order
    for benchmark, split, subtask, question, gold in zip(*(flips[c].tolist() for c in [*GROUP_KEY, "question_id",
                                                                                       "gold"])):
        groups.setdefault((benchmark, split, subtask), {}).setdefault(question, gold)
    shown, notes = _questions([(b, s, q, variant) for (b, s, _), questions in groups.items() for q in questions],
                              source, folder)
    group_notes = {}
    for key, questions in groups.items():
        benchmark, split, subtask = key
        note = notes.get((benchmark, split))
        group_notes[key] = note
        entries = {}
        for question_id, gold in questions.items():
            question = shown.get((benchmark, split, question_id, variant))
            if question is None:
                seen = logged.get((*key, question_id), {})
                question = {"text": seen.get("text"), "hint": seen.get("hint"), "images": [],
                            "options": seen.get("options")}
            entries[question_id] = {**question, "gold": _text(gold)}
        payload = {"benchmark": benchmark, "split": split, "subtask": subtask, "note": note, "questions": entries,
                   "answers": answers.get(key, {}),
                   "runs": {run: by_group[key] for run, by_group in runs.items() if key in by_group}}
        name = _group_name(*key)
        script = (f"window.EXPLORER_DATA = window.EXPLORER_DATA || {{}};\n"
                  f"window.EXPLORER_DATA[{json.dumps(name)}] = {json.dumps(payload, ensure_ascii=False)};\n")
        (folder / name).write_text(script, encoding="utf-8")
    return group_notes


# ---------------------------------------------------------------------------------------------- pages
def _script_json(value: object) -> str:
    """JSON to embed in a <script> element: "</" written as "<\\/" so no text can close the element."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def _badge(verdict: str) -> str:
    """Green only for a pass of everything that was asked ("pass"); "pass, k not run" is amber, not green."""
    kind = "fail" if verdict == "fail" else "pass" if verdict == "pass" else "partial" if verdict.startswith(
        "pass") else "none"
    return f'<span class="badge badge-{kind}">{html.escape(verdict)}</span>'


def _number(value: float, digits: int = 1) -> str:
    return "–" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def _integer(value: object) -> str:
    return "–" if value is None or pd.isna(value) else f"{int(value):+d}"


def _noise_detail(row: dict) -> str:
    if row.get("noise_n") is None or pd.isna(row.get("noise_n")):
        return "no identity re-run of both models on this subtask"
    coverage = f"the identity re-run covers {int(row['noise_n'])} of {row['n']} questions"
    if row.get("noise_check") == "not run":
        return f"not run ({coverage}, under {RERUN_COVERAGE:.0%})"
    return (f"the case's Net ≥ min_net asked of the re-run: Net {_integer(row['noise_net'])} there ({coverage}), "
            f"{_integer(row['noise_net_change'])} from the main run's on them; its |change| is at least that of "
            f"{_number(row.get('noise_change_percentile'), 0)}% of the eligible comparisons with a re-run")


def _check_rules(row: dict) -> dict[str, str]:
    """Each check's rule and outcome in words (credibility.py's definitions, with the case's numbers)."""
    return {
        "order_check": (f"the case's Net ≥ min_net asked of each reordered run covering {RERUN_COVERAGE:.0%}: "
                        f"{row['order_nets']}" if row.get("order_nets") else "no reordered run in the logs"),
        "noise_check": _noise_detail(row),
        "extraction_check": (f"worst-case Net {_number(row.get('worst_case_net'), 0)}: Net without the FlipInv flips "
                             "with a reading-rule, judge-settled, unsettled or unknown-tier answer on either side, "
                             "less the agreeing questions such an answer could make a FlipNorm"
                             if row.get("extraction_check") != "not run"
                             else "not run: the logs record no extraction tier, or some of its letters were read "
                                  "by another harness (no text of ours to judge)"),
    }


# What each check asks (the definitions: inverse_scaling/credibility.py and docs/flip_explorer.md). Its numbers are
# read generically: every case column named after the check ("<stem>_check" and "<stem>_..."), and CHECK_FIELDS.
CHECK_QUESTIONS = {
    "order_check": "does the case hold when the options are shown in another order (the reordered runs)?",
    "noise_check": "does it hold when the same prompts are run again (the identity re-run)?",
    "extraction_check": "does it hold without the answers whose letter was read weakly, unsettled or by a judge?",
}
CHECK_FIELDS = {"extraction_check": ("worst_case_net",)}  # a check's field not named after it
CHECK_RUNS = {"order_check": REORDERING_VARIANTS, "noise_check": (NOISE_VARIANT,)}  # the runs each check reads


def _field_text(value: object) -> str | None:
    """A case field as printed on the explorer's pages: None when missing, whole floats without decimals."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else f"{value:.0f}" if float(value).is_integer() else f"{value:.3g}"
    return _plain(value) or None


def check_fields(row: dict, column: str) -> dict[str, str]:
    """The check's own fields of a case row (name -> text), whatever credibility.py adds: every column named
    "<stem>_..." for the check "<stem>_check", and CHECK_FIELDS; missing values left out."""
    stem = column.removesuffix("_check") + "_"
    names = [name for name in row if name.startswith(stem) and name != column]
    names += [name for name in CHECK_FIELDS.get(column, ()) if name in row]
    texts = {name: _field_text(row[name]) for name in names}
    return {name: text for name, text in texts.items() if text is not None}


def _fields_words(fields: dict[str, str]) -> str:
    return "; ".join(f"{name} {text}" for name, text in fields.items())


def _run_coverage(analysis: Analysis, cases: pd.DataFrame) -> dict[tuple, dict[str, tuple[int, int]]]:
    """Per case (CASE_KEY), per control run the logs hold (CHECK_RUNS): (its questions both models answered with a
    known gold in that run and in the analysed one, the analysed run's such questions: the case's n), for the runs
    that hold some. The counts a check row prints, as the analysis' controls counted them (controls.control_flips'
    n, which credibility's checks read); the checks' own coverage rules are credibility.py's."""
    variant = analysis.parameters.variant
    runs = [v for names in CHECK_RUNS.values() for v in names if v in analysis.controls and v != variant]
    if not runs or cases.empty:
        return {}
    shared_in = {run: dict(zip(analysis.controls[run][CASE_KEY].itertuples(index=False, name=None),
                               analysis.controls[run]["n"].tolist())) for run in runs}
    return {key: {run: (shared_in[run][key], n) for run in runs if shared_in[run].get(key)}
            for key, n in zip(cases[CASE_KEY].itertuples(index=False, name=None), cases["n"].tolist())}


def _checks_html(row: dict, coverage: dict[str, tuple[int, int]], weak_flip_inv: int) -> str:
    """One row per check: its state, its question, its fields (check_fields) and its question counts: the
    shared questions each control run holds, or the FlipInv flips that rest on a weak letter."""
    rows, rules = [], _check_rules(row)
    for column, name in CHECKS.items():
        counts = [f"{run}: {k} of {n} shared questions in the run" for run, (k, n) in coverage.items()
                  if run in CHECK_RUNS.get(column, ())]
        if column == "extraction_check":
            counts.append(f"{weak_flip_inv} of the {row['flip_inv']} FlipInv flips rest on a weak letter")
        elif not counts:
            counts.append("no such run of these two models on these questions in the logs")
        fields = _fields_words(check_fields(row, column))
        rows.append(f'<tr data-check="{html.escape(column)}"><th>{html.escape(name)}</th>'
                    f"<td>{_badge(str(row.get(column)))}</td><td>{html.escape(CHECK_QUESTIONS.get(column, ''))}"
                    f'<div class="rule">{html.escape(rules[column])}</div>'
                    f'<div class="fields">{html.escape(fields)}</div>'
                    f'<div class="counts">{html.escape("; ".join(counts))}</div></td></tr>')
    return f'<table class="checks"><tbody>{"".join(rows)}</tbody></table>'


def _statistics_html(row: dict) -> str:
    level = round(100 * CI_LEVEL)
    discordant = int(row["flip_inv"]) + int(row["flip_norm"])
    given = f"given its {discordant} discordant questions"
    return (f'<p class="stats">Net ≥ {_number(row["net_lower_bound"])} (one-sided {level}% exact bound, {given}; '
            f"two-sided [{_number(row['net_ci_low'])}, {_number(row['net_ci_high'])}]); FlipInv share ≥ "
            f"{_number(row['share_lower_bound'], 2)} (two-sided {_number(row['share_ci_low'], 2)}–"
            f"{_number(row['share_ci_high'], 2)}); one-sided McNemar p = {row['p_value']:.2g}, BH q over all "
            f"eligible comparisons = {row['q_all']:.2g} (exploratory: the case was selected on the same data). "
            f"With {discordant} discordant questions, a true share of {_number(row['min_detectable_share'], 2)} "
            f"(Net {_number(row['min_detectable_net'])}) would be detected {round(100 * POWER)}% of the time; "
            f"at the BH level, {_number(row['min_detectable_share_bh'], 2)} (Net "
            f"{_number(row['min_detectable_net_bh'])}).</p>")


UNSETTLED_WORDS = {"exclude": "left out of the shared questions", "wrong": "counted wrong",
                   "candidate": "counted as their withheld letter"}


def _unsettled_html(row: dict, treatment: str) -> str:
    """What the two models' unsettled answers do to this comparison (compare.py's columns)."""
    small, large = int(row.get("unsettled_small", 0) or 0), int(row.get("unsettled_large", 0) or 0)
    if not small and not large:
        return ""
    decides = (" <strong>Whether this is a case depends on how they are settled.</strong>"
               if row.get("unsettled_decides") else "")
    return (f'<p class="note unsettled">Unsettled answers (letter withheld by the rules, no judge verdict): '
            f"{small} of {html.escape(str(row['small']))}, {large} of {html.escape(str(row['large']))}, "
            f"{UNSETTLED_WORDS[treatment]} here. Net if they are wrong {row['net_if_unsettled_wrong']:+d}, if their "
            f"withheld letters count {row['net_if_unsettled_candidate']:+d}, left out "
            f"{row['net_if_unsettled_excluded']:+d}; over every way of settling them "
            f"[{row['net_unsettled_min']:+d}, {row['net_unsettled_max']:+d}].{decides}</p>")


def _page(row: dict, listed: list[list[str]], note: str | None, is_case: bool, image_note: str | None = None,
          treatment: str = "exclude", coverage: dict[str, tuple[int, int]] | None = None, weak_flip_inv: int = 0,
          variant: str = "") -> str:
    """A comparison's page; `listed`: its flips as [question_id, direction]; `image_note`: _fit_images';
    `treatment`: how the analysis counted unsettled answers; `coverage` and `weak_flip_inv`: the check rows'
    question counts (_checks_html); `variant`: the analysed run's."""
    key = tuple(row[c] for c in CASE_KEY)
    title = (f"{row['family']}: {row['small']} vs. {row['large']} on {row['benchmark']} {row['split']} / "
             f"{row['subtask']}")
    counts = {d: sum(direction == d for _, direction in listed) for d in DIRECTIONS}
    verdict = _badge(str(row["verdict"])) if is_case else '<span class="badge badge-none">not a case</span>'
    checks = (_checks_html(row, coverage or {}, weak_flip_inv) + _statistics_html(row) + trend_html(row)
              if is_case else "")
    missing = (f'<p class="note missing">Question text and images are not available: {html.escape(note.rstrip("."))}. The '
               "options, gold and answers below are the logs'.</p>" if note else "")
    buttons = "".join(f'<button type="button" data-direction="{d}">{d} <span id="count-{d}">{counts[d]}</span>'
                      f"</button>" for d in DIRECTIONS)
    flips_json = _script_json({"data": _group_name(*key[1:4]), "small": str(row["small"]),
                               "large": str(row["large"]), "batch": FIRST_RENDER, "flips": listed,
                               "unsettled": UNSETTLED_WORDS[treatment], "variant": variant})
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f'<title>{html.escape(title)}</title><link rel="stylesheet" href="../explorer.css"></head><body>'
        f'<p><a href="../index.html">All cases</a> · <a href="../../report.html">Report</a></p>'
        f"<h1>{html.escape(title)} {verdict}</h1>"
        f'<p class="numbers">n = {row["n"]}, <span id="flip-inv">FlipInv {counts[FLIP_INV]}</span>, '
        f'<span id="flip-norm">FlipNorm {counts[FLIP_NORM]}</span>, Net {row["net"]:+d}; accuracy '
        f'{row["acc_small"]:.1f}% ({html.escape(str(row["small"]))}) vs. {row["acc_large"]:.1f}% '
        f'({html.escape(str(row["large"]))}).</p>{_unsettled_html(row, treatment)}{checks}{missing}'
        f'<p class="filter">Show: <button type="button" data-direction="all">all {counts[FLIP_INV] + counts[FLIP_NORM]}'
        f"</button>{buttons}</p>"
        f'<p class="note">FlipInv: {html.escape(str(row["small"]))} right, {html.escape(str(row["large"]))} wrong; '
        "FlipNorm: the reverse. Click a thumbnail for the full image; open “the same question in the other runs” "
        "under a flip for its answers in the identity re-run and the reordered runs the logs hold.</p>"
        + (f'<p class="note" id="image-note">{html.escape(image_note)}</p>' if image_note else "") +
        f'<ol id="flip-list"></ol><p id="more" class="filter" hidden>Showing <span id="shown-count">0</span> of '
        '<span id="selected-count">0</span>: <button type="button" id="show-more">show more</button> '
        '<button type="button" id="show-all">show all</button></p>'
        '<div id="overlay" hidden><img alt="full size"></div>'
        f'<script type="application/json" id="flips">{flips_json}</script>'
        f'<script src="../{_group_name(*key[1:4])}"></script><script src="../explorer.js"></script>'
        "</body></html>\n"
    )


def _number_or_none(value: object) -> float | None:
    return None if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else float(value)


def _entry(row: dict) -> dict:
    """A comparison's entry of the index: what it shows and sorts by. A case's checks: [name, state, fields]."""
    entry = {"page": page_name(tuple(row[c] for c in CASE_KEY)), "family": row["family"],
             "benchmark": row["benchmark"], "split": row["split"], "subtask": row["subtask"], "small": row["small"],
             "large": row["large"], "n": int(row["n"]), "flip_inv": int(row["flip_inv"]),
             "flip_norm": int(row["flip_norm"]), "net": int(row["net"]), "p": _number_or_none(row.get("p_value")),
             "q": _number_or_none(row.get("q_all")), "case": bool(row["is_case"]), "verdict": "", "checks": []}
    if row["is_case"]:
        entry["verdict"] = str(row["verdict"])
        entry["checks"] = [[name, str(row.get(column)), _fields_words(check_fields(row, column))]
                           for column, name in CHECKS.items()]
    return entry


def _index(rows: pd.DataFrame, case_count: int, every_comparison: bool, image_note: str | None = None) -> str:
    entries = [_entry(r) for r in rows.to_dict("records")]
    switch = ('<label><input type="checkbox" id="every"> every eligible comparison, not only the cases</label>'
              if every_comparison else "")
    selects = "".join(f'<label>{name} <select id="filter-{name}"><option value="">all</option></select></label> '
                      for name in ("benchmark", "family", "subtask"))
    headers = "".join(f'<th data-sort="{key}" title="sort by {html.escape(label)}">{html.escape(label)}</th>'
                      if key else f"<th>{html.escape(label)}</th>" for key, label in INDEX_COLUMNS)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        '<title>Flip explorer</title><link rel="stylesheet" href="explorer.css"></head><body>'
        '<p><a href="../report.html">Report</a></p><h1>Flip explorer</h1>'
        f'<p><span id="case-count">{case_count} cases</span>; each page lists the questions one model got right and '
        "the other wrong, with the images, options, gold and both answers. Click a column's heading to sort by it "
        "(again: the other way); Checks names each check that did not pass, with its numbers (docs/flip_explorer.md)."
        "</p>"
        + (f'<p class="note" id="image-note">{html.escape(image_note)}</p>' if image_note else "") +
        f'<p class="filter">{selects}<label>open with <select id="filter-direction"><option value="">all flips'
        f'</option><option>{FLIP_INV}</option><option>{FLIP_NORM}</option></select></label> {switch}</p>'
        f'<table class="data" id="index"><thead><tr>{headers}</tr></thead><tbody></tbody></table>'
        f'<script type="application/json" id="entries">{_script_json(entries)}'
        '</script><script src="explorer.js"></script></body></html>\n'
    )


# The index's columns: (the entry's key it sorts by, or "" for none; heading).
INDEX_COLUMNS = [("rank", "#"), ("family", "Family"), ("benchmark", "Dataset"), ("subtask", "Subtask"),
                 ("small", "Small"), ("large", "Large"), ("n", "n"), ("flip_inv", "FI"), ("flip_norm", "FN"),
                 ("net", "Net"), ("p", "p"), ("q", "BH q (all)"), ("verdict", "Verdict"), ("", "Checks")]


def write_explorer(analysis: Analysis, source: ExplorerInput, out_dir: Path) -> list[tuple[tuple, str, str]]:
    """Write explorer/ under out_dir; return (CASE_KEY values, label, link relative to out_dir) per case, in the
    cases' order. Python's cyclic garbage collector is paused meanwhile: the tens of thousands of answer records,
    data payloads and pages hold no cycles, and its full collections over them cost a warm report 0.1-0.25 s."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _write_explorer(analysis, source, out_dir)
    finally:
        if enabled:
            gc.enable()


def _write_explorer(analysis: Analysis, source: ExplorerInput, out_dir: Path) -> list[tuple[tuple, str, str]]:
    folder = Path(out_dir) / FOLDER
    for part in ("pages", "data", "images", "thumbs"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    (folder / "explorer.js").write_text(SCRIPT, encoding="utf-8")
    (folder / "explorer.css").write_text(STYLE, encoding="utf-8")
    cases = analysis.cases.assign(is_case=True)
    flips = analysis.flips
    rows = cases
    if source.every_comparison:
        eligible = analysis.comparisons[analysis.comparisons["eligible"] & ~analysis.comparisons["case"]]
        others = eligible.assign(is_case=False, verdict="")
        rows = pd.concat([cases, others], ignore_index=True)
    # The answers as the analysis scored them (its treatment of unsettled answers).
    table = analysis.scored_table(source.table)
    if source.every_comparison:
        flips = pd.concat([flips, comparison_flips(table, others, analysis.parameters.variant)], ignore_index=True)
    notes = _write_data(flips, table, analysis.parameters.variant, source, folder) if len(flips) else {}
    image_note = _fit_images(folder, source.max_bytes, len(rows) + 1,
                             Path(source.cache_dir) if source.cache_dir is not None else None)
    listed: dict[tuple, list[list[str]]] = {}
    for *key, question, direction in flips[[*CASE_KEY, "question_id", "direction"]].itertuples(index=False):
        listed.setdefault(tuple(key), []).append([question, direction])
    coverage = _run_coverage(analysis, cases)
    case_flips = analysis.flips
    weak = (case_flips[rests_on_weak_letter(case_flips).to_numpy() & (case_flips["direction"] == FLIP_INV).to_numpy()]
            .groupby(CASE_KEY, observed=True, sort=False).size()) if len(case_flips) else pd.Series(dtype=int)
    weak_of = {tuple(key): int(count) for key, count in weak.items()}
    for row in rows.to_dict("records"):
        key = tuple(row[c] for c in CASE_KEY)
        page = _page(row, listed.get(key, []), notes.get(key[1:4]), bool(row["is_case"]), image_note,
                     analysis.parameters.unsettled, coverage.get(key), weak_of.get(key, 0),
                     analysis.parameters.variant)
        (folder / page_name(key)).write_text(page, encoding="utf-8")
    (folder / "index.html").write_text(_index(rows, len(cases), source.every_comparison, image_note), encoding="utf-8")
    keys = [tuple(getattr(r, c) for c in CASE_KEY) for r in cases.itertuples(index=False)]
    return [(key, f"#{rank} {r.family}: {r.small} vs. {r.large}, {r.benchmark} {r.split} / {r.subtask}, Net "
             f"{r.net:+d}, " + str(r.verdict), f"{FOLDER}/{page_name(key)}")
            for rank, (key, r) in enumerate(zip(keys, cases.itertuples(index=False)), start=1)]


STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1200px; margin: 1.5em auto;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.4em; }
.badge { display: inline-block; padding: .1em .5em; border-radius: .8em; font-size: .75em; vertical-align: middle; }
.badge-pass { background: #d9f2dc; color: #11611c; } .badge-fail { background: #fadcdc; color: #8a1111; }
.badge-none { background: #eee; color: #555; } .badge-partial { background: #fdf0d0; color: #7a5200; }
table.checks th { text-align: left; padding-right: 1em; } table.checks td { padding: .1em .6em; }
table.data { border-collapse: collapse; font-size: 13px; } table.data th, table.data td { border: 1px solid #ccc; padding: 3px 7px; }
.note { color: #555; font-size: 13px; } .missing { color: #8a4b00; }
button[aria-pressed="true"] { font-weight: 700; }
li.flip { border-top: 1px solid #ccc; padding: .8em 0; }
.flip .images img { max-height: 150px; margin: 0 .4em .4em 0; border: 1px solid #ddd; cursor: zoom-in; }
.flip ol.options li.gold { font-weight: 700; }
.answers { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.answer { background: #fafafa; border: 1px solid #ddd; padding: .5em; }
.answer.right { border-left: 4px solid #2a9d3a; } .answer.wrong { border-left: 4px solid #c0392b; }
.answer pre { white-space: pre-wrap; max-height: 20em; overflow: auto; font-size: 12px; }
#overlay { position: fixed; inset: 0; background: rgba(0,0,0,.8); display: flex; align-items: center;
           justify-content: center; cursor: zoom-out; }
th[data-sort] { cursor: pointer; } th[aria-sort="ascending"]::after { content: " ▲"; }
th[aria-sort="descending"]::after { content: " ▼"; }
table.checks .fields, table.checks .counts { color: #555; font-size: 12px; }
details.runs { margin-top: .5em; } details.runs summary { cursor: pointer; color: #1a4f8a; }
table.runs { border-collapse: collapse; font-size: 12px; margin-top: .3em; }
table.runs th, table.runs td { border: 1px solid #ddd; padding: 3px 6px; vertical-align: top; text-align: left; }
table.runs td.right { border-left: 4px solid #2a9d3a; } table.runs td.wrong { border-left: 4px solid #c0392b; }
table.runs pre { white-space: pre-wrap; max-height: 12em; overflow: auto; }
#overlay[hidden] { display: none; } #overlay img { max-width: 95vw; max-height: 95vh; background: #fff; }
"""

# The pages' one script: the case page's flip list (from the subtask's data file) and the index's filters.
SCRIPT = r"""
(function () {
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  let TREATMENT = 'as the analysis chose';
  function how(a) {
    if (!a) return 'no answer in the logs';
    const parts = [];
    if (a.settled_by === 'unsettled') {
      parts.push('unsettled: the rules withheld ' + (a.candidate ? 'letter ' + a.candidate : 'a letter') +
                 (a.judge_status ? '' : ' and no judge was asked') + ' (counted: ' + TREATMENT + ')');
    } else if (a.prediction === null) parts.push('no letter: ' + (a.abstain_reason || 'unparsed'));
    else parts.push('letter ' + a.prediction + (a.settled_by === 'judge' ? ', settled by the judge' :
                                                a.settled_by === 'external' ? ', read by another harness' : ''));
    if (a.rule_words) parts.push(a.rule_words);
    else if (a.rule) parts.push('rule ' + a.rule);
    parts.push('tier ' + (a.extraction_tier || 'unknown'));
    if (a.judge_status) parts.push('judge ' + (a.judge || '') + ' ' + a.judge_status +
                                   (a.judge_verdict ? ' (verdict: ' + a.judge_verdict + ')' : ''));
    return parts.join(' · ');
  }
  const ESCAPES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
  function esc(value) { return String(value).replace(/[&<>"']/g, c => ESCAPES[c]); }
  function answerBox(model, a) {
    const right = a && a.correct === true;
    return '<div class="answer ' + (right ? 'right' : 'wrong') + '"><strong>' + esc(model) +
           (right ? ': right' : ': wrong') + '</strong><div class="how">' + esc(how(a)) + '</div><pre class="response">' +
           esc(a && a.response !== null ? a.response : '(no response)') + '</pre></div>';
  }
  // One flip as HTML text (the list is built by string joins and one insertion per batch, not node by node).
  // Thumbnails carry data-src: their src is set once they are in the page, so that lazy loading applies.
  function flipHtml(spec, data, qid, direction) {
    const q = data ? data.questions[qid] : null;
    const parts = ['<li class="flip" data-question="' + esc(qid) + '" data-direction="' + direction + '">',
                   '<div class="head">' + direction + ' · question ' + esc(qid) + '</div>'];
    if (q && q.images.length) {
      parts.push('<div class="images">');
      for (const image of q.images)
        parts.push('<a class="full" href="../' + esc(image.full) + '"><img loading="lazy" alt="image of question ' +
                   esc(qid) + '" data-src="../' + esc(image.thumb) + '"></a>');
      parts.push('</div>');
    }
    if (q && q.image_problems && q.image_problems.length)
      parts.push('<p class="note missing">' + esc('Left out, cannot be read: ' + q.image_problems.join('; ')) + '</p>');
    if (q && q.hint) parts.push('<p class="hint">' + esc('Hint: ' + q.hint) + '</p>');
    if (q && q.text) parts.push('<p class="question">' + esc(q.text) + '</p>');
    if (q && q.options && q.options.length) {
      parts.push('<ol class="options" type="A">');
      q.options.forEach((option, i) => {
        const gold = String.fromCharCode(65 + i) === q.gold;
        parts.push((gold ? '<li class="gold">' : '<li>') + esc(option) + '</li>');
      });
      parts.push('</ol>');
    }
    parts.push('<p class="gold-line">' + esc('Gold: ' + (q ? q.gold : '?')) + '</p><div class="answers">');
    for (const model of [spec.small, spec.large])
      parts.push(answerBox(model, data ? (data.answers[model] || {})[qid] : null));
    parts.push('</div>');
    const runs = otherRuns(spec, data, qid);
    if (runs.length)
      parts.push('<details class="runs" data-question="' + esc(qid) + '"><summary>The same question in the other ' +
                 'runs: ' + esc(runs.join(', ')) + '</summary></details>');
    parts.push('</li>');
    return parts.join('');
  }
  // The control runs (identity re-run, reordered runs) that hold an answer of either model to the question.
  function otherRuns(spec, data, qid) {
    if (!data || !data.runs) return [];
    return Object.keys(data.runs).filter(run =>
      [spec.small, spec.large].some(model => (data.runs[run][model] || {})[qid]));
  }
  function runCell(a) {
    if (!a) return '<td class="absent">not in this run</td>';
    const letter = a.prediction || a.candidate;
    const option = a.options && letter && letter.length === 1 ? a.options[letter.charCodeAt(0) - 65] : undefined;
    const verdict = a.correct === true ? 'right' : a.correct === false ? 'wrong' : 'not scored';
    return '<td class="' + verdict.replace(' ', '-') + '"><strong>' + verdict + '</strong> · ' + esc(how(a)) +
           (option !== undefined ? ' · ' + esc(letter + ': ' + option) : '') +
           (a.options ? '<div class="run-options">' + esc('options as shown: ' + a.options.map((o, i) =>
             String.fromCharCode(65 + i) + '. ' + o).join('  ')) + '</div>' : '') +
           '<details><summary>response</summary><pre class="run-response">' +
           esc(a.response !== null && a.response !== undefined ? a.response : '(no response)') + '</pre></details></td>';
  }
  // A flip's answers in the analysed run and every other run, both models side by side (drawn when opened).
  function runsHtml(spec, data, qid) {
    const rows = ['<table class="runs"><thead><tr><th>run</th><th>' + esc(spec.small) + '</th><th>' +
                  esc(spec.large) + '</th></tr></thead><tbody>'];
    const mine = model => (data.answers[model] || {})[qid];
    rows.push('<tr class="analysed"><th>' + esc(spec.variant + ' (analysed)') + '</th>' + runCell(mine(spec.small)) +
              runCell(mine(spec.large)) + '</tr>');
    for (const run of otherRuns(spec, data, qid)) {
      const theirs = model => (data.runs[run][model] || {})[qid];
      rows.push('<tr data-run="' + esc(run) + '"><th>' + esc(run) + '</th>' + runCell(theirs(spec.small)) +
                runCell(theirs(spec.large)) + '</tr>');
    }
    rows.push('</tbody></table>');
    return rows.join('');
  }
  function casePage() {
    const spec = JSON.parse(document.getElementById('flips').textContent);
    TREATMENT = spec.unsettled;
    const data = (window.EXPLORER_DATA || {})[spec.data];
    const list = document.getElementById('flip-list');
    const more = document.getElementById('more');
    const overlay = document.getElementById('overlay');
    overlay.addEventListener('click', () => { overlay.hidden = true; });
    // toggle does not bubble: caught on the way down, each flip's other runs drawn the first time it is opened
    list.addEventListener('toggle', e => {
      const box = e.target;
      if (!box.classList || !box.classList.contains('runs') || !box.open || box.dataset.drawn) return;
      box.insertAdjacentHTML('beforeend', runsHtml(spec, data, box.dataset.question));
      box.dataset.drawn = '1';
    }, true);
    list.addEventListener('click', e => {
      const link = e.target.closest('a.full');
      if (!link) return;
      e.preventDefault();
      overlay.querySelector('img').src = link.getAttribute('href');
      overlay.hidden = false;
    });
    // The flips of the chosen direction are drawn spec.batch at a time: the first batch at once, the next when
    // the end of the list scrolls into view or on the buttons, so that a page of hundreds of flips opens quickly.
    let selected = [], drawn = 0;
    function draw(upTo) {
      const end = Math.min(upTo, selected.length);
      if (end > drawn) {
        list.insertAdjacentHTML('beforeend', selected.slice(drawn, end)
          .map(([qid, direction]) => flipHtml(spec, data, qid, direction)).join(''));
        for (const thumb of list.querySelectorAll('img[data-src]')) {
          thumb.src = thumb.dataset.src;
          thumb.removeAttribute('data-src');
        }
        drawn = end;
      }
      more.hidden = drawn >= selected.length;
      document.getElementById('shown-count').textContent = String(drawn);
      document.getElementById('selected-count').textContent = String(selected.length);
    }
    function show(direction) {
      selected = spec.flips.filter(([, d]) => direction === 'all' || d === direction);
      list.textContent = '';
      drawn = 0;
      draw(spec.batch);
      for (const b of document.querySelectorAll('button[data-direction]'))
        b.setAttribute('aria-pressed', String(b.dataset.direction === direction));
    }
    for (const b of document.querySelectorAll('button[data-direction]'))
      b.addEventListener('click', () => show(b.dataset.direction));
    document.getElementById('show-more').addEventListener('click', () => draw(drawn + spec.batch));
    document.getElementById('show-all').addEventListener('click', () => draw(selected.length));
    // The next batch once the end of the list is within 600 px of the window: on scrolling, and (observer) when
    // it is in view without a scroll, e.g. on a tall window.
    function nearEnd() { return !more.hidden && more.getBoundingClientRect().top < window.innerHeight + 600; }
    window.addEventListener('scroll', () => { if (nearEnd()) draw(drawn + spec.batch); }, {passive: true});
    if ('IntersectionObserver' in window) {
      const watcher = new IntersectionObserver(() => {
        if (!nearEnd()) return;
        draw(drawn + spec.batch);
        watcher.unobserve(more);  // observed afresh: it reports again if the end of the list is still in view
        watcher.observe(more);
      }, {rootMargin: '600px'});
      watcher.observe(more);
    }
    const wanted = location.hash.slice(1);
    show(wanted === 'FlipInv' || wanted === 'FlipNorm' ? wanted : 'all');
  }
  function indexPage() {
    const entries = JSON.parse(document.getElementById('entries').textContent);
    entries.forEach((e, i) => { e.rank = i + 1; });  // the cases by Net first, then the other comparisons
    const body = document.querySelector('#index tbody');
    const every = document.getElementById('every');
    const filters = ['benchmark', 'family', 'subtask'].map(name => [name, document.getElementById('filter-' + name)]);
    for (const [name, select] of filters)
      for (const value of [...new Set(entries.map(e => e[name]))]) select.appendChild(el('option', {}, value));
    const direction = document.getElementById('filter-direction');
    let order = null, descending = false;  // the sort key (null: the cases' order) and its direction
    function compare(a, b) {
      const x = a[order], y = b[order];
      if (x === y) return a.rank - b.rank;
      if (x === null || x === '') return 1;  // missing values last, either way
      if (y === null || y === '') return -1;
      const sign = descending ? -1 : 1;
      return sign * (typeof x === 'number' ? x - y : String(x).localeCompare(String(y)));
    }
    function number(value, digits) { return value === null ? '–' : value.toPrecision(digits); }
    // Each failed check with its fields, then the others that did not pass, by state ("not run: extraction").
    function checksText(e) {
      if (!e.case) return '';
      const failed = e.checks.filter(([, state]) => state === 'fail')
        .map(([name, , fields]) => name + ': fail' + (fields ? ' (' + fields + ')' : ''));
      const others = {};
      for (const [name, state] of e.checks)
        if (state !== 'pass' && state !== 'fail') (others[state] = others[state] || []).push(name);
      return [...failed, ...Object.entries(others).map(([state, names]) => state + ': ' + names.join(', '))]
        .join(' · ');
    }
    // The rows as one HTML string, inserted at once (not node by node: at paper scale hundreds of rows).
    function draw() {
      const shown = entries.filter(e => (e.case || (every && every.checked)) &&
        !filters.some(([name, select]) => select.value && e[name] !== select.value));
      if (order) shown.sort(compare);
      const hash = direction.value ? '#' + direction.value : '';
      body.innerHTML = shown.map(e => '<tr class="' + (e.case ? 'case' : 'comparison') + '"><td><a href="' +
        esc(e.page + hash) + '" class="case-link">' + e.rank + '</a></td>' +
        [e.family, e.benchmark + ' ' + e.split, e.subtask, e.small, e.large, e.n, e.flip_inv, e.flip_norm, e.net,
         number(e.p, 2), number(e.q, 2), e.verdict || (e.case ? '' : 'not a case'), checksText(e)]
          .map(value => '<td>' + esc(value) + '</td>').join('') + '</tr>').join('');
      for (const th of document.querySelectorAll('#index th[data-sort]'))
        th.setAttribute('aria-sort', th.dataset.sort === order ? (descending ? 'descending' : 'ascending') : 'none');
    }
    for (const th of document.querySelectorAll('#index th[data-sort]'))
      th.addEventListener('click', () => {
        descending = th.dataset.sort === order ? !descending : ['net', 'n', 'flip_inv', 'flip_norm'].includes(th.dataset.sort);
        order = th.dataset.sort;
        draw();
      });
    for (const [, select] of filters) select.addEventListener('change', draw);
    direction.addEventListener('change', draw);
    if (every) every.addEventListener('change', draw);
    draw();
  }
  if (document.getElementById('flips')) casePage();
  else if (document.getElementById('entries')) indexPage();
})();
"""
