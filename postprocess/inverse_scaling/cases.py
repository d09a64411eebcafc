"""Case-level numbers behind the paper's case tables (Sections 5.2-5.5, Appendices C-F, I, K).

Every function takes the comparisons frame of `compare.compare_pairs` (after `stats.add_significance`
where p-values matter): one row per pair x subtask with n > 0 and the columns `eligible` and `case`. A
comparison "counts" only when eligible (n >= min_n). The results are frames of numbers; their paper
layout is postprocess/render/paper_tables.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.compare import GROUP_KEY
from postprocess.inverse_scaling.parameters import NET_BIN_EDGES, REPLICATION_FAMILIES
from postprocess.order import family_order, sort_frame

CASE_KEY = ["family", *GROUP_KEY, "small", "large"]

# name -> pair flag that keeps a comparison (None keeps every pair)
RESTRICTIONS: dict[str, str | None] = {
    "all": None,
    "twofold_total": "twofold_total",
    "twofold_active": "twofold_active",
    "dense_only": "dense",
    "same_encoder_tier": "same_encoder_tier",
    "adjacent": "adjacent",
    "extreme": "extreme",
}


def restrict(comparisons: pd.DataFrame, restriction: str) -> pd.DataFrame:
    """Comparisons of the pairs a restriction keeps (see RESTRICTIONS)."""
    flag = RESTRICTIONS[restriction]
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


def cases_by_family(comparisons: pd.DataFrame, families: list[str]) -> pd.DataFrame:
    """Cases and eligible comparisons per benchmark (its splits pooled) x family, in paper and registry
    order: columns benchmark, splits (the benchmark's splits present, paper order), family, cases,
    comparisons. Families without an eligible comparison of a benchmark get zeros."""
    counted = eligible(comparisons)
    counts = counted.groupby(["benchmark", "family"], sort=False)["case"].agg(cases="sum", comparisons="size")
    benchmarks = sort_frame(counted[["benchmark", "split"]].drop_duplicates(), ["benchmark", "split"], families)
    splits = benchmarks.groupby("benchmark", sort=False)["split"].agg(list)
    grid = pd.MultiIndex.from_product([list(splits.index), families], names=["benchmark", "family"])
    frame = counts.reindex(grid, fill_value=0).astype(int).reset_index()
    frame.insert(1, "splits", frame["benchmark"].map(splits))
    return frame


def net_bins(min_net: int) -> list[tuple[int, int | None]]:
    """(low, high or None) Net ranges of Table 35, starting at the case threshold."""
    edges = [min_net, *[e for e in NET_BIN_EDGES if e > min_net]]
    return [*((low, high - 1) for low, high in zip(edges, edges[1:])), (edges[-1], None)]


def significance_by_net(cases: pd.DataFrame, min_net: int, alpha: float) -> pd.DataFrame:
    """Table 35's numbers per Net range (high None: open-ended) and a total row (low None): cases,
    significant (p < alpha), BH-significant over the cases and over all eligible comparisons."""
    parts = [(low, high, cases[cases["net"].between(low, np.inf if high is None else high)])
             for low, high in net_bins(min_net)]
    parts.append((None, None, cases))
    frame = pd.DataFrame([{"low": low, "high": high, "cases": len(part),
                           "significant": int((part["p_value"] < alpha).sum()),
                           "bh_cases": int(part["bh_cases"].sum()), "bh_all": int(part["bh_all"].sum())}
                          for low, high, part in parts])
    return frame.astype({"low": "Int64", "high": "Int64"})


def threshold_counts(comparisons: pd.DataFrame, thresholds: tuple[int, ...]) -> pd.DataFrame:
    """Table 38's numbers per Net threshold: cases, subtask-dataset pairs, cross-family subtasks."""
    counted = eligible(comparisons)
    rows = []
    for threshold in thresholds:
        cases = counted[counted["net"] >= threshold]
        rows.append({"threshold": threshold, "cases": len(cases), "subtask_pairs": cases["group"].nunique(),
                     "replicated": replicated_count(cases)})
    return pd.DataFrame(rows)


def restriction_summary(comparisons: pd.DataFrame, min_net: int) -> pd.DataFrame:
    """Per restriction: comparisons, cases, subtask-dataset pairs, larger-ahead (Net <= -min_net, and
    BH-significant under the mirrored test), replicated subtask-dataset pairs."""
    rows = []
    for restriction in RESTRICTIONS:
        kept = eligible(restrict(comparisons, restriction))
        cases = kept[kept["case"]]
        larger_ahead = kept[kept["net"] <= -min_net]
        rows.append(
            {
                "restriction": restriction,
                "comparisons": len(kept),
                "cases": len(cases),
                "subtask_pairs": cases["group"].nunique(),
                "larger_ahead": len(larger_ahead),
                "larger_ahead_bh": int(larger_ahead["bh_larger_all"].sum()),
                "replicated": replicated_count(cases),
            }
        )
    return pd.DataFrame(rows)


def encoder_tiers(cases: pd.DataFrame, families: list[str]) -> pd.DataFrame:
    """Appendix K's numbers per family and overall (family "All"): cases, same-tier cases."""
    same = cases["same_encoder_tier"].astype(bool)
    rows = []
    for family in [*families, "All"]:
        within = cases["family"] == family if family != "All" else pd.Series(True, index=cases.index)
        rows.append({"family": family, "cases": int(within.sum()), "same_tier": int((within & same).sum())})
    return pd.DataFrame(rows)


def extremes(comparisons: pd.DataFrame, min_net: int) -> pd.DataFrame:
    """Section 5.5: per family, its smallest vs. largest model on every eligible subtask: comparisons,
    smaller ahead (cases), larger ahead (Net <= -min_net)."""
    kept = eligible(restrict(comparisons, "extreme"))
    rows = [
        {
            "family": family,
            "small_size": part["small_size"].iloc[0],
            "large_size": part["large_size"].iloc[0],
            "comparisons": len(part),
            "smaller_ahead": int(part["case"].sum()),
            "larger_ahead": int((part["net"] <= -min_net).sum()),
        }
        for family, part in kept.groupby("family", sort=False)
    ]
    return pd.DataFrame(rows, columns=["family", "small_size", "large_size", "comparisons", "smaller_ahead",
                                       "larger_ahead"])


def shape_counts(shapes: pd.DataFrame, families: list[str]) -> pd.DataFrame:
    """Section 5.2's numbers per family and overall ("All"): family-subtask pairs with cases, how many of
    their accuracy curves are non-monotonic and how many decreasing."""
    rows = []
    for family in [*families, "All"]:
        part = shapes if family == "All" else shapes[shapes["family"] == family]
        rows.append({"family": family, "pairs": len(part),
                     "nonmonotonic": int((part["shape"] == "non-monotonic").sum()),
                     "decreasing": int((part["shape"] == "decreasing").sum())})
    return pd.DataFrame(rows)
