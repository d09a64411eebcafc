"""Long real prose and MathVista: the responses the M3CoT samples of issue 17 hardly hold, drawn for labelling.

Three sources of real model text (read at run time, never copied into the repository):
  m3cot       ../shared/data/m3cot/<model>__<style>.jsonl.gz (extraction_bench.real), the final message
  mathvista   ../shared/data/mathvista/<run>.jsonl.gz: 17 runs on MathVista testmini (8 multimodal models and
              chatgpt/claude/gpt4 with long worked solutions); the prompt letters the `choices` (A), (B), ...;
              free-form questions carry `answer_type` (integer, float with `precision`, list) and `unit`
  vlmevalkit  ../shared/data/vlmevalkit/**/<model>_<dataset>.xlsx: VLMEvalKit prediction files as their owners saved
              them (Gemma3-12B and Idefics3-8B on AfrimedQA, Qwen2.5-VL-3B/7B on LogicVista, Qwen2.5-VL-7B on
              MathVista testmini), options and kinds as postprocess's importer reads them; a MathVista row takes
              `precision` and `unit` from the MathVista data of its pid (VLMEvalKit's file lacks them)

An item is named by its key, "m3cot:<file>/<id>", "mathvista:<run>/<pid>" or "vlmevalkit:<model>/<dataset>/<index>",
in the labellers' input and in the label files. The draws here are stratified by source file and never take an item an earlier sample holds:

  long multiple choice   responses of more than LONG_WORDS words from both sources
  short MathVista MC     MathVista multiple-choice responses of LONG_WORDS words or fewer (answered by a letter,
                         by the option's text, or both)
  MathVista free form    integer, float and list answers
  VLMEvalKit MC          the VLMEvalKit files' multiple-choice answers of any length

The gold answer is never written to a labeller's input.

The labels (tests/lmms_eval_tasks/extraction_real/long_prose/, its README) are one JSON object a line, `key,
expected, reason, note` (as extraction_bench.real's, the key for `file` and `id`); a sample is the union of its
chunk files (SAMPLES): every sample the rules are fitted to (FITTED: the earlier held-out samples, scored once each, and the
dev samples), and the held-out sample of the current rules, scored once with them (HELD_OUT).
`read_sample` reads each labelled item as real.read_sample does, and `scorecard` adds what issue 31 targets: the
share of the answers that state a letter for which one is committed, and the letters withheld per model.
"""

from __future__ import annotations

import functools
import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.extraction import extract_choice
from lmms_eval_tasks.question import LETTERS

from . import real

MATHVISTA_FOLDER = real.REPO.parent / "shared" / "data" / "mathvista"
VLMEVALKIT_FOLDER = real.REPO.parent / "shared" / "data" / "vlmevalkit"
LONG_WORDS = 100  # "long prose": more words than this (issue 31)
M3COT, MATHVISTA, VLMEVALKIT = "m3cot", "mathvista", "vlmevalkit"
SOURCES = (M3COT, MATHVISTA, VLMEVALKIT)
VLMEVALKIT_SUBTASKS = {"AfrimedQA": "specialty", "LogicVista": "skill"}  # datasets not among the paper's: the column the importer needs
MATHVISTA_DATASET = "MathVista_MINI"
LABELS_FOLDER = real.LABELS_FOLDER / "long_prose"
SAMPLES = {"long_dev": ("long_dev_1", "long_dev_2"),  # fitting data
           # scored once with the rules frozen at 10b44a1 (issue 31 item 4); fitting data since
           "long_heldout": ("long_heldout_1", "long_heldout_2", "long_heldout_3"),
           # read by two readers, their differences settled by a third; scored once, with the rules frozen after fitting
           # on the two samples above (readings/long_heldout2_readings.jsonl holds both readings)
           "long_heldout2": tuple(f"long_heldout2_{k}" for k in range(1, 7)),
           # the third round, read as the second; with VLMEvalKit files of models no rule was fitted to
           "long_heldout3": tuple(f"long_heldout3_{k}" for k in range(1, 6)),
           # VLMEvalKit answers of any length (not those of long_heldout4), read by two readers: fitting data
           "vlmevalkit_dev": tuple(f"vlmevalkit_dev_{k}" for k in range(1, 5)),
           # the fourth round: the last gpt4v long answers and VLMEvalKit ones, read as the second; scored once
           "long_heldout4": tuple(f"long_heldout4_{k}" for k in range(1, 6)),
           # the fifth round: the last long answers the sources hold, read as the second; scored once
           "long_heldout5": tuple(f"long_heldout5_{k}" for k in range(1, 5)),
           # the sixth round: the 46 long answers left after the fifth, read as the second
           "long_heldout6": ("long_heldout6_1",)}
# Every sample read since it was scored is fitting data: long_heldout2 to long_heldout6 were each scored once with
# frozen rules (48e77bf, 6166c3f, af1e20b, 34333cd, de283da) and fitted to since; vlmevalkit_dev was drawn for fitting.
FITTED = ("long_dev", "long_heldout", "long_heldout2", "long_heldout3", "vlmevalkit_dev", "long_heldout4",
          "long_heldout5", "long_heldout6")
HELD_OUT: tuple[str, ...] = ()
FIELDS = ("key", "expected", "reason", "note")


@dataclass(frozen=True)
class Item:
    """One real response as a labeller sees it, with what the extractors need to read it."""

    key: str  # "m3cot:<file>/<id>" | "mathvista:<run>/<pid>" | "vlmevalkit:<model>/<dataset>/<index>"
    source: str  # M3COT | MATHVISTA | VLMEVALKIT
    file: str  # the data file without .jsonl.gz: "<model>__<style>" or the MathVista run; VLMEvalKit's "<model>/<dataset>"
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
        """The model that wrote it: M3CoT's file prefix; MathVista's run without its prompt suffixes; VLMEvalKit's
        model folder."""
        if self.source == M3COT:
            return self.file.split("__")[0]
        if self.source == VLMEVALKIT:
            return self.file.split("/")[0]
        return self.file.split("_2shot")[0]

    @property
    def dataset(self) -> str:
        """The benchmark: "M3CoT", "MathVista", or the VLMEvalKit dataset."""
        return {M3COT: "M3CoT", MATHVISTA: "MathVista"}.get(self.source) or self.file.split("/", 1)[1]


def item_key(source: str, file: str, id_: str) -> str:
    return f"{source}:{file}/{id_}"


def m3cot_items(data: Path = real.DATA_FOLDER) -> list[Item]:
    """Every M3CoT response with options, as Items (the final message, as extraction_bench.real reads it)."""
    files = {path.name.removesuffix(".jsonl.gz") for path in data.glob("*__*.jsonl.gz")}
    return [Item(item_key(M3COT, file, id_), M3COT, file, id_, response, tuple(options))
            for (file, id_), (options, response) in sorted(real.load_responses(files, data).items())]


def mathvista_records(path: Path):
    """(line number, record) of a MathVista run file, one JSON object a line."""
    with gzip.open(path, "rt") as handle:
        for number, line in enumerate(handle, 1):
            yield number, json.loads(line)


def mathvista_items(data: Path = MATHVISTA_FOLDER) -> list[Item]:
    """Every MathVista response of every run, as Items."""
    items = []
    for path in sorted(data.glob("*.jsonl.gz")):
        run = path.name.removesuffix(".jsonl.gz")
        for number, record in mathvista_records(path):
            try:
                choices = record["choices"] if record["question_type"] == "multi_choice" else None
                items.append(Item(item_key(MATHVISTA, run, str(record["pid"])), MATHVISTA, run, str(record["pid"]),
                                  str(record["response"] or ""), tuple(str(c) for c in choices or ()),
                                  str(record["question"]), record["answer_type"], record.get("precision"),
                                  record.get("unit")))
            except KeyError as error:
                raise real.LabelError(f"{path}:{number}: missing field {error.args[0]!r}") from None
    return items


@functools.lru_cache(maxsize=4)
def vlmevalkit_items(data: Path = VLMEVALKIT_FOLDER, mathvista: Path = MATHVISTA_FOLDER) -> tuple[Item, ...]:
    """Every row of every VLMEvalKit prediction file under `data` (its scoring files skipped), as Items: options as
    postprocess's importer reads them (letter columns, MathVista's `choices`, LogicVista's question); a MathVista row
    is free form when it has no options, with the `precision` and `unit` of its pid in the MathVista data. Read once
    per folder pair: the spreadsheets take seconds, and every labelled sample that names them asks again."""
    from postprocess.logs.imports.vlmevalkit import is_scoring_file, split_vlmevalkit_name, vlmevalkit_table

    runs = sorted(mathvista.glob("*.jsonl.gz")) if mathvista.is_dir() else []
    benchmark = {str(record["pid"]): record for _, record in mathvista_records(runs[0])} if runs else {}
    items = []
    for path in sorted(data.rglob("*.xlsx")):
        frame = pd.read_excel(path)
        if is_scoring_file(frame):
            continue
        model, dataset = split_vlmevalkit_name(path)
        table = vlmevalkit_table(frame, path, model, dataset, subtask_column=VLMEVALKIT_SUBTASKS.get(dataset))
        file = f"{model}/{dataset}"
        for row in table.itertuples(index=False):
            index = str(row.question_id)
            facts = benchmark.get(index, {}) if dataset == MATHVISTA_DATASET else {}
            items.append(Item(item_key(VLMEVALKIT, file, index), VLMEVALKIT, file, index, str(row.response or ""),
                              tuple(str(option) for option in row.options),
                              facts.get("question", getattr(row, "question", None)), getattr(row, "answer_type", None),
                              facts.get("precision"), facts.get("unit")))
    return tuple(items)


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


KINDS = ("long_mc", "short_mathvista_mc", "mathvista_free_form", "vlmevalkit_mc")


def draw(kind: str, per_file: int, share: float, seed: int, exclude: set[str], m3cot: Path = real.DATA_FOLDER,
         mathvista: Path = MATHVISTA_FOLDER, vlmevalkit: Path | None = None) -> list[Item]:
    """A draw of one kind (KINDS; module docstring), from M3CoT and MathVista and, when a folder is given, the
    VLMEvalKit files under it (MathVista_MINI only for the MathVista kinds; `vlmevalkit_mc`: their multiple-choice
    answers of any length)."""
    if kind not in KINDS:
        raise ValueError(f"unknown draw kind {kind!r}")
    imported = list(vlmevalkit_items(vlmevalkit, mathvista)) if vlmevalkit is not None else []
    of_mathvista = mathvista_items(mathvista)
    on_mathvista = of_mathvista + [item for item in imported if item.dataset == MATHVISTA_DATASET]
    if kind == "long_mc":
        pool = [item for item in m3cot_items(m3cot) + of_mathvista + imported if item.options and item.words > LONG_WORDS]
    elif kind == "vlmevalkit_mc":
        pool = [item for item in imported if item.options]
    elif kind == "short_mathvista_mc":
        pool = [item for item in on_mathvista if item.options and item.words <= LONG_WORDS]
    else:
        pool = [item for item in on_mathvista if not item.options]
    return _draw(pool, per_file, share, seed, exclude)


def labeller_input(item: Item) -> dict:
    """What a labeller reads of an item: never the gold, never an extractor's reading."""
    shown = {"key": item.key, "response": item.response}
    if item.options:
        shown["options"] = list(item.options)
    else:
        shown.update(question=item.question, answer_type=item.answer_type, precision=item.precision, unit=item.unit)
    return shown


# ---------------------------------------------------------------- labels and scoring

@dataclass(frozen=True)
class LongLabel:
    key: str
    expected: str | None
    reason: str | None
    note: str | None

    @property
    def source(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def file(self) -> str:
        return self.key.split(":", 1)[1].rsplit("/", 1)[0]

    @property
    def id(self) -> str:
        return self.key.rsplit("/", 1)[1]


def _label(record: object, where: str) -> LongLabel:
    record = real.require_fields(record, where, FIELDS)
    key = record["key"]
    if not isinstance(key, str) or key.split(":", 1)[0] not in SOURCES or "/" not in key.partition(":")[2]:
        raise real.LabelError(f"{where}: field 'key' {key!r} is not 'm3cot:<file>/<id>', 'mathvista:<run>/<pid>' or "
                              "'vlmevalkit:<model>/<dataset>/<index>'")
    real.check_verdict(record, where)
    real.check_letter(record, where)
    return LongLabel(key, record["expected"], record["reason"], record["note"])


def load_labels(paths: list[Path]) -> list[LongLabel]:
    """The labels of a sample's files, in file order; a key appears once in all of them."""
    return unique_keys((_label(record, where), where) for path in paths for where, record in real.label_records(path))


def unique_keys(labelled):
    """The (label, where) pairs' labels in order; a key seen before is a LabelError naming both lines."""
    labels, seen = [], {}
    for label, where in labelled:
        if label.key in seen:
            raise real.LabelError(f"{where}: field 'key' {label.key!r} repeats {seen[label.key]}")
        seen[label.key] = where
        labels.append(label)
    return labels


def sample_paths(name: str, folder: Path = LABELS_FOLDER) -> list[Path]:
    if name not in SAMPLES:
        raise ValueError(f"unknown long-prose sample {name!r} (samples: {', '.join(SAMPLES)})")
    return [folder / f"{chunk}.jsonl" for chunk in SAMPLES[name]]


def load_sample(name: str, folder: Path = LABELS_FOLDER) -> list[LongLabel]:
    """Every label of a sample (SAMPLES), its chunk files in order; a missing chunk is an error naming it."""
    paths = sample_paths(name, folder)
    for path in paths:
        if not path.exists():
            raise real.LabelError(f"{path}: no such label file (a chunk of sample {name!r})")
    return load_labels(paths)


def labelled_items(labels: list[LongLabel], m3cot: Path = real.DATA_FOLDER, mathvista: Path = MATHVISTA_FOLDER,
                   vlmevalkit: Path = VLMEVALKIT_FOLDER) -> dict[str, Item]:
    """key -> Item for every label, read from the data folders; a key the data does not hold is an error."""
    files = {label.file for label in labels if label.source == M3COT}
    items = {item_key(M3COT, file, id_): Item(item_key(M3COT, file, id_), M3COT, file, id_, response, tuple(options))
             for (file, id_), (options, response) in real.load_responses(files, m3cot).items()}
    if any(label.source == MATHVISTA for label in labels):
        items.update((item.key, item) for item in mathvista_items(mathvista))
    if any(label.source == VLMEVALKIT for label in labels):
        items.update((item.key, item) for item in vlmevalkit_items(vlmevalkit, mathvista))
    for label in labels:
        if label.key not in items or not items[label.key].options:
            raise real.LabelError(f"{label.key}: no multiple-choice response with that key in {m3cot}, {mathvista} "
                                  f"or {vlmevalkit}")
    return {label.key: items[label.key] for label in labels}


def read_sample(labels: list[LongLabel], m3cot: Path = real.DATA_FOLDER, mathvista: Path = MATHVISTA_FOLDER,
                vlmevalkit: Path = VLMEVALKIT_FOLDER) -> pd.DataFrame:
    """One row per label: the label, what extract_choice reads, whether they agree (real.read_sample's columns, with
    the source; `style` is the M3CoT style, the MathVista run's prompt or the VLMEvalKit dataset, `prompt` the
    source)."""
    items = labelled_items(labels, m3cot, mathvista, vlmevalkit)
    rows = []
    for label in labels:
        item = items[label.key]
        if label.expected is not None and label.expected not in LETTERS[: len(item.options)]:
            raise real.LabelError(f"{label.key}: field 'expected' {label.expected!r} is not one of the option letters")
        extraction = extract_choice(item.response, list(item.options))
        if item.source == M3COT:
            style = item.file.split("__")[1]
        elif item.source == VLMEVALKIT:
            style = item.dataset
        else:
            style = item.file[len(item.model) :].lstrip("_") or "zero-shot"
        rows.append({
            "id": label.key, "source": item.source, "model": item.model, "style": style, "prompt": item.source,
            "words": item.words, "committed": label.expected is not None, "expected": label.expected,
            "label_reason": label.reason, "note": label.note, "prediction": extraction.prediction,
            "candidate": extraction.candidate, "rule": extraction.rule, "tier": extraction.tier,
            "reason": extraction.reason, "given": extraction.found,
            "right": extraction.found and extraction.prediction == label.expected,
            "withheld_right": extraction.reason == "inconclusive" and extraction.candidate == label.expected,
        })
    return pd.DataFrame(rows)


def target_table(read: pd.DataFrame) -> pd.DataFrame:
    """Per model and over all, the figures issue 31 sets targets for: precision of the letters committed, the share of
    the answers that state a letter for which the right one is committed, and the share of all answers withheld."""
    def row(group: pd.DataFrame) -> dict:
        stated = group[group.committed]
        given, withheld = int(group.given.sum()), int((group.reason == "inconclusive").sum())
        return {"items": len(group), "letters committed": given, "right": int(group.right.sum()),
                "precision": group.right.sum() / given if given else float("nan"),
                "stating a letter": len(stated), "committed share": stated.right.mean() if len(stated) else float("nan"),
                "withheld": withheld, "withheld share": withheld / len(group)}
    table = pd.DataFrame({model: row(group) for model, group in read.groupby("model", sort=True)}).T
    table.loc["all"] = pd.Series(row(read))
    return table.rename_axis("model")


SIZABLE = 20  # items of a model that make its withheld share worth reading beside the worst
TARGETS = {"precision": 0.999, "committed share": 0.95, "withheld share": 0.03, "withheld share per model": 0.05}


def scorecard(read: pd.DataFrame, title: str) -> str:
    """The Markdown scorecard of a long-prose sample: the issue's targets over all and per model, then
    real.scorecard's tables (per tier, rule, source, style and model)."""
    table = target_table(read)
    total = table.loc["all"]
    models = table.drop(index="all")
    worst = models["withheld share"].idxmax()
    sizable = models[models["items"] >= SIZABLE]["withheld share"].idxmax()  # a model of 1 item is 0% or 100%
    shown = table.copy()
    for column in ("precision", "committed share", "withheld share"):
        shown[column] = shown[column].map(lambda v: "-" if pd.isna(v) else f"{v:.1%}")
    for column in ("items", "letters committed", "right", "stating a letter", "withheld"):
        shown[column] = shown[column].astype(int)
    lines = [
        f"### {title}: targets (issue 31)", "",
        "| measure | value | target |", "|---|---|---|",
        f"| precision (right / letters committed) | {int(total.right)} / {int(total['letters committed'])} = "
        f"{total.precision:.2%} | >= {TARGETS['precision']:.1%} |",
        f"| committed (right letters / answers that state one) | {int(total.right)} / {int(total['stating a letter'])} = "
        f"{total['committed share']:.2%} | >= {TARGETS['committed share']:.0%} |",
        f"| withheld (inconclusive / all) | {int(total.withheld)} / {int(total['items'])} = {total['withheld share']:.2%} "
        f"| <= {TARGETS['withheld share']:.0%} |",
        f"| withheld, worst model ({worst}) | {int(table.loc[worst, 'withheld'])} / {int(table.loc[worst, 'items'])} = "
        f"{table.loc[worst, 'withheld share']:.2%} | <= {TARGETS['withheld share per model']:.0%} |",
        f"| withheld, worst model of {SIZABLE} items or more ({sizable}) | {int(table.loc[sizable, 'withheld'])} / "
        f"{int(table.loc[sizable, 'items'])} = {table.loc[sizable, 'withheld share']:.2%} | (the same) |",
        "", "Per model:", "", shown.to_markdown(), "",
        real.scorecard(read, title).replace("Per prompt (direct; two-turn: cot, ccot, dsp)", "Per source"),
    ]
    return "\n".join(lines)
