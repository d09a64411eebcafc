"""The per-question record: the contract between the task layer and `postprocess`.

Every task's process_results returns it under the key `per_question`; lmms-eval merges that key
into each line of the `--log_samples` JSONL. Fields may be added; the ones below are never renamed.

The response is stored once per line, by lmms-eval, as `filtered_resps`: the text process_results
scored (lmms-eval 0.7 strips `<think>`/`<analysis>` blocks first with its default `--reasoning_tags`,
and then keeps the raw text as `resps` on the same line when the two differ). The record does not
repeat it; `line_response(line)` reads it, and takes a record's own `response` first, which logs
written before this rule carry.
"""

from __future__ import annotations

from typing import Any

from .benchmarks import BENCHMARK_NAMES, SPLIT_NAMES

BENCHMARKS = BENCHMARK_NAMES  # the allowed `benchmark` labels, in the paper's order (benchmarks.py)
SPLITS = SPLIT_NAMES
MATCH_KINDS = ("letter", "option_text", "yes_no", "numeric", "exact", "judge", "none")

# field -> allowed python types (None means JSON null is allowed)
REQUIRED_FIELDS: dict[str, tuple] = {
    "benchmark": (str,),
    "split": (str,),
    "subtask": (str,),
    "question_id": (str,),
    "variant": (str,),
    "gold": (str, list, type(None)),
    "prediction": (str, type(None)),
    "correct": (bool, type(None)),
    "match": (str,),
}
OPTIONAL_FIELDS: dict[str, tuple] = {"response": (str,)}  # in records written before the response rule above
RESPONSE_LINE_FIELDS = ("filtered_resps", "resps")  # where a line holds the response, in the order read


def line_response(line: dict) -> str | None:
    """The response of a samples line: the record's own `response` when it has one, else the single string in
    filtered_resps (else resps), as "x", ["x"] or [["x"]] (lmms-eval's shapes across versions); None when
    there is none."""
    record = line.get("per_question")
    if isinstance(record, dict) and isinstance(record.get("response"), str):
        return record["response"]
    for name in RESPONSE_LINE_FIELDS:
        value = line.get(name)
        while isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, str):
            return value
    return None


class RecordError(ValueError):
    """A per-question record that breaks the contract; the message names the field."""


def validate_record(record: Any) -> dict:
    """Return the record if it satisfies the contract, else raise RecordError naming the field."""
    if not isinstance(record, dict):
        raise RecordError(f"per_question must be an object, got {type(record).__name__}")
    for field, types in REQUIRED_FIELDS.items():
        if field not in record:
            raise RecordError(f"per_question lacks field '{field}'")
        if not isinstance(record[field], types):
            raise RecordError(
                f"per_question field '{field}' has type {type(record[field]).__name__}, "
                f"expected one of {[t.__name__ for t in types]}"
            )
    for field, types in OPTIONAL_FIELDS.items():
        if field in record and not isinstance(record[field], types):
            raise RecordError(
                f"per_question field '{field}' has type {type(record[field]).__name__}, "
                f"expected one of {[t.__name__ for t in types]}"
            )
    if record["benchmark"] not in BENCHMARKS:
        raise RecordError(f"per_question field 'benchmark' is {record['benchmark']!r}, not one of {BENCHMARKS}")
    if record["match"] not in MATCH_KINDS:
        raise RecordError(f"per_question field 'match' is {record['match']!r}, not one of {MATCH_KINDS}")
    if record["match"] == "none" and record["correct"] is True:
        raise RecordError("per_question has match 'none' but correct true")
    if not record["question_id"]:
        raise RecordError("per_question field 'question_id' is empty")
    return record
