"""CAIT runs written as lmms-eval sample logs with the task layer's own records, for the CAIT metrics,
re-evaluation and human-annotation tests: the real CAIT adapter, answer balancing, variants and scoring
over the 8 fixture scenes, each response chosen per scene (right, wrong, unsure, a letter, a description),
written by logfactory and read back with ingest_logs."""

from collections.abc import Callable
from pathlib import Path

from logfactory import write_run

from invscale_demo.fixtures import FIXTURE_SCENES
from lmms_eval_tasks import cait
from lmms_eval_tasks.benchmarks import BY_KEY
from lmms_eval_tasks.question import Question
from lmms_eval_tasks.scoring import Outcome, per_question_record, score
from lmms_eval_tasks.variants import VARIANTS, apply_variant
from model_configs import load_registry
from postprocess.logs.ingest import ingest_logs

QWEN_8B, QWEN_4B, GEMMA_4B, INTERN_8B = ("Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-4B-Instruct",
                                         "google/gemma-3-4b-it", "OpenGVLab/InternVL3_5-8B-Instruct")
TASKS = {"direct": "cait", "swap": "cait_swap", "cot": "cait_cot", "structured": "cait_structured",
         "describe": "cait_describe"}
UNSURE = "I am not sure which one."


# ---------------------------------------------------------------------------------------------- helpers
def scene_questions() -> list[Question]:
    """The 8 fixture scenes (2 per domain) as the CAIT task builds them: right answer at A for 4, B for 4."""
    questions = []
    for i, (category, characteristic, verb, common, uncommon, style) in enumerate(FIXTURE_SCENES):
        row = {"id": f"cait_{i:03d}", "category": category, "characteristic": characteristic, "verb": verb,
               "common_text": common, "uncommon_text": uncommon, "style": style,
               "gt_prompt": f"A detailed {style} picture: {uncommon}"}
        questions.append(cait.cait(row, i, BY_KEY["CAIT:test"]))
    cait.balance_answer_positions(questions)
    return questions


def cait_records(variant: str, respond: Callable[[Question, int], str]) -> list[dict]:
    """The per_question records a run of the variant's task writes, each with the response that lmms-eval writes
    beside it (write_cait_logs moves it to filtered_resps); respond(shown question, scene index)."""
    records = []
    for i, question in enumerate(scene_questions()):
        shown = apply_variant(question, VARIANTS[variant])
        response = respond(shown, i)
        outcome = Outcome(None, None, "none", "describe") if variant == "describe" else score(shown, response)
        records.append({**per_question_record(shown, outcome), "response": response})
    return records


def right(question: Question, i: int) -> str:
    return question.gold


def wrong(question: Question, i: int) -> str:
    return "B" if question.gold == "A" else "A"


def always(letter: str) -> Callable[[Question, int], str]:
    return lambda question, i: letter


def by_scene(answers: dict[int, str], default: Callable[[Question, int], str] = right):
    """Per scene index: "right", "wrong", "unsure", a letter; other scenes use `default`."""
    named = {"right": right, "wrong": wrong, "unsure": lambda q, i: UNSURE}

    def respond(question: Question, i: int) -> str:
        answer = answers.get(i)
        if answer is None:
            return default(question, i)
        return named[answer](question, i) if answer in named else answer
    return respond


def describes(sentence: str) -> Callable[[Question, int], str]:
    """A describe response naming the scene's uncommon (what the image shows) or common sentence."""
    return lambda question, i: f"The picture shows this: {question.details[sentence + '_text']}"


def write_cait_logs(out: Path, runs: dict[str, dict[str, Callable]], timestamp: str = "20250101_120000") -> None:
    """One lmms-eval run per model path, one task per variant: {model path: {variant: respond}}."""
    for model_path, variants in runs.items():
        for variant, respond in variants.items():
            write_run(out, model_path, TASKS[variant], cait_records(variant, respond), timestamp=timestamp,
                      drop_response=True)


def ingest(out: Path):
    return ingest_logs([out], load_registry())


def scene_record(**changes):
    """One CAIT dataset record (a built scene) with the fields the task layer and the judges read, changed as given."""
    base = {"id": "s1", "image": "images/a.png", "category": "Animal-Animal",
            "characteristic": "Transposition of traditional predator and prey roles", "verb": "chase",
            "common_text": "A tiger chases a rabbit.", "uncommon_text": "A rabbit chases a tiger.",
            "gt_prompt": "A rabbit chasing a tiger.", "style": "cartoon"}
    return {**base, **changes}
