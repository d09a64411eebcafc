"""The human-annotation tables, laid out from postprocess.human.agreement's frames (computed, or read back
from a `human-stats` folder): one function per table, its title beside it.

  table39_human_taxonomy        inverse-scaling Table 39: each annotator's, the majority vote's and each
                                judge's labels on the taxonomy check sample
  appendixH_human_agreement     Appendix H: Fleiss' kappa, pairwise agreement and kappa, majority vote vs
                                each judge
  appendixH_label_estimates     the labels' shares on the sample and weighted back to all judged questions
  cait_table12_annotators       CAIT Table 12: per annotator accuracy, F1, seconds per item; mean, std, Fleiss
  cait_failure_modes            CAIT Section 5.3 / Figure 4: the failure modes of the structured prompt's errors
"""

from __future__ import annotations

import pandas as pd

from postprocess.human.agreement import MAJORITY
from postprocess.human.task_sets import FAILURE_MODES, TAXONOMY_LABELS, UNPARSED
from postprocess.render.tables import Table
from postprocess.render.taxonomy_tables import LABEL_HEADERS, count_cell


def _number(value: float, digits: int) -> str | None:
    return None if value is None or pd.isna(value) else f"{value:.{digits}f}"


def _percent(value: float) -> str | None:
    return None if value is None or pd.isna(value) else f"{100.0 * value:.1f}%"


def _rater_name(rater: object, judges: set[str]) -> str:
    text = str(rater)
    if text == MAJORITY:
        return "Majority vote"
    return f"LLM judge {text}" if text in judges else f"Annotator {text}"


def table39_human_taxonomy(tables: dict[str, pd.DataFrame]) -> Table:
    counts, judges = tables["label_counts"], set(tables["judges"]["judge"].astype(str))
    labels = [*TAXONOMY_LABELS, *([UNPARSED] if counts[UNPARSED].sum() else [])]
    frame = pd.DataFrame({"Rater": [_rater_name(r, judges) for r in counts["rater"]], "Items": counts["items"]})
    for label in labels:
        frame[LABEL_HEADERS[label]] = [count_cell(int(c), int(n)) for c, n in zip(counts[label], counts["items"])]
    items = int(tables["coverage"]["items"].iloc[0])
    return Table("table39_human_taxonomy", f"Table 39: human annotation results on {items} sampled taxonomy questions "
                 "(with the LLM judges' labels on the same questions).", frame)


def appendixH_human_agreement(tables: dict[str, pd.DataFrame]) -> Table:
    fleiss, pairwise, judges = tables["fleiss"].iloc[0], tables["pairwise"], tables["judges"]
    rows = [{"Comparison": f"Fleiss' κ, {int(fleiss['raters'])} annotators", "Items": int(fleiss["items"]),
             "Agreement": None, "κ": _number(fleiss["fleiss_kappa"], 2)}]
    rows += [{"Comparison": f"Annotator {a} vs. annotator {b}", "Items": int(n), "Agreement": _percent(p),
              "κ": _number(k, 2)} for a, b, n, p, k in
             zip(pairwise["rater_a"], pairwise["rater_b"], pairwise["items"], pairwise["agreement"],
                 pairwise["cohen_kappa"])]
    rows += [{"Comparison": f"Majority vote vs. {j}", "Items": int(n), "Agreement": _percent(p), "κ": _number(k, 2)}
             for j, n, p, k in zip(judges["judge"], judges["items"], judges["agreement"], judges["cohen_kappa"])]
    coverage = tables["coverage"].iloc[0]
    return Table("appendixH_human_agreement",
                 "Appendix H: agreement between the annotators (Fleiss' κ over the items all rated; pairwise Cohen's "
                 "κ) and of their majority vote with each LLM judge.", pd.DataFrame(rows),
                 note=f"{int(coverage['items'])} items, {int(coverage['rated_by_all'])} rated by every annotator, "
                      f"{int(coverage['no_majority'])} without a majority label. The paper: Fleiss κ 0.65, pairwise "
                      "86.6–92.1% (κ 0.53–0.74), majority vote vs. GPT-5.4 88.2%, vs. Claude Opus 4.6 84.3%.")


def appendixH_label_estimates(tables: dict[str, pd.DataFrame]) -> Table:
    estimates, judges = tables["estimates"], set(tables["judges"]["judge"].astype(str))
    frame = pd.DataFrame({"Rater": [_rater_name(r, judges) for r in estimates["rater"]],
                          "Label": estimates["label"].map(LABEL_HEADERS), "Items": estimates["items"],
                          "Share of the sample": estimates["share"].map(_percent),
                          "Weighted to all judged questions": estimates["weighted_share"].map(_percent)})
    return Table("appendixH_label_estimates",
                 "Appendix H: each label's share on the check sample and weighted by the inverse sampling rates (the "
                 "sample over-represents questions a judge flagged as Bad Annotation).", frame)


def cait_table12_annotators(tables: dict[str, pd.DataFrame]) -> Table:
    scores, summary = tables["annotators"], tables["summary"].iloc[0]
    profiles = tables.get("profiles")
    profile = (profiles if profiles is not None else pd.DataFrame(columns=["annotator", "age", "description"])
               ).set_index("annotator").reindex(scores["annotator"])
    frame = pd.DataFrame({"Annotator": [f"A{a}" for a in scores["annotator"]],
                          "Age": [v if isinstance(v, str) and v else "–" for v in profile["age"]],
                          "Description": [v if isinstance(v, str) and v else "–" for v in profile["description"]],
                          "Items": scores["items"],
                          "Skipped": scores["skipped"], "Acc": scores["accuracy"].map(lambda v: _number(v, 3)),
                          "F1": scores["macro_f1"].map(lambda v: _number(v, 3)),
                          "Avg Time (s)": scores["seconds_per_item"].map(lambda v: _number(v, 1))})
    tail = [{"Annotator": "Mean", "Acc": _number(summary["accuracy_mean"], 3), "F1": _number(summary["macro_f1_mean"], 3),
             "Avg Time (s)": _number(summary["seconds_per_item_mean"], 3)},
            {"Annotator": "Std", "Acc": _number(summary["accuracy_std"], 3), "F1": _number(summary["macro_f1_std"], 3),
             "Avg Time (s)": _number(summary["seconds_per_item_std"], 3)},
            {"Annotator": "Inter-annotator agreement (Fleiss' κ)", "Acc": _number(summary["fleiss_kappa"], 2),
             "Items": int(summary["fleiss_items"])}]
    frame = pd.concat([frame, pd.DataFrame(tail)], ignore_index=True)
    for column in ("Items", "Skipped"):  # counts stay whole numbers beside the summary rows' blanks
        frame[column] = pd.array([None if pd.isna(v) else int(v) for v in frame[column]], dtype=object)
    source = ("from --annotator-profiles" if profiles is not None else
              "not recorded by Label Studio: give them with report --annotator-profiles (– where unknown)")
    return Table("cait_table12_annotators", "CAIT Table 12: human annotation statistics on the CAIT VQA task.", frame,
                 note="A skipped item counts as a wrong answer; time: Label Studio's lead_time (seconds from showing "
                      "an item to submitting it), mean over the answered items; Std over annotators (n−1). Age "
                      f"and Description: {source}.")


def cait_failure_modes(tables: dict[str, pd.DataFrame], by: str = "group") -> Table:
    distribution, coverage = tables["distribution"], tables["coverage"]
    wide = distribution.pivot(index=by, columns="mode", values="count").reindex(columns=list(FAILURE_MODES))
    order = list(dict.fromkeys(distribution[by]))
    covered = coverage.set_index(by).reindex(order)
    frame = pd.DataFrame({by.capitalize(): order, "Errors labelled": covered["with_mode"].to_numpy()})
    for mode in FAILURE_MODES:
        frame[mode] = [count_cell(int(c), int(n)) for c, n in zip(wide.reindex(order)[mode], covered["with_mode"])]
    frame["No majority"] = covered["no_majority"].to_numpy()
    frame["Unrated"] = covered["unrated"].to_numpy()
    return Table("cait_failure_modes", "CAIT Section 5.3 (Figure 4): failure modes of the structured prompt's errors.",
                 frame)


def human_tables(stats: dict[str, dict[str, pd.DataFrame]]) -> list[Table]:
    """The tables of the task sets present in `stats` ({set name: agreement.py's frames})."""
    tables = []
    if "taxonomy" in stats:
        taxonomy = stats["taxonomy"]
        tables += [table39_human_taxonomy(taxonomy), appendixH_human_agreement(taxonomy),
                   appendixH_label_estimates(taxonomy)]
    if "cait-baseline" in stats:
        tables.append(cait_table12_annotators(stats["cait-baseline"]))
    if "cait-failures" in stats:
        failures = stats["cait-failures"]
        by = "model" if "model" in failures["distribution"].columns else "group"
        tables.append(cait_failure_modes(failures, by))
    return tables
