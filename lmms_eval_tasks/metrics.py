"""Metrics computed the same way in lmms-eval's results.json and in postprocess."""

from __future__ import annotations

from collections.abc import Sequence


def macro_f1(predictions: Sequence[str | None], golds: Sequence[str], labels: Sequence[str] = ("A", "B")) -> float:
    """Macro F1 over the option letters that occur as gold or prediction (as scikit-learn's default, so a
    subset whose golds are all "A" is not penalised for the absent "B"). An unparsed prediction (None)
    is a miss for its gold letter and a false alarm for none, so a model that always answers "A" on
    balanced data scores 1/3, not 1/2."""
    scores = []
    for label in labels:
        tp = sum(p == label and g == label for p, g in zip(predictions, golds))
        fp = sum(p == label and g != label for p, g in zip(predictions, golds))
        fn = sum(p != label and g == label for p, g in zip(predictions, golds))
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else 0.0
