"""A stand-in for `python -m lmms_eval` in the launcher tests:
`--lmms-eval-cmd "python tests/support/fake_lmms_eval.py"`.

Reads the arguments the launcher passes (--model_args pretrained=X or model=X, --tasks, --output_path OUT,
--gen_kwargs, --limit, --device) and writes what lmms-eval 0.7.3 writes, with tests/support/logfactory.py:
OUT/<model dir>/<TIMESTAMP>_results.json (n-samples effective 10, the command line under
config.resolved_cli_args) and one samples file of 10 valid records per task (a group is split into its
tasks). FAKE_LMMS_EVAL_MODE changes that:
  complete    (default) all files
  no_samples  results.json only, as when a task raised during evaluation (lmms-eval still exits 0)
  truncated   the last samples line cut in half, as a writer killed mid-line leaves it
  crash       nothing written, exit code 1
  wait        first writes OUT/started, then waits until the file FAKE_LMMS_EVAL_RELEASE exists, then
              writes all files (a run that is still going while a test starts a second launcher)
Each call appends its --output_path to the file named by FAKE_LMMS_EVAL_CALLS, when set.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

from logfactory import make_records, run_folder, write_results_json, write_run

from lmms_eval_tasks.catalog import GROUPS, TASKS

SAMPLES_PER_TASK = 10  # logfactory's results.json says n-samples effective 10
WAIT_LIMIT_S = 120     # a wait that never ends is a broken test: give up rather than hang the suite


def record_command_line(results: Path, args: argparse.Namespace) -> None:
    data = json.loads(results.read_text(encoding="utf-8"))
    data["config"]["resolved_cli_args"] = {"model": args.model, "model_args": args.model_args, "tasks": args.tasks,
                                           "gen_kwargs": args.gen_kwargs, "limit": args.limit, "device": args.device}
    results.write_text(json.dumps(data, indent=2), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    parser.add_argument("--model_args")
    parser.add_argument("--tasks")
    parser.add_argument("--output_path")
    parser.add_argument("--gen_kwargs", default="")
    parser.add_argument("--limit", type=float)
    parser.add_argument("--device")
    args, _ = parser.parse_known_args()
    if os.environ.get("FAKE_LMMS_EVAL_CALLS"):
        with open(os.environ["FAKE_LMMS_EVAL_CALLS"], "a") as calls:
            calls.write(args.output_path + "\n")
    mode = os.environ.get("FAKE_LMMS_EVAL_MODE", "complete")
    if mode == "crash":
        return 1
    if mode == "wait":
        Path(args.output_path).mkdir(parents=True, exist_ok=True)
        (Path(args.output_path) / "started").write_text(str(os.getpid()))
        release = Path(os.environ["FAKE_LMMS_EVAL_RELEASE"])
        deadline = time.monotonic() + WAIT_LIMIT_S
        while not release.exists():
            if time.monotonic() > deadline:
                return 3
            time.sleep(0.05)
    model_args = dict(part.split("=", 1) for part in args.model_args.split(",") if "=" in part)
    model_path = model_args.get("pretrained") or model_args["model"]
    tasks = [task for item in args.tasks.split(",") for task in GROUPS.get(item, [item])]
    timestamp = time.strftime("%Y%m%d_%H%M%S")
    folder = run_folder(args.output_path, model_path)
    if mode == "no_samples":
        folder.mkdir(parents=True, exist_ok=True)
        write_results_json(folder / f"{timestamp}_results.json", model_path, tasks, model=args.model)
        record_command_line(folder / f"{timestamp}_results.json", args)
        return 0
    for task in tasks:
        benchmark, split = TASKS[task].spec.name, TASKS[task].spec.split
        records = make_records([True] * SAMPLES_PER_TASK, question_prefix=f"{task}-", benchmark=benchmark,
                               split=split, variant=TASKS[task].variant)
        write_run(args.output_path, model_path, task, records, timestamp=timestamp, lmms_eval_model=args.model,
                  truncate_last=mode == "truncated")
    record_command_line(folder / f"{timestamp}_results.json", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
