"""Are `report`'s outputs byte for byte those of another checkout? Every file, explorer pages and data included.

    python perf/same_outputs.py --before CHECKOUT --logs LOGS [LOGS ...] --workdir DIR [-- REPORT OPTIONS ...]

Runs `python -m postprocess report --logs LOGS --out DIR/<side>/out --cache-dir DIR/<side>/cache [OPTIONS]` from
CHECKOUT (before) and from this checkout (after), each in its own process with its own cache, twice each (the
first fills the cache, the second is the warm run compared), then compares every file under the two output
folders (names and bytes) and the console output. Prints the differences and exits 1 when there are any.
`git worktree add --detach /tmp/before <commit>` makes a checkout of the code before.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(checkout: Path, logs: list[Path], side: Path, options: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "postprocess", "report", "--logs", *map(str, logs), "--out", str(side / "out"),
               "--cache-dir", str(side / "cache"), *options]
    for _ in range(2):
        done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{checkout}: report failed:\n{done.stderr[-3000:]}")
    return (done.stdout + done.stderr).replace(str(side), "<side>")


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
    before, after = args.workdir / "before" / "out", args.workdir / "after" / "out"
    names_before, names_after = files(before), files(after)
    problems = [f"only before: {name}" for name in sorted(names_before - names_after)]
    problems += [f"only after: {name}" for name in sorted(names_after - names_before)]
    common = sorted(names_before & names_after)
    problems += [f"differs: {name}" for name in common if not filecmp.cmp(before / name, after / name, shallow=False)]
    if consoles["before"] != consoles["after"]:
        problems.append(f"console differs:\n--- before\n{consoles['before']}\n--- after\n{consoles['after']}")
    print(f"{len(common)} files in both; options {options or '(none)'}")
    for problem in problems:
        print(problem)
    print("identical" if not problems else f"{len(problems)} differences")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
