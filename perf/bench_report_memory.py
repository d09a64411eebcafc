"""Peak memory of `python -m postprocess report` on a few large samples files (long responses, as chain-of-thought
runs write them), for this checkout and others.

    .venv/bin/python perf/bench_report_memory.py [--workdir DIR] [--files 3] [--mb 213] [--source CHECKOUT ...]
                                                  [-- REPORT OPTIONS]

It writes --files samples files of about --mb MB each once (kept in --workdir): the MMMU test split (10,500
questions, 177 subtasks) answered by the three smallest Qwen3-VL models, each line a response of about the length
that makes the file the asked size, with the options, permutation and details the tasks write. Then, for each
checkout (this one first), it runs `report` in a fresh process with a fresh cache folder and prints the peak
resident memory: the largest single process (ru_maxrss of the process and its parser processes) and the largest
sum over the process tree (sampled every 50 ms with psutil), with the wall time. Compare checkouts made with
`git archive COMMIT | tar -x -C /tmp/old`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODELS = ["Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3-VL-4B-Instruct", "Qwen/Qwen3-VL-8B-Instruct"]
QUESTIONS, SUBTASKS = 10_500, 177
WORDS = ("the image shows a figure with several parts so we compare each option against what is visible and "
         "reason step by step about the quantities involved before choosing").split()


def write_logs(root: Path, files: int, megabytes: float, seed: int = 0) -> None:
    """`files` samples files (one model each) of about `megabytes` MB under root, lmms-eval 0.7.3's layout."""
    rng = np.random.default_rng(seed)
    per_line = int(megabytes * 1e6 / QUESTIONS)
    words = max(1, round((per_line - 950) / (sum(map(len, WORDS)) / len(WORDS) + 1)))  # ~950 bytes besides the text
    texts = [" ".join(rng.choice(WORDS, size=words)) for _ in range(64)]  # drawn once
    for run, model in enumerate(MODELS[:files]):
        folder = root / model.replace("/", "__")
        folder.mkdir(parents=True, exist_ok=True)
        task, timestamp = "invscale_mmmu_test", f"20250101_{100000 + run:06d}"
        correct = rng.random(QUESTIONS) < 0.45 + 0.1 * run
        with open(folder / f"{timestamp}_samples_{task}.jsonl", "w", encoding="utf-8") as out:
            for doc_id in range(QUESTIONS):
                gold = "ABCD"[doc_id % 4]
                prediction = gold if correct[doc_id] else "ABCD"[(doc_id + 1) % 4]
                response = f"{doc_id}: {texts[doc_id % len(texts)]}. The answer is ({prediction})."
                record = {
                    "benchmark": "MMMU", "split": "test", "subtask": f"subject {doc_id % SUBTASKS}",
                    "question_id": f"test_{doc_id}", "variant": "direct", "gold": gold, "prediction": prediction,
                    "correct": bool(correct[doc_id]), "match": "letter", "rule": "answer_is", "kind": "mcq",
                    "extraction_tier": "strict", "abstain_reason": None, "candidate": None,
                    "options": ["the first option", "the second option", "the third option", "the fourth option"],
                    "permutation": [0, 1, 2, 3], "details": {"subject": f"subject {doc_id % SUBTASKS}",
                                                            "question_type": "multiple-choice"},
                }  # fmt: skip
                out.write(json.dumps({
                    "doc_id": doc_id, "target": gold, "filtered_resps": response,
                    "input": f"<image 1> Question {doc_id}: which option does the figure support?\nA. the first "
                             "option\nB. the second option\nC. the third option\nD. the fourth option\n"
                             "Answer with the option's letter from the given choices directly.",
                    "token_counts": [{"input_tokens": 812, "output_tokens": len(response) // 4}],
                    "doc_hash": hashlib.sha1(str(doc_id).encode()).hexdigest(), "accuracy": bool(correct[doc_id]),
                    "per_question": record,
                }) + "\n")  # fmt: skip
        results = {"results": {task: {"alias": task}}, "configs": {task: {"task": task}},
                   "n-samples": {task: {"original": QUESTIONS, "effective": QUESTIONS}},
                   "config": {"model": "qwen3_vl", "model_args": f"pretrained={model},device_map=auto"}}
        (folder / f"{timestamp}_results.json").write_text(json.dumps(results), encoding="utf-8")


def peak_of(command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """Run `command`; its peak single-process RSS (MiB), peak process-tree RSS (MiB) and wall seconds."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree_peak, done = 0, threading.Event()

    def sample() -> None:
        nonlocal tree_peak
        parent = psutil.Process(process.pid)
        while not done.is_set():
            try:
                members = [parent, *parent.children(recursive=True)]
                tree_peak = max(tree_peak, sum(m.memory_info().rss for m in members if m.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    sampler.join()
    errors = process.stderr.read().decode()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{errors[-3000:]}")
    return {"process_mib": usage.ru_maxrss / 1024, "tree_mib": tree_peak / 2**20,
            "wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "invscale_report_memory")
    parser.add_argument("--files", type=int, default=3, choices=range(1, len(MODELS) + 1))
    parser.add_argument("--mb", type=float, default=213, help="size of each samples file (MB)")
    parser.add_argument("--source", nargs="*", type=Path, default=[], help="other checkouts to measure")
    parser.add_argument("report_options", nargs="*", help="after --: options added to `report`")
    args = parser.parse_args()
    logs = args.workdir / f"logs_{args.files}x{args.mb:g}"
    if not logs.is_dir():
        write_logs(logs, args.files, args.mb)
    sizes = [path.stat().st_size / 1e6 for path in sorted(logs.rglob("*_samples_*.jsonl"))]
    print(f"{len(sizes)} samples files of {', '.join(f'{s:.0f}' for s in sizes)} MB; report options: "
          f"{' '.join(args.report_options) or '(defaults)'}\n")
    print("| checkout | peak RSS, largest process (MiB) | peak RSS, process tree (MiB) | wall s |\n|---|---|---|---|")
    for checkout in [REPO, *args.source]:
        with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
            command = [sys.executable, "-m", "postprocess", "report", "--logs", str(logs), "--out",
                       str(Path(scratch) / "out"), "--cache-dir", str(Path(scratch) / "cache"), *args.report_options]
            peak = peak_of(command, checkout, {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"})
        print(f"| {checkout} | {peak['process_mib']:,.0f} | {peak['tree_mib']:,.0f} | {peak['wall_s']:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
