"""CAIT LLM re-evaluation ("Seeing vs. Believing", Section 4.2 "LLM-re-eval", Tables 3-4).

For every judge and every (model, scene) with a `cait_describe` record, the judge answers the CAIT
question (the two options in the scene's direct-order A/B) from the model's description alone; once per
judge and scene it answers from the scene's `gt_prompt` (the text the image was generated from: the
upper bound). Reasoning blocks (<think>...</think>) are removed from descriptions first, so the judge
reads what the model concluded it saw. The judge's answer is parsed with the project's extraction
(extract_choice); an unparsable answer counts as wrong and is reported (status "unparsed"), never
guessed. An empty description is counted wrong without a call (status "empty_description").

The judges, their cache, retries, rate limit and resume are invscale/judges (one client for every
judged use); the judges file schema is in invscale/judges/config.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.extraction import extract_choice, strip_reasoning
from postprocess.cait.metrics import REEVAL_ITEM_COLUMNS, cait_rows, reeval_scores
from invscale.judges import CallEstimate, JudgeConfig, JudgeRequest, estimate_calls, run_judges
from invscale.judges.batch import OnCall

# The paper does not print its re-evaluation prompt; ours wraps the CAIT question (Table 13) around the text.
JUDGE_PROMPT = (
    "Description of an image:\n{description}\n\n"
    "Which of the following option better describes the image?\n"
    "Option A: {option_a}\n"
    "Option B: {option_b}\n"
    "Important Note: Answer directly with the option letter (A or B) only."
)


def direct_options(right_option: str, uncommon_text: str, common_text: str) -> list[str]:
    """The two sentences in the scene's direct order: the right (uncommon) one at `right_option`."""
    return [uncommon_text, common_text] if right_option == "A" else [common_text, uncommon_text]


def reeval_questions(table: pd.DataFrame, include_gt_prompt: bool = True) -> pd.DataFrame:
    """What the judges are asked, judge-independent: one row per (model, scene) with a describe record
    (source "description") and, with include_gt_prompt, one per scene of those (source "gt_prompt",
    model None). Columns: model, scene, category, source, text, options, gold."""
    rows = cait_rows(table)
    described = rows[rows["variant"] == "describe"]
    if described.empty:
        raise ValueError("no cait_describe records: run the cait_describe task first (it writes the "
                         "descriptions the judges answer from)")
    lacking = described[described["right_option"].isna() | described["uncommon_text"].isna()
                        | described["common_text"].isna() | described["gt_prompt"].isna()]
    if not lacking.empty:
        first = lacking.iloc[0]
        raise ValueError(f"{len(lacking)} describe record(s) lack details.right_option/common_text/uncommon_text/"
                         f"gt_prompt, e.g. scene {first['scene']!r} of {first['model']} ({first['source_file']})")
    records = [{"model": r.model, "scene": r.scene, "category": r.category, "source": "description",
                "text": strip_reasoning(r.response),
                "options": direct_options(r.right_option, r.uncommon_text, r.common_text), "gold": r.right_option}
               for r in described.itertuples()]
    if include_gt_prompt:
        scenes = described.drop_duplicates("scene")
        records += [{"model": None, "scene": r.scene, "category": r.category, "source": "gt_prompt",
                     "text": r.gt_prompt.strip(),
                     "options": direct_options(r.right_option, r.uncommon_text, r.common_text),
                     "gold": r.right_option} for r in scenes.itertuples()]
    return pd.DataFrame(records, columns=["model", "scene", "category", "source", "text", "options", "gold"])


def judge_prompt(text: str, options: Sequence[str]) -> str:
    return JUDGE_PROMPT.format(description=text, option_a=options[0], option_b=options[1])


@dataclass
class ReevalResult:
    items: pd.DataFrame  # REEVAL_ITEM_COLUMNS, one row per judge x question
    scores: pd.DataFrame  # cait.reeval_scores(items)
    calls: pd.DataFrame  # per judge: questions, prompts (distinct), cached, made


def _work(judges: Sequence[JudgeConfig], questions: pd.DataFrame) -> list[tuple[JudgeConfig, list[JudgeRequest]]]:
    """Each judge's requests: one per question with a non-empty text (an empty description is not asked)."""
    requests = [JudgeRequest(judge_prompt(text, options)) for text, options in zip(questions["text"], questions["options"])
                if text]
    return [(judge, requests) for judge in judges]


def pending_calls(table: pd.DataFrame, judges: Sequence[JudgeConfig], cache_dir: str | Path,
                  include_gt_prompt: bool = True) -> list[CallEstimate]:
    """The calls each judge would make now, with their estimated cost; makes none."""
    return estimate_calls(_work(judges, reeval_questions(table, include_gt_prompt)), cache_dir)


def run_reeval(table: pd.DataFrame, judges: Sequence[JudgeConfig], cache_dir: str | Path, *,
               include_gt_prompt: bool = True, on_call: OnCall | None = None) -> ReevalResult:
    """Ask every judge every re-evaluation question (cached calls are not repeated) and score the answers."""
    questions = reeval_questions(table, include_gt_prompt)
    runs = run_judges(_work(judges, questions), cache_dir, on_call=on_call)
    items, calls = [], []
    for judge in judges:
        run = runs[judge.name]
        calls.append({"judge": judge.name, "questions": len(questions), "prompts": run.distinct,
                      "cached": run.cached, "made": run.made, "ignored_cache_lines": run.cache.ignored_lines})
        keys = iter(run.keys)
        for question in questions.itertuples():
            record = run.cache.answers[next(keys)] if question.text else None
            items.append({"judge": judge.name, "model": question.model, "scene": question.scene,
                          "category": question.category, "source": question.source, "gold": question.gold,
                          **_judged(record, question.options, question.gold)})
    frame = pd.DataFrame(items, columns=REEVAL_ITEM_COLUMNS)
    return ReevalResult(items=frame, scores=reeval_scores(frame), calls=pd.DataFrame(calls))


def _judged(record: dict | None, options: list[str], gold: str) -> dict:
    if record is None:
        return {"answer": None, "finish_reason": None, "prediction": None, "correct": False,
                "status": "empty_description"}
    prediction = extract_choice(record["answer"], options).prediction
    return {"answer": record["answer"], "finish_reason": record.get("finish_reason"), "prediction": prediction,
            "correct": prediction == gold, "status": "answered" if prediction else "unparsed"}


def write_reeval(result: ReevalResult, out: Path) -> dict[str, Path]:
    """OUT/cait_reeval_items.csv, cait_reeval_scores.csv, cait_reeval_calls.csv and cait_reeval.md."""
    from postprocess.cait.metrics import reeval_by_judge, reeval_mean

    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / f"cait_reeval_{name}.csv" for name in ("items", "scores", "calls")}
    result.items.to_csv(paths["items"], index=False)
    result.scores.to_csv(paths["scores"], index=False)
    result.calls.to_csv(paths["calls"], index=False)
    paths["markdown"] = out / "cait_reeval.md"
    sections = [("Accuracy per judge (Table 4)", reeval_by_judge(result.scores, "accuracy")),
                ("Macro F1 per judge", reeval_by_judge(result.scores, "macro_f1")),
                ("Mean over judges (Table 3, LLM-re-Eval)", reeval_mean(result.scores))]
    text = "\n".join(f"**{title}**\n\n{frame.to_markdown(index=False, floatfmt='.3f')}\n" for title, frame in sections)
    paths["markdown"].write_text(text, encoding="utf-8")
    return paths


def read_reeval_items(out: Path) -> pd.DataFrame:
    """The per-item frame a `cait-reeval` run wrote to OUT (for the report's CAIT section)."""
    path = Path(out) / "cait_reeval_items.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no cait-reeval output here (run `python -m postprocess cait-reeval` first)")
    return pd.read_csv(path, dtype={"answer": "string", "prediction": "string"})
