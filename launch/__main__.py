"""Launch lmms-eval for the registry's models: plan, run on this node, or write Slurm job arrays.

  python -m launch plan  (--models KEY[,KEY..]|all | --family F[,F..]) --tasks TASK|GROUP[,..] --out DIR
  python -m launch run   (same selection) [--only ROW[,ROW..]] [--keep-going] [--dry-run]
  python -m launch run   --manifest DIR/slurm/manifest.tsv --only ROW      (what each Slurm array task runs)
  python -m launch slurm (same selection) [--slurm-dir DIR] [--job-name NAME] [--force] [--dry-run]

  common: [--gpus-per-node 8] [--include-path DIR] [--keep-groups] [--extra-models YAML ..]
          [--lmms-eval-cmd "python -m lmms_eval"]

plan   prints every run (one per model x task; a group is split into its tasks unless --keep-groups),
       its command, GPUs and estimated GPU-hours (launch/plan.py: the formula; an estimate), and flags
       families whose models run on different wrappers.
run    runs the rows one after another on this node, into OUT/<model key>/<task or group>/.
       Resume: a run folder whose newest results.json has every task's samples file, each non-empty,
       ending in a newline and holding as many lines as results.json's n-samples, is complete and
       skipped. Otherwise its results.json / samples files (partial output) are DELETED, not moved:
       ingestion walks OUT recursively and keeps the first copy of a question it reads, so a stale
       partial file would shadow the rerun. Its previous lmms_eval.log is kept, renamed
       lmms_eval.<YYYYmmdd_HHMMSS>.log. After each run the same check runs; a run that fails it stops
       the launcher with exit code 1 and a message naming the model, the tasks and the log
       (--keep-going: the other rows run first, then the failures are listed).
       The caller's HF_HUB_OFFLINE / HF_DATASETS_OFFLINE / TRANSFORMERS_OFFLINE apply (default: online).
slurm  writes manifest.tsv (one row per run), one job-array script per GPU count and submit.sh into
       --slurm-dir (default OUT/slurm); see launch/slurm.py.

--lmms-eval-cmd is the command used to invoke lmms-eval (default `python -m lmms_eval`); its first word
is the Python interpreter: data-parallel runs replace it with `accelerate launch --num_processes N`,
and `python` itself means the interpreter running the launcher. Point it at another script to run a
wrapper, a patched lmms-eval, or (the tests) a fake that writes or withholds the output files.
--include-path defaults to the project's task folder (lmms_eval_tasks/tasks, hub datasets); pass an
exported folder (`python -m lmms_eval_tasks export`) to read local data.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lmms_eval_tasks.install import TASKS_DIR
from model_configs import RegistryError, load_registry

from .plan import (DEFAULT_GPUS_PER_NODE, DEFAULT_LMMS_EVAL_CMD, PlanError, Row, build_plan, expand_tasks,
                   format_plan, manifest_text, read_manifest, select_models)
from .runner import OFFLINE_ENV, RunFailed, incomplete_reason, lmms_eval_outputs, run_lmms_eval
from .slurm import slurm_files, write_slurm


class LaunchFailed(RuntimeError):
    """One or more runs failed; the message names each model, its tasks and its log."""


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m launch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("plan", "run", "slurm"):
        sub = commands.add_parser(name, help=f"see `python -m launch --help` ({name})")
        select = sub.add_mutually_exclusive_group(required=name != "run")
        select.add_argument("--models", type=_csv, help="registry keys, comma-separated, or all")
        select.add_argument("--family", type=_csv, help="families, comma-separated (CAIT: the CAIT paper's models)")
        sub.add_argument("--tasks", type=_csv, help="tasks or groups, comma-separated")
        sub.add_argument("--out", type=Path, help="output root: OUT/<model key>/<task or group>/")
        sub.add_argument("--gpus-per-node", type=int, default=DEFAULT_GPUS_PER_NODE)
        sub.add_argument("--include-path", type=Path, default=TASKS_DIR, help="task folder for lmms-eval")
        sub.add_argument("--keep-groups", action="store_true", help="run a group as one lmms-eval call")
        sub.add_argument("--extra-models", type=Path, action="append", default=[],
                         help="more registry YAML (same schema as model_configs/models.yaml)")
        sub.add_argument("--lmms-eval-cmd", default=DEFAULT_LMMS_EVAL_CMD,
                         help="command used to invoke lmms-eval (default: %(default)s)")
        if name == "run":
            select.add_argument("--manifest", type=Path, help="run rows of a manifest written by `slurm`")
            sub.add_argument("--only", type=lambda text: [int(i) for i in _csv(text)],
                             help="row numbers (as in the plan / the manifest), comma-separated")
            sub.add_argument("--keep-going", action="store_true", help="run the other rows after a failure")
            sub.add_argument("--dry-run", action="store_true", help="say what would run or be skipped")
        if name == "slurm":
            sub.add_argument("--slurm-dir", type=Path, help="where the scripts go (default OUT/slurm)")
            sub.add_argument("--job-name", default="invscale")
            sub.add_argument("--force", action="store_true", help="replace a manifest with other rows")
            sub.add_argument("--dry-run", action="store_true", help="print the files instead of writing them")
    return parser


def _plan_rows(args: argparse.Namespace) -> tuple[list[Row], list]:
    if not args.tasks or args.out is None:
        raise PlanError("--tasks and --out are required (or --manifest, for run)")
    registry = load_registry(extra=args.extra_models)
    targets = select_models(registry, args.models or (), args.family or ())
    rows = build_plan(targets, expand_tasks(args.tasks, args.keep_groups), args.out, gpus_per_node=args.gpus_per_node,
                      include_path=args.include_path, lmms_eval_cmd=args.lmms_eval_cmd)
    return rows, targets


def _only(rows: list[Row], only: Sequence[int] | None) -> list[Row]:
    if not only:
        return rows
    by_index = {row.index: row for row in rows}
    unknown = [index for index in only if index not in by_index]
    if unknown:
        raise PlanError(f"--only {unknown}: no such row (rows {rows[0].index}-{rows[-1].index})")
    return [by_index[index] for index in only]


def executable(command: Sequence[str]) -> list[str]:
    """The command with `python` as this interpreter and `accelerate` as the one installed beside it."""
    head, *rest = command
    if head == "python":
        return [sys.executable, *rest]
    if head == "accelerate" and Path(sys.executable).with_name("accelerate").exists():
        return [str(Path(sys.executable).with_name("accelerate")), *rest]
    return list(command)


def _keep_old_log(log: Path) -> None:
    """lmms_eval.log -> lmms_eval.<its mtime as YYYYmmdd_HHMMSS>.log, so the rerun's log starts fresh."""
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(log.stat().st_mtime))
    log.rename(log.with_name(f"{log.stem}.{stamp}{log.suffix}"))


def run_rows(rows: Sequence[Row], keep_going: bool = False, dry_run: bool = False) -> None:
    """Run each incomplete row, skip complete ones; raise LaunchFailed naming every failed run."""
    caller_env = {name: os.environ.get(name, "0") for name in OFFLINE_ENV}  # runner's default forces offline
    failures = []
    for row in rows:
        tag = f"[row {row.index}] {row.model} / {row.item}"
        tasks = list(row.tasks)
        reason = incomplete_reason(row.run_dir, tasks)
        if reason is None:
            print(f"{tag}: complete run found (results.json + {len(tasks)} samples files), skipped: {row.run_dir}")
            continue
        partial = lmms_eval_outputs(row.run_dir) if row.run_dir.exists() else []
        if dry_run:
            print(f"{tag}: would run ({reason}; {len(partial)} partial files would be deleted)" if partial
                  else f"{tag}: would run on {row.gpus} GPU(s)")
            continue
        if partial:
            for path in partial:
                path.unlink()
            print(f"{tag}: incomplete ({reason}); deleted its {len(partial)} partial results/samples files, rerunning")
        if row.log.exists():
            _keep_old_log(row.log)
        print(f"{tag}: running on {row.gpus} GPU(s), log {row.log}", flush=True)
        try:
            run = run_lmms_eval(executable(row.command), row.run_dir, tasks, row.log, env=caller_env)
            problem = incomplete_reason(row.run_dir, tasks)
            if problem:
                raise RunFailed(f"outputs incomplete ({problem}); log: {row.log}")
        except (RunFailed, OSError) as err:  # OSError: the command could not start (e.g. no accelerate)
            message = f"{tag} FAILED (model {row.model}, tasks {', '.join(tasks)}): {err}"
            if not keep_going:
                raise LaunchFailed(message) from err
            print(message, file=sys.stderr)
            failures.append(message)
            continue
        print(f"{tag}: done in {run.seconds:.0f} s -> {run.results}")
    if failures:
        raise LaunchFailed(f"{len(failures)} of {len(rows)} runs failed:\n" + "\n".join(failures))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run" and args.manifest is not None:
            rows = read_manifest(args.manifest)
        else:
            rows, targets = _plan_rows(args)
        if args.command == "plan":
            print(format_plan(rows, targets, args.gpus_per_node), end="")
        elif args.command == "run":
            run_rows(_only(rows, args.only), keep_going=args.keep_going, dry_run=args.dry_run)
        else:
            slurm_dir = args.slurm_dir or args.out / "slurm"
            if args.dry_run:
                files = {"manifest.tsv": manifest_text(rows), **slurm_files(rows, slurm_dir, args.job_name)}
                for name, text in files.items():
                    print(f"==> {Path(slurm_dir).resolve() / name} <==\n{text}")
            else:
                written = write_slurm(rows, slurm_dir, args.job_name, force=args.force)
                print(f"wrote {len(rows)} rows to {written[0]}; submit with: bash {written[-1]}")
    except (PlanError, RegistryError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except LaunchFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
