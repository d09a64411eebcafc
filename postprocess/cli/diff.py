"""`diff`: what changed between two reports (ours): cases added, removed and changed, with their causes.

Writes OUT/cases_diff.csv and OUT/index.html (default OUT: REPORT_B/diff, beside its explorer). Exits 0 when
nothing changed and 1 when something did, as diff(1) does; 2 on a folder that is not a report."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(subparsers: argparse._SubParsersAction) -> None:
    diff = subparsers.add_parser("diff", help="cases added, removed and changed between two reports, with causes")
    diff.add_argument("report_a", type=Path, metavar="REPORT_A", help="the earlier report folder")
    diff.add_argument("report_b", type=Path, metavar="REPORT_B", help="the later report folder")
    diff.add_argument("--out", type=Path, metavar="OUT", help="where the page and CSV go (default: REPORT_B/diff)")
    diff.set_defaults(handler=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    from postprocess.inverse_scaling.report_diff import diff_reports, read_report
    from postprocess.render.diff_page import diff_page

    diff = diff_reports(read_report(args.report_a), read_report(args.report_b))
    out = args.out or args.report_b / "diff"
    out.mkdir(parents=True, exist_ok=True)
    diff.to_csv(out / "cases_diff.csv", index=False)
    (out / "index.html").write_text(diff_page(diff, str(args.report_a), str(args.report_b)), encoding="utf-8")
    counts = diff["change"].value_counts()
    print(f"{int(counts.get('added', 0))} added, {int(counts.get('removed', 0))} removed, "
          f"{int(counts.get('changed', 0))} changed: {out / 'index.html'}")
    return 1 if len(diff) else 0
