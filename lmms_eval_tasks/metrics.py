"""Metrics computed the same way in lmms-eval's results.json and in postprocess."""

from __future__ import annotations

from collections.abc import Sequence


def macro_f1(predictions: Sequence[str | None], golds: Sequence[str], labels: Sequence[str] = ("A", "B")) -> float:
    """Macro F1 over the option letters. An unparsed prediction (None) is a miss for its gold letter and a
    false alarm for none, so a model that always answers "A" on balanced data scores 1/3, not 1/2."""
    scores = []
    for label in labels:
        tp = sum(p == label and g == label for p, g in zip(predictions, golds))
        fp = sum(p == label and g != label for p, g in zip(predictions, golds))
        fn = sum(p != label and g == label for p, g in zip(predictions, golds))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return sum(scores) / len(scores)
