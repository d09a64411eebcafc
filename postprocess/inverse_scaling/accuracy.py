"""Accuracy of each model per subtask and per (benchmark, split) (paper Appendix B).

Accuracy is over the questions a model answered that have a known gold answer, in percent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.compare import GROUP_KEY, Outcomes

ACCURACY_COLUMNS = ["model", *GROUP_KEY, "n", "correct", "accuracy"]


def accuracy_by_subtask(outcomes: Outcomes, variant: str) -> pd.DataFrame:
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
