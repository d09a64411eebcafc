"""Synthetic lmms-eval logs that take every path of `report`, for before/after output comparisons.

    python perf/rich_logs.py OUT_DIR [--scale 1] [--seed 3]

perf/synthetic.py's paper-scale answers (19 registry models, nine splits; `--scale` as there) written as
bench_postprocess.write_table_logs writes them, with what those logs lack: every record carries its options and
extraction tier, some answers are read by a `reading` rule, some are unsettled (letter withheld as inconclusive,
with a candidate that is the gold or not, some with a judge's "no answer"), some settled by a judge, some refusals;
control runs of the unchanged prompt (identity: MMBench, BLINK, MME, AI2D), reordered runs (reverse, shift1: BLINK)
and a chain-of-thought run (cot: MME), each answer's correctness changed with a small chance; and one model whose
runs used another max_new_tokens (a generation setting that differs within compared pairs). perf/same_outputs.py
runs `report` on them from two checkouts and compares every file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_postprocess import PROMPT  # noqa: E402
from synthetic import per_question_table  # noqa: E402

OPTIONS = ["the first option", "the second option", "the third option", "the fourth option"]
CONTROLS = {"identity": ("MMBench", "BLINK", "MME", "AI2D"), "reverse": ("BLINK",), "shift1": ("BLINK",),
            "cot": ("MME",)}
CHURN = {"identity": 0.02, "reverse": 0.08, "shift1": 0.08, "cot": 0.1}


def records(rows, rng: np.random.Generator) -> list[dict]:
    """The per_question records of `rows` (one model, split and variant), with their kinds of answer drawn."""
    kind = rng.choice(["strict", "reading", "unsettled", "no_answer", "judge", "refusal"], size=len(rows),
                      p=[0.91, 0.03, 0.03, 0.005, 0.01, 0.015])
    candidate = rng.choice(["A", "C"], size=len(rows))
    out = []
    for r, k, c in zip(rows.itertuples(index=False), kind, candidate):
        right = bool(r.correct)
        record = {"benchmark": r.benchmark, "split": r.split, "subtask": r.subtask, "question_id": r.question_id,
                  "variant": r.variant, "gold": "A", "prediction": "A" if right else "B", "correct": right,
                  "match": "letter", "rule": "bare_letter", "kind": "mcq", "extraction_tier": "strict",
                  "options": OPTIONS}
        if k == "reading":
            record.update(rule="answer_is", extraction_tier="reading")
        elif k in ("unsettled", "no_answer"):
            record.update(prediction=None, correct=False, match="none", rule=None, extraction_tier=None,
                          candidate=str(c), abstain_reason="inconclusive")
            if k == "no_answer":
                record.update(judge="judge-a", judge_model="judge-model", judge_status="no_answer",
                              judge_verdict="none")
        elif k == "judge":
            record.update(match="judge", rule=None, extraction_tier="judge", judge="judge-a", judge_model="judge-model",
                          judge_status="settled",
                          judge_verdict=record["prediction"], abstain_reason="inconclusive")
        elif k == "refusal":
            record.update(prediction=None, correct=False, match="none", rule=None, extraction_tier=None,
                          abstain_reason="refusal")
        out.append(record)
    return out


def write(table, models, root: Path, rng: np.random.Generator) -> int:
    hf_ids = dict(zip(models["model"], models["hf_id"]))
    odd_model = models["model"].iloc[1]  # its runs ask for more new tokens than its family's other models
    count = 0
    groups = table.groupby(["model", "benchmark", "split", "variant"], sort=False)
    for run, ((model, benchmark, split, variant), rows) in enumerate(groups):
        folder = root / hf_ids[model].replace("/", "__")
        folder.mkdir(parents=True, exist_ok=True)
        task = f"{benchmark.lower().replace('-', '')}_{split}" + ("" if variant == "direct" else f"_{variant}")
        timestamp = f"20250101_{100000 + run:06d}"
        lines = []
        for doc_id, (record, response) in enumerate(zip(records(rows, rng), rows["response"])):
            response = record["prediction"] or ("I cannot tell." if record.get("abstain_reason") == "refusal"
                                                else f"Maybe {record.get('candidate')}, or another one.")
            lines.append(json.dumps({
                "doc_id": doc_id, "target": "A", "filtered_resps": response,
                "input": PROMPT.format(question_id=record["question_id"]),
                "doc_hash": hashlib.sha1(record["question_id"].encode()).hexdigest(),
                "accuracy": record["correct"], "per_question": record}))
        (folder / f"{timestamp}_samples_{task}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        tokens = 1024 if model == odd_model else 512
        results = {"results": {task: {"alias": task}}, "configs": {task: {"task": task}},
                   "config": {"model": "qwen3_vl", "model_args": f"pretrained={hf_ids[model]},device_map=auto",
                              "gen_kwargs": f"max_new_tokens={tokens}"}}
        (folder / f"{timestamp}_results.json").write_text(json.dumps(results), encoding="utf-8")
        count += len(rows)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    import pandas as pd

    table, models = per_question_table(args.scale, categorical=False)
    rng = np.random.default_rng(args.seed)
    parts = [table]
    for variant, benchmarks in CONTROLS.items():
        again = table[table["benchmark"].isin(benchmarks)].copy()
        again["correct"] = again["correct"].to_numpy(dtype=bool) ^ (rng.random(len(again)) < CHURN[variant])
        again["variant"] = variant
        parts.append(again)
    print(f"{write(pd.concat(parts, ignore_index=True), models, args.out, rng):,} records in {args.out}")


if __name__ == "__main__":
    main()
