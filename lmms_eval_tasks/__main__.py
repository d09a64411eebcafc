"""python -m lmms_eval_tasks {export,install,uninstall,check,fixtures,list,generate,cait-validate,cait-prepare}.

export/install/uninstall/check: see install.py; generate: see generate.py; cait-*: see cait.py.
`fixtures DIR` then `install --from DIR/tasks` installs the bundled fixtures in two commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import cait
from .catalog import GROUPS, TASKS
from .install import (TASKS_DIR, OverrideError, export_tasks, install, installed_task_files, parse_overrides,
                      shadowing_warnings, uninstall)
from .question import DocError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmms_eval_tasks", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    data_help = "point a base task at local data: TASK=PATH (parquet/json/jsonl/csv/tsv files, comma-joined, or a save_to_disk folder)"
    export = commands.add_parser("export", help="write the task folder for lmms-eval --include_path")
    export.add_argument("destination", type=Path)
    export.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    install_cmd = commands.add_parser("install", help="install the tasks into lmms-eval's own task folder")
    install_cmd.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    install_cmd.add_argument("--from", dest="source", type=Path, metavar="DIR",
                             help="install a task folder written by `export` (or `fixtures`) as it is")
    commands.add_parser("uninstall", help="remove the installed tasks")
    check = commands.add_parser("check", help="where lmms-eval finds these tasks; warn when an installed copy "
                                              "shadows the --include-path copy")
    check.add_argument("--include-path", type=Path, default=TASKS_DIR)
    fixtures = commands.add_parser("fixtures", help="write the bundled fixture datasets and a task folder reading them")
    fixtures.add_argument("destination", type=Path)
    commands.add_parser("list", help="list the tasks and groups")
    commands.add_parser("generate", help="rewrite the task YAMLs and task_hooks.py from benchmarks.py (developers)")
    validate = commands.add_parser("cait-validate", help="check a CAIT folder (cait.jsonl or cait.parquet + images): "
                                                         "every record, every image; exit 1 on any problem")
    validate.add_argument("folder", type=Path)
    validate.add_argument("--max-errors", type=int, default=cait.MAX_REPORTED, help="problems listed (the rest counted)")
    prepare = commands.add_parser("cait-prepare", help="validate a CAIT folder and write it for --data cait=OUT")
    prepare.add_argument("folder", type=Path)
    prepare.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            print(export_tasks(args.destination, parse_overrides(args.data)))
        elif args.command == "install":
            print(f"installed into {install(parse_overrides(args.data), source=args.source)}")
        elif args.command == "check":
            installed = installed_task_files()
            names = {name for tasks in installed.values() for name in tasks}
            print(f"installed into lmms-eval: {len(names)} of {len(TASKS)} tasks"
                  + (f" in {', '.join(map(str, installed))}" if installed else ""))
            warnings = shadowing_warnings(args.include_path)
            for warning in warnings:
                print(f"WARNING: {warning}")
            if not warnings:
                print(f"lmms-eval --include_path {args.include_path.resolve()} runs that folder's tasks")
            return 1 if warnings else 0
        elif args.command == "uninstall":
            removed = uninstall()
            print(f"removed {removed}" if removed else "nothing installed")
        elif args.command == "fixtures":
            from invscale_demo.fixtures import write_fixtures

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
