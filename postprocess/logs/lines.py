"""One samples file -> its candidate rows and line problems (the line rules of postprocess.logs.ingest).

Two parsers, one result. The full parser reads a line with the standard library's json and checks the
record with lmms_eval_tasks.record.validate_record: every rule, every message. The fast parser decodes
the line with msgspec straight into the record's fields, types checked in C (`_Line`, `_Record`), and
skips the line's other fields without building them; it takes a line only when all of these hold, and
hands every other line to the full parser:
- the bytes are valid UTF-8 (msgspec does not check the fields it skips; json.loads would refuse them);
- msgspec decodes it: msgspec's JSON is the standard library's minus NaN / Infinity, numbers beyond a
  float's range and unpaired surrogate escapes, and both keep the last of repeated keys, so a line it
  reads has the same values;
- the record has each REQUIRED_FIELDS field with its type (msgspec never turns a bool into an int, and
  neither does validate_record's tuple of types), a known benchmark, variant and match, a non-empty question_id,
  `rule` and `kind` strings or null, an `abstain_reason` of ABSTAIN_REASONS or null, an `extraction_tier`
  of EXTRACTION_TIERS (not "judge") exactly when there is a prediction, or none, a `candidate` string or
  null, and no other fields than `response`, `options`, `permutation` and `details` (a judged record, a
  minority, takes the full parser and its checks);
- not match "none" with correct true, not match "judge", an abstain_reason only beside match "none", a
  multiple-choice gold and prediction that name one of its options, a CAIT one's of its scene's two
  (record.letter_outside_options); the response is the record's own `response` when it has one, else
  filtered_resps / resps, read by the same function as the full parser's (record.line_response).
tests/postprocess/test_ingest_lines.py holds both parsers to the same output on random corruptions of real lines.

A file's rows leave as one Arrow table (ROW_SCHEMA: the low-cardinality text dictionary-encoded), built
BATCH_ROWS rows at a time so that a file's responses are never all Python strings at once; joined_rows puts
the tables of all files one after the other with each free-text column in one chunk (Arrow takes from a
string column of several chunks by joining them first), and rows_frame turns that into one frame.
Cyclic garbage collection is paused while a file is parsed (the rows hold no cycles; collections that
walk every row tuple again and again cost ~15% of the parse).
"""

from __future__ import annotations

import ctypes
import gc
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from lmms_eval_tasks.record import (ABSTAIN_REASONS, BENCHMARKS, EXTRACTION_TIERS, MATCH_KINDS, OPTIONAL_FIELDS,
                                    REQUIRED_FIELDS, VARIANT_NAMES, RecordError, letter_outside_options,
                                    line_response, validate_record)

# Optional record fields with their own categorical columns; other non-contract fields go to `extra`.
# `extraction_tier` of a record written before the field is derived from its rule and match (extraction.tier_of).
PROMOTED_FIELDS = ("rule", "kind", "extraction_tier", "candidate")
TEXT_COLUMNS = ["benchmark", "split", "subtask", "question_id", "variant", "gold", "response", "prediction",
                "match", "rule", "kind", "extraction_tier", "candidate", "extra"]
ROW_FIELDS = (*TEXT_COLUMNS, "correct", "doc_id", "source_line")
CATEGORY_COLUMNS = frozenset(("benchmark", "split", "subtask", "variant", "match", *PROMOTED_FIELDS))  # few values
_NOT_EXTRA = frozenset(REQUIRED_FIELDS) | frozenset(OPTIONAL_FIELDS) | frozenset(PROMOTED_FIELDS)
# pandas' "str" dtype with NaN for missing values, spelled out: on pandas 2 (Python 3.10) "str" means object
# and turns None into the text "None"
TEXT = pd.StringDtype(na_value=np.nan)
_INT64_LIMIT = 2**63
# Compact JSON with sorted keys, as UTF-8 bytes (Arrow takes them as text); ~10x the standard library's speed.
encode_json = msgspec.json.Encoder(order="sorted").encode

Problem = tuple[str, int, "str | None", str, "str | None"]  # (kind, line, field, detail, benchmark)


@dataclass
class ParsedFile:
    """What one samples file holds: candidate rows before de-duplication, and its line problems."""
    rows: pa.Table  # ROW_SCHEMA; rows_frame makes it a DataFrame
    problems: list[Problem]
    lines: int
    blank_lines: int


# ---------------------------------------------------------------------------------------------- shared
def _gold_text(gold: Any) -> str | None:
    return gold if gold is None or type(gold) is str else json.dumps(gold, ensure_ascii=False)


def _doc_id(value: Any) -> int | None:
    return value if type(value) is int and -_INT64_LIMIT <= value < _INT64_LIMIT else None


def _as_text(value: Any) -> str | None:
    return value if value is None or type(value) is str else str(value)


_FIELD_IN_MESSAGE = re.compile(r"field '([^']+)'")


def record_field(message: str) -> str:
    """The record field a validate_record message is about, as `per_question.<field>`."""
    found = _FIELD_IN_MESSAGE.search(message)
    if found:
        return f"per_question.{found.group(1)}"
    return "per_question.correct" if "but correct" in message else "per_question"


# ---------------------------------------------------------------------------------------------- full
def _unencodable_field(record: dict) -> str | None:
    """The first field whose name or value holds an unpaired surrogate (valid JSON, not valid Unicode)."""
    for key, value in record.items():
        try:
            key.encode("utf-8")
            encode_json(value)
        except UnicodeEncodeError:
            return key
    return None


def _parse_fully(raw: bytes, line_no: int, rows: list[tuple], problems: list[Problem]) -> None:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except ValueError as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        if raw.endswith(b"\n"):
            problems.append(("malformed_json", line_no, None, f"not valid JSON: {err}", None))
        else:
            problems.append(("truncated_line", line_no, None,
                             f"last line cut short ({len(raw)} bytes, no newline): {err}", None))
        return
    if type(obj) is not dict:
        problems.append(("malformed_json", line_no, None, f"line is a JSON {type(obj).__name__}, not an object", None))
        return
    record = obj.get("per_question")
    if record is None:
        problems.append(("missing_per_question", line_no, "per_question",
                         f"no per_question (doc_id {obj.get('doc_id')!r})", None))
        return
    try:
        validate_record(record)
        response = line_response(obj)
        if response is None:
            raise RecordError("no response: neither filtered_resps, resps nor per_question.response holds a string")
        bad = _unencodable_field(record)
        if bad is not None:
            raise RecordError(f"per_question field '{bad}' holds an unpaired surrogate escape (not valid Unicode)")
    except RecordError as err:
        benchmark = record.get("benchmark") if type(record) is dict else None
        problems.append(("invalid_record", line_no, record_field(str(err)), str(err), _as_text(benchmark)))
        return
    extra_fields = record.keys() - _NOT_EXTRA
    rows.append((
        record["benchmark"], record["split"], record["subtask"], record["question_id"], record["variant"],
        _gold_text(record["gold"]), response, record["prediction"], record["match"],
        _as_text(record.get("rule")), _as_text(record.get("kind")),
        record["extraction_tier"] if "extraction_tier" in record else tier_of(_as_text(record.get("rule")), record["match"]),
        record.get("candidate"),
        encode_json({k: record[k] for k in extra_fields}) if extra_fields else None,
        record["correct"], _doc_id(obj.get("doc_id")), line_no,
    ))


def tier_of(rule: str | None, match: str) -> str | None:
    """extraction.tier_of, its module imported when a record first needs it: a report read from the cache parses no
    line, and importing the extraction rules costs it 0.05 s."""
    global tier_of
    from lmms_eval_tasks.extraction import tier_of

    return tier_of(rule, match)


# ---------------------------------------------------------------------------------------------- fast
_UNSET = msgspec.UNSET


class _Record(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    benchmark: Literal[BENCHMARKS]  # type: ignore[valid-type]
    split: str
    subtask: str
    question_id: Annotated[str, msgspec.Meta(min_length=1)]
    variant: Literal[VARIANT_NAMES]  # type: ignore[valid-type]
    gold: str | list | None
    prediction: str | None
    correct: bool | None
    match: Literal[MATCH_KINDS]  # type: ignore[valid-type]
    response: str | msgspec.UnsetType = _UNSET
    rule: str | None = None
    kind: str | None = None
    abstain_reason: Literal[ABSTAIN_REASONS] | None | msgspec.UnsetType = _UNSET  # type: ignore[valid-type]
    extraction_tier: Literal[EXTRACTION_TIERS] | None | msgspec.UnsetType = _UNSET  # type: ignore[valid-type]
    candidate: str | None = None
    options: Any = _UNSET
    permutation: Any = _UNSET
    details: Any = _UNSET


class _Line(msgspec.Struct, gc=False):
    per_question: _Record
    doc_id: Any = None
    filtered_resps: msgspec.Raw | msgspec.UnsetType = _UNSET  # decoded only when the record lacks a response
    resps: msgspec.Raw | msgspec.UnsetType = _UNSET


_decode_line = msgspec.json.Decoder(_Line).decode
_decode_raw = msgspec.json.decode


def _line_response(line: _Line) -> str | None:
    """record.line_response for a line whose record has no response of its own."""
    return line_response({name: _decode_raw(raw) for name, raw in (("filtered_resps", line.filtered_resps),
                                                                  ("resps", line.resps)) if raw is not _UNSET})


@contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_samples_file(path: str | Path, fast: bool = True) -> ParsedFile:
    """Every valid record of one samples file as candidate rows, plus the problems of its other lines.
    `fast=False` reads every line with the full parser (the reference the fast one is tested against)."""
    with _gc_paused():
        return _parse_samples_file(path, fast)


def _parse_samples_file(path: str | Path, fast: bool) -> ParsedFile:
    rows: list[tuple] = []  # one tuple per record, fields in ROW_FIELDS order, BATCH_ROWS at most
    batches: list[pa.Table] = []
    problems: list[Problem] = []
    lines = blank = 0
    unset, msgspec_error = _UNSET, msgspec.MsgspecError
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if len(rows) >= BATCH_ROWS:
                batches.append(rows_table(rows))
                rows.clear()
            if raw.isspace():
                blank += 1
                continue
            lines += 1
            if not fast:
                _parse_fully(raw, line_no, rows, problems)
                continue
            try:
                if not raw.isascii():
                    raw.decode("utf-8")
                line = _decode_line(raw)
            except (msgspec_error, UnicodeDecodeError):
                _parse_fully(raw, line_no, rows, problems)
                continue
            record = line.per_question
            response = record.response
            if response is unset:
                response = _line_response(line)
            match, reason, tier = record.match, record.abstain_reason, record.extraction_tier
            if tier is unset:
                tier = tier_of(record.rule, match)
            elif (tier is None) != (record.prediction is None) or tier == "judge":
                _parse_fully(raw, line_no, rows, problems)  # breaks a tier rule (a judged record takes it too)
                continue
            if (response is None or match == "judge" or match == "none" and record.correct is True
                    or reason is not None and reason is not unset and match != "none"
                    or letter_outside_options(record.kind, record.options, record.gold, record.prediction,
                                              record.benchmark)):
                _parse_fully(raw, line_no, rows, problems)
                continue
            details, options, permutation = record.details, record.options, record.permutation
            if details is not unset and options is not unset and permutation is not unset and reason is not unset:
                extra = encode_json({"abstain_reason": reason, "details": details, "options": options,
                                     "permutation": permutation})  # the tasks' records
            else:
                present = {name: value for name, value in (("abstain_reason", reason), ("details", details),
                                                           ("options", options), ("permutation", permutation))
                           if value is not unset}
                extra = encode_json(present) if present else None
            gold, doc_id = record.gold, line.doc_id
            rows.append((
                record.benchmark, record.split, record.subtask, record.question_id, record.variant,
                gold if gold is None or type(gold) is str else _gold_text(gold), response, record.prediction,
                record.match, record.rule, record.kind, tier, record.candidate, extra, record.correct,
                doc_id if type(doc_id) is int and -_INT64_LIMIT <= doc_id < _INT64_LIMIT else None, line_no,
            ))
    batches.append(rows_table(rows))
    return ParsedFile(pa.concat_tables(batches), problems, lines, blank)


# Rows turned into Arrow at a time: a file's responses are never all Python strings at once (perf/bench_report_memory.py)
BATCH_ROWS = 1024
RELEASE_BYTES = 32 * 2**20  # text copied between two hand-backs of the freed memory


def _glibc() -> ctypes.CDLL | None:
    """glibc, whose malloc_trim hands freed heap memory back; None where there is none (musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 (musl has no malloc_trim)
    except (OSError, AttributeError):
        return None
    return libc


_GLIBC = _glibc()
ROW_SCHEMA = pa.schema(
    [(name, pa.dictionary(pa.int32(), pa.large_string()) if name in CATEGORY_COLUMNS else pa.large_string())
     for name in TEXT_COLUMNS]
    + [("correct", pa.bool_()), ("doc_id", pa.int64()), ("source_line", pa.int32())])


def _array(values: tuple, arrow_type: pa.DataType) -> pa.Array:
    """`values` as an Arrow array; a dictionary column with one value throughout (a file's benchmark, split
    and variant) is built without converting every element."""
    if pa.types.is_dictionary(arrow_type) and values and values[0] is not None and values.count(values[0]) == len(values):
        return pa.DictionaryArray.from_arrays(np.zeros(len(values), dtype=np.int32),
                                              pa.array(values[:1], type=arrow_type.value_type))
    return pa.array(values, type=arrow_type)


def rows_table(rows: list[tuple]) -> pa.Table:
    """Candidate rows as an Arrow table of ROW_SCHEMA (one buffer to send between processes)."""
    columns = zip(*rows) if rows else [()] * len(ROW_SCHEMA)
    return pa.Table.from_arrays([_array(values, field.type) for values, field in zip(columns, ROW_SCHEMA)],
                                schema=ROW_SCHEMA)


def joined_rows(tables: list[pa.Table]) -> pa.Table:
    """The rows tables one after the other, each free-text column in one chunk: Arrow takes from a string column
    of several chunks by joining them first, so every filter or take of the frame's rows would copy all the
    responses. `tables` is emptied, and each chunk's text is released as soon as it is copied: the text is held
    twice for one chunk at most."""
    table = pa.concat_tables(tables) if tables else empty_rows()
    tables.clear()
    for name in TEXT_COLUMNS:
        if name in CATEGORY_COLUMNS:
            continue
        index = table.schema.get_field_index(name)
        chunks = table.column(index).chunks
        table = table.remove_column(index)  # `chunks` now holds the only reference to the text
        table = table.add_column(index, ROW_SCHEMA.field(name), pa.chunked_array([joined_text(chunks)]))
    return table


def _release_freed() -> None:
    """Hand memory just freed back to the system: Arrow's pool (mimalloc, jemalloc) and glibc's malloc (the buffers
    a parser process's rows arrive in) keep it for reuse otherwise."""
    pa.default_memory_pool().release_unused()
    if _GLIBC is not None:
        _GLIBC.malloc_trim(0)


def joined_text(chunks: list[pa.LargeStringArray]) -> pa.LargeStringArray:
    """One array of the chunks' values. `chunks` is emptied as they are copied, and the memory they free is handed
    back every RELEASE_BYTES: a caller that holds no other reference to them holds the text twice for that much."""
    chunks[:] = [chunk for chunk in chunks if len(chunk)]  # an empty one may have no offsets buffer
    offsets_of = [np.frombuffer(chunk.buffers()[1], dtype=np.int64)[chunk.offset:chunk.offset + len(chunk) + 1]
                  for chunk in chunks]
    rows = sum(len(chunk) for chunk in chunks)
    data = np.empty(sum(int(offsets[-1] - offsets[0]) for offsets in offsets_of), dtype=np.uint8)
    offsets, valid = np.zeros(rows + 1, dtype=np.int64), np.ones(rows, dtype=bool)
    row = size = unreleased = 0
    chunks.reverse()
    for chunk_offsets in offsets_of:
        chunk = chunks.pop()
        start, end = int(chunk_offsets[0]), int(chunk_offsets[-1])
        data[size:size + end - start] = np.frombuffer(chunk.buffers()[2] or b"", dtype=np.uint8)[start:end]
        offsets[row + 1:row + len(chunk) + 1] = chunk_offsets[1:] - start + size
        if chunk.null_count:
            valid[row:row + len(chunk)] = chunk.is_valid().to_numpy(zero_copy_only=False)
        row, size, unreleased = row + len(chunk), size + end - start, unreleased + end - start
        del chunk, chunk_offsets
        if unreleased >= RELEASE_BYTES:
            _release_freed()
            unreleased = 0
    offsets_of.clear()
    _release_freed()
    nulls = rows - int(valid.sum())
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.LargeStringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(data), validity, nulls)


def _pandas_type(arrow_type: pa.DataType):
    return {pa.large_string(): pd.StringDtype("pyarrow", na_value=np.nan), pa.int64(): pd.Int64Dtype(),
            pa.bool_(): pd.BooleanDtype()}.get(arrow_type)


def rows_frame(table: pa.Table) -> pd.DataFrame:
    """Rows tables (several concatenated) as one frame: CATEGORY_COLUMNS categorical with str categories,
    other text pandas' Arrow-backed str, correct nullable boolean, doc_id nullable integer."""
    frame = table.to_pandas(types_mapper=_pandas_type)
    for name in CATEGORY_COLUMNS:
        frame[name] = frame[name].cat.rename_categories(pd.Index(pd.array(frame[name].cat.categories, dtype="str")))
    return frame


def empty_rows() -> pa.Table:
    """The rows table of a file without records."""
    return rows_table([])


__all__ = ["CATEGORY_COLUMNS", "PROMOTED_FIELDS", "TEXT", "ROW_FIELDS", "ROW_SCHEMA", "TEXT_COLUMNS", "ParsedFile",
           "empty_rows", "encode_json", "joined_rows", "joined_text", "parse_samples_file", "record_field", "rows_frame",
           "rows_table"]
