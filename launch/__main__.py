"""Launch lmms-eval for the registry's models: plan, run on this node, write Slurm job arrays, check a node.

  python -m launch plan  (--models KEY[,KEY..]|all | --family F[,F..]) --tasks TASK|GROUP[,..] --out DIR
  python -m launch run   (same selection) [--only ROW[,ROW..]] [--keep-going] [--dry-run]
  python -m launch run   --manifest DIR/slurm/manifest.tsv --only ROW      (what each Slurm array task runs)
  python -m launch slurm (same selection) [--slurm-dir DIR] [--job-name NAME] [--force] [--dry-run]
  python -m launch check-offline (same selection) --tasks ... [--tasks-dir DIR]

  common: [--gpus-per-node 8] [--tasks-dir DIR] [--keep-groups] [--extra-models YAML ..]
          [--lmms-eval-cmd "python -m lmms_eval"] [--allow-mixed-protocol]
  run-wide settings (every selected model): [--limit N] [--gen-kwargs K=V,..] [--model-args K=V,..]
          [--hf-wrappers] [--device cpu|cuda:N] (plan and run)

Families by name, case and spaces/hyphens/underscores ignored: --family Gemma-3 = --family "Gemma 3".

plan   prints every run (one per model x task; a group is split into its tasks unless --keep-groups),
       its command, GPUs and estimated GPU-hours (an estimate from the model size). It refuses a
       family whose sizes are not sent the same thing (backend, processor, model_args, ...) unless
       --allow-mixed-protocol, and then says
       what differs; it notes a family that run-wide settings reach only in part.
run    runs the rows one after another on this node, into OUT/<model key>/<task or group>/, each under a lock
       (OUT/<model>/<task>/launch.lock: a second launcher on the same row names the holder and fails; a lock
       of a dead process on this host is taken over with a notice).
       Resume: a run folder whose newest results.json has every task's samples file, each non-empty,
       ending in a newline and holding as many lines as results.json's n-samples, and whose results.json
       records the same --model_args, --gen_kwargs, --limit (and --device) as this run asks for, is complete
       and skipped. A complete run with other settings fails the row (use another --out, or delete the run
       folder to replace it). An incomplete run's results.json / samples files (partial output) are DELETED,
       not moved: ingestion walks OUT recursively, so a stale partial file would mix with the rerun. Its
       previous lmms_eval.log is kept, renamed lmms_eval.<YYYYmmdd_HHMMSS>.log. After each run the same check
       runs; a run that fails it stops the launcher with exit code 1 and a message naming the model, the
       tasks and the log (--keep-going: the other rows run first, then the failures are listed).
       The caller's HF_HUB_OFFLINE / HF_DATASETS_OFFLINE / TRANSFORMERS_OFFLINE apply (default: online);
       images are always sent as PNG (LMMS_IMAGE_ENCODE_FORMAT=PNG).
slurm  writes manifest.tsv (one row per run), one job-array script per GPU count and submit.sh into
       --slurm-dir (default OUT/slurm).
check-offline  lists every file the plan needs that is not on this machine: each model's snapshot in the
       Hugging Face cache (or its local folder), complete (config, every weight shard, tokenizer,
       processor, remote code), and each task's data (local files, or the prepared dataset in
       HF_DATASETS_CACHE); it compares the chat templates and processor configs of a family's cached sizes.
       Exit 1 when something is missing.

--limit N: N questions per task (lmms-eval --limit). --gen-kwargs: lmms-eval --gen_kwargs, replacing the
tasks' generation settings (e.g. max_new_tokens=8 for a tiny random-weight model). --model-args: added to
every model's --model_args (a key the registry sets is replaced). --hf-wrappers: each model runs on its
lmms-eval HF wrapper (lmms_eval_model) instead of vLLM, one GPU each. --device cpu: one process on the CPU
(HF wrappers get device_map=cpu; vLLM and internvl3_5 cannot run there); --device cuda:N: one process on
that GPU. --lmms-eval-cmd is the command used to invoke lmms-eval (default `python -m lmms_eval`); its first
word is the Python interpreter: data-parallel runs replace it with `accelerate launch --num_processes N`,
and `python` itself means the interpreter running the launcher. Point it at another script to run a
wrapper, a patched lmms-eval, or (the tests) a fake that writes or withholds the output files.
--tasks-dir (lmms-eval's --include_path) defaults to the project's task folder (hub datasets); pass an
exported folder (`invscale tasks export`) to read local data: `run` first checks every row of that local
data (`invscale tasks validate`) and stops, listing the bad rows, before any model loads. A copy
of the tasks installed into lmms-eval (`invscale tasks install`) wins over --tasks-dir: the launcher warns
when it differs from that folder.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from invscale.options import add_tasks_dir_argument
from lmms_eval_tasks.install import TASKS_DIR, shadowing_warnings
from lmms_eval_tasks.validation import check_task_folder_data
from model_configs import RegistryError, load_registry
from model_configs.launch_settings import split_args

from .lock import LOCK_NAME, LockHeld, RunLock, read_holder
from .plan import (DEFAULT_GPUS_PER_NODE, DEFAULT_LMMS_EVAL_CMD, PlanError, Row, RunOptions, apply_options,
                   build_plan, check_protocol, expand_tasks, format_plan, manifest_text, partial_family_notes,
                   read_manifest, select_models)
from .runner import (OFFLINE_ENV, RunFailed, find_outputs, incomplete_reason, lmms_eval_outputs, run_lmms_eval,
                     settings_difference)
from .slurm import slurm_files, write_slurm

COMMANDS = ("plan", "run", "slurm", "check-offline")
HELP = {"plan": "print every run, its command, GPUs and estimated GPU-hours",
        "run": "run the plan's rows on this node (complete runs are skipped, a failed task fails the row)",
        "slurm": "write Slurm job arrays and submit.sh for the plan",
        "check-offline": "list every model file and dataset the plan needs that is not on this machine"}


class LaunchFailed(RuntimeError):
    """One or more runs failed; the message names each model, its tasks and its log."""


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _limit(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of questions (or a fraction below 1), got {text}")
    return value


def _key_values(text: str) -> str:
    if not all("=" in part and part.split("=", 1)[0].strip() for part in split_args(text)):
        raise argparse.ArgumentTypeError(f"expected key=value pairs joined by commas, got {text!r}")
    return text


def _parser(prog: str = "python -m launch") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.replace("python -m launch", prog),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        sub = commands.add_parser(name, help=HELP[name], description=HELP[name])
        select = sub.add_mutually_exclusive_group(required=name != "run")
        select.add_argument("--models", type=_csv, help="registry keys, comma-separated, or all")
        select.add_argument("--family", type=_csv, help="families, comma-separated (CAIT: the CAIT paper's models)")
        sub.add_argument("--tasks", type=_csv, help="tasks or groups, comma-separated")
        add_tasks_dir_argument(sub, TASKS_DIR, "the task folder lmms-eval reads (default: the package's tasks)")
        sub.add_argument("--keep-groups", action="store_true", help="run a group as one lmms-eval call")
        sub.add_argument("--extra-models", type=Path, action="append", default=[],
                         help="more model registry YAML files (the bundled registry's schema), e.g. the demo's")
        sub.add_argument("--hf-wrappers", action="store_true",
                         help="run each model on its lmms-eval HF wrapper (lmms_eval_model) instead of its backend")
        sub.add_argument("--model-args", type=_key_values, help="k=v,... added to every model's --model_args")
        sub.add_argument("--allow-mixed-protocol", action="store_true",
                         help="run a family whose sizes are not sent the same thing (the plan says what differs)")
        if name == "check-offline":
            continue
        sub.add_argument("--out", type=Path, help="output root: OUT/<model key>/<task or group>/")
        sub.add_argument("--gpus-per-node", type=int, default=DEFAULT_GPUS_PER_NODE)
        sub.add_argument("--lmms-eval-cmd", default=DEFAULT_LMMS_EVAL_CMD,
                         help="command used to invoke lmms-eval (default: %(default)s)")
        sub.add_argument("--limit", type=_limit, help="questions per task (lmms-eval --limit), for a smoke test")
        sub.add_argument("--gen-kwargs", type=_key_values,
                         help="lmms-eval --gen_kwargs for every run, e.g. max_new_tokens=8 (replaces the tasks')")
        if name in ("plan", "run"):
            sub.add_argument("--device", help="cpu or cuda:N: one process on that device (HF wrappers)")
        if name == "run":
            select.add_argument("--manifest", type=Path, help="run rows of a manifest written by `slurm`")
            sub.add_argument("--only", type=lambda text: [int(i) for i in _csv(text)],
                             help="row numbers (as in the plan / the manifest), comma-separated")
            sub.add_argument("--keep-going", action="store_true", help="run the other rows after a failure")
            sub.add_argument("--dry-run", action="store_true", help="say what would run or be skipped")
        if name == "slurm":
            sub.add_argument("--slurm-dir", type=Path, help="where the scripts go (default OUT/slurm)")
            sub.add_argument("--job-name", default="invscale")
            sub.add_argument("--python", metavar="PATH", help="the interpreter the jobs run (default: this one); "
                                                             "$INVSCALE_PYTHON at job time wins over both")
            sub.add_argument("--force", action="store_true", help="replace a manifest with other rows")
            sub.add_argument("--dry-run", action="store_true", help="print the files instead of writing them")
    return parser


def _options(args: argparse.Namespace) -> RunOptions:
    device = getattr(args, "device", None)
    return RunOptions(limit=getattr(args, "limit", None), gen_kwargs=getattr(args, "gen_kwargs", None),
                      model_args=args.model_args, device=None if device == "cuda" else device,  # cuda: the GPU layout
                      hf_wrappers=args.hf_wrappers, allow_mixed_protocol=args.allow_mixed_protocol)


def _plan_rows(args: argparse.Namespace, out: Path) -> tuple[list[Row], list[str]]:
    """The rows, and the notes the plan prints (mixed families allowed, families reached in part)."""
    if not args.tasks:
        raise PlanError("--tasks is required (or --manifest, for run)")
    registry = load_registry(extra=args.extra_models)
    options = _options(args)
    targets = select_models(registry, args.models or (), args.family or ())
    mixed = check_protocol(registry, targets, options.allow_mixed_protocol)
    notes = [f"MIXED PROTOCOL (--allow-mixed-protocol): {line}" for line in mixed]
    notes += partial_family_notes(registry, targets, options)
    rows = build_plan(apply_options(targets, options), expand_tasks(args.tasks, args.keep_groups), out,
                      gpus_per_node=getattr(args, "gpus_per_node", DEFAULT_GPUS_PER_NODE),
                      include_path=args.tasks_dir, lmms_eval_cmd=getattr(args, "lmms_eval_cmd", DEFAULT_LMMS_EVAL_CMD),
                      options=options)
    return rows, notes


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


def _run_row(row: Row, tag: str, caller_env: dict[str, str], dry_run: bool) -> None:
    """Check, clean and run one row (the caller holds its lock); RunFailed when it cannot be completed."""
    tasks = list(row.tasks)
    reason = incomplete_reason(row.run_dir, tasks)
    if reason is None:
        results, _ = find_outputs(row.run_dir, tasks)
        different = settings_difference(results, list(row.command))
        if different:
            raise RunFailed(f"a complete run with other settings is in {row.run_dir} ({different}); use another "
                            "--out, or delete that folder to replace it")
        print(f"{tag}: complete run found (results.json + {len(tasks)} samples files), skipped: {row.run_dir}")
        return
    partial = lmms_eval_outputs(row.run_dir) if row.run_dir.exists() else []
    if dry_run:
        print(f"{tag}: would run ({reason}; {len(partial)} partial files would be deleted)" if partial
              else f"{tag}: would run on {row.layout}")
        return
    if partial:
        for path in partial:
            path.unlink()
        print(f"{tag}: incomplete ({reason}); deleted its {len(partial)} partial results/samples files, rerunning")
    if row.log.exists():
        _keep_old_log(row.log)
    print(f"{tag}: running on {row.layout}, log {row.log}", flush=True)
    run = run_lmms_eval(executable(row.command), row.run_dir, tasks, row.log, env=caller_env)
    problem = incomplete_reason(row.run_dir, tasks)
    if problem:
        raise RunFailed(f"outputs incomplete ({problem}); log: {row.log}")
    print(f"{tag}: done in {run.seconds:.0f} s -> {run.results}")


def run_rows(rows: Sequence[Row], keep_going: bool = False, dry_run: bool = False) -> None:
    """Run each incomplete row under its lock, skip complete ones; raise LaunchFailed naming every failed
    run (a row locked by another launcher counts as failed: this launcher did not run it)."""
    caller_env = {name: os.environ.get(name, "0") for name in OFFLINE_ENV}  # runner's default forces offline
    failures = []
    for row in rows:
        tag = f"[row {row.index}] {row.model} / {row.item}"
        try:
            if dry_run:
                holder = read_holder(row.run_dir / LOCK_NAME)
                if holder is not None:
                    print(f"{tag}: locked by {holder.describe()}")
                _run_row(row, tag, caller_env, dry_run=True)
                continue
            with RunLock(row.run_dir) as lock:
                if lock.notice:
                    print(f"{tag}: {lock.notice}", file=sys.stderr)
                _run_row(row, tag, caller_env, dry_run=False)
        except (RunFailed, LockHeld, OSError) as err:  # OSError: the command could not start (e.g. no accelerate)
            message = f"{tag} FAILED (model {row.model}, tasks {', '.join(row.tasks)}): {err}"
            if not keep_going:
                raise LaunchFailed(message) from err
            print(message, file=sys.stderr)
            failures.append(message)
    if failures:
        raise LaunchFailed(f"{len(failures)} of {len(rows)} runs failed:\n" + "\n".join(failures))


def _terminate(signum, frame) -> None:
    """SIGTERM (Slurm's time limit, kill): unwind, so the running lmms-eval is stopped and the lock released."""
    raise SystemExit(128 + signum)


def check_local_data(tasks_dir: Path, rows: Sequence[Row]) -> None:
    """Every row of the local data the rows' tasks read, before any model loads; PlanError listing the bad rows."""
    checks, _ = check_task_folder_data(tasks_dir, [task for row in rows for task in row.tasks])
    bad = [check for check in checks if check.problems]
    if bad:
        raise PlanError("bad rows in the local data, nothing was run:\n" + "\n".join(check.summary() for check in bad))


def main(argv: Sequence[str] | None = None, prog: str = "python -m launch") -> int:
    args = _parser(prog).parse_args(argv)
    try:
        if args.command == "check-offline":
            from .offline import check_offline

            if not args.tasks:
                raise PlanError("--tasks is required")
            rows, _ = _plan_rows(args, Path("."))
            report, missing = check_offline(rows, load_registry(extra=args.extra_models))
            print(report, end="")
            return 1 if missing else 0
        if args.command == "run" and args.manifest is not None:
            rows, notes = read_manifest(args.manifest), []
        else:
            if args.out is None:
                raise PlanError("--out is required (or --manifest, for run)")
            rows, notes = _plan_rows(args, args.out)
            for warning in shadowing_warnings(args.tasks_dir):
                print(f"WARNING: {warning}", file=sys.stderr)
            if args.command == "run":
                check_local_data(args.tasks_dir, rows)
        if args.command == "plan":
            print(format_plan(rows, args.gpus_per_node, notes), end="")
        elif args.command == "run":
            for note in notes:
                print(note, file=sys.stderr)
            signal.signal(signal.SIGTERM, _terminate)
            run_rows(_only(rows, args.only), keep_going=args.keep_going, dry_run=args.dry_run)
        else:
            for note in notes:
                print(note, file=sys.stderr)
            slurm_dir = args.slurm_dir or args.out / "slurm"
            if args.dry_run:
                files = {"manifest.tsv": manifest_text(rows), **slurm_files(rows, slurm_dir, args.job_name, args.python)}
                for name, text in files.items():
                    print(f"==> {Path(slurm_dir).resolve() / name} <==\n{text}")
            else:
                written = write_slurm(rows, slurm_dir, args.job_name, force=args.force, python=args.python)
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
