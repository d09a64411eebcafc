"""The benchmark tasks for lmms-eval: list them, check local data, write the task folder, install it.

`invscale tasks fixtures DIR` then `install --from DIR/tasks` installs the bundled fixtures in two commands.
Exit codes: 0 done, 1 a check found problems (listed), 2 unusable input (the reason in one line)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from invscale.options import add_tasks_dir_argument

from . import cait
from .catalog import GROUPS, TASKS
from .install import (TASKS_DIR, OverrideError, export_tasks, install, installed_task_files, parse_overrides,
                      shadowing_warnings, uninstall)
from .question import DocError
from .validation import MAX_REPORTED, check_data, check_task_folder_data


def validated(data: dict[str, str], max_errors: int = MAX_REPORTED) -> bool:
    """Every row of each --data override checked; the problems printed to stderr. True when all are valid."""
    checks = [check_data(task, source) for task, source in data.items()]
    for check in checks:
        print(check.summary(max_errors), file=sys.stderr if check.problems else sys.stdout)
    return not any(check.problems for check in checks)


# invscale_demo.fixtures.write_fixtures ({base task: data path}), passed in by the `invscale` command: the fixtures
# are the demo's, and this layer imports nothing above it.
FixtureWriter = Callable[[Path], dict[str, str]]
VALIDATE_HELP = ("check local benchmark data row by row (every bad row listed with file, row and field; exit 1 on "
                 "any)")


def build_parser(prog: str = "python -m lmms_eval_tasks", group: str | None = None,
                 write_fixtures: FixtureWriter | None = None) -> argparse.ArgumentParser:
    """Every command (group None), or the CAIT folder commands under the short names `invscale cait` shows them by
    (group "cait": validate, prepare), so that their usage line reads `invscale cait validate`. `fixtures` exists
    where a fixture writer is given (the `invscale` command gives the demo's)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    if group == "cait":
        add_cait_commands(commands, prefix="")
        return parser
    data_help = ("point a base task at local data: TASK=PATH (parquet/json/jsonl/csv/tsv files, comma-joined, or a "
                 "save_to_disk folder); every row is validated first")
    validate = commands.add_parser(
        "validate", help=VALIDATE_HELP,
        description="Check local benchmark data row by row before any model loads: every row through the task's "
                    "adapter (gold among the options, options present), every image the question shows decoded, "
                    "question ids unique. Each bad row is one line, `FILE row N (question ID): what is wrong`, N "
                    "counted from 1 within the file. Exit 0: all valid; 1: bad rows (listed); 2: unusable input.")
    validate.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    add_tasks_dir_argument(validate, None, "check the local data of an exported task folder (every base task that "
                                           "reads local files)")
    validate.add_argument("--max-errors", type=int, default=MAX_REPORTED, help="bad rows listed per task (the rest counted)")
    export = commands.add_parser("export", help="write the task folder that lmms-eval reads (its --include_path)")
    export.add_argument("destination", type=Path)
    export.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    install_cmd = commands.add_parser("install", help="install the tasks into lmms-eval's own task folder")
    install_cmd.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    install_cmd.add_argument("--from", dest="source", type=Path, metavar="DIR",
                             help="install a task folder written by `export` (or `fixtures`) as it is")
    commands.add_parser("uninstall", help="remove the installed tasks")
    check = commands.add_parser("check", help="where lmms-eval finds these tasks; warn when an installed copy "
                                              "shadows the task folder")
    add_tasks_dir_argument(check, TASKS_DIR, "the task folder lmms-eval is given (default: the package's tasks)")
    if write_fixtures is not None:
        fixtures = commands.add_parser("fixtures", help="write the bundled fixture datasets and a task folder reading "
                                                        "them")
        fixtures.add_argument("destination", type=Path)
    commands.add_parser("list", help="list the tasks and groups")
    commands.add_parser("generate", help="rewrite the task YAMLs and task_hooks.py from benchmarks.py (developers)")
    add_cait_commands(commands, prefix="cait-")
    return parser


def add_cait_commands(commands, prefix: str) -> None:
    """The CAIT folder commands: f"{prefix}validate" and f"{prefix}prepare"."""
    validate = commands.add_parser(f"{prefix}validate", help="check a CAIT folder (cait.jsonl or cait.parquet + "
                                                            "images): every record, every image; exit 1 on any problem")
    validate.add_argument("folder", type=Path)
    validate.add_argument("--max-errors", type=int, default=cait.MAX_REPORTED, help="problems listed (the rest counted)")
    prepare = commands.add_parser(f"{prefix}prepare", help="validate a CAIT folder and write it for --data cait=OUT")
    prepare.add_argument("folder", type=Path)
    prepare.add_argument("out", type=Path)


def main(argv: list[str] | None = None, prog: str = "python -m lmms_eval_tasks", group: str | None = None,
         write_fixtures: FixtureWriter | None = None) -> int:
    args = build_parser(prog, group, write_fixtures).parse_args(argv)
    if group == "cait":  # the short names of the CAIT group are the cait-* commands
        args.command = f"cait-{args.command}"
    try:
        if args.command == "validate":
            if not args.data and args.tasks_dir is None:
                raise OverrideError("validate: give --data TASK=PATH (one or more) or --tasks-dir DIR")
            if args.tasks_dir is not None:
                checks, hub = check_task_folder_data(args.tasks_dir, TASKS)
                for check in checks:
                    print(check.summary(args.max_errors), file=sys.stderr if check.problems else sys.stdout)
                if hub:
                    print(f"not checked (they read a hub dataset): {', '.join(hub)}")
                if any(check.problems for check in checks):
                    return 1
            return 0 if validated(parse_overrides(args.data), args.max_errors) else 1
        if args.command == "export":
            data = parse_overrides(args.data)
            if not validated(data):
                print("nothing written: fix the rows above, then export again", file=sys.stderr)
                return 1
            print(export_tasks(args.destination, data))
        elif args.command == "install":
            data = parse_overrides(args.data)
            if not validated(data):
                print("nothing installed: fix the rows above, then install again", file=sys.stderr)
                return 1
            print(f"installed into {install(data, source=args.source)}")
        elif args.command == "check":
            installed = installed_task_files()
            names = {name for tasks in installed.values() for name in tasks}
            print(f"installed into lmms-eval: {len(names)} of {len(TASKS)} tasks"
                  + (f" in {', '.join(map(str, installed))}" if installed else ""))
            warnings = shadowing_warnings(args.tasks_dir)
            for warning in warnings:
                print(f"WARNING: {warning}")
            if not warnings:
                print(f"lmms-eval --include_path {args.tasks_dir.resolve()} runs that folder's tasks")
            return 1 if warnings else 0
        elif args.command == "uninstall":
            removed = uninstall()
            print(f"removed {removed}" if removed else "nothing installed")
        elif args.command == "fixtures":
            data = write_fixtures(args.destination / "data")
            print(export_tasks(args.destination / "tasks", data))
        elif args.command == "generate":
            from .generate import write

            print(f"wrote {len(write())} files")
        elif args.command == "cait-validate":
            check = cait.check_folder(args.folder)
            if check.problems:
                print(check.summary(args.max_errors), file=sys.stderr)
                return 1
            print(f"{len(check.records)} valid CAIT records in {args.folder}")
        elif args.command == "cait-prepare":
            print(cait.prepare(args.folder, args.out))
        else:
            for group, tasks in GROUPS.items():
                print(f"{group}: {' '.join(tasks)}")
            print(f"CAIT: {' '.join(t for t in TASKS if t.startswith('cait'))}")
            print(f"{len(TASKS)} tasks")
    except (OverrideError, DocError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
