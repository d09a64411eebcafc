"""Command line: parses the options, builds the parameters and calls the stages. Nothing outside this
package imports it.

  python -m postprocess report --logs DIR [DIR ...] --out OUT [options]
      reads lmms-eval logs (through the Parquet cache when --cache-dir is given), runs the
      inverse-scaling analysis on the benchmark rows, adds the CAIT section when CAIT rows are
      present (with the judges' re-evaluation when --reeval points at a cait-reeval output), and
      writes every output under OUT.
  python -m postprocess cait-reeval --logs DIR [DIR ...] --judges judges.yaml --out OUT [options]
      LLM re-evaluation of CAIT from the models' descriptions (postprocess/cait/reeval.py).
  python -m postprocess taxonomy --logs DIR [DIR ...] --out OUT [options]
      the error taxonomy of the cases' flips by two blinded LLM judges (postprocess/inverse_scaling/taxonomy/).
  python -m postprocess adjudicate --logs DIR [DIR ...] --out OUT [options]
      an LLM judge shown the image(s) settles the answers the extraction rules left unparsed, written
      beside the logs and merged by every command that reads them (postprocess/adjudication/).
  python -m postprocess human-export | human-import | human-stats ...
      human annotation through Label Studio (postprocess/human/).

Exits 2 with a one-line reason on unusable input.
"""

from __future__ import annotations

import argparse
import sys

from postprocess.cli import adjudicate, cait, diff, human, report, taxonomy


DESCRIPTION = ("Reads lmms-eval logs and writes the inverse-scaling analysis, the CAIT section, the LLM judges' "
               "and the human annotators' outputs. Exits 2 with a one-line reason on unusable input, 1 when a judge "
               "call fails for good (completed calls are cached: rerun to continue).")


GROUP_DESCRIPTIONS = {
    "judges": ("LLM judges over lmms-eval logs: adjudicate (a judge shown the image(s) settles the answers the "
               "extraction rules left unparsed) and taxonomy (the error taxonomy of the cases' flips by two blinded "
               "judges). Exits 2 with a one-line reason on unusable input, 1 when a judge call fails for good "
               "(completed calls are cached: rerun to continue)."),
    "human": ("Human annotation through Label Studio: export (task sets, and with --server a project), import (the "
              "annotations of a project or an export file) and stats (agreement, CAIT Table 12, failure modes). "
              "Exits 2 with a one-line reason on unusable input."),
}


def build_parser(prog: str = "python -m postprocess", group: str | None = None) -> argparse.ArgumentParser:
    """Every command (group None), or one group under its short names as `invscale` shows them: "report", "human"
    (export, import, stats), "judges" (adjudicate, taxonomy), "cait" (reeval)."""
    parser = argparse.ArgumentParser(prog=prog, description=GROUP_DESCRIPTIONS.get(group, DESCRIPTION))
    commands = parser.add_subparsers(dest="command", required=True)
    if group == "report":
        report.add(commands)
    elif group == "diff":
        diff.add(commands)
    elif group == "human":
        human.add(commands, prefix="")
    elif group == "judges":
        adjudicate.add(commands)
        taxonomy.add(commands)
    elif group == "cait":
        cait.add(commands, name="reeval")
    else:
        for module in (report, adjudicate, cait, human, taxonomy, diff):
            module.add(commands)
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m postprocess", group: str | None = None) -> int:
    args = build_parser(prog, group).parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, OSError, argparse.ArgumentTypeError) as error:
        # UnusableInput, UnresolvedModelError, DuplicateRunsError, StrictError, RegistryError and JudgeConfigError are
        # ValueErrors with a readable message; OSErrors (OutputError, a file that cannot be read or written) name
        # their file.
        print(f"error: {error}", file=sys.stderr)
        return 2
