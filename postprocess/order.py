"""Row order shared by the analysis and its presentation: benchmarks and splits in the paper's Table 1 order
(the record contract's lists), families in registry order. Anything unknown sorts after them
alphabetically, so a new benchmark never breaks a table."""

from __future__ import annotations

import pandas as pd

from lmms_eval_tasks.record import BENCHMARKS, SPLITS


def _rank(order: tuple[str, ...], value: str) -> tuple[int, str]:
    return (order.index(value) if value in order else len(order), str(value))


def benchmark_rank(benchmark: str) -> tuple[int, str]:
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


def family_order(models: pd.DataFrame) -> list[str]:
    """Families in registry order (first appearance in the models frame)."""
    return list(dict.fromkeys(models["family"].astype(str)))
