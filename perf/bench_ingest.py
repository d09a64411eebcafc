"""Ingestion speed: postprocess.logs.ingest.ingest_logs on synthetic paper-scale lmms-eval logs.

    .venv/bin/python perf/bench_ingest.py [--scale 1] [--repeats 3] [--workers 2] [--realistic]
                                          [--logs DIR] [--code DIR ...]

Writes the logs once (perf/bench_postprocess.write_logs: 19 registry models x 9 splits, 558,334 records
at 1x; `--realistic` adds the fields the project's tasks write into every record: options,
permutation, details), then times `ingest_logs` `--repeats` times, each in a fresh process, and prints
per code checkout (`--code`, default this one; give another checkout to compare before and after):
  wall_s       best wall time of the call (fork, parse in `--workers` processes, merge);
  cpu_s        CPU seconds of that run, the process and its workers (user + system);
  records/s    records over the best wall time, and over the CPU seconds;
  load         the 1-minute load average before each run (other work on the machine slows wall times:
               CPU seconds are the steadier figure when the cores are shared).
The runs of several checkouts are interleaved so that they see the same load.
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

STEP = """
import json, resource, sys, time
from model_configs import load_registry
from postprocess.logs.ingest import ingest_logs
registry = load_registry()

def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

start_wall, start_cpu = time.perf_counter(), cpu()
result = ingest_logs([sys.argv[1]], registry, workers=int(sys.argv[2]))
print(json.dumps({"wall_s": time.perf_counter() - start_wall, "cpu_s": cpu() - start_cpu, "rows": len(result.table),
                  "problems": len(result.problems)}))
"""


def realistic(logs: Path) -> None:
    """Add options, permutation and details to every record, as lmms_eval_tasks/scoring.py writes them."""
    extra = {"options": ["the first option", "the second option", "the third option", "the fourth option"],
             "permutation": [0, 1, 2, 3], "details": {"source": "synthetic", "answer_type": "multiple_choice"}}
    for path in logs.rglob("*_samples_*.jsonl"):
        lines = []
        for text in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)
            line["per_question"].update(extra)
            lines.append(json.dumps(line))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_once(code: Path, logs: Path, workers: int) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(code)}
    load = os.getloadavg()[0]
    done = subprocess.run([sys.executable, "-c", STEP, str(logs), str(workers)], cwd=code, env=environment,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ingestion failed with {code}:\n{done.stderr[-3000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="parser processes (ingest_logs workers)")
    parser.add_argument("--realistic", action="store_true", help="records with options, permutation and details")
    parser.add_argument("--logs", type=Path, help="reuse (or keep) the synthetic logs here")
    parser.add_argument("--code", nargs="+", type=Path, default=[REPO], help="project checkouts to time")
    args = parser.parse_args()
    sys.path[:0] = [str(HERE), str(REPO)]
    from bench_postprocess import write_logs

    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as scratch:
        logs = args.logs or Path(scratch) / "logs"
        if not logs.exists():
            records = write_logs(args.scale, logs)
            if args.realistic:
                realistic(logs)
            print(f"wrote {records:,} records to {logs}", file=sys.stderr)
        runs: dict[Path, list[dict]] = {code: [] for code in args.code}
        for _ in range(args.repeats):
            for code in args.code:
                runs[code].append(run_once(code.resolve(), logs, args.workers))
                print(json.dumps({"code": str(code), **runs[code][-1]}), file=sys.stderr)
    print("| code | records | workers | best wall_s | its cpu_s | records/s (wall) | records per CPU-s | "
          "min cpu_s | load (1 min) |\n|---|---|---|---|---|---|---|---|---|")
    for code, timings in runs.items():
        best = min(timings, key=lambda t: t["wall_s"])
        least_cpu = min(t["cpu_s"] for t in timings)
        loads = ", ".join(f"{t['load']:.1f}" for t in timings)
        print(f"| {code} | {best['rows']:,} | {args.workers} | {best['wall_s']:.2f} | {best['cpu_s']:.2f} | "
              f"{best['rows'] / best['wall_s']:,.0f} | {best['rows'] / least_cpu:,.0f} | {least_cpu:.2f} | {loads} |")


if __name__ == "__main__":
    main()
