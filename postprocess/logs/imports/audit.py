"""The scoring audit (ours, no harness offers one): where an imported file carries its harness's own scoring
(VLMEvalKit's `hit`, its judge's answer; a table's `harness_prediction` / `harness_correct`), our accuracy beside
the harness's, per model and benchmark, and the questions where the two readings differ.

Both accuracies are over the questions the harness scored (a question its scoring file lacks is left out of
both), correct / scored, with an unparsed answer counted as wrong by both sides, as each harness reports it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.logs.extra import extra_fields, rows_with_field

AUDIT_COLUMNS = ["model", "benchmark", "questions", "ours", "theirs", "difference_points", "questions_differ",
                 "source_file"]
# our_reading says why ours differs: the rule that read our letter, or why none was read (abstain reason)
DIFFERENCE_COLUMNS = ["model", "benchmark", "subtask", "question_id", "gold", "our_prediction", "our_correct",
                      "our_reading", "their_prediction", "their_correct", "source_file", "source_line"]
NOTED_POINTS = 2.0  # a difference above this many points is said on the console


def _harness_fields(extra: pd.Series) -> pd.DataFrame:
    """harness_prediction and harness_correct of each row's `extra` (None where absent)."""
    fields = extra_fields(extra, ("harness_prediction", "harness_correct", "abstain_reason"))
    return fields.rename(columns={"harness_prediction": "their_prediction", "harness_correct": "their_correct"})


def scoring_audit(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(AUDIT_COLUMNS per model, benchmark and file; DIFFERENCE_COLUMNS per question where our correctness and
    the harness's differ), over the rows that carry the harness's correctness."""
    # the rows that carry it, found before any row's fields are decoded (most tables have none: every run's logs)
    scored = rows_with_field(table["extra"], "harness_correct")
    if not scored.any():
        return pd.DataFrame(columns=AUDIT_COLUMNS), pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    theirs = _harness_fields(table["extra"][scored])
    rows = table.loc[scored].astype({"model": str, "benchmark": str, "source_file": str})
    rows = rows.assign(our_correct=rows["correct"].fillna(False).astype(bool),
                       their_correct=theirs["their_correct"].astype(bool),
                       their_prediction=theirs["their_prediction"], our_prediction=rows["prediction"],
                       our_reading=np.where(rows["prediction"].isna(),
                                            "unparsed: " + theirs["abstain_reason"].fillna("").astype(str),
                                            rows["rule"].astype(object).fillna("").astype(str)))
    rows["differ"] = rows["our_correct"] != rows["their_correct"]
    audit = rows.groupby(["model", "benchmark", "source_file"], sort=True).agg(
        questions=("differ", "size"), ours=("our_correct", "mean"), theirs=("their_correct", "mean"),
        questions_differ=("differ", "sum")).reset_index()
    audit[["ours", "theirs"]] = (audit[["ours", "theirs"]] * 100).round(2)
    audit["difference_points"] = (audit["ours"] - audit["theirs"]).round(2)
    differences = rows.loc[rows["differ"], DIFFERENCE_COLUMNS].sort_values(["model", "benchmark", "source_line"])
    return audit[AUDIT_COLUMNS], differences.reset_index(drop=True)


def audit_notes(audit: pd.DataFrame) -> list[str]:
    """A console line for each model and benchmark whose accuracy differs from the harness's by more than
    NOTED_POINTS."""
    far = audit[np.abs(audit["difference_points"].astype(float)) > NOTED_POINTS]
    return [f"warning: {row.model} on {row.benchmark}: our accuracy {row.ours:.1f}% against the harness's own "
            f"{row.theirs:.1f}% ({row.questions_differ} of {row.questions} questions read differently; the report's "
            f"scoring audit lists them): {row.source_file}" for row in far.itertuples()]
