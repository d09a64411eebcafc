"""Are `report`'s outputs byte for byte those of another checkout? Every file, explorer pages and data included.

    python perf/same_outputs.py --before CHECKOUT --logs LOGS [LOGS ...] --workdir DIR [-- REPORT OPTIONS ...]

Runs `python -m postprocess report --logs LOGS --out DIR/<side>/out --cache-dir DIR/<side>/cache [OPTIONS]` from
CHECKOUT (before) and from this checkout (after), each in its own process with its own cache, twice each (the
first fills the cache; the second is a warm run, which with this checkout's reuse of outputs copies them from the
cache), then compares every file under the output folders (names and bytes) and the console output of the warm
before run with both runs after: the one that computed (`after-first`, kept aside) and the warm one. Prints the
differences and exits 1 when there are any.
`git worktree add --detach /tmp/before <commit>` makes a checkout of the code before.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(checkout: Path, logs: list[Path], side: Path, options: list[str]) -> list[str]:
    """The console output of each of the two runs; the first run's outputs are kept in side/out-first."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "postprocess", "report", "--logs", *map(str, logs), "--out", str(side / "out"),
               "--cache-dir", str(side / "cache"), *options]
    consoles = []
    for attempt in range(2):
        done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{checkout}: report failed:\n{done.stderr[-3000:]}")
        consoles.append((done.stdout + done.stderr).replace(str(side), "<side>"))
        if attempt == 0:
            shutil.rmtree(side / "out-first", ignore_errors=True)
            shutil.copytree(side / "out", side / "out-first", symlinks=True)
    return consoles


def files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--logs", type=Path, nargs="+", required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("options", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    options = [o for o in args.options if o != "--"]
    consoles = {name: run(checkout.resolve(), args.logs, args.workdir / name, options)
                for name, checkout in (("before", args.before), ("after", REPO))}
    before = args.workdir / "before" / "out"
    names_before = files(before)
    problems, common = [], 0
    for label, after, console in (("after-first", args.workdir / "after" / "out-first", consoles["after"][0]),
                                  ("after", args.workdir / "after" / "out", consoles["after"][1])):
        names_after = files(after)
        problems += [f"{label}: only before: {name}" for name in sorted(names_before - names_after)]
        problems += [f"{label}: only after: {name}" for name in sorted(names_after - names_before)]
        shared = sorted(names_before & names_after)
        common = len(shared)
        problems += [f"{label}: differs: {name}" for name in shared
                     if not filecmp.cmp(before / name, after / name, shallow=False)]
        warm_before = consoles["before"][1].replace("out-first", "out")
        if warm_before != console.replace("out-first", "out"):
            problems.append(f"{label}: console differs:\n--- before\n{warm_before}\n--- {label}\n{console}")
    print(f"{common} files in both; options {options or '(none)'}")
    for problem in problems:
        print(problem)
    print("identical" if not problems else f"{len(problems)} differences")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
