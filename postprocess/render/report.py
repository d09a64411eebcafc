"""`report.md` and a self-contained `report.html` (figures embedded as base64 PNG).

Both are rendered from one list of blocks, top-down: what the logs hold and the headline numbers, a
glossary of the terms they use, tables by theme, extra sections (CAIT), figures, then the data-quality
frames that ingestion supplies (`quality`: title -> DataFrame). Every headline sentence states one number
at one threshold, the threshold named in it. Logs without two models of one family that answered common
questions (one model, say) get the accuracy tables and a sentence saying there is nothing to compare.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from postprocess.inverse_scaling.credibility import CHECKS
from postprocess.inverse_scaling.parameters import NOISE_VARIANT, RERUN_COVERAGE
from postprocess.render import trend_tables
from postprocess.render.labels import dataset_label, multi_split_benchmarks
from postprocess.render.tables import Table, markdown_escape, to_html, to_markdown

if TYPE_CHECKING:
    from postprocess.inverse_scaling.analysis import Analysis

TITLE = "Inverse scaling analysis report"
# Theme -> table names (prefixes), in reading order. Long tables are folded in HTML and linked in Markdown.
SECTIONS: list[tuple[str, list[str]]] = [
    ("Prevalence", ["table02_cases_by_family", "table04_dense_only", "adjacent_cases_by_family"]),
    ("Strongest cases", ["table03_top_cases", "table03_top_cases_extended"]),
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
    ("Controls", ["table45_cot_by_family", "table46_cot_by_dataset", "appendixL_cot_accuracy_change",
                  "appendixL_cot_accuracy_by_model", "table43_option_order", "table43_option_order_extended"]),
    ("Aggregate accuracy", ["appendixB_accuracy_"]),
    ("All cases and subtask accuracy", ["appendixC_all_cases", "appendixC_all_cases_extended",
                                        "appendixB_subtask_accuracy_"]),
]
ACCURACY_TABLES = ("appendixB_accuracy_", "appendixB_subtask_accuracy_")  # all a report without pairs shows
LONG_TABLE_ROWS = 40
# Table 42's rows in the headline, in its order: (restriction, how the headline names the pairs kept)
HEADLINE_RESTRICTIONS = [
    ("dense_only", "dense models only (no MoE)"),
    ("twofold_total", "the larger model has at least twice the total parameters"),
    ("twofold_active", "the larger model has at least twice the active parameters"),
    ("adjacent", "adjacent sizes only"),
    ("same_encoder_tier", "both models in the same vision-encoder tier"),
    ("extreme", "smallest vs. largest model of a family of three or more"),
]

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
dl.glossary { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; font-size: 14px; }
dl.glossary dt { font-weight: 600; }
dl.glossary dd { margin: 0; }
details summary { cursor: pointer; font-weight: 600; margin: .5em 0; }
"""


@dataclass
class Block:
    kind: str  # "heading", "text", "bullets", "definitions", "links" ((label, href) pairs), "table", "figure"
    content: object
    folded: bool = False


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 case', '3 cases', '1,204 comparisons'."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _percent(value: float | None) -> str:
    """A summary share for prose: "12.5%", or "–" when there was nothing to take a share of."""
    return "–" if value is None else f"{value:.1f}%"


def glossary(analysis: Analysis) -> list[tuple[str, str]]:
    """The terms of the headline and the tables, at this analysis's thresholds."""
    params = analysis.parameters
    return [
        ("Comparison", "a smaller and a larger model of the same family on one subtask of one benchmark split, over "
                       "the n questions both answered that have a known right answer."),
        ("FlipInv", "questions the smaller model got right and the larger got wrong."),
        ("FlipNorm", "questions the larger model got right and the smaller got wrong."),
        ("Net", "FlipInv − FlipNorm: how many more of the shared questions the smaller model wins."),
        ("Eligible", f"a comparison with n ≥ {params.min_n}; only eligible comparisons are counted."),
        ("Case", f"an eligible comparison with Net ≥ {params.min_net}: an inverse-scaling case."),
        ("Larger ahead", f"an eligible comparison with Net ≤ −{params.min_net}, the mirror image of a case."),
        ("p (McNemar)", "one-sided exact McNemar test: the chance of at least FlipInv of the FlipInv + FlipNorm "
                        "disagreements going to the smaller model if both models were equally good."),
        ("BH", f"Benjamini–Hochberg correction for testing many comparisons at once, at false discovery rate "
               f"{params.fdr:g}: “over the cases” corrects among the cases, “over all eligible comparisons” among "
               "every eligible comparison (stricter)."),
        ("Replicated", "a subtask with cases in three or more families."),
        ("Dense / MoE", "a mixture-of-experts (MoE) model uses only some of its parameters per token: its active "
                        "parameters; total parameters count them all."),
        ("Non-monotonic", "a family's accuracy on a subtask that rises and falls with size."),
        ("Verdict", f"a case's credibility checks, each asking what the case definition asks, Net ≥ {params.min_net}: "
                    "in every reordering of the options in the logs; in the identity re-run (the unchanged prompt run "
                    "again); in the worst case over every weak, unsettled or judge-settled answer. A run that covers "
                    f"under {RERUN_COVERAGE:.0%} of the case's questions does not decide. “pass” (fully checked) "
                    "when all three ran and passed, “none failed, k not run” when k could not run (not a pass), "
                    "“not checked” when none could. Replication (“k of m” families) is shown beside it, not as a "
                    "check: the paper calls it a reporting choice. Ours, not the paper's."),
    ]


def _headline(analysis: Analysis) -> list[str]:
    summary, params = analysis.summary, analysis.parameters
    eligible = summary["eligible_comparisons"]
    cases = summary["cases"]
    compared = analysis.comparisons[analysis.comparisons["eligible"]]
    subtasks = len(compared[["benchmark", "split", "subtask"]].drop_duplicates())
    lines = [
        f"**{cases}** pairwise inverse-scaling {'case' if cases == 1 else 'cases'}: eligible comparisons "
        f"(n ≥ {params.min_n}) in which the smaller model wins by Net ≥ {params.min_net}; "
        f"that is {_percent(summary['case_rate_percent'])} of {count(eligible, 'eligible comparison')}.",
        f"The cases fall on {summary['subtask_dataset_pairs']} of the {subtasks:,} subtasks compared, in "
        f"{count(summary['family_subtask_pairs'], 'family–subtask pair')}.",
        f"{count(summary['significant_uncorrected'], 'case has', 'cases have')} p < {params.alpha:g} "
        "(one-sided exact McNemar, not corrected for testing many comparisons).",
        f"{count(summary['significant_bh_cases'], 'case stays', 'cases stay')} significant after BH at FDR "
        f"{params.fdr:g} over the {count(cases, 'case')}.",
        f"{count(summary['significant_bh_all'], 'case stays', 'cases stay')} significant after BH at FDR "
        f"{params.fdr:g} over all {count(eligible, 'eligible comparison')}.",
        EXPLORATORY.replace("min_net", str(params.min_net)).replace("min_n", str(params.min_n)),
        _credibility_line(summary["credibility"]),
        *_noise_line(summary["credibility"], params.min_net),
        *_unsettled_lines(summary["unsettled"]),
        f"Replicated: {count(len(summary['replicated_subtasks']), 'subtask has', 'subtasks have')} cases in three "
        "or more families.",
        f"{count(summary['two_family_subtasks'], 'subtask has', 'subtasks have')} cases in exactly two families.",
    ]
    lines += [
        f"The larger model is ahead (Net < 0) in {_percent(summary['larger_ahead_share_percent'])} of eligible "
        "comparisons.",
        f"The larger model is ahead by Net ≤ −{params.min_net} in "
        f"{count(summary['larger_ahead_by_min_net'], 'eligible comparison')}; "
        f"{summary['larger_ahead_significant_bh']:,} of them stay significant after BH at FDR {params.fdr:g} "
        "over all eligible comparisons (the mirrored test).",
        f"{summary['nonmonotonic_family_subtasks']} of the {count(summary['family_subtask_pairs'], 'family–subtask pair')}"
        f" with cases ({_percent(summary['nonmonotonic_share_percent'])}) "
        f"{'has' if summary['nonmonotonic_family_subtasks'] == 1 else 'have'} non-monotonic accuracy.",
    ]
    if "cot" in summary:
        cot = summary["cot"]
        lines += [
            f"Chain-of-thought control over {count(cot['cases_covered'], 'case')} rerun with CoT: "
            f"{cot['persist']} persist (Net ≥ {params.min_net}), {cot['reverse']} reverse (Net ≤ −{params.min_net}), "
            f"{cot['dissolve']} dissolve (in between).",
            f"Under CoT the median Net of those cases goes from {cot['median_net_direct']:+g} to "
            f"{cot['median_net_cot']:+g}.",
            f"Under CoT the larger model answers {_percent(cot['recovery_percent'])} of the questions it lost under "
            "the direct prompt.",
        ]
    if "option_order" in summary:
        order = summary["option_order"]
        reorderings = [v for v in order["variants"] if v != NOISE_VARIANT]
        if order["runs"]:
            lines.append(
                f"Option order ({', '.join(reorderings)}): {order['runs_with_min_net']} of "
                f"{count(order['runs'], 'reordered run')} over {count(order['cases_covered'], 'case')} keep Net ≥ "
                f"{params.min_net} ({order['runs_with_positive_net']} keep Net > 0).")
        if "identity_runs" in order:
            lines.append(
                f"{count(order['identity_runs'], 'identity re-run')} (the unchanged prompt run again: run-to-run "
                f"noise, not a reordering) differ from the main run's Net by up to "
                f"{_points(order['identity_max_net_change'])}; the paper's by up to 11 (Appendix J).")
    return lines


def _credibility_line(numbers: dict) -> str:
    """The headline count of the credibility verdict (inverse_scaling/credibility.py), each check's outcome after it."""
    checks = "; ".join(f"{name}: {numbers[column]['pass']} pass, {numbers[column]['fail']} fail, "
                       f"{numbers[column]['not run']} not run" for column, name in CHECKS.items())
    return (f"Credibility (ours): **{numbers['pass_all_checks']}** of the {count(numbers['cases'], 'case')} are fully "
            f"checked (all three checks ran) and pass; {numbers['fail']} fail one or more; "
            f"{numbers['partly_checked']} are only partly checked (none failed, some could not run: not a pass); "
            f"{numbers['not_checked']} could not be checked; {checks}.")


def _points(value: float) -> str:
    return f"{value:g} Net point{'' if value == 1 else 's'}"


def _noise_line(numbers: dict, min_net: int) -> list[str]:
    """The distribution of the identity re-run's Net change, which one case's re-run cannot give."""
    noise = numbers["noise_change"]
    if not noise["comparisons"]:
        return []
    return [f"Run-to-run noise: over the {count(noise['comparisons'], 'eligible comparison')} whose identity re-run "
            f"covers at least {RERUN_COVERAGE:.0%} of their questions, the re-run moves Net by at most "
            f"{_points(noise['p95_abs_net_change'])} in 95% of them (the 95th percentile of |re-run Net − main Net| "
            f"on the same questions; largest {noise['max_abs_net_change']}). A case's noise check asks its re-run Net "
            f"to stay ≥ {min_net}; `noise_change_percentile` in cases.csv places its change in this distribution."]


EXPLORATORY = ("These p-values are exploratory rather than confirmatory, as the paper says of its own (Section 5.2, "
               "Appendix D): the cases were selected on the same data (Net ≥ min_net, n ≥ min_n), which biases the "
               "tested set toward positive effects, and the tests overlap across many model pairs and subtasks. A "
               "case needs Net ≥ min_net, not significance: p and BH q stand beside each verdict in cases.csv.")


UNSETTLED_TREATMENT_WORDS = {
    "exclude": "each such question leaves the shared questions of the pairs that include that answer (n counts only "
               "settled answers)",
    "wrong": "they count as wrong (`--unsettled wrong`)",
    "candidate": "their withheld letter counts as the answer (`--unsettled candidate`)",
}


def unsettled_sentence(numbers: dict) -> str:
    """How many answers nobody settled and how the analysis counted them (the report's and the console's)."""
    if not numbers["unsettled"]:
        return "Every answer is settled: no letter withheld by the extraction rules is left without a judge's verdict."
    return (f"{numbers['unsettled']:,} of {numbers['answers']:,} answers are unsettled (the extraction rules withheld "
            f"a letter and no judge settled it; {numbers['with_candidate']:,} with a withheld letter, "
            f"{numbers['candidate_is_gold']:,} of them the right one): {UNSETTLED_TREATMENT_WORDS[numbers['treatment']]}"
            ". A judge run (`judges adjudicate`) settles them.")


def _unsettled_lines(numbers: dict) -> list[str]:
    lines = [unsettled_sentence(numbers)]
    if numbers["unsettled"]:
        lines.append(f"{count(numbers['cases_decided_by_unsettled'], 'case is', 'cases are')} a case under one way of "
                     "settling the unsettled answers and not under another (marked `unsettled_decides` in cases.csv); "
                     f"{count(numbers['comparisons_decided_by_unsettled'], 'comparison is', 'comparisons are')} so in "
                     "all, cases or not.")
    return lines


def _restriction_lines(analysis: Analysis) -> list[str]:
    """Table 42's rows as sentences: the cases that remain when only some pairs count."""
    restrictions = analysis.restrictions.set_index("restriction")
    return [f"{pairs[0].upper()}{pairs[1:]}: {count(int(restrictions.at[name, 'cases']), 'case')} in "
            f"{count(int(restrictions.at[name, 'comparisons']), 'eligible comparison')}."
            for name, pairs in HEADLINE_RESTRICTIONS]


def _scope(analysis: Analysis) -> str:
    summary, params = analysis.summary, analysis.parameters
    return (f"{count(summary['models'], 'model')} in {count(len(summary['families']), 'family', 'families')} answered "
            f"{summary['questions']:,} questions ({summary['rows']:,} per-question rows; variants in the logs: "
            f"{markdown_escape(', '.join(summary['variants']))}). The analysis reads the `{params.variant}` variant.")


def _nothing_to_compare(analysis: Analysis) -> str:
    members = analysis.models.groupby("family", sort=False)["model"].apply(list)
    held = "; ".join(f"{family}: {', '.join(models)}" for family, models in members.items())
    return ("Nothing to compare pairwise: inverse scaling compares a smaller and a larger model of one family on the "
            f"questions both answered with a known right answer, and these logs hold no such pair ({held}). The "
            "tables below give each model's accuracy.")


def _replicated_bullets(summary: dict, multi_split: set[str]) -> list[str]:
    return [
        f"{markdown_escape(dataset_label(r['benchmark'], r['split'], multi_split))} / {markdown_escape(r['subtask'])}: "
        f"{len(r['families'])} families ({markdown_escape(', '.join(r['families']))}), {count(r['cases'], 'case')}, "
        f"max Net {r['max_net']}"
        for r in summary["replicated_subtasks"]
    ]


def _tables_for(prefix: str, tables: dict[str, Table]) -> list[Table]:
    return [t for name, t in tables.items() if name == prefix or (prefix.endswith("_") and name.startswith(prefix))]


def has_pairs(analysis: Analysis) -> bool:
    """Whether any two models of one family answered a common question: else only accuracy is reported."""
    return not analysis.comparisons.empty


def _analysis_blocks(analysis: Analysis, tables: dict[str, Table]) -> list[Block]:
    blocks = [Block("text", _scope(analysis))]
    if not has_pairs(analysis):
        blocks.append(Block("text", _nothing_to_compare(analysis)))
        sections = [("Accuracy", list(ACCURACY_TABLES))]
    else:
        blocks += [Block("heading", "Headline numbers"), Block("bullets", _headline(analysis)),
                   Block("text", "Cases when only some pairs count (Table 42):"),
                   Block("bullets", _restriction_lines(analysis))]
        replicated = _replicated_bullets(analysis.summary, multi_split_benchmarks(analysis.comparisons))
        if replicated:
            blocks += [Block("text", "Replicated subtasks (cases in three or more families):"),
                       Block("bullets", replicated)]
        blocks += [Block("heading", "Terms used"), Block("definitions", glossary(analysis))]
        sections = SECTIONS
    for heading, names in sections:
        section = [t for name in names for t in _tables_for(name, tables)]
        if section:
            blocks.append(Block("heading", heading))
            blocks += [Block("table", t, folded=len(t.frame) > LONG_TABLE_ROWS) for t in section]
    return blocks


def build_blocks(analysis: Analysis | None, tables: dict[str, Table], figures: list[Path],
                 quality: dict[str, pd.DataFrame] | None, extra_sections: list[tuple[str, list[Table]]] = (),
                 explorer_links: list[tuple[tuple, str, str]] | None = None) -> list[Block]:
    """The report top-down; `analysis` is None for logs that hold only CAIT runs (extra sections only).
    `explorer_links`: (comparison, label, link) of each case's explorer page; None without an explorer."""
    blocks = [] if analysis is None else _analysis_blocks(analysis, tables)
    position = next((i for i, b in enumerate(blocks) if b.kind == "heading" and b.content == "Terms used"), None)
    if explorer_links is not None:
        blocks[position or len(blocks):position or len(blocks)] = _explorer_blocks(explorer_links)
    elif position is not None:  # cases were compared, but no page written
        blocks[position:position] = [Block("heading", "Flip explorer"), Block("text", NO_EXPLORER)]
    for heading, section in extra_sections:
        if section:
            blocks.append(Block("heading", heading))
            blocks += [Block("table", t, folded=len(t.frame) > LONG_TABLE_ROWS) for t in section]
    if figures:
        blocks.append(Block("heading", "Figures"))
        captions = [
            "Figure 1: scaling curves (accuracy vs. total parameters). Filled circles: dense; open diamonds: MoE.",
            "Figure 2: cases per family on the subtasks with most cases; annotation: count and strongest Net.",
            trend_tables.FIGURE_CAPTION,  # ours
        ]
        blocks += [Block("figure", (path, caption)) for path, caption in zip(figures, captions)]
    blocks.append(Block("heading", "Data quality"))
    if not quality:
        blocks.append(Block("text", "No ingestion quality frames were supplied."))
    else:
        blocks.append(Block("text", "Every line or run that was skipped, repaired or reported is listed with its "
                                    "file, line, field and reason in `problems.csv`."))
    for table in quality_tables(quality or {}):
        if table.frame.empty:
            blocks.append(Block("text", f"{markdown_escape(table.title)}: none."))
        else:
            blocks.append(Block("table", table, folded=len(table.frame) > LONG_TABLE_ROWS))
    return blocks


NO_EXPLORER = ("No case pages: the report was run with `--explorer none`, so the case rows of the tables link "
               "nowhere; run it without that option for the flip explorer.")


def _explorer_blocks(links: list[tuple[tuple, str, str]]) -> list[Block]:
    """The flip explorer's entry: its index and one link per case, by Net."""
    return [Block("heading", "Flip explorer"),
            Block("links", [("Every case, sortable and with filters (explorer/index.html)", "explorer/index.html")]),
            Block("text", "Each case's page lists its flipped questions with the images, the options in the order "
                          "shown, the gold and both models' full answers, and the case's credibility checks; the "
                          "case rows of Table 3 and Appendix C link to the same pages:"),
            Block("links", [(label, href) for _, label, href in links], folded=len(links) > LONG_TABLE_ROWS)]


def quality_tables(quality: dict[str, pd.DataFrame]) -> list[Table]:
    """Ingestion's data-quality frames as tables named `quality_<slug>`."""
    return [
        Table(name="quality_" + re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_"), title=title, frame=frame)
        for title, frame in quality.items()
    ]


def render_markdown(blocks: list[Block], out_dir: Path) -> str:
    parts = [f"# {TITLE}\n"]
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"## {block.content}\n")
        elif block.kind == "text":
            parts.append(f"{block.content}\n")
        elif block.kind == "bullets":
            parts.append("\n".join(f"- {line}" for line in block.content) + "\n")
        elif block.kind == "definitions":
            parts.append("\n".join(f"- **{term}**: {meaning}" for term, meaning in block.content) + "\n")
        elif block.kind == "links":
            parts.append("\n".join(f"- [{markdown_escape(label)}]({href})" for label, href in block.content) + "\n")
        elif block.kind == "table" and block.folded:
            table = block.content
            parts.append(f"**{markdown_escape(table.title)}** ({len(table.frame)} rows): see `tables/{table.name}.md`.\n")
        elif block.kind == "table":
            parts.append(to_markdown(block.content))
        elif block.kind == "figure":
            path, caption = block.content
            parts.append(f"![{caption}]({path.relative_to(out_dir).as_posix()})\n\n*{caption}*\n")
    return "\n".join(parts)


_INLINE_MARK = re.compile(r"\\(.)|\*\*|`|<br>", re.DOTALL)


def _inline_markdown(text: str) -> str:
    """HTML of a line of the report's Markdown: backslash escapes give the character itself, **bold** and
    `code` their tags, <br> (markdown_escape's line break) a line break; everything else is escaped."""
    parts, open_marks, position = [], set(), 0
    for found in _INLINE_MARK.finditer(text):
        parts.append(html.escape(text[position:found.start()]))
        position = found.end()
        mark = found.group(0)
        if found.group(1) is not None:
            parts.append(html.escape(found.group(1)))
        elif mark == "<br>":
            parts.append("<br>")
        else:
            tag = "strong" if mark == "**" else "code"
            parts.append(f"</{tag}>" if mark in open_marks else f"<{tag}>")
            open_marks ^= {mark}
    parts.append(html.escape(text[position:]))
    parts += [f"</{'strong' if mark == '**' else 'code'}>" for mark in open_marks]
    return "".join(parts)


def render_html(blocks: list[Block], pages: dict[tuple, str] | None = None) -> str:
    """The report's HTML; `pages` (comparison -> link of its explorer page) links the case rows of tables."""
    parts = []
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"<h2>{html.escape(block.content)}</h2>")
        elif block.kind == "text":
            parts.append(f"<p>{_inline_markdown(block.content)}</p>")
        elif block.kind == "bullets":
            items = "".join(f"<li>{_inline_markdown(line)}</li>" for line in block.content)
            parts.append(f'<ul class="headline">{items}</ul>')
        elif block.kind == "definitions":
            items = "".join(f"<dt>{html.escape(term)}</dt><dd>{html.escape(meaning)}</dd>"
                            for term, meaning in block.content)
            parts.append(f'<dl class="glossary">{items}</dl>')
        elif block.kind == "links":
            items = "".join(f'<li><a class="case-link" href="{html.escape(href)}">{html.escape(label)}</a></li>'
                            for label, href in block.content)
            rendered = f'<ul class="links">{items}</ul>'
            if block.folded:
                rendered = f"<details><summary>{len(block.content)} case pages</summary>{rendered}</details>"
            parts.append(rendered)
        elif block.kind == "table":
            table = block.content
            rendered = to_html(table, pages)
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
        f'<link rel="icon" href="data:,"><title>{TITLE}</title>'
        f"<style>{CSS}</style></head><body><h1>{TITLE}</h1>\n{body}\n</body></html>\n"
    )


def write_report(
    analysis: Analysis | None,
    tables: dict[str, Table],
    out_dir: Path,
    figures: list[Path],
    quality: dict[str, pd.DataFrame] | None,
    extra_sections: list[tuple[str, list[Table]]],
    explorer_links: list[tuple[tuple, str, str]] | None = None,
) -> dict[str, Path]:
    """Write report.md and report.html under `out_dir`; return their paths. `explorer_links`: (comparison, label,
    link) of each case's flip-explorer page."""
    blocks = build_blocks(analysis, tables, figures, quality, extra_sections, explorer_links)
    paths = {"report_md": out_dir / "report.md", "report_html": out_dir / "report.html"}
    pages = {key: href for key, _, href in explorer_links or ()}
    paths["report_md"].write_text(render_markdown(blocks, out_dir), encoding="utf-8")
    paths["report_html"].write_text(render_html(blocks, pages), encoding="utf-8")
    return paths
