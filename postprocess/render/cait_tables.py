"""The CAIT paper's tables ("Seeing vs. Believing"), laid out from postprocess.cait.metrics' numbers:
Table 3 (instant), 5 (CoT), 17-18 (structured), 7 (structured by group), 16 and 6 (domains), 4 (judges)
and a position-bias check. Values are printed with three decimals; the paper bolds the best value inside
the open-source groups.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from postprocess.cait.metrics import (
    GT_PROMPT_LABEL,
    MODE_NAMES,
    TABLE6_DOMAINS,
    CaitNumbers,
    ordered_models,
    reeval_by_judge,
    reeval_mean,
)
from postprocess.render.tables import Table

OPEN_GROUPS = ("Instruct", "Thinking")  # the paper bolds the best value inside these groups
MISSING = "–"
APPORTIONED_MARK = "†"
PAPER_JUDGES = 3  # CAIT Section 4.2: "the average accuracy and F1 of three Judges"


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


HUMAN_LABEL = "Human annotators"


def _with_human_row(display: pd.DataFrame, values: pd.DataFrame, human: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The human baseline (postprocess.human.agreement.baseline_row) as the first row, in the Upper bound group."""
    row = human.iloc[0]
    shown = {column: MISSING for column in display.columns}
    shown.update({"Group": "Upper bound", "Model": HUMAN_LABEL, "Acc": _fmt(row["accuracy"]), "F1": _fmt(row["macro_f1"])})
    if "Time (s)" in display.columns:
        shown["Time (s)"] = _fmt(row["seconds_per_question"])
    blank = pd.DataFrame([{c: np.nan for c in values.columns}])
    return (pd.concat([pd.DataFrame([shown]), display], ignore_index=True),
            pd.concat([blank, values], ignore_index=True))


def _backends(chosen: pd.DataFrame) -> str:
    """Which lmms-eval backend timed which models (a Time column over several compares backends too)."""
    if "time_backend" not in chosen:
        return ""
    timed = chosen["time_backend"].fillna("")
    by_backend = {backend: names for backend, names in timed[timed != ""].groupby(timed, sort=True).groups.items()}
    if not by_backend:
        return ""
    listed = "; ".join(f"{backend}: {', '.join(map(str, names))}" for backend, names in by_backend.items())
    return f" Backends: {listed}."


def _mode_table(metrics: pd.DataFrame, models: pd.DataFrame, variant: str, name: str, title: str,
                with_time: bool, reeval: pd.DataFrame | None = None, human: pd.DataFrame | None = None) -> Table | None:
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
                     f"{APPORTIONED_MARK} apportioned from a multi-task run by output tokens. The paper times each "
                     "question on vLLM; a run's total is that only at batch size 1 on vLLM." + _backends(chosen))
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
        judges = sorted(set(mean["judges"]))
        counted = " or ".join(map(str, judges))
        paper = "" if judges == [PAPER_JUDGES] else " (the paper averages three: Gemini-2.5-pro, Claude-4.6-Opus, GPT-5.4)"
        notes.append(f"LLM-re-Eval: mean over {counted} judge(s){paper} of the judge's answer from the model's "
                     f"description.")
    if human is not None:
        display, values = _with_human_row(display, values, human)
        notes.append(f"{HUMAN_LABEL}: {human['timing_note'].iloc[0]}; accuracy and F1 are means over the "
                     f"annotators, on {int(human['n'].iloc[0])} items (a skipped item counts as wrong).")
    groups = display["Group"]
    bold = _best_in_open_groups(values, groups, list(values.columns)).reindex(columns=display.columns, fill_value=False)
    notes.append(_unparsed_note(metrics, [variant]))
    return Table(name, title, display, bold=bold, note=" ".join(n for n in notes if n))


def _domain_tables(domains: pd.DataFrame, groups: pd.DataFrame, models: pd.DataFrame, variant: str) -> list[Table]:
    if domains.empty:
        return []
    rows = ordered_models(models, domains["model"])
    per_model = rows.merge(domains, on="model")
    columns = [c for c in domains.columns if c != "model"]
    display = pd.DataFrame({**_model_columns(rows), "Size": [MISSING if pd.isna(s) else s for s in rows["size_class"]]})
    for column in columns:
        display[column] = per_model[column].map(_fmt)
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


def _structured_group_table(summary: pd.DataFrame) -> Table | None:
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


def _position_bias_table(bias: pd.DataFrame, models: pd.DataFrame) -> Table | None:
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


def _judge_table(items: pd.DataFrame, scores: pd.DataFrame, models: pd.DataFrame) -> Table:
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


def cait_tables(numbers: CaitNumbers, human: pd.DataFrame | None = None) -> list[Table]:
    """The CAIT tables in the paper's layout, for the modes and inputs present: Table 3 (instant, with
    the re-evaluation mean when re-evaluation items were given, and the human baseline as its first row when
    `human` (postprocess.human.agreement.baseline_row) is given), Table 5 (CoT), Tables 17/18 (structured,
    per model), Table 7 (structured, per group), Tables 16 and 6 (domains), Table 4 (judges), position bias."""
    metrics, models = numbers.metrics, numbers.models
    reeval_mean_frame = None if numbers.reeval_scores is None else reeval_mean(numbers.reeval_scores)
    tables = [
        _mode_table(metrics, models, "direct", "cait_table03_main", "CAIT: instant answers (paper Table 3)",
                    with_time=True, reeval=reeval_mean_frame, human=human),
        _mode_table(metrics, models, "cot", "cait_table05_cot", "CAIT: chain-of-thought prompt (paper Table 5)",
                    with_time=True),
        _mode_table(metrics, models, "structured", "cait_table17_structured",
                    "CAIT: structured prompt per model (paper Tables 17-18)", with_time=True),
        _structured_group_table(numbers.structured_groups),
        *_domain_tables(numbers.domains, numbers.group_domains, models, "direct"),
        None if reeval_mean_frame is None else _judge_table(numbers.reeval_items, numbers.reeval_scores, models),
        _position_bias_table(numbers.position_bias, models),
    ]
    return [t for t in tables if t is not None]
