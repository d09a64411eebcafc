"""Adjudicating the unparsed answers of existing logs, so that a cluster run never waits on an API.

1. `rows_to_judge`: the per-question rows the rules left unparsed (match "none") with a known gold on
   the judged benchmarks (postprocess.adjudication.is_judged); answers a judge settled during the run
   are match "judge" and not asked again.
2. Each row's question and images are reloaded by question_id from the task's data
   (postprocess/logs/questions.py) and checked against the row: the same gold and, where the record
   lists them, the same options in the same order; otherwise the logs were made from other data, an
   error that names the row.
3. `adjudication_requests` builds one request per row (prompt.request_for); identical requests (the same
   response to the same question, e.g. by the identity variant) are asked once.
4. `pending_calls`: the dry run's count and cost (invscale.judges.estimate_calls).
5. `adjudicate_rows` asks the judge (invscale.judges.run_judges, one batch per verdict form, each with
   its strict parser: malformed or off-list verdicts are asked again, then kept as unparsed); every answer
   is cached as it arrives, so a killed or failed run resumes with the calls not yet made.
6. `write_beside_logs` writes the adjudications of each samples file beside it
   (postprocess/logs/adjudications.py), where ingestion merges them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.question import MCQ
from postprocess.adjudication import is_judged
from postprocess.adjudication.prompt import (
    form_key,
    judgement_of,
    request_for,
    verdict_parser,
)
from invscale.judges import (
    CallEstimate,
    JudgeConfig,
    JudgeRequest,
    estimate_calls,
    run_judges,
)
from invscale.judges.batch import OnCall
from postprocess.logs.adjudications import (
    adjudications_file_of,
    response_sha256,
    write_adjudications,
)
from postprocess.logs.ingest import ROW_KEY
from postprocess.logs.questions import ShownQuestion

ROW_COLUMNS = [*ROW_KEY, "gold", "response", "kind", "extra", "source_file", "source_line"]


class LogsMismatchError(ValueError):
    """A logged row whose question differs from the one the task's data holds; the message names it."""


def rows_to_judge(table: pd.DataFrame) -> pd.DataFrame:
    """The unparsed rows with a known gold on the judged benchmarks (ROW_COLUMNS), in table order."""
    unparsed = table[(table["match"] == "none") & table["gold"].notna()]
    judged = [is_judged(benchmark, gold) for benchmark, gold in zip(unparsed["benchmark"], unparsed["gold"])]
    rows = unparsed.loc[judged, ROW_COLUMNS].astype(object)
    rows["response"] = rows["response"].where(rows["response"].notna(), "")
    return rows.reset_index(drop=True)


def wanted_questions(rows: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """(benchmark, split, question_id, variant) of each row, as reload_questions takes them."""
    return list(dict.fromkeys(zip(rows["benchmark"], rows["split"], rows["question_id"], rows["variant"])))


@dataclass(frozen=True)
class Item:
    row: dict  # ROW_COLUMNS
    shown: ShownQuestion
    request: JudgeRequest


def _check(row: dict, shown: ShownQuestion) -> None:
    question = shown.question
    where = (f"{row['source_file']}:{row['source_line']} ({row['benchmark']} {row['split']} {row['question_id']} "
             f"{row['variant']})")
    gold = json.dumps(question.gold, ensure_ascii=False) if isinstance(question.gold, list) else question.gold
    if gold != row["gold"]:
        raise LogsMismatchError(f"{where}: the logs' gold {row['gold']!r} is not the data's {gold!r}: were the logs "
                                "made from other data?")
    if question.kind != row["kind"]:
        raise LogsMismatchError(f"{where}: the logs' question is {row['kind']}, the data's {question.kind}")
    options = json.loads(row["extra"]).get("options") if isinstance(row["extra"], str) else None
    if question.kind == MCQ and options is not None and options != question.options:
        raise LogsMismatchError(f"{where}: the logs' options {options} are not the data's {question.options} in the "
                                "order the variant shows them: were the logs made from other data?")


def adjudication_requests(rows: pd.DataFrame, shown: Mapping[tuple, ShownQuestion]) -> list[Item]:
    """One request per row, its question checked against the row (LogsMismatchError otherwise)."""
    items = []
    for row in rows.to_dict("records"):
        question = shown[(row["benchmark"], row["split"], row["question_id"], row["variant"])]
        _check(row, question)
        items.append(Item(row, question, request_for(question.question, row["response"], question.images)))
    return items


def pending_calls(items: list[Item], judge: JudgeConfig, cache_dir: str | Path) -> CallEstimate:
    """The calls the judge would make now, with their estimated cost; makes none."""
    return estimate_calls([(judge, [item.request for item in items])], cache_dir)[0]


def adjudicate_rows(items: list[Item], judge: JudgeConfig, cache_dir: str | Path, *,
                    on_call: OnCall | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """(one adjudication per item: the fields of postprocess.logs.adjudications plus source_file, the
    calls: requests, cached, made). Raises JudgeError when a call fails for good (completed calls stay
    cached)."""
    groups: dict[tuple, list[int]] = {}
    for position, item in enumerate(items):
        groups.setdefault(form_key(item.shown.question), []).append(position)
    records, calls = [None] * len(items), {"requests": 0, "cached": 0, "made": 0}
    for positions in groups.values():
        parse = verdict_parser(items[positions[0]].shown.question)
        run = run_judges([(judge, [items[p].request for p in positions])], cache_dir, parse=parse,
                         on_call=on_call)[judge.name]
        calls = {"requests": calls["requests"] + run.distinct, "cached": calls["cached"] + run.cached,
                 "made": calls["made"] + run.made}
        for position, key in zip(positions, run.keys):
            answer = run.cache.answers[key]
            question, row = items[position].shown.question, items[position].row
            judgement = judgement_of(answer, question)
            records[position] = {
                **{name: row[name] for name in ROW_KEY}, "response_sha256": response_sha256(row["response"]),
                "kind": question.kind, "answer_type": question.answer_type, "precision": question.precision,
                "judge": judgement.judge, "judge_model": judgement.model, "judge_verdict": judgement.verdict,
                "judge_status": judgement.status, "judge_error": judgement.error, "prediction": judgement.prediction,
                "at": answer["at"], "source_file": row["source_file"]}
    return pd.DataFrame(records, dtype=object), calls


def write_beside_logs(adjudications: pd.DataFrame) -> pd.Series:
    """Each samples file's adjudications written beside it; the file each adjudication went to."""
    files = adjudications["source_file"].map(lambda source: str(adjudications_file_of(source)))
    for path, group in adjudications.groupby(files, sort=True):
        records = group.drop(columns="source_file").to_dict("records")
        write_adjudications(Path(path), [{k: (None if _missing(v) else v) for k, v in r.items()} for r in records])
    return files


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value))
