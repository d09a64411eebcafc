"""Variant controls of the direct-mode cases: chain-of-thought (Appendix L, Tables 45-46) and
option order (Appendix J, Table 43).

For each case, both models are re-scored under another prompt variant on the questions that both
answered with known gold under the base variant AND under the other variant; Net is recomputed
from the other variant's outcomes rather than adjusted. Only produced when the logs hold the
variant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.cases import CASE_KEY, sort_cases
from postprocess.compare import BOTH_KNOWN, INVERSE, LARGE_RIGHT, NORMAL, SMALL_RIGHT, Outcomes, mcnemar_greater
from postprocess.labels import dataset_labels
from postprocess.stats import benjamini_hochberg
from postprocess.tables import Table

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
    base_flip_inv (the larger model's base-variant losses among them) and recovered (how many of
    those the larger model answers correctly under `variant`). Cases without shared questions are
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


def _signed(value: float) -> str:
    return f"{value:+g}" if value else "0"


def _cot_rows(frame: pd.DataFrame, by: pd.Series, order: list[str], with_dissolve: bool) -> list[dict]:
    rows = []
    for label in [*order, "All"]:
        part = frame if label == "All" else frame[by == label]
        if part.empty:
            continue
        persist = int((part["outcome"] == "persist").sum())
        row = {
            "Cases": len(part),
            "Median Net direct": _signed(part["base_net"].median()),
            "Median Net CoT": _signed(part["net"].median()),
            "Persist": f"{persist} ({100.0 * persist / len(part):.1f}%)",
        }
        if with_dissolve:
            row["Dissolve"] = int((part["outcome"] == "dissolve").sum())
        row["Reverse"] = int((part["outcome"] == "reverse").sum())
        lost = part["base_flip_inv"].sum()
        row["Recovery"] = f"{100.0 * part['recovered'].sum() / lost:.1f}%" if lost else ""
        rows.append({"": label, **row})
    return rows


def cot_tables(cot: pd.DataFrame, families: list[str], multi_split: set[str], min_net: int) -> list[Table]:
    """Tables 45 (by family) and 46 (by dataset) of the chain-of-thought control."""
    datasets = dataset_labels(cot, multi_split)
    caption = (
        f"Persist: Net ≥ {min_net} under CoT; reverse: Net ≤ −{min_net}; recovery: share of the questions the "
        "larger model lost under direct prompting that it answers correctly under CoT."
    )
    by_family = pd.DataFrame(_cot_rows(cot, cot["family"], families, True)).rename(columns={"": "Family"})
    by_dataset = pd.DataFrame(_cot_rows(cot, datasets, list(dict.fromkeys(datasets)), False)).rename(
        columns={"": "Dataset"}
    )
    return [
        Table(
            name="table45_cot_by_family",
            title="Table 45: chain-of-thought control, by family.",
            frame=by_family,
            note=caption,
        ),
        Table(
            name="table46_cot_by_dataset",
            title="Table 46: chain-of-thought control, by dataset.",
            frame=by_dataset,
            note=caption,
        ),
    ]


def option_order_table(
    cases: pd.DataFrame, controls: dict[str, pd.DataFrame], base_variant: str, multi_split: set[str]
) -> Table:
    """Table 43: each case with data under a reordering variant, one row per ordering (the base
    variant first, with its original statistics)."""
    ranked = sort_cases(cases)
    ranked["#"] = np.arange(1, len(ranked) + 1)
    stats = ["acc_small", "acc_large", "flip_inv", "flip_norm", "net"]
    covered = pd.concat([c[CASE_KEY] for c in controls.values()]).drop_duplicates()
    ranked = ranked.merge(covered, on=CASE_KEY)
    orderings = [base_variant, *controls]
    per_ordering = [ranked[[*CASE_KEY, *stats]], *(c[[*CASE_KEY, *stats]] for c in controls.values())]
    rows = pd.concat([part.assign(ordering=name) for name, part in zip(orderings, per_ordering)], ignore_index=True)
    rows = rows.merge(ranked[[*CASE_KEY, "#", "small_size", "large_size"]], on=CASE_KEY)
    rows["_position"] = rows["ordering"].map(orderings.index)
    rows = rows.sort_values(["#", "_position"], kind="stable")
    frame = pd.DataFrame(
        {
            "#": rows["#"],
            "Family": rows["family"],
            "Dataset": dataset_labels(rows, multi_split),
            "Subtask": rows["subtask"],
            "Pair": rows["small_size"] + " vs. " + rows["large_size"],
            "Ordering": rows["ordering"],
            "Acc S": rows["acc_small"].round(1),
            "Acc L": rows["acc_large"].round(1),
            "FI": rows["flip_inv"],
            "FN": rows["flip_norm"],
            "Net": rows["net"].map(_signed),
        }
    )
    return Table(
        name="table43_option_order",
        title="Table 43: option-order sensitivity of the cases re-run under reordered options; "
        "Acc is the accuracy (%) of the smaller (S) and larger (L) model.",
        frame=frame.reset_index(drop=True),
    )
