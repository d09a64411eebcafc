"""`invscale diff`'s static page (ours): the cases added, removed and changed between two reports, with causes."""

from __future__ import annotations

import html

import pandas as pd

HEADERS = {"change": "Change", "family": "Family", "benchmark": "Benchmark", "split": "Split", "subtask": "Subtask",
           "small": "Small", "large": "Large", "n_a": "n (A)", "n_b": "n (B)", "net_a": "Net (A)", "net_b": "Net (B)",
           "p_value_a": "p (A)", "p_value_b": "p (B)", "verdict_a": "Verdict (A)", "verdict_b": "Verdict (B)",
           "causes": "Causes"}


def _cell(value: object, column: str) -> str:
    if pd.isna(value):
        return ""
    if column.startswith("p_value"):
        return f"{float(value):.2g}"
    if column.startswith(("n_", "net_")):
        return f"{int(value)}"
    return str(value)


def diff_page(diff: pd.DataFrame, report_a: str, report_b: str) -> str:
    counts = diff["change"].value_counts()
    summary = ", ".join(f"{int(counts.get(c, 0))} {c}" for c in ("added", "removed", "changed"))
    head = "".join(f"<th>{html.escape(HEADERS[c])}</th>" for c in diff.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v, c))}</td>" for c, v in row.items()) + "</tr>"
                   for row in diff.to_dict("records"))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        "<title>What changed between two reports</title><style>body{font-family:sans-serif;margin:1.5em auto;"
        "max-width:1400px;padding:0 1em}table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #ccc;"
        "padding:2px 6px;text-align:left}</style></head><body>"
        f"<h1>What changed between two reports</h1><p>A: {html.escape(report_a)}<br>B: {html.escape(report_b)}</p>"
        f"<p>Cases: {summary}. A case is changed when its n, Net, p or verdict differs. Causes are read from the two "
        "reports' files (parameters in summary.json, runs in tables/quality_runs_found.csv, n in comparisons.parquet, "
        "the flipped questions' answers in flips.parquet).</p>"
        + (f'<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>' if len(diff) else
           "<p>Nothing changed.</p>") + "</body></html>\n"
    )
