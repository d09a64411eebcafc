"""python -m lmms_eval_tasks {export,install,uninstall,fixtures,list,generate,cait-validate,cait-prepare}.

export/install/uninstall: see install.py; generate: see generate.py; cait-*: see cait.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import cait
from .catalog import GROUPS, TASKS
from .install import OverrideError, export_tasks, install, parse_overrides, uninstall
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
    commands.add_parser("uninstall", help="remove the installed tasks")
    fixtures = commands.add_parser("fixtures", help="write the bundled fixture datasets and a task folder reading them")
    fixtures.add_argument("destination", type=Path)
    commands.add_parser("list", help="list the tasks and groups")
    commands.add_parser("generate", help="rewrite the task YAMLs and task_hooks.py from benchmarks.py (developers)")
    validate = commands.add_parser("cait-validate", help="check a CAIT folder (cait.jsonl or cait.parquet + images)")
    validate.add_argument("folder", type=Path)
    prepare = commands.add_parser("cait-prepare", help="validate a CAIT folder and write it for --data cait=OUT")
    prepare.add_argument("folder", type=Path)
    prepare.add_argument("out", type=Path)
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
            from invscale_demo.fixtures import write_fixtures

            data = write_fixtures(args.destination / "data")
            print(export_tasks(args.destination / "tasks", data))
        elif args.command == "generate":
            from .generate import write

            print(f"wrote {len(write())} files")
        elif args.command == "cait-validate":
            print(f"{len(cait.read_folder(args.folder))} valid CAIT records in {args.folder}")
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
