"""The judge's adjudications kept beside the logs, and their merge into the per-question table.

Files: `python -m postprocess adjudicate` writes `<PREFIX>_adjudications_<task>.jsonl` beside the
`<PREFIX>_samples_<task>.jsonl` whose answers it judged (replacing the whole file, through a temporary
file and a rename, so a killed run never leaves half of one). One JSON object a line, ADJUDICATION_FIELDS:
  model, benchmark, split, variant, question_id   the row (ingest.ROW_KEY; model: the registry key)
  response_sha256                                  SHA-256 of the response the judge read (UTF-8)
  kind, answer_type, precision                     how the question is scored (the logs do not keep
                                                   MathVista's answer type and precision)
  judge, judge_model, judge_verdict, judge_status, judge_error   as in the record (lmms_eval_tasks/record.py)
  prediction                                       the verdict in the question's answer form (null unless
                                                   judge_status is "settled")
  at                                               when the judge answered (ISO 8601, UTC)

Merge (`merge_adjudications`, a pure function of the table and the adjudications), every adjudication
counted by its outcome (MERGE_OUTCOMES):
  settled         applied: the row gets the prediction, `correct` recomputed with the project's matching
                  (lmms_eval_tasks.scoring.is_correct, against the row's gold) and match "judge"
  no_answer       the judge says the response commits to no answer: the row stays unparsed
  unparsed        the verdict stayed malformed or off-list: the row stays unparsed (the files hold no
                  failed calls: a call that failed is asked again by the next run)
  not_unparsed    ignored: the row is no longer unparsed (re-extracted, or settled during the run)
  stale_response  ignored: the row's response (or its question's kind) is not the one judged (the run was
                  made again)
  no_row          ignored: no such row in the logs read (a run left out, another --model-map)
  duplicate       ignored: an older adjudication of a row that has a newer one (by `at`, then file order)
  malformed       ignored: a line that is not a valid adjudication (file:line in the outcomes)
The judge's fields (and `adjudications_file`) are added to the row's `extra` for the first three, as a
record judged during the run carries them. `rules_only` gives the table as the rules alone score it:
every answer a judge settled, during the run or afterwards, unparsed again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.question import OPEN, Question
from lmms_eval_tasks.record import JUDGE_STATUSES, MATCH_KINDS
from postprocess.logs.ingest import ROW_KEY
from postprocess.logs.runs import SAMPLES_MARKER

ADJUDICATIONS_MARKER = "_adjudications_"
JUDGE_FIELDS = ["judge", "judge_model", "judge_verdict", "judge_status", "judge_error"]
ADJUDICATION_FIELDS = [*ROW_KEY, "response_sha256", "kind", "answer_type", "precision", *JUDGE_FIELDS, "prediction",
                       "at"]
FILE_STATUSES = tuple(status for status in JUDGE_STATUSES if status != "failed")  # a failed call is asked again
MERGE_OUTCOMES = ("settled", "no_answer", "unparsed", "not_unparsed", "stale_response", "no_row", "duplicate",
                  "malformed")
OUTCOME_COLUMNS = ["file", "line", *ROW_KEY, "outcome", "detail"]
_encode_extra = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode  # as ingestion's


def response_sha256(response: str) -> str:
    return hashlib.sha256(response.encode("utf-8")).hexdigest()


def adjudications_file_of(samples_file: Path | str) -> Path:
    """`<PREFIX>_samples_<task>.jsonl` -> `<PREFIX>_adjudications_<task>.jsonl` in the same folder."""
    path = Path(samples_file)
    if SAMPLES_MARKER not in path.name:
        raise ValueError(f"{path}: not an lmms-eval samples file (<PREFIX>{SAMPLES_MARKER}<task>.jsonl)")
    return path.with_name(path.name.replace(SAMPLES_MARKER, ADJUDICATIONS_MARKER, 1))


def write_adjudications(path: Path, records: Iterable[dict]) -> None:
    """Replace `path` with these adjudications (ADJUDICATION_FIELDS each), atomically."""
    lines = []
    for record in records:
        missing = [name for name in ADJUDICATION_FIELDS if name not in record]
        if missing:
            raise ValueError(f"{path}: adjudication of {record.get('question_id')!r} lacks {missing}")
        lines.append(json.dumps({name: record[name] for name in ADJUDICATION_FIELDS}, ensure_ascii=False) + "\n")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(lines)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _problem(record: object) -> str | None:
    """Why a parsed line is not an adjudication, or None."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    missing = [name for name in ADJUDICATION_FIELDS if name not in record]
    if missing:
        return f"lacks field(s) {missing}"
    text_fields = [*ROW_KEY, "response_sha256", "kind", "judge", "judge_model", "at"]
    if any(not isinstance(record[name], str) or not record[name] for name in text_fields):
        return f"fields {text_fields} must be non-empty strings"
    if record["judge_status"] not in FILE_STATUSES:
        return f"judge_status {record['judge_status']!r} is not one of {FILE_STATUSES}"
    if (record["judge_status"] == "settled") != isinstance(record["prediction"], str):
        return "a prediction must be given exactly when judge_status is 'settled'"
    return None


def adjudication_files(folders: Iterable[Path | str]) -> list[Path]:
    """Every `*_adjudications_*.jsonl` under the folders (each once), in path order."""
    return sorted({path.resolve(): path for folder in folders
                   for path in Path(folder).rglob(f"*{ADJUDICATIONS_MARKER}*.jsonl")}.values())


def read_adjudications(folders: Iterable[Path | str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(adjudications: ADJUDICATION_FIELDS + file, line; malformed lines: OUTCOME_COLUMNS) of every
    `*_adjudications_*.jsonl` under the folders, in path then line order."""
    paths = adjudication_files(folders)
    rows, malformed = [], []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                problem = f"not valid JSON: {error}"
            else:
                problem = _problem(record)
            if problem is None:
                rows.append({**record, "file": str(path), "line": number})
            else:
                malformed.append({"file": str(path), "line": number, "outcome": "malformed", "detail": problem})
    return (pd.DataFrame(rows, columns=[*ADJUDICATION_FIELDS, "file", "line"]),
            pd.DataFrame(malformed, columns=OUTCOME_COLUMNS))


@dataclass
class Merged:
    table: pd.DataFrame  # the per-question table with the adjudications applied
    outcomes: pd.DataFrame  # OUTCOME_COLUMNS: one row per adjudication read, with what became of it

    def counts(self) -> dict[str, int]:
        """Adjudications per outcome, every outcome listed."""
        found = self.outcomes["outcome"].value_counts()
        return {outcome: int(found.get(outcome, 0)) for outcome in MERGE_OUTCOMES}


def _gold(text: str, kind: str):
    """The row's gold as scoring takes it (ingestion JSON-encodes the lists of open questions)."""
    return json.loads(text) if kind == OPEN else text


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _correct(adjudication) -> bool:
    """The judged prediction scored against the row's gold, as lmms_eval_tasks.scoring scores extractions (imported
    here: the logs of most reports hold no adjudication, and the scoring core imports every extraction rule)."""
    from lmms_eval_tasks.scoring import is_correct

    question = Question(benchmark=adjudication.benchmark, split=adjudication.split, subtask="",
                        question_id=adjudication.question_id, kind=adjudication.row_kind, text="", image_fields=[],
                        gold=_gold(adjudication.gold, adjudication.row_kind), answer_type=adjudication.answer_type,
                        precision=None if pd.isna(adjudication.precision) else int(adjudication.precision))
    return is_correct(question, adjudication.prediction)[0]


def _set_match(table: pd.DataFrame, index, match: str) -> None:
    """table.loc[index, "match"] = match, adding the category (in record.MATCH_KINDS order) if absent."""
    column = table["match"]
    if isinstance(column.dtype, pd.CategoricalDtype) and match not in column.cat.categories:
        present = {*column.cat.categories, match}
        order = [kind for kind in MATCH_KINDS if kind in present] + sorted(present - set(MATCH_KINDS))
        table["match"] = column.cat.set_categories(order)
    table.loc[index, "match"] = match


def _value(value: object) -> object:
    """A field as JSON has it: pandas' missing values are null."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA else value


def _with_judge(extra: object, adjudication) -> str:
    fields = json.loads(extra) if isinstance(extra, str) else {}
    fields.update({name: _value(getattr(adjudication, name)) for name in JUDGE_FIELDS},
                  adjudications_file=adjudication.file)
    return _encode_extra(fields)


def merge_adjudications(table: pd.DataFrame, adjudications: pd.DataFrame) -> Merged:
    """The table with the adjudications applied, and the outcome of each (rules in the module docstring).
    `table` is not changed."""
    if adjudications.empty:
        return Merged(table, pd.DataFrame(columns=OUTCOME_COLUMNS))
    ordered = adjudications.sort_values(["at", "file", "line"], kind="stable").reset_index(drop=True)
    older = ordered.duplicated(ROW_KEY, keep="last")
    latest = ordered[~older]
    candidates = table[table["question_id"].isin(set(latest["question_id"]))]
    rows = (candidates[[*ROW_KEY, "match", "response", "gold", "kind"]].astype(object)
            .rename(columns={"kind": "row_kind"}).assign(row_index=candidates.index))
    joined = latest.merge(rows, on=ROW_KEY, how="left")

    merged = table.copy()
    outcomes, settled, annotated = [], [], []
    for adjudication in joined.itertuples(index=False):
        if pd.isna(adjudication.row_index):
            outcome, detail = "no_row", "no such row in the logs read"
        elif response_sha256(_text(adjudication.response)) != adjudication.response_sha256:
            outcome, detail = "stale_response", "the row's response is not the one judged"
        elif adjudication.row_kind != adjudication.kind:
            outcome, detail = "stale_response", f"the row's question is {adjudication.row_kind}, the judged one {adjudication.kind}"
        elif adjudication.match != "none":
            outcome, detail = "not_unparsed", f"the row has match {adjudication.match!r}"
        else:
            outcome, detail = adjudication.judge_status, _value(adjudication.judge_error)
            (settled if outcome == "settled" else annotated).append(adjudication)
        outcomes.append((adjudication.file, adjudication.line, *(getattr(adjudication, k) for k in ROW_KEY), outcome,
                         detail))
    for adjudication in ordered[older].itertuples(index=False):
        outcomes.append((adjudication.file, adjudication.line, *(getattr(adjudication, k) for k in ROW_KEY),
                         "duplicate", "a newer adjudication of this row is used"))
    if settled:
        index = [int(a.row_index) for a in settled]
        merged.loc[index, "prediction"] = [a.prediction for a in settled]
        merged.loc[index, "correct"] = [_correct(a) for a in settled]
        _set_match(merged, index, "judge")
        if "extraction_tier" in merged:  # record.EXTRACTION_TIERS: a judge-settled answer's tier
            merged.loc[index, "extraction_tier"] = "judge"
    if settled or annotated:
        index = [int(a.row_index) for a in (*settled, *annotated)]
        merged.loc[index, "extra"] = [_with_judge(merged.at[i, "extra"], a) for i, a in zip(index, (*settled, *annotated))]
    return Merged(merged, pd.DataFrame(outcomes, columns=OUTCOME_COLUMNS))


def apply_adjudications(table: pd.DataFrame, folders: Iterable[Path | str]) -> Merged:
    """The adjudications under the log folders merged into their table; malformed lines among the outcomes."""
    adjudications, malformed = read_adjudications(folders)
    merged = merge_adjudications(table, adjudications)
    outcomes = pd.concat([merged.outcomes, malformed], ignore_index=True) if len(malformed) else merged.outcomes
    return Merged(merged.table, outcomes)


def _without_judge(extra: object) -> object:
    if not isinstance(extra, str):
        return extra
    fields = {k: v for k, v in json.loads(extra).items() if k not in JUDGE_FIELDS}
    return json.dumps(fields, ensure_ascii=False)


def rules_only(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the extraction rules alone score it: every answer a judge settled is unparsed again
    (prediction null, match "none", wrong where the gold is known), and no answer keeps a judge's fields (a
    judge's "no answer" settles nothing here: postprocess.inverse_scaling.settlement)."""
    judged = table["match"] == "judge"
    none = table["match"] == "none"
    asked = pd.Series(False, index=table.index)
    if none.any() and "extra" in table.columns:
        asked[none] = [isinstance(e, str) and '"judge_status"' in e for e in table.loc[none, "extra"]]
    if not judged.any() and not asked.any():
        return table
    unjudged = table.copy()
    unjudged.loc[judged, "prediction"] = pd.NA
    unjudged.loc[judged, "correct"] = pd.Series(False, index=table.index[judged], dtype="boolean").mask(
        table.loc[judged, "gold"].isna())
    _set_match(unjudged, judged, "none")
    if "extraction_tier" in unjudged:
        unjudged.loc[judged, "extraction_tier"] = None
    cleared = judged | asked
    if "extra" in unjudged.columns and cleared.any():
        unjudged.loc[cleared, "extra"] = [_without_judge(e) for e in unjudged.loc[cleared, "extra"]]
    return unjudged
