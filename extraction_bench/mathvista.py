"""MathVista answers labelled by reading (issue 31 item 5): free-form answers (integer, float, list) and multiple
choice, read by our extraction and, beside it, by the MathVista authors' GPT-4 extraction (their `extraction` field:
a baseline, not the truth).

The repository holds keys and labels only, one item a line in tests/lmms_eval_tasks/extraction_real/mathvista/
<sample>.jsonl (that folder's README says how each sample was drawn):
  key       "mathvista:<run>/<pid>", the response of run <run> (../shared/data/mathvista/<run>.jsonl.gz) to <pid>, or
            "vlmevalkit:<model>/MathVista_MINI/<index>", a row of a VLMEvalKit prediction file on MathVista testmini
            (../shared/data/vlmevalkit, extraction_bench.long_prose.vlmevalkit_items; its index is MathVista's pid)
  expected  free form (LABELLING_NUMERIC.md): the number the response commits to as it states it ("14", "-0.5",
            "3/4", a ratio "3:2"), a JSON list of numbers ("[2, 3]"), or the phrase of an answer that is no number
            ("does not exist": committed, and no number read is right for it); multiple choice (LABELLING.md): the letter of the listed
            choice it commits to; null when it commits to none
  reason    null when expected is given; else why there is none (extraction_bench.real.LABEL_REASONS)
  note      the labeller's note, or null
A sample whose name starts with "numeric" is free form, one that starts with "mc" is multiple choice. The scorecard
groups free-form answers by MathVista's answer_type and multiple choice by its choices (choices_kind: yes/no,
values, text).

How an answer is read: free form by `scoring.extract` of the question MathVista's adapter makes (integer and float:
`extract_number`; list: `extract_answer_part`), multiple choice by `extract_choice` over the listed choices. A
prediction is right when it is the labelled number (the same value: "17.6" is "17.60", "0.75" is "3/4"; a list, the
same values in order) or the labelled letter. The authors' extraction is read the same way: a free-form one that is
a number (a list of numbers), and a multiple-choice one that is a choice's letter or exactly a choice's text; any
other (their "N/A", a sentence) gives no answer. Their `prediction` field maps every multiple-choice extraction to the
most similar choice, so it always names one: it is not what their extraction read, and is not used here. A
VLMEvalKit row's baseline is VLMEvalKit's own GPT-4o-mini extraction (`res` in its scoring file beside the
predictions), read the same way; the `gpt4` columns hold whichever GPT extraction the run was saved with.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.extraction import NUMBER, extract_choice, parse_number
from lmms_eval_tasks.extraction.vocabulary import option_value
from lmms_eval_tasks.question import LETTERS, NUMERIC, Question
from lmms_eval_tasks.scoring import extract

from . import long_prose, real

LABELS_FOLDER = real.LABELS_FOLDER / "mathvista"
DATA_FOLDER = long_prose.MATHVISTA_FOLDER
FREE_FORM, MULTIPLE_CHOICE = "free_form", "multiple_choice"
SAMPLE_KINDS = {"numeric": FREE_FORM, "mc": MULTIPLE_CHOICE}  # by the sample name's first word
# a sample: its chunk files. The dev samples and the first held-out ones (scored once in issue 31 item 5, looked at
# since) are fitted; the second held-out ones, read by two readers and their differences settled by a third
# (readings/), are scored once with frozen rules.
SAMPLES = {"numeric_dev_1": ("numeric_dev_1",), "mc_dev_1": ("mc_dev_1",), "numeric_heldout_1": ("numeric_heldout_1",),
           "mc_heldout_1": ("mc_heldout_1",), "numeric_heldout2": tuple(f"numeric_heldout2_{k}" for k in range(1, 4)),
           "mc_heldout2": ("mc_heldout2_1", "mc_heldout2_2"),
           "numeric_heldout3": ("numeric_heldout3_1", "numeric_heldout3_2"), "mc_heldout3": ("mc_heldout3_1",),
           "numeric_heldout4": ("numeric_heldout4_1", "numeric_heldout4_2"), "mc_heldout4": ("mc_heldout4_1",),
           "numeric_heldout5": ("numeric_heldout5_1", "numeric_heldout5_2"), "mc_heldout5": ("mc_heldout5_1",),
           "numeric_heldout6": ("numeric_heldout6_1", "numeric_heldout6_2"), "mc_heldout6": ("mc_heldout6_1",),
           "numeric_heldout7": ("numeric_heldout7_1", "numeric_heldout7_2"), "mc_heldout7": ("mc_heldout7_1",),
           "numeric_heldout8": ("numeric_heldout8_1", "numeric_heldout8_2"), "mc_heldout8": ("mc_heldout8_1",),
           "numeric_heldout9": ("numeric_heldout9_1", "numeric_heldout9_2"), "mc_heldout9": ("mc_heldout9_1",),
           "numeric_heldout10": ("numeric_heldout10_1", "numeric_heldout10_2"),
           "numeric_heldout11": ("numeric_heldout11_1", "numeric_heldout11_2"), "mc_heldout10": ("mc_heldout10_1",),
           "numeric_heldout12": tuple(f"numeric_heldout12_{k}" for k in range(1, 4)),
           "numeric_heldout13": tuple(f"numeric_heldout13_{k}" for k in range(1, 4)),
           "numeric_heldout14": tuple(f"numeric_heldout14_{k}" for k in range(1, 4)),
           "numeric_heldout15": tuple(f"numeric_heldout15_{k}" for k in range(1, 4)), "mc_heldout11": ("mc_heldout11_1",),
           "numeric_heldout16": tuple(f"numeric_heldout16_{k}" for k in range(1, 4)),
           "numeric_heldout17": tuple(f"numeric_heldout17_{k}" for k in range(1, 4)),
           "numeric_heldout18": tuple(f"numeric_heldout18_{k}" for k in range(1, 4))}
# the held-out samples of earlier rounds, each scored once with frozen rules (48e77bf, 6166c3f, af1e20b, 34333cd,
# 72af378, de283da, 2de4f3c, 51e8158, abc63b6, f7a2654, fdbe85a, bbfc942, 1c547a6, 00ba507), are fitted to since
FITTED = ("numeric_dev_1", "mc_dev_1", "numeric_heldout_1", "mc_heldout_1", "numeric_heldout2", "mc_heldout2",
          "numeric_heldout3", "mc_heldout3", "numeric_heldout4", "mc_heldout4", "numeric_heldout5", "mc_heldout5",
          "numeric_heldout6", "mc_heldout6", "numeric_heldout7", "mc_heldout7", "numeric_heldout8", "mc_heldout8",
          "numeric_heldout9", "numeric_heldout10", "numeric_heldout11", "numeric_heldout12", "numeric_heldout13",
          "numeric_heldout14", "numeric_heldout15", "numeric_heldout16")
# mc_heldout9, mc_heldout10 and mc_heldout11 are held-out samples of the multiple-choice rules, unchanged since 51e8158
# (fitted, mc_heldout9 would put answer_statement below the admission bar: docs/extraction_precision.md)
HELD_OUT = ("mc_heldout9", "mc_heldout10", "mc_heldout11", "numeric_heldout17", "numeric_heldout18")
FIELDS = ("key", "expected", "reason", "note")
NUMERIC_TYPES = ("integer", "float", "list")


def sample_kind(name: str) -> str:
    kind = SAMPLE_KINDS.get(name.split("_")[0])
    if kind is None:
        raise real.LabelError(f"{name}: a MathVista sample's name starts with one of {sorted(SAMPLE_KINDS)}")
    return kind


@dataclass(frozen=True)
class MathVistaLabel:
    key: str
    expected: str | None
    reason: str | None
    note: str | None

    @property
    def run(self) -> str:
        return self.key.split(":", 1)[1].rsplit("/", 1)[0]

    @property
    def pid(self) -> str:
        return self.key.rsplit("/", 1)[1]

    @property
    def model(self) -> str:
        """The model that wrote it: the run without its prompt suffixes ("gpt4_2shot_solution" is gpt4); a VLMEvalKit
        row's model folder."""
        return self.run.split("/")[0].split("_2shot")[0]


def _label(record: object, kind: str, where: str) -> MathVistaLabel:
    record = real.require_fields(record, where, FIELDS)
    key = record["key"]
    source, _, rest = key.partition(":") if isinstance(key, str) else ("", "", "")
    if not (source == long_prose.MATHVISTA and "/" in rest
            or source == long_prose.VLMEVALKIT and rest.count("/") == 2 and rest.split("/")[1] == long_prose.MATHVISTA_DATASET):
        raise real.LabelError(f"{where}: field 'key' {key!r} is not 'mathvista:<run>/<pid>' or "
                              f"'vlmevalkit:<model>/{long_prose.MATHVISTA_DATASET}/<index>'")
    real.check_verdict(record, where)
    expected = record["expected"]
    if kind == MULTIPLE_CHOICE:
        real.check_letter(record, where)
    elif expected is not None and (not isinstance(expected, str) or not expected.strip()):
        raise real.LabelError(f"{where}: field 'expected' {expected!r} is not a non-empty string")
    return MathVistaLabel(key, expected, record["reason"], record["note"])


def load_labels(path: Path, kind: str) -> list[MathVistaLabel]:
    """The labels of one sample file, in file order; every key once."""
    return _unique_labels([path], kind)


def load_sample(name: str, folder: Path = LABELS_FOLDER) -> list[MathVistaLabel]:
    """The labels of a sample (SAMPLES: its chunk files in order), or of one label file named without its suffix; a key
    appears once in all of them."""
    return _unique_labels([folder / f"{chunk}.jsonl" for chunk in SAMPLES.get(name, (name,))], sample_kind(name))


def _unique_labels(paths: list[Path], kind: str) -> list[MathVistaLabel]:
    return long_prose.unique_keys((_label(record, kind, where), where) for path in paths
                                  for where, record in real.label_records(path))


def load_records(runs: set[str], data: Path = DATA_FOLDER, vlmevalkit: Path = long_prose.VLMEVALKIT_FOLDER) -> dict[str, dict]:
    """key -> the run's record (question, choices, answer_type, precision, response, the authors' extraction); a
    VLMEvalKit run ("<model>/MathVista_MINI") from its prediction file, with VLMEvalKit's extraction."""
    found = {}
    if any("/" in run for run in runs):
        found.update(vlmevalkit_records(vlmevalkit, data))
    for run in sorted(run for run in runs if "/" not in run):
        path = data / f"{run}.jsonl.gz"
        if not path.exists():
            raise real.LabelError(f"{path}: no such data file (named by a label's field 'key')")
        for _, record in long_prose.mathvista_records(path):
            found[long_prose.item_key(long_prose.MATHVISTA, run, str(record["pid"]))] = record
    return found


def vlmevalkit_records(vlmevalkit: Path = long_prose.VLMEVALKIT_FOLDER, data: Path = DATA_FOLDER) -> dict[str, dict]:
    """key -> a MathVista-shaped record of every MathVista_MINI row of the VLMEvalKit files under `vlmevalkit`:
    the response, choices, answer_type and precision (long_prose.vlmevalkit_items) and, as `extraction`, VLMEvalKit's
    GPT-4o-mini reading from the scoring file beside the predictions (None where there is none)."""
    from postprocess.logs.imports.vlmevalkit import harness_reading, is_scoring_file, model_folder

    readings: dict[str, dict] = {}  # the model (its folder, as vlmevalkit_items names it) -> index -> VLMEvalKit's reading
    for path in sorted(vlmevalkit.rglob(f"*_{long_prose.MATHVISTA_DATASET}_*.xlsx")):
        frame = pd.read_excel(path)
        if is_scoring_file(frame):
            readings[model_folder(path)] = harness_reading(frame, long_prose.MATHVISTA_DATASET)["harness_prediction"].to_dict()
    found = {}
    for item in long_prose.vlmevalkit_items(vlmevalkit, data):
        if item.dataset != long_prose.MATHVISTA_DATASET:
            continue
        found[item.key] = {"pid": item.id, "question": item.question, "response": item.response,
                           "choices": list(item.options) or None,
                           "question_type": "multi_choice" if item.options else "free_form",
                           "answer_type": item.answer_type, "precision": item.precision, "unit": item.unit,
                           "extraction": readings.get(item.model, {}).get(item.id)}
    return found


# ---------------------------------------------------------------- values

def _value(text: str) -> float | None:
    """A number as written: "14", "-0.5", "1,000", "3/4" and "3:2" (a fraction or a ratio is its value)."""
    text = text.strip()
    if "/" in text or ":" in text:
        numerator, _, denominator = text.replace(":", "/").partition("/")
        top, bottom = parse_number(numerator), parse_number(denominator)
        return top / bottom if top is not None and bottom else None
    return parse_number(text)


def _label_values(expected: str) -> tuple[float, ...] | None:
    """A label's number as a one-tuple, or its JSON list's numbers; None when it is neither (a phrase: the response
    commits to an answer that is no number, "does not exist", which no number read is right for)."""
    if expected.lstrip().startswith("["):
        try:
            items = json.loads(expected)
        except json.JSONDecodeError:
            return None
        values = tuple(_value(str(item)) for item in items) if isinstance(items, list) else (None,)
    else:
        values = (_value(expected),)
    return values if values and None not in values else None


def _read_values(text: str | None, answer_type: str) -> tuple[float, ...] | None:
    """What an extracted answer says, as numbers: a list's numbers in order, else the one number it is."""
    if text is None:
        return None
    if answer_type == "list":
        values = tuple(parse_number(n) for n in NUMBER.findall(text))
        return values if values and None not in values else None
    value = _value(text)
    return None if value is None else (value,)


def same_values(read: tuple[float, ...] | None, labelled: tuple[float, ...] | None) -> bool:
    return (read is not None and labelled is not None and len(read) == len(labelled)
            and all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(read, labelled)))


def _authors_letter(extraction: str, choices: list[str]) -> str | None:
    """The letter the authors' extraction names: a choice's letter, or exactly one choice's text."""
    text = extraction.strip()
    letters = LETTERS[: len(choices)]
    if len(text) == 1 and text in letters:
        return text
    matching = [letter for letter, choice in zip(letters, choices) if choice.strip() == text]
    return matching[0] if len(matching) == 1 else None


# ---------------------------------------------------------------- reading a sample

def choices_kind(choices: list[str]) -> str:
    """How a multiple-choice question's choices read, its scorecard's "answer type": yes_no ("Yes", "No"), values
    (every choice a number, a unit or a degree sign allowed: "45°", "5 cm") or text."""
    if sorted(choice.strip().lower() for choice in choices) == ["no", "yes"]:
        return "choice_yes_no"
    if all(option_value(choice) is not None for choice in choices):
        return "choice_values"
    return "choice_text"


def _question(record: dict, where: str) -> Question:
    """The free-form question as MathVista's adapter makes it (lmms_eval_tasks.adapters.mathvista): what
    scoring.extract dispatches on."""
    answer_type = record.get("answer_type")
    if answer_type not in NUMERIC_TYPES:
        raise real.LabelError(f"{where}: answer_type {answer_type!r} is not one of {NUMERIC_TYPES}")
    precision = record.get("precision")
    return Question(benchmark="mathvista", split="testmini", subtask="", question_id=str(record["pid"]), kind=NUMERIC,
                    text=str(record["question"]), image_fields=[], answer_type=answer_type,
                    precision=None if precision is None else int(float(precision)))


def read_sample(labels: list[MathVistaLabel], kind: str, data: Path = DATA_FOLDER) -> pd.DataFrame:
    """One row per label: the label, what our extraction reads, what the authors' GPT-4 extraction reads, whether
    each agrees with the label and with the other. Columns as extraction_bench.real.read_sample's (so its measures
    and tables apply), plus answer_type, run, gpt4 (the authors' extraction), gpt4_reading, gpt4_given, gpt4_right
    and agree (ours and theirs read the same answer, or both none)."""
    records = load_records({label.run for label in labels}, data)
    rows = []
    for label in labels:
        if label.key not in records:
            raise real.LabelError(f"{label.key}: no such response in {data} or {long_prose.VLMEVALKIT_FOLDER} "
                                  f"(run {label.run!r}, pid {label.pid!r})")
        record = records[label.key]
        choices = [str(c) for c in record.get("choices") or []]
        response = str(record["response"] or "")
        authors = str(record.get("extraction") or "")
        if kind == MULTIPLE_CHOICE:
            if record.get("question_type") != "multi_choice":
                raise real.LabelError(f"{label.key}: not a multiple-choice question (a sample named 'mc...')")
            if label.expected is not None and label.expected not in LETTERS[: len(choices)]:
                raise real.LabelError(f"{label.key}: field 'expected' {label.expected!r} is not one of the choice letters")
            answer_type = choices_kind(choices)
            extraction = extract_choice(response, choices)
            theirs = _authors_letter(authors, choices)
            right = extraction.found and extraction.prediction == label.expected
            gpt4_right = theirs is not None and theirs == label.expected
            agree = extraction.prediction == theirs
            withheld_right = extraction.reason == "inconclusive" and extraction.candidate == label.expected
        else:
            if record.get("question_type") == "multi_choice":
                raise real.LabelError(f"{label.key}: a multiple-choice question (a sample named 'numeric...')")
            question = _question(record, label.key)
            answer_type = question.answer_type
            extraction = extract(question, response)
            labelled = _label_values(label.expected) if label.expected is not None else None
            ours = _read_values(extraction.prediction, answer_type)
            their_values = _read_values(authors, answer_type)
            theirs = None if their_values is None else authors.strip()
            right = extraction.found and same_values(ours, labelled)
            gpt4_right = same_values(their_values, labelled)
            agree = same_values(ours, their_values) if ours is not None or their_values is not None else True
            withheld_right = False  # number rules never withhold
        label_model = label.model
        rows.append({
            "id": label.key.split(":", 1)[1], "model": label_model, "run": label.run, "answer_type": answer_type,
            "committed": label.expected is not None, "expected": label.expected, "label_reason": label.reason,
            "note": label.note, "prediction": extraction.prediction, "candidate": extraction.candidate,
            "rule": extraction.rule, "tier": extraction.tier, "reason": extraction.reason, "given": extraction.found,
            "right": bool(right), "withheld_right": bool(withheld_right), "gpt4": authors, "gpt4_reading": theirs,
            "gpt4_given": theirs is not None, "gpt4_right": bool(gpt4_right), "agree": bool(agree),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- measures

def measures(read: pd.DataFrame) -> dict[str, float]:
    """extraction_bench.real.measures of our extraction, the same precision and coverage of the authors' GPT-4
    extraction (gpt4_*), and agreement: the share of items where ours and theirs read the same answer (or none)."""
    ours = real.measures(read)
    theirs = read.rename(columns={"given": "_given", "right": "_right"}).rename(
        columns={"gpt4_given": "given", "gpt4_right": "right"})
    gpt4 = real.measures(theirs.assign(reason=None))
    return {**ours, "gpt4_given": gpt4["given"], "gpt4_right": gpt4["right"], "gpt4_precision": gpt4["precision"],
            "gpt4_coverage": gpt4["coverage"], "agreement": read.agree.mean() if len(read) else float("nan")}


def group_table(read: pd.DataFrame, by: str) -> pd.DataFrame:
    """measures() per value of a column (answer_type, model), and over all."""
    table = pd.DataFrame({value: measures(group) for value, group in read.groupby(by, sort=True)}).T
    table.loc["all"] = pd.Series(measures(read))
    return table.rename_axis(by)


TABLE_COLUMNS = ["items", "committed", "given", "right", "precision", "coverage", "withheld", "gpt4_given",
                 "gpt4_right", "gpt4_precision", "gpt4_coverage", "agreement"]


def _formatted(table: pd.DataFrame) -> str:
    shown = table[TABLE_COLUMNS].copy()
    for column in shown.columns:
        if column in ("precision", "coverage", "gpt4_precision", "gpt4_coverage", "agreement"):
            shown[column] = shown[column].map(lambda v: "-" if pd.isna(v) else f"{v:.2%}")
        else:
            shown[column] = shown[column].astype(int)
    return shown.to_markdown()


def scorecard(read: pd.DataFrame, title: str) -> str:
    """The Markdown scorecard of one MathVista sample: ours and the authors' GPT-4 extraction, in all, per
    answer_type, rule and model."""
    t = measures(read)
    committed = read[read.committed]
    rules = real.rule_table(read)
    if not read.answer_type.str.startswith("choice_").any():  # COMMITTING_CHOICE_RULES is about letters only
        rules = rules.drop(columns="commits")
    lines = [
        f"### {title}: {t['items']} responses, {t['committed']} with a committed answer, {t['non_answers']} without",
        "",
        "| measure | ours | authors' GPT-4 extraction (baseline) |",
        "|---|---|---|",
        f"| precision (right / answers read) | {t['right']} / {t['given']} = {t['precision']:.2%} | "
        f"{t['gpt4_right']} / {t['gpt4_given']} = {t['gpt4_precision']:.2%} |",
        f"| coverage (committed answers read right) | {int(committed.right.sum())} / {t['committed']} = {t['coverage']:.2%} | "
        f"{int(committed.gpt4_right.sum())} / {t['committed']} = {t['gpt4_coverage']:.2%} |",
        f"| non-answers that abstain | {int((~read[~read.committed].given).sum())} / {t['non_answers']} | "
        f"{int((~read[~read.committed].gpt4_given).sum())} / {t['non_answers']} |",
        f"| withheld for the judge (inconclusive) | {t['withheld']} | - |",
        f"| ours and theirs read the same (agreement) | {int(read.agree.sum())} / {t['items']} = {t['agreement']:.2%} | |",
        "",
        "Per answer type:", "", _formatted(group_table(read, "answer_type")), "",
        "Per rule (ours):", "", real._formatted(rules), "",
        "Per model:", "", _formatted(group_table(read, "model")),
    ]
    return "\n".join(lines)
