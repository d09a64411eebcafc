"""Long real prose and MathVista: the responses the M3CoT samples of issue 17 hardly hold, drawn for labelling.

Two sources of real model text (read at run time, never copied into the repository):
  m3cot      ../shared/data/m3cot/<model>__<style>.jsonl.gz (extraction_bench.real), the final message
  mathvista  ../shared/data/mathvista/<run>.jsonl.gz: 17 runs on MathVista testmini (8 multimodal models and
             chatgpt/claude/gpt4 with long worked solutions); the prompt letters the `choices` (A), (B), ...;
             free-form questions carry `answer_type` (integer, float with `precision`, list) and `unit`

An item is named by its key, "m3cot:<file>/<id>" or "mathvista:<run>/<pid>", in the labellers' input and in
the label files. The draws here are stratified by source file and never take an item an earlier sample holds:

  long multiple choice   responses of more than LONG_WORDS words from both sources
  short MathVista MC     MathVista multiple-choice responses of LONG_WORDS words or fewer (answered by a letter,
                         by the option's text, or both)
  MathVista free form    integer, float and list answers

The gold answer is never written to a labeller's input.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

from . import real

MATHVISTA_FOLDER = real.REPO.parent / "shared" / "data" / "mathvista"
LONG_WORDS = 100  # "long prose": more words than this (issue 31)
M3COT, MATHVISTA = "m3cot", "mathvista"


@dataclass(frozen=True)
class Item:
    """One real response as a labeller sees it, with what the extractors need to read it."""

    key: str  # "m3cot:<file>/<id>" | "mathvista:<run>/<pid>"
    source: str  # M3COT | MATHVISTA
    file: str  # the data file without .jsonl.gz: "<model>__<style>" or the MathVista run
    id: str
    response: str
    options: tuple[str, ...]  # () for a free-form question
    question: str | None = None  # MathVista's question (free form: the labeller needs to know what is asked)
    answer_type: str | None = None  # MathVista: text | integer | float | list
    precision: int | None = None
    unit: str | None = None

    @property
    def words(self) -> int:
        return len(self.response.split())

    @property
    def model(self) -> str:
        """The model that wrote it: M3CoT's file prefix; MathVista's run without its prompt suffixes."""
        if self.source == M3COT:
            return self.file.split("__")[0]
        return self.file.split("_2shot")[0]


def item_key(source: str, file: str, id_: str) -> str:
    return f"{source}:{file}/{id_}"


def m3cot_items(data: Path = real.DATA_FOLDER) -> list[Item]:
    """Every M3CoT response with options, as Items (the final message, as extraction_bench.real reads it)."""
    files = {path.name.removesuffix(".jsonl.gz") for path in data.glob("*__*.jsonl.gz")}
    return [Item(item_key(M3COT, file, id_), M3COT, file, id_, response, tuple(options))
            for (file, id_), (options, response) in sorted(real.load_responses(files, data).items())]


def mathvista_items(data: Path = MATHVISTA_FOLDER) -> list[Item]:
    """Every MathVista response of every run, as Items."""
    items = []
    for path in sorted(data.glob("*.jsonl.gz")):
        run = path.name.removesuffix(".jsonl.gz")
        with gzip.open(path, "rt") as handle:
            for number, line in enumerate(handle, 1):
                record = json.loads(line)
                try:
                    choices = record["choices"] if record["question_type"] == "multi_choice" else None
                    items.append(Item(item_key(MATHVISTA, run, str(record["pid"])), MATHVISTA, run, str(record["pid"]),
                                      str(record["response"] or ""), tuple(str(c) for c in choices or ()),
                                      str(record["question"]), record["answer_type"], record.get("precision"),
                                      record.get("unit")))
                except KeyError as error:
                    raise real.LabelError(f"{path}:{number}: missing field {error.args[0]!r}") from None
    return items


def _draw(items: list[Item], per_file: int, share: float, seed: int, exclude: set[str]) -> list[Item]:
    """Up to `per_file` items of every file (at most `share` of what the file has left, at least one), none in
    `exclude`, shuffled across files."""
    rng = random.Random(seed)
    by_file: dict[str, list[Item]] = {}
    for item in items:
        if item.key not in exclude:
            by_file.setdefault(item.file, []).append(item)
    drawn = []
    for file in sorted(by_file):
        pool = sorted(by_file[file], key=lambda item: item.key)
        take = min(per_file, max(1, round(share * len(pool))), len(pool))
        drawn += rng.sample(pool, take)
    rng.shuffle(drawn)
    return drawn


def draw(kind: str, per_file: int, share: float, seed: int, exclude: set[str],
         m3cot: Path = real.DATA_FOLDER, mathvista: Path = MATHVISTA_FOLDER) -> list[Item]:
    """A draw of one kind (`long_mc`, `short_mathvista_mc`, `mathvista_free_form`; module docstring)."""
    if kind == "long_mc":
        pool = [item for item in m3cot_items(m3cot) + mathvista_items(mathvista) if item.options and item.words > LONG_WORDS]
    elif kind == "short_mathvista_mc":
        pool = [item for item in mathvista_items(mathvista) if item.options and item.words <= LONG_WORDS]
    elif kind == "mathvista_free_form":
        pool = [item for item in mathvista_items(mathvista) if not item.options]
    else:
        raise ValueError(f"unknown draw kind {kind!r}")
    return _draw(pool, per_file, share, seed, exclude)


def labeller_input(item: Item) -> dict:
    """What a labeller reads of an item: never the gold, never an extractor's reading."""
    shown = {"key": item.key, "response": item.response}
    if item.options:
        shown["options"] = list(item.options)
    else:
        shown.update(question=item.question, answer_type=item.answer_type, precision=item.precision, unit=item.unit)
    return shown
