"""python -m lmms_eval_tasks {export,install,uninstall,fixtures,list}: see install.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .catalog import GROUPS, TASKS
from .install import OverrideError, export_tasks, install, parse_overrides, uninstall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmms_eval_tasks", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    data_help = "point a base task at local data: TASK=PATH (parquet/json/jsonl/csv/tsv files, comma-joined, or a save_to_disk folder)"
    export = commands.add_parser("export", help="write the task folder for lmms-eval --include_path")
    export.add_argument("destination", type=Path)
    export.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    install_cmd = commands.add_parser("install", help="install the tasks into lmms-eval's own task folder")
    install_cmd.add_argument("--data", action="append", default=[], metavar="TASK=PATH", help=data_help)
    commands.add_parser("uninstall", help="remove the installed tasks")
    fixtures = commands.add_parser("fixtures", help="write the bundled fixture datasets and a task folder reading them")
    fixtures.add_argument("destination", type=Path)
    commands.add_parser("list", help="list the tasks and groups")
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            print(export_tasks(args.destination, parse_overrides(args.data)))
        elif args.command == "install":
            print(f"installed into {install(parse_overrides(args.data))}")
        elif args.command == "uninstall":
            removed = uninstall()
            print(f"removed {removed}" if removed else "nothing installed")
        elif args.command == "fixtures":
            from .fixtures import write_fixtures

            data = write_fixtures(args.destination / "data")
            print(export_tasks(args.destination / "tasks", data))
        else:
            for group, tasks in GROUPS.items():
                print(f"{group}: {' '.join(tasks)}")
            print(f"{len(TASKS)} tasks")
    except OverrideError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
