"""Case-level analyses and the paper's case tables (Sections 5.2-5.5, Appendices C-F, I, K).

Every function takes the comparisons frame of `compare.compare_pairs` (after
`stats.add_significance` where p-values matter): one row per pair x subtask with n > 0 and the
columns `eligible` and `case`. A comparison "counts" only when eligible (n >= min_n).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.compare import GROUP_KEY
from postprocess.labels import (
    benchmark_rank,
    benchmark_row_label,
    dataset_labels,
    family_order,
    sort_frame,
    sort_key,
)
from postprocess.tables import Table

CASE_KEY = ["family", *GROUP_KEY, "small", "large"]
NET_BIN_EDGES = (5, 8, 11, 16, 21)  # Table 35: 5-7, 8-10, 11-15, 16-20, >=21
THRESHOLDS = (5, 10, 15, 20, 25, 30)  # Table 38
REPLICATION_FAMILIES = 3  # Section 5.4: a subtask-dataset pair recurring in >= 3 families

# name -> (pair flag that keeps a comparison, label); None keeps every pair.
RESTRICTIONS: dict[str, tuple[str | None, str]] = {
    "all": (None, "All pairs"),
    "twofold_total": ("twofold_total", "Total parameters ≥ 2×"),
    "twofold_active": ("twofold_active", "Active parameters ≥ 2×"),
    "dense_only": ("dense", "Dense models only (no MoE)"),
    "same_encoder_tier": ("same_encoder_tier", "Same encoder tier"),
    "adjacent": ("adjacent", "Adjacent sizes"),
    "extreme": ("extreme", "Smallest vs. largest"),
}


def restrict(comparisons: pd.DataFrame, restriction: str) -> pd.DataFrame:
    """Comparisons of the pairs a restriction keeps (see RESTRICTIONS)."""
    flag, _ = RESTRICTIONS[restriction]
    return comparisons if flag is None else comparisons[comparisons[flag].astype(bool)]


def eligible(comparisons: pd.DataFrame) -> pd.DataFrame:
    return comparisons[comparisons["eligible"]]


def cases_of(comparisons: pd.DataFrame) -> pd.DataFrame:
    return sort_cases(comparisons[comparisons["case"]])


def sort_cases(cases: pd.DataFrame) -> pd.DataFrame:
    """Net descending, ties by accuracy gap descending, then in the comparisons' own order (family,
    benchmark, split, subtask, pair by size), which the sort keeps because it is stable."""
    return cases.sort_values(["net", "acc_delta"], ascending=False, kind="stable").reset_index(drop=True)


def replication(cases: pd.DataFrame) -> pd.DataFrame:
    """One row per subtask-dataset pair with cases: the families (registry order), how many,
    the strongest Net and the number of cases; most families first, then strongest, then most cases."""
    columns = [*GROUP_KEY, "families", "n_families", "max_net", "cases"]
    if cases.empty:
        return pd.DataFrame(columns=columns)
    # Integer keys from compare_pairs: `group` is in display order, `family_index` in registry order.
    # Plain numpy: this runs once per restriction and threshold, and a pandas groupby per call costs
    # more than the whole compare stage.
    groups, first, inverse, counts = np.unique(
        cases["group"].to_numpy(), return_index=True, return_inverse=True, return_counts=True
    )
    family_index = cases["family_index"].to_numpy()
    names = dict(zip(family_index, cases["family"]))
    present = np.zeros((len(groups), family_index.max() + 1), dtype=bool)
    present[inverse, family_index] = True
    max_net = np.full(len(groups), np.iinfo(np.int64).min)
    np.maximum.at(max_net, inverse, cases["net"].to_numpy())
    n_families = present.sum(axis=1)
    frame = cases.iloc[first][GROUP_KEY].reset_index(drop=True)
    frame["families"] = [[names[f] for f in np.flatnonzero(row)] for row in present]
    frame["n_families"] = n_families
    frame["max_net"] = max_net
    frame["cases"] = counts
    order = np.lexsort((np.arange(len(groups)), -counts, -max_net, -n_families))
    return frame.iloc[order][columns].reset_index(drop=True)


def replicated_count(cases: pd.DataFrame, min_families: int = REPLICATION_FAMILIES) -> int:
    """How many subtask-dataset pairs have cases in >= min_families families."""
    families_per_group = cases[["group", "family_index"]].drop_duplicates()["group"].value_counts()
    return int((families_per_group >= min_families).sum())


def curve_shapes(cases: pd.DataFrame, subtask_accuracy: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """Shape of the accuracy-vs-size curve of every family-subtask pair that has a case
    (`models` in family-then-size order).

    The curve runs over the family's models (size order) that answered the subtask; it is
    'non-monotonic' when it neither never rises nor never falls, otherwise 'decreasing',
    'increasing' or 'flat'. A two-model family is always monotonic.
    """
    pairs = cases[["family", *GROUP_KEY]].drop_duplicates()
    rank = models[["model", "family"]].assign(position=np.arange(len(models)))
    curves = subtask_accuracy.merge(rank, on="model").merge(pairs, on=["family", *GROUP_KEY])
    curves = curves.sort_values("position")
    rows = []
    for key, curve in curves.groupby(["family", *GROUP_KEY], sort=False):
        steps = np.diff(curve["accuracy"].to_numpy())
        rises, falls = (steps > 0).any(), (steps < 0).any()
        shape = "non-monotonic" if rises and falls else "decreasing" if falls else "increasing" if rises else "flat"
        rows.append((*key, len(curve), shape))
    frame = pd.DataFrame(rows, columns=["family", *GROUP_KEY, "n_models", "shape"])
    return sort_frame(frame, ["family", *GROUP_KEY], family_order(models)).reset_index(drop=True)


# ---------------------------------------------------------------------------------------- tables


def _row_labels(comparisons: pd.DataFrame) -> dict[str, str]:
    """Benchmark -> row label, pooling a benchmark's splits ('MMMU (dev_val+test)')."""
    splits = comparisons[["benchmark", "split"]].drop_duplicates().sort_values(["benchmark", "split"], key=sort_key)
    per_benchmark = splits.groupby("benchmark", sort=False)["split"].agg(list)
    return {benchmark: benchmark_row_label(benchmark, s) for benchmark, s in per_benchmark.items()}


def cases_by_family_table(
    comparisons: pd.DataFrame,
    families: list[str],
    *,
    name: str,
    title: str,
    show_eligible: bool = True,
) -> Table:
    """Tables 2, 4, 40, 41: cases (over eligible comparisons) by benchmark x family, with totals."""
    counted = eligible(comparisons)
    grouped = counted.groupby(["benchmark", "family"], sort=False)["case"]
    cases = grouped.sum().unstack(fill_value=0)
    totals = grouped.size().unstack(fill_value=0)
    benchmarks = sorted(cases.index, key=benchmark_rank)
    cases = cases.reindex(index=benchmarks, columns=families, fill_value=0).astype(int)
    totals = totals.reindex(index=benchmarks, columns=families, fill_value=0).astype(int)
    cases["Total"], totals["Total"] = cases.sum(axis=1), totals.sum(axis=1)
    cases.loc["Total"], totals.loc["Total"] = cases.sum(), totals.sum()
    cells = cases.astype(str) + "/" + totals.astype(str) if show_eligible else cases
    labels = _row_labels(counted)
    frame = cells.rename(index=lambda b: labels.get(b, b)).rename_axis("Dataset").reset_index()
    return Table(name=name, title=title, frame=frame)


def _case_rows(cases: pd.DataFrame, multi_split: set[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Family": cases["family"],
            "Dataset": dataset_labels(cases, multi_split),
            "Subtask": cases["subtask"],
            "Small": cases["small_size"],
            "Large": cases["large_size"],
            "n": cases["n"],
            "FI": cases["flip_inv"],
            "FN": cases["flip_norm"],
            "Net": cases["net"],
            "Acc Δ": cases["acc_delta"].round(1),
        }
    )


def top_cases_table(cases: pd.DataFrame, multi_split: set[str], k: int = 10) -> Table:
    """Table 3: the k strongest cases (Net, ties by accuracy gap); Acc Δ in pp."""
    top = sort_cases(cases).head(k)
    frame = _case_rows(top, multi_split)
    frame.insert(0, "#", np.arange(1, len(frame) + 1))
    return Table(
        name="table03_top_cases",
        title=f"Table 3: Top {k} pairwise cases ranked by Net (FlipInv − FlipNorm); Acc Δ in pp.",
        frame=frame,
    )


def all_cases_table(cases: pd.DataFrame, families: list[str], multi_split: set[str]) -> Table:
    """Appendix C: every case, by family and dataset, strongest first."""
    ordered = sort_frame(sort_cases(cases), ["family", "benchmark", "split"], families)
    frame = _case_rows(ordered, multi_split)
    frame["p"] = ordered["p_value"].map(lambda p: f"{p:.2g}")
    frame["BH (cases)"] = ordered["bh_cases"].map({True: "yes", False: ""})
    frame["BH (all)"] = ordered["bh_all"].map({True: "yes", False: ""})
    return Table(
        name="appendixC_all_cases",
        title="Appendix C: all pairwise inverse-scaling cases; one-sided McNemar p and BH decisions at the FDR.",
        frame=frame.reset_index(drop=True),
    )


def net_bins(min_net: int) -> list[tuple[int, int | None, str]]:
    """(low, high or None, label) bins of Table 35, starting at the case threshold."""
    edges = [min_net, *[e for e in NET_BIN_EDGES if e > min_net]]
    bins = [(low, high - 1, f"{low}–{high - 1}" if high - 1 > low else str(low)) for low, high in zip(edges, edges[1:])]
    return [*bins, (edges[-1], None, f"≥{edges[-1]}")]


def _share(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else float("nan")


def significance_table(cases: pd.DataFrame, min_net: int, alpha: float, fdr: float) -> Table:
    """Table 35: uncorrected and BH-significant cases by Net range."""
    rows = []
    for low, high, label in net_bins(min_net):
        rows.append((label, cases[cases["net"].between(low, np.inf if high is None else high)]))
    rows.append(("Total", cases))
    frame = pd.DataFrame(
        [
            {
                "Net range": label,
                "Cases": len(part),
                f"Significant (p<{alpha:g})": int((part["p_value"] < alpha).sum()),
                "%": _share(int((part["p_value"] < alpha).sum()), len(part)),
                "BH (cases)": int(part["bh_cases"].sum()),
                "BH (all)": int(part["bh_all"].sum()),
            }
            for label, part in rows
        ]
    )
    return Table(
        name="table35_significance_by_net",
        title=f"Table 35: one-sided exact McNemar significance by Net range, uncorrected and after "
        f"Benjamini–Hochberg at FDR {fdr:g} over the cases and over all eligible comparisons.",
        frame=frame,
    )


def replication_table(
    cases: pd.DataFrame, multi_split: set[str], *, name: str, title: str, exactly: int | None = None
) -> Table:
    """Tables 36, 37, 9: subtask-dataset pairs with cases in >= 3 (or exactly `exactly`) families."""
    rows = replication(cases)
    rows = rows[rows["n_families"] == exactly] if exactly else rows[rows["n_families"] >= REPLICATION_FAMILIES]
    frame = pd.DataFrame(
        {
            "Dataset": dataset_labels(rows, multi_split),
            "Subtask": rows["subtask"],
            "Families": rows["n_families"],
            "Family names": rows["families"].map(", ".join),
            "Max Net": rows["max_net"],
            "Cases": rows["cases"],
        }
    )
    return Table(name=name, title=title, frame=frame.reset_index(drop=True))


def threshold_table(comparisons: pd.DataFrame, thresholds: tuple[int, ...] = THRESHOLDS) -> Table:
    """Table 38: cases, subtask-dataset pairs and cross-family subtasks at stricter Net thresholds."""
    counted = eligible(comparisons)
    columns = {}
    for threshold in thresholds:
        cases = counted[counted["net"] >= threshold]
        columns[f"≥{threshold}"] = [
            len(cases),
            cases["group"].nunique(),
            replicated_count(cases),
        ]
    frame = pd.DataFrame(columns)
    frame.insert(
        0,
        "Net threshold",
        ["Pairwise cases", "Unique subtask–dataset pairs", f"Cross-family (≥{REPLICATION_FAMILIES} families)"],
    )
    return Table(
        name="table38_thresholds",
        title="Table 38: robustness to the Net threshold (eligible comparisons only).",
        frame=frame,
    )


def restriction_summary(comparisons: pd.DataFrame, min_net: int) -> pd.DataFrame:
    """Per restriction: comparisons, cases, subtask-dataset pairs, larger-ahead, replicated."""
    rows = []
    for restriction, (_, label) in RESTRICTIONS.items():
        kept = eligible(restrict(comparisons, restriction))
        cases = kept[kept["case"]]
        larger_ahead = kept[kept["net"] <= -min_net]
        rows.append(
            {
                "restriction": restriction,
                "label": label,
                "comparisons": len(kept),
                "cases": len(cases),
                "subtask_pairs": cases["group"].nunique(),
                "larger_ahead": len(larger_ahead),
                "larger_ahead_bh": int(larger_ahead["bh_larger_all"].sum()),
                "replicated": replicated_count(cases),
            }
        )
    return pd.DataFrame(rows)


def restriction_table(summary: pd.DataFrame, min_net: int) -> Table:
    """Table 42, extended with the dense-only, same-encoder, adjacent and extreme restrictions."""
    frame = pd.DataFrame(
        {
            "Pairs kept": summary["label"],
            "Comparisons": summary["comparisons"],
            "Cases": summary["cases"],
            "Rate": [f"{_share(c, n):.1f}%" for c, n in zip(summary["cases"], summary["comparisons"])],
            "Subtask–dataset pairs": summary["subtask_pairs"],
            "Larger ahead": [
                f"{a} ({_share(a, n):.1f}%)" for a, n in zip(summary["larger_ahead"], summary["comparisons"])
            ],
            f"Replicated (≥{REPLICATION_FAMILIES} families)": summary["replicated"],
        }
    )
    return Table(
        name="table42_restrictions",
        title=f"Table 42 (extended): cases under pair restrictions. “Larger ahead” counts comparisons with "
        f"Net ≤ −{min_net}; “Replicated” counts subtask–dataset pairs with a case in ≥{REPLICATION_FAMILIES} families.",
        frame=frame,
    )


def encoder_tier_table(cases: pd.DataFrame, families: list[str]) -> Table:
    """Appendix K: cases comparing two models of the same encoder tier vs. across tiers."""
    same = cases["same_encoder_tier"].astype(bool)
    rows = []
    for family in [*families, "All"]:
        within = cases["family"] == family if family != "All" else pd.Series(True, index=cases.index)
        total, same_tier = int(within.sum()), int((within & same).sum())
        rows.append(
            {
                "Family": family,
                "Cases": total,
                "Same tier": same_tier,
                "Cross tier": total - same_tier,
                "Same tier %": _share(same_tier, total),
            }
        )
    return Table(
        name="appendixK_encoder_tiers",
        title="Appendix K: cases whose two models share the vision-encoder tier.",
        frame=pd.DataFrame(rows),
    )


def extremes_table(comparisons: pd.DataFrame, min_net: int) -> Table:
    """Section 5.5: smallest vs. largest model of each family on every eligible subtask."""
    kept = eligible(restrict(comparisons, "extreme"))
    rows = [
        {
            "Family": family,
            "Small": part["small_size"].iloc[0],
            "Large": part["large_size"].iloc[0],
            "Comparisons": len(part),
            f"Smaller ahead (Net ≥ {min_net})": int(part["case"].sum()),
            f"Larger ahead (Net ≤ −{min_net})": int((part["net"] <= -min_net).sum()),
        }
        for family, part in kept.groupby("family", sort=False)
    ]
    return Table(
        name="extremes_smallest_vs_largest",
        title="Smallest vs. largest model of each family (Section 5.5).",
        frame=pd.DataFrame(rows),
    )


def curve_shape_table(shapes: pd.DataFrame, families: list[str]) -> Table:
    """Section 5.2: share of family-subtask accuracy curves (pairs with a case) that are non-monotonic."""
    rows = []
    for family in [*families, "All"]:
        part = shapes if family == "All" else shapes[shapes["family"] == family]
        nonmonotonic = int((part["shape"] == "non-monotonic").sum())
        rows.append(
            {
                "Family": family,
                "Family–subtask pairs with cases": len(part),
                "Non-monotonic": nonmonotonic,
                "Decreasing": int((part["shape"] == "decreasing").sum()),
                "Non-monotonic %": _share(nonmonotonic, len(part)),
            }
        )
    return Table(
        name="curve_shapes",
        title="Accuracy-vs-size curves of the family–subtask pairs with cases (Section 5.2).",
        frame=pd.DataFrame(rows),
    )
