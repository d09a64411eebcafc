"""Imported files for tests of postprocess/logs/imports/: per-question table rows and files, a VLMEvalKit
prediction frame (MMBench_DEV_EN's columns) and a small lmms-eval run to combine them with."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from logfactory import make_records, write_run
from postprocess.logs.imports import ImportSource, import_outputs

OPTIONS = ["a red square", "a blue circle", "a green triangle", "a yellow star"]
RESPONSES = ["B", "The answer is (C).", "I think it is a green triangle.", "Either A or B.", "", "(D) a yellow star"]


def table_rows(model: str = "Tiny-S", n: int = 6, benchmark: str = "M3CoT", **overrides) -> list[dict]:
    rows = [{"model": model, "benchmark": benchmark, "subtask": f"topic{i % 2}", "question_id": f"q{i}",
             "options": OPTIONS, "gold": "ABCD"[i % 4], "response": RESPONSES[i % len(RESPONSES)]} for i in range(n)]
    for row in rows:
        row.update(overrides)
    return rows


def write_table(path: Path, rows: list[dict]) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    elif path.suffix == ".csv":
        frame.assign(**({"options": [json.dumps(o) for o in frame["options"]]} if "options" in frame else {})).to_csv(
            path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


def imported(paths, registry, harness="table", **options):
    return import_outputs([ImportSource(Path(p), harness, **options) for p in paths], registry)


def vlmevalkit_frame(n: int = 8) -> pd.DataFrame:
    """Columns as VLMEvalKit writes an MMBench_DEV_EN prediction file (the TSV's columns but the image, plus
    `prediction`); `l2-category` is the paper's subtask column."""
    return pd.DataFrame({
        "index": range(n), "question": [f"Which shape {i}?" for i in range(n)], "hint": None,
        **{letter: OPTIONS[k] for k, letter in enumerate("ABCD")}, "answer": ["ABCD"[i % 4] for i in range(n)],
        "category": [f"leaf{i % 3}" for i in range(n)], "l2-category": [f"area{i % 2}" for i in range(n)],
        "split": "dev", "prediction": [RESPONSES[i % len(RESPONSES)] for i in range(n)],
    })


def lmms_eval_logs(tmp_path: Path, model_path: str = "local/tiny-s") -> Path:
    logs = tmp_path / "logs"
    write_run(logs, model_path, "invscale_mmmu_dev_val", make_records([True, False, True, True]))
    return logs
