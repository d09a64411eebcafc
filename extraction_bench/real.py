"""Real responses labelled by reading: M3CoT outputs of nine public VLMs (../shared/data/m3cot, see its README),
sampled across models and styles and labelled by people who read each response and never saw the extractor.

The repository holds ids and labels only, one item a line in tests/lmms_eval_tasks/extraction_real/<sample>.jsonl:
  file      "<model>__<style>", the data file (<file>.jsonl.gz) that holds the response
  id        the question id in that file
  expected  the letter the response commits to, or null
  reason    null when expected is given; else why there is none (record.ABSTAIN_REASONS, never `inconclusive`)
  note      the labeller's note, or null; a label corrected after review says so here ("corrected: ...")
The response (the last message) and the options (`choices`, lettered A, B, ...) are read from the data folder
at run time; a test that needs them skips, saying so, when the folder is absent.

Samples (docs/extraction_precision.md):
  m3cot_dev             3,000 items, 125 per file (seed 20261201); the rules were measured, fixed and gated on it
  m3cot_heldout_round1  1,008 items, 42 per file; scored once in round 1, then looked at: fitted in round 2
  m3cot_heldout_round<k>, k = 2..10  1,200 items, 50 per file (seed 20261200 + k, none in the samples above);
                        scored once in round k, then looked at: fitted in round k + 1
  m3cot_heldout_round11 1,200 items, 50 per file (seed 20261211, none in the samples above); scored once in round 11
  m3cot_heldout_round12 1,200 items, 50 per file (seed 20261212, none in the samples above); scored once with the
                        same rules as round 11: a second held-out sample for them; both looked at since (issue 31's
                        second long-prose fitting), so every M3CoT sample is now fitted
  m3cot_agreement       500 dev items labelled a second time by another reader (how far two careful readers agree)
  m3cot_agreement_round2 .. _round12  200 items of that round's held-out labelled a second time
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.extraction import COMMITTING_CHOICE_RULES, RULE_TIERS, extract_choice
from lmms_eval_tasks.question import LETTERS
from lmms_eval_tasks.record import ABSTAIN_REASONS

REPO = Path(__file__).resolve().parents[1]
LABELS_FOLDER = REPO / "tests" / "lmms_eval_tasks" / "extraction_real"
DATA_FOLDER = REPO.parent / "shared" / "data" / "m3cot"
SAMPLES = ("m3cot_dev", *(f"m3cot_heldout_round{k}" for k in range(1, 13)))
HELD_OUT: tuple[str, ...] = ()  # rounds 11 and 12 were the previous rules' held-out samples; they are fitted now
FITTED = tuple(name for name in SAMPLES if name not in HELD_OUT)  # the rules were measured, fixed and gated on these
FIELDS = ("file", "id", "expected", "reason", "note")
LABEL_REASONS = tuple(r for r in ABSTAIN_REASONS if r != "inconclusive")  # what a text is, not which rule read it


class LabelError(ValueError):
    """A label line that breaks the format, or names a response the data does not hold; the message names
    the file, the line and the field."""


@dataclass(frozen=True)
class RealLabel:
    file: str
    id: str
    expected: str | None
    reason: str | None
    note: str | None

    @property
    def model(self) -> str:
        return self.file.split("__")[0]

    @property
    def style(self) -> str:
        return self.file.split("__")[1]


def require_fields(record: object, where: str, fields: tuple[str, ...]) -> dict:
    """The label line's object; a LabelError naming the line when it is no object or lacks a field."""
    if not isinstance(record, dict):
        raise LabelError(f"{where}: not a JSON object")
    for field in fields:
        if field not in record:
            raise LabelError(f"{where}: missing field '{field}'")
    return record


def check_verdict(record: dict, where: str) -> None:
    """Exactly one of `expected` and `reason` given, the reason one of LABEL_REASONS (every sample's rule)."""
    if (record["expected"] is None) == (record["reason"] is None):
        raise LabelError(f"{where}: exactly one of fields 'expected' and 'reason' must be null")
    if record["reason"] is not None and record["reason"] not in LABEL_REASONS:
        raise LabelError(f"{where}: field 'reason' is {record['reason']!r}, not one of {LABEL_REASONS}")


def check_letter(record: dict, where: str) -> None:
    if record["expected"] is not None and record["expected"] not in LETTERS:
        raise LabelError(f"{where}: field 'expected' {record['expected']!r} is not an upper-case letter")


def label_records(path: Path):
    """(where, record) of each non-blank line of a label file, where = "path:line"; a line that is not JSON is a
    LabelError naming it."""
    if not Path(path).exists():
        raise LabelError(f"{path}: no such label file")
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as error:
            raise LabelError(f"{where}: not valid JSON ({error.msg})") from None


def _label(record: object, where: str) -> RealLabel:
    record = require_fields(record, where, FIELDS)
    if not isinstance(record["file"], str) or record["file"].count("__") != 1:
        raise LabelError(f"{where}: field 'file' {record['file']!r} is not '<model>__<style>'")
    check_verdict(record, where)
    check_letter(record, where)
    return RealLabel(record["file"], str(record["id"]), record["expected"], record["reason"], record["note"])


def load_labels(path: Path) -> list[RealLabel]:
    """The labels of one sample file, in file order; (file, id) must be unique."""
    labels, seen = [], {}
    for where, record in label_records(path):
        label = _label(record, where)
        key = (label.file, label.id)
        if key in seen:
            raise LabelError(f"{where}: fields 'file', 'id' {key} repeat {seen[key]}")
        seen[key] = where
        labels.append(label)
    return labels


def load_sample(name: str, folder: Path = LABELS_FOLDER) -> list[RealLabel]:
    return load_labels(folder / f"{name}.jsonl")


def load_responses(files: set[str], data: Path = DATA_FOLDER) -> dict[tuple[str, str], tuple[list[str], str]]:
    """(file, id) -> (options, response) for every line of the named data files."""
    found = {}
    for file in sorted(files):
        path = data / f"{file}.jsonl.gz"
        if not path.exists():
            raise LabelError(f"{path}: no such data file (named by a label's field 'file')")
        with gzip.open(path, "rt") as handle:
            for line in handle:
                item = json.loads(line)
                if "choices" in item:  # two gemini dsp lines have none: no label can name them
                    found[(file, str(item["id"]))] = ([str(c) for c in item["choices"]], str(item["messages"][-1]))
    return found


def read_sample(labels: list[RealLabel], data: Path = DATA_FOLDER) -> pd.DataFrame:
    """One row per label: the label, what extract_choice reads, whether the two agree. Columns as the synthetic
    corpus's (extraction_bench.synthetic.read_corpus), plus model, style, tier and candidate."""
    responses = load_responses({label.file for label in labels}, data)
    rows = []
    for label in labels:
        if (label.file, label.id) not in responses:
            raise LabelError(f"{data / label.file}.jsonl.gz: no question id {label.id!r} with choices (named by a label)")
        options, response = responses[(label.file, label.id)]
        if label.expected is not None and label.expected not in LETTERS[: len(options)]:
            raise LabelError(f"{label.file}/{label.id}: field 'expected' {label.expected!r} is not one of the option letters")
        extraction = extract_choice(response, options)
        rows.append({
            "id": f"{label.file}/{label.id}", "model": label.model, "style": label.style,
            "prompt": "direct" if label.style == "direct" else "two-turn", "committed": label.expected is not None,
            "expected": label.expected, "label_reason": label.reason, "note": label.note,
            "prediction": extraction.prediction, "candidate": extraction.candidate, "rule": extraction.rule,
            "tier": extraction.tier, "reason": extraction.reason, "given": extraction.found,
            "right": extraction.found and extraction.prediction == label.expected,
            "withheld_right": extraction.reason == "inconclusive" and extraction.candidate == label.expected,
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- measures

def measures(read: pd.DataFrame) -> dict[str, float]:
    """precision: right / letters committed; coverage: committed answers read right / committed answers; abstention:
    non-answers given no letter / non-answers; withheld: answers sent to the judge (`inconclusive`) / all items."""
    committed, non_answers = read[read.committed], read[~read.committed]
    given = int(read.given.sum())
    return {
        "items": len(read), "given": given, "right": int(read.right.sum()),
        "precision": read.right.sum() / given if given else float("nan"),
        "committed": len(committed), "coverage": committed.right.mean() if len(committed) else float("nan"),
        "non_answers": len(non_answers), "abstention": (~non_answers.given).mean() if len(non_answers) else float("nan"),
        "withheld": int((read.reason == "inconclusive").sum()),
    }


def group_table(read: pd.DataFrame, by: str) -> pd.DataFrame:
    """measures() per value of a column (model, style), and over all."""
    table = pd.DataFrame({value: measures(group) for value, group in read.groupby(by, sort=True)}).T
    table.loc["all"] = pd.Series(measures(read))
    return table.rename_axis(by)


def tier_table(read: pd.DataFrame) -> pd.DataFrame:
    """Letters committed per tier (strict, reading) with their precision and share of the committed answers;
    and the letters withheld (`inconclusive`) with the share of their candidates that are the labelled letter."""
    committed = max(1, int(read.committed.sum()))
    rows = {}
    for tier, group in read[read.given].groupby("tier"):
        rows[tier] = {"letters": len(group), "right": int(group.right.sum()), "precision": group.right.mean(),
                      "coverage share": group.right.sum() / committed}
    withheld = read[read.reason == "inconclusive"]
    rows["withheld (inconclusive)"] = {"letters": len(withheld), "right": int(withheld.withheld_right.sum()),
                                       "precision": withheld.withheld_right.mean() if len(withheld) else float("nan"),
                                       "coverage share": 0.0}
    return pd.DataFrame(rows).T.rename_axis("tier")


def rule_table(read: pd.DataFrame) -> pd.DataFrame:
    """Per rule: its tier, whether it commits, the letters it found (committed or withheld), how many are right
    (the precision that decides whether it commits), its share of the committed answers read right, and the
    non-answers it abstained on."""
    committed = max(1, int(read.committed.sum()))
    rows = {}
    for rule, group in read.groupby("rule"):
        found = group[group.given | (group.reason == "inconclusive")]
        right = int(group.right.sum() + group.withheld_right.sum())
        rows[rule] = {
            "tier": RULE_TIERS.get(rule, "-"), "commits": "yes" if rule in COMMITTING_CHOICE_RULES else "no",
            "letters": len(found), "right": right, "precision": right / len(found) if len(found) else float("nan"),
            "coverage share": group.right.sum() / committed,
            "non-answers abstained": int((~group.committed & ~group.given).sum()),
        }
    table = pd.DataFrame(rows).T.sort_values("letters", ascending=False, kind="stable")
    return table.rename_axis("rule")


def _formatted(table: pd.DataFrame) -> str:
    shown = table.copy()
    for column in shown.columns:
        if column in ("precision", "coverage", "abstention", "coverage share"):
            shown[column] = shown[column].map(lambda v: "-" if pd.isna(v) else f"{v:.2%}")
        elif column in ("items", "given", "right", "committed", "non_answers", "withheld", "letters", "non-answers abstained"):
            shown[column] = shown[column].astype(int)
    return shown.to_markdown()


def scorecard(read: pd.DataFrame, title: str) -> str:
    """The Markdown scorecard of one real sample: totals, per tier, rule, style and model."""
    t = measures(read)
    lines = [
        f"### {title}: {t['items']} responses, {t['committed']} with a committed answer, {t['non_answers']} without",
        "",
        "| measure | value |",
        "|---|---|",
        f"| precision (right / letters committed) | {t['right']} / {t['given']} = {t['precision']:.2%} |",
        f"| coverage (committed answers read right) | {int(read[read.committed].right.sum())} / {t['committed']} = {t['coverage']:.2%} |",
        f"| non-answers that abstain | {int((~read[~read.committed].given).sum())} / {t['non_answers']} = {t['abstention']:.2%} |",
        f"| withheld for the judge (inconclusive) | {t['withheld']} / {t['items']} = {t['withheld'] / max(1, t['items']):.2%} |",
        "",
        "Per tier:", "", _formatted(tier_table(read)), "",
        "Per rule (precision: of the letters the rule found, committed or withheld; a rule commits at >= 99.9%):", "",
        _formatted(rule_table(read)), "",
        "Per prompt (direct; two-turn: cot, ccot, dsp):", "", _formatted(group_table(read, "prompt")), "",
        "Per style:", "", _formatted(group_table(read, "style")), "",
        "Per model:", "", _formatted(group_table(read, "model")),
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- drawing a new sample

def draw_sample(per_file: int, seed: int, exclude: set[tuple[str, str]], data: Path = DATA_FOLDER) -> list[tuple[str, str]]:
    """A stratified draw of `per_file` (file, id) pairs from every data file, none of them in `exclude` (the
    items earlier samples hold), in an order shuffled across files so that any chunk of it mixes models and styles."""
    rng = random.Random(seed)
    files = sorted(path.name.removesuffix(".jsonl.gz") for path in data.glob("*__*.jsonl.gz"))
    responses = load_responses(set(files), data)
    drawn = []
    for file in files:
        ids = sorted(i for f, i in responses if f == file and (f, i) not in exclude)
        if len(ids) < per_file:
            raise LabelError(f"{data / file}.jsonl.gz: only {len(ids)} responses not in earlier samples, {per_file} asked")
        drawn += [(file, i) for i in rng.sample(ids, per_file)]
    rng.shuffle(drawn)
    return drawn
