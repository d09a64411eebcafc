"""What the answer-adjudication judge changes: the analysis run twice, on the table with the judge's
answers (match "judge", during the run or merged from the adjudications beside the logs) and on the same
table as the extraction rules alone score it (postprocess.logs.adjudications.rules_only).

`adjudication_effect(table, with_judge, without_judge)`, over the analysed variant's answers with a
known gold:
  by_model  per model x (benchmark, split): answers; unparsed by the rules (match "none" or "judge");
            settled by the judge (match "judge"); left unparsed by it: the judge found no answer
            (judge_status no_answer), its verdict did not parse (unparsed), its call failed (failed); not
            asked (no adjudication); accuracy (%) without and with the judge and the change in points
  cases     per (benchmark, split): cases without and with the judge, gained and lost (by case key)
  summary   the totals of both, for the report's sentence
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from postprocess.inverse_scaling.analysis import Analysis
from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.order import sort_frame

DATASET = ["benchmark", "split"]
LEFT_UNPARSED = ("no_answer", "unparsed", "failed")  # record.JUDGE_STATUSES other than "settled"
BY_MODEL_COLUMNS = ["model", *DATASET, "answers", "unparsed_by_rules", "settled", *LEFT_UNPARSED, "not_asked",
                    "accuracy_without", "accuracy_with", "change"]
CASES_COLUMNS = [*DATASET, "cases_without", "cases_with", "gained", "lost"]


@dataclass
class AdjudicationEffect:
    by_model: pd.DataFrame  # BY_MODEL_COLUMNS
    cases: pd.DataFrame  # CASES_COLUMNS
    summary: dict
    datasets: pd.DataFrame  # every (benchmark, split) of the table, known gold or not (for the labels)


def _judge_status(extra: object) -> str | None:
    return json.loads(extra).get("judge_status") if isinstance(extra, str) else None


def _counts(table: pd.DataFrame, variant: str) -> pd.DataFrame:
    rows = table.loc[(table["variant"] == variant) & table["gold"].notna(), ["model", *DATASET, "match", "extra"]]
    rows = rows.astype({"model": object, "benchmark": object, "split": object, "match": object})
    unparsed = rows["match"] == "none"
    status = pd.Series(None, index=rows.index, dtype=object)
    status[unparsed] = [_judge_status(extra) for extra in rows.loc[unparsed, "extra"]]
    counts = rows.assign(answers=1, unparsed_by_rules=rows["match"].isin(["none", "judge"]),
                         settled=rows["match"] == "judge",
                         **{name: status == name for name in LEFT_UNPARSED})
    counts = counts.groupby(["model", *DATASET], sort=False)[["answers", "unparsed_by_rules", "settled",
                                                              *LEFT_UNPARSED]].sum().reset_index()
    counts["not_asked"] = counts["unparsed_by_rules"] - counts["settled"] - counts[list(LEFT_UNPARSED)].sum(axis=1)
    return counts


def _case_keys(cases: pd.DataFrame) -> set[tuple]:
    return set(cases[CASE_KEY].astype(str).itertuples(index=False, name=None))


def _per_dataset(keys: set[tuple], datasets: pd.DataFrame) -> list[int]:
    """How many of the case keys fall on each of the datasets' rows."""
    at = (CASE_KEY.index("benchmark"), CASE_KEY.index("split"))
    counts: dict[tuple, int] = {}
    for key in keys:
        counts[key[at[0]], key[at[1]]] = counts.get((key[at[0]], key[at[1]]), 0) + 1
    return [counts.get((b, s), 0) for b, s in zip(datasets["benchmark"], datasets["split"])]


def adjudication_effect(table: pd.DataFrame, with_judge: Analysis, without_judge: Analysis) -> AdjudicationEffect:
    """The numbers of the module docstring; `table` is the table `with_judge` was run on."""
    variant = with_judge.parameters.variant
    accuracy = with_judge.split_accuracy[["model", *DATASET, "accuracy"]].merge(
        without_judge.split_accuracy[["model", *DATASET, "accuracy"]], on=["model", *DATASET],
        suffixes=("_with", "_without"))
    accuracy = accuracy.astype({"model": str, "benchmark": str, "split": str})
    by_model = _counts(table, variant).merge(accuracy, on=["model", *DATASET], how="left")
    by_model["change"] = by_model["accuracy_with"] - by_model["accuracy_without"]
    rank = {model: i for i, model in enumerate(with_judge.models["model"])}
    by_model = sort_frame(by_model, DATASET, with_judge.families)
    by_model = by_model.iloc[by_model["model"].map(rank).argsort(kind="stable")][BY_MODEL_COLUMNS]
    by_model = by_model.reset_index(drop=True)

    with_cases, without_cases = _case_keys(with_judge.cases), _case_keys(without_judge.cases)
    datasets = sort_frame(by_model[DATASET].drop_duplicates(), DATASET, with_judge.families)
    cases = datasets.assign(**{name: _per_dataset(keys, datasets) for name, keys in (
        ("cases_without", without_cases), ("cases_with", with_cases), ("gained", with_cases - without_cases),
        ("lost", without_cases - with_cases))})[CASES_COLUMNS].reset_index(drop=True)

    totals = by_model[["answers", "unparsed_by_rules", "settled", *LEFT_UNPARSED, "not_asked"]].sum()
    per_benchmark = by_model.groupby("benchmark", sort=False)[["answers", "unparsed_by_rules"]].sum()
    rates = (per_benchmark["unparsed_by_rules"] / per_benchmark["answers"]).sort_values(ascending=False, kind="stable")
    changed = by_model["change"].dropna()
    summary = {
        "variant": variant,
        **{name: int(value) for name, value in totals.items()},
        "most_unparsed_benchmark": rates.index[0] if len(rates) and rates.iloc[0] > 0 else None,
        "most_unparsed_percent": 100.0 * float(rates.iloc[0]) if len(rates) else 0.0,
        "change_min": float(changed.min()) if len(changed) else 0.0,
        "change_max": float(changed.max()) if len(changed) else 0.0,
        "cases_without": len(without_cases), "cases_with": len(with_cases),
        "gained": len(with_cases - without_cases), "lost": len(without_cases - with_cases),
    }
    datasets = table[DATASET].astype(object).drop_duplicates().reset_index(drop=True)
    return AdjudicationEffect(by_model, cases, summary, datasets)
