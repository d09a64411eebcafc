"""CAIT ("Seeing vs. Believing") metrics and tables, computed from the per-question table.

Input: the ingested per-question table (postprocess.ingest; only rows with benchmark "CAIT" are used)
and a models frame with columns `model` (the table's model key) and `group` (Proprietary | Instruct |
Thinking, the paper's row groups), optionally `name` and `params` (as printed) and `size_class`
("~10B" | "~3B", the paper's sub-groups in Tables 5-7); `cait_models_frame(registry)` builds it from the
registry's CAIT list.

Modes (variant of the record -> the paper's name): direct -> instant (Table 3), cot -> CoT (Table 5),
structured -> structured prompt (Tables 7, 17, 18); swap (options in the other order) is reported only
as a position-bias check. Accuracy and macro F1 (lmms_eval_tasks.metrics.macro_f1) count an unparsed
answer as wrong.

Seconds per question (the Time column) come from each run's results.json, written by lmms-eval:
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

LLM re-evaluation (postprocess.reeval) produces the per-item frame summarised by `reeval_scores`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from lmms_eval_tasks.metrics import macro_f1
from postprocess.tables import Table

BENCHMARK = "CAIT"
MODE_NAMES = {"direct": "instant", "swap": "swap", "cot": "CoT", "structured": "structured"}
GROUPS = ("Proprietary", "Instruct", "Thinking")
UNGROUPED = "Ungrouped"  # models missing from the models frame still appear, after the paper's groups
REGISTRY_GROUPS = {"proprietary": "Proprietary", "open_instruct": "Instruct", "open_thinking": "Thinking"}
OPEN_GROUPS = ("Instruct", "Thinking")  # the paper bolds the best value inside these groups
SIZE_CLASSES = ("~10B", "~3B")
SMALL_MODEL_MAX_PARAMS = 6e9  # the paper puts 3-4B models under "~3B" and 7-16B models under "~10B"
DOMAINS = {"Human-Human": "H-H", "Human-Animal": "H-A", "Animal-Animal": "A-A", "Bio-StillLife": "B-S"}
TABLE16_DOMAINS = ("A-A", "B-S", "H-A", "H-H")
TABLE6_DOMAINS = ("H-H", "H-A", "A-A", "B-S")
GT_PROMPT_LABEL = "GT Prompt (upper bound)"
MISSING = "–"
APPORTIONED_MARK = "†"

TIMING_COLUMNS = ["results_file", "model", "task", "effective", "output_tokens", "run_elapsed_s", "task_elapsed_s",
                  "seconds_per_question", "apportioned", "note"]
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
    """The CAIT paper's models (registry.cait_frame()) as a models frame: model key (CaitModel.key), name,
    params, group, size_class."""
    cait = registry.cait_frame()
    size_class = [None if pd.isna(total) else ("~3B" if total < SMALL_MODEL_MAX_PARAMS else "~10B")
                  for total in cait["total_params"]]
    return pd.DataFrame({"model": cait["key"], "name": cait["name"],
                         "params": [None if pd.isna(p) else p for p in cait["params"]],
                         "group": cait["group"].map(REGISTRY_GROUPS), "size_class": size_class},
                        columns=["model", "name", "params", "group", "size_class"])


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
def timing_from_results(results_file: str | Path, model: str | None = None) -> list[dict]:
    """One timing record per task of one lmms-eval results.json (rules in the module docstring)."""
    results = json.loads(Path(results_file).read_text(encoding="utf-8"))
    effective = {task: (counts or {}).get("effective") for task, counts in (results.get("n-samples") or {}).items()}
    elapsed = (results.get("throughput") or {}).get("total_elapsed_time")
    by_task = (results.get("efficiency") or {}).get("by_task") or {}
    tokens = {task: (by_task.get(task) or {}).get("total_output_tokens") for task in effective}
    total_tokens = sum(t for t in tokens.values() if t) if all(t is not None for t in tokens.values()) else None
    records = []
    for task, asked in sorted(effective.items()):
        apportioned = len(effective) > 1
        if elapsed is None:
            seconds, note = math.nan, "results.json has no throughput.total_elapsed_time (the wrapper logs no timing)"
        elif not apportioned:
            seconds, note = float(elapsed), ""
        elif total_tokens:
            seconds = float(elapsed) * tokens[task] / total_tokens
            note = f"apportioned by output tokens ({tokens[task]:g} of {total_tokens:g}) over {len(effective)} tasks"
        else:
            seconds, note = math.nan, f"{len(effective)} tasks in one run and no output-token counts to apportion by"
        records.append({
            "results_file": str(results_file), "model": model, "task": task, "effective": asked,
            "output_tokens": tokens[task], "run_elapsed_s": elapsed, "task_elapsed_s": seconds,
            "seconds_per_question": seconds / asked if asked else math.nan,
            "apportioned": apportioned and not math.isnan(seconds), "note": note,
        })
    return records


def run_timing(runs: pd.DataFrame) -> pd.DataFrame:
    """Timing per (results file, task) of every ingested run (IngestResult.runs)."""
    ingested = runs[runs["status"] == "ingested"]
    records = [record for results_file, model in zip(ingested["results_file"], ingested["model"])
               for record in timing_from_results(results_file, model)]
    return pd.DataFrame(records, columns=TIMING_COLUMNS)


def results_file_of(samples_file: str) -> str:
    """lmms-eval's `<PREFIX>_samples_<task>.jsonl` belongs to `<PREFIX>_results.json` in the same folder."""
    path = Path(samples_file)
    return str(path.with_name(path.name.split("_samples_", 1)[0] + "_results.json"))


def seconds_per_question(table: pd.DataFrame, timing: pd.DataFrame) -> pd.DataFrame:
    """Seconds per question per model x variant: the runs that supplied the rows, seconds and questions
    summed; NaN when any of those runs has no timing."""
    rows = cait_rows(table)
    used = rows.assign(results_file=rows["source_file"].map(results_file_of))[
        ["model", "variant", "results_file", "task"]].drop_duplicates()
    merged = used.merge(timing[["results_file", "task", "effective", "task_elapsed_s", "apportioned", "note"]],
                        on=["results_file", "task"], how="left")
    records = []
    for (model, variant), group in merged.groupby(["model", "variant"], sort=False):
        complete = group["task_elapsed_s"].notna().all() and group["effective"].notna().all()
        records.append({
            "model": model, "variant": variant,
            "seconds_per_question": group["task_elapsed_s"].sum() / group["effective"].sum() if complete else math.nan,
            "time_apportioned": bool(group["apportioned"].eq(True).any()),
            "timing_note": "; ".join(n for n in group["note"].fillna("no results.json timing found") if n),
        })
    return pd.DataFrame(records, columns=["model", "variant", "seconds_per_question", "time_apportioned",
                                          "timing_note"])


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


# ---------------------------------------------------------------------------------------------- tables
def _fmt(value: object, digits: int = 3) -> str:
    return MISSING if value is None or pd.isna(value) else f"{value:.{digits}f}"


def _best_in_open_groups(values: pd.DataFrame, groups: pd.Series, columns: list[str]) -> pd.DataFrame:
    """Mask of the highest value per column inside each open-source group (the paper's bold)."""
    mask = pd.DataFrame(False, index=values.index, columns=values.columns)
    for group in OPEN_GROUPS:
        members = groups == group
        for column in columns:
            column_values = pd.to_numeric(values.loc[members, column], errors="coerce")
            if column_values.notna().any():
                mask.loc[members, column] = column_values == column_values.max()
    return mask


def _model_columns(models: pd.DataFrame) -> dict[str, list]:
    return {"Group": list(models["group"]), "Model": list(models["name"]),
            "Param": [MISSING if pd.isna(p) else p for p in models["params"]]}


def _unparsed_note(metrics: pd.DataFrame, variants: Iterable[str]) -> str:
    shown = metrics[metrics["variant"].isin(list(variants)) & (metrics["unparsed"] > 0)]
    if shown.empty:
        return ""
    parts = [f"{m} ({MODE_NAMES[v]}) {u}/{n}" for m, v, u, n in
             zip(shown["model"], shown["variant"], shown["unparsed"], shown["n"])]
    return "Unparsed answers, counted wrong: " + ", ".join(parts) + "."


def _mode_table(metrics: pd.DataFrame, models: pd.DataFrame, variant: str, name: str, title: str,
                with_time: bool, reeval: pd.DataFrame | None = None) -> Table | None:
    chosen = metrics[metrics["variant"] == variant].set_index("model")
    present = list(chosen.index) + ([] if reeval is None else [m for m in reeval["model"] if m != GT_PROMPT_LABEL])
    if not present:
        return None
    rows = ordered_models(models, present)
    values = pd.DataFrame({"Acc": chosen["accuracy"].reindex(rows["model"]).to_numpy(),
                           "F1": chosen["macro_f1"].reindex(rows["model"]).to_numpy()})
    display = pd.DataFrame(_model_columns(rows))
    display["Acc"], display["F1"] = values["Acc"].map(_fmt), values["F1"].map(_fmt)
    notes = []
    if with_time and "seconds_per_question" in chosen:  # only when run timing was given
        seconds = chosen["seconds_per_question"].reindex(rows["model"])
        apportioned = chosen["time_apportioned"].reindex(rows["model"])
        display["Time (s)"] = [_fmt(s) + (APPORTIONED_MARK if not pd.isna(a) and bool(a) else "")
                               for s, a in zip(seconds, apportioned)]
        notes.append("Time: seconds per question from the run's results.json (total_elapsed_time / questions); "
                     f"{APPORTIONED_MARK} apportioned from a multi-task run by output tokens.")
        untimed = chosen[chosen["seconds_per_question"].isna()]
        if not untimed.empty:
            by_reason = untimed.groupby("timing_note", sort=False).groups
            notes += [f"No time ({reason}): {', '.join(names)}." for reason, names in by_reason.items()]
    if reeval is not None:
        mean = reeval.set_index("model")
        for column, source in (("LLM-re-Eval Acc", "accuracy"), ("LLM-re-Eval F1", "macro_f1")):
            values[column] = mean[source].reindex(rows["model"]).to_numpy()
            display[column] = values[column].map(_fmt)
        if GT_PROMPT_LABEL in mean.index:
            bound = {column: MISSING for column in display.columns}
            bound.update({"Group": "Upper bound", "Model": GT_PROMPT_LABEL,
                          "LLM-re-Eval Acc": _fmt(mean.at[GT_PROMPT_LABEL, "accuracy"]),
                          "LLM-re-Eval F1": _fmt(mean.at[GT_PROMPT_LABEL, "macro_f1"])})
            display = pd.concat([pd.DataFrame([bound]), display], ignore_index=True)
            values = pd.concat([pd.DataFrame([{c: np.nan for c in values.columns}]), values], ignore_index=True)
        notes.append("LLM-re-Eval: mean over the judges of the judge's answer from the model's description.")
    groups = display["Group"]
    bold = _best_in_open_groups(values, groups, list(values.columns)).reindex(columns=display.columns, fill_value=False)
    notes.append(_unparsed_note(metrics, [variant]))
    return Table(name, title, display, bold=bold, note=" ".join(n for n in notes if n))


def _domain_tables(table: pd.DataFrame, models: pd.DataFrame, variant: str) -> list[Table]:
    domains = domain_accuracy(table, variant)
    if domains.empty:
        return []
    rows = ordered_models(models, domains["model"])
    per_model = rows.merge(domains, on="model")
    columns = [c for c in domains.columns if c != "model"]
    display = pd.DataFrame({**_model_columns(rows), "Size": [MISSING if pd.isna(s) else s for s in rows["size_class"]]})
    for column in columns:
        display[column] = per_model[column].map(_fmt)
    groups = group_domain_accuracy(domains, models)
    group_display = pd.DataFrame({"Group": groups["group"],
                                  "Size": [MISSING if pd.isna(s) else s for s in groups["size_class"]]})
    for column in (c for c in TABLE6_DOMAINS if c in groups.columns):
        group_display[column] = groups[column].map(_fmt)
    group_display["Models"] = groups["models"].astype(int)
    legend = "A-A: Animal-Animal, B-S: Bio-StillLife, H-A: Human-Animal, H-H: Human-Human."
    mode = MODE_NAMES[variant]
    return [
        Table("cait_table16_domains", f"CAIT accuracy per domain and model ({mode}; paper Table 16)", display,
              note=legend),
        Table("cait_table06_domain_groups", f"CAIT mean accuracy per domain and model group ({mode}; paper Table 6)",
              group_display, note=f"Mean over the group's models of their domain accuracy. {legend}"),
    ]


def _structured_group_table(metrics: pd.DataFrame, models: pd.DataFrame) -> Table | None:
    summary = group_mode_summary(metrics, models)
    if summary.empty:
        return None

    def with_change(value: float, change: float) -> str:
        return _fmt(value) if pd.isna(change) else f"{_fmt(value)} ({change:+.1f})"

    display = pd.DataFrame({
        "Group": summary["group"], "Size": [MISSING if pd.isna(s) else s for s in summary["size_class"]],
        "Models": summary["models"].astype(int),
        "Acc": [with_change(v, c) for v, c in zip(summary["accuracy"], summary["accuracy_change"])],
        "F1": [with_change(v, c) for v, c in zip(summary["macro_f1"], summary["macro_f1_change"])],
    })
    return Table("cait_table07_structured_groups", "CAIT mean accuracy and F1 with the structured prompt (paper Table 7)",
                 display, note="In brackets: change from the instant (direct) prompt over the same models, in "
                               "percentage points (the paper does not state its baseline).")


def _position_bias_table(table: pd.DataFrame, models: pd.DataFrame) -> Table | None:
    bias = position_bias(table)
    if bias.empty:
        return None
    rows = ordered_models(models, bias["model"])
    bias = rows[["model"]].merge(bias, on="model")
    display = pd.DataFrame(_model_columns(rows))
    for column, source in (("Acc (instant)", "accuracy_direct"), ("Acc (swap)", "accuracy_swap"),
                           ("Share A (instant)", "share_a_direct"), ("Share A (swap)", "share_a_swap"),
                           ("Same sentence", "same_sentence")):
        display[column] = bias[source].map(_fmt)
    display["Scenes"] = bias["paired_scenes"].astype(int)
    return Table("cait_position_bias", "CAIT position-bias check: options in the shown order vs swapped", display,
                 note="Share A: share of parsed answers that are A (the right answer is at A for half the scenes). "
                      "Same sentence: share of scenes in both runs on which the model chose the same sentence; "
                      "an unparsed answer never agrees.")


def _judge_table(items: pd.DataFrame, models: pd.DataFrame) -> Table:
    scores = reeval_scores(items)
    wide = reeval_by_judge(scores)
    rows = ordered_models(models, [m for m in wide["model"] if m != GT_PROMPT_LABEL])
    order = [GT_PROMPT_LABEL] * (GT_PROMPT_LABEL in set(wide["model"])) + list(rows["model"])
    wide = wide.set_index("model").reindex(order)
    # Table 4 prints the size in the model's name ("Qwen3-VL-Instruct-8B")
    names = {m: n if pd.isna(p) else f"{n}-{p}" for m, n, p in zip(rows["model"], rows["name"], rows["params"])}
    group_of = {**dict(zip(rows["model"], rows["group"])), GT_PROMPT_LABEL: "Upper bound"}
    groups = [group_of[m] for m in order]
    display = pd.DataFrame({"Group": groups, "Model": [names.get(m, m) for m in order]})
    for column in wide.columns:
        display[column] = wide[column].map(_fmt).to_numpy()
    values = wide.reset_index(drop=True)
    bold = _best_in_open_groups(values, pd.Series(groups), list(values.columns)).reindex(
        columns=display.columns, fill_value=False)
    unparsed = scores[scores["unparsed"] > 0]
    note = "Accuracy of each judge answering the CAIT question from the model's description (GT Prompt: from the " \
           "image's generation prompt). Mean: over the judges."
    if not unparsed.empty:
        note += " Unparsed judge answers, counted wrong: " + ", ".join(
            f"{j} on {m} {u}/{n}" for j, m, u, n in zip(unparsed["judge"], unparsed["model"], unparsed["unparsed"],
                                                         unparsed["n"])) + "."
    empty = items[items["status"] == "empty_description"]
    if not empty.empty:
        note += " Empty descriptions, counted wrong without asking a judge: " + ", ".join(
            f"{m} {n}" for m, n in empty.groupby("model", sort=False).size().items()) + " (per judge)."
    return Table("cait_table04_judges", "CAIT LLM re-evaluation accuracy per judge (paper Table 4)", display,
                 bold=bold, note=note)


def cait_tables(table: pd.DataFrame, models: pd.DataFrame, timing: pd.DataFrame | None = None,
                reeval_items: pd.DataFrame | None = None) -> list[Table]:
    """The CAIT tables in the paper's layout, for the modes and inputs present: Table 3 (instant, with
    the re-evaluation mean when `reeval_items` is given), Table 5 (CoT), Tables 17/18 (structured, per
    model), Table 7 (structured, per group), Tables 16 and 6 (domains), Table 4 (judges), position bias."""
    metrics = mode_metrics(table, timing)
    reeval_mean_frame = None if reeval_items is None or reeval_items.empty else reeval_mean(reeval_scores(reeval_items))
    tables = [
        _mode_table(metrics, models, "direct", "cait_table03_main", "CAIT: instant answers (paper Table 3)",
                    with_time=True, reeval=reeval_mean_frame),
        _mode_table(metrics, models, "cot", "cait_table05_cot", "CAIT: chain-of-thought prompt (paper Table 5)",
                    with_time=True),
        _mode_table(metrics, models, "structured", "cait_table17_structured",
                    "CAIT: structured prompt per model (paper Tables 17-18)", with_time=True),
        _structured_group_table(metrics, models),
        *_domain_tables(table, models, "direct"),
        None if reeval_mean_frame is None else _judge_table(reeval_items, models),
        _position_bias_table(table, models),
    ]
    return [t for t in tables if t is not None]


__all__ = [
    "GROUPS", "GT_PROMPT_LABEL", "MODE_NAMES", "REEVAL_ITEM_COLUMNS", "TIMING_COLUMNS",
    "cait_models_frame", "cait_rows", "cait_tables", "domain_accuracy",
    "group_domain_accuracy", "group_mode_summary", "mode_metrics", "ordered_models", "position_bias",
    "reeval_by_judge", "reeval_mean", "reeval_scores", "results_file_of", "run_timing", "seconds_per_question",
    "timing_from_results",
]
