"""The labelled extraction corpus: responses in the styles VLMs write, each with the reading a careful person
gives, and the scorecard of the extractors on it.

The corpus lives in tests/lmms_eval_tasks/extraction_corpus/*.jsonl, one item a line:
  id          unique, "<file>/<group>/<n>"
  kind        mcq | yes_no | numeric | open
  options     the option texts as the prompt shows them (letters A, B, ... in order); [] for other kinds
  response    the model's text
  expected    the answer a careful reader takes from it (a letter, Yes/No, a number, the open answer
              part), or null when the response gives none
  reason      null when expected is given; else why there is none (record.ABSTAIN_REASONS)
  style       a short tag of how the response is written ("cot_answer_line", "hedge_letters" ...)
  known_miss  optional: why the extractor is allowed to miss this committed answer (it must abstain,
              never give another answer); such items count against coverage
A committed answer that a rule below 99.9% on real text reads is withheld (reason `inconclusive`, the letter
kept as `candidate`): it counts against coverage, and `withheld_right` says whether the candidate is the label.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.extraction import (
    Extraction,
    extract_answer_part,
    extract_choice,
    extract_number,
    extract_yes_no,
    normalise_text,
)
from lmms_eval_tasks.question import LETTERS
from lmms_eval_tasks.record import ABSTAIN_REASONS

from .real import tier_table

DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "tests" / "lmms_eval_tasks" / "extraction_corpus"
KINDS = ("mcq", "yes_no", "numeric", "open")
FIELDS = ("id", "kind", "options", "response", "expected", "reason", "style")


class CorpusError(ValueError):
    """A corpus line that breaks the format; the message names the file, the line and the field."""


@dataclass(frozen=True)
class CorpusItem:
    id: str
    kind: str
    options: tuple[str, ...]
    response: str
    expected: str | None
    reason: str | None
    style: str
    known_miss: str | None = None

    @property
    def committed(self) -> bool:
        return self.expected is not None


def _item(record: object, where: str) -> CorpusItem:
    if not isinstance(record, dict):
        raise CorpusError(f"{where}: not a JSON object")
    for field in FIELDS:
        if field not in record:
            raise CorpusError(f"{where}: missing field '{field}'")
    if record["kind"] not in KINDS:
        raise CorpusError(f"{where}: field 'kind' is {record['kind']!r}, not one of {KINDS}")
    if not isinstance(record["response"], str) or not isinstance(record["options"], list):
        raise CorpusError(f"{where}: field 'response' must be a string and 'options' a list")
    if (record["expected"] is None) == (record["reason"] is None):
        raise CorpusError(f"{where}: exactly one of fields 'expected' and 'reason' must be null")
    if record["reason"] is not None and record["reason"] not in ABSTAIN_REASONS:
        raise CorpusError(f"{where}: field 'reason' is {record['reason']!r}, not one of {ABSTAIN_REASONS}")
    if record["kind"] == "mcq":
        if len(record["options"]) < 2:
            raise CorpusError(f"{where}: field 'options' has fewer than two options")
        if record["expected"] is not None and record["expected"] not in LETTERS[: len(record["options"])]:
            raise CorpusError(f"{where}: field 'expected' {record['expected']!r} is not one of the option letters")
    if record.get("known_miss") is not None and record["expected"] is None:
        raise CorpusError(f"{where}: field 'known_miss' is only for committed answers")
    return CorpusItem(record["id"], record["kind"], tuple(record["options"]), record["response"], record["expected"],
                      record["reason"], record["style"], record.get("known_miss"))


def load_corpus(folder: Path = DEFAULT_FOLDER) -> list[CorpusItem]:
    """Every item of every *.jsonl file in the folder, in file order; ids must be unique."""
    items, seen = [], {}
    paths = sorted(Path(folder).glob("*.jsonl"))
    if not paths:
        raise CorpusError(f"{folder}: no *.jsonl corpus files")
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise CorpusError(f"{where}: not valid JSON ({error.msg})") from None
            item = _item(record, where)
            if item.id in seen:
                raise CorpusError(f"{where}: field 'id' {item.id!r} repeats {seen[item.id]}")
            seen[item.id] = where
            items.append(item)
    return items


def extract_item(item: CorpusItem) -> Extraction:
    if item.kind == "mcq":
        return extract_choice(item.response, list(item.options))
    if item.kind == "yes_no":
        return extract_yes_no(item.response)
    if item.kind == "numeric":
        return extract_number(item.response)
    return extract_answer_part(item.response)


def same_answer(item: CorpusItem, prediction: str | None) -> bool:
    """Whether a prediction is the labelled answer (numbers by value, open answers after normalisation)."""
    if prediction is None or item.expected is None:
        return prediction == item.expected
    if item.kind == "numeric":
        try:
            return math.isclose(float(prediction), float(item.expected), rel_tol=1e-9, abs_tol=1e-12)
        except ValueError:
            return False
    if item.kind == "open":
        return normalise_text(prediction) == normalise_text(item.expected)
    return prediction == item.expected


def read_corpus(items: list[CorpusItem]) -> pd.DataFrame:
    """One row per item: the label, what the extractors read, and whether the two agree."""
    rows = []
    for item in items:
        extraction = extract_item(item)
        right = same_answer(item, extraction.prediction) if extraction.found else False
        rows.append({
            "id": item.id, "kind": item.kind, "style": item.style, "committed": item.committed,
            "expected": item.expected, "label_reason": item.reason, "known_miss": item.known_miss,
            "prediction": extraction.prediction, "rule": extraction.rule, "reason": extraction.reason,
            "given": extraction.found, "right": right, "candidate": extraction.candidate, "tier": extraction.tier,
            "withheld_right": extraction.reason == "inconclusive" and same_answer(item, extraction.candidate),
            "agrees": right if item.committed else (not extraction.found and extraction.reason == item.reason),
        })
    return pd.DataFrame(rows)


def totals(read: pd.DataFrame) -> dict[str, float]:
    """precision: share of the answers given that are right; coverage: share of the committed answers read
    right; abstention: share of the non-answers given no answer; reason_agreement: of those, share whose
    reason is the labelled one."""
    committed, non_answers = read[read.committed], read[~read.committed]
    abstained = non_answers[~non_answers.given]
    return {
        "items": len(read), "given": int(read.given.sum()), "right": int(read.right.sum()),
        "precision": read.right.sum() / max(1, read.given.sum()),
        "committed": len(committed), "coverage": committed.right.sum() / max(1, len(committed)),
        "non_answers": len(non_answers), "abstention": len(abstained) / max(1, len(non_answers)),
        "reason_agreement": (abstained.reason == abstained.label_reason).sum() / max(1, len(non_answers)),
    }


def rule_table(read: pd.DataFrame) -> pd.DataFrame:
    """Per rule that gave answers: how many, how many right, precision, and its share of the committed answers."""
    given = read[read.given]
    committed = max(1, int(read.committed.sum()))
    table = given.groupby("rule").agg(given=("given", "size"), right=("right", "sum"))
    table["precision"] = table.right / table.given
    table["coverage share"] = table.right / committed
    table = table.sort_values("given", ascending=False)
    overall = pd.DataFrame({"given": [len(given)], "right": [int(given.right.sum())],
                            "precision": [given.right.sum() / max(1, len(given))],
                            "coverage share": [read.right.sum() / committed]}, index=["overall"])
    return pd.concat([table, overall]).rename_axis("rule")


def reason_table(read: pd.DataFrame) -> pd.DataFrame:
    """Per reason the extractors gave: how many abstained, how many of those were labelled non-answers (and with
    that reason), and how many were committed answers the extractors missed."""
    abstained = read[~read.given]
    table = abstained.groupby("reason").agg(
        abstained=("reason", "size"),
        non_answers=("committed", lambda c: int((~c).sum())),
        same_reason=("label_reason", lambda r: int((r == abstained.loc[r.index, "reason"]).sum())),
        missed_answers=("committed", "sum"),
    )
    return table.sort_values("abstained", ascending=False)


def kind_table(read: pd.DataFrame) -> pd.DataFrame:
    """totals() per question kind."""
    return pd.DataFrame({kind: totals(group) for kind, group in read.groupby("kind", sort=False)}).T.rename_axis("kind")


def _percent(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return table.assign(**{c: table[c].map("{:.2%}".format) for c in columns})


def scorecard(read: pd.DataFrame) -> str:
    """The Markdown scorecard: totals, per kind, answers per rule, abstentions per reason."""
    t = totals(read)
    kinds = kind_table(read)[["items", "given", "precision", "committed", "coverage", "non_answers", "abstention"]]
    kinds = _percent(kinds.astype({c: int for c in ("items", "given", "committed", "non_answers")}),
                     ["precision", "coverage", "abstention"])
    lines = [
        f"Corpus: {t['items']} responses, {t['committed']} with a committed answer, {t['non_answers']} without.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| precision (right / answers given) | {t['right']} / {t['given']} = {t['precision']:.2%} |",
        f"| coverage (committed answers read right) | {int(read[read.committed].right.sum())} / {t['committed']} = {t['coverage']:.2%} |",
        f"| non-answers that abstain | {int((~read[~read.committed].given).sum())} / {t['non_answers']} = {t['abstention']:.2%} |",
        f"| ... with the labelled reason | {t['reason_agreement']:.2%} |",
        "",
        "Per question kind (answers are letters, Yes/No, numbers or open answer parts):",
        "",
        kinds.to_markdown(),
        "",
        "Per tier:",
        "",
        _percent(tier_table(read), ["precision", "coverage share"]).to_markdown(),
        "",
        "Answers per rule (coverage share: the committed answers this rule read right):",
        "",
        _percent(rule_table(read), ["precision", "coverage share"]).to_markdown(),
        "",
        "Abstentions per reason:",
        "",
        reason_table(read).to_markdown(),
    ]
    return "\n".join(lines)
