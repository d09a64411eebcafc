"""The README's quick start without a network: what the commands that load questions cost when the Hugging Face
hub cannot be reached, against the same commands given the data with --tasks-dir.

    .venv/bin/python perf/bench_offline.py [--workdir DIR] [--repeats 2] [--scale 40] [--real-endpoint]
                                           [--code DIR ...]

1. Fixture data (invscale_demo/fixtures.py at --scale, 96 x 96 drawn images) and a task folder reading it, and
   the synthetic answers of perf/synthetic.py for the README's two sizes (Qwen3-VL-2B and -8B) on the fixture's
   questions as lmms-eval logs, 1% of them unparsed (for `judges adjudicate`). Kept in --workdir.
2. Each command in a fresh process, --repeats times (best kept), with an empty Hugging Face cache and neither
   HF_HUB_OFFLINE nor HF_DATASETS_OFFLINE set: the hub is HF_ENDPOINT at a closed loopback port (connection
   refused), or with --real-endpoint the real one (on a machine without a network: the name does not resolve);
   then with HF_HUB_OFFLINE=1, and with --tasks-dir:
     report                      `invscale report --logs LOGS --out OUT` (the explorer on, as by default)
     judges adjudicate --dry-run the unparsed answers' questions reloaded, the calls counted
   Per run: wall and CPU seconds (user + system of the process and its children), huggingface_hub's retry lines
   on stderr ("Retrying in"), and the lines that say which questions are missing.
`--code` runs the commands from other checkouts too (e.g. `git archive COMMIT | tar -x -C DIR`), for before and
after. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

MODELS = ("Qwen3-VL-2B", "Qwen3-VL-8B")  # the README's two sizes
UNPARSED_SHARE = 0.01


def write_inputs(workdir: Path, scale: int) -> tuple[Path, Path]:
    """(the logs, the task folder): fixture data and the synthetic answers of MODELS on its questions."""
    import numpy as np

    from bench_postprocess import write_table_logs
    from invscale_demo.fixtures import write_fixtures
    from lmms_eval_tasks.benchmarks import BENCHMARKS
    from lmms_eval_tasks.hooks import questions_for
    from lmms_eval_tasks.install import export_tasks
    from postprocess.logs.questions import dataset_source, load_split
    from synthetic import per_question_table

    logs, tasks = workdir / "logs", workdir / "tasks"
    if logs.exists() and tasks.exists():
        return logs, tasks
    tasks = export_tasks(tasks, write_fixtures(workdir / "fixtures", scale=scale))
    table, models = per_question_table(1, categorical=False)
    table = table[table["model"].isin(MODELS)].copy()
    kept = []
    for spec in BENCHMARKS:
        rows = table[(table["benchmark"] == spec.name) & (table["split"] == spec.split)]
        if rows.empty:
            continue
        ids = [q.question_id for q in questions_for(load_split(dataset_source(spec, tasks), spec.task), spec)[1]]
        synthetic = list(dict.fromkeys(rows["question_id"]))[:len(ids)]  # as many questions as the fixture has
        rows = rows[rows["question_id"].isin(synthetic)]
        kept.append(rows.assign(question_id=rows["question_id"].map(dict(zip(synthetic, ids)))))
    import pandas as pd

    table = pd.concat(kept, ignore_index=True)
    worse = _bigger_worse(table)
    table.loc[worse, "response"] = table.loc[worse, "prediction"] = np.where(table.loc[worse, "gold"] == "A", "B", "A")
    table.loc[worse, "correct"] = False
    unparsed = np.random.default_rng(0).random(len(table)) < UNPARSED_SHARE
    table.loc[unparsed, ["response", "match", "correct"]] = ["I cannot tell from the image.", "none", False]
    table["prediction"] = table["prediction"].astype(object).where(~unparsed, None)
    shutil.rmtree(logs, ignore_errors=True)
    write_table_logs(table, models, logs)
    return logs, tasks


def _bigger_worse(table):
    """Rows of the larger model to answer wrong so that the first subtask of each split is a case (the synthetic
    answers of two models on a few hundred questions make none, and a report without cases loads no question):
    half of the questions the smaller model gets right."""
    import numpy as np

    first = table.groupby(["benchmark", "split"])["subtask"].transform("first")
    small = table[(table["model"] == MODELS[0]) & (table["subtask"] == first) & table["correct"].astype(bool)]
    right = set(zip(small["benchmark"], small["question_id"]))
    candidate = ((table["model"] == MODELS[1]) & (table["subtask"] == first)
                 & np.array([key in right for key in zip(table["benchmark"], table["question_id"])]))
    return (candidate & (candidate.cumsum() % 2 == 0)).to_numpy()


def closed_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def timed(command: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Wall seconds, exit code, and the retry and missing lines of stderr of one run of `command` (exit 0, or 2
    where it stops for the questions it cannot load)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate()
    wall = time.perf_counter() - started
    if process.returncode not in (0, 2):
        raise RuntimeError(f"{' '.join(command)} failed:\n{err.decode()[-3000:]}")
    text = err.decode() + out.decode()
    return {"wall": wall, "exit": process.returncode, "retries": text.count("Retrying in"),
            "missing": sum("cannot be loaded" in line for line in text.splitlines())}


def cpu_of_children() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_offline"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--scale", type=int, default=40, help="fixture rows per subtask (invscale_demo/fixtures)")
    parser.add_argument("--real-endpoint", action="store_true", help="leave HF_ENDPOINT as it is")
    parser.add_argument("--code", nargs="*", type=Path, default=[], help="other checkouts to run the commands from")
    args = parser.parse_args()
    logs, tasks = write_inputs(args.workdir, args.scale)
    base = {name: value for name, value in os.environ.items()
            if name not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")}
    if args.real_endpoint and "HF_ENDPOINT" in os.environ:
        base["HF_ENDPOINT"] = os.environ["HF_ENDPOINT"]
    elif not args.real_endpoint:
        base["HF_ENDPOINT"] = f"http://127.0.0.1:{closed_port()}"
    hub = "the real hub endpoint" if args.real_endpoint else base["HF_ENDPOINT"] + " (closed)"
    rows = []
    for code in [REPO, *args.code]:
        code = code.resolve()
        for command_name, command in (
                ("report", ["report", "--logs", str(logs), "--out", str(args.workdir / "out")]),
                ("judges adjudicate --dry-run", ["judges", "adjudicate", "--logs", str(logs), "--out",
                                                 str(args.workdir / "adjudication"), "--dry-run"])):
            for setting, extra, offline in (("hub unreachable", [], False), ("HF_HUB_OFFLINE=1", [], True),
                                            ("--tasks-dir", ["--tasks-dir", str(tasks)], False)):
                runs = []
                for _ in range(args.repeats):
                    home = args.workdir / "hf_home"  # an empty cache each time
                    shutil.rmtree(home, ignore_errors=True)
                    env = {**base, "HF_HOME": str(home), "PYTHONPATH": str(code),
                           **({"HF_HUB_OFFLINE": "1"} if offline else {})}
                    before = cpu_of_children()
                    run = timed([sys.executable, "-m", "invscale_cli", *command, *extra], env, code)
                    runs.append({**run, "cpu": cpu_of_children() - before})
                best = min(runs, key=lambda r: r["wall"])
                rows.append((code, command_name, setting, best, min(r["cpu"] for r in runs)))
                print(rows[-1], file=sys.stderr)
    print(f"hub: {hub}; best of {args.repeats}; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n")
    print("| code | command | questions from | exit | wall s | CPU s | retry lines | lines saying what is missing |")
    print("|---|---|---|---|---|---|---|---|")
    for code, command_name, setting, best, cpu in rows:
        print(f"| {code} | {command_name} | {setting} | {best['exit']} | {best['wall']:.2f} | {cpu:.2f} | {best['retries']} | "
              f"{best['missing']} |")


if __name__ == "__main__":
    main()
