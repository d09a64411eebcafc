"""Variant controls of the direct-mode cases: chain-of-thought (Appendix L, Tables 45-46) and
option order (Appendix J, Table 43), as frames of numbers (their layout: render/paper_tables.py).

For each case, both models are re-scored under another prompt variant on the questions that both
answered with known gold under the base variant AND under the other variant; Net is recomputed
from the other variant's outcomes rather than adjusted. Only produced when the logs hold the
variant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.cases import CASE_KEY, sort_cases
from postprocess.inverse_scaling.compare import (BOTH_KNOWN, INVERSE, LARGE_RIGHT, NORMAL, SMALL_RIGHT, Outcomes,
                                                 mcnemar_greater)
from postprocess.inverse_scaling.stats import benjamini_hochberg

# Joint (small, large) outcome codes are compare.py's: 3 * state(small) + state(large).
_KNOWN = np.isin(np.arange(9), BOTH_KNOWN)
_SHARED = np.outer(_KNOWN, _KNOWN)  # both models known under both variants


def _cross_cells(outcomes: Outcomes, base: int, other: int, small: int, large: int) -> np.ndarray:
    """Counts per group of (joint outcome under base, joint outcome under other): (groups, 9, 9)."""
    joint = []
    for variant in (base, other):
        values = outcomes.values[variant]
        joint.append((values[small].astype(np.int64) + 1) * 3 + values[large] + 1)
    codes = outcomes.question_group * 81 + joint[0] * 9 + joint[1]
    return np.bincount(codes, minlength=len(outcomes.groups) * 81).reshape(-1, 9, 9)


def control_flips(outcomes: Outcomes, cases: pd.DataFrame, *, base_variant: str, variant: str) -> pd.DataFrame:
    """Per case (CASE_KEY columns kept), the flip statistics under `variant` on the shared questions.

    Columns: n, flip_inv, flip_norm, net, acc_small, acc_large (% under `variant`), p_value,
    base_acc_small, base_acc_large (% under the base variant on the same questions),
    base_flip_inv (the larger model's base-variant losses among them), base_flip_norm (the smaller
    model's) and recovered (how many of the base_flip_inv the larger model answers correctly under
    `variant`). Cases without shared questions are
    dropped.
    """
    base, other = outcomes.variant_index(base_variant), outcomes.variant_index(variant)
    rows = []
    for (small, large), part in cases.groupby(["small", "large"], sort=False):
        cells = _cross_cells(outcomes, base, other, outcomes.model_index(small), outcomes.model_index(large))
        shared = cells[part["group"].to_numpy()] * _SHARED
        base_counts, other_counts = shared.sum(axis=2), shared.sum(axis=1)
        frame = part[CASE_KEY].copy()
        frame["n"] = shared.sum(axis=(1, 2))
        frame["flip_inv"] = other_counts[:, INVERSE]
        frame["flip_norm"] = other_counts[:, NORMAL]
        frame["acc_small"] = other_counts[:, SMALL_RIGHT].sum(axis=1)
        frame["acc_large"] = other_counts[:, LARGE_RIGHT].sum(axis=1)
        frame["base_acc_small"] = base_counts[:, SMALL_RIGHT].sum(axis=1)
        frame["base_acc_large"] = base_counts[:, LARGE_RIGHT].sum(axis=1)
        frame["base_flip_inv"] = base_counts[:, INVERSE]
        frame["base_flip_norm"] = base_counts[:, NORMAL]
        frame["recovered"] = shared[:, INVERSE, LARGE_RIGHT].sum(axis=1)
        rows.append(frame)
    columns = [
        *CASE_KEY,
        "n",
        "flip_inv",
        "flip_norm",
        "net",
        "acc_small",
        "acc_large",
        "p_value",
        "base_acc_small",
        "base_acc_large",
        "base_flip_inv",
        "base_flip_norm",
        "recovered",
    ]
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.concat(rows, ignore_index=True)
    frame = frame[frame["n"] > 0].reset_index(drop=True)
    frame["net"] = frame["flip_inv"] - frame["flip_norm"]
    for column in ["acc_small", "acc_large", "base_acc_small", "base_acc_large"]:
        frame[column] = 100.0 * frame[column] / frame["n"]
    frame["p_value"] = mcnemar_greater(frame["flip_inv"], frame["flip_inv"] + frame["flip_norm"])
    return frame[columns]


def cot_outcomes(control: pd.DataFrame, cases: pd.DataFrame, *, min_net: int, fdr: float) -> pd.DataFrame:
    """`control_flips` under CoT joined to the direct cases: base_net (direct Net), outcome
    (persist: Net >= min_net; reverse: Net <= -min_net; else dissolve) and BH over the CoT tests."""
    frame = control.merge(cases[[*CASE_KEY, "net"]].rename(columns={"net": "base_net"}), on=CASE_KEY)
    frame["outcome"] = np.select(
        [frame["net"] >= min_net, frame["net"] <= -min_net], ["persist", "reverse"], default="dissolve"
    )
    frame["bh_cot"], frame["q_cot"] = benjamini_hochberg(frame["p_value"].to_numpy(), fdr)
    return frame


def cot_summary(cot: pd.DataFrame, by: list[str], order: list | None = None) -> pd.DataFrame:
    """Tables 45/46's numbers per group of `by` (e.g. ["family"], ["benchmark", "split"]), in `order` (keys of
    `by`; default first-seen), then an overall row whose `by` columns are "All": cases, median Net direct
    and CoT, persist, dissolve, reverse, questions the larger model lost under direct prompting (lost) and
    recovered under CoT."""
    groups = {key if isinstance(key, tuple) else (key,): part for key, part in cot.groupby(by, sort=False)}
    keys = [key if isinstance(key, tuple) else (key,) for key in order] if order is not None else list(groups)
    parts = [(key, groups[key]) for key in keys if key in groups]
    parts.append((("All",) * len(by), cot))
    return pd.DataFrame([{
        **dict(zip(by, key)), "cases": len(part), "median_net_direct": float(part["base_net"].median()),
        "median_net_cot": float(part["net"].median()), "persist": int((part["outcome"] == "persist").sum()),
        "dissolve": int((part["outcome"] == "dissolve").sum()), "reverse": int((part["outcome"] == "reverse").sum()),
        "lost": int(part["base_flip_inv"].sum()), "recovered": int(part["recovered"].sum()),
    } for key, part in parts if len(part)], columns=[*by, "cases", "median_net_direct", "median_net_cot", "persist",
                                                     "dissolve", "reverse", "lost", "recovered"])


def _change(part: pd.DataFrame, role: str) -> pd.Series:
    """A model's accuracy change (pp) under the other variant on each case's shared questions."""
    return part[f"acc_{role}"] - part[f"base_acc_{role}"]


def cot_accuracy_change(cot: pd.DataFrame, by: list[str], order: list | None = None) -> pd.DataFrame:
    """Appendix L's accuracy change of the two models of each case under CoT, on the case's shared questions
    (CoT accuracy - direct accuracy, in pp), per group of `by` in `order` (default first-seen), then an overall
    row whose `by` columns are "All" (the paper's: the smaller model loses accuracy in 251 of 375 cases, mean
    -3.9 pp, the larger gains +5.2 pp): cases, smaller_decreased, smaller_mean_change, larger_increased,
    larger_mean_change."""
    groups = {key if isinstance(key, tuple) else (key,): part for key, part in cot.groupby(by, sort=False)}
    keys = [key if isinstance(key, tuple) else (key,) for key in order] if order is not None else list(groups)
    parts = [(key, groups[key]) for key in keys if key in groups] + [(("All",) * len(by), cot)]
    return pd.DataFrame([{
        **dict(zip(by, key)), "cases": len(part),
        "smaller_decreased": int((_change(part, "small") < 0).sum()),
        "smaller_mean_change": float(_change(part, "small").mean()),
        "larger_increased": int((_change(part, "large") > 0).sum()),
        "larger_mean_change": float(_change(part, "large").mean()),
    } for key, part in parts if len(part)], columns=[*by, "cases", "smaller_decreased", "smaller_mean_change",
                                                     "larger_increased", "larger_mean_change"])


def cot_accuracy_change_by_model(cot: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Per model (in `models` order) and role in its cases (smaller, larger): cases, the mean over those cases
    of its accuracy (%) under direct and CoT prompting on each case's shared questions, and their difference
    (pp); decreased counts the cases where CoT lowered it."""
    records = []
    for role, column in (("smaller", "small"), ("larger", "large")):
        for model, part in cot.groupby(column, sort=False, observed=True):
            change = _change(part, column)
            records.append({"model": model, "role": role, "cases": len(part),
                            "acc_direct": float(part[f"base_acc_{column}"].mean()),
                            "acc_cot": float(part[f"acc_{column}"].mean()), "mean_change": float(change.mean()),
                            "decreased": int((change < 0).sum())})
    frame = pd.DataFrame(records, columns=["model", "role", "cases", "acc_direct", "acc_cot", "mean_change",
                                           "decreased"])
    rank = {model: i for i, model in enumerate(models)}
    frame["_rank"] = frame["model"].map(rank).fillna(len(rank))
    return frame.sort_values(["_rank", "role"], ascending=[True, False], kind="stable").drop(columns="_rank") \
        .reset_index(drop=True)


def option_order_runs(cases: pd.DataFrame, controls: dict[str, pd.DataFrame], base_variant: str) -> pd.DataFrame:
    """Table 43's numbers: each case re-run under an ordering variant (`controls`: identity, the unchanged
    prompt re-run, then the reorderings, in the order given), one row per ordering, the base variant first
    with its original statistics; `rank` is the case's rank by Net (1 = strongest)."""
    ranked = sort_cases(cases)
    ranked["rank"] = np.arange(1, len(ranked) + 1)
    stats = ["acc_small", "acc_large", "flip_inv", "flip_norm", "net"]
    covered = pd.concat([c[CASE_KEY] for c in controls.values()]).drop_duplicates()
    ranked = ranked.merge(covered, on=CASE_KEY)
    orderings = [base_variant, *controls]
    per_ordering = [ranked[[*CASE_KEY, *stats]], *(c[[*CASE_KEY, *stats]] for c in controls.values())]
    rows = pd.concat([part.assign(ordering=name) for name, part in zip(orderings, per_ordering)], ignore_index=True)
    rows = rows.merge(ranked[[*CASE_KEY, "rank", "small_size", "large_size"]], on=CASE_KEY)
    rows["_position"] = rows["ordering"].map(orderings.index)
    rows = rows.sort_values(["rank", "_position"], kind="stable").drop(columns="_position")
    return rows[["rank", *CASE_KEY, "small_size", "large_size", "ordering", *stats]].reset_index(drop=True)
