"""The report's answer-adjudication section: what the judge settled and how the numbers change with it
(postprocess/inverse_scaling/adjudication.py), and what became of the adjudications read beside the logs
(postprocess/logs/adjudications.py)."""

from __future__ import annotations

import pandas as pd

from postprocess.inverse_scaling.adjudication import AdjudicationEffect
from postprocess.render.labels import dataset_labels, multi_split_benchmarks
from postprocess.render.tables import Table


def _share(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "–"


def headline(effect: AdjudicationEffect) -> str:
    """One sentence: how many answers the judge settled and what that changes."""
    s = effect.summary
    most = (f"; most on {s['most_unparsed_benchmark']}, {s['most_unparsed_percent']:.1f}% of its answers"
            if s["most_unparsed_benchmark"] else "")
    return (f"The judge settled {s['settled']:,} of the {s['unparsed_by_rules']:,} answers the extraction rules left "
            f"unparsed ({_share(s['unparsed_by_rules'], s['answers'])} of {s['answers']:,} answers with a known gold "
            f"under `{s['variant']}`{most}); accuracy changes by {s['change_min']:+.1f} to {s['change_max']:+.1f} "
            f"points per model and dataset, and the analysis finds {s['cases_with']} cases with the judge against "
            f"{s['cases_without']} without ({s['gained']} gained, {s['lost']} lost).")


def adjudication_tables(effect: AdjudicationEffect, outcomes: dict[str, int] | None) -> list[Table]:
    """The section's tables; `outcomes`: the merge's count per outcome (None when not merged)."""
    multi = multi_split_benchmarks(effect.datasets)
    s = effect.summary
    overview = pd.DataFrame([
        ("answers with a known gold", s["answers"]),
        ("unparsed by the rules", s["unparsed_by_rules"]),
        ("settled by the judge", s["settled"]),
        ("judge: the response commits to no answer", s["no_answer"]),
        ("judge: verdict unparsed after the retries", s["unparsed"]),
        ("judge: call failed (during the run)", s["failed"]),
        ("not asked", s["not_asked"]),
        ("cases without the judge", s["cases_without"]),
        ("cases with the judge", s["cases_with"]),
        ("cases gained / lost with the judge", f"{s['gained']} / {s['lost']}"),
    ], columns=["Item", "Value"])
    tables = [Table("adjudication_overview", f"Answer adjudication: the judge's effect (variant {s['variant']})",
                    overview, note=headline(effect))]

    by_model = effect.by_model[effect.by_model["unparsed_by_rules"] > 0]
    frame = pd.DataFrame({
        "Model": by_model["model"].astype(str), "Dataset": dataset_labels(by_model, multi),
        "Answers": by_model["answers"], "Unparsed by rules": by_model["unparsed_by_rules"],
        "Settled": by_model["settled"], "No answer": by_model["no_answer"],
        "Verdict unparsed": by_model["unparsed"], "Failed": by_model["failed"], "Not asked": by_model["not_asked"],
        "Acc. without (%)": by_model["accuracy_without"].round(1), "Acc. with (%)": by_model["accuracy_with"].round(1),
        "Change (points)": by_model["change"].round(1)})
    tables.append(Table("adjudication_by_model", "Answer adjudication per model and dataset (models with unparsed "
                                                 "answers)", frame.reset_index(drop=True),
                        note="Accuracy over the answers with a known gold; unparsed answers count as wrong."))

    cases = effect.cases
    tables.append(Table("adjudication_cases", "Inverse-scaling cases without and with the judge, per dataset",
                        pd.DataFrame({"Dataset": dataset_labels(cases, multi),
                                      "Cases without": cases["cases_without"], "Cases with": cases["cases_with"],
                                      "Gained": cases["gained"], "Lost": cases["lost"]}).reset_index(drop=True)))
    if outcomes is not None and sum(outcomes.values()):
        tables.append(Table("adjudication_files", "Adjudications read beside the logs, by what became of them",
                            pd.DataFrame(list(outcomes.items()), columns=["Outcome", "Adjudications"]),
                            note="settled: applied; no_answer / unparsed: the answer stays unparsed; the others "
                                 "are ignored (postprocess/logs/adjudications.py)."))
    return tables
