"""The inverse-scaling paper's tables, laid out from the analysis's numbers: one function per table, its
title beside it ("Table 36" is one grep). `inverse_scaling_tables(analysis)` builds them all in reading
order. Values are as printed: percentages rounded to one decimal, counts as ints, composite cells as text;
emphasis travels as boolean masks (render/tables.py draws it per format).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.analysis import Analysis
from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.compare import GROUP_KEY
from postprocess.inverse_scaling.credibility import CHECKS
from postprocess.inverse_scaling.parameters import CI_LEVEL, POWER, REPLICATION_FAMILIES
from postprocess.order import sort_frame
from postprocess.render.labels import (
    benchmark_row_label,
    dataset_labels,
    family_slug,
    multi_split_benchmarks,
    signed,
)
from postprocess.render.tables import Table

RESTRICTION_LABELS = {
    "all": "All pairs",
    "twofold_total": "Total parameters ≥ 2×",
    "twofold_active": "Active parameters ≥ 2×",
    "dense_only": "Dense models only (no MoE)",
    "same_encoder_tier": "Same encoder tier",
    "adjacent": "Adjacent sizes",
    "extreme": "Smallest vs. largest (families of 3+ models)",
}


def _share(part: int, whole: int) -> float:
    """A percentage for display: one decimal, NaN (printed empty) when there is no whole."""
    return round(100.0 * part / whole, 1) if whole else float("nan")


# ---------------------------------------------------------------------------------------------- by family
def _by_family(numbers: pd.DataFrame, families: list[str], show_eligible: bool) -> pd.DataFrame:
    """Benchmarks (splits pooled) x families, with a Total row and column: "cases/comparisons" or cases."""
    labels = {b: benchmark_row_label(b, s) for b, s in zip(numbers["benchmark"], numbers["splits"])}
    benchmarks = list(labels)
    cases = numbers.pivot(index="benchmark", columns="family", values="cases").reindex(
        index=benchmarks, columns=families, fill_value=0)
    totals = numbers.pivot(index="benchmark", columns="family", values="comparisons").reindex(
        index=benchmarks, columns=families, fill_value=0)
    cases, totals = cases.fillna(0).astype(int), totals.fillna(0).astype(int)
    cases["Total"], totals["Total"] = cases.sum(axis=1), totals.sum(axis=1)
    cases.loc["Total"], totals.loc["Total"] = cases.sum(), totals.sum()
    cells = cases.astype(str) + "/" + totals.astype(str) if show_eligible else cases
    cells.columns.name = None
    return cells.rename(index=lambda b: labels.get(b, b)).rename_axis("Dataset").reset_index()


def table02_cases_by_family(analysis: Analysis) -> Table:
    p = analysis.parameters
    return Table("table02_cases_by_family",
                 f"Table 2: pairwise inverse-scaling cases / eligible comparisons (n ≥ {p.min_n} shared questions) by "
                 f"family and dataset; a case has Net ≥ {p.min_net}.",
                 _by_family(analysis.by_family["all"], analysis.families, show_eligible=True))


def table04_dense_only(analysis: Analysis) -> Table:
    return Table("table04_dense_only",
                 "Table 4: dense-only pairwise inverse-scaling cases by family and dataset (MoE models excluded).",
                 _by_family(analysis.by_family["dense_only"], analysis.families, show_eligible=False))


def table40_twofold_total(analysis: Analysis) -> Table:
    return Table("table40_twofold_total",
                 "Table 40: cases / eligible comparisons, pairs whose larger model has ≥2× the total parameters.",
                 _by_family(analysis.by_family["twofold_total"], analysis.families, show_eligible=True))


def table41_twofold_active(analysis: Analysis) -> Table:
    return Table("table41_twofold_active",
                 "Table 41: cases / eligible comparisons, pairs whose larger model has ≥2× the active parameters.",
                 _by_family(analysis.by_family["twofold_active"], analysis.families, show_eligible=True))


def adjacent_cases_by_family(analysis: Analysis) -> Table:
    return Table("adjacent_cases_by_family", "Adjacent-size pairs only: cases / eligible comparisons.",
                 _by_family(analysis.by_family["adjacent"], analysis.families, show_eligible=True))


# ---------------------------------------------------------------------------------------------- cases
def _case_rows(cases: pd.DataFrame, multi_split: set[str]) -> pd.DataFrame:
    """A case's identity and counts in Table 3's column order (Appendix C's puts Acc Δ before FI)."""
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


def _case_keys(cases: pd.DataFrame) -> list[tuple]:
    """Each row's comparison (CASE_KEY values): what report.html links to its flip-explorer page."""
    return list(cases[CASE_KEY].itertuples(index=False, name=None))


def _interval(low: float, high: float) -> str:
    return "–" if np.isnan(low) else f"[{low:.1f}, {high:.1f}]"


def _lower_bound(value: float) -> str:
    return "–" if np.isnan(value) else f"≥ {value:.1f}"


def _verdict_columns(cases: pd.DataFrame, checks: bool) -> pd.DataFrame:
    """The credibility verdict beside the case (inverse_scaling/credibility.py): each check when `checks`, the
    verdict with the case's significance (raw p, BH q over all eligible comparisons), Net's one-sided exact lower
    bound and two-sided interval and the minimum detectable Net."""
    level = round(100 * CI_LEVEL)
    columns = {name[0].upper() + name[1:]: cases[column] for column, name in CHECKS.items()} if checks else {}
    columns.update({
        "Verdict": cases["verdict"],
        "Families": cases["replication_families"],
        f"Net {level}% bound": cases["net_lower_bound"].map(_lower_bound),
        f"Net {level}% CI": [_interval(low, high) for low, high in zip(cases["net_ci_low"], cases["net_ci_high"])],
        f"MDE ({round(100 * POWER)}%)": cases["min_detectable_net"].map(lambda v: "–" if np.isnan(v) else f"{v:.1f}"),
    })
    return pd.DataFrame(columns, index=cases.index)


def _significance_columns(cases: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"p": cases["p_value"].map(lambda p: f"{p:.2g}"),
                         "q (all)": cases["q_all"].map(lambda q: f"{q:.2g}"),
                         "BH (cases)": cases["bh_cases"].map({True: "yes", False: ""})}, index=cases.index)


OURS = "Ours, not the paper's: "
VERDICT_NOTE = (f"Verdict: the credibility checks ({', '.join(CHECKS.values())}; “not run” where the logs lack the "
                "runs; “pass” only when all three ran); Families: in how many of the families compared on the subtask "
                "it has cases (replication, beside the verdict, never a check). p: one-sided exact McNemar; q (all): "
                "BH over all eligible comparisons; BH (cases): significant after Benjamini–Hochberg over the cases "
                "(exploratory: cases are selected on the same data). Net bound: the one-sided exact lower bound, "
                "matching the one-sided test; Net CI: two-sided; both given the case's D = FlipInv + FlipNorm "
                "discordant questions. MDE: with D discordant questions, a true Net this large would be detected "
                f"{round(100 * POWER)}% of the time at the uncorrected level (a property of the design, not of the "
                "observed Net; at BH's level: min_detectable_net_bh in cases.csv).")


def _top_cases(analysis: Analysis) -> pd.DataFrame:
    return analysis.cases.head(analysis.parameters.top_k)


def _extended_rows(cases: pd.DataFrame, multi_split: set[str]) -> pd.DataFrame:
    """An extended table's rows (ours): the case, its significance, its checks and verdict."""
    return pd.concat([_case_rows(cases, multi_split)[["Family", "Dataset", "Subtask", "Small", "Large", "Net"]],
                      _significance_columns(cases), _verdict_columns(cases, checks=True)], axis=1)


def table03_top_cases(analysis: Analysis, multi_split: set[str]) -> Table:
    """The paper's columns only; the verdict is in table03_top_cases_extended."""
    top = _top_cases(analysis)
    frame = _case_rows(top, multi_split)
    frame.insert(0, "#", np.arange(1, len(frame) + 1))
    return Table("table03_top_cases", f"Table 3: Top {analysis.parameters.top_k} pairwise cases ranked by Net "
                 "(FlipInv − FlipNorm); Acc Δ in pp.", frame.reset_index(drop=True),
                 note="Credibility verdict and significance (ours): table03_top_cases_extended.",
                 row_keys=_case_keys(top))


def table03_top_cases_extended(analysis: Analysis, multi_split: set[str]) -> Table:
    """Beyond the paper: Table 3's cases with their significance and credibility verdict."""
    top = _top_cases(analysis)
    frame = _extended_rows(top, multi_split)
    frame.insert(0, "#", np.arange(1, len(frame) + 1))
    return Table("table03_top_cases_extended", f"Table 3, extended (ours): the top {analysis.parameters.top_k} "
                 "cases' significance and credibility verdict.", frame.reset_index(drop=True),
                 note=OURS + VERDICT_NOTE, row_keys=_case_keys(top))


def _all_cases(analysis: Analysis) -> pd.DataFrame:
    return sort_frame(analysis.cases, ["family", "benchmark", "split"], analysis.families)


def appendixC_all_cases(analysis: Analysis, multi_split: set[str]) -> Table:
    """The paper's columns (Subtask, Small, Large, n, Acc Δ, FI, FN, Net), its family and dataset headings as
    columns; the verdict is in appendixC_all_cases_extended."""
    ordered = _all_cases(analysis)
    frame = _case_rows(ordered, multi_split)[["Family", "Dataset", "Subtask", "Small", "Large", "n", "Acc Δ", "FI",
                                              "FN", "Net"]]
    return Table("appendixC_all_cases", "Appendix C: all pairwise inverse-scaling cases (Net ≥ "
                 f"{analysis.parameters.min_net} on n ≥ {analysis.parameters.min_n} matched questions).",
                 frame.reset_index(drop=True),
                 note="Significance and credibility verdict (ours): appendixC_all_cases_extended.",
                 row_keys=_case_keys(ordered))


def appendixC_all_cases_extended(analysis: Analysis, multi_split: set[str]) -> Table:
    """Beyond the paper: every case, in Appendix C's order, with its significance, checks and verdict."""
    ordered = _all_cases(analysis)
    frame = _extended_rows(ordered, multi_split)
    return Table("appendixC_all_cases_extended", "Appendix C, extended (ours): every case's one-sided McNemar p, BH "
                 "decisions at the FDR, credibility checks and verdict.", frame.reset_index(drop=True),
                 note=OURS + VERDICT_NOTE, row_keys=_case_keys(ordered))


def net_bin_label(low: int | None, high: int | None) -> str:
    if low is None:
        return "Total"
    if high is None:
        return f"≥{low}"
    return f"{low}–{high}" if high > low else str(low)


def table35_significance_by_net(analysis: Analysis) -> Table:
    p, rows = analysis.parameters, analysis.significance
    frame = pd.DataFrame({
        "Net range": [net_bin_label(None if pd.isna(low) else int(low), None if pd.isna(high) else int(high))
                      for low, high in zip(rows["low"], rows["high"])],
        "Cases": rows["cases"],
        f"Significant (p<{p.alpha:g})": rows["significant"],
        "%": [_share(s, c) for s, c in zip(rows["significant"], rows["cases"])],
        "BH (cases)": rows["bh_cases"],
        "BH (all)": rows["bh_all"],
    })
    return Table("table35_significance_by_net",
                 f"Table 35: one-sided exact McNemar significance by Net range, uncorrected and after "
                 f"Benjamini–Hochberg at FDR {p.fdr:g} over the cases and over all eligible comparisons.", frame)


def _replication(rows: pd.DataFrame, multi_split: set[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Dataset": dataset_labels(rows, multi_split),
            "Subtask": rows["subtask"],
            "Families": rows["n_families"],
            "Family names": rows["families"].map(", ".join),
            "Max Net": rows["max_net"],
            "Cases": rows["cases"],
        }
    ).reset_index(drop=True)


def _replicated(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["n_families"] >= REPLICATION_FAMILIES]


def table09_dense_replication(analysis: Analysis, multi_split: set[str]) -> Table:
    return Table("table09_dense_replication",
                 "Table 9: dense-only cross-family replication (subtask–dataset pairs with cases in ≥3 families).",
                 _replication(_replicated(analysis.dense_replication), multi_split))


def table36_replicated(analysis: Analysis, multi_split: set[str]) -> Table:
    return Table("table36_replicated",
                 "Table 36: subtask–dataset pairs with pairwise inverse scaling in at least three families.",
                 _replication(_replicated(analysis.replication), multi_split))


def table37_two_families(analysis: Analysis, multi_split: set[str]) -> Table:
    rows = analysis.replication
    return Table("table37_two_families",
                 "Table 37: subtask–dataset pairs with pairwise inverse scaling in exactly two families.",
                 _replication(rows[rows["n_families"] == 2], multi_split))


def table38_thresholds(analysis: Analysis) -> Table:
    rows = analysis.thresholds
    frame = pd.DataFrame({f"≥{t}": [c, s, r] for t, c, s, r in
                          zip(rows["threshold"], rows["cases"], rows["subtask_pairs"], rows["replicated"])})
    frame.insert(0, "Net threshold", ["Pairwise cases", "Unique subtask–dataset pairs",
                                      f"Cross-family (≥{REPLICATION_FAMILIES} families)"])
    return Table("table38_thresholds", "Table 38: robustness to the Net threshold (eligible comparisons only).", frame)


def table42_restrictions(analysis: Analysis) -> Table:
    summary, min_net = analysis.restrictions, analysis.parameters.min_net
    frame = pd.DataFrame(
        {
            "Pairs kept": summary["restriction"].map(RESTRICTION_LABELS),
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
    return Table("table42_restrictions",
                 f"Table 42 (extended): cases under pair restrictions. “Larger ahead” counts comparisons with "
                 f"Net ≤ −{min_net}; “Replicated” counts subtask–dataset pairs with a case in ≥{REPLICATION_FAMILIES} "
                 "families.", frame)


def appendixK_encoder_tiers(analysis: Analysis) -> Table:
    rows = analysis.encoder_tiers
    frame = pd.DataFrame({"Family": rows["family"], "Cases": rows["cases"], "Same tier": rows["same_tier"],
                          "Cross tier": rows["cases"] - rows["same_tier"],
                          "Same tier %": [_share(s, c) for s, c in zip(rows["same_tier"], rows["cases"])]})
    return Table("appendixK_encoder_tiers", "Appendix K: cases whose two models share the vision-encoder tier.", frame)


def extremes_smallest_vs_largest(analysis: Analysis) -> Table:
    rows, min_net = analysis.extremes, analysis.parameters.min_net
    frame = pd.DataFrame({"Family": rows["family"], "Small": rows["small_size"], "Large": rows["large_size"],
                          "Comparisons": rows["comparisons"], f"Smaller ahead (Net ≥ {min_net})": rows["smaller_ahead"],
                          f"Larger ahead (Net ≤ −{min_net})": rows["larger_ahead"]})
    return Table("extremes_smallest_vs_largest",
                 "Smallest vs. largest model of each family of three or more models (Section 5.5).", frame)


def curve_shapes(analysis: Analysis) -> Table:
    rows = analysis.shape_counts
    frame = pd.DataFrame({"Family": rows["family"], "Family–subtask pairs with cases": rows["pairs"],
                          "Non-monotonic": rows["nonmonotonic"], "Decreasing": rows["decreasing"],
                          "Non-monotonic %": [_share(n, c) for n, c in zip(rows["nonmonotonic"], rows["pairs"])]})
    return Table("curve_shapes", "Accuracy-vs-size curves of the family–subtask pairs with cases (Section 5.2).", frame)


# ---------------------------------------------------------------------------------------------- accuracy
def _wide_by_size(accuracy: pd.DataFrame, members: pd.DataFrame, row_columns: list[str]) -> pd.DataFrame:
    size_of = dict(zip(members["model"], members["size"]))
    family_rows = accuracy[accuracy["model"].isin(size_of)]
    values = family_rows.assign(size=family_rows["model"].map(size_of)).set_index([*row_columns, "size"])["accuracy"]
    # unstack sorts the rows; reindex restores their display order (unstack(sort=False) mislabels rows in pandas 2)
    wide = values.unstack("size").reindex(values.index.droplevel("size").unique())
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


def _family_accuracy(accuracy: pd.DataFrame, models: pd.DataFrame, row_columns: list[str], name: str,
                     title: str) -> list[Table]:
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
        tables.append(Table(
            name=f"{name}_{family_slug(family)}",
            title=f"{title} for {family}. Bold = best in family; underline = largest model is not best.",
            frame=frame,
            bold=bold.reindex(columns=frame.columns, fill_value=False),
            underline=underline.reindex(columns=frame.columns, fill_value=False),
        ))
    return tables


def appendixB_accuracy(analysis: Analysis) -> list[Table]:
    """Appendix B (Tables 6-8): rows benchmark-split, columns the family's sizes, one table per family."""
    return _family_accuracy(analysis.split_accuracy, analysis.models, ["benchmark", "split"], "appendixB_accuracy",
                            "Overall accuracy (%) (Appendix B)")


def appendixB_subtask_accuracy(analysis: Analysis) -> list[Table]:
    """The Appendix B layout per subtask: rows benchmark-split-subtask, columns the family's sizes."""
    return _family_accuracy(analysis.subtask_accuracy, analysis.models, GROUP_KEY, "appendixB_subtask_accuracy",
                            "Subtask accuracy (%)")


# ---------------------------------------------------------------------------------------------- controls
def _cot_frame(rows: pd.DataFrame, first: str, labels: list[str], with_dissolve: bool) -> pd.DataFrame:
    frame = pd.DataFrame({
        first: labels,
        "Cases": rows["cases"],
        "Median Net direct": rows["median_net_direct"].map(signed),
        "Median Net CoT": rows["median_net_cot"].map(signed),
        "Persist": [f"{p} ({100.0 * p / c:.1f}%)" for p, c in zip(rows["persist"], rows["cases"])],
    })
    if with_dissolve:
        frame["Dissolve"] = rows["dissolve"]
    frame["Reverse"] = rows["reverse"]
    frame["Recovery"] = [f"{100.0 * r / lost:.1f}%" if lost else "" for r, lost in zip(rows["recovered"], rows["lost"])]
    return frame.reset_index(drop=True)


def _cot_note(min_net: int) -> str:
    return (f"Persist: Net ≥ {min_net} under CoT; reverse: Net ≤ −{min_net}; recovery: share of the questions the "
            "larger model lost under direct prompting that it answers correctly under CoT.")


def table45_cot_by_family(analysis: Analysis) -> Table:
    rows = analysis.cot_by_family
    return Table("table45_cot_by_family", "Table 45: chain-of-thought control, by family.",
                 _cot_frame(rows, "Family", list(rows["family"]), with_dissolve=True),
                 note=_cot_note(analysis.parameters.min_net))


def table46_cot_by_dataset(analysis: Analysis, multi_split: set[str]) -> Table:
    rows = analysis.cot_by_dataset
    labels = ["All" if b == "All" else label for b, label in zip(rows["benchmark"], dataset_labels(rows, multi_split))]
    return Table("table46_cot_by_dataset", "Table 46: chain-of-thought control, by dataset.",
                 _cot_frame(rows, "Dataset", labels, with_dissolve=False),
                 note=_cot_note(analysis.parameters.min_net))


def appendixL_cot_accuracy_change(analysis: Analysis) -> Table:
    rows = analysis.cot_accuracy_change
    frame = pd.DataFrame({
        "Family": rows["family"],
        "Cases": rows["cases"],
        "Smaller: accuracy down": [f"{d} ({100.0 * d / c:.1f}%)" for d, c in zip(rows["smaller_decreased"], rows["cases"])],
        "Smaller: mean Δ (pp)": rows["smaller_mean_change"].map(lambda v: f"{v:+.1f}"),
        "Larger: accuracy up": [f"{u} ({100.0 * u / c:.1f}%)" for u, c in zip(rows["larger_increased"], rows["cases"])],
        "Larger: mean Δ (pp)": rows["larger_mean_change"].map(lambda v: f"{v:+.1f}"),
    })
    return Table("appendixL_cot_accuracy_change",
                 "Appendix L: accuracy change of each model of a case under chain-of-thought prompting "
                 "(CoT − direct, on the case's shared questions), by family.", frame,
                 note="The paper: the smaller model's accuracy decreases in 251 of 375 cases (mean −3.9 pp), "
                      "vs. +5.2 pp for the larger model.")


def appendixL_cot_accuracy_by_model(analysis: Analysis) -> Table:
    rows = analysis.cot_accuracy_by_model
    family_of = dict(zip(analysis.models["model"], analysis.models["family"]))
    size_of = dict(zip(analysis.models["model"], analysis.models["size"]))
    frame = pd.DataFrame({
        "Family": rows["model"].map(family_of), "Model": rows["model"].map(size_of), "Role": rows["role"],
        "Cases": rows["cases"], "Acc direct": rows["acc_direct"].round(1), "Acc CoT": rows["acc_cot"].round(1),
        "Mean Δ (pp)": rows["mean_change"].map(lambda v: f"{v:+.1f}"), "Cases with a decrease": rows["decreased"],
    })
    return Table("appendixL_cot_accuracy_by_model",
                 "Appendix L: each model's accuracy under direct and chain-of-thought prompting, as the smaller and "
                 "as the larger model of its cases (means over those cases, on each case's shared questions).", frame)


ORDERING_LABELS = {"identity": "identity", "reverse": "reversal", "shift1": "shift +1", "shift2": "shift +2",
                   "shift3": "shift +3"}


PAPER_TABLE43_BENCHMARK = "BLINK"  # Appendix J: "the six BLINK cases among the ten strongest cases of Table 3"


def _option_order_frame(rows: pd.DataFrame, base: str, multi_split: set[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "#": rows["rank"],
            "Family": rows["family"],
            "Dataset": dataset_labels(rows, multi_split),
            "Subtask": rows["subtask"],
            "Pair": rows["small_size"] + " vs. " + rows["large_size"],
            "Ordering": [f"{v} (main run)" if v == base else ORDERING_LABELS.get(v, v) for v in rows["ordering"]],
            "Acc S": rows["acc_small"].round(1),
            "Acc L": rows["acc_large"].round(1),
            "FI": rows["flip_inv"],
            "FN": rows["flip_norm"],
            "Net": rows["net"].map(signed),
        }
    )


def _runs_note(rows: pd.DataFrame, base: str) -> str:
    reruns = rows[rows["ordering"] != base]
    return f"{rows['rank'].nunique()} case(s), {len(reruns)} re-run(s) of a case under one ordering."


def table43_option_order(analysis: Analysis, multi_split: set[str]) -> Table:
    """The paper's scope: the BLINK cases among Table 3's top_k, under identity and the reorderings."""
    rows = analysis.option_order
    base = analysis.parameters.variant
    k = analysis.parameters.top_k
    paper = rows[(rows["rank"] <= k) & (rows["benchmark"] == PAPER_TABLE43_BENCHMARK) & (rows["ordering"] != base)]
    return Table("table43_option_order",
                 f"Table 43: option-order sensitivity for the {PAPER_TABLE43_BENCHMARK} cases of Table 3 (top {k}); "
                 "“identity” re-runs the original order (run-to-run variation); Acc is the accuracy (%) of the smaller "
                 "(S) and larger (L) model.", _option_order_frame(paper, base, multi_split).reset_index(drop=True),
                 note=f"{_runs_note(paper, base)} Every case the logs re-ran, with its main-run row: "
                      "table43_option_order_extended.")


def table43_option_order_extended(analysis: Analysis, multi_split: set[str]) -> Table:
    """Beyond the paper: every case the logs hold an identity re-run or a reordered run of, its main-run row first."""
    rows = analysis.option_order
    base = analysis.parameters.variant
    return Table("table43_option_order_extended",
                 "Table 43, extended: option-order sensitivity of every case re-run under reordered options, with "
                 "the main run's row; “identity” re-runs the original order; Acc is the accuracy (%) of the smaller "
                 "(S) and larger (L) model.", _option_order_frame(rows, base, multi_split),
                 note=f"{_runs_note(rows, base)} The counts follow the runs in the logs; the paper's table is "
                      "table43_option_order.")


# ---------------------------------------------------------------------------------------------- all
def inverse_scaling_tables(analysis: Analysis) -> dict[str, Table]:
    """Every table the analysis supports, by file name, in the paper's numbering order."""
    multi_split = multi_split_benchmarks(analysis.comparisons)
    tables = [
        table02_cases_by_family(analysis),
        table03_top_cases(analysis, multi_split),
        table03_top_cases_extended(analysis, multi_split),
        table04_dense_only(analysis),
        table09_dense_replication(analysis, multi_split),
        appendixC_all_cases(analysis, multi_split),
        appendixC_all_cases_extended(analysis, multi_split),
        table35_significance_by_net(analysis),
        table36_replicated(analysis, multi_split),
        table37_two_families(analysis, multi_split),
        table38_thresholds(analysis),
        table40_twofold_total(analysis),
        table41_twofold_active(analysis),
        table42_restrictions(analysis),
        appendixK_encoder_tiers(analysis),
        adjacent_cases_by_family(analysis),
        extremes_smallest_vs_largest(analysis),
        curve_shapes(analysis),
        *appendixB_accuracy(analysis),
        *appendixB_subtask_accuracy(analysis),
    ]
    if analysis.cot_by_family is not None:
        tables += [table45_cot_by_family(analysis), table46_cot_by_dataset(analysis, multi_split),
                   appendixL_cot_accuracy_change(analysis), appendixL_cot_accuracy_by_model(analysis)]
    if analysis.option_order is not None:
        tables += [table43_option_order(analysis, multi_split), table43_option_order_extended(analysis, multi_split)]
    return {table.name: table for table in tables}
