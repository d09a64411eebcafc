"""The LoRA study's evaluation: the held-out part through lmms-eval's own `cait` task, before (the base
model) and after (the merged LoRA model), and Table 8 from the per-question logs.

`evaluate(WORK)` exports the task folder with `cait` pointed at WORK/heldout_dataset (as `python -m
lmms_eval_tasks export --data cait=...` does) and runs the real lmms-eval CLI once per model, writing
WORK/runs/<model key>/. Both runs use the same wrapper and model_args: the registry's launch settings of
the base model when it has them (Qwen2.5-VL-3B/7B: qwen2_5_vl, max_pixels 1605632, sdpa), else the
wrapper given; `model_args` adds to them (e.g. device_map=cpu).

`lora_table(table, pairs)` is Table 8 over the ingested per-question table (postprocess.logs.ingest, with
WORK/models.yaml as extra models): per (base, LoRA) pair, accuracy and macro F1 (unparsed answers count
wrong, as everywhere in postprocess.cait.metrics) on the held-out scenes both models answered, and the changes
in percentage points. Scenes only one of the two answered are counted, not used.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from lmms_eval_tasks.metrics import macro_f1

from .lora import EXTRA_MODELS, read_manifest
from .split import read_split

TASK = "cait"
TABLE8_COLUMNS = ["model", "lora_model", "questions", "only_before", "only_after", "accuracy_before",
                  "accuracy_after", "accuracy_change", "macro_f1_before", "macro_f1_after", "macro_f1_change",
                  "unparsed_before", "unparsed_after"]


def model_arguments(base: str, checkpoints: Sequence[str], wrapper: str | None = None,
                    model_args: str = "") -> tuple[str, list[str]]:
    """(wrapper, one --model_args string per checkpoint): the registry's launch settings of the base model
    when it has them and `wrapper` is None or theirs, else `wrapper` with only the checkpoint; `model_args`
    is appended to each."""
    from model_configs import BACKENDS, load_registry

    spec = load_registry().resolve(base)
    launch = None if spec is None else spec.launch
    if launch is not None and wrapper in (None, launch.backend):
        rendered = [launch.model_args_for(checkpoint) for checkpoint in checkpoints]
        wrapper = launch.backend
    elif wrapper is None:
        raise ValueError(f"the registry has no launch settings for {base!r}: name the lmms-eval wrapper (--wrapper)")
    else:
        weights_arg = BACKENDS[wrapper].weights_arg if wrapper in BACKENDS else "pretrained"
        rendered = [f"{weights_arg}={checkpoint}" for checkpoint in checkpoints]
    return wrapper, [",".join(part for part in (args, model_args) if part) for args in rendered]


def evaluate(work: Path, wrapper: str | None = None, model_args: str = "", *, device: str | None = None,
             limit: int | None = None, gen_kwargs: str | None = None, batch_size: int = 1) -> dict[str, Path]:
    """Run the base and the merged model on the held-out part; {model key: results.json}. A model whose run
    under WORK/runs/<key> is complete is not run again (delete the folder to rerun it); an incomplete
    run's files are removed first, as `python -m launch run` does."""
    from launch.runner import OFFLINE_ENV, find_outputs, incomplete_reason, lmms_eval_command, lmms_eval_outputs, \
        run_lmms_eval
    from lmms_eval_tasks.install import export_tasks

    work = Path(work).resolve()
    read_split(work)
    manifest = read_manifest(work)
    tasks = export_tasks(work / "tasks", {TASK: str(work / "heldout_dataset")})
    keys = (manifest["base_key"], manifest["lora_key"])
    wrapper, arguments = model_arguments(manifest["base"], (manifest["base"], manifest["merged"]), wrapper, model_args)
    caller_env = {name: os.environ.get(name, "0") for name in OFFLINE_ENV}  # the hub stays reachable if it was
    results = {}
    for key, args in zip(keys, arguments):
        out = work / "runs" / key
        if incomplete_reason(out, [TASK]) is None:
            results[key] = find_outputs(out, [TASK])[0]
            continue
        for partial in lmms_eval_outputs(out) if out.exists() else []:
            partial.unlink()
        command = lmms_eval_command(wrapper, args, [TASK], out, include_path=tasks, limit=limit,
                                    gen_kwargs=gen_kwargs, batch_size=batch_size, device=device)
        results[key] = run_lmms_eval(command, out, [TASK], out / "lmms_eval.log", env=caller_env).results
    return results


def lora_table(table: pd.DataFrame, pairs: Sequence[tuple[str, str]], variant: str = "direct") -> pd.DataFrame:
    """Table 8 as numbers (module docstring), one row per (base key, LoRA key) pair."""
    from postprocess.cait.metrics import cait_rows

    rows = cait_rows(table)
    rows = rows[rows["variant"] == variant]
    present = sorted(set(rows["model"]))
    records = []
    for before, after in pairs:
        parts = {}
        for role, key in (("before", before), ("after", after)):
            part = rows[rows["model"] == key].set_index("scene")
            if part.empty:
                raise ValueError(f"no CAIT {variant} rows for model {key!r} ({role}); models with rows: {present}")
            parts[role] = part
        common = parts["before"].index.intersection(parts["after"].index)
        record = {"model": before, "lora_model": after, "questions": len(common),
                  "only_before": len(parts["before"]) - len(common), "only_after": len(parts["after"]) - len(common)}
        for role, part in parts.items():
            shared = part.loc[common]
            record[f"accuracy_{role}"] = float(shared["correct"].mean()) if len(shared) else math.nan
            record[f"macro_f1_{role}"] = macro_f1(list(shared["prediction"]), list(shared["gold"])) if len(shared) else math.nan
            record[f"unparsed_{role}"] = int(shared["prediction"].isna().sum())
        for metric in ("accuracy", "macro_f1"):
            record[f"{metric}_change"] = (record[f"{metric}_after"] - record[f"{metric}_before"]) * 100
        records.append(record)
    return pd.DataFrame(records, columns=TABLE8_COLUMNS)


def lora_display(numbers: pd.DataFrame):
    """Table 8 in the paper's layout: a row per model, the LoRA row with its change in points."""
    from postprocess.render.tables import Table

    def cell(value: float, change: float | None = None) -> str:
        if pd.isna(value):
            return "–"
        if change is None:
            return f"{value:.3f}"
        return f"{value:.3f} ({'↑' if change >= 0 else '↓'}{abs(change):.1f})"

    lines = []
    for row in numbers.to_dict("records"):
        lines.append({"Model": row["model"], "Questions": row["questions"], "Accuracy": cell(row["accuracy_before"]),
                      "F1 score": cell(row["macro_f1_before"])})
        lines.append({"Model": row["lora_model"], "Questions": row["questions"],
                      "Accuracy": cell(row["accuracy_after"], row["accuracy_change"]),
                      "F1 score": cell(row["macro_f1_after"], row["macro_f1_change"])})
    notes = ["Held-out CAIT scenes answered by both models; in brackets the change in percentage points. "
             "Unparsed answers count wrong."]
    skipped = numbers[(numbers["only_before"] > 0) | (numbers["only_after"] > 0)]
    notes += [f"Left out: {r['only_before']} scenes only {r['model']} answered, {r['only_after']} only "
              f"{r['lora_model']} answered." for r in skipped.to_dict("records")]
    unparsed = numbers[(numbers["unparsed_before"] > 0) | (numbers["unparsed_after"] > 0)]
    notes += [f"Unparsed: {r['model']} {r['unparsed_before']}, {r['lora_model']} {r['unparsed_after']}."
              for r in unparsed.to_dict("records")]
    return Table("table08_lora", "CAIT held-out accuracy before and after LoRA fine-tuning (paper Table 8)",
                 pd.DataFrame(lines, columns=["Model", "Questions", "Accuracy", "F1 score"]), note=" ".join(notes))


def report(work: Path) -> pd.DataFrame:
    """Ingest WORK/runs with WORK/models.yaml, write WORK/table08_lora.{csv,md,tex} and the numbers
    (table08_lora_values.csv); returns the numbers."""
    from model_configs import load_registry
    from postprocess.logs.ingest import ingest_logs
    from postprocess.render.tables import write_table

    work = Path(work)
    manifest = read_manifest(work)
    registry = load_registry(extra=[work / EXTRA_MODELS])
    table = ingest_logs([work / "runs"], registry).table
    numbers = lora_table(table, [(manifest["base_key"], manifest["lora_key"])])
    write_table(lora_display(numbers), work)
    numbers.to_csv(work / "table08_lora_values.csv", index=False)
    return numbers
