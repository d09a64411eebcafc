"""Every output file of `report`: cases.csv, comparisons.parquet, summary.json, tables/ (CSV, Markdown,
LaTeX), figures/ and report.md / report.html."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.analysis import CASE_COLUMNS, Analysis
from postprocess.render.labels import multi_split_benchmarks
from postprocess.render.paper_tables import inverse_scaling_tables
from postprocess.render.tables import Table, write_table


def _json_default(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_outputs(
    analysis: Analysis,
    out_dir: str | Path,
    quality: dict[str, pd.DataFrame] | None,
    extra_sections: list[tuple[str, list[Table]]] = (),
    figure_subtasks: list[tuple[str, str, str]] | None = None,
) -> dict[str, Path]:
    """Write every output file under `out_dir`; return the main paths by name. `extra_sections`
    ((heading, tables), e.g. CAIT's) are written with the other tables and added to the report;
    `figure_subtasks` chooses Figure 1's panels (default: the most replicated subtasks)."""
    from postprocess.render import figures, report  # matplotlib is only needed when writing

    figure1, figure2 = figures.figure_subtasks(analysis.replication, analysis.subtask_accuracy, figure_subtasks)
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = {"cases": out / "cases.csv", "comparisons": out / "comparisons.parquet", "summary": out / "summary.json"}
    analysis.cases[CASE_COLUMNS].to_csv(paths["cases"], index=False)
    eligible = analysis.comparisons[analysis.comparisons["eligible"]]
    eligible[CASE_COLUMNS].reset_index(drop=True).to_parquet(paths["comparisons"], index=False)
    paths["summary"].write_text(json.dumps(analysis.summary, indent=2, default=_json_default) + "\n", encoding="utf-8")
    tables = inverse_scaling_tables(analysis)
    extra_tables = [t for _, section in extra_sections for t in section]
    for table in [*tables.values(), *extra_tables, *report.quality_tables(quality or {})]:
        write_table(table, out / "tables")
    paths["tables"] = out / "tables"
    multi_split = multi_split_benchmarks(analysis.comparisons)
    paths["figure1"] = figures.scaling_curves(analysis.subtask_accuracy, analysis.models, figure1,
                                              out / "figures" / "figure1_scaling_curves.png", multi_split)
    paths["figure2"] = figures.cross_family_bars(analysis.cases, figure2, analysis.families,
                                                 out / "figures" / "figure2_cross_family.png", multi_split)
    paths.update(report.write_report(analysis, tables, out, [paths["figure1"], paths["figure2"]], quality,
                                     list(extra_sections)))
    return paths


def write_sections_only(
    out_dir: str | Path, extra_sections: list[tuple[str, list[Table]]], quality: dict[str, pd.DataFrame] | None
) -> dict[str, Path]:
    """The report of logs without benchmark rows for the inverse-scaling analysis (CAIT runs only)."""
    from postprocess.render import report

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for table in [t for _, tables in extra_sections for t in tables] + report.quality_tables(quality or {}):
        write_table(table, out / "tables")
    return {"tables": out / "tables", **report.write_report(None, {}, out, [], quality, extra_sections)}
