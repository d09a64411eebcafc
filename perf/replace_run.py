"""A copy of a logs folder with one model's runs replaced: the same questions, answers drawn again.

    .venv/bin/python perf/replace_run.py LOGS COPY [--model-dir Qwen__Qwen3-VL-8B-Instruct] [--share 0.1] [--seed 1]

Copies LOGS to COPY (which must not exist); in --model-dir's folder, every samples file gets --share of its answers
flipped (right <-> wrong, seeded) and every file a new timestamp, as a re-run of the model writes them. For
`invscale diff` on the paper-scale synthetic logs (docs/analysis.md).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path)
    parser.add_argument("copy", type=Path)
    parser.add_argument("--model-dir", default="Qwen__Qwen3-VL-8B-Instruct")
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shutil.copytree(args.logs, args.copy)
    folder = args.copy / args.model_dir
    if not folder.is_dir():
        raise SystemExit(f"{folder}: no such model folder in {args.logs}")
    rng = random.Random(args.seed)
    for path in sorted(folder.iterdir()):
        _, clock, rest = path.name.split("_", 2)  # <date>_<time>_results.json / _samples_<task>.jsonl
        target = folder / f"20260101_{clock}_{rest}"
        if "_samples_" in path.name:
            lines = []
            for line in path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if rng.random() < args.share:
                    answer = record["per_question"]
                    answer["correct"] = not answer["correct"]
                    answer["prediction"] = answer["response"] = "A" if answer["correct"] else "B"
                    record["filtered_resps"] = answer["response"]
                    record["accuracy"] = answer["correct"]
                lines.append(json.dumps(record))
            target.write_text("\n".join(lines) + "\n", encoding="utf-8")
            path.unlink()
        else:
            path.rename(target)
    print(f"{args.copy}: {args.model_dir}'s runs replaced ({args.share:.0%} of answers flipped)")


if __name__ == "__main__":
    main()
