"""`invscale`: one command over the project's parts, on the top floor (it imports them; nothing imports it).
Each subcommand hands its arguments to that part's own command line unchanged (the `python -m ...` and `cait-*`
forms stay as aliases), so options, help and behaviour are the same whichever way a command is called."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

PROG = "invscale"
DISTRIBUTION = "vlm-inverse-scaling"
DESCRIPTION = """Find where a bigger vision-language model of a family answers worse than a smaller one.

commands:
  tasks      the benchmark tasks for lmms-eval: list, export, install, uninstall, check, fixtures
  validate   check local benchmark data row by row before any model loads (same as `tasks validate`)
  launch     plan, run, slurm, check-offline: lmms-eval over a model family, resumable
  report     read lmms-eval logs, write the analysis: cases, flips, tables, figures, report.html
  diff       what changed between two reports: cases added, removed, changed, with causes (exit 1 if any)
  judges     adjudicate (an LLM settles unparsed answers), taxonomy (error taxonomy of the flips)
  human      export, import, stats: human annotation through Label Studio
  cait       validate, prepare, reeval, build, quality, lora: the CAIT benchmark
  demo       the whole pipeline offline on tiny models, in minutes

`invscale COMMAND --help` explains each; `invscale --version` says the version. Exit codes: 0 done; 1 a check
found problems or a run failed (each listed); 2 unusable input or options (the reason in one line)."""


def _tasks(argv: list[str], prog: str) -> int:
    from invscale_demo.fixtures import write_fixtures
    from lmms_eval_tasks.__main__ import main

    return main(argv, prog=prog, write_fixtures=write_fixtures)


def _validate(argv: list[str], prog: str) -> int:
    from lmms_eval_tasks.__main__ import main

    return main(["validate", *argv], prog=PROG)


def _launch(argv: list[str], prog: str) -> int:
    from launch.__main__ import main

    return main(argv, prog=prog)


def _postprocess(group: str) -> Callable[[list[str], str], int]:
    def run(argv: list[str], prog: str) -> int:
        from postprocess.cli import main

        if group in ("report", "diff"):  # one command: `invscale report --logs ...`, `invscale diff A B`
            return main([group, *argv], prog=PROG, group=group)
        return main(argv, prog=prog, group=group)
    return run


def _cait(argv: list[str], prog: str) -> int:
    from cait_dataset.cli import build_main, lora_main, quality_main
    from lmms_eval_tasks.__main__ import main as tasks_main
    from postprocess.cli import main as postprocess_main

    commands = {
        "validate": ("check a CAIT folder: every record, every image",
                     lambda rest: tasks_main(["validate", *rest], prog=prog, group="cait")),
        "prepare": ("validate a CAIT folder and write it for `tasks export --data cait=OUT`",
                    lambda rest: tasks_main(["prepare", *rest], prog=prog, group="cait")),
        "reeval": ("LLM judges answer from the models' descriptions (the CAIT re-evaluation)",
                   lambda rest: postprocess_main(["reeval", *rest], prog=prog, group="cait")),
        "build": ("build a CAIT dataset: resumable construction stages over one folder",
                  lambda rest: build_main(rest, prog=f"{prog} build")),
        "quality": ("image quality and caption alignment beside other datasets",
                    lambda rest: quality_main(rest, prog=f"{prog} quality")),
        "lora": ("the LoRA study: split, train, evaluate, report", lambda rest: lora_main(rest, prog=f"{prog} lora")),
    }
    return _dispatch(prog, "the CAIT benchmark: check and prepare a folder, re-evaluate, build, study", commands, argv)


def _demo(argv: list[str], prog: str) -> int:
    from invscale_demo.demo import main

    main(argv, prog=prog)
    return 0


COMMANDS: dict[str, Callable[[list[str], str], int]] = {
    "tasks": _tasks, "validate": _validate, "launch": _launch, "report": _postprocess("report"),
    "diff": _postprocess("diff"), "judges": _postprocess("judges"), "human": _postprocess("human"), "cait": _cait,
    "demo": _demo,
}


def _dispatch(prog: str, description: str, commands: dict[str, tuple[str, Callable[[list[str]], int]]],
              argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        lines = [f"usage: {prog} {{{','.join(commands)}}} ...", "", description, "", "commands:"]
        lines += [f"  {name:<10} {help}" for name, (help, _) in commands.items()]
        print("\n".join(lines), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] not in commands:
        print(f"{prog}: error: unknown command {argv[0]!r} (choose from {', '.join(commands)})", file=sys.stderr)
        return 2
    return commands[argv[0]][1](argv[1:])


def _version() -> str:
    """The installed distribution's version (pyproject.toml's), with the lmms-eval it runs."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version(DISTRIBUTION)
    except PackageNotFoundError:
        ours = "(not installed: run `pip install -e .` in the checkout)"
    try:
        return f"{ours} (lmms-eval {version('lmms-eval')})"
    except PackageNotFoundError:
        return f"{ours} (lmms-eval not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: {PROG} COMMAND ...\n\n{DESCRIPTION}", file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"{PROG} {_version()}")
        return 0
    if argv[0] not in COMMANDS:
        print(f"{PROG}: error: unknown command {argv[0]!r} (choose from {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:], f"{PROG} {argv[0]}")
    except SystemExit as exit:  # argparse's --help (0) and usage errors (2)
        return exit.code if isinstance(exit.code, int) else 2


if __name__ == "__main__":
    sys.exit(main())
