"""Demo-like logs for the flip explorer, without running a model: the demo's two families (invscale_demo/demo.py:
three sizes of "Tiny Qwen3-VL", three of "Tiny Molmo 2") answer the bundled fixture questions
(invscale_demo/fixtures.py) by seeded chance with a letter bias per model, as the demo's tiny random models do,
under the direct prompt, the reversed options and an identity re-run (the unchanged prompt again, most answers
kept). Each answer is scored by the tasks' own scoring, so the records are the tasks' records; the files are
lmms-eval 0.7.3's (logfactory.write_run).

    questions = fixture_questions(tasks_dir)
    registry = write_chance_logs(logs_dir, questions)      # -> the models YAML for --extra-models
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from logfactory import write_run

from lmms_eval_tasks.benchmarks import BENCHMARKS
from lmms_eval_tasks.catalog import task_name
from lmms_eval_tasks.hooks import questions_for
from lmms_eval_tasks.question import MCQ, YES_NO, Question
from lmms_eval_tasks.scoring import per_question_record, score
from lmms_eval_tasks.variants import VARIANTS, apply_variant
from postprocess.logs.questions import dataset_source, load_split

FAMILIES = {"Tiny Qwen3-VL": ("tiny-qwen3-vl", 0.55), "Tiny Molmo 2": ("tiny-molmo-2", 0.45)}
SIZES = (("S", 1_000_000), ("M", 4_000_000), ("L", 16_000_000))
KEPT_IN_IDENTITY = 0.85  # share of answers an identity re-run repeats


def fixture_questions(tasks_dir: Path) -> list[Question]:
    """Every question of the nine benchmark splits of a task folder (CAIT aside)."""
    questions = []
    for spec in BENCHMARKS:
        if spec.name != "CAIT":
            questions += questions_for(load_split(dataset_source(spec, tasks_dir), spec.task), spec)[1]
    return questions


def registry_dict() -> dict:
    return {
        "families": list(FAMILIES),
        "models": [{"key": f"{family}-{size}", "hf_id": f"local/{slug}-{size.lower()}", "family": family,
                    "size": size, "total_params": params, "active_params": params, "moe": False,
                    "encoder_tier": f"{slug}-vit", "vision_encoder": "tiny ViT", "lmms_eval_model": "qwen3_vl"}
                   for family, (slug, _) in FAMILIES.items() for size, params in SIZES],
    }


def chance_response(question: Question, rng: np.random.Generator, right_share: float, bias: int) -> str:
    """The gold with probability right_share, else a letter drawn with a preference for option `bias`."""
    if question.gold is None or rng.random() >= right_share:
        if question.kind == MCQ:
            letters = question.letters
            weights = np.ones(len(letters))
            weights[bias % len(letters)] += 2
            return f"The answer is ({letters[rng.choice(len(letters), p=weights / weights.sum())]})."
        if question.kind == YES_NO:
            return rng.choice(["Yes", "No"])
        return "123456"
    gold = question.gold[0] if isinstance(question.gold, list) else question.gold
    return f"The answer is ({gold})." if question.kind == MCQ else str(gold)


def write_chance_logs(logs: Path, questions: list[Question], seed: int = 0) -> Path:
    """The logs of every model (direct, reverse, identity) under `logs`; returns the models YAML beside them."""
    registry = registry_dict()
    task_of = {(s.name, s.split): s.task for s in BENCHMARKS}
    for index, model in enumerate(registry["models"]):
        rng = np.random.default_rng([seed, index])
        right_share = FAMILIES[model["family"]][1]
        runs: dict[str, list[dict]] = {}
        for question in questions:
            direct = chance_response(question, rng, right_share, bias=index)
            answers = {
                "direct": direct,
                "identity": direct if rng.random() < KEPT_IN_IDENTITY else chance_response(question, rng, right_share,
                                                                                           bias=index),
                "reverse": None,
            }
            for variant, response in answers.items():
                shown = apply_variant(question, VARIANTS[variant])
                if response is None:
                    response = chance_response(shown, rng, right_share, bias=index)
                record = {**per_question_record(shown, score(shown, response)), "response": response}
                runs.setdefault(task_name(task_of[(question.benchmark, question.split)], variant), []).append(record)
        for task, records in runs.items():
            write_run(logs, model["hf_id"], task, records)
    path = Path(logs).parent / f"{Path(logs).name}_models.yaml"
    path.write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    return path
