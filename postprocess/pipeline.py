"""The analysis: per-question table -> comparisons, cases, tables, summary; then files on disk.

analysis = run_analysis(table, models)          # pure, no I/O
write_outputs(analysis, "out/", quality=frames)  # cases.csv, comparisons.parquet, summary.json,
                                                 # tables/, figures/, report.md, report.html
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess import accuracy, cases as case_tables, controls
from postprocess.compare import (
    GROUP_KEY,
    OUTCOME_COLUMNS,
    Outcomes,
    build_outcomes,
    compare_pairs,
    family_order_models,
    family_pairs,
)
from postprocess.labels import family_order, multi_split_benchmarks
from postprocess.stats import add_significance
from postprocess.tables import Table, write_table

CASE_COLUMNS = [
    "family", "benchmark", "split", "subtask", "small", "large", "n", "flip_inv", "flip_norm", "net",
    "acc_small", "acc_large", "acc_delta", "p_value", "bh_cases", "bh_all",
]  # fmt: skip
MODEL_COLUMNS = ["model", "family", "size", "total_params", "active_params", "moe", "encoder_tier"]
# Per-question columns the analysis reads (a cache loader may read only these).
ANALYSIS_COLUMNS = OUTCOME_COLUMNS
COT_VARIANT = "cot"
FIGURE1_PANELS = 4
FIGURE2_SUBTASKS = 12


class UnusableInput(ValueError):
    """The input cannot support the analysis (no runs, no comparable pair, ...)."""


@dataclass(frozen=True)
class Parameters:
    min_n: int = 20  # shared questions for an eligible comparison
    min_net: int = 5  # Net for a case
    fdr: float = 0.05  # Benjamini-Hochberg false discovery rate
    alpha: float = 0.05  # uncorrected significance level
    variant: str = "direct"  # prompt variant analysed
    top_k: int = 10  # Table 3 rows
    thresholds: tuple[int, ...] = case_tables.THRESHOLDS  # Table 38 columns


@dataclass
class Analysis:
    parameters: Parameters
    models: pd.DataFrame  # the models analysed, family then size order
    comparisons: pd.DataFrame  # every pair x subtask with n > 0, with eligible/case and BH columns
    cases: pd.DataFrame  # sorted by Net desc, then acc_delta desc
    subtask_accuracy: pd.DataFrame
    split_accuracy: pd.DataFrame
    tables: dict[str, Table]
    summary: dict
    figure1_subtasks: pd.DataFrame
    figure2_subtasks: pd.DataFrame
    multi_split: set[str]
    controls: dict[str, pd.DataFrame] = field(default_factory=dict)  # variant -> per-case control stats

    @property
    def families(self) -> list[str]:
        return family_order(self.models)


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


def _figure_subtasks(
    replication: pd.DataFrame, chosen: list[tuple[str, str, str]] | None, panels: int, bars: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 1 panels: the chosen subtasks, else the most replicated; Figure 2 rows: the replicated
    subtasks (>= 3 families) with most cases, else any subtasks with most cases."""
    if chosen:
        figure1 = pd.DataFrame(chosen, columns=GROUP_KEY, dtype=object)
    else:
        figure1 = replication.head(panels)[GROUP_KEY]
    replicated = replication[replication["n_families"] >= case_tables.REPLICATION_FAMILIES]
    pool = replicated if len(replicated) else replication
    figure2 = pool.sort_values(["cases", "n_families", "max_net"], ascending=False, kind="stable").head(bars)
    return figure1.reset_index(drop=True), figure2.reset_index(drop=True)


def _check_models(models: pd.DataFrame) -> None:
    missing = [c for c in MODEL_COLUMNS if c not in models.columns]
    if missing:
        raise UnusableInput(f"models frame lacks columns {missing}")


def run_analysis(
    table: pd.DataFrame,
    models: pd.DataFrame,
    *,
    min_n: int = 20,
    min_net: int = 5,
    fdr: float = 0.05,
    alpha: float = 0.05,
    variant: str = "direct",
    top_k: int = 10,
    thresholds: tuple[int, ...] = case_tables.THRESHOLDS,
    figure_subtasks: list[tuple[str, str, str]] | None = None,
) -> Analysis:
    """Run every stage on the per-question table (columns ANALYSIS_COLUMNS at least) and the models
    frame (MODEL_COLUMNS, optionally family_rank). Raises UnusableInput when nothing can be compared."""
    params = Parameters(min_n, min_net, fdr, alpha, variant, top_k, tuple(thresholds))
    _check_models(models)
    if table.empty:
        raise UnusableInput("the per-question table is empty: no runs were found")
    ordered = family_order_models(models)
    try:
        outcomes = build_outcomes(table, list(ordered["model"]))
    except ValueError as error:
        raise UnusableInput(str(error)) from error
    if variant not in outcomes.variants:
        raise UnusableInput(f"no rows of variant {variant!r} (variants present: {', '.join(outcomes.variants)})")
    present = ordered[ordered["model"].isin(outcomes.models_with_answers(variant))].reset_index(drop=True)
    comparisons = compare_pairs(outcomes, family_pairs(present), variant=variant, min_n=min_n, min_net=min_net)
    if comparisons.empty:
        raise UnusableInput(
            "no comparable pairs: no two models of one family answered a common question with known gold "
            f"(models with answers: {', '.join(present['model']) or 'none'})"
        )
    unknown = set(figure_subtasks or ()) - set(outcomes.groups.itertuples(index=False, name=None))
    if unknown:
        raise UnusableInput(f"figure subtasks not in the table: {sorted(unknown)}")

    comparisons = add_significance(comparisons, fdr)
    cases = case_tables.cases_of(comparisons)
    families = family_order(present)
    multi_split = multi_split_benchmarks(comparisons)
    subtask_accuracy = accuracy.accuracy_by_subtask(outcomes, variant)
    split_accuracy = accuracy.accuracy_by_split(subtask_accuracy)
    replication = case_tables.replication(cases)
    restrictions = case_tables.restriction_summary(comparisons, min_net)
    shapes = case_tables.curve_shapes(cases, subtask_accuracy, present)
    control_frames, control_tables, control_summary = _variant_controls(outcomes, cases, families, multi_split, params)
    tables = [
        *_case_tables(comparisons, cases, restrictions, shapes, families, multi_split, params),
        *accuracy.family_accuracy_tables(split_accuracy, present),
        *accuracy.family_subtask_accuracy_tables(subtask_accuracy, present),
        *control_tables,
    ]
    summary = {
        "parameters": asdict(params),
        "models": len(present),
        "families": families,
        "questions": int(len(outcomes.question_group)),
        "rows": int(len(table)),
        "variants": list(outcomes.variants),
        **_case_summary(comparisons, cases, replication, restrictions, shapes, params),
        **control_summary,
    }
    figure1, figure2 = _figure_subtasks(replication, figure_subtasks, FIGURE1_PANELS, FIGURE2_SUBTASKS)
    return Analysis(
        parameters=params,
        models=present,
        comparisons=comparisons,
        cases=cases,
        subtask_accuracy=subtask_accuracy,
        split_accuracy=split_accuracy,
        tables={t.name: t for t in tables},
        summary=summary,
        figure1_subtasks=figure1,
        figure2_subtasks=figure2,
        multi_split=multi_split,
        controls=control_frames,
    )


def _case_tables(
    comparisons: pd.DataFrame,
    cases: pd.DataFrame,
    restrictions: pd.DataFrame,
    shapes: pd.DataFrame,
    families: list[str],
    multi_split: set[str],
    params: Parameters,
) -> list[Table]:
    """The paper's case tables, in the paper's numbering order."""
    restrict = case_tables.restrict
    by_family = case_tables.cases_by_family_table
    return [
        by_family(
            comparisons, families, name="table02_cases_by_family",
            title=f"Table 2: pairwise inverse-scaling cases / eligible comparisons (n ≥ {params.min_n} shared "
            f"questions) by family and dataset; a case has Net ≥ {params.min_net}.",
        ),
        case_tables.top_cases_table(cases, multi_split, params.top_k),
        by_family(
            restrict(comparisons, "dense_only"), families, name="table04_dense_only", show_eligible=False,
            title="Table 4: dense-only pairwise inverse-scaling cases by family and dataset (MoE models excluded).",
        ),
        case_tables.replication_table(
            cases[cases["dense"]], multi_split, name="table09_dense_replication",
            title="Table 9: dense-only cross-family replication (subtask–dataset pairs with cases in ≥3 families).",
        ),
        case_tables.all_cases_table(cases, families, multi_split),
        case_tables.significance_table(cases, params.min_net, params.alpha, params.fdr),
        case_tables.replication_table(
            cases, multi_split, name="table36_replicated",
            title="Table 36: subtask–dataset pairs with pairwise inverse scaling in at least three families.",
        ),
        case_tables.replication_table(
            cases, multi_split, name="table37_two_families", exactly=2,
            title="Table 37: subtask–dataset pairs with pairwise inverse scaling in exactly two families.",
        ),
        case_tables.threshold_table(comparisons, params.thresholds),
        by_family(
            restrict(comparisons, "twofold_total"), families, name="table40_twofold_total",
            title="Table 40: cases / eligible comparisons, pairs whose larger model has ≥2× the total parameters.",
        ),
        by_family(
            restrict(comparisons, "twofold_active"), families, name="table41_twofold_active",
            title="Table 41: cases / eligible comparisons, pairs whose larger model has ≥2× the active parameters.",
        ),
        case_tables.restriction_table(restrictions, params.min_net),
        case_tables.encoder_tier_table(cases, families),
        by_family(
            restrict(comparisons, "adjacent"), families, name="adjacent_cases_by_family",
            title="Adjacent-size pairs only: cases / eligible comparisons.",
        ),
        case_tables.extremes_table(comparisons, params.min_net),
        case_tables.curve_shape_table(shapes, families),
    ]  # fmt: skip


def _share(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def _case_summary(
    comparisons: pd.DataFrame,
    cases: pd.DataFrame,
    replication: pd.DataFrame,
    restrictions: pd.DataFrame,
    shapes: pd.DataFrame,
    params: Parameters,
) -> dict:
    counted = comparisons[comparisons["eligible"]]
    by_restriction = restrictions.set_index("restriction")
    replicated_rows = replication[replication["n_families"] >= case_tables.REPLICATION_FAMILIES]
    # As in the paper, a two-model family's only pair is not a "largest size gap" comparison.
    extremes = case_tables.restrict(counted, "extreme")
    extremes = extremes[extremes["family_models"] > 2]
    nonmonotonic = int((shapes["shape"] == "non-monotonic").sum())
    summary = {
        "eligible_comparisons": len(counted),
        "cases": len(cases),
        "case_rate_percent": _share(len(cases), len(counted)),
        "significant_uncorrected": int((cases["p_value"] < params.alpha).sum()),
        "significant_bh_cases": int(cases["bh_cases"].sum()),
        "significant_bh_all": int(cases["bh_all"].sum()),
        "subtask_dataset_pairs": len(replication),
        "family_subtask_pairs": len(shapes),
        "replicated_subtasks": _replicated_list(replicated_rows),
        "two_family_subtasks": int((replication["n_families"] == 2).sum()),
        "larger_ahead_share_percent": _share(int((counted["net"] < 0).sum()), len(counted)),
        "larger_ahead_by_min_net": int(by_restriction.loc["all", "larger_ahead"]),
        "larger_ahead_significant_bh": int(by_restriction.loc["all", "larger_ahead_bh"]),
        "nonmonotonic_family_subtasks": nonmonotonic,
        "nonmonotonic_share_percent": _share(nonmonotonic, len(shapes)),
        "smallest_vs_largest_comparisons": len(extremes),
        "smallest_vs_largest_cases": int(extremes["case"].sum()),
    }
    for restriction in ("dense_only", "twofold_total", "twofold_active", "adjacent", "same_encoder_tier"):
        row = by_restriction.loc[restriction]
        for column in ("cases", "comparisons", "subtask_pairs", "replicated"):
            summary[f"{restriction}_{column}"] = int(row[column])
    return summary


def _variant_controls(
    outcomes: Outcomes, cases: pd.DataFrame, families: list[str], multi_split: set[str], params: Parameters
) -> tuple[dict[str, pd.DataFrame], list[Table], dict]:
    """CoT and option-order controls for the variants the logs hold besides the analysed one."""
    variant, min_net = params.variant, params.min_net
    frames: dict[str, pd.DataFrame] = {}
    tables: list[Table] = []
    summary: dict = {}
    if cases.empty:
        return frames, tables, summary
    for other in (v for v in outcomes.variants if v != variant):
        flips = controls.control_flips(outcomes, cases, base_variant=variant, variant=other)
        if len(flips):
            frames[other] = flips
    if COT_VARIANT in frames:
        cot = controls.cot_outcomes(frames[COT_VARIANT], cases, min_net=min_net, fdr=params.fdr)
        frames[COT_VARIANT] = cot
        tables += controls.cot_tables(cot, families, multi_split, min_net)
        summary["cot"] = _cot_summary(cot)
    orderings = {v: f for v, f in frames.items() if v != COT_VARIANT}
    if orderings:
        tables.append(controls.option_order_table(cases, orderings, variant, multi_split))
        summary["option_order"] = _order_summary(orderings)
    return frames, tables, summary


def _cot_summary(cot: pd.DataFrame) -> dict:
    lost = int(cot["base_flip_inv"].sum())
    return {
        "cases_covered": len(cot),
        "persist": int((cot["outcome"] == "persist").sum()),
        "dissolve": int((cot["outcome"] == "dissolve").sum()),
        "reverse": int((cot["outcome"] == "reverse").sum()),
        "median_net_direct": float(cot["base_net"].median()),
        "median_net_cot": float(cot["net"].median()),
        "larger_lost_direct": lost,
        "larger_recovered_cot": int(cot["recovered"].sum()),
        "recovery_percent": _share(int(cot["recovered"].sum()), lost),
        "smaller_accuracy_decreased": int((cot["acc_small"] < cot["base_acc_small"]).sum()),
        "significant_bh_cot": int(cot["bh_cot"].sum()),
    }


def _order_summary(orderings: dict[str, pd.DataFrame]) -> dict:
    runs = pd.concat(orderings.values())
    return {
        "variants": list(orderings),
        "cases_covered": int(len(runs[case_tables.CASE_KEY].drop_duplicates())),
        "runs": len(runs),
        "runs_with_positive_net": int((runs["net"] > 0).sum()),
    }


def _json_default(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_outputs(
    analysis: Analysis,
    out_dir: str | Path,
    quality: dict[str, pd.DataFrame] | None = None,
    extra_sections: list[tuple[str, list[Table]]] = (),
) -> dict[str, Path]:
    """Write every output file under `out_dir`; return the main paths by name. `extra_sections`
    ((heading, tables), e.g. CAIT's) are written with the other tables and added to the report."""
    from postprocess import figures, report  # matplotlib is only needed when writing

    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = {"cases": out / "cases.csv", "comparisons": out / "comparisons.parquet", "summary": out / "summary.json"}
    analysis.cases[CASE_COLUMNS].to_csv(paths["cases"], index=False)
    eligible = analysis.comparisons[analysis.comparisons["eligible"]]
    eligible[CASE_COLUMNS].reset_index(drop=True).to_parquet(paths["comparisons"], index=False)
    paths["summary"].write_text(json.dumps(analysis.summary, indent=2, default=_json_default) + "\n", encoding="utf-8")
    extra_tables = [t for _, tables in extra_sections for t in tables]
    for table in [*analysis.tables.values(), *extra_tables, *report.quality_tables(quality or {})]:
        write_table(table, out / "tables")
    paths["tables"] = out / "tables"
    paths["figure1"] = figures.scaling_curves(
        analysis.subtask_accuracy,
        analysis.models,
        analysis.figure1_subtasks,
        out / "figures" / "figure1_scaling_curves.png",
        analysis.multi_split,
    )
    paths["figure2"] = figures.cross_family_bars(
        analysis.cases,
        analysis.figure2_subtasks,
        analysis.families,
        out / "figures" / "figure2_cross_family.png",
        analysis.multi_split,
    )
    paths.update(report.write_report(analysis, out, [paths["figure1"], paths["figure2"]], quality, extra_sections))
    return paths


def write_sections_only(
    out_dir: str | Path, extra_sections: list[tuple[str, list[Table]]], quality: dict[str, pd.DataFrame] | None = None
) -> dict[str, Path]:
    """The report of logs without benchmark rows for the inverse-scaling analysis (CAIT runs only)."""
    from postprocess import report

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for table in [t for _, tables in extra_sections for t in tables] + report.quality_tables(quality or {}):
        write_table(table, out / "tables")
    return {"tables": out / "tables", **report.write_report(None, out, [], quality, extra_sections)}
