"""The designed examples of human annotation, whose numbers are worked out by hand in
tests/postprocess/test_human_stats.py and checked again through a real Label Studio server in
tests/invscale/test_human_label_studio.py: the taxonomy check (Table 39's layout), the CAIT baseline
(the 8 fixture scenes, three annotators) and CAIT failure rows; annotation frames built from them."""

import pandas as pd

from invscale.label_studio import ANNOTATION_COLUMNS
from postprocess.human.task_sets import (BAD_ANNOTATION, FORMAT_MISMATCH, GENUINE, UNPARSED, cait_baseline_task_set,
                                         sample_taxonomy_check)

G, B, F = GENUINE, BAD_ANNOTATION, FORMAT_MISMATCH

# ---------------------------------------------------------------------------------------------- designed examples
# Taxonomy: six judged questions, three annotators (Table 39's layout).
#   question  ann 1  ann 2  ann 3  | gpt  claude    flagged (either judge said B)
TAXONOMY_EXAMPLE = {
    "q1": (G, G, G, G, G),
    "q2": (G, G, B, G, B),
    "q3": (B, B, G, G, B),
    "q4": (B, B, B, B, B),
    "q5": (G, F, G, G, G),
    "q6": (G, B, F, G, UNPARSED),
}
TAXONOMY_BENCHMARK = {"q1": "MME", "q2": "MME", "q3": "MMMU", "q4": "MMMU", "q5": "BLINK", "q6": "BLINK"}
# CAIT baseline: the 8 fixture scenes (gold A: 000 002 003 005, B: 001 004 006 007), three annotators.
#   scene: (answer, lead_time) per annotator; None = skipped
CAIT_GOLD = {"cait_000": "A", "cait_001": "B", "cait_002": "A", "cait_003": "A", "cait_004": "B", "cait_005": "A",
             "cait_006": "B", "cait_007": "B"}
CAIT_EXAMPLE = {
    1: {scene: (gold, time) for (scene, gold), time in zip(CAIT_GOLD.items(), (2, 3, 4, 5, 2, 3, 4, 5))},
    2: {**{scene: (gold, 6.0) for scene, gold in CAIT_GOLD.items()},
        "cait_000": ("B", 6.0), "cait_001": ("A", 6.0), "cait_007": (None, 1.0)},
    3: {**{scene: (gold, 4.0) for scene, gold in CAIT_GOLD.items()}, "cait_000": ("B", 4.0)},
}


def verdicts_frame(example=TAXONOMY_EXAMPLE, benchmarks=TAXONOMY_BENCHMARK) -> pd.DataFrame:
    return pd.DataFrame([{"question_key": key, "benchmark": benchmarks.get(key, "MME"), "family": "Qwen3-VL",
                          "judge": judge, "label": labels[3 + j]}
                         for key, labels in example.items() for j, judge in enumerate(("gpt", "claude"))])


def annotation_rows(labels_by_item: dict[str, dict[int, tuple]]) -> pd.DataFrame:
    """An annotations frame: {item_key: {annotator: (label or None for a skip, lead_time)}}."""
    rows = [{"project": 1, "task_id": i, "annotation_id": 100 * i + annotator, "item_key": key, "annotator": annotator,
             "annotator_email": f"ann{annotator}@example.com", "label": label, "skipped": label is None,
             "lead_time": float(time), "created_at": pd.Timestamp("2026-01-01", tz="UTC")}
            for i, (key, by_annotator) in enumerate(labels_by_item.items())
            for annotator, (label, time) in by_annotator.items()]
    return pd.DataFrame(rows, columns=ANNOTATION_COLUMNS)


def taxonomy_items_and_annotations():
    sample = sample_taxonomy_check(verdicts_frame(), n=6)
    items = sample.items.assign(item_key=sample.items["question_key"])
    annotations = annotation_rows({key: {a + 1: (TAXONOMY_EXAMPLE[key][a], 5.0) for a in range(3)}
                                   for key in TAXONOMY_EXAMPLE})
    return items, annotations


def cait_items_and_annotations(records):
    items = cait_baseline_task_set(records).items
    key_of = dict(zip(items["scene"], items["item_key"]))
    by_item = {}
    for annotator, answers in CAIT_EXAMPLE.items():
        for scene, answer in answers.items():
            by_item.setdefault(key_of[scene], {})[annotator] = answer
    return items, annotation_rows(by_item)


def failure_rows() -> pd.DataFrame:
    """cait_rows-shaped rows: two models, structured errors on some scenes, one unparsed."""
    rows = []
    for model, wrong in (("Qwen3-VL-8B", {"cait_000", "cait_001", "cait_002"}), ("InternVL3.5-8B", {"cait_003", "cait_004"})):
        for scene, gold in CAIT_GOLD.items():
            for variant in ("direct", "structured"):
                correct = scene not in wrong or variant == "direct"
                prediction = gold if correct else (None if scene == "cait_004" else "AB".replace(gold, ""))
                rows.append({"model": model, "scene": scene, "category": "Human-Human", "variant": variant, "gold": gold,
                             "prediction": prediction, "correct": correct, "response": f"{model} on {scene}: ...",
                             "options": ["first sentence", "second sentence"]})
    return pd.DataFrame(rows)
