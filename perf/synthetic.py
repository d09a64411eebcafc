"""Paper-scale synthetic per-question data for the postprocess benchmark.

19 models of the registry (model_configs), nine splits with the paper's question and
subtask counts (Table 1), correctness drawn from a logistic model with a size-driven ability, a
per-question difficulty and a per-(model, subtask) skill shock that produces inverse-scaling cases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from model_configs import load_registry

# (benchmark, split, questions, subtasks): paper Table 1, 29,386 questions per model.
PAPER_SPLITS = [
    ("MMT-Bench", "val", 3127, 32),
    ("MMMU", "dev_val", 1050, 132),
    ("MMMU", "test", 10500, 177),
    ("ScienceQA", "test", 2017, 62),
    ("MME", "test", 2374, 14),
    ("AI2D", "test", 3088, 15),
    ("MathVista", "testmini", 1000, 5),
    ("BLINK", "val", 1901, 14),
    ("MMBench", "dev_en", 4329, 20),
]
MODEL_FIELDS = ["model", "family", "size", "total_params", "active_params", "moe", "encoder_tier"]


def registry_models() -> pd.DataFrame:
    """The models frame of the project registry (19 models in 4 families)."""
    return load_registry().models_frame()


def questions(scale: int, rng: np.random.Generator) -> pd.DataFrame:
    """One row per question: benchmark, split, subtask, question_id; subtask sizes are skewed."""
    parts = []
    for benchmark, split, count, n_subtasks in PAPER_SPLITS:
        count *= scale
        weights = rng.lognormal(0.0, 1.4, n_subtasks)
        sizes = rng.multinomial(count - n_subtasks, weights / weights.sum()) + 1
        subtask = np.repeat([f"{benchmark[:4].lower()}_{split}_s{i:03d}" for i in range(n_subtasks)], sizes)
        parts.append(
            pd.DataFrame(
                {
                    "benchmark": benchmark,
                    "split": split,
                    "subtask": subtask,
                    "question_id": [f"{split}-{i}" for i in range(count)],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def correctness(models: pd.DataFrame, qs: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """bool (models, questions): logistic in size ability - difficulty + a (model, subtask) shock.

    The constants give roughly the paper's totals at 1x: ~10.6k eligible comparisons, ~350 cases,
    the larger model ahead in ~78% of comparisons (paper: 10,434, 375, 74.8%); the wide spread of
    difficulty makes models agree on most questions, as real ones do."""
    ability = 0.3 * np.log2(models["total_params"].to_numpy() / 1e9)[:, None]
    difficulty = rng.normal(-0.5, 4.5, len(qs))[None, :]
    subtask_codes, subtasks = pd.factorize(qs["subtask"])
    shock = rng.normal(0.0, 0.35, (len(models), len(subtasks)))[:, subtask_codes]
    logits = ability - difficulty + shock - 0.5
    return rng.random(logits.shape) < 1.0 / (1.0 + np.exp(-logits))


def per_question_table(scale: int = 1, seed: int = 0, categorical: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, models) in the ingestion schema: one row per model x question, variant 'direct'."""
    rng = np.random.default_rng(seed)
    models = registry_models()
    qs = questions(scale, rng)
    right = correctness(models, qs, rng)
    n_models, n_questions = len(models), len(qs)
    model_idx = np.repeat(np.arange(n_models), n_questions)
    table = qs.iloc[np.tile(np.arange(n_questions), n_models)].reset_index(drop=True)
    for column in MODEL_FIELDS:
        table[column] = models[column].to_numpy()[model_idx]
    table["variant"] = "direct"
    table["gold"] = "A"
    correct = right.ravel()
    table["prediction"] = np.where(correct, "A", "B")
    table["response"] = table["prediction"]
    table["correct"] = pd.array(correct, dtype="boolean")
    table["match"] = "letter"
    if categorical:
        for column in ["model", "family", "size", "encoder_tier", "benchmark", "split", "subtask", "variant", "match"]:
            table[column] = table[column].astype("category")
    return table, models
