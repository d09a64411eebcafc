"""Data-quality summary of an ingestion, as frames for the report.

- overview: what was found and read (results files, runs ingested and skipped, samples files, orphan
  samples files, lines read, rows kept, lines skipped, blank lines, models, families).
- problems: per problem kind (see postprocess.logs.ingest): its action (skipped / kept / reported), the
  number of occurrences, of files, and the first occurrence as "file:line".
- unparsed: per model x benchmark x variant: rows, unparsed answers (match == "none") and their share
  in percent.
- tiers: per model x benchmark: answers per extraction tier (strict, reading, judge, external: another tool's letter; unknown: a
  prediction whose record has no tier and whose rule tells none), letters withheld as inconclusive
  (a candidate, no prediction), and rows without a prediction.
- missing_runs: model x (benchmark, split) pairs without rows although another model has some: the
  expected set is the union over all ingested models (variants pooled). With a registry, models of an
  ingested family that have no rows at all are listed as missing every expected pair. Each row counts
  how many other models of the same family, and how many models overall, have that pair.
- partial_runs: model x (benchmark, split, variant) with fewer distinct questions than the model with
  the most questions there (a killed or limited run); n_missing is the difference.
- runs_not_read: every results.json skipped (unknown model, unreadable or odd results.json) and every
  samples file without its results.json, with the field at fault and the reason.
- duplicate_runs: ingestion's pairs of runs of one model holding the same questions (which was kept and
  why, rows whose answers differ, generation settings that differ).
- settings_differences (needs the compared pairs, so it is not part of quality_summary): for each
  compared (smaller, larger) pair and generation setting (postprocess.logs.runs) whose values differ
  between the runs that supplied the two models' rows, both values and the datasets concerned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from model_configs import Registry
from postprocess.logs.ingest import PROBLEM_ACTIONS, RUN_PROBLEMS, IngestResult
from postprocess.logs.runs import results_file_of

OVERVIEW_ITEMS = {
    "results_files": "results files found",
    "runs_ingested": "runs ingested",
    "runs_skipped": "runs skipped (model unknown, results.json unreadable or of an odd shape)",
    "samples_files": "samples files read",
    "orphan_samples_files": "orphan samples files (no results.json; not read)",
    "lines_read": "lines read",
    "rows": "rows kept",
    "lines_skipped": "lines skipped (malformed, truncated, invalid, duplicate)",
    "blank_lines": "blank lines",
    "duplicate_run_pairs": "pairs of runs holding the same questions (duplicate runs)",
    "import_files": "files imported (per-question tables, VLMEvalKit predictions)",
    "imported_rows": "rows imported",
    "unplaceable_row": "imported rows that could not be placed (skipped)",
}


@dataclass
class QualitySummary:
    overview: pd.DataFrame
    problems: pd.DataFrame
    unparsed: pd.DataFrame
    missing_runs: pd.DataFrame
    partial_runs: pd.DataFrame
    runs_not_read: pd.DataFrame
    duplicate_runs: pd.DataFrame
    tiers: pd.DataFrame


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


DENSE_GROUPS = 1 << 22  # _counted counts in one array over every combination of the keys' categories up to this


def _counted(table: pd.DataFrame, keys: list[str], tallies: dict[str, pd.Series]) -> pd.DataFrame | None:
    """Per group of `keys` with rows, in the order of groupby(keys, observed=True, sort=True) (the categories'
    order): the keys (categorical, as the table's), n_rows, and each tally's true values; counted with np.bincount
    over every combination of the keys' categories, not by a pandas grouping of the whole table. None when a key is
    not categorical, has a missing value, or the combinations exceed DENSE_GROUPS (pandas then groups)."""
    columns = [table[key] for key in keys]
    if not all(isinstance(column.dtype, pd.CategoricalDtype) for column in columns):
        return None
    sizes = [len(column.cat.categories) for column in columns]
    codes = [column.cat.codes.to_numpy().astype(np.intp) for column in columns]
    if not 0 < int(np.prod(sizes, dtype=np.float64)) <= DENSE_GROUPS or any((c < 0).any() for c in codes):
        return None
    combined = np.ravel_multi_index(codes, sizes)
    total = int(np.prod(sizes))
    rows = np.bincount(combined, minlength=total)
    present = np.flatnonzero(rows)
    frame = pd.DataFrame({key: pd.Categorical.from_codes(at, dtype=column.dtype)
                          for key, column, at in zip(keys, columns, np.unravel_index(present, sizes))})
    frame["n_rows"] = rows[present].astype(np.int64)
    for name, values in tallies.items():
        counted = np.bincount(combined, weights=values.to_numpy(dtype=bool), minlength=total)
        frame[name] = counted[present].astype(np.int64)
    return frame


def unparsed_frame(table: pd.DataFrame) -> pd.DataFrame:
    """Columns: model, family, benchmark, variant, n_rows, n_unparsed, unparsed_pct."""
    keys = ["model", "family", "benchmark", "variant"]
    frame = _counted(table, keys, {"n_unparsed": table["match"] == "none"})
    if frame is None:
        grouped = (table.assign(unparsed=table["match"] == "none")
                   .groupby(keys, observed=True, sort=True)["unparsed"])
        frame = grouped.agg(n_rows="size", n_unparsed="sum").reset_index()
        frame["n_unparsed"] = frame["n_unparsed"].astype("int64")
    frame["unparsed_pct"] = 100.0 * frame["n_unparsed"] / frame["n_rows"]
    return frame


TIER_COLUMNS = ["model", "family", "benchmark", "n_rows", "strict", "reading", "judge", "external", "unknown_tier",
                "withheld", "no_prediction"]


def tiers_frame(table: pd.DataFrame) -> pd.DataFrame:
    """Columns: TIER_COLUMNS, one row per model x benchmark with rows."""
    predicted = table["prediction"].notna()
    tallies = dict(
        strict=table["extraction_tier"] == "strict", reading=table["extraction_tier"] == "reading",
        judge=table["extraction_tier"] == "judge", external=table["extraction_tier"] == "external",
        unknown_tier=predicted & table["extraction_tier"].isna(),
        withheld=~predicted & table["candidate"].notna(), no_prediction=~predicted,
    )
    frame = _counted(table, ["model", "family", "benchmark"], tallies)
    if frame is not None:
        return frame[TIER_COLUMNS]
    counts = table.assign(**tallies).groupby(["model", "family", "benchmark"], observed=True, sort=True)
    tallies = ["strict", "reading", "judge", "external", "unknown_tier", "withheld", "no_prediction"]
    frame = counts[tallies].sum().astype("int64")
    frame.insert(0, "n_rows", counts.size())
    return frame.reset_index()[TIER_COLUMNS]


def missing_runs_frame(table: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Columns: model, family, benchmark, split, n_family_models_with, n_models_with."""
    columns = ["model", "family", "benchmark", "split", "n_family_models_with", "n_models_with"]
    # the distinct combinations by a grouping on the (categorical) columns, then as text: not every row as text
    present = (table.groupby(["model", "family", "benchmark", "split"], observed=True, sort=False, dropna=False)
               .size().index.to_frame(index=False).astype(object))
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


def runs_not_read_frame(result: IngestResult) -> pd.DataFrame:
    """Columns: file, kind, field, reason. Skipped results files and orphan samples files."""
    problems = result.problems
    skipped = problems[problems["kind"].isin(RUN_PROBLEMS)]
    return (skipped[["file", "kind", "field", "detail"]].rename(columns={"detail": "reason"})
            .astype({"kind": str}).reset_index(drop=True))


SETTINGS_DIFFERENCE_COLUMNS = ["family", "small", "large", "setting", "small_value", "large_value", "datasets",
                               "cases"]


def _values_per_dataset(table: pd.DataFrame, settings: pd.DataFrame) -> pd.DataFrame:
    """Per model x benchmark x split x variant and every setting any run has: its value there ("(absent)"
    for a run without it; runs that disagree: their values joined with " | ")."""
    keys = ["model", "benchmark", "split", "variant"]
    sources = table.groupby([*keys, "source_file", "task"], observed=True).size().reset_index()
    sources = sources.astype({column: str for column in [*keys, "source_file", "task"]})
    sources["results_file"] = [str(results_file_of(path)) for path in sources["source_file"]]
    wide = settings.pivot_table(index=["results_file", "task"], columns="setting", values="value",
                                aggfunc="first").fillna("(absent)")
    long = wide.stack().rename("value").reset_index()
    merged = sources[[*keys, "results_file", "task"]].merge(long, on=["results_file", "task"])
    return (merged.groupby([*keys, "setting"], sort=False)["value"]
            .agg(lambda values: " | ".join(sorted(set(values)))).reset_index())


def settings_differences(table: pd.DataFrame, settings: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
    """Columns SETTINGS_DIFFERENCE_COLUMNS: one row per compared pair x setting x (small value, large value);
    `datasets` lists the benchmark/split/variant where the two differ so, `cases` counts the pair's cases
    there. `comparisons`: family, benchmark, split, small, large and case of the compared pairs x subtasks."""
    if table.empty or settings.empty or comparisons.empty:
        return pd.DataFrame(columns=SETTINGS_DIFFERENCE_COLUMNS)
    values = _values_per_dataset(table, settings)
    pairs = comparisons.astype({c: str for c in ("family", "benchmark", "split", "small", "large")})
    pairs = pairs.groupby(["family", "small", "large", "benchmark", "split"], sort=False)["case"].sum().reset_index()
    both = (pairs.merge(values.rename(columns={"model": "small", "value": "small_value"}), on=["small", "benchmark",
                                                                                              "split"])
            .merge(values.rename(columns={"model": "large", "value": "large_value"}),
                   on=["large", "benchmark", "split", "variant", "setting"]))
    differ = both[both["small_value"] != both["large_value"]].copy()
    if differ.empty:
        return pd.DataFrame(columns=SETTINGS_DIFFERENCE_COLUMNS)
    differ["dataset"] = differ["benchmark"] + " " + differ["split"] + " " + differ["variant"]
    keys = ["family", "small", "large", "setting", "small_value", "large_value"]
    datasets = differ.groupby(keys, sort=False)["dataset"].agg(lambda names: ", ".join(sorted(set(names))))
    cases = differ.drop_duplicates([*keys, "benchmark", "split"]).groupby(keys, sort=False)["case"].sum()
    frame = pd.concat([datasets.rename("datasets"), cases.astype("int64").rename("cases")], axis=1).reset_index()
    return frame[SETTINGS_DIFFERENCE_COLUMNS]


def quality_summary(result: IngestResult, registry: Registry | None = None) -> QualitySummary:
    return QualitySummary(
        overview=overview_frame(result),
        problems=problems_frame(result),
        unparsed=unparsed_frame(result.table),
        missing_runs=missing_runs_frame(result.table, registry),
        partial_runs=partial_runs_frame(result.table),
        runs_not_read=runs_not_read_frame(result),
        duplicate_runs=result.duplicate_runs,
        tiers=tiers_frame(result.table),
    )


__all__ = ["OVERVIEW_ITEMS", "SETTINGS_DIFFERENCE_COLUMNS", "QualitySummary", "missing_runs_frame",
           "overview_frame", "partial_runs_frame", "problems_frame", "quality_summary", "runs_not_read_frame",
           "settings_differences", "unparsed_frame"]
