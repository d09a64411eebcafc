"""The fast line parser (msgspec) gives exactly the full parser's rows and problems, on well-formed lines
and on random corruptions of them (postprocess/logs/lines.py)."""

import json
import math
import tempfile
from pathlib import Path
from unittest import mock

import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from logfactory import make_record, sample_line

from lmms_eval_tasks.record import line_response
from postprocess.logs import lines as lines_module
from postprocess.logs.lines import CATEGORY_COLUMNS, TEXT_COLUMNS, joined_rows, parse_samples_file, rows_frame

REAL_LINE = {  # a line lmms-eval 0.7.3 wrote for the CAIT task on a tiny model (options, permutation, details)
    "doc_id": 0, "target": "A", "filtered_resps": "NoDDD", "token_counts": [{"output_tokens": 4}],
    "doc_hash": "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b", "accuracy": False,
    "per_question": {"benchmark": "CAIT", "split": "test", "subtask": "Human-Human", "question_id": "cait_000",
                     "variant": "direct", "gold": "A", "response": "NoDDD", "prediction": None, "correct": False,
                     "match": "none", "rule": "no_option", "kind": "mcq",
                     "options": ["A student scolds a teacher.", "A teacher scolds a student."], "permutation": None,
                     "details": {"verb": "scold", "style": "realistic", "right_option": "A"}},
    "input": "Which caption matches the image?\n(A) A student scolds a teacher.\n(B) A teacher scolds a student.",
}
BASE_LINES = [
    REAL_LINE,
    sample_line(make_record(), 0),
    sample_line(make_record(gold=["3", "three"], match="numeric", prediction="3", response="3", kind="open", options=[]),
                1),
    sample_line(make_record(question_id="q2"), 2, drop_response=True),
    sample_line(make_record(question_id="q3"), 3, resps_shape="nested", drop_response=True),
    sample_line(make_record(question_id="é✓"), 4),
    # the record as the tasks write it now: no response of its own, abstain_reason always present
    sample_line(make_record(question_id="q5", prediction=None, correct=False, match="none", abstain_reason="hedge"), 5,
                drop_response=True),
    sample_line(make_record(question_id="q6", abstain_reason=None), 6, drop_response=True),
    # a judged answer (the full parser checks its judge fields)
    sample_line(make_record(question_id="q7", match="judge", abstain_reason="no_answer", judge="j", judge_model="m",
                            judge_verdict="A", judge_status="settled", judge_error=None), 7, drop_response=True),
]
RECORD_FIELDS = [*make_record().keys(), "abstain_reason", "judge_status", "extra_field"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=6)
    | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(["BLINK", "none", "letter", "", "A"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
raw_bytes = st.sampled_from([b"\xff", b"\x00", b"\x01", b'"', b"\\", b"{", b"}", b",", b"NaN", b"\\ud800", b"\xed\xa0\x80",
                             b"1e400", b"\t", b" ", b"\r", b"\xc3\xa9", b'"per_question": null, ']) | st.binary(max_size=3)


@st.composite
def corrupted_line(draw) -> bytes:
    line = json.loads(json.dumps(draw(st.sampled_from(BASE_LINES))))
    record = line.get("per_question")
    for _ in range(draw(st.integers(0, 2))):  # structural changes
        change = draw(st.sampled_from(["drop", "set", "line_field", "record_value", "doc_id", "none"]))
        name = draw(st.sampled_from(RECORD_FIELDS))
        if change == "drop" and name in record:
            del record[name]
        elif change == "set":
            record[name] = draw(json_values)
        elif change == "line_field":
            line[draw(st.sampled_from(["filtered_resps", "resps", "per_question", "input"]))] = draw(json_values)
        elif change == "record_value":
            line["per_question"] = draw(json_values)
        elif change == "doc_id":
            line["doc_id"] = draw(json_values)
    text = json.dumps(line, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):  # byte-level changes
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "delete", "replace", "cut", "repeat_key"]))
        if edit == "insert":
            text = text[:at] + draw(raw_bytes) + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif edit == "replace":
            text = text[:at] + draw(raw_bytes) + text[at + 1:]
        elif edit == "cut":
            text = text[:at]
        else:  # a repeated key: the last one counts for both parsers
            text = text.replace(b'"per_question": {', b'"per_question": {"question_id": 7, ', 1)
    return text


def _parse_both(body: bytes) -> tuple:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x_samples_t.jsonl"
        path.write_bytes(body)
        return parse_samples_file(path, fast=True), parse_samples_file(path, fast=False)


def _assert_same(fast, full) -> None:
    assert fast.rows.equals(full.rows)
    pd.testing.assert_frame_equal(rows_frame(fast.rows), rows_frame(full.rows))
    assert fast.problems == full.problems
    assert (fast.lines, fast.blank_lines) == (full.lines, full.blank_lines)


def test_well_formed_lines_take_the_fast_path_and_agree():
    body = b"".join(json.dumps(line).encode() + b"\n" for line in BASE_LINES)
    fast, full = _parse_both(body)
    _assert_same(fast, full)
    assert len(fast.rows) == len(BASE_LINES) and fast.problems == []
    rows = rows_frame(fast.rows)
    assert rows["response"].tolist() == [line_response(line) for line in BASE_LINES]
    assert json.loads(rows["extra"].iloc[0]) == {k: REAL_LINE["per_question"][k]
                                                       for k in ("details", "options", "permutation")}
    assert json.loads(rows["extra"].iloc[6])["abstain_reason"] == "hedge"
    assert json.loads(rows["extra"].iloc[8])["judge_model"] == "m"


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(corrupted_line(), min_size=1, max_size=5), final_newline=st.booleans(),
       blank=st.sampled_from([b"", b"\n", b"  \r\n"]))
def test_random_corruptions_give_the_same_rows_and_problems(lines, final_newline, blank):
    body = blank.join(line.replace(b"\n", b" ") + b"\n" for line in lines)
    if not final_newline:
        body = body.rstrip(b"\n")
    fast, full = _parse_both(body)
    _assert_same(fast, full)
    assert len(fast.rows) + len(fast.problems) == fast.lines  # every line is a row or a problem


def test_values_only_the_standard_library_reads_go_the_full_way():
    """NaN, an unpaired surrogate and a number too large for a float: the fast parser refuses them, the
    full one decides (a surrogate in the record is not valid Unicode: invalid_record)."""
    record = make_record()
    lines = [json.dumps(sample_line({**record, "details": {"x": math.nan}}, 0)).encode(),
             json.dumps(sample_line({**record, "response": "\ud800"}, 1)).encode("utf-8", "surrogatepass"),
             json.dumps(sample_line(record, 2)).replace('"doc_hash"', '"big": 1e400, "doc_hash"').encode()]
    fast, full = _parse_both(b"\n".join(lines) + b"\n")
    _assert_same(fast, full)
    assert len(fast.rows) == 2 and fast.problems[0][:3] == ("invalid_record", 2, "per_question.response")


@settings(max_examples=60, deadline=None)
@given(files=st.lists(st.lists(st.sampled_from(BASE_LINES), max_size=7), min_size=0, max_size=3),
       batch_rows=st.integers(1, 4))
def test_files_parsed_in_batches_join_into_the_same_rows_one_chunk_per_text_column(files, batch_rows):
    """A file's rows leave the parser in batches of BATCH_ROWS; the files' batches joined (joined_rows) are the
    rows parsed in one piece, each free-text column in a single chunk."""
    def parsed(body: bytes) -> pa.Table:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "x_samples_t.jsonl"
            path.write_bytes(body)
            return parse_samples_file(path).rows

    bodies = [b"".join(json.dumps(line).encode() + b"\n" for line in lines) for lines in files]
    whole = [parsed(body) for body in bodies]
    with mock.patch.object(lines_module, "BATCH_ROWS", batch_rows):
        batched = [parsed(body) for body in bodies]
    joined = joined_rows(batched)
    assert batched == []  # emptied: the joined table holds the only copy
    expected = pa.concat_tables(whole) if whole else lines_module.empty_rows()
    pd.testing.assert_frame_equal(rows_frame(joined), rows_frame(expected))
    assert all(joined.column(name).num_chunks == 1 for name in TEXT_COLUMNS if name not in CATEGORY_COLUMNS)
