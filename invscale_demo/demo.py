"""The embedded default: the whole pipeline on a laptop, offline, in minutes.

  python -m invscale_demo [--out runs/demo] [--fresh] [--cait-build]

1. writes the bundled fixtures (the nine benchmark splits at demo scale, and a CAIT folder) and a
   task folder reading them;
2. builds tiny random-weight models of two families, Qwen3-VL (three dense sizes and a MoE) and
   Molmo 2 (three sizes), registered in OUT/logs/extra_models.yaml (read by every command given those logs,
   without --extra-models) as the families "Tiny Qwen3-VL" and
   "Tiny Molmo 2" with their real parameter counts (total and, for the MoE, active);
3. runs the real lmms-eval CLI per model: the nine base tasks, their reversed-option variant, and the
   CAIT tasks (a run whose results and samples are already complete is kept: re-running is cheap); two
   models at a time on a machine with two or more cores (--jobs), each with its share of the CPU threads;
4. runs `postprocess report` over the logs and prints where the report is.

With --cait-build it instead builds a CAIT folder of 4 scenes through the construction pipeline
(cait_dataset/construction: a fake LLM endpoint, a tiny diffusers pipeline, a demo annotator; see
invscale_demo/cait_build_demo.py) and runs the CAIT tasks on it with the smallest tiny model of each family.

The tiny models answer one token (their answers are chance-level by construction; see
invscale_demo/tiny_models.py), so the cases the report finds are chance and position-bias flips: the point is
the pipeline, not the findings. Fixtures are small, so the report uses --min-n 10 instead of 20.
"""

from __future__ import annotations

import argparse
import os
import re
from concurrent.futures import ThreadPoolExecutor
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml
from tqdm import tqdm

from lmms_eval_tasks.catalog import GROUPS, TASKS
from launch.runner import OFFLINE_ENV, find_outputs, lmms_eval_command, run_lmms_eval
from lmms_eval_tasks.install import export_tasks
from model_configs import REGISTRY_BESIDE_LOGS

from .fixtures import write_fixtures
from .tiny_models import ensure_model

# family -> (lmms-eval model, [(size label, tiny size, seed)]). lmms-eval's qwen3_vl wrapper loads the MoE
# class when the path matches A\d+B, so the MoE's label carries one.
FAMILIES = {
    "Tiny Qwen3-VL": ("qwen3_vl", [("S", "small", 0), ("M", "medium", 1), ("L", "large", 2), ("L-MoE-A1B", "large", 3)]),
    "Tiny Molmo 2": ("molmo2", [("S", "small", 4), ("M", "medium", 5), ("L", "large", 6)]),
}
BATCH_SIZE = 8
DEMO_TASKS = GROUPS["invscale"] + GROUPS["invscale_reverse"] + ["cait", "cait_swap", "cait_describe"]
FIXTURE_SCALE = 12  # enough questions per subtask for comparisons at --min-n 10
DEMO_GEN_KWARGS = "max_new_tokens=1"  # tiny models answer one token; real runs use the tasks' 2048
REPORT_OPTIONS = ["--min-n", "10"]


def model_key(family: str, label: str) -> str:
    return f"{family.replace(' ', '-')}-{label}"


def parameter_counts(path: Path) -> tuple[int, int]:
    """(total, active) parameters; a MoE layer activates num_experts_per_tok of its num_experts experts."""
    import torch
    import transformers

    config = transformers.AutoConfig.from_pretrained(path)
    with torch.device("meta"):  # count without allocating
        model = transformers.AutoModelForImageTextToText.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    text = config.get_text_config()
    experts = getattr(text, "num_experts", None)
    if not experts:
        return total, total
    expert_params = sum(p.numel() for name, p in model.named_parameters() if ".experts." in name)
    return total, total - round(expert_params * (1 - text.num_experts_per_tok / experts))


def build_models(out: Path) -> tuple[list[tuple[str, str, Path]], Path]:
    """Build (or reuse) every demo model; write the registry YAML that names them."""
    built, entries = [], []
    for family, (wrapper, sizes) in FAMILIES.items():
        for label, size, seed in sizes:
            key = model_key(family, label)
            path = ensure_model(out / "models" / key, wrapper, size, seed=seed)
            total, active = parameter_counts(path)
            built.append((key, wrapper, path))
            entries.append({"key": key, "hf_id": f"local/{key}", "family": family, "size": label,
                            "total_params": total, "active_params": active, "moe": active < total,
                            "encoder_tier": f"{family} encoder", "lmms_eval_model": wrapper})
    registry = out / "logs" / REGISTRY_BESIDE_LOGS  # beside the logs, so every command over them finds the models
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text(yaml.safe_dump({"families": list(FAMILIES), "models": entries}, sort_keys=False))
    return built, registry


RESPONDING = re.compile(rb"Model Responding:\s*\d+%\|[^|\r\n]*\|\s*(\d+)/(\d+)")


def answered(log_tail: bytes) -> tuple[int, int] | None:
    """(answers done, answers in all) from the last of lmms-eval's "Model Responding: 42%|... | 64/153" bars."""
    matches = RESPONDING.findall(log_tail)
    return (int(matches[-1][0]), int(matches[-1][1])) if matches else None


def _follow(log: Path, bar, stop: threading.Event) -> None:
    """Move `bar` along lmms-eval's own answer progress in its log until `stop` is set."""
    while not stop.wait(0.5):
        try:
            with open(log, "rb") as handle:
                handle.seek(max(0, log.stat().st_size - 4096))
                progress = answered(handle.read())
        except FileNotFoundError:
            continue
        if progress:
            done, total = progress
            bar.total = total
            bar.set_postfix_str("answering" if done < total else "scoring and writing logs", refresh=False)
            bar.update(done - bar.n)


def run_with_progress(key: str, command: list[str], logs: Path, expected: list[str], position: int = 0,
                      threads: int | None = None):
    """run_lmms_eval with a progress bar of the model's answers in a terminal (at `position` when several
    run at once); elsewhere one line when it starts (the run's own output goes to its log). `threads`: the
    CPU threads its torch may use."""
    log = logs / "lmms_eval.log"
    interactive = sys.stderr.isatty()
    if not interactive:
        print(f"[demo] {key}: running {len(expected)} tasks (log: {log})", flush=True)
    env = {"OMP_NUM_THREADS": str(threads)} if threads else None
    with tqdm(desc=f"[demo] {key}", unit="answer", total=None, disable=not interactive, leave=False,
              position=position, postfix="loading the model and the tasks") as bar:
        stop = threading.Event()
        follower = threading.Thread(target=_follow, args=(log, bar, stop), daemon=True)
        follower.start()
        try:
            return run_lmms_eval(command, logs, expected, log, env=env)
        finally:
            stop.set()
            follower.join()


def default_jobs() -> int:
    """Model runs at a time: two where there are two cores or more (much of a run is one-threaded start-up:
    imports and lmms-eval's task index)."""
    return min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def run_demo(out: Path, jobs: int = 1) -> Path:
    out = out.resolve()
    tasks_dir = export_tasks(out / "tasks", write_fixtures(out / "fixtures", scale=FIXTURE_SCALE))
    models, _ = build_models(out)
    expected = [t for t in DEMO_TASKS if t in TASKS]
    todo = []
    for key, wrapper, path in models:
        logs = out / "logs" / key
        results, samples = find_outputs(logs, expected)
        if results is not None and len(samples) == len(expected):
            print(f"[demo] {key}: complete run found, kept ({results.parent})")
            continue
        command = lmms_eval_command(wrapper, f"pretrained={path},device_map=cpu", DEMO_TASKS, logs,
                                    include_path=tasks_dir, gen_kwargs=DEMO_GEN_KWARGS, device="cpu", batch_size=BATCH_SIZE)
        todo.append((key, command, logs))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = max(1, cores // jobs) if jobs > 1 else None
    free = list(range(jobs))  # progress-bar rows
    lock = threading.Lock()

    def run(key: str, command: list[str], logs: Path) -> None:
        with lock:
            position = free.pop(0)
        try:
            result = run_with_progress(key, command, logs, expected, position, threads)
        finally:
            with lock:
                free.append(position)
        print(f"[demo] {key}: {len(expected)} tasks in {result.seconds:.0f} s -> {result.results.parent}", flush=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in [pool.submit(run, *item) for item in todo]:
            future.result()  # a failed run stops the demo with its reason
    report = out / "report"
    subprocess.run([sys.executable, "-m", "postprocess", "report", "--logs", str(out / "logs"), "--out", str(report),
                    "--cache-dir", str(out / "cache"), *REPORT_OPTIONS],
                   check=True, env={**os.environ, **OFFLINE_ENV})
    return report


CAIT_BUILD_TASKS = ["cait", "cait_swap", "cait_describe"]


def run_cait_build_demo(out: Path) -> Path:
    """Build the demo CAIT folder, then run the CAIT tasks on it with the first size of each family."""
    from lmms_eval_tasks import cait

    from .cait_build_demo import build_demo_cait

    out = out.resolve()
    data = cait.prepare(build_demo_cait(out), out / "cait_build_data")
    tasks_dir = export_tasks(out / "cait_build_tasks", {"cait": str(data)})
    logs_root = out / "cait_build_logs"
    for family, (wrapper, sizes) in FAMILIES.items():
        label, size, seed = sizes[0]
        key = model_key(family, label)
        results, samples = find_outputs(logs_root / key, CAIT_BUILD_TASKS)
        if results is not None and len(samples) == len(CAIT_BUILD_TASKS):
            print(f"[demo] {key}: complete run found, kept ({results.parent})")
            continue
        path = ensure_model(out / "models" / key, wrapper, size, seed=seed)
        command = lmms_eval_command(wrapper, f"pretrained={path},device_map=cpu", CAIT_BUILD_TASKS, logs_root / key,
                                    include_path=tasks_dir, gen_kwargs=DEMO_GEN_KWARGS, device="cpu",
                                    batch_size=BATCH_SIZE)
        run = run_lmms_eval(command, logs_root / key, CAIT_BUILD_TASKS, logs_root / key / "lmms_eval.log")
        print(f"[demo] {key}: {', '.join(CAIT_BUILD_TASKS)} on the built scenes in {run.seconds:.0f} s -> "
              f"{run.results.parent}")
    return logs_root


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.replace("python -m invscale_demo", prog) if prog
                                     else __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/demo"))
    parser.add_argument("--fresh", action="store_true", help="delete the output folder first")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="model runs at a time (default: 2 on a machine with two or more cores, else 1)")
    parser.add_argument("--cait-build", action="store_true",
                        help="build 4 CAIT scenes through cait-build offline and run the CAIT tasks on them")
    args = parser.parse_args(argv)
    if args.fresh and args.out.exists():
        shutil.rmtree(args.out)
    started = time.time()
    if args.cait_build:
        logs = run_cait_build_demo(args.out)
        print(f"\n[demo] done in {time.time() - started:.0f} s")
        print(f"  CAIT folder:    {args.out.resolve() / 'cait_build' / 'cait'}")
        print(f"  lmms-eval logs: {logs}")
        return
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    report = run_demo(args.out, args.jobs)
    print(f"\n[demo] done in {time.time() - started:.0f} s")
    print(f"  lmms-eval logs: {args.out.resolve() / 'logs'}")
    print(f"  report:         {report / 'report.html'} (and report.md, tables/, figures/)")
    print(f"  note: the report uses {' '.join(REPORT_OPTIONS)}: the fixtures are small, so a comparison needs 10 shared "
          "questions of a subtask to be eligible;\n        `invscale report` on these logs keeps the paper's default of "
          "20 (--min-n 20) and finds fewer cases")

if __name__ == "__main__":
    main()
