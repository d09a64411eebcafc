"""Display labels shared by the tables, figures and report."""

from __future__ import annotations

import pandas as pd


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


def family_slug(family: str) -> str:
    """A family name as a file-name part: 'Gemma 3' -> 'gemma-3'."""
    return family.lower().replace(" ", "-").replace(".", "")


def signed(value: float) -> str:
    """+3, -2, 0 (Net and its medians)."""
    return f"{value:+g}" if value else "0"
