"""What `report` costs, in one run: the whole `python -m postprocess report` process from a warm cache at 1x, 3x
and 10x the paper's scale, with its default explorer and with `--explorer none`, against two naive scripts that only
count the comparisons; then the other figures of performance.md's summary (import against ingestion, the extraction
hot path) from their own scripts.

    .venv/bin/python perf/bench_report.py [--workdir DIR] [--scales 1 3 10] [--repeats 2] [--source CHECKOUT ...]
                                          [--no-import] [--no-extraction]

Per scale it writes the synthetic logs of bench_postprocess.py once (19 registry models; 558,334 records at 1x,
5,583,340 at 10x; kept in --workdir: 3.6 GB at 10x), runs `report --cache-dir` once to fill the cache (the ingested
table), then times each command --repeats times in a fresh process and keeps the best: CPU seconds = user + system
time of the process and its children (os.wait4), wall seconds, and peak memory (the largest process's maximum RSS).

`report` is timed three times over, each with the default explorer and with `--explorer none`:
  reused     the same command again: its inputs, options and code unchanged, the outputs are copied from the
             cache's entry of the previous run (postprocess/render/reuse.py; the explorer is still written);
  computed   the same command with the cache's report entries removed before each run: the analysis, the tables,
             answers.parquet and the report are all made again (and stored for reuse, which that run pays for); the
             ingested table and the drawn figures come from the cache, as in every warm run before reuse existed;
  drawn      what a changed parameter costs: `--min-n 19` with the report entries and the drawn figures removed
             from the cache before each run, so that everything is computed as above and the figures (whose data
             changed) are drawn again, matplotlib imported.
The yardsticks, each timed the same way:
  naive_logs   perf/naive_logs.py, the issue's "naive per-group pandas script": the lmms-eval samples files read with
               pandas, pairs by size, FlipInv / FlipNorm counted per (pair, benchmark, split, subtask) group in a loop.
               The issue's targets (report <= 0.25x of it, --explorer none <= 0.12x) are judged against this one. Its
               counts are checked against the report's comparisons.parquet at every scale.
  naive_table  perf/naive_flips.py: the same count from the report's own cached Parquet table with vectorised
               per-pair merges (ingestion done for it by the report): the cheaper yardstick of earlier notes.
The logs have no question data behind them and the hub is off (HF_HUB_OFFLINE=1), so the explorer writes its pages
with the answers and says the questions are missing (every run tries the local Hugging Face cache for each split
again); perf/bench_explorer.py measures it with every question and image. Every timed process runs with compiled
bytecode, as an installed package does: PYTHONDONTWRITEBYTECODE is removed and PYTHONPYCACHEPREFIX points into
--workdir (the cache-filling runs compile it). `--source` runs `report` from other checkouts too (e.g. `git worktree
add /tmp/old <commit>`), each with its own cache, for before/after figures (their warm runs compute: those checkouts
have no reuse; their figures go in the computed columns). Prints Markdown tables; growth is CPU per answer relative
to the first scale (1.00: linear).
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
    stderr = process.stderr.read()  # read while it runs: a full pipe would block it
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{stderr.decode()[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def best_of(commands: list[list[str]], env: dict[str, str], cwd: Path, before=None) -> tuple[float, float, float]:
    """Best CPU and wall, largest peak, over one run of each command (`before()` called before each)."""
    runs = []
    for command in commands:
        if before is not None:
            before()
        runs.append(timed(command, env, cwd))
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


def counts_agree(naive_csv: Path, comparisons: Path, env: dict[str, str]) -> str:
    """Whether naive_logs' counts (n >= 20) are the report's eligible comparisons, pair by pair and subtask by
    subtask (n, FlipInv, FlipNorm); the report names models by registry key, the script by the repository name."""
    check = f"""
import pandas as pd
from model_configs import load_registry
models = load_registry().models_frame()
name = dict(zip(models["model"], models["hf_id"].str.split("/").str[-1]))
report = pd.read_parquet({str(comparisons)!r})
report = report.assign(small=report["small"].map(name), large=report["large"].map(name))
naive = pd.read_csv({str(naive_csv)!r}, keep_default_na=False)
naive = naive[naive["n"] >= 20]
key = ["small", "large", "benchmark", "split", "subtask"]
both = report.merge(naive, on=key, how="outer", indicator=True)
same = (both["_merge"] == "both").all() and all((both[c + "_x"] == both[c + "_y"]).all()
                                               for c in ("n", "flip_inv", "flip_norm"))
print(f"{{'agree' if same else 'DISAGREE'}} ({{len(naive):,}} eligible comparisons in both)")
"""
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO, env=env, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"(check failed: {done.stderr.strip()[-300:]})"


def script_output(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"(failed: {done.stderr.strip()[-500:]})"


def ratio(cpu: float, reference: float) -> str:
    return f"{cpu / reference:.2f}x"


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
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPYCACHEPREFIX=str(args.workdir.resolve() / "pycache"))
    rows, yardsticks, agreement = [], {}, {}
    for scale in args.scales:
        logs, records = logs_of(scale, args.workdir)
        for n, source in enumerate([REPO, *args.source]):
            source = source.resolve()
            cache, out = args.workdir / f"cache_{scale}x_{n}", args.workdir / f"out_{scale}x_{n}"
            command = [sys.executable, "-m", "postprocess", "report", "--logs", str(logs), "--out", str(out),
                       "--cache-dir", str(cache)]
            bare = [*command, "--explorer", "none"]
            source_env = {**env, "PYTHONPATH": str(source)}
            timed(command, source_env, source)  # fills the cache: the table, and the outputs for reuse
            timed(bare, source_env, source)
            if n == 0:
                naive_csv = args.workdir / f"naive_counts_{scale}x.csv"
                naive_logs = best_of([[sys.executable, str(HERE / "naive_logs.py"), str(logs), "--out",
                                       str(naive_csv)]] * args.repeats, env, REPO)
                table = next(cache.glob("ingest-*/table.parquet"))
                naive_table = best_of([[sys.executable, str(HERE / "naive_flips.py"), str(table)]] * args.repeats,
                                      env, REPO)
                yardsticks[scale] = (naive_logs, naive_table)
                agreement[scale] = counts_agree(naive_csv, out / "comparisons.parquet", {**env, "PYTHONPATH": str(REPO)})
            figures = {"reused": best_of([command] * args.repeats, source_env, source),
                       "reused none": best_of([bare] * args.repeats, source_env, source)}
            def no_entries(cache: Path = cache, figures_too: bool = False) -> None:
                for entry in [*cache.glob("report-*"), *([cache / "figures"] if figures_too else [])]:
                    shutil.rmtree(entry, ignore_errors=True)

            if n == 0:
                figures["computed"] = best_of([command] * args.repeats, source_env, source, no_entries)
                figures["computed none"] = best_of([bare] * args.repeats, source_env, source, no_entries)
                changed = ["--min-n", "19"]
                figures["drawn"] = best_of([[*command, *changed]] * args.repeats, source_env, source,
                                           lambda: no_entries(figures_too=True))
                figures["drawn none"] = best_of([[*bare, *changed]] * args.repeats, source_env, source,
                                                lambda: no_entries(figures_too=True))
                timed(command, source_env, source)  # the figures of the default parameters, for the next run
            else:  # no reuse there: a warm run computes
                figures["computed"], figures["computed none"] = figures["reused"], figures["reused none"]
                figures["reused"] = figures["reused none"] = figures["drawn"] = figures["drawn none"] = None
            rows.append((scale, records, source, figures))

    first = args.scales[0]
    print(f"## report against the naive scripts (best of {args.repeats}; CPU s = user + system of the process and its "
          "children)\n")
    print("yardsticks: naive_logs = perf/naive_logs.py from the lmms-eval logs (the issue's naive per-group script: the "
          "targets are judged against it); naive_table = perf/naive_flips.py from the report's cached table\n")
    print("| scale | answers | naive_logs CPU s (wall) | naive_table CPU s (wall) | naive_logs' counts = report's | "
          "peak MiB naive_logs / naive_table |")
    print("|---|---|---|---|---|---|")
    for scale, (naive_logs, naive_table) in yardsticks.items():
        records = next(r[1] for r in rows if r[0] == scale)
        print(f"| {scale}x | {records:,} | {naive_logs[0]:.2f} ({naive_logs[1]:.2f}) | {naive_table[0]:.2f} "
              f"({naive_table[1]:.2f}) | {agreement[scale]} | {naive_logs[2]:,.0f} / {naive_table[2]:,.0f} |")
    print()
    print("| scale | checkout | run | report CPU s (wall) | `--explorer none` CPU s (wall) | explorer's share | "
          "report / naive_logs | none / naive_logs | report / naive_table | none / naive_table | "
          "peak MiB report / none | growth (report / none) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    per_answer = {}
    for scale, records, source, figures in rows:
        naive_logs, naive_table = yardsticks[scale]
        for run in ("reused", "computed", "drawn"):
            default, bare = figures[run], figures[f"{run} none"]
            if default is None:
                continue
            if source == REPO.resolve():
                per_answer[(scale, run)] = (default[0] / records, bare[0] / records)
            base = per_answer.get((first, run))
            growth = (f"{default[0] / records / base[0]:.2f} / {bare[0] / records / base[1]:.2f}"
                      if base and source == REPO.resolve() else "-")
            print(f"| {scale}x | {'this' if source == REPO.resolve() else source} | {run} | {default[0]:.2f} "
                  f"({default[1]:.2f}) | {bare[0]:.2f} ({bare[1]:.2f}) | {(default[0] - bare[0]) / default[0]:.0%} | "
                  f"**{ratio(default[0], naive_logs[0])}** | **{ratio(bare[0], naive_logs[0])}** | "
                  f"{ratio(default[0], naive_table[0])} | {ratio(bare[0], naive_table[0])} | "
                  f"{default[2]:,.0f} / {bare[2]:,.0f} | {growth} |")
    print(f"\ntargets (issue 28, against naive_logs): report <= 0.25x, --explorer none <= 0.12x; explorer's share = "
          f"(report - none) / report. {os.cpu_count()} CPUs; 1-minute load at the end {os.getloadavg()[0]:.1f}")
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
