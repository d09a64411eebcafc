"""Presentation tables and their CSV / Markdown / LaTeX / HTML renderings.

Table builders (accuracy.py, cases.py, controls.py) return a `Table` whose frame already holds the
values as printed (percentages rounded to one decimal, counts as ints, composite cells as strings);
this module only renders them. Emphasis (best in family, largest model not best) travels as boolean
masks so each format can mark it its own way.
"""

from __future__ import annotations

import html
import math
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
}
_LATEX_SYMBOLS = {"≥": r"$\geq$", "≤": r"$\leq$", "–": "--", "Δ": r"$\Delta$", "→": r"$\rightarrow$"}


def latex_escape(text: str) -> str:
    escaped = "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)
    for symbol, latex in _LATEX_SYMBOLS.items():
        escaped = escaped.replace(symbol, latex)
    return escaped


_MARKUP = {
    # format: (escape, bold, underline)
    "md": (lambda s: s.replace("|", r"\|"), "**{}**", "<u>{}</u>"),
    "tex": (latex_escape, r"\textbf{{{}}}", r"\underline{{{}}}"),
    "html": (html.escape, "<strong>{}</strong>", "<u>{}</u>"),
}


def rendered_cells(table: Table, fmt: str) -> pd.DataFrame:
    """The table as strings with the format's escaping and emphasis applied, headers included."""
    escape, bold, underline = _MARKUP[fmt]
    text = table.frame.map(cell_text).map(escape)
    for mask, template in ((table.bold, bold), (table.underline, underline)):
        if mask is not None:
            marked = mask.reindex_like(table.frame).fillna(False).astype(bool)
            text = text.mask(marked, text.map(lambda s, mark=template: mark.format(s) if s else s))
    text.columns = [escape(str(c)) for c in table.frame.columns]
    return text


def to_markdown(table: Table) -> str:
    body = rendered_cells(table, "md").to_markdown(index=False, disable_numparse=True)
    note = f"\n\n{table.note}" if table.note else ""
    return f"**{table.title}**\n\n{body}{note}\n"


def to_latex(table: Table) -> str:
    caption = latex_escape(table.title + (f" {table.note}" if table.note else ""))
    return rendered_cells(table, "tex").to_latex(index=False, escape=False, caption=caption, label=f"tab:{table.name}")


def to_html(table: Table) -> str:
    body = rendered_cells(table, "html").to_html(index=False, escape=False, border=0, classes="data")
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return f'<figure class="table"><figcaption>{html.escape(table.title)}</figcaption>{body}{note}</figure>'


def write_table(table: Table, directory: Path) -> list[Path]:
    """Write `<name>.csv`, `<name>.md` and `<name>.tex` under `directory`; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{table.name}.{fmt}" for fmt in FORMATS]
    table.frame.to_csv(paths[0], index=False)
    paths[1].write_text(to_markdown(table), encoding="utf-8")
    paths[2].write_text(to_latex(table), encoding="utf-8")
    return paths
