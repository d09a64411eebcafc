"""Statistics of human annotations: agreement between annotators, against the LLM judges, against the
gold answers, and the failure-mode distribution. Inputs are the annotations frame
(label_studio.ANNOTATION_COLUMNS) and the items frame its task set exported (task_sets.py); every
function returns frames of numbers (the render layer formats them).

Rules shared by all sets:
- A rating is an annotator's label for an item; a skipped annotation is no rating (it counts as a wrong
  answer where accuracy is computed, like an unparsed model answer). Two annotations by one annotator
  on one item are an error, as is a label outside the set's labels or an item key the items frame
  lacks.
- Fleiss' kappa (statsmodels) uses the items every annotator rated; pairwise agreement and Cohen's
  kappa (scikit-learn) use the items both annotators rated. Each table says how many items it used.
- The majority vote of an item is the label of more than half of the ratings it received, else none
  (no majority).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from lmms_eval_tasks.metrics import macro_f1
from postprocess.human.task_sets import CAIT_ANSWERS, FAILURE_MODES, TAXONOMY_LABELS, UNPARSED, VERDICT_PREFIX

MAJORITY = "majority vote"
ALL = "All"
UNGROUPED = "Ungrouped"


# ---------------------------------------------------------------------------------------------- ratings
def ratings_matrix(annotations: pd.DataFrame, items: pd.DataFrame, labels) -> pd.DataFrame:
    """Items (rows, every item of the items frame, in its order) x annotators (columns, sorted): the
    label, or None where the annotator gave none (skipped or never saw the item)."""
    unknown = sorted(set(annotations["item_key"]) - set(items["item_key"]))
    if unknown:
        raise ValueError(f"annotations: item_key {unknown[0]!r} is not in the items file ({len(unknown)} unknown)")
    twice = annotations[annotations.duplicated(["item_key", "annotator"], keep=False)]
    if not twice.empty:
        key, annotator = twice.iloc[0][["item_key", "annotator"]]
        ids = twice[(twice["item_key"] == key) & (twice["annotator"] == annotator)]["annotation_id"].tolist()
        raise ValueError(f"annotations: annotator {annotator} annotated item {key!r} more than once (annotations {ids})")
    rated = annotations[~annotations["skipped"].astype(bool)]
    bad = rated[~rated["label"].isin(labels)]
    if not bad.empty:
        row = bad.iloc[0]
        raise ValueError(f"annotations: item {row['item_key']!r} annotator {row['annotator']}: label {row['label']!r} "
                         f"is not one of {list(labels)}")
    wide = rated.pivot(index="item_key", columns="annotator", values="label")
    annotators = sorted(annotations["annotator"].unique())
    wide = wide.reindex(index=items["item_key"], columns=annotators).astype(object)
    return wide.where(wide.notna(), None).rename_axis(index="item_key", columns="annotator")


def majority_vote(ratings: pd.DataFrame) -> pd.Series:
    """Per item, the label of more than half of its ratings, else None."""
    def vote(row: pd.Series):
        counts = row.dropna().value_counts()
        return counts.index[0] if len(counts) and counts.iloc[0] * 2 > counts.sum() else None
    return ratings.apply(vote, axis=1).astype(object).rename(MAJORITY)


def fleiss(ratings: pd.DataFrame, labels) -> pd.DataFrame:
    """One row: raters, items (rated by every rater), fleiss_kappa (NaN with fewer than 2 raters or no
    such item)."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    complete = ratings.dropna()
    kappa = math.nan
    if ratings.shape[1] >= 2 and len(complete):
        codes = complete.apply(lambda column: column.map(list(labels).index)).to_numpy(dtype=int)
        counts, _ = aggregate_raters(codes, n_cat=len(labels))
        kappa = float(fleiss_kappa(counts, method="fleiss"))
    return pd.DataFrame([{"raters": ratings.shape[1], "items": len(complete), "fleiss_kappa": kappa}])


def pairwise_agreement(ratings: pd.DataFrame, labels) -> pd.DataFrame:
    """Per pair of raters (columns of `ratings`): items both rated, share with the same label, Cohen's kappa."""
    from sklearn.metrics import cohen_kappa_score

    records = []
    for a, b in combinations(ratings.columns, 2):
        both = ratings[[a, b]].dropna()
        records.append({
            "rater_a": a, "rater_b": b, "items": len(both),
            "agreement": float((both[a] == both[b]).mean()) if len(both) else math.nan,
            "cohen_kappa": _cohen(both[a], both[b], labels, cohen_kappa_score),
        })
    return pd.DataFrame(records, columns=["rater_a", "rater_b", "items", "agreement", "cohen_kappa"])


def _cohen(a: pd.Series, b: pd.Series, labels, cohen_kappa_score) -> float:
    """Cohen's kappa; NaN when undefined (no items, or both raters used a single, identical label)."""
    if not len(a) or (a.nunique() == 1 and b.nunique() == 1 and a.iloc[0] == b.iloc[0]):
        return math.nan
    return float(cohen_kappa_score(list(a), list(b), labels=list(labels)))


def label_counts(ratings: pd.DataFrame, labels) -> pd.DataFrame:
    """Per rater (column): labelled items and the count and share of each label (Table 39's rows)."""
    records = []
    for rater in ratings.columns:
        given = ratings[rater].dropna()
        record = {"rater": rater, "items": len(given)}
        for label in labels:
            count = int((given == label).sum())
            record[label] = count
            record[f"{label} share"] = count / len(given) if len(given) else math.nan
        records.append(record)
    return pd.DataFrame(records, columns=["rater", "items", *[c for label in labels for c in (label, f"{label} share")]])


# ---------------------------------------------------------------------------------------------- taxonomy
def taxonomy_tables(annotations: pd.DataFrame, items: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Appendix H / Table 39 from the taxonomy items (with their verdict_<judge> columns):
    - label_counts: each annotator, the majority vote and each judge on the sample (counts, shares)
    - fleiss: Fleiss' kappa over the annotators
    - pairwise: agreement and Cohen's kappa for each pair of annotators
    - judges: the majority vote against each judge (items with a majority; an unparsed verdict disagrees)
    - estimates: each label's share on the sample and weighted by the sampling weights (an estimate
      for all judged questions, since the sample over-represents flagged questions), for the majority
      vote and each judge."""
    from sklearn.metrics import cohen_kappa_score

    ratings = ratings_matrix(annotations, items, TAXONOMY_LABELS)
    majority = majority_vote(ratings)
    judges = [c for c in items.columns if c.startswith(VERDICT_PREFIX)]
    verdicts = items.set_index("item_key")[judges].rename(columns=lambda c: c.removeprefix(VERDICT_PREFIX))
    raters = pd.concat([ratings, majority, verdicts], axis=1)
    judge_labels = (*TAXONOMY_LABELS, UNPARSED)
    judge_records = []
    for judge in verdicts.columns:
        both = pd.concat([majority, verdicts[judge]], axis=1).dropna()
        judge_records.append({
            "judge": judge, "items": len(both),
            "agreement": float((both[MAJORITY] == both[judge]).mean()) if len(both) else math.nan,
            "cohen_kappa": _cohen(both[MAJORITY], both[judge], judge_labels, cohen_kappa_score),
        })
    weights = items.set_index("item_key")["weight"]
    estimate_records = []
    for rater in [MAJORITY, *verdicts.columns]:
        given = raters[rater].dropna()
        for label in judge_labels if rater != MAJORITY else TAXONOMY_LABELS:
            hit = given == label
            estimate_records.append({
                "rater": rater, "label": label, "items": len(given),
                "share": float(hit.mean()) if len(given) else math.nan,
                "weighted_share": float(np.average(hit, weights=weights[given.index])) if len(given) else math.nan,
            })
    return {
        "label_counts": label_counts(raters, judge_labels),
        "fleiss": fleiss(ratings, TAXONOMY_LABELS),
        "pairwise": pairwise_agreement(ratings, TAXONOMY_LABELS),
        "judges": pd.DataFrame(judge_records, columns=["judge", "items", "agreement", "cohen_kappa"]),
        "estimates": pd.DataFrame(estimate_records, columns=["rater", "label", "items", "share", "weighted_share"]),
        "coverage": _coverage(ratings, majority),
    }


def _coverage(ratings: pd.DataFrame, majority: pd.Series) -> pd.DataFrame:
    """Items, items with any rating, items rated by every annotator, and items without a majority."""
    rated = ratings.notna().sum(axis=1)
    return pd.DataFrame([{"items": len(ratings), "rated": int((rated > 0).sum()),
                          "rated_by_all": int((rated == ratings.shape[1]).sum()),
                          "no_majority": int(((rated > 0) & majority.isna()).sum())}])


# ---------------------------------------------------------------------------------------------- CAIT baseline
def annotator_scores(annotations: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Table 12 per annotator, over the items the annotator annotated (answered or skipped): items,
    skipped, accuracy and macro F1 (a skip is a wrong answer), seconds_per_item (mean lead_time of the
    answered items; `timed` says how many had one)."""
    ratings_matrix(annotations, items, CAIT_ANSWERS)  # validates keys, duplicates and labels
    gold = items.set_index("item_key")["gold"]
    records = []
    for annotator, rows in annotations.groupby("annotator", sort=True):
        predictions = [None if skipped else label for label, skipped in zip(rows["label"], rows["skipped"].astype(bool))]
        golds = list(gold[rows["item_key"]])
        answered = rows[~rows["skipped"].astype(bool)]
        records.append({
            "annotator": annotator, "items": len(rows), "skipped": int(rows["skipped"].astype(bool).sum()),
            "accuracy": float(np.mean([p == g for p, g in zip(predictions, golds)])),
            "macro_f1": macro_f1(predictions, golds), "timed": int(answered["lead_time"].notna().sum()),
            "seconds_per_item": float(answered["lead_time"].mean()) if answered["lead_time"].notna().any() else math.nan,
        })
    return pd.DataFrame(records, columns=["annotator", "items", "skipped", "accuracy", "macro_f1", "timed",
                                          "seconds_per_item"])


def cait_baseline_tables(annotations: pd.DataFrame, items: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """CAIT Table 12 and the human row of the CAIT tables:
    - annotators: annotator_scores
    - summary: annotators, items (annotated; unannotated: the set's others), mean and standard deviation (n-1) over annotators of accuracy, macro
      F1 and seconds per item, and Fleiss' kappa with the items it used
    - baseline: baseline_row
    - pairwise: agreement and Cohen's kappa per pair of annotators."""
    scores = annotator_scores(annotations, items)
    ratings = ratings_matrix(annotations, items, CAIT_ANSWERS)
    agreement = fleiss(ratings, CAIT_ANSWERS)
    annotated = int(annotations["item_key"].nunique())
    # items: the scenes someone annotated, those the accuracies are over (as the baseline's n)
    summary = {"annotators": len(scores), "items": annotated, "unannotated": len(items) - annotated}
    for column in ("accuracy", "macro_f1", "seconds_per_item"):
        summary[f"{column}_mean"] = float(scores[column].mean())
        summary[f"{column}_std"] = float(scores[column].std(ddof=1))
    summary["fleiss_kappa"] = agreement["fleiss_kappa"].iloc[0]
    summary["fleiss_items"] = int(agreement["items"].iloc[0])
    baseline = baseline_row(scores, annotated, unannotated=len(items) - annotated)
    return {"annotators": scores, "summary": pd.DataFrame([summary]), "baseline": baseline,
            "pairwise": pairwise_agreement(ratings, CAIT_ANSWERS)}


def baseline_row(scores: pd.DataFrame, items: int, model: str = "Human", unannotated: int = 0) -> pd.DataFrame:
    """The human baseline shaped like a postprocess.cait.metrics.mode_metrics row (with timing): the mean over
    annotators of accuracy, macro F1 and seconds per item (the paper's "average performance of human
    annotators"); n is the number of items annotated (the accuracies are over those), unparsed the skipped
    annotations; the note says how many items of the set nobody annotated."""
    missing = f"; {unannotated} item(s) of the set have no annotation and are not in n" if unannotated else ""
    return pd.DataFrame([{
        "model": model, "variant": "direct", "mode": "instant", "n": items,
        "accuracy": float(scores["accuracy"].mean()), "macro_f1": float(scores["macro_f1"].mean()),
        "unparsed": int(scores["skipped"].sum()), "seconds_per_question": float(scores["seconds_per_item"].mean()),
        "time_apportioned": False,
        "timing_note": f"mean over {len(scores)} annotators of Label Studio's lead_time (seconds from showing an item "
                       f"to submitting it){missing}",
    }])


# ---------------------------------------------------------------------------------------------- failure modes
def failure_mode_tables(annotations: pd.DataFrame, items: pd.DataFrame, by: str = "group") -> dict[str, pd.DataFrame]:
    """CAIT Figure 4: each item's mode (its majority vote: the one label when one person labelled it),
    counted per `by` (group or model; items without one are Ungrouped) and over all items:
    - distribution: by, mode, count, share (of the items with a mode in that row's set)
    - coverage: by, items, with_mode, no_majority (rated, but no label has a majority), unrated
    - fleiss, pairwise: agreement between annotators when there are several."""
    if by not in ("group", "model"):
        raise ValueError(f"failure modes are counted by group or model, not {by!r}")
    ratings = ratings_matrix(annotations, items, FAILURE_MODES)
    majority = majority_vote(ratings)
    keys = items.set_index("item_key")[by].astype(object)
    keys = keys.where(keys.notna(), UNGROUPED)
    frame = pd.DataFrame({by: keys, "mode": majority, "rated": ratings.notna().any(axis=1)})
    distribution, coverage = [], []
    for name, group in [*frame.groupby(by, sort=False), (ALL, frame)]:
        labelled = group["mode"].dropna()
        for mode in FAILURE_MODES:
            count = int((labelled == mode).sum())
            distribution.append({by: name, "mode": mode, "count": count,
                                 "share": count / len(labelled) if len(labelled) else math.nan})
        coverage.append({by: name, "items": len(group), "with_mode": len(labelled),
                         "no_majority": int((group["rated"] & group["mode"].isna()).sum()),
                         "unrated": int((~group["rated"]).sum())})
    return {"distribution": pd.DataFrame(distribution, columns=[by, "mode", "count", "share"]),
            "coverage": pd.DataFrame(coverage, columns=[by, "items", "with_mode", "no_majority", "unrated"]),
            "fleiss": fleiss(ratings, FAILURE_MODES), "pairwise": pairwise_agreement(ratings, FAILURE_MODES)}


__all__ = ["annotator_scores", "baseline_row", "cait_baseline_tables", "failure_mode_tables",
           "fleiss", "label_counts", "majority_vote", "pairwise_agreement", "ratings_matrix", "taxonomy_tables"]
