"""The family-wide trend (inverse_scaling/trend.py; ours) as the report shows it: its table, its figure and the
line on a case's explorer page."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.trend import DECLINE, RISE
from postprocess.render.figures import _drawn
from postprocess.render.tables import Table

SECTION = "Family-wide trend in size (ours)"
FIGURE_PANELS = 6  # the strongest declines, one panel each
FIGURE_CAPTION = ("Family-wide trend: accuracy on the shared questions against log2 total parameters, with the "
                  "fitted change per doubling, on the subtasks of the most negative slopes (significant declines "
                  "first).")


def trend_table(trends: pd.DataFrame, fdr: float) -> Table:
    frame = pd.DataFrame({
        "Family": trends["family"], "Dataset": trends["benchmark"] + " " + trends["split"],
        "Subtask": trends["subtask"], "Sizes": trends["sizes"], "n": trends["n"].astype(int),
        "pp / doubling": trends["slope_pp"].round(2),
        "95% CI": [f"[{low:.2f}, {high:.2f}]" for low, high in zip(trends["ci_low_pp"], trends["ci_high_pp"])],
        "p": [f"{p:.2g}" for p in trends["p_value"]], "q (BH)": [f"{q:.2g}" for q in trends["q_value"]],
        "Trend": trends["trend"],
    })
    declines, rises = int((trends["trend"] == DECLINE).sum()), int((trends["trend"] == RISE).sum())
    note = (f"{len(trends)} tests (family x subtask with three or more sizes on at least --min-n shared questions): "
            f"{declines} declines and {rises} rises at FDR {fdr}. Change in accuracy (percentage points) per doubling "
            "of total parameters: the linear-probability GEE with question clusters (docs/analysis.md); p two-sided, "
            "BH over every test.")
    return Table("trend_family_subtask", "Family-wide trend in size per family x subtask (ours)", frame, note=note)


def trend_figure(trends: pd.DataFrame, points: pd.DataFrame, path: Path, cache: Path | None = None) -> Path | None:
    """Accuracy against log2 size with the fitted line, one panel per subtask of the most negative slopes (the
    significant declines first, when there are any); None when nothing was tested. `cache`: the report's figure
    cache (render/figures.py): a rerun on the same numbers copies the drawn figure instead of drawing it."""
    key = ["benchmark", "split", "subtask"]
    ranked = trends.assign(_declines=trends["trend"] != DECLINE).sort_values(["_declines", "slope_pp"])
    panels = ranked[key].drop_duplicates().head(FIGURE_PANELS).reset_index(drop=True)
    if panels.empty:
        return None
    shown_trends = trends.merge(panels, on=key)
    shown_points = points.merge(panels, on=key)
    inputs = [Path(__file__).read_text(encoding="utf-8"), panels, shown_trends, shown_points]
    return _drawn(Path(path), cache, inputs, lambda target: _draw(panels, shown_trends, shown_points, target))


def _draw(panels: pd.DataFrame, trends: pd.DataFrame, points: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = ["benchmark", "split", "subtask"]
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False)
    for axis, panel in zip(axes.ravel(), panels.itertuples(index=False)):
        label = pd.Series(panel._asdict())
        fits = trends[(trends[key] == label).all(axis=1)].set_index("family")
        for family, shown in points[(points[key] == label).all(axis=1)].groupby("family", sort=False):
            fit = fits.loc[family]
            line = axis.plot(shown["log2_params"], shown["accuracy"], "o",
                             label=f"{family} ({fit['slope_pp']:+.1f} pp, {fit['trend']})")[0]
            x = np.array([shown["log2_params"].min(), shown["log2_params"].max()])
            centre = shown["log2_params"].mean()
            axis.plot(x, shown["accuracy"].mean() + fit["slope_pp"] * (x - centre), color=line.get_color())
        axis.set_title(f"{panel.benchmark} {panel.split} / {panel.subtask}", fontsize=9)
        axis.set_xlabel("log2 total parameters")
        axis.set_ylabel("accuracy (%)")
        axis.legend(fontsize=7)
        axis.grid(alpha=0.3)
    for axis in axes.ravel()[len(panels):]:
        axis.set_visible(False)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def trend_html(row: dict) -> str:
    """The case page's line: where the case stands against its family x subtask's trend."""
    placement = row.get("trend_placement")
    if placement is None:
        return ""
    slope = row.get("trend_slope_pp")
    numbers = ("" if slope is None or np.isnan(slope) else
               f": {slope:+.2f} percentage points per doubling of size across the family, BH q = {row['trend_q']:.2g}")
    return f'<p class="stats">Family-wide trend: {html.escape(str(placement))}{html.escape(numbers)}.</p>'
