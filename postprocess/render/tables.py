"""Presentation tables and their CSV / Markdown / LaTeX / HTML renderings.

Table builders (accuracy.py, cases.py, controls.py) return a `Table` whose frame already holds the
values as printed (percentages rounded to one decimal, counts as ints, composite cells as strings);
this module only renders them. Emphasis (best in family, largest model not best) travels as boolean
masks so each format can mark it its own way.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

FORMATS = ("csv", "md", "tex")


@dataclass
class Table:
    name: str  # file stem, e.g. "table02_cases_by_family"
    title: str  # caption; names the paper table it mirrors
    frame: pd.DataFrame
    bold: pd.DataFrame | None = None  # boolean mask shaped like `frame`
    underline: pd.DataFrame | None = None
    note: str = ""
    # Tables whose rows are comparisons: each row's CASE_KEY values, which report.html links to its explorer page.
    row_keys: list[tuple] | None = None


def cell_text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "\n": " ",
    "\r": " ",
}
_LATEX_SYMBOLS = {"≥": r"$\geq$", "≤": r"$\leq$", "–": "--", "Δ": r"$\Delta$", "→": r"$\rightarrow$"}


_LATEX_REPLACED = {**_LATEX_ESCAPES, **_LATEX_SYMBOLS}  # single characters, none in another's replacement
_LATEX_SPECIAL = re.compile("|".join(map(re.escape, _LATEX_REPLACED)))


def latex_escape(text: str) -> str:
    """Each special character replaced in one pass (most cells, numbers and names, have none)."""
    return _LATEX_SPECIAL.sub(lambda found: _LATEX_REPLACED[found.group(0)], text)


# Markdown: backslash-escape what could start markup: code, links, emphasis, strikethrough, table cells;
# `<` where it could open an HTML tag, comment or autolink, `&` where it could start an entity; a run of
# underscores unless it lies inside a word (dev_val, models__tiny: no emphasis there). Line breaks become
# <br> so a cell stays on its row.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]|~]|<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)|_+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _escaped(found: re.Match) -> str:
    mark, text = found.group(0), found.string
    if mark[0] == "_":
        inside_word = text[found.start() - 1:found.start()].isalnum() and text[found.end():found.end() + 1].isalnum()
        return mark if inside_word else "\\_" * len(mark)
    return "\\" + mark


def markdown_escape(text: str) -> str:
    """`text` as Markdown (GitHub's dialect) that shows it literally, on one line."""
    return _LINE_BREAK.sub("<br>", _MARKDOWN_SPECIAL.sub(_escaped, text))


_MARKUP = {
    # format: (escape, bold, underline)
    "md": (markdown_escape, "**{}**", "<u>{}</u>"),
    "tex": (latex_escape, r"\textbf{{{}}}", r"\underline{{{}}}"),
    "html": (html.escape, "<strong>{}</strong>", "<u>{}</u>"),
}


def _mask(mask: pd.DataFrame | None, frame: pd.DataFrame) -> list[list[bool]] | None:
    if mask is None:
        return None
    return mask.reindex_like(frame).fillna(False).astype(bool).to_numpy().tolist()


def _plain_cells(table: Table) -> tuple[list[list[str]], list[list[bool]] | None, list[list[bool]] | None]:
    """(each cell's text, the bold and underline masks as lists), worked out once per table for its three formats
    (Markdown, LaTeX, HTML) and kept on it while its frame and masks are the same objects."""
    parts = (table.frame, table.bold, table.underline)
    kept = table.__dict__.get("_plain")
    if kept is not None and all(a is b for a, b in zip(kept[0], parts)):
        return kept[1]
    cells = ([[cell_text(value) for value in row] for row in table.frame.itertuples(index=False, name=None)],
             _mask(table.bold, table.frame), _mask(table.underline, table.frame))
    table.__dict__["_plain"] = (parts, cells)
    return cells


def rendered_cells(table: Table, fmt: str) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) as strings with the format's escaping and emphasis applied. Plain lists: a report
    renders some 30 tables three times, and DataFrame.map per cell costs more than the analysis."""
    escape, bold, underline = _MARKUP[fmt]
    texts, bold_mask, underline_mask = _plain_cells(table)
    rows = [[escape(text) for text in row] for row in texts]
    for mask, template in ((bold_mask, bold), (underline_mask, underline)):
        if mask is not None:
            rows = [[template.format(cell) if marked and cell else cell for cell, marked in zip(row, marks)]
                    for row, marks in zip(rows, mask)]
    return [escape(str(c)) for c in table.frame.columns], rows


def _pipe_table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown pipe table, left-aligned, each column as wide as its widest cell and at least its header
    plus two (the layout of tabulate's "pipe" format, which pandas' to_markdown uses)."""
    headers = [h.strip() for h in headers]
    rows = [[cell.strip() for cell in row] for row in rows]
    widths = [max([len(h) + 2, *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"

    rule = "|" + "|".join(":" + "-" * (width + 1) for width in widths) + "|"
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def to_markdown(table: Table) -> str:
    body = _pipe_table(*rendered_cells(table, "md"))
    note = f"\n\n{markdown_escape(table.note)}" if table.note else ""
    return f"**{markdown_escape(table.title)}**\n\n{body}{note}\n"


def to_latex(table: Table) -> str:
    """A booktabs table with caption and label (the layout of pandas' DataFrame.to_latex)."""
    caption = latex_escape(table.title + (f" {table.note}" if table.note else ""))
    headers, rows = rendered_cells(table, "tex")
    lines = [r"\begin{table}", rf"\caption{{{caption}}}", rf"\label{{tab:{table.name}}}",
             rf"\begin{{tabular}}{{{'l' * len(headers)}}}", r"\toprule", " & ".join(headers) + r" \\", r"\midrule",
             *(" & ".join(row) + r" \\" for row in rows), r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_html(table: Table, links: Mapping[tuple, str] | None = None) -> str:
    """The table as an HTML figure; with `links` (comparison -> href), a row of a comparison that has a page
    (row_keys) links to it from its first cell."""
    headers, rows = rendered_cells(table, "html")
    if links is not None and table.row_keys is not None:
        for row, key in zip(rows, table.row_keys):
            if key in links and row:
                row[0] = f'<a class="case-link" href="{html.escape(links[key])}">{row[0]}</a>'
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>\n" for row in rows)
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return (f'<figure class="table"><figcaption>{html.escape(table.title)}</figcaption><table class="data">'
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody></table>{note}</figure>")


def write_table(table: Table, directory: Path) -> list[Path]:
    """Write `<name>.csv`, `<name>.md` and `<name>.tex` under `directory`; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{table.name}.{fmt}" for fmt in FORMATS]
    table.frame.to_csv(paths[0], index=False)
    paths[1].write_text(to_markdown(table), encoding="utf-8")
    paths[2].write_text(to_latex(table), encoding="utf-8")
    return paths
