"""Display order and labels shared by the tables, figures and report.

Benchmarks and splits are ordered as in the record contract (the paper's Table 1 order); anything
unknown sorts after them alphabetically so new benchmarks never break a table.
"""

from __future__ import annotations

import pandas as pd

from lmms_eval_tasks.record import BENCHMARKS, SPLITS


def _rank(order: tuple[str, ...], value: str) -> tuple[int, str]:
    return (order.index(value) if value in order else len(order), str(value))


def benchmark_rank(benchmark: str) -> tuple[int, str]:
    """Sort key of a benchmark name (paper Table 1 order, unknown ones last)."""
    return _rank(BENCHMARKS, benchmark)


def split_rank(split: str) -> tuple[int, str]:
    return _rank(SPLITS, split)


def sort_key(column: pd.Series) -> pd.Series:
    """`sort_values(key=...)` for frames holding benchmark and split columns among others."""
    if column.name == "benchmark":
        return column.map(benchmark_rank)
    if column.name == "split":
        return column.map(split_rank)
    return column


def sort_frame(frame: pd.DataFrame, columns: list[str], families: list[str]) -> pd.DataFrame:
    """Stable sort by `columns`: families in the given order, benchmarks and splits in paper order."""
    position = {family: i for i, family in enumerate(families)}

    def key(column: pd.Series) -> pd.Series:
        return column.map(lambda f: position.get(f, len(position))) if column.name == "family" else sort_key(column)

    return frame.sort_values(columns, key=key, kind="stable")


def multi_split_benchmarks(frame: pd.DataFrame) -> set[str]:
    """Benchmarks evaluated on more than one split (MMMU: dev_val and test)."""
    splits = frame[["benchmark", "split"]].drop_duplicates()
    counts = splits["benchmark"].value_counts()
    return set(counts[counts > 1].index.astype(str))


def dataset_label(benchmark: str, split: str, multi_split: set[str]) -> str:
    """'MMMU test' where the benchmark has several splits, else just 'BLINK' (paper style)."""
    return f"{benchmark} {split}" if benchmark in multi_split else benchmark


def dataset_labels(frame: pd.DataFrame, multi_split: set[str]) -> pd.Series:
    return pd.Series(
        [dataset_label(b, s, multi_split) for b, s in zip(frame["benchmark"], frame["split"])],
        index=frame.index,
        dtype=object,
    )


def benchmark_row_label(benchmark: str, splits: list[str]) -> str:
    """Row label of the family x benchmark tables: splits of one benchmark are pooled, and named
    when there are several, e.g. 'MMMU (dev_val+test)'."""
    return f"{benchmark} ({'+'.join(splits)})" if len(splits) > 1 else benchmark


def family_order(models: pd.DataFrame) -> list[str]:
    """Families in registry order (first appearance in the models frame)."""
    return list(dict.fromkeys(models["family"].astype(str)))
