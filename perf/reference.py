"""A straightforward pandas implementation of the pairwise comparison, kept out of the package.

Per within-family pair it selects both models' rows, merges them on the question key and aggregates
per subtask. It is the baseline the benchmark times `postprocess.inverse_scaling.compare` against, and the tests use
it as an independent implementation to check agreement.
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import binom

QUESTION_KEY = ["benchmark", "split", "subtask", "question_id"]
GROUP_KEY = ["benchmark", "split", "subtask"]


def compare_reference(
    table: pd.DataFrame, models: pd.DataFrame, *, variant: str = "direct", min_n: int = 20, min_net: int = 5
) -> pd.DataFrame:
    known = table[(table["variant"] == variant) & table["correct"].notna()]
    known = known[["model", *QUESTION_KEY, "correct"]].astype({"correct": bool})
    for column in ["model", *QUESTION_KEY]:
        known[column] = known[column].astype(str)
    parts = []
    for family, members in models.groupby("family", sort=False):
        ordered = members.sort_values(["total_params", "active_params"])["model"].tolist()
        for i, small in enumerate(ordered):
            for large in ordered[i + 1 :]:
                merged = known[known["model"] == small].merge(
                    known[known["model"] == large], on=QUESTION_KEY, suffixes=("_small", "_large")
                )
                if merged.empty:
                    continue
                merged["inv"] = merged["correct_small"] & ~merged["correct_large"]
                merged["norm"] = ~merged["correct_small"] & merged["correct_large"]
                stats = merged.groupby(GROUP_KEY).agg(
                    n=("inv", "size"),
                    flip_inv=("inv", "sum"),
                    flip_norm=("norm", "sum"),
                    right_small=("correct_small", "sum"),
                    right_large=("correct_large", "sum"),
                )
                parts.append(stats.reset_index().assign(family=family, small=small, large=large))
    columns = ["family", *GROUP_KEY, "small", "large", "n", "flip_inv", "flip_norm", "net",
               "acc_small", "acc_large", "acc_delta", "p_value", "eligible", "case"]  # fmt: skip
    if not parts:  # no pair of a family shares a question
        return pd.DataFrame(columns=columns)
    frame = pd.concat(parts, ignore_index=True)
    frame["net"] = frame["flip_inv"] - frame["flip_norm"]
    frame["acc_small"] = 100.0 * frame["right_small"] / frame["n"]
    frame["acc_large"] = 100.0 * frame["right_large"] / frame["n"]
    frame["acc_delta"] = frame["acc_small"] - frame["acc_large"]
    discordant = frame["flip_inv"] + frame["flip_norm"]
    frame["p_value"] = binom.sf(frame["flip_inv"] - 1, discordant, 0.5)
    frame["eligible"] = frame["n"] >= min_n
    frame["case"] = frame["eligible"] & (frame["net"] >= min_net)
    return frame[columns]
