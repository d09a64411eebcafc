"""The table's `extra` column: a JSON object per row (or null) of the record's fields that have no column of their
own (abstain_reason, judge_status, harness_prediction, options ...). Every stage that needs some of those fields
reads them here, so a column of half a million rows is decoded once per distinct text, not once per row: most rows
are null or share their text with many others (one question's options across models)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd


def extra_fields(extra: pd.Series, names: Sequence[str]) -> pd.DataFrame:
    """One object column per name, the field of each row's `extra` JSON (None where the row or the field is
    absent), on `extra`'s index."""
    codes, texts = pd.factorize(extra, use_na_sentinel=True)
    decoded = [json.loads(text) for text in texts]
    columns = {}
    for name in names:
        values = np.full(len(decoded) + 1, None, dtype=object)
        for at, fields in enumerate(decoded, start=1):  # one by one: a list value stays one element
            values[at] = fields.get(name)
        columns[name] = values[codes + 1]  # code -1 (null) takes the leading None
    return pd.DataFrame(columns, index=extra.index)


def rows_with_field(extra: pd.Series, name: str) -> np.ndarray:
    """Whether each row's `extra` has the field `name` with a value (not null): as a bool array. Only the distinct
    texts that hold the name at all are decoded (a field of a few imported rows, asked of a whole table)."""
    codes, texts = pd.factorize(extra, use_na_sentinel=True)
    quoted = json.dumps(name)  # as every writer of `extra` (json, msgspec) writes a key
    present = np.zeros(len(texts) + 1, dtype=bool)
    for at, text in enumerate(texts, start=1):
        if quoted in text:
            value = json.loads(text).get(name)
            present[at] = value is not None and not (isinstance(value, float) and value != value)
    return present[codes + 1]
