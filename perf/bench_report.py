"""CPU cost of the whole `python -m postprocess report` process at paper scale from a warm cache, against the
naive flip count of perf/naive_flips.py on the same cached table.

    .venv/bin/python perf/bench_report.py [--workdir DIR] [--repeats 3] [--source CHECKOUT ...]

It writes the synthetic paper-scale logs of bench_postprocess.py once (19 registry models, 558,334 records;
kept in --workdir), runs `report --cache-dir` once to fill the cache, then times each command --repeats
times in a fresh process and keeps the best: CPU seconds = user + system time of the process and its
children (os.wait4), and wall seconds. `--source` runs `report` from other checkouts too (e.g. a
`git worktree add /tmp/old 5161732`), each with its own cache, for before/after figures. Prints a
Markdown table; the ratio is report CPU over naive CPU.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `command`, which must succeed."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{process.stderr.read().decode()[-3000:]}")
    process.stderr.close()
    return usage.ru_utime + usage.ru_stime, wall


def best_of(repeats: int, command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    runs = [timed(command, env, cwd) for _ in range(repeats)]
    return min(cpu for cpu, _ in runs), min(wall for _, wall in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_report"),
                        help="logs, caches and outputs (the logs are kept between runs)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--source", type=Path, nargs="*", default=[], help="other checkouts to time `report` from")
    args = parser.parse_args()
    logs = args.workdir / "logs_1x"
    if not logs.exists():
        sys.path[:0] = [str(HERE), str(REPO)]
        from bench_postprocess import write_logs

        print(f"writing {write_logs(1, logs):,} records of synthetic logs to {logs}", file=sys.stderr)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    rows = []
    for n, source in enumerate([REPO, *args.source]):
        source = source.resolve()
        cache, out = args.workdir / f"cache_{n}", args.workdir / f"out_{n}"
        command = [sys.executable, "-m", "postprocess", "report", "--logs", str(logs), "--out", str(out),
                   "--cache-dir", str(cache)]
        source_env = {**env, "PYTHONPATH": str(source)}
        timed(command, source_env, source)  # fills the cache
        cpu, wall = best_of(args.repeats, command, source_env, source)
        rows.append((f"report ({source})", cpu, wall))
        if n == 0:
            table = next(cache.glob("*/table.parquet"))
            naive = [sys.executable, str(HERE / "naive_flips.py"), str(table)]
            cpu, wall = best_of(args.repeats, naive, env, REPO)
            rows.append(("naive flip count (perf/naive_flips.py)", cpu, wall))
    naive_cpu = rows[1][1]
    print("| command | CPU s (user+sys) | wall s | CPU / naive |")
    print("|---|---|---|---|")
    for name, cpu, wall in rows:
        print(f"| {name} | {cpu:.2f} | {wall:.2f} | {cpu / naive_cpu:.2f}x |")
    print(f"\nbest of {args.repeats}; warm cache; {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
