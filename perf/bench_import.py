"""Import speed: a paper-scale per-question table (postprocess.logs.imports) against ingesting the lmms-eval
logs of the same answers (postprocess.logs.ingest).

    .venv/bin/python perf/bench_import.py [--scale 1] [--repeats 3] [--workers 2] [--formats parquet csv jsonl]

Writes the synthetic paper-scale answers once (perf/synthetic.py: 19 registry models x 9 splits, 558,334
answers at 1x) as lmms-eval logs (perf/bench_postprocess.write_logs) and as per-question tables holding the same
answers as raw responses with their four options, as a user would write them from their own outputs (model,
benchmark, split, subtask, question_id, variant, options, gold, response); then times, each in a fresh
process, interleaved so that they see the same load:
  ingest   ingest_logs on the logs (`--workers` parser processes, as perf/bench_ingest.py);
  import   import_outputs on each table format (the responses extracted and scored by the scoring core).
Prints per step the best wall time of `--repeats`, its CPU seconds (process and children), the least CPU seconds
and rows per CPU-second (the steadier figure when other work shares the cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OPTIONS = ["the first option", "the second option", "the third option", "the fourth option"]

STEP = """
import json, resource, sys, time
from pathlib import Path
from model_configs import load_registry
registry = load_registry()

def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

kind, path, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "ingest":
    from postprocess.logs.ingest import ingest_logs
    start_wall, start_cpu = time.perf_counter(), cpu()
    result = ingest_logs([path], registry, workers=workers)
else:
    from postprocess.logs.imports import ImportSource, import_outputs
    start_wall, start_cpu = time.perf_counter(), cpu()
    result = import_outputs([ImportSource(Path(path), "table")], registry)
print(json.dumps({"wall_s": time.perf_counter() - start_wall, "cpu_s": cpu() - start_cpu, "rows": len(result.table),
                  "problems": len(result.problems)}))
"""


def write_tables(scale: int, folder: Path, formats: list[str]) -> dict[str, Path]:
    """The synthetic answers as per-question tables, one file per format."""
    sys.path[:0] = [str(HERE), str(REPO)]
    from synthetic import per_question_table

    table, models = per_question_table(scale, categorical=False)
    hf_ids = dict(zip(models["model"], models["hf_id"]))
    frame = table.assign(model=table["model"].map(hf_ids))[
        ["model", "benchmark", "split", "subtask", "question_id", "variant", "gold", "response"]]
    frame.insert(6, "options", [OPTIONS] * len(frame))
    paths = {}
    for name in formats:
        path = folder / f"answers.{name}"
        if name == "parquet":
            frame.to_parquet(path, index=False)
        elif name == "csv":
            frame.assign(options=json.dumps(OPTIONS)).to_csv(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True)
        paths[name] = path
    return paths


def run_once(kind: str, path: Path, workers: int) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    load = os.getloadavg()[0]
    done = subprocess.run([sys.executable, "-c", STEP, kind, str(path), str(workers)], cwd=REPO, env=environment,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} {path} failed:\n{done.stderr[-3000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="ingest_logs parser processes")
    parser.add_argument("--formats", nargs="+", default=["parquet", "csv", "jsonl"], choices=["parquet", "csv", "jsonl"])
    args = parser.parse_args()
    sys.path[:0] = [str(HERE), str(REPO)]
    from bench_postprocess import write_logs

    with tempfile.TemporaryDirectory(prefix="bench_import_") as scratch:
        logs = Path(scratch) / "logs"
        records = write_logs(args.scale, logs)
        inputs = {"ingest lmms-eval logs": ("ingest", logs),
                  **{f"import {name} table": ("import", path)
                     for name, path in write_tables(args.scale, Path(scratch), args.formats).items()}}
        print(f"wrote {records:,} records as logs and as {', '.join(args.formats)} tables", file=sys.stderr)
        timings: dict[str, list[dict]] = {step: [] for step in inputs}
        for _ in range(args.repeats):
            for step, (kind, path) in inputs.items():
                timings[step].append(run_once(kind, path, args.workers))
                print(json.dumps({"step": step, **timings[step][-1]}), file=sys.stderr)
    print("| step | rows | best wall_s | its cpu_s | least cpu_s | rows per CPU-s | load (1 min) |\n"
          "|---|---|---|---|---|---|---|")
    for step, runs in timings.items():
        best = min(runs, key=lambda t: t["wall_s"])
        loads = ", ".join(f"{t['load']:.1f}" for t in runs)
        least_cpu = min(t["cpu_s"] for t in runs)
        print(f"| {step} | {best['rows']:,} | {best['wall_s']:.2f} | {best['cpu_s']:.2f} | {least_cpu:.2f} | "
              f"{best['rows'] / least_cpu:,.0f} | {loads} |")


if __name__ == "__main__":
    main()
