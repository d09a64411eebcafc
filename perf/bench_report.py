"""What `report` costs, in one run: the whole `python -m postprocess report` process from a warm cache at 1x, 3x
and 10x the paper's scale, with its default explorer and with `--explorer none`, against the naive flip count of
perf/naive_flips.py on the same cached table; then the other figures of performance.md's summary (import against
ingestion, the extraction hot path) from their own scripts.

    .venv/bin/python perf/bench_report.py [--workdir DIR] [--scales 1 3 10] [--repeats 2] [--source CHECKOUT ...]
                                          [--no-import] [--no-extraction]

Per scale it writes the synthetic logs of bench_postprocess.py once (19 registry models; 558,334 records at 1x,
5,583,340 at 10x; kept in --workdir: 3.6 GB at 10x), runs `report --cache-dir` once to fill the cache, then times
each command --repeats times in a fresh process and keeps the best: CPU seconds = user + system time of the process
and its children (os.wait4), wall seconds, and peak memory (the largest process's maximum RSS). The logs have no
question data behind them and the hub is off (HF_HUB_OFFLINE=1), so the explorer writes its pages with the
answers and says the questions are missing; perf/bench_explorer.py measures it with every question and image.
`--source` runs `report` from other checkouts too (e.g. `git worktree add /tmp/old <commit>`), each with its own
cache, for before/after figures. Prints Markdown tables; a ratio is report CPU over naive CPU at the same scale,
growth is CPU per answer relative to 1x (1.00: linear).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MiB = 2**20


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak RSS MiB) of one run of `command`, which must succeed."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{process.stderr.read().decode()[-3000:]}")
    process.stderr.close()
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def best_of(repeats: int, command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    runs = [timed(command, env, cwd) for _ in range(repeats)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


def logs_of(scale: int, workdir: Path) -> tuple[Path, int]:
    logs = workdir / f"logs_{scale}x"
    marker = workdir / f"logs_{scale}x.records"  # written last: a half-written folder is written again
    if not marker.exists():
        sys.path[:0] = [str(HERE), str(REPO)]
        from bench_postprocess import write_logs

        print(f"writing the {scale}x synthetic logs to {logs} ...", file=sys.stderr)
        if logs.exists():
            shutil.rmtree(logs)
        marker.write_text(str(write_logs(scale, logs)))
    return logs, int(marker.read_text())


def script_output(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"(failed: {done.stderr.strip()[-500:]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_report"),
                        help="logs, caches and outputs (the logs are kept between runs)")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--source", type=Path, nargs="*", default=[], help="other checkouts to time `report` from")
    parser.add_argument("--no-import", dest="imports", action="store_false", help="skip perf/bench_import.py")
    parser.add_argument("--no-extraction", dest="extraction", action="store_false",
                        help="skip perf/bench_extraction.py")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    rows, per_answer = [], {}
    for scale in args.scales:
        logs, records = logs_of(scale, args.workdir)
        naive_cpu = None
        for n, source in enumerate([REPO, *args.source]):
            source = source.resolve()
            cache, out = args.workdir / f"cache_{scale}x_{n}", args.workdir / f"out_{scale}x_{n}"
            command = [sys.executable, "-m", "postprocess", "report", "--logs", str(logs), "--out", str(out),
                       "--cache-dir", str(cache)]
            source_env = {**env, "PYTHONPATH": str(source)}
            timed(command, source_env, source)  # fills the cache
            default = best_of(args.repeats, command, source_env, source)
            bare = best_of(args.repeats, [*command, "--explorer", "none"], source_env, source)
            if naive_cpu is None:
                table = next(cache.glob("*/table.parquet"))
                naive_cpu, naive_wall, naive_rss = best_of(args.repeats, [sys.executable, str(HERE / "naive_flips.py"),
                                                                          str(table)], env, REPO)
            if n == 0:
                per_answer[scale] = default[0] / records
            rows.append((scale, records, str(source), default, bare, (naive_cpu, naive_wall, naive_rss)))
    print("| scale | answers | checkout | report CPU s (wall) | `--explorer none` CPU s (wall) | naive CPU s | "
          "report / naive | `none` / naive | explorer's share | peak MiB report / none / naive | growth |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for scale, records, source, default, bare, naive in rows:
        growth = per_answer[scale] / per_answer[args.scales[0]] if source == str(REPO) else float("nan")
        print(f"| {scale}x | {records:,} | {source} | {default[0]:.2f} ({default[1]:.2f}) | {bare[0]:.2f} "
              f"({bare[1]:.2f}) | {naive[0]:.2f} | {default[0] / naive[0]:.2f}x | {bare[0] / naive[0]:.2f}x | "
              f"{(default[0] - bare[0]) / default[0]:.0%} | {default[2]:,.0f} / {bare[2]:,.0f} / {naive[2]:,.0f} | "
              f"{growth:.2f} |")
    print(f"\nbest of {args.repeats}; warm cache; {os.cpu_count()} CPUs; 1-minute load at the end "
          f"{os.getloadavg()[0]:.1f}")
    project_env = {**env, "PYTHONPATH": str(REPO)}
    if args.imports:
        print("\nImport against ingestion (perf/bench_import.py, 1x):\n")
        print(script_output([sys.executable, str(HERE / "bench_import.py"), "--repeats", "2",
                             "--formats", "parquet", "csv", "jsonl"], project_env))
    if args.extraction:
        print("\nExtraction hot path (perf/bench_extraction.py):\n")
        print(script_output([sys.executable, str(HERE / "bench_extraction.py")], project_env))


if __name__ == "__main__":
    main()
