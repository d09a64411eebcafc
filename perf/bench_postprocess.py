"""Benchmark of the postprocess pipeline at paper scale (1x) and 10x.

    .venv/bin/python perf/bench_postprocess.py [--scales 1 10] [--workdir DIR] [--keep]

Per scale it writes synthetic lmms-eval logs (19 registry models x 9 splits, 29,386 questions per
model at 1x: 558,334 records; `synthetic.py`), then, each in a fresh subprocess so that peak memory
(max RSS, the process and its children) belongs to one step:
  ingest    postprocess.logs.ingest.ingest_logs on the JSONL (records/s), then the Parquet cache write;
  analysis  Parquet read of the analysis columns, postprocess.inverse_scaling.analysis.run_analysis (every table and
            the summary), the compare stage alone, and the per-pair pandas merge reference
            (perf/reference.py) on the same table, for the speedup.
Prints a Markdown table. Targets: analysis < 2 s at 1x and >= 5x faster than the reference;
ingestion >= 500k records/s on 2 cores (perf/bench_ingest.py times it alone, wall and CPU); 10x under
4 GiB peak.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

PROMPT = (
    "<image 1> {question_id}: Look at the image and answer the question.\n"
    "A. the first option\nB. the second option\nC. the third option\nD. the fourth option\n"
    "Answer with the option's letter from the given choices directly."
)


def write_logs(scale: int, root: Path) -> int:
    """The synthetic logs of `scale` (synthetic.py) under root; returns the number of records."""
    sys.path[:0] = [str(HERE), str(REPO)]  # synthetic.py, and the project when it is not installed
    from synthetic import per_question_table

    return write_table_logs(*per_question_table(scale, categorical=False), root)


def write_table_logs(table, models, root: Path) -> int:
    """lmms-eval 0.7.3 layout: <org__repo>/<TS>_results.json + <TS>_samples_<task>.jsonl per run."""
    hf_ids = dict(zip(models["model"], models["hf_id"]))
    records = 0
    groups = table.groupby(["model", "benchmark", "split"], sort=False)
    for run, ((model, benchmark, split), rows) in enumerate(groups):
        folder = root / hf_ids[model].replace("/", "__")
        folder.mkdir(parents=True, exist_ok=True)
        task = f"{benchmark.lower().replace('-', '')}_{split}"
        timestamp = f"20250101_{100000 + run:06d}"  # one run per (model, split)
        lines = []
        for doc_id, r in enumerate(rows.itertuples(index=False)):
            record = {
                "benchmark": r.benchmark, "split": r.split, "subtask": r.subtask, "question_id": r.question_id,
                "variant": r.variant, "gold": r.gold, "response": r.response, "prediction": r.prediction,
                "correct": bool(r.correct), "match": r.match, "rule": "bare_letter", "kind": "mcq",
            }  # fmt: skip
            lines.append(json.dumps({
                "doc_id": doc_id, "target": r.gold, "filtered_resps": r.response,
                "input": PROMPT.format(question_id=r.question_id),
                "token_counts": [{"input_tokens": 812, "output_tokens": 1}],
                "doc_hash": hashlib.sha1(r.question_id.encode()).hexdigest(), "accuracy": bool(r.correct),
                "per_question": record,
            }))  # fmt: skip
        (folder / f"{timestamp}_samples_{task}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        results = {
            "results": {task: {"alias": task}},
            "configs": {task: {"task": task}},
            "config": {"model": "qwen3_vl", "model_args": f"pretrained={hf_ids[model]},device_map=auto"},
        }
        (folder / f"{timestamp}_results.json").write_text(json.dumps(results), encoding="utf-8")
        records += len(rows)
    return records


INGEST_STEP = """
import json, resource, sys, time
from model_configs import load_registry
from postprocess.logs.ingest import ingest_logs
logs, cache = sys.argv[1], sys.argv[2]
start = time.perf_counter()
result = ingest_logs([logs], load_registry(), progress=False)
ingest_s = time.perf_counter() - start
start = time.perf_counter()
result.table.to_parquet(cache, index=False)
write_s = time.perf_counter() - start
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"rows": len(result.table), "ingest_s": ingest_s, "parquet_write_s": write_s,
                  "ingest_peak_mib": peak / 1024}))
"""

ANALYSIS_STEP = """
import json, resource, sys, tempfile, time
sys.path.insert(0, sys.argv[3])
import pandas as pd
from model_configs import load_registry
from postprocess.inverse_scaling.analysis import ANALYSIS_COLUMNS, run_analysis
from postprocess.inverse_scaling.compare import build_outcomes, compare_pairs, family_order_models, family_pairs
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.outputs import write_outputs
from postprocess.render.paper_tables import inverse_scaling_tables
from reference import compare_reference
cache, with_reference, repeats = sys.argv[1], sys.argv[2] == "1", int(sys.argv[4])

def best_of(step):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = step()
        times.append(time.perf_counter() - start)
    return min(times), times[0], result

def compare_stage():
    ordered = family_order_models(models)
    return compare_pairs(build_outcomes(table, list(ordered["model"])), family_pairs(ordered), variant=params.variant,
                         min_n=params.min_n, min_net=params.min_net)

models = load_registry().models_frame()
params = Parameters()
start = time.perf_counter()
table = pd.read_parquet(cache, columns=ANALYSIS_COLUMNS)
read_s = time.perf_counter() - start
def analysis_and_tables():
    analysis = run_analysis(table, models, params)
    inverse_scaling_tables(analysis)
    return analysis

analysis_s, analysis_first_s, analysis = best_of(analysis_and_tables)
compare_s, _, comparisons = best_of(compare_stage)
with tempfile.TemporaryDirectory() as out_dir:
    start = time.perf_counter()
    write_outputs(analysis, out_dir, quality=None)
    write_s = time.perf_counter() - start
out = {"read_s": read_s, "analysis_s": analysis_s, "analysis_first_s": analysis_first_s, "compare_s": compare_s,
       "write_outputs_s": write_s,
       "analysis_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "cases": analysis.summary["cases"], "eligible": analysis.summary["eligible_comparisons"]}
if with_reference:
    out["reference_s"], _, reference = best_of(lambda: compare_reference(table, models))
    merged = reference.merge(comparisons, on=["family", "benchmark", "split", "subtask", "small", "large"])
    out["reference_agrees"] = bool(len(merged) == len(reference) == len(comparisons)
                                   and (merged["net_x"] == merged["net_y"]).all())
print(json.dumps(out))
"""


def run_step(code: str, *args: str) -> dict:
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"benchmark step failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def bench_scale(scale: int, workdir: Path, with_reference: bool, repeats: int) -> dict:
    logs, cache = workdir / f"logs_{scale}x", workdir / f"table_{scale}x.parquet"
    start = time.perf_counter()
    records = write_logs(scale, logs)
    row = {"scale": scale, "records": records, "write_logs_s": time.perf_counter() - start}
    row.update(run_step(INGEST_STEP, str(logs), str(cache)))
    row["records_per_s"] = row["rows"] / row["ingest_s"]
    row.update(run_step(ANALYSIS_STEP, str(cache), "1" if with_reference else "0", str(HERE), str(repeats)))
    if "reference_s" in row:
        row["speedup_compare"] = row["reference_s"] / row["compare_s"]
        row["speedup_analysis"] = row["reference_s"] / row["analysis_s"]
    shutil.rmtree(logs)
    return row


def markdown(rows: list[dict]) -> str:
    columns = [
        ("scale", "{}x"), ("records", "{:,}"), ("records_per_s", "{:,.0f}"), ("ingest_s", "{:.1f}"),
        ("ingest_peak_mib", "{:,.0f}"), ("read_s", "{:.2f}"), ("analysis_s", "{:.2f}"), ("compare_s", "{:.2f}"),
        ("analysis_first_s", "{:.2f}"), ("write_outputs_s", "{:.1f}"), ("reference_s", "{:.2f}"),
        ("speedup_compare", "{:.0f}x"),
        ("speedup_analysis", "{:.1f}x"),
        ("analysis_peak_mib", "{:,.0f}"), ("cases", "{}"), ("eligible", "{:,}"),
    ]  # fmt: skip
    header = "| " + " | ".join(name for name, _ in columns) + " |"
    rule = "|" + "---|" * len(columns)
    body = [
        "| " + " | ".join(fmt.format(row[name]) if name in row else "–" for name, fmt in columns) + " |" for row in rows
    ]
    return "\n".join([header, rule, *body])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--workdir", type=Path, help="where logs and tables go (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the Parquet tables")
    parser.add_argument("--reference-max-scale", type=int, default=10, help="skip the reference above this scale")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each analysis step; the best is kept")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench_postprocess_"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for scale in args.scales:
            rows.append(bench_scale(scale, workdir, scale <= args.reference_max_scale, args.repeats))
            print(json.dumps(rows[-1]), file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(markdown(rows))
    print(
        "\nrecords_per_s: ingest_logs on JSONL; analysis_s: run_analysis (all tables + summary) from the "
        "Parquet table, best of --repeats (analysis_first_s: the first run); compare_s: the compare stage "
        "alone; write_outputs_s: every file (tables, figures, reports); reference_s: per-pair pandas merge "
        "(perf/reference.py) of the compare stage; "
        "speedups: reference_s over compare_s and over analysis_s; peaks: max RSS in MiB of the step's "
        "process (and its children), the analysis peak taken before the reference runs."
    )


if __name__ == "__main__":
    main()
