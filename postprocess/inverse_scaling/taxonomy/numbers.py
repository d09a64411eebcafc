"""The error taxonomy's numbers from the judges' verdicts (Section 5.6): each judge's labels by family and
by dataset, and how far the judges agree (share of questions with the same label, Cohen's kappa by
scikit-learn, through the agreement statistics of postprocess.human.agreement). Their layout:
postprocess/render/taxonomy_tables.py.

Input: the verdicts frame (postprocess.human.task_sets.VERDICT_COLUMNS, one row per question and
judge; label one of VERDICT_LABELS). An unparsed verdict is its own column in the counts and is left
out of agreement (the number of questions both judges labelled is given beside each agreement).
"""

from __future__ import annotations

import pandas as pd

from postprocess.human.agreement import pairwise_agreement
from postprocess.human.task_sets import (
    TAXONOMY_LABELS,
    UNPARSED,
    VERDICT_LABELS,
    validate_verdicts,
)
from postprocess.order import sort_frame

ALL = "All"
COUNT_COLUMNS = ["judge", "questions", *VERDICT_LABELS]
AGREEMENT_COLUMNS = ["judge_a", "judge_b", "questions", "labelled_by_both", "agreement", "cohen_kappa"]


def judges_of(verdicts: pd.DataFrame) -> list[str]:
    """The judges in the order they first appear."""
    return list(dict.fromkeys(verdicts["judge"]))


def _groups(verdicts: pd.DataFrame, by: str | None, families: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """(name, rows) per value of `by` in family / paper order, then All."""
    if by is None:
        return [(ALL, verdicts)]
    values = sort_frame(verdicts[[by]].drop_duplicates(), [by], families)[by]
    return [*((value, verdicts[verdicts[by] == value]) for value in values), (ALL, verdicts)]


def label_counts(verdicts: pd.DataFrame, by: str | None = None, families: list[str] = ()) -> pd.DataFrame:
    """Per group of `by` (family or benchmark; then All) and judge: questions and the count of each label."""
    validate_verdicts(verdicts)
    records = []
    for name, rows in _groups(verdicts, by, list(families)):
        for judge in judges_of(verdicts):
            labels = rows.loc[rows["judge"] == judge, "label"]
            records.append({**({by: name} if by else {}), "judge": judge, "questions": len(labels),
                            **{label: int((labels == label).sum()) for label in VERDICT_LABELS}})
    return pd.DataFrame(records, columns=[*([by] if by else []), *COUNT_COLUMNS])


def judge_agreement(verdicts: pd.DataFrame, by: str | None = None, families: list[str] = ()) -> pd.DataFrame:
    """Per group of `by` (then All) and pair of judges: questions, those both labelled (neither unparsed),
    the share of them with the same label and Cohen's kappa (NaN where undefined)."""
    validate_verdicts(verdicts)
    judges = judges_of(verdicts)
    frames = []
    for name, rows in _groups(verdicts, by, list(families)):
        wide = rows.pivot(index="question_key", columns="judge", values="label").reindex(columns=judges)
        ratings = wide.where(wide != UNPARSED).astype(object)
        pairs = pairwise_agreement(ratings.where(ratings.notna(), None), TAXONOMY_LABELS)
        frames.append(pd.DataFrame({**({by: name} if by else {}), "judge_a": pairs["rater_a"],
                                    "judge_b": pairs["rater_b"], "questions": len(wide),
                                    "labelled_by_both": pairs["items"], "agreement": pairs["agreement"],
                                    "cohen_kappa": pairs["cohen_kappa"]}))
    return pd.concat(frames, ignore_index=True)[[*([by] if by else []), *AGREEMENT_COLUMNS]]


def taxonomy_numbers(verdicts: pd.DataFrame, families: list[str]) -> dict[str, pd.DataFrame]:
    """Every frame the taxonomy section shows: counts by family and by dataset, agreement overall, by
    family and by dataset."""
    return {"by_family": label_counts(verdicts, "family", families),
            "by_dataset": label_counts(verdicts, "benchmark", families),
            "agreement": judge_agreement(verdicts),
            "agreement_by_family": judge_agreement(verdicts, "family", families),
            "agreement_by_dataset": judge_agreement(verdicts, "benchmark", families)}
