"""`report.md` and a self-contained `report.html` (figures embedded as base64 PNG).

Both are rendered from one list of blocks, top-down: headline numbers, tables by theme, extra
sections (CAIT), figures, then the data-quality frames that ingestion supplies (`quality`: title ->
DataFrame).
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from postprocess.render.labels import dataset_label, multi_split_benchmarks
from postprocess.render.tables import Table, to_html, to_markdown

if TYPE_CHECKING:
    from postprocess.inverse_scaling.analysis import Analysis

# Theme -> table names (prefixes), in reading order. Long tables are folded in HTML and linked in Markdown.
SECTIONS: list[tuple[str, list[str]]] = [
    ("Prevalence", ["table02_cases_by_family", "table04_dense_only", "adjacent_cases_by_family"]),
    ("Strongest cases", ["table03_top_cases"]),
    ("Statistical significance", ["table35_significance_by_net"]),
    ("Cross-family replication", ["table36_replicated", "table37_two_families", "table09_dense_replication"]),
    (
        "Robustness",
        [
            "table38_thresholds",
            "table42_restrictions",
            "table40_twofold_total",
            "table41_twofold_active",
            "extremes_smallest_vs_largest",
            "appendixK_encoder_tiers",
            "curve_shapes",
        ],
    ),
    ("Controls", ["table45_cot_by_family", "table46_cot_by_dataset", "table43_option_order"]),
    ("Aggregate accuracy", ["appendixB_accuracy_"]),
    ("All cases and subtask accuracy", ["appendixC_all_cases", "appendixB_subtask_accuracy_"]),
]
LONG_TABLE_ROWS = 40

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; padding-bottom: .15em; margin-top: 2em; }
table.data { border-collapse: collapse; font-size: 13px; margin: .4em 0 1em; }
table.data th, table.data td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
table.data th { background: #f0f0f0; }
table.data td:first-child, table.data th:first-child { text-align: left; }
table.data tr:nth-child(even) td { background: #fafafa; }
figure { margin: 1em 0; }
figcaption { font-weight: 600; margin-bottom: .3em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
.note { color: #555; font-size: 12px; }
ul.headline li { margin: .15em 0; }
details summary { cursor: pointer; font-weight: 600; margin: .5em 0; }
"""


@dataclass
class Block:
    kind: str  # "heading", "text", "bullets", "table", "figure"
    content: object
    folded: bool = False


def _percent(value: float | None) -> str:
    """A summary share for prose: "12.5%", or "–" when there was nothing to take a share of."""
    return "–" if value is None else f"{value:.1f}%"


def _headline(summary: dict) -> list[str]:
    parameters = summary["parameters"]
    lines = [
        f"{summary['models']} models in {len(summary['families'])} families, {summary['questions']:,} questions, "
        f"{summary['rows']:,} per-question rows (variants: {', '.join(summary['variants'])}); "
        f"analysis variant `{parameters['variant']}`, n ≥ {parameters['min_n']}, Net ≥ {parameters['min_net']}.",
        f"**{summary['cases']}** pairwise inverse-scaling cases out of {summary['eligible_comparisons']:,} eligible "
        f"comparisons ({_percent(summary['case_rate_percent'])}), spanning {summary['subtask_dataset_pairs']} "
        f"subtask–dataset pairs and {summary['family_subtask_pairs']} family–subtask pairs.",
        f"Significance (one-sided exact McNemar): {summary['significant_uncorrected']} cases with "
        f"p < {parameters['alpha']:g}; after Benjamini–Hochberg at FDR {parameters['fdr']:g}: "
        f"{summary['significant_bh_cases']} over the cases, {summary['significant_bh_all']} over all eligible "
        "comparisons.",
        f"Cross-family replication: {len(summary['replicated_subtasks'])} subtask–dataset pairs with cases in ≥3 "
        f"families, {summary['two_family_subtasks']} in exactly two.",
        f"Dense-only: {summary['dense_only_cases']} cases ({summary['dense_only_replicated']} replicated); "
        f"twofold total parameters: {summary['twofold_total_cases']}; twofold active parameters: "
        f"{summary['twofold_active_cases']}; adjacent sizes: {summary['adjacent_cases']}; same encoder tier: "
        f"{summary['same_encoder_tier_cases']} ({summary['same_encoder_tier_replicated']} replicated).",
        f"The larger model is ahead in {_percent(summary['larger_ahead_share_percent'])} of eligible comparisons and by "
        f"Net ≤ −{parameters['min_net']} in {summary['larger_ahead_by_min_net']:,} "
        f"({summary['larger_ahead_significant_bh']:,} BH-significant under the mirrored test).",
        f"{summary['nonmonotonic_family_subtasks']} of {summary['family_subtask_pairs']} family–subtask pairs with "
        f"cases ({_percent(summary['nonmonotonic_share_percent'])}) have non-monotonic accuracy curves; smallest vs. "
        f"largest model: {summary['smallest_vs_largest_cases']} cases in {summary['smallest_vs_largest_comparisons']} "
        "comparisons (families with more than two models).",
    ]
    if "cot" in summary:
        cot = summary["cot"]
        lines.append(
            f"Chain-of-thought control ({cot['cases_covered']} cases): {cot['persist']} persist, {cot['dissolve']} "
            f"dissolve, {cot['reverse']} reverse; median Net {cot['median_net_direct']:+g} → "
            f"{cot['median_net_cot']:+g}; "
            f"the larger model recovers {_percent(cot['recovery_percent'])} of the questions it lost."
        )
    if "option_order" in summary:
        order = summary["option_order"]
        lines.append(
            f"Option order ({', '.join(order['variants'])}): {order['runs_with_positive_net']} of {order['runs']} "
            f"reordered runs over {order['cases_covered']} cases keep a positive Net."
        )
    return lines


def _replicated_bullets(summary: dict, multi_split: set[str]) -> list[str]:
    return [
        f"{dataset_label(r['benchmark'], r['split'], multi_split)} / {r['subtask']}: {len(r['families'])} families "
        f"({', '.join(r['families'])}), {r['cases']} cases, max Net {r['max_net']}"
        for r in summary["replicated_subtasks"]
    ]


def _tables_for(prefix: str, tables: dict[str, Table]) -> list[Table]:
    return [t for name, t in tables.items() if name == prefix or (prefix.endswith("_") and name.startswith(prefix))]


def build_blocks(analysis: Analysis | None, tables: dict[str, Table], figures: list[Path],
                 quality: dict[str, pd.DataFrame] | None, extra_sections: list[tuple[str, list[Table]]] = ()
                 ) -> list[Block]:
    """The report top-down; `analysis` is None for logs that hold only CAIT runs (extra sections only)."""
    blocks = []
    if analysis is not None:
        blocks += [Block("heading", "Headline numbers"), Block("bullets", _headline(analysis.summary))]
        replicated = _replicated_bullets(analysis.summary, multi_split_benchmarks(analysis.comparisons))
        if replicated:
            blocks += [Block("text", "Replicated subtasks (≥3 families):"), Block("bullets", replicated)]
        for heading, names in SECTIONS:
            section = [t for name in names for t in _tables_for(name, tables)]
            if section:
                blocks.append(Block("heading", heading))
                blocks += [Block("table", t, folded=len(t.frame) > LONG_TABLE_ROWS) for t in section]
    for heading, tables in extra_sections:
        if tables:
            blocks.append(Block("heading", heading))
            blocks += [Block("table", t, folded=len(t.frame) > LONG_TABLE_ROWS) for t in tables]
    if figures:
        blocks.append(Block("heading", "Figures"))
        captions = [
            "Figure 1: scaling curves (accuracy vs. total parameters). Filled circles: dense; open diamonds: MoE.",
            "Figure 2: cases per family on the subtasks with most cases; annotation: count and strongest Net.",
        ]
        blocks += [Block("figure", (path, caption)) for path, caption in zip(figures, captions)]
    blocks.append(Block("heading", "Data quality"))
    if not quality:
        blocks.append(Block("text", "No ingestion quality frames were supplied."))
    for table in quality_tables(quality or {}):
        if table.frame.empty:
            blocks.append(Block("text", f"{table.title}: none."))
        else:
            blocks.append(Block("table", table, folded=len(table.frame) > LONG_TABLE_ROWS))
    return blocks


def quality_tables(quality: dict[str, pd.DataFrame]) -> list[Table]:
    """Ingestion's data-quality frames as tables named `quality_<slug>`."""
    return [
        Table(name="quality_" + re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_"), title=title, frame=frame)
        for title, frame in quality.items()
    ]


def render_markdown(blocks: list[Block], out_dir: Path) -> str:
    parts = ["# Inverse scaling analysis report\n"]
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"## {block.content}\n")
        elif block.kind == "text":
            parts.append(f"{block.content}\n")
        elif block.kind == "bullets":
            parts.append("\n".join(f"- {line}" for line in block.content) + "\n")
        elif block.kind == "table" and block.folded:
            table = block.content
            parts.append(f"**{table.title}** ({len(table.frame)} rows): see `tables/{table.name}.md`.\n")
        elif block.kind == "table":
            parts.append(to_markdown(block.content))
        elif block.kind == "figure":
            path, caption = block.content
            parts.append(f"![{caption}]({path.relative_to(out_dir).as_posix()})\n\n*{caption}*\n")
    return "\n".join(parts)


def _inline_markdown(text: str) -> str:
    """HTML of a headline line: escape, then the two inline marks the lines use (**bold**, `code`)."""
    escaped = html.escape(text)
    for mark, tag in (("**", "strong"), ("`", "code")):
        pieces = escaped.split(mark)
        escaped = "".join(p if i % 2 == 0 else f"<{tag}>{p}</{tag}>" for i, p in enumerate(pieces))
    return escaped


def render_html(blocks: list[Block]) -> str:
    parts = []
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"<h2>{html.escape(block.content)}</h2>")
        elif block.kind == "text":
            parts.append(f"<p>{_inline_markdown(block.content)}</p>")
        elif block.kind == "bullets":
            items = "".join(f"<li>{_inline_markdown(line)}</li>" for line in block.content)
            parts.append(f'<ul class="headline">{items}</ul>')
        elif block.kind == "table":
            table = block.content
            rendered = to_html(table)
            if block.folded:
                summary = f"{html.escape(table.title)} ({len(table.frame)} rows)"
                rendered = f"<details><summary>{summary}</summary>{rendered}</details>"
            parts.append(rendered)
        elif block.kind == "figure":
            path, caption = block.content
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(caption)}</figcaption></figure>"
            )
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>Inverse scaling analysis report</title>"
        f"<style>{CSS}</style></head><body><h1>Inverse scaling analysis report</h1>\n{body}\n</body></html>\n"
    )


def write_report(
    analysis: Analysis | None,
    tables: dict[str, Table],
    out_dir: Path,
    figures: list[Path],
    quality: dict[str, pd.DataFrame] | None,
    extra_sections: list[tuple[str, list[Table]]],
) -> dict[str, Path]:
    """Write report.md and report.html under `out_dir`; return their paths."""
    blocks = build_blocks(analysis, tables, figures, quality, extra_sections)
    paths = {"report_md": out_dir / "report.md", "report_html": out_dir / "report.html"}
    paths["report_md"].write_text(render_markdown(blocks, out_dir), encoding="utf-8")
    paths["report_html"].write_text(render_html(blocks), encoding="utf-8")
    return paths
