"""CAIT ("Seeing vs. Believing") metrics, computed from the per-question table (their paper layout:
postprocess/render/cait_tables.py).

Input: the ingested per-question table (postprocess.logs.ingest; only rows with benchmark "CAIT" are used)
and a models frame with columns `model` (the table's model key) and `group` (Proprietary | Instruct |
Thinking, the paper's row groups), optionally `name` and `params` (as printed) and `size_class`
("~10B" | "~3B", the paper's sub-groups in Tables 5-7); `cait_models_frame(registry)` builds it from the
registry's CAIT list.

Modes (variant of the record -> the paper's name): direct -> instant (Table 3), cot -> CoT (Table 5),
structured -> structured prompt (Tables 7, 17, 18); swap (options in the other order) is reported only
as a position-bias check. Accuracy and macro F1 (lmms_eval_tasks.metrics.macro_f1) count an unparsed
answer as wrong.

Seconds per question (the Time column) come from each run's results.json, written by lmms-eval (read once
by postprocess.logs.runs, carried by the ingestion's `runs` and `run_tasks` frames):
- `throughput.total_elapsed_time`: the sum of the spans the model wrapper timed around its generate
  calls over the whole run. API wrappers (openai, used for proprietary models and vLLM servers) time
  each request, retries and their waits included, and sum them; local wrappers (vllm, qwen*_vl, ...)
  time each batch and sum the batches' wall time, so with batch size > 1 the value is time per question
  amortised over a batch, not a single question's latency. Model loading, image loading outside the
  timed span, and scoring are not included. Wrappers that log no timing leave it out: Time is then
  empty and the note says why.
- `n-samples[task].effective`: the questions the run asked for that task.
A run with one task: seconds per question = total_elapsed_time / effective. A run with several tasks
(lmms-eval pools all their requests into one generate pass, so their times cannot be told apart): each
task gets total_elapsed_time x its share of the run's output tokens (`efficiency.by_task[task].
total_output_tokens`), divided by its effective count, and the value is flagged `apportioned` (this
assumes time is proportional to generated tokens, which undercounts prompt processing of short answers).
When a model's rows for one mode come from several runs, their seconds and questions are summed.
This is not the paper's Time: CAIT Tables 3 and 5 record each question's own inference time on vLLM. A
run's total over its questions is that only at batch size 1 on vLLM; the table's note names each model's
lmms-eval backend (`time_backend`), so that a column mixing backends and batch sizes says so.

LLM re-evaluation (postprocess.cait.reeval) produces the per-item frame summarised by `reeval_scores`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lmms_eval_tasks.metrics import macro_f1
from postprocess.logs.runs import results_file_of

BENCHMARK = "CAIT"
MODE_NAMES = {"direct": "instant", "swap": "swap", "cot": "CoT", "structured": "structured"}
GROUPS = ("Proprietary", "Instruct", "Thinking")
UNGROUPED = "Ungrouped"  # models missing from the models frame still appear, after the paper's groups
REGISTRY_GROUPS = {"proprietary": "Proprietary", "open_instruct": "Instruct", "open_thinking": "Thinking"}
SIZE_CLASSES = ("~10B", "~3B")
SMALL_MODEL_MAX_PARAMS = 6e9  # the paper puts 3-4B models under "~3B" and 7-16B models under "~10B"
DOMAINS = {"Human-Human": "H-H", "Human-Animal": "H-A", "Animal-Animal": "A-A", "Bio-StillLife": "B-S"}
TABLE16_DOMAINS = ("A-A", "B-S", "H-A", "H-H")
TABLE6_DOMAINS = ("H-H", "H-A", "A-A", "B-S")
GT_PROMPT_LABEL = "GT Prompt (upper bound)"

TIMING_COLUMNS = ["results_file", "model", "task", "backend", "effective", "output_tokens", "run_elapsed_s",
                  "task_elapsed_s", "seconds_per_question", "apportioned", "note"]
REEVAL_ITEM_COLUMNS = ["judge", "model", "scene", "category", "source", "gold", "answer", "finish_reason",
                       "prediction", "correct", "status"]


# ---------------------------------------------------------------------------------------------- rows
def cait_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The CAIT rows of the per-question table with the record's options and details unpacked.

    Columns: model, scene, category, variant, gold, prediction (None when unparsed), correct (unparsed
    is False), response, options (shown order), right_option (the right answer's letter in the direct
    order), common_text, uncommon_text, gt_prompt, task, source_file."""
    rows = table[table["benchmark"].astype(object) == BENCHMARK]
    extras = [json.loads(text) if isinstance(text, str) else {} for text in rows["extra"]]
    details = [extra.get("details") or {} for extra in extras]
    return pd.DataFrame({
        "model": rows["model"].astype(object).to_numpy(),
        "scene": rows["question_id"].astype(object).to_numpy(),
        "category": rows["subtask"].astype(object).to_numpy(),
        "variant": rows["variant"].astype(object).to_numpy(),
        "gold": rows["gold"].astype(object).to_numpy(),
        "prediction": pd.Series([None if pd.isna(p) else p for p in rows["prediction"]], dtype=object).to_numpy(),
        "correct": rows["correct"].fillna(False).astype(bool).to_numpy(),
        "response": ["" if pd.isna(r) else r for r in rows["response"]],
        "options": [extra.get("options") for extra in extras],
        "right_option": [d.get("right_option") for d in details],
        "common_text": [d.get("common_text") for d in details],
        "uncommon_text": [d.get("uncommon_text") for d in details],
        "gt_prompt": [d.get("gt_prompt") for d in details],
        "task": rows["task"].astype(object).to_numpy(),
        "source_file": rows["source_file"].astype(object).to_numpy(),
    })


def cait_models_frame(registry) -> pd.DataFrame:
    """The models frame of the CAIT tables: model key, name, params, group, size_class. The CAIT paper's
    models (registry.cait_frame(), key CaitModel.key) come with their paper group; any other registry model
    (the 19 of the inverse-scaling paper, or one of --extra-models) is grouped by its family, with its size and
    no size class (the paper's ~3B / ~10B classes describe its own models only)."""
    cait = registry.cait_frame()
    size_class = [None if pd.isna(total) else ("~3B" if total < SMALL_MODEL_MAX_PARAMS else "~10B")
                  for total in cait["total_params"]]
    paper = pd.DataFrame({"model": cait["key"], "name": cait["name"],
                          "params": [None if pd.isna(p) else p for p in cait["params"]],
                          "group": cait["group"].map(REGISTRY_GROUPS), "size_class": size_class})
    others = registry.models_frame()
    others = others[~others["model"].isin(set(paper["model"]))]
    by_family = pd.DataFrame({"model": others["model"], "name": others["model"], "params": others["size"].astype(object),
                              "group": others["family"], "size_class": None})
    return pd.concat([paper, by_family], ignore_index=True)[["model", "name", "params", "group", "size_class"]]


def ordered_models(models: pd.DataFrame, present: Iterable[str]) -> pd.DataFrame:
    """The models frame restricted to `present` models, in group order then the frame's own order; models
    the frame does not list are appended under UNGROUPED; a missing name is the model key."""
    present = list(dict.fromkeys(present))
    frame = models[models["model"].isin(present)].copy()
    unknown = [m for m in present if m not in set(frame["model"])]
    if unknown:
        frame = pd.concat([frame, pd.DataFrame({"model": unknown, "group": UNGROUPED})], ignore_index=True)
    for column in ("name", "params", "size_class"):
        if column not in frame:
            frame[column] = None
    frame["name"] = [m if pd.isna(n) else n for m, n in zip(frame["model"], frame["name"])]
    rank = {group: i for i, group in enumerate((*GROUPS, UNGROUPED))}
    frame["_rank"] = [rank.get(g, len(rank)) for g in frame["group"]]
    frame = frame.sort_values("_rank", kind="stable").drop(columns="_rank")
    return frame.reset_index(drop=True)[["model", "name", "params", "group", "size_class"]]


# ---------------------------------------------------------------------------------------------- metrics
def _scores(group: pd.DataFrame) -> dict:
    return {
        "n": len(group),
        "accuracy": float(group["correct"].mean()) if len(group) else math.nan,
        "macro_f1": macro_f1(list(group["prediction"]), list(group["gold"])) if len(group) else math.nan,
        "unparsed": int(group["prediction"].isna().sum()),
    }


def mode_metrics(table: pd.DataFrame, timing: pd.DataFrame | None = None) -> pd.DataFrame:
    """Accuracy, macro F1 and unparsed count per model x variant (direct, swap, cot, structured), with
    seconds per question and the apportioned flag when `timing` (run_timing) is given."""
    rows = cait_rows(table)
    rows = rows[rows["variant"].isin(list(MODE_NAMES))]
    records = [{"model": model, "variant": variant, "mode": MODE_NAMES[variant], **_scores(group)}
               for (model, variant), group in rows.groupby(["model", "variant"], sort=False)]
    frame = pd.DataFrame(records, columns=["model", "variant", "mode", "n", "accuracy", "macro_f1", "unparsed"])
    if timing is None:
        return frame
    return frame.merge(seconds_per_question(table, timing), on=["model", "variant"], how="left")


def position_bias(table: pd.DataFrame) -> pd.DataFrame:
    """Per model with both a direct and a swap run: accuracy in each, the share of parsed answers that are
    "A" in each (the right answer is at A for half the scenes, so a share far from 0.5 is a position
    preference), and the share of scenes asked in both runs on which the model chose the same sentence
    (an unparsed answer chose none, so it never agrees)."""
    rows = cait_rows(table)
    records = []
    for model, group in rows.groupby("model", sort=False):
        direct, swap = (group[group["variant"] == v] for v in ("direct", "swap"))
        if direct.empty or swap.empty:
            continue
        paired = direct.merge(swap, on="scene", suffixes=("_direct", "_swap"))
        both_parsed = paired["prediction_direct"].notna() & paired["prediction_swap"].notna()
        # gold is the uncommon sentence's letter in both orders, so "same sentence" = same correctness
        same = both_parsed & (paired["correct_direct"] == paired["correct_swap"])
        records.append({
            "model": model,
            "accuracy_direct": float(direct["correct"].mean()), "accuracy_swap": float(swap["correct"].mean()),
            "share_a_direct": _share_a(direct), "share_a_swap": _share_a(swap),
            "paired_scenes": len(paired), "same_sentence": float(same.mean()) if len(paired) else math.nan,
        })
    return pd.DataFrame(records, columns=["model", "accuracy_direct", "accuracy_swap", "share_a_direct",
                                          "share_a_swap", "paired_scenes", "same_sentence"])


def _share_a(rows: pd.DataFrame) -> float:
    parsed = rows["prediction"].dropna()
    return float((parsed == "A").mean()) if len(parsed) else math.nan


def domain_accuracy(table: pd.DataFrame, variant: str = "direct") -> pd.DataFrame:
    """Table 16: accuracy per model (rows) and domain (columns A-A, B-S, H-A, H-H) for one variant."""
    rows = cait_rows(table)
    rows = rows[rows["variant"] == variant]
    domains = rows["category"].map(DOMAINS).fillna(rows["category"])
    frame = rows.assign(domain=domains).pivot_table(index="model", columns="domain", values="correct",
                                                    aggfunc="mean", sort=False)
    columns = [d for d in TABLE16_DOMAINS if d in frame.columns] + sorted(set(frame.columns) - set(TABLE16_DOMAINS))
    return frame.reindex(columns=columns).astype(float).rename_axis(columns=None).reset_index()


def group_domain_accuracy(domains: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """Table 6: the mean over a group's models (group x size class) of their per-domain accuracy."""
    frame = ordered_models(models, domains["model"]).merge(domains, on="model")
    value_columns = [c for c in TABLE6_DOMAINS if c in domains.columns]
    keys = ["group", "size_class"]
    means = frame.groupby(keys, sort=False, dropna=False)[value_columns].mean()
    counts = frame.groupby(keys, sort=False, dropna=False).size().rename("models")
    return means.join(counts).reset_index()


def group_mode_summary(metrics: pd.DataFrame, models: pd.DataFrame, variant: str = "structured",
                       baseline: str = "direct") -> pd.DataFrame:
    """Table 7: mean accuracy and F1 per group x size class under `variant`, and the change from
    `baseline` in percentage points over the same models (those with both runs). The paper does not
    say which baseline its arrows compare with; instant (direct) is ours."""
    columns = ["group", "size_class", "models", "accuracy", "macro_f1", "accuracy_change", "macro_f1_change"]
    if variant not in set(metrics["variant"]):
        return pd.DataFrame(columns=columns)
    wide = metrics.pivot_table(index="model", columns="variant", values=["accuracy", "macro_f1"], sort=False)
    frame = ordered_models(models, wide.index).set_index("model")
    for metric in ("accuracy", "macro_f1"):
        frame[metric] = wide[(metric, variant)]
        base = wide[(metric, baseline)] if (metric, baseline) in wide.columns else np.nan
        frame[f"{metric}_change"] = (wide[(metric, variant)] - base) * 100
    frame = frame[frame["accuracy"].notna()]
    grouped = frame.groupby(["group", "size_class"], sort=False, dropna=False)
    summary = grouped[["accuracy", "macro_f1", "accuracy_change", "macro_f1_change"]].mean()
    return summary.join(grouped.size().rename("models")).reset_index()[columns]


# ---------------------------------------------------------------------------------------------- timing
def run_timing(runs: pd.DataFrame, run_tasks: pd.DataFrame) -> pd.DataFrame:
    """Timing per (results file, task) of every ingested run (IngestResult.runs and .run_tasks; rules in
    the module docstring)."""
    elapsed = runs.set_index("results_file")["elapsed_s"]
    backend = runs.set_index("results_file")["lmms_eval_model"]
    records = []
    for results_file, tasks in run_tasks.groupby("results_file", sort=False):
        run_elapsed = elapsed.get(results_file)
        tokens = dict(zip(tasks["task"], tasks["output_tokens"]))
        total_tokens = tasks["output_tokens"].sum() if tasks["output_tokens"].notna().all() else None
        apportioned = len(tasks) > 1
        for task, model, asked in zip(tasks["task"], tasks["model"], tasks["effective"]):
            if run_elapsed is None or pd.isna(run_elapsed):
                seconds, note = math.nan, "results.json has no throughput.total_elapsed_time (the wrapper logs no timing)"
            elif not apportioned:
                seconds, note = float(run_elapsed), ""
            elif total_tokens:
                seconds = float(run_elapsed) * tokens[task] / total_tokens
                note = f"apportioned by output tokens ({tokens[task]:g} of {total_tokens:g}) over {len(tasks)} tasks"
            else:
                seconds, note = math.nan, f"{len(tasks)} tasks in one run and no output-token counts to apportion by"
            asked = None if pd.isna(asked) else int(asked)
            records.append({
                "results_file": results_file, "model": model, "task": task,
                "backend": backend.get(results_file), "effective": asked,
                "output_tokens": tokens[task], "run_elapsed_s": run_elapsed, "task_elapsed_s": seconds,
                "seconds_per_question": seconds / asked if asked else math.nan,
                "apportioned": apportioned and not math.isnan(seconds), "note": note,
            })
    return pd.DataFrame(records, columns=TIMING_COLUMNS)


def seconds_per_question(table: pd.DataFrame, timing: pd.DataFrame) -> pd.DataFrame:
    """Seconds per question per model x variant: the runs that supplied the rows, seconds and questions
    summed; NaN when any of those runs has no timing."""
    rows = cait_rows(table)
    used = rows.assign(results_file=rows["source_file"].map(lambda path: str(results_file_of(path))))[
        ["model", "variant", "results_file", "task"]].drop_duplicates()
    merged = used.merge(timing[["results_file", "task", "backend", "effective", "task_elapsed_s", "apportioned",
                                "note"]],
                        on=["results_file", "task"], how="left")
    records = []
    for (model, variant), group in merged.groupby(["model", "variant"], sort=False):
        complete = group["task_elapsed_s"].notna().all() and group["effective"].notna().all()
        records.append({
            "model": model, "variant": variant,
            "seconds_per_question": group["task_elapsed_s"].sum() / group["effective"].sum() if complete else math.nan,
            "time_apportioned": bool(group["apportioned"].eq(True).any()),
            "time_backend": ", ".join(sorted(set(group["backend"].dropna().astype(str)))),
            "timing_note": "; ".join(n for n in group["note"].fillna("no results.json timing found") if n),
        })
    return pd.DataFrame(records, columns=["model", "variant", "seconds_per_question", "time_apportioned",
                                          "time_backend", "timing_note"])


# ---------------------------------------------------------------------------------------------- re-eval
def reeval_scores(items: pd.DataFrame) -> pd.DataFrame:
    """Accuracy and macro F1 per judge x model from re-evaluation items (postprocess.reeval); the
    GT-prompt items are the row GT_PROMPT_LABEL. Unparsed judge answers and empty descriptions count wrong."""
    labelled = items.assign(model=[GT_PROMPT_LABEL if s == "gt_prompt" else m
                                   for s, m in zip(items["source"], items["model"])])
    labelled = labelled.assign(correct=labelled["correct"].astype(bool))
    records = [{"judge": judge, "model": model, **_scores(group)}
               for (judge, model), group in labelled.groupby(["judge", "model"], sort=False)]
    return pd.DataFrame(records, columns=["judge", "model", "n", "accuracy", "macro_f1", "unparsed"])


def reeval_mean(scores: pd.DataFrame) -> pd.DataFrame:
    """Table 3's LLM-re-Eval columns: accuracy and F1 per model averaged over the judges."""
    grouped = scores.groupby("model", sort=False)
    return grouped[["accuracy", "macro_f1"]].mean().join(grouped.size().rename("judges")).reset_index()


def reeval_by_judge(scores: pd.DataFrame, value: str = "accuracy") -> pd.DataFrame:
    """Table 4: one row per model (the GT-prompt bound first), one column per judge, and their mean."""
    wide = scores.pivot_table(index="model", columns="judge", values=value, sort=False)
    wide["Mean"] = wide.mean(axis=1)
    order = [GT_PROMPT_LABEL] if GT_PROMPT_LABEL in wide.index else []
    order += [m for m in wide.index if m != GT_PROMPT_LABEL]
    return wide.reindex(order).rename_axis(columns=None).reset_index()


@dataclass
class CaitNumbers:
    """Every CAIT metric frame the report lays out (render/cait_tables.py)."""
    models: pd.DataFrame  # cait_models_frame
    metrics: pd.DataFrame  # mode_metrics with timing
    domains: pd.DataFrame  # domain_accuracy (direct)
    group_domains: pd.DataFrame  # group_domain_accuracy
    structured_groups: pd.DataFrame  # group_mode_summary (structured vs direct)
    position_bias: pd.DataFrame
    reeval_scores: pd.DataFrame | None  # per judge x model, when re-evaluation items were given
    reeval_items: pd.DataFrame | None


def cait_numbers(table: pd.DataFrame, models: pd.DataFrame, timing: pd.DataFrame | None,
                 reeval_items: pd.DataFrame | None) -> CaitNumbers:
    metrics = mode_metrics(table, timing)
    domains = domain_accuracy(table, "direct")
    has_reeval = reeval_items is not None and not reeval_items.empty
    return CaitNumbers(
        models=models, metrics=metrics, domains=domains,
        group_domains=group_domain_accuracy(domains, models) if not domains.empty else domains,
        structured_groups=group_mode_summary(metrics, models),
        position_bias=position_bias(table),
        reeval_scores=reeval_scores(reeval_items) if has_reeval else None,
        reeval_items=reeval_items if has_reeval else None,
    )
