"""The error taxonomy's tables (inverse-scaling paper, Section 5.6 and Appendix G.1), laid out from
postprocess.inverse_scaling.taxonomy.numbers: one function per table, its title beside it. The paper
states its taxonomy in prose (1,300 questions; GPT-5.4: 97.4% genuine errors, 2.6% bad annotation or
ambiguous, none format mismatch; the judges agree on 90.8%, Cohen's kappa 0.30); the tables give those
numbers by family and by dataset in Table 39's cell format ("count (share%)").
"""

from __future__ import annotations

import math

import pandas as pd

from postprocess.human.task_sets import (
    BAD_ANNOTATION,
    FORMAT_MISMATCH,
    GENUINE,
    UNPARSED,
)
from postprocess.render.tables import Table

LABEL_HEADERS = {GENUINE: "Genuine Error", BAD_ANNOTATION: "Bad Annot.", FORMAT_MISMATCH: "Format Mis.",
                 UNPARSED: "Unparsed"}


def count_cell(count: int, total: int) -> str:
    """Table 39's cell: "105 (82.7%)"; a zero count is printed alone, as the paper does."""
    return str(count) if count == 0 or not total else f"{count} ({100.0 * count / total:.1f}%)"


def _counts(rows: pd.DataFrame, by: str, header: str) -> pd.DataFrame:
    frame = pd.DataFrame({header: rows[by], "Judge": rows["judge"], "Questions": rows["questions"]})
    for label, title in LABEL_HEADERS.items():
        frame[title] = [count_cell(c, n) for c, n in zip(rows[label], rows["questions"])]
    return frame.reset_index(drop=True)


def taxonomy_by_family(numbers: dict[str, pd.DataFrame]) -> Table:
    return Table("taxonomy_by_family", "Section 5.6: error taxonomy of the sampled flips by family, per judge.",
                 _counts(numbers["by_family"], "family", "Family"),
                 note="Unparsed: no valid JSON verdict after the retries (counted, not guessed).")


def taxonomy_by_dataset(numbers: dict[str, pd.DataFrame]) -> Table:
    return Table("taxonomy_by_dataset", "Section 5.6: error taxonomy of the sampled flips by dataset, per judge.",
                 _counts(numbers["by_dataset"], "benchmark", "Dataset"),
                 note="Unparsed: no valid JSON verdict after the retries (counted, not guessed).")


def _agreement_rows(rows: pd.DataFrame, scope: str | None) -> pd.DataFrame:
    return pd.DataFrame({
        "Scope": rows[scope] if scope else "All",
        "Judges": rows["judge_a"] + " vs. " + rows["judge_b"],
        "Questions": rows["questions"],
        "Labelled by both": rows["labelled_by_both"],
        "Agreement": [None if math.isnan(a) else f"{100.0 * a:.1f}%" for a in rows["agreement"]],
        "Cohen's κ": [None if math.isnan(k) else f"{k:.2f}" for k in rows["cohen_kappa"]],
    })


def taxonomy_judge_agreement(numbers: dict[str, pd.DataFrame]) -> Table:
    by_family = numbers["agreement_by_family"]
    by_dataset = numbers["agreement_by_dataset"]
    frame = pd.concat([_agreement_rows(numbers["agreement"], None),
                       _agreement_rows(by_family[by_family["family"] != "All"], "family"),
                       _agreement_rows(by_dataset[by_dataset["benchmark"] != "All"], "benchmark")], ignore_index=True)
    return Table("taxonomy_judge_agreement",
                 "Section 5.6: agreement of the two taxonomy judges (the paper: 90.8%, Cohen's κ = 0.30), overall, by "
                 "family and by dataset.", frame,
                 note="Over the questions both judges labelled (an unparsed verdict is left out); κ is empty where "
                      "it is undefined (both judges gave one and the same label throughout).")


def taxonomy_sample_strata(strata: pd.DataFrame) -> Table:
    frame = pd.DataFrame({"Family": strata["family"], "Dataset": strata["benchmark"], "Cases": strata["cases"],
                          "Flips": strata["flips"], "Degenerate": strata["degenerate"],
                          "Candidates": strata["candidates"], "Capacity": strata["capacity"],
                          "Drawn": strata["drawn"]})
    total = {"Family": "Total", "Dataset": "", **{c: int(frame[c].sum()) for c in frame.columns[2:]}}
    return Table("taxonomy_sample_strata",
                 "Section 5.6: the taxonomy sample per family and dataset (up to 10 flips per case, dataset "
                 "quotas, at most 600 per family, degenerate responses left out).",
                 pd.concat([frame, pd.DataFrame([total])], ignore_index=True),
                 note="Flips: questions the smaller model answered right and the larger wrong, over the cases; "
                      "Degenerate: left out (an empty response or a single non-letter character); Candidates: within "
                      "the per-case cap; Capacity: within the dataset quota; Drawn: within the family cap.")


def taxonomy_tables(numbers: dict[str, pd.DataFrame], strata: pd.DataFrame | None) -> list[Table]:
    """The taxonomy section: the sample, the labels by family and by dataset, the judges' agreement."""
    tables = [] if strata is None else [taxonomy_sample_strata(strata)]
    return [*tables, taxonomy_by_family(numbers), taxonomy_by_dataset(numbers), taxonomy_judge_agreement(numbers)]
