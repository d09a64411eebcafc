"""The embedded default: the whole pipeline on a laptop, offline, in minutes.

  python -m launch.demo [--out runs/demo] [--fresh]

1. writes the bundled fixtures of the nine benchmark splits and a task folder reading them;
2. builds tiny random-weight Qwen3-VL models of three sizes (a stand-in family);
3. runs the real lmms-eval CLI on every base task for each model (a run whose results and samples
   are already complete is kept, so re-running is cheap);
4. prints where the logs are.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from lmms_eval_tasks.catalog import GROUP, GROUPS
from lmms_eval_tasks.fixtures import write_fixtures
from lmms_eval_tasks.install import export_tasks

from .runner import find_outputs, lmms_eval_command, run_lmms_eval
from .tiny_models import ensure_model

DEMO_MODELS = [("tiny-qwen3-vl-small", "qwen3_vl", "small"), ("tiny-qwen3-vl-medium", "qwen3_vl", "medium"),
               ("tiny-qwen3-vl-large", "qwen3_vl", "large")]
# Tiny models answer noise; a short budget keeps the demo in minutes. Real runs use the tasks' 2048.
DEMO_GEN_KWARGS = "max_new_tokens=8"


def run_demo(out: Path) -> dict[str, Path]:
    out = out.resolve()
    tasks_dir = export_tasks(out / "tasks", write_fixtures(out / "fixtures"))
    logs = out / "logs"
    runs = {}
    for seed, (name, family, size) in enumerate(DEMO_MODELS):
        model = ensure_model(out / "models" / name, family, size, seed=seed)
        tasks = GROUPS[GROUP]
        model_logs = logs / name
        results, samples = find_outputs(model_logs, tasks)
        if results is not None and len(samples) == len(tasks):
            print(f"[demo] {name}: complete run found, kept ({results})")
        else:
            command = lmms_eval_command(family, f"pretrained={model},device_map=cpu", [GROUP], model_logs,
                                        include_path=tasks_dir, gen_kwargs=DEMO_GEN_KWARGS, device="cpu")
            run = run_lmms_eval(command, model_logs, tasks, model_logs / "lmms_eval.log")
            results = run.results
            print(f"[demo] {name}: {len(tasks)} tasks in {run.seconds:.0f} s -> {results.parent}")
        runs[name] = results.parent
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/demo"))
    parser.add_argument("--fresh", action="store_true", help="delete the output folder first")
    args = parser.parse_args(argv)
    if args.fresh and args.out.exists():
        shutil.rmtree(args.out)
    started = time.time()
    runs = run_demo(args.out)
    print(f"\n[demo] done in {time.time() - started:.0f} s. lmms-eval logs (results.json + samples_*.jsonl):")
    for name, folder in runs.items():
        print(f"  {name}: {folder}")


if __name__ == "__main__":
    main()
