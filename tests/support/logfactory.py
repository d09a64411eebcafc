"""Write realistic lmms-eval 0.7.3 `--log_samples` output folders for tests and demos.

Layout and line shape follow lmms-eval 0.7.3 (loggers/evaluation_tracker.py): each run writes
`OUT/<last two parts of the model path, '/' -> '__'>/<TIMESTAMP>_results.json` (config.model_args names
the model) and `<TIMESTAMP>_samples_<task>.jsonl`, one line per doc with doc_id, target, filtered_resps,
input, token_counts, doc_hash, every metric key process_results returned, and `per_question`.

    records = make_records([True, False, None], benchmark="BLINK", split="val", subtask="Jigsaw")
    paths = write_run(tmp_path, "Qwen/Qwen3-VL-2B-Instruct", "blink_val", records)

Calling write_run again with the same out_dir, model path and timestamp adds another task to that run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_TIMESTAMP = "20250101_120000"
LETTERS = "ABCD"


@dataclass(frozen=True)
class RunPaths:
    results: Path
    samples: Path


def make_record(**overrides: Any) -> dict:
    """A valid per_question record (a correct letter answer on MMMU dev_val) with fields overridden."""
    record = {
        "benchmark": "MMMU",
        "split": "dev_val",
        "subtask": "Art",
        "question_id": "validation_Art_1",
        "variant": "direct",
        "gold": "A",
        "response": "The answer is (A).",
        "prediction": "A",
        "correct": True,
        "match": "letter",
        "rule": "answer_is",
        "kind": "mcq",
        "options": ["a red square", "a blue circle", "a green triangle", "a yellow star"],
        "permutation": [0, 1, 2, 3],
        "details": {},
    }
    record.update(overrides)
    return record


def make_records(outcomes: Sequence[bool | None], question_prefix: str = "q", **overrides: Any) -> list[dict]:
    """One record per outcome, question ids `<prefix>0..`: True right, False wrong (predicts the next
    letter), None unparsed (match "none", prediction null, correct null)."""
    records = []
    for i, outcome in enumerate(outcomes):
        gold = LETTERS[i % len(LETTERS)]
        if outcome is None:
            fields = {"response": "I cannot tell.", "prediction": None, "correct": None, "match": "none",
                      "rule": None}
        else:
            prediction = gold if outcome else LETTERS[(i + 1) % len(LETTERS)]
            fields = {"response": f"The answer is ({prediction}).", "prediction": prediction, "correct": outcome}
        records.append(make_record(**{"question_id": f"{question_prefix}{i}", "gold": gold, **fields, **overrides}))
    return records


def _resps(response: str, shape: str) -> Any:
    shapes = {"string": response, "list": [response], "nested": [[response]]}
    if shape not in shapes:
        raise ValueError(f"resps_shape must be one of {sorted(shapes)}, got {shape!r}")
    return shapes[shape]


def sample_line(record: dict, doc_id: int, resps_shape: str = "string", drop_response: bool = False,
                with_per_question: bool = True) -> dict:
    """One JSONL line as lmms-eval writes it for a process_results returning `per_question`.

    resps_shape: "string" (0.7.3: filtered_resps "x"), "list" (["x"]) or "nested" (older: resps [["x"]],
    filtered_resps ["x"]). drop_response removes `response` from the record (the reader must fall back
    to filtered_resps)."""
    response = record.get("response", "")
    per_question = {k: v for k, v in record.items() if not (drop_response and k == "response")}
    scored = {"correct": record.get("correct"), "subtask": record.get("subtask"), "match": record.get("match")}
    line = {
        "doc_id": doc_id,
        "target": "" if record.get("gold") is None else str(record.get("gold")),
        "filtered_resps": _resps(response, "list" if resps_shape == "nested" else resps_shape),
        "token_counts": [{"input_tokens": 812, "output_tokens": 9}],
        "doc_hash": hashlib.sha256(f"{record.get('question_id')}".encode()).hexdigest(),
        "input": f"<image 1> Question {record.get('question_id')}: which shape is shown?\n"
                 "A. a red square\nB. a blue circle\nC. a green triangle\nD. a yellow star\n"
                 "Answer with the option's letter from the given choices directly.",
        "accuracy": scored,
        "subtask_accuracy": scored,
        "unparsed_rate": scored,
    }
    if resps_shape == "nested":
        line["resps"] = _resps(response, "nested")
    if with_per_question:
        line["per_question"] = per_question
    return line


def run_folder(out_dir: Path | str, model_path: str) -> Path:
    """The folder lmms-eval writes a model's files to: its last two path parts joined by '__'."""
    last_two = "/".join(model_path.rstrip("/").split("/")[-2:])
    return Path(out_dir) / re.sub(r"[\"<>:/\|\\?\*\[\]]+", "__", last_two)


def write_results_json(path: Path, model_path: str, tasks: Iterable[str], model: str = "qwen3_vl",
                       model_args_style: str = "string") -> None:
    """A results.json like lmms-eval's; model_args as "pretrained=...,device_map=cpu" or a dict."""
    tasks = sorted(set(tasks))
    model_args: Any = (f"pretrained={model_path},device_map=cpu" if model_args_style == "string"
                       else {"pretrained": model_path, "device_map": "cpu"})
    results = {
        "results": {task: {"alias": task, "accuracy,none": 0.5} for task in tasks},
        "configs": {task: {"task": task, "output_type": "generate_until"} for task in tasks},
        "versions": {task: 0.1 for task in tasks},
        "n-samples": {task: {"original": asked, "effective": asked}
                      for task, asked in ((task, _questions_written(path, task)) for task in tasks)},
        "config": {"model": model, "model_args": model_args, "batch_size": "1", "device": "cpu",
                   "limit": None, "gen_kwargs": ""},
        "model_name": model_path,
        "date": path.name.split("_results.json")[0],
    }
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")


def _questions_written(results: Path, task: str) -> int:
    """n-samples[task].effective as lmms-eval reports it: the lines of the task's samples file (10 when absent)."""
    samples = results.with_name(results.name.replace("_results.json", f"_samples_{task}.jsonl"))
    if not samples.is_file():
        return 10
    return sum(1 for line in samples.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip())


def write_lines(path: Path, lines: Iterable[dict | str], truncate_last: bool = False) -> None:
    """Append JSONL lines (dicts are serialised, strings written raw); truncate_last cuts the final
    line in half and drops its newline, as a killed writer leaves it."""
    texts = [line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in lines]
    body = "".join(text + "\n" for text in texts)
    if truncate_last and texts:
        body = body[: len(body) - len(texts[-1]) // 2 - 1]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(body)


def write_run(out_dir: Path | str, model_path: str, task: str, records: Sequence[dict],
              timestamp: str = DEFAULT_TIMESTAMP, *, resps_shape: str = "string", drop_response: bool = False,
              extra_lines: Sequence[dict | str] = (), truncate_last: bool = False, write_results: bool = True,
              model_args_style: str = "string", lmms_eval_model: str = "qwen3_vl",
              mtime: float | None = None) -> RunPaths:
    """Write one task of one run: the samples file (records as lines with doc_id 0.., then extra_lines
    raw) and, unless write_results is False (a killed run), a results.json listing every task of the run.
    mtime sets the samples file's modification time (it orders duplicates on ingestion)."""
    folder = run_folder(out_dir, model_path)
    folder.mkdir(parents=True, exist_ok=True)
    samples = folder / f"{timestamp}_samples_{task}.jsonl"
    lines = [sample_line(r, i, resps_shape=resps_shape, drop_response=drop_response) for i, r in enumerate(records)]
    write_lines(samples, [*lines, *extra_lines], truncate_last=truncate_last)
    results = folder / f"{timestamp}_results.json"
    if write_results:
        tasks = {task}
        if results.exists():
            tasks |= set(json.loads(results.read_text(encoding="utf-8"))["configs"])
        write_results_json(results, model_path, tasks, model=lmms_eval_model, model_args_style=model_args_style)
    if mtime is not None:
        os.utime(samples, (mtime, mtime))
    return RunPaths(results=results, samples=samples)


def tiny_family_registry_dict(family: str = "Tiny", sizes: Sequence[tuple[str, int]] = (
        ("S", 1_000_000), ("M", 4_000_000), ("L", 16_000_000))) -> dict:
    """Registry data (Registry.from_dict / an extra models YAML) for tiny models of a made-up family:
    keys "<family>-<size>", hf_id "local/tiny-<size lowercased>"."""
    return {
        "families": [family],
        "models": [{"key": f"{family}-{size}", "hf_id": f"local/tiny-{size.lower()}", "family": family,
                    "size": size, "total_params": params, "active_params": params, "moe": False,
                    "encoder_tier": "tiny-vit", "vision_encoder": "tiny ViT", "lmms_eval_model": "qwen3_vl"}
                   for size, params in sizes],
    }
