"""The inverse-scaling analysis: per-question table -> comparisons -> cases -> statistics, as numbers.

    analysis = run_analysis(table, models, Parameters(...))   # pure: frames of numbers and a summary

Its presentation (paper tables, figures, report, files) is postprocess/render/.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import pandas as pd

from postprocess.inverse_scaling import accuracy, cases as case_numbers, controls, credibility, settlement, trend
from postprocess.inverse_scaling.compare import (
    OUTCOME_COLUMNS,
    Outcomes,
    build_outcomes,
    compare_pairs,
    family_order_models,
    family_pairs,
)
from lmms_eval_tasks.catalog import ORDERING_VARIANTS
from postprocess.inverse_scaling.parameters import (CI_LEVEL, COT_VARIANT, NOISE_VARIANT, REPLICATION_FAMILIES,
                                                    Parameters)
from postprocess.inverse_scaling.stats import add_significance
from postprocess.order import family_order

CASE_COLUMNS = [
    "family", "benchmark", "split", "subtask", "small", "large", "n", "flip_inv", "flip_norm", "net",
    "acc_small", "acc_large", "acc_delta", "p_value", "q_cases", "bh_cases", "q_all", "bh_all", "unsettled_small",
    "unsettled_large",
    "net_if_unsettled_excluded", "net_if_unsettled_wrong", "net_if_unsettled_candidate", "net_unsettled_min",
    "net_unsettled_max", "unsettled_decides",
]  # fmt: skip
MODEL_COLUMNS = ["model", "family", "size", "total_params", "active_params", "moe", "encoder_tier"]
# Per-question columns the analysis reads (a cache loader may read only these): the outcomes, and what tells an
# unsettled answer (settlement.py).
ANALYSIS_COLUMNS = [*OUTCOME_COLUMNS, "gold", "match", "candidate", "extra"]
# Tables 2, 4, 40, 41 and the adjacent-sizes table count cases by family under these pair restrictions.
BY_FAMILY_RESTRICTIONS = ("all", "dense_only", "twofold_total", "twofold_active", "adjacent")


class UnusableInput(ValueError):
    """The input cannot support the analysis (no runs, no comparable pair, ...)."""


@dataclass
class Analysis:
    parameters: Parameters
    models: pd.DataFrame  # the models analysed, family then size order
    comparisons: pd.DataFrame  # every pair x subtask with n > 0, with eligible/case and BH columns
    cases: pd.DataFrame  # sorted by Net desc, then acc_delta desc
    subtask_accuracy: pd.DataFrame
    split_accuracy: pd.DataFrame
    by_family: dict[str, pd.DataFrame]  # restriction -> cases_by_family numbers
    replication: pd.DataFrame  # subtask-dataset pairs with cases, all pairs
    dense_replication: pd.DataFrame  # the same over dense-only cases
    significance: pd.DataFrame  # Table 35's numbers
    thresholds: pd.DataFrame  # Table 38's numbers
    restrictions: pd.DataFrame  # Table 42's numbers
    encoder_tiers: pd.DataFrame  # Appendix K's numbers
    extremes: pd.DataFrame  # smallest vs. largest per family
    shapes: pd.DataFrame  # accuracy-curve shape per family-subtask pair with a case
    shape_counts: pd.DataFrame
    summary: dict
    controls: dict[str, pd.DataFrame] = field(default_factory=dict)  # variant -> per-case control stats
    cot_by_family: pd.DataFrame | None = None  # Table 45's numbers
    cot_by_dataset: pd.DataFrame | None = None  # Table 46's numbers
    cot_accuracy_change: pd.DataFrame | None = None  # Appendix L: each model's accuracy change, by family
    cot_accuracy_by_model: pd.DataFrame | None = None  # the same per model and role (smaller / larger)
    option_order: pd.DataFrame | None = None  # Table 43's numbers
    flips: pd.DataFrame | None = None  # one row per flipped question of each case (credibility.FLIP_COLUMNS)
    unsettled: pd.DataFrame | None = None  # per model x benchmark: answers nobody settled (settlement.unsettled_counts)
    trends: pd.DataFrame | None = None  # family x subtask trend in size (trend.TREND_COLUMNS; ours)
    trend_points: pd.DataFrame | None = None  # each model's accuracy on a trend's shared questions (the figure)
    # The table run_analysis was given, and the same rows as it scored them (settlement.resolve under its treatment of
    # unsettled answers): answers.parquet and the explorer read the latter instead of resolving the table again.
    source: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    scored: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def families(self) -> list[str]:
        return family_order(self.models)

    def scored_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """`table` as this analysis scores its answers: the table it scored when `table` is the one it was given
        (the same object), else settlement.resolve of it."""
        if self.scored is not None and table is self.source:
            return self.scored
        return settlement.resolve(table, self.parameters.unsettled)


def percent(part: int, whole: int) -> float | None:
    """100 * part / whole; None when there is no whole (nothing to take a share of)."""
    return 100.0 * part / whole if whole else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _replicated_list(rows: pd.DataFrame) -> list[dict]:
    return [
        {
            "benchmark": r.benchmark,
            "split": r.split,
            "subtask": r.subtask,
            "families": list(r.families),
            "max_net": int(r.max_net),
            "cases": int(r.cases),
        }
        for r in rows.itertuples(index=False)
    ]


def _check_models(models: pd.DataFrame) -> None:
    missing = [c for c in MODEL_COLUMNS if c not in models.columns]
    if missing:
        raise UnusableInput(f"models frame lacks columns {missing}")


def run_analysis(table: pd.DataFrame, models: pd.DataFrame, params: Parameters) -> Analysis:
    """Run every stage on the per-question table (columns ANALYSIS_COLUMNS at least) and the models
    frame (MODEL_COLUMNS, optionally family_rank). Raises UnusableInput when there are no rows or none of
    the analysed variant."""
    _check_models(models)
    if table.empty:
        raise UnusableInput("the per-question table is empty: no runs were found")
    ordered = family_order_models(models)
    source, table = table, settlement.resolve(table, params.unsettled)
    try:
        outcomes = build_outcomes(table, list(ordered["model"]), params.unsettled)
    except ValueError as error:
        raise UnusableInput(str(error)) from error
    variant = params.variant
    if variant not in outcomes.variants:
        raise UnusableInput(f"no rows of variant {variant!r} (variants present: {', '.join(outcomes.variants)})")
    present = ordered[ordered["model"].isin(outcomes.models_with_answers(variant))].reset_index(drop=True)
    # Without two models of one family that answered a common question (one model, say) the comparisons
    # are empty and only the accuracy numbers say something; the report says so.
    comparisons = compare_pairs(outcomes, family_pairs(present), variant=variant, min_n=params.min_n,
                                min_net=params.min_net)

    comparisons = add_significance(comparisons, params.fdr)
    cases = case_numbers.cases_of(comparisons)
    families = family_order(present)
    subtask_accuracy = accuracy.accuracy_by_subtask(outcomes, variant)
    replication = case_numbers.replication(cases)
    restrictions = case_numbers.restriction_summary(comparisons, params.min_net)
    shapes = case_numbers.curve_shapes(cases, subtask_accuracy, present)
    analysis = Analysis(
        parameters=params,
        models=present,
        comparisons=comparisons,
        cases=cases,
        subtask_accuracy=subtask_accuracy,
        split_accuracy=accuracy.accuracy_by_split(subtask_accuracy),
        by_family={restriction: case_numbers.cases_by_family(case_numbers.restrict(comparisons, restriction),
                                                             families) for restriction in BY_FAMILY_RESTRICTIONS},
        replication=replication,
        dense_replication=case_numbers.replication(cases[cases["dense"]]),
        significance=case_numbers.significance_by_net(cases, params.min_net, params.alpha),
        thresholds=case_numbers.threshold_counts(comparisons, params.thresholds),
        restrictions=restrictions,
        encoder_tiers=case_numbers.encoder_tiers(cases, families),
        extremes=case_numbers.extremes(comparisons, params.min_net),
        shapes=shapes,
        shape_counts=case_numbers.shape_counts(shapes, families),
        summary={},
        source=source,
        scored=table,
    )
    analysis.unsettled = settlement.unsettled_counts(table[table["model"].isin(present["model"])], variant)
    _add_controls(analysis, outcomes)
    # The credibility verdict reads the controls' runs, so it comes after them.
    shared = credibility.shared_answers(table, cases, variant)
    analysis.flips = credibility.comparison_flips(table, cases, variant, shared)
    noise = credibility.run_to_run_noise(outcomes, comparisons[comparisons["eligible"]], variant)
    analysis.cases = credibility.case_verdicts(
        cases, comparisons, analysis.controls, noise, credibility.extraction_exposure(table, cases, variant, shared),
        has_tiers=credibility.records_tiers(table), min_net=params.min_net, alpha=params.alpha, fdr=params.fdr,
        treatment=params.unsettled)
    # The family-wide trend (ours): one test per family x subtask, and each case placed against it.
    analysis.trends, analysis.trend_points = trend.family_trends(outcomes, present, variant, min_n=params.min_n,
                                                                 fdr=params.fdr, level=CI_LEVEL)
    analysis.cases = trend.place_cases(analysis.cases, analysis.trends)
    analysis.summary = {
        "parameters": asdict(params),
        "models": len(present),
        "families": families,
        "questions": int(len(outcomes.question_group)),
        "rows": int(len(table)),
        "variants": list(outcomes.variants),
        **_case_summary(analysis),
        **_control_summary(analysis),
        "credibility": credibility.verdict_summary(analysis.cases, noise, comparisons, params.fdr),
        "unsettled": _unsettled_summary(analysis),
        "trend": trend.trend_summary(analysis.trends, analysis.cases),
    }
    return analysis


def _unsettled_summary(analysis: Analysis) -> dict:
    """How many answers nobody settled, how the run counted them, and the comparisons they decide."""
    counts = analysis.unsettled
    counted = analysis.comparisons[analysis.comparisons["eligible"] | analysis.comparisons["unsettled_decides"]]
    return {
        "treatment": analysis.parameters.unsettled,
        "answers": int(counts["answers"].sum()),
        "unsettled": int(counts["unsettled"].sum()),
        "with_candidate": int(counts["with_candidate"].sum()),
        "candidate_is_gold": int(counts["candidate_is_gold"].sum()),
        "cases_decided_by_unsettled": int((analysis.cases["unsettled_decides"]).sum()) if len(analysis.cases) else 0,
        "comparisons_decided_by_unsettled": int(counted["unsettled_decides"].sum()),
    }


def _case_summary(analysis: Analysis) -> dict:
    comparisons, cases, params = analysis.comparisons, analysis.cases, analysis.parameters
    counted = comparisons[comparisons["eligible"]]
    by_restriction = analysis.restrictions.set_index("restriction")
    replicated_rows = analysis.replication[analysis.replication["n_families"] >= REPLICATION_FAMILIES]
    extremes = case_numbers.restrict(counted, "extreme")
    shapes = analysis.shapes
    nonmonotonic = int((shapes["shape"] == "non-monotonic").sum())
    summary = {
        "eligible_comparisons": len(counted),
        "cases": len(cases),
        "case_rate_percent": _rounded(percent(len(cases), len(counted))),
        "significant_uncorrected": int((cases["p_value"] < params.alpha).sum()),
        "significant_bh_cases": int(cases["bh_cases"].sum()),
        "significant_bh_all": int(cases["bh_all"].sum()),
        "subtask_dataset_pairs": len(analysis.replication),
        "family_subtask_pairs": len(shapes),
        "replicated_subtasks": _replicated_list(replicated_rows),
        "two_family_subtasks": int((analysis.replication["n_families"] == 2).sum()),
        "larger_ahead_share_percent": _rounded(percent(int((counted["net"] < 0).sum()), len(counted))),
        "larger_ahead_by_min_net": int(by_restriction.loc["all", "larger_ahead"]),
        "larger_ahead_significant_bh": int(by_restriction.loc["all", "larger_ahead_bh"]),
        "nonmonotonic_family_subtasks": nonmonotonic,
        "nonmonotonic_share_percent": _rounded(percent(nonmonotonic, len(shapes))),
        "smallest_vs_largest_comparisons": len(extremes),
        "smallest_vs_largest_cases": int(extremes["case"].sum()),
    }
    for restriction in ("dense_only", "twofold_total", "twofold_active", "adjacent", "same_encoder_tier"):
        row = by_restriction.loc[restriction]
        for column in ("cases", "comparisons", "subtask_pairs", "replicated"):
            summary[f"{restriction}_{column}"] = int(row[column])
    return summary


def _add_controls(analysis: Analysis, outcomes: Outcomes) -> None:
    """CoT and option-order controls for the variants the logs hold besides the analysed one."""
    params, cases = analysis.parameters, analysis.cases
    if cases.empty:
        return
    for other in (v for v in outcomes.variants if v != params.variant):
        flips = controls.control_flips(outcomes, cases, base_variant=params.variant, variant=other)
        if len(flips):
            analysis.controls[other] = flips
    if COT_VARIANT in analysis.controls:
        cot = controls.cot_outcomes(analysis.controls[COT_VARIANT], cases, min_net=params.min_net, fdr=params.fdr)
        analysis.controls[COT_VARIANT] = cot
        analysis.cot_by_family = controls.cot_summary(cot, ["family"], order=analysis.families)
        analysis.cot_by_dataset = controls.cot_summary(cot, ["benchmark", "split"])
        analysis.cot_accuracy_change = controls.cot_accuracy_change(cot, ["family"], order=analysis.families)
        analysis.cot_accuracy_by_model = controls.cot_accuracy_change_by_model(cot, list(analysis.models["model"]))
    # Every other variant is an ordering control (identity: the unchanged prompt re-run), in catalog order.
    known = [v for v in ORDERING_VARIANTS if v in analysis.controls]
    orderings = {v: analysis.controls[v] for v in
                 [*known, *(v for v in analysis.controls if v not in known and v != COT_VARIANT)]}
    if orderings:
        analysis.option_order = controls.option_order_runs(cases, orderings, params.variant)


def _control_summary(analysis: Analysis) -> dict:
    summary = {}
    if COT_VARIANT in analysis.controls:
        cot = analysis.controls[COT_VARIANT]
        lost = int(cot["base_flip_inv"].sum())
        summary["cot"] = {
            "cases_covered": len(cot),
            "persist": int((cot["outcome"] == "persist").sum()),
            "dissolve": int((cot["outcome"] == "dissolve").sum()),
            "reverse": int((cot["outcome"] == "reverse").sum()),
            "median_net_direct": float(cot["base_net"].median()),
            "median_net_cot": float(cot["net"].median()),
            "larger_lost_direct": lost,
            "larger_recovered_cot": int(cot["recovered"].sum()),
            "recovery_percent": _rounded(percent(int(cot["recovered"].sum()), lost)),
            "smaller_accuracy_decreased": int((cot["acc_small"] < cot["base_acc_small"]).sum()),
            "smaller_mean_change_pp": _rounded(float((cot["acc_small"] - cot["base_acc_small"]).mean())),
            "larger_accuracy_increased": int((cot["acc_large"] > cot["base_acc_large"]).sum()),
            "larger_mean_change_pp": _rounded(float((cot["acc_large"] - cot["base_acc_large"]).mean())),
            "significant_bh_cot": int(cot["bh_cot"].sum()),
        }
    if analysis.option_order is not None:
        order = analysis.option_order
        variants = list(dict.fromkeys(order["ordering"]))[1:]  # the first is the analysed run itself
        # The identity re-run replays the original order: a noise run, not a reordered one.
        runs = order[~order["ordering"].isin([analysis.parameters.variant, NOISE_VARIANT])]
        summary["option_order"] = {
            "variants": variants,
            "cases_covered": int(len(runs[case_numbers.CASE_KEY].drop_duplicates())),
            "runs": len(runs),
            "runs_with_positive_net": int((runs["net"] > 0).sum()),
            "runs_with_min_net": int((runs["net"] >= analysis.parameters.min_net).sum()),
        }
        if NOISE_VARIANT in variants:
            # Appendix J: how far a re-run of the unchanged prompt moves Net bounds run-to-run variation.
            base = order[order["ordering"] == analysis.parameters.variant].set_index(case_numbers.CASE_KEY)["net"]
            replay = order[order["ordering"] == NOISE_VARIANT].set_index(case_numbers.CASE_KEY)["net"]
            summary["option_order"]["identity_runs"] = len(replay)
            summary["option_order"]["identity_max_net_change"] = int((replay - base.reindex(replay.index)).abs().max())
    return summary
