"""The per-question table, the form every imported source takes before it is scored (mapping.py): its columns,
reading its files (`.parquet`, `.csv`, `.jsonl`; VLMEvalKit's `.xlsx` and `.tsv` are read here too), and each
column as codes into its distinct values.

`source_line` is where a row is in its file as a person finds it: the spreadsheet row for CSV, TSV and xlsx
(the header is row 1), the line for JSONL, the 1-based row position for Parquet.
"""

from __future__ import annotations

import csv
import json
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv
import pyarrow.json
import pyarrow.parquet

from lmms_eval_tasks.question import MCQ, NUMERIC, OPEN, YES_NO

TABLE_SUFFIXES = (".parquet", ".csv", ".jsonl")
VLMEVALKIT_SUFFIXES = (".xlsx", ".tsv", ".csv")
TEXT_CELL_SUFFIXES = (".csv", ".tsv", ".xlsx")  # formats whose empty cell is read as null
KINDS = (MCQ, YES_NO, NUMERIC, OPEN)
REQUIRED_COLUMNS = ("model", "benchmark", "subtask", "question_id", "gold")
ANSWER_COLUMNS = ("response", "prediction")  # at least one
# the question as shown, and the harness's own reading (its extracted answer and correctness), kept in `extra`
ROW_EXTRA_COLUMNS = ("question", "hint", "harness_prediction", "harness_correct")
OPTIONAL_COLUMNS = ("split", "variant", "options", "kind", "answer_type", "precision", *ROW_EXTRA_COLUMNS)
TABLE_FIELDS = (*REQUIRED_COLUMNS, *ANSWER_COLUMNS, *OPTIONAL_COLUMNS)


class ImportFormatError(ValueError):
    """An imported file that cannot be read or lacks a required column; the message names the file and column."""



# ---------------------------------------------------------------------------------------------- reading
def text_table_of_rows(rows: list[dict]) -> pa.Table:
    """Decoded JSON rows as a table of text columns (the cells of cell_text), for files Arrow's reader refuses."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        if name in ANSWER_COLUMNS and any(isinstance(value, list) for value in values):
            # answers given as lists stay lists (a text as a list of one) for mapping.py to unwrap
            columns[name] = pa.array([None if v is None else [cell_text(i) for i in (v if isinstance(v, list) else [v])]
                                      for v in values], pa.list_(pa.large_string()))
        else:
            columns[name] = pa.array([cell_text(value) for value in values], pa.large_string())
    return pa.table(columns)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_jsonl(path: Path) -> tuple[pa.Table, np.ndarray, list[tuple[int, str]]]:
    """A JSONL file's rows, their line numbers and the lines that hold no row: Arrow's reader when every line is a
    row of consistent types, else line by line (each bad line reported)."""
    data = path.read_bytes()
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    # A blank line Arrow skips (the row count differs); bytes that are not UTF-8 Arrow would take as text.
    if data and b"\n\n" not in data and not data.startswith(b"\n") and _is_utf8(data):
        try:
            table = pyarrow.json.read_json(path)
            if table.num_rows == n_lines:
                return table, np.arange(1, n_lines + 1, dtype=np.int64), []
        except (pa.ArrowInvalid, ValueError):
            pass
    lines = data.split(b"\n")
    rows, numbers, bad = [], [], []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = msgspec.json.decode(raw.decode("utf-8"))
        except (msgspec.DecodeError, UnicodeDecodeError) as error:
            bad.append((number, f"not valid JSON: {error}"))
            continue
        if not isinstance(value, dict):
            bad.append((number, f"line is a JSON {type(value).__name__}, not an object"))
            continue
        rows.append(value)
        numbers.append(number)
    return text_table_of_rows(rows), np.array(numbers, dtype=np.int64), bad


def _read_delimited(path: Path, delimiter: str) -> pa.Table:
    """Every column as text; only an empty cell is null ("None" and "NA" are option texts)."""
    with open(path, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle, delimiter=delimiter), [])
    return pyarrow.csv.read_csv(
        path, parse_options=pyarrow.csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pyarrow.csv.ConvertOptions(column_types={name: pa.large_string() for name in header},
                                                   null_values=[""], strings_can_be_null=True))


def read_file(path: Path) -> tuple[pa.Table, np.ndarray, list[tuple[int, str]]]:
    """The rows of a table or prediction file, where each is (module docstring) and the lines that hold no row
    (JSONL)."""
    suffix = path.suffix.lower()
    if suffix not in (*TABLE_SUFFIXES, *VLMEVALKIT_SUFFIXES):
        raise ImportFormatError(f"{path}: not a file type the importer reads (.parquet, .csv, .tsv, .jsonl, .xlsx)")
    try:
        if suffix == ".jsonl":
            return _read_jsonl(path)
        if suffix == ".parquet":
            table, first = pyarrow.parquet.read_table(path), 1
        elif suffix in (".csv", ".tsv"):
            table, first = _read_delimited(path, "\t" if suffix == ".tsv" else ","), 2
        else:
            frame = pd.read_excel(path, dtype=str, keep_default_na=False, na_values=[""])
            table, first = pa.Table.from_pandas(frame, preserve_index=False), 2
    except FileNotFoundError:
        raise ImportFormatError(f"{path}: no such file") from None
    # Arrow's and pandas' errors are ValueErrors; openpyxl lets a damaged .xlsx's BadZipFile through
    except (OSError, ValueError, KeyError, UnicodeDecodeError, zipfile.BadZipFile) as error:
        raise ImportFormatError(f"{path}: cannot be read as {suffix[1:]}: {str(error).strip()}") from None
    return table, np.arange(first, first + table.num_rows, dtype=np.int64), []


@dataclass
class Column:
    """A column as codes into its distinct values (-1: null), so that every check runs once per distinct value."""
    codes: np.ndarray  # int64, one per row
    values: list  # the distinct non-null values, as text

    @classmethod
    def of(cls, table: pa.Table, name: str) -> Column:
        if name not in table.column_names:
            return cls(np.full(table.num_rows, -1, dtype=np.int64), [])
        array = table.column(name).combine_chunks()
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        if pa.types.is_null(array.type):
            return cls(np.full(len(array), -1, dtype=np.int64), [])
        if pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or pa.types.is_fixed_size_list(array.type):
            return cls._of_lists(array)
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
            try:
                array = pc.cast(array, pa.large_string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                array = pa.array([cell_text(v) for v in array.to_pylist()], pa.large_string())
        encoded = array.dictionary_encode()
        return cls(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64),
                   encoded.dictionary.to_pylist())

    @classmethod
    def _of_lists(cls, array: pa.Array) -> Column:
        """Lists (options, acceptable answers) as the JSON text of each distinct list, found by joining each list's
        items with a control character no option text holds, beside its length."""
        items = pc.cast(array, pa.list_(pa.string()))
        key = pc.binary_join_element_wise(pc.cast(pc.list_value_length(items), pa.string()),
                                          pc.binary_join(items, "\x1f"), "\x1e")
        encoded = key.dictionary_encode()
        codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        present, firsts = np.unique(codes, return_index=True)
        texts = [""] * len(encoded.dictionary)
        for code, first in zip(present, firsts):
            if code >= 0:
                texts[code] = json.dumps(array[int(first)].as_py(), ensure_ascii=False)
        return cls(codes, texts)

    def rows_where(self, test) -> np.ndarray:
        """Rows whose (non-null) value passes `test`."""
        hits = np.fromiter((bool(test(v)) for v in self.values), dtype=bool, count=len(self.values))
        return np.append(hits, False)[self.codes]

    @property
    def null(self) -> np.ndarray:
        return self.codes < 0

    def value_array(self) -> np.ndarray:
        """The distinct values, with None last (index -1)."""
        return np.array([*self.values, None], dtype=object)

    def arrow(self, rows: np.ndarray) -> pa.Array:
        """The values of the given rows as an Arrow text array."""
        codes = self.codes[rows]
        indices = pa.array(np.where(codes < 0, 0, codes).astype(np.int32), mask=codes < 0)
        dictionary = pa.array(self.values or [""], pa.large_string())
        return pa.DictionaryArray.from_arrays(indices, dictionary).dictionary_decode()


def derived_column(values: np.ndarray) -> Column:
    """A column computed per row (object array of text or None) as codes."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    return Column(codes.astype(np.int64), list(uniques))


def mapped_column(codes: np.ndarray, values: np.ndarray) -> Column:
    """derived_column(values[codes]) (codes index a few values: distinct names, scored outcomes; -1 the last),
    with the hashing done on the few values instead of the rows: a factorize of 558k Python strings costs 0.1 s."""
    per_value, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    rows = per_value.astype(np.int64)[codes]
    present, firsts = np.unique(rows, return_index=True)
    by_first = present[present >= 0][np.argsort(firsts[present >= 0], kind="stable")]  # as derived_column orders them
    renumber = np.full(len(uniques) + 1, -1, dtype=np.int64)  # its last entry: -1 (null) stays -1
    renumber[by_first] = np.arange(len(by_first))
    return Column(renumber[rows], [uniques[i] for i in by_first])


def cell_text(value: Any) -> str | None:
    """A cell as text: null stays null, integral numbers lose their ".0" (a question id read as a float)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple, np.ndarray, dict)):
        return json.dumps(value.tolist() if isinstance(value, np.ndarray) else value, ensure_ascii=False)
    return str(value)


def text_column(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame:
        return np.full(len(frame), None, dtype=object)
    column = frame[name]
    if column.dtype == object and all(type(v) is str for v in column.dropna().head(1000)) and \
            column.map(lambda v: v is None or type(v) is str or (isinstance(v, float) and math.isnan(v))).all():
        return column.where(column.notna(), None).to_numpy(dtype=object)
    return np.array([cell_text(v) for v in column], dtype=object)


def check_columns(table: pa.Table, path: Path) -> None:
    names = set(table.column_names)
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if not names & set(ANSWER_COLUMNS):
        missing.append("response or prediction")
    if missing:
        raise ImportFormatError(f"{path}: lacks the column(s) {missing} of a per-question table (required: "
                                f"{', '.join(REQUIRED_COLUMNS)}, and response or prediction; docs/importing-outputs.md)")

