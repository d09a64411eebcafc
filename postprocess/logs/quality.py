"""Data-quality summary of an ingestion, as frames for the report.

- overview: what was found and read (results files, runs ingested and skipped, samples files, orphan
  samples files, lines read, rows kept, lines skipped, blank lines, models, families).
- problems: per problem kind (see postprocess.logs.ingest): its action (skipped / kept / reported), the
  number of occurrences, of files, and the first occurrence as "file:line".
- unparsed: per model x benchmark x variant: rows, unparsed answers (match == "none") and their share
  in percent.
- missing_runs: model x (benchmark, split) pairs without rows although another model has some: the
  expected set is the union over all ingested models (variants pooled). With a registry, models of an
  ingested family that have no rows at all are listed as missing every expected pair. Each row counts
  how many other models of the same family, and how many models overall, have that pair.
- partial_runs: model x (benchmark, split, variant) with fewer distinct questions than the model with
  the most questions there (a killed or limited run); n_missing is the difference.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from model_configs import Registry
from postprocess.logs.ingest import PROBLEM_ACTIONS, IngestResult

OVERVIEW_ITEMS = {
    "results_files": "results files found",
    "runs_ingested": "runs ingested",
    "runs_skipped": "runs skipped (model unknown or results.json unreadable)",
    "samples_files": "samples files read",
    "orphan_samples_files": "orphan samples files (no results.json; not read)",
    "lines_read": "lines read",
    "rows": "rows kept",
    "lines_skipped": "lines skipped (malformed, truncated, invalid, duplicate)",
    "blank_lines": "blank lines",
}


@dataclass
class QualitySummary:
    overview: pd.DataFrame
    problems: pd.DataFrame
    unparsed: pd.DataFrame
    missing_runs: pd.DataFrame
    partial_runs: pd.DataFrame


def overview_frame(result: IngestResult) -> pd.DataFrame:
    """Columns: item, value."""
    rows = [(label, int(result.counts.get(key, 0))) for key, label in OVERVIEW_ITEMS.items()]
    rows += [("models", int(result.table["model"].nunique())), ("families", int(result.table["family"].nunique()))]
    return pd.DataFrame(rows, columns=["item", "value"])


def problems_frame(result: IngestResult) -> pd.DataFrame:
    """Columns: kind, action, n, n_files, first (file:line). Every known kind, zero counts included."""
    problems = result.problems
    rows = []
    for kind, action in PROBLEM_ACTIONS.items():
        of_kind = problems[problems["kind"] == kind]
        first = None
        if len(of_kind):
            line = of_kind["line"].iloc[0]
            first = of_kind["file"].iloc[0] + ("" if pd.isna(line) else f":{line}")
        rows.append((kind, action, len(of_kind), of_kind["file"].nunique(), first))
    return pd.DataFrame(rows, columns=["kind", "action", "n", "n_files", "first"])


def unparsed_frame(table: pd.DataFrame) -> pd.DataFrame:
    """Columns: model, family, benchmark, variant, n_rows, n_unparsed, unparsed_pct."""
    grouped = (table.assign(unparsed=table["match"] == "none")
               .groupby(["model", "family", "benchmark", "variant"], observed=True, sort=True)["unparsed"])
    frame = grouped.agg(n_rows="size", n_unparsed="sum").reset_index()
    frame["n_unparsed"] = frame["n_unparsed"].astype("int64")
    frame["unparsed_pct"] = 100.0 * frame["n_unparsed"] / frame["n_rows"]
    return frame


def missing_runs_frame(table: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Columns: model, family, benchmark, split, n_family_models_with, n_models_with."""
    columns = ["model", "family", "benchmark", "split", "n_family_models_with", "n_models_with"]
    present = (table[["model", "family", "benchmark", "split"]].astype(object).drop_duplicates()
               .reset_index(drop=True))
    models = present[["model", "family"]].drop_duplicates()
    if registry is not None:
        families = set(models["family"])
        silent = [(spec.key, spec.family) for spec in registry.models
                  if spec.family in families and spec.key not in set(models["model"])]
        models = pd.concat([models, pd.DataFrame(silent, columns=["model", "family"])], ignore_index=True)
    expected = present[["benchmark", "split"]].drop_duplicates()
    grid = models.merge(expected, how="cross")
    missing = grid.merge(present, how="left", indicator=True).query("_merge == 'left_only'").drop(columns="_merge")
    if missing.empty:
        return pd.DataFrame(columns=columns)
    overall = present.groupby(["benchmark", "split"]).size().rename("n_models_with")
    in_family = present.groupby(["family", "benchmark", "split"]).size().rename("n_family_models_with")
    missing = (missing.join(in_family, on=["family", "benchmark", "split"])
               .join(overall, on=["benchmark", "split"]))
    missing["n_family_models_with"] = missing["n_family_models_with"].fillna(0).astype("int64")
    models_in_order = (table["model"].cat.categories if isinstance(table["model"].dtype, pd.CategoricalDtype)
                       else pd.unique(table["model"]))
    model_rank = {key: i for i, key in enumerate(models_in_order)}
    missing["_order"] = missing["model"].map(model_rank).fillna(len(model_rank))
    return missing.sort_values(["_order", "model", "benchmark", "split"])[columns].reset_index(drop=True)


def partial_runs_frame(table: pd.DataFrame) -> pd.DataFrame:
    """Columns: model, family, benchmark, split, variant, n_questions, max_questions, n_missing."""
    keys = ["benchmark", "split", "variant"]
    counts = (table.groupby(["model", "family", *keys], observed=True)["question_id"].nunique()
              .rename("n_questions").reset_index())
    counts["max_questions"] = counts.groupby(keys, observed=True)["n_questions"].transform("max")
    counts["n_missing"] = counts["max_questions"] - counts["n_questions"]
    return counts[counts["n_missing"] > 0].reset_index(drop=True)


def quality_summary(result: IngestResult, registry: Registry | None = None) -> QualitySummary:
    return QualitySummary(
        overview=overview_frame(result),
        problems=problems_frame(result),
        unparsed=unparsed_frame(result.table),
        missing_runs=missing_runs_frame(result.table, registry),
        partial_runs=partial_runs_frame(result.table),
    )


__all__ = ["OVERVIEW_ITEMS", "QualitySummary", "missing_runs_frame", "overview_frame", "partial_runs_frame",
           "problems_frame", "quality_summary", "unparsed_frame"]
