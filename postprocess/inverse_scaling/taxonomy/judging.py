"""The error taxonomy's judging (Section 5.6, Appendix G.1): every sampled flip, with its image(s), asked
of every judge through the shared judge client (invscale.judges: cache, retries, rate limit, resume,
dry-run estimate), the verdicts parsed strictly (prompt.parse_verdict: a malformed verdict is asked again
up to the judge's parse_retries, then counted as "unparsed").

Outputs (write_taxonomy), in the schemas postprocess/human/task_sets.py reads, so that
`python -m postprocess human-export --set taxonomy --verdicts OUT/taxonomy_verdicts.csv --questions
OUT/taxonomy_questions.jsonl` builds the human check sample from them:
  taxonomy_verdicts.csv    VERDICT_COLUMNS (question_key, benchmark, family, judge, label) and the judge's
                           confidence, explanation, parse_error, answer, finish_reason, asks; the case
                           (split, subtask, question_id, small, large) and the sides: correct_label
                           ("Model A" as in G.1, or "Model B" where --sides random put it there),
                           model_a and model_b (which model each label stood for)
  taxonomy_questions.jsonl TAXONOMY_QUESTION_COLUMNS: what the judges were shown; images as paths
                           relative to the file (images/<sha256>.png)
  taxonomy_sample.csv      the drawn flips; taxonomy_strata.csv the numbers drawn per stratum;
                           taxonomy_degenerate.csv the flips left out and why; taxonomy_calls.csv per judge
                           the questions, distinct prompts, cached and new calls, unparsed verdicts
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.human.task_sets import (
    TAXONOMY_QUESTION_COLUMNS,
    UNPARSED,
    VERDICT_COLUMNS,
)
from postprocess.inverse_scaling.parameters import TaxonomyParameters
from postprocess.inverse_scaling.taxonomy.prompt import (
    LABELS,
    answer_text,
    options_text,
    parse_verdict,
    prompt_for,
    question_text,
)
from postprocess.logs.questions import ShownQuestion
from postprocess.inverse_scaling.taxonomy.sample import TaxonomySample
from invscale.judges import (
    CallEstimate,
    JudgeConfig,
    JudgeRequest,
    estimate_calls,
    parse_error,
    run_judges,
)
from invscale.judges.batch import OnCall

SIDES = ("paper", "random")
CASE_COLUMNS = ["split", "subtask", "question_id", "small", "large"]
SIDE_COLUMNS = ["correct_label", "model_a", "model_b"]
JUDGE_COLUMNS = ["confidence", "explanation", "parse_error", "answer", "finish_reason", "asks"]
VERDICTS_FILE, QUESTIONS_FILE = "taxonomy_verdicts.csv", "taxonomy_questions.jsonl"
STRATA_FILE, SAMPLE_FILE = "taxonomy_strata.csv", "taxonomy_sample.csv"


@dataclass
class TaxonomyResult:
    verdicts: pd.DataFrame  # VERDICT_COLUMNS + JUDGE_COLUMNS + CASE_COLUMNS + SIDE_COLUMNS, per question x judge
    questions: pd.DataFrame  # TAXONOMY_QUESTION_COLUMNS (images as PNG bytes) + benchmark, family
    calls: pd.DataFrame  # per judge: questions, prompts, cached, made, unparsed, ignored_cache_lines


def assign_sides(items: pd.DataFrame, params: TaxonomyParameters) -> pd.DataFrame:
    """The sampled flips with correct_label, model_a and model_b: G.1's fixed roles (the correct, smaller
    model is "Model A"), or with sides "random" a seeded coin per question."""
    if params.sides not in SIDES:
        raise ValueError(f"sides must be one of {SIDES}, got {params.sides!r}")
    if params.sides == "paper":
        labels = [LABELS[0]] * len(items)
    else:
        coins = np.random.default_rng([params.seed, 1]).integers(0, 2, len(items))  # a stream apart from sampling's
        labels = [LABELS[coin] for coin in coins]
    correct_first = [label == LABELS[0] for label in labels]
    return items.assign(correct_label=labels,
                        model_a=np.where(correct_first, items["small"], items["large"]),
                        model_b=np.where(correct_first, items["large"], items["small"]))


def _shown(items: pd.DataFrame, shown: Mapping[tuple, ShownQuestion], variant: str) -> list[ShownQuestion]:
    missing = [key for key in zip(items["benchmark"], items["split"], items["question_id"]) if (*key, variant) not in shown]
    if missing:
        raise ValueError(f"no reloaded question for {missing[0]} ({len(missing)} missing)")
    return [shown[(b, s, q, variant)] for b, s, q in zip(items["benchmark"], items["split"], items["question_id"])]


def taxonomy_requests(items: pd.DataFrame, shown: Mapping[tuple, ShownQuestion], variant: str) -> list[JudgeRequest]:
    """One request per sided flip (assign_sides): the G.1 prompt after the question's images."""
    return [JudgeRequest(prompt_for(s.question, correct, incorrect, label), s.images)
            for s, correct, incorrect, label in zip(_shown(items, shown, variant), items["response_small"],
                                                    items["response_large"], items["correct_label"])]


def pending_calls(items: pd.DataFrame, shown: Mapping[tuple, ShownQuestion], variant: str,
                  judges: Sequence[JudgeConfig], cache_dir: str | Path) -> list[CallEstimate]:
    """The calls each judge would make now, with their estimated cost; makes none."""
    requests = taxonomy_requests(items, shown, variant)
    return estimate_calls([(judge, requests) for judge in judges], cache_dir)


def run_taxonomy(items: pd.DataFrame, shown: Mapping[tuple, ShownQuestion], variant: str,
                 judges: Sequence[JudgeConfig], cache_dir: str | Path, *, on_call: OnCall | None = None
                 ) -> TaxonomyResult:
    """Ask every judge about every sided flip (cached calls are not repeated) and read the verdicts."""
    requests = taxonomy_requests(items, shown, variant)
    runs = run_judges([(judge, requests) for judge in judges], cache_dir, parse=parse_verdict, on_call=on_call)
    rows, calls = [], []
    for judge in judges:
        run = runs[judge.name]
        unparsed = 0
        for item, key in zip(items.itertuples(index=False), run.keys):
            record = run.cache.answers[key]
            error = parse_error(record, parse_verdict)
            verdict = None if error else parse_verdict(record["answer"])
            unparsed += verdict is None
            rows.append({"question_key": item.question_key, "benchmark": item.benchmark, "family": item.family,
                         "judge": judge.name, "label": UNPARSED if verdict is None else verdict.label,
                         "confidence": verdict and verdict.confidence, "explanation": verdict and verdict.explanation,
                         "parse_error": error, "answer": record["answer"], "finish_reason": record.get("finish_reason"),
                         "asks": record.get("asks"), **{c: getattr(item, c) for c in (*CASE_COLUMNS, *SIDE_COLUMNS)}})
        calls.append({"judge": judge.name, "questions": len(items), "prompts": run.distinct, "cached": run.cached,
                      "made": run.made, "unparsed": unparsed, "ignored_cache_lines": run.cache.ignored_lines})
    shown_questions = _shown(items, shown, variant)
    questions = pd.DataFrame({
        "question_key": items["question_key"], "question": [question_text(s.question) for s in shown_questions],
        "options": [options_text(s.question) for s in shown_questions],
        "answer": [answer_text(s.question) for s in shown_questions],
        "response_correct": items["response_small"], "response_incorrect": items["response_large"],
        "images": [list(s.images) for s in shown_questions], "benchmark": items["benchmark"],
        "family": items["family"]})[[*TAXONOMY_QUESTION_COLUMNS, "benchmark", "family"]]
    columns = [*VERDICT_COLUMNS, *JUDGE_COLUMNS, *CASE_COLUMNS, *SIDE_COLUMNS]
    return TaxonomyResult(pd.DataFrame(rows, columns=columns), questions, pd.DataFrame(calls))


def write_taxonomy(result: TaxonomyResult, sample: TaxonomySample, sided: pd.DataFrame, out: Path) -> dict[str, Path]:
    """The files of the module docstring under `out`; returns their paths by name."""
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    paths = {"verdicts": out / VERDICTS_FILE, "questions": out / QUESTIONS_FILE, "sample": out / SAMPLE_FILE,
             "strata": out / STRATA_FILE, "degenerate": out / "taxonomy_degenerate.csv",
             "calls": out / "taxonomy_calls.csv"}
    result.verdicts.to_csv(paths["verdicts"], index=False)
    with open(paths["questions"], "w", encoding="utf-8") as handle:
        for record in result.questions.to_dict("records"):
            images = []
            for image in record["images"]:
                name = f"images/{hashlib.sha256(image).hexdigest()}.png"
                if not (out / name).exists():
                    (out / name).write_bytes(image)
                images.append(name)
            handle.write(json.dumps({**record, "images": images}, ensure_ascii=False) + "\n")
    sided.to_csv(paths["sample"], index=False)
    sample.strata.to_csv(paths["strata"], index=False)
    sample.degenerate.to_csv(paths["degenerate"], index=False)
    result.calls.to_csv(paths["calls"], index=False)
    return paths


def read_taxonomy(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(verdicts, strata) of a `taxonomy` output folder (for the report's taxonomy section)."""
    folder = Path(folder)
    missing = [name for name in (VERDICTS_FILE, STRATA_FILE) if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: no {missing[0]} (not a `python -m postprocess taxonomy` output folder)")
    verdicts = pd.read_csv(folder / VERDICTS_FILE, dtype={"question_key": str, "question_id": str, "label": str})
    return verdicts, pd.read_csv(folder / STRATA_FILE)
