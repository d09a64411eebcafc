"""Per-question tables whose flips are known by construction, for the analysis-stage tests.

A subtask's questions are laid out as blocks `(count, pattern)`: the pattern has one character per
model of the family in size order, '1' right, '0' wrong, '-' answered without known gold (correct
NA), '.' no row at all. Every family answers the same question ids, block by block in order, so
variants of a subtask line up question by question.

The construction (CONSTRUCTED) and its expected results (EXPECTED_*) are worked out by hand in the
comments: 20 cases, 50 eligible comparisons. write_constructed_logs writes the same table as lmms-eval
sample logs (logfactory) with a registry YAML, for the tests that run a command on logs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from logfactory import make_record, write_run

MODEL_ROWS = [
    # model, family, size, total, active, moe, encoder_tier
    ("A-1B", "Alpha", "1B", 1e9, 1e9, False, "small-enc"),
    ("A-4B", "Alpha", "4B", 4e9, 4e9, False, "small-enc"),
    ("A-16B-A2B", "Alpha", "16B-A2B", 16e9, 2e9, True, "small-enc"),
    ("A-24B", "Alpha", "24B", 24e9, 24e9, False, "big-enc"),
    ("B-2B", "Beta", "2B", 2e9, 2e9, False, "siglip"),
    ("B-8B", "Beta", "8B", 8e9, 8e9, False, "siglip"),
    ("B-12B", "Beta", "12B", 12e9, 12e9, False, "siglip"),
    ("G-3B", "Gamma", "3B", 3e9, 3e9, False, "vit"),
    ("G-7B", "Gamma", "7B", 7e9, 7e9, False, "vit"),
]
MODEL_COLUMNS = ["model", "family", "size", "total_params", "active_params", "moe", "encoder_tier"]

Blocks = list[tuple[int, str]]

# (benchmark, split, subtask) -> family -> blocks; models in the order of MODEL_ROWS.
CONSTRUCTED: dict[tuple[str, str, str], dict[str, Blocks]] = {
    # n = 30. Alpha: 1B and 4B beat 16B-A2B and 24B on 10 questions, lose 2 -> 4 cases of Net 8.
    # Beta: 2B>8B Net 6, 2B>12B Net 7. Gamma: Net 5. Cases in 3 families: replicated.
    ("BLINK", "val", "Jigsaw"): {
        "Alpha": [(10, "1100"), (2, "0011"), (15, "1111"), (3, "0000")],
        "Beta": [(7, "100"), (1, "010"), (20, "111"), (2, "000")],
        "Gamma": [(6, "10"), (1, "01"), (23, "11")],
    },
    # n = 24. Alpha: 1B beats every larger model by Net 6 (3 cases); Gamma Net 5. Two families.
    ("BLINK", "val", "Counting"): {
        "Alpha": [(6, "1000"), (18, "1111")],
        "Beta": [(24, "111")],
        "Gamma": [(5, "10"), (19, "00")],
    },
    # n = 10 < 20: Net 8 but not eligible.
    ("BLINK", "val", "Tiny"): {
        "Alpha": [(8, "1000"), (2, "0000")],
        "Beta": [(10, "111")],
        "Gamma": [(10, "11")],
    },
    # n = 20 exactly. Alpha zig-zags (0, 100, 0, 100 %): 4B > 16B-A2B by Net 20. Beta: 2B and 8B
    # beat 12B by Net 5.
    ("MMMU", "dev_val", "Art"): {
        "Alpha": [(20, "0101")],
        "Beta": [(5, "110"), (15, "111")],
        "Gamma": [(20, "11")],
    },
    # 25 questions, 5 without gold (MMMU test style): n = 20. Alpha: 24B loses 8 -> 3 cases of Net 8.
    # Gamma: Net 20.
    ("MMMU", "test", "Art"): {
        "Alpha": [(5, "----"), (8, "1110"), (12, "1111")],
        "Beta": [(5, "---"), (20, "111")],
        "Gamma": [(5, "--"), (20, "10")],
    },
    # 40 questions; B-12B has no row for 10 of them: n = 30 for its pairs, Net 6 twice.
    # Gamma: the larger model wins all 40 (Net -40).
    ("MME", "test", "Scene"): {
        "Alpha": [(40, "1111")],
        "Beta": [(10, "11."), (6, "110"), (24, "111")],
        "Gamma": [(40, "01")],
    },
}

# Chain-of-thought re-runs of Jigsaw. Alpha: the larger models recover 5 of their 10 lost questions
# (Net 8 -> 3, dissolve). Beta: unchanged (persist). Gamma: 7B now wins 6, loses 1 (Net -5, reverse).
CONSTRUCTED_COT = {
    ("BLINK", "val", "Jigsaw"): {
        "Alpha": [(5, "1111"), (5, "1100"), (2, "0011"), (15, "1111"), (3, "0000")],
        "Beta": [(7, "100"), (1, "010"), (20, "111"), (2, "000")],
        "Gamma": [(6, "01"), (1, "10"), (23, "11")],
    },
}

# Reversed option order of Jigsaw for Alpha only: 2 of the 10 losses are recovered (Net 8 -> 6).
CONSTRUCTED_REVERSE = {
    ("BLINK", "val", "Jigsaw"): {
        "Alpha": [(8, "1100"), (2, "1111"), (2, "0011"), (15, "1111"), (3, "0000")],
    },
}

# The unchanged prompt re-run (identity) of Jigsaw for Alpha: one of the 10 losses comes out right (Net 8 -> 7).
CONSTRUCTED_IDENTITY = {
    ("BLINK", "val", "Jigsaw"): {
        "Alpha": [(9, "1100"), (1, "1111"), (2, "0011"), (15, "1111"), (3, "0000")],
    },
}

EXPECTED_CASES = 20
EXPECTED_ELIGIBLE = 50
EXPECTED_BY_FAMILY = {"Alpha": 11, "Beta": 6, "Gamma": 3}
EXPECTED_RESTRICTED = {
    "dense_only": 15,  # drops the 5 cases with A-16B-A2B
    "twofold_total": 17,  # drops 16B-A2B -> 24B (1.5x) and 8B -> 12B twice
    "twofold_active": 16,  # drops 4B -> 16B-A2B (2B active) twice and 8B -> 12B twice
    "same_encoder_tier": 14,  # drops the 6 Alpha cases against 24B (big-enc)
    "adjacent": 10,
}
EXPECTED_SMALLEST_VS_LARGEST = 6  # Alpha 1B-24B: 3, Beta 2B-12B: 3 (Gamma has two models: excluded)


def models_frame() -> pd.DataFrame:
    return pd.DataFrame(MODEL_ROWS, columns=MODEL_COLUMNS)


def expand(blocks: Blocks) -> list[str]:
    """One pattern per question."""
    return [pattern for count, pattern in blocks for _ in range(count)]


def rows_for(spec: dict[tuple[str, str, str], dict[str, Blocks]], variant: str) -> list[dict]:
    models = models_frame()
    rows = []
    for (benchmark, split, subtask), families in spec.items():
        for family, blocks in families.items():
            members = models[models["family"] == family].reset_index(drop=True)
            for q, pattern in enumerate(expand(blocks)):
                for position, outcome in enumerate(pattern):
                    if outcome == ".":
                        continue
                    model = members.iloc[position]
                    rows.append(
                        {
                            **model.to_dict(),
                            "benchmark": benchmark,
                            "split": split,
                            "subtask": subtask,
                            "question_id": f"{subtask}-{q}",
                            "variant": variant,
                            "gold": None if outcome == "-" else "A",
                            "response": "A" if outcome == "1" else "B",
                            "prediction": "A" if outcome == "1" else "B",
                            "correct": None if outcome == "-" else outcome == "1",
                            "match": "letter",
                        }
                    )
    return rows


def constructed_table(with_controls: bool = False, categorical: bool = False) -> pd.DataFrame:
    rows = rows_for(CONSTRUCTED, "direct")
    if with_controls:
        rows += (rows_for(CONSTRUCTED_COT, "cot") + rows_for(CONSTRUCTED_REVERSE, "reverse")
                 + rows_for(CONSTRUCTED_IDENTITY, "identity"))
    table = pd.DataFrame(rows)
    table["correct"] = table["correct"].astype("boolean")
    if categorical:
        for column in ["model", "family", "size", "encoder_tier", "benchmark", "split", "subtask", "variant"]:
            table[column] = table[column].astype("category")
    return table


def random_table(
    rng: np.random.Generator, n_models: int, n_questions: int, n_subtasks: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One family of `n_models`, random outcomes with NA gold and missing rows."""
    models = pd.DataFrame(
        {
            "model": [f"M{i}" for i in range(n_models)],
            "family": "Fam",
            "size": [f"{2**i}B" for i in range(n_models)],
            "total_params": [2.0**i * 1e9 for i in range(n_models)],
            "active_params": [2.0**i * 1e9 for i in range(n_models)],
            "moe": False,
            "encoder_tier": "t",
        }
    )
    rows = []
    subtask_of = rng.integers(0, n_subtasks, n_questions)
    for _, model in models.iterrows():
        state = rng.choice(["1", "0", "-", "."], size=n_questions, p=[0.5, 0.35, 0.05, 0.1])
        for q in range(n_questions):
            if state[q] == ".":
                continue
            rows.append(
                {
                    **model.to_dict(),
                    "benchmark": "BLINK",
                    "split": "val",
                    "subtask": f"S{subtask_of[q]}",
                    "question_id": f"q{q}",
                    "variant": "direct",
                    "correct": None if state[q] == "-" else state[q] == "1",
                }
            )
    table = pd.DataFrame(rows)
    table["correct"] = table["correct"].astype("boolean")
    return table, models


def write_constructed_logs(root: Path) -> Path:
    """The constructed table as lmms-eval runs (one run per model) plus a registry YAML for its models."""
    table = constructed_table(with_controls=True)
    for (model, benchmark, split, variant), rows in table.groupby(["model", "benchmark", "split", "variant"]):
        records = [
            make_record(
                benchmark=benchmark,
                split=split,
                subtask=r.subtask,
                question_id=r.question_id,
                variant=variant,
                gold=None if pd.isna(r.gold) else r.gold,
                response=r.response,
                prediction=None if pd.isna(r.correct) else r.prediction,
                correct=None if pd.isna(r.correct) else bool(r.correct),
                match="none" if pd.isna(r.correct) else "letter",
            )  # fmt: skip
            for r in rows.itertuples()
        ]
        write_run(root / "logs", model, f"{benchmark.lower()}_{split}_{variant}", records)
    models = models_frame()
    registry = {
        "families": list(dict.fromkeys(models["family"])),
        "models": [
            {
                "key": m.model,
                "hf_id": f"test/{m.model.lower()}",
                "family": m.family,
                "size": m.size,
                "total_params": int(m.total_params),
                "active_params": int(m.active_params),
                "moe": bool(m.moe),
                "encoder_tier": m.encoder_tier,
            }  # fmt: skip
            for m in models.itertuples()
        ],
    }
    path = root / "models.yaml"
    path.write_text(yaml.safe_dump(registry))
    return path
