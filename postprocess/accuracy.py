"""Accuracy of each model per subtask and per (benchmark, split) (paper Appendix B).

Accuracy is over the questions a model answered that have a known gold answer, in percent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.compare import GROUP_KEY, Outcomes
from postprocess.labels import dataset_labels, multi_split_benchmarks
from postprocess.tables import Table

ACCURACY_COLUMNS = ["model", *GROUP_KEY, "n", "correct", "accuracy"]


def accuracy_by_subtask(outcomes: Outcomes, variant: str = "direct") -> pd.DataFrame:
    """One row per model x subtask with any known-gold answer: n, correct, accuracy (%)."""
    values = outcomes.values[outcomes.variant_index(variant)]
    n_models, n_groups = values.shape[0], len(outcomes.groups)
    codes = (np.arange(n_models)[:, None] * n_groups + outcomes.question_group[None, :]).ravel()
    flat = values.ravel()
    n = np.bincount(codes, weights=flat >= 0, minlength=n_models * n_groups).astype(np.int64)
    correct = np.bincount(codes, weights=flat == 1, minlength=n_models * n_groups).astype(np.int64)
    model_idx, group_idx = np.divmod(np.arange(n_models * n_groups), n_groups)
    answered = n > 0
    groups = outcomes.groups.iloc[group_idx[answered]].reset_index(drop=True)
    frame = pd.DataFrame({"model": np.asarray(outcomes.models, dtype=object)[model_idx[answered]]})
    frame[GROUP_KEY] = groups[GROUP_KEY]
    frame["n"] = n[answered]
    frame["correct"] = correct[answered]
    frame["accuracy"] = 100.0 * frame["correct"] / frame["n"]
    return frame[ACCURACY_COLUMNS]


def accuracy_by_split(subtask_accuracy: pd.DataFrame) -> pd.DataFrame:
    """Pool `accuracy_by_subtask` rows into one row per model x (benchmark, split)."""
    pooled = subtask_accuracy.groupby(["model", "benchmark", "split"], sort=False, as_index=False)[
        ["n", "correct"]
    ].sum()
    pooled["accuracy"] = 100.0 * pooled["correct"] / pooled["n"]
    return pooled


def _family_slug(family: str) -> str:
    return family.lower().replace(" ", "-").replace(".", "")


def _wide_by_size(accuracy: pd.DataFrame, members: pd.DataFrame, row_columns: list[str]) -> pd.DataFrame:
    size_of = dict(zip(members["model"], members["size"]))
    family_rows = accuracy[accuracy["model"].isin(size_of)]
    wide = (
        family_rows.assign(size=family_rows["model"].map(size_of))
        .set_index([*row_columns, "size"])["accuracy"]
        .unstack("size", sort=False)  # keeps the rows' display order
    )
    sizes = [s for s in members["size"] if s in wide.columns]
    wide = wide[sizes].reset_index()
    wide.columns.name = None
    return wide


def _emphasis(values: pd.DataFrame, largest: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bold = best in family (ties all bold); underline = the largest model when it is not best."""
    best = values.max(axis=1)
    bold = values.eq(best, axis=0)
    underline = pd.DataFrame(False, index=values.index, columns=values.columns)
    if largest in values.columns:
        underline[largest] = values[largest].notna() & ~bold[largest]
    return bold, underline


def _family_tables(
    accuracy: pd.DataFrame, models: pd.DataFrame, row_columns: list[str], name: str, title: str
) -> list[Table]:
    multi_split = multi_split_benchmarks(accuracy)
    tables = []
    for family, members in models.groupby("family", sort=False):
        wide = _wide_by_size(accuracy, members, row_columns)
        if wide.empty:
            continue
        values = wide.drop(columns=row_columns).round(1)
        labels = [dataset_labels(wide, multi_split).rename("Dataset")]
        if "subtask" in row_columns:
            labels.append(wide["subtask"].rename("Subtask"))
        frame = pd.concat([*labels, values], axis=1)
        bold, underline = _emphasis(values, str(members["size"].iloc[-1]))
        tables.append(
            Table(
                name=f"{name}_{_family_slug(family)}",
                title=f"{title} for {family}. Bold = best in family; underline = largest model is not best.",
                frame=frame,
                bold=bold.reindex(columns=frame.columns, fill_value=False),
                underline=underline.reindex(columns=frame.columns, fill_value=False),
            )
        )
    return tables


def family_accuracy_tables(split_accuracy: pd.DataFrame, models: pd.DataFrame) -> list[Table]:
    """Appendix B (Tables 6-8): rows benchmark-split, columns the family's sizes, one table per family.
    `models` must be in family-then-size order."""
    return _family_tables(
        split_accuracy, models, ["benchmark", "split"], "appendixB_accuracy", "Overall accuracy (%) (Appendix B)"
    )


def family_subtask_accuracy_tables(subtask_accuracy: pd.DataFrame, models: pd.DataFrame) -> list[Table]:
    """The Appendix B layout per subtask: rows benchmark-split-subtask, columns the family's sizes."""
    return _family_tables(subtask_accuracy, models, GROUP_KEY, "appendixB_subtask_accuracy", "Subtask accuracy (%)")
