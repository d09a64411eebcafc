"""Figures 1 and 2 of the paper as PNG (matplotlib's object API, no pyplot global state).

With a figure cache (the report's --cache-dir), a figure is drawn only when what it shows changed: it is
stored under the SHA-256 of the data it plots, its layout parameters, this module's source and
matplotlib's version, and copied from there otherwise (drawing and importing matplotlib are most of a
warm report's time). matplotlib is imported only to draw.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from postprocess.inverse_scaling.compare import GROUP_KEY
from postprocess.inverse_scaling.parameters import REPLICATION_FAMILIES
from postprocess.render.labels import dataset_label

FIGURE1_PANELS = 4
FIGURE2_SUBTASKS = 12
FAMILY_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
DPI = 150


class UnknownSubtask(ValueError):
    """A --figure-subtask that names no subtask of the analysed rows; the message lists the valid ones."""


def figure_subtasks(replication: pd.DataFrame, subtask_accuracy: pd.DataFrame,
                    chosen: list[tuple[str, str, str]] | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 1 panels: the chosen subtasks, else the most replicated; Figure 2 rows: the replicated
    subtasks (>= 3 families) with most cases, else any subtasks with most cases."""
    if chosen:
        known = set(subtask_accuracy[GROUP_KEY].drop_duplicates().itertuples(index=False, name=None))
        unknown = [key for key in chosen if tuple(key) not in known]
        if unknown:
            raise UnknownSubtask("; ".join(_unknown_subtask_message(tuple(key), known) for key in unknown))
        figure1 = pd.DataFrame(chosen, columns=GROUP_KEY, dtype=object)
    else:
        figure1 = replication.head(FIGURE1_PANELS)[GROUP_KEY]
    replicated = replication[replication["n_families"] >= REPLICATION_FAMILIES]
    pool = replicated if len(replicated) else replication
    figure2 = pool.sort_values(["cases", "n_families", "max_net"], ascending=False, kind="stable")
    return figure1.reset_index(drop=True), figure2.head(FIGURE2_SUBTASKS).reset_index(drop=True)


def _unknown_subtask_message(key: tuple[str, str, str], known: set[tuple[str, str, str]]) -> str:
    """Why BENCHMARK/SPLIT/SUBTASK names no subtask, and the valid names: that split's subtasks when the split
    exists (a paper-scale log has hundreds of subtasks in all), else the benchmark splits."""
    from difflib import get_close_matches

    name = "/".join(key)
    in_split = sorted(subtask for benchmark, split, subtask in known if (benchmark, split) == key[:2])
    if in_split:
        close = get_close_matches(key[2], in_split, n=1)
        hint = f" (did you mean {'/'.join((*key[:2], close[0]))}?)" if close else ""
        return f"--figure-subtask {name}: not a subtask of {key[0]} {key[1]}{hint}; its subtasks: {', '.join(in_split)}"
    splits = sorted({f"{benchmark}/{split}" for benchmark, split, _ in known})
    return f"--figure-subtask {name}: no benchmark split {key[0]}/{key[1]} in the logs; they hold: {', '.join(splits)}"


def family_colors(families: list[str]) -> dict[str, str]:
    return {family: FAMILY_COLORS[i % len(FAMILY_COLORS)] for i, family in enumerate(families)}


def _panel_title(row: pd.Series, multi_split: set[str]) -> str:
    return f"{dataset_label(row['benchmark'], row['split'], multi_split)}: {row['subtask']}"


def _drawn(path: Path, cache: Path | None, inputs: list, draw: Callable[[Path], None]) -> Path:
    """`draw(path)`, or the cached figure of the same `inputs` (frames and values) copied to `path`."""
    if cache is None:
        draw(path)
        return path
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(importlib.metadata.version("matplotlib").encode())
    for value in inputs:
        digest.update((value.to_csv(index=False) if isinstance(value, pd.DataFrame) else repr(value)).encode())
    cached = cache / f"{path.stem}-{digest.hexdigest()[:24]}.png"
    if not cached.is_file():
        draw(path)
        try:
            cache.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, cached)
        except OSError:  # an unwritable cache costs a redraw next time, nothing more
            pass
        return path
    shutil.copyfile(cached, path)
    return path


def scaling_curves(
    subtask_accuracy: pd.DataFrame,
    models: pd.DataFrame,
    subtasks: pd.DataFrame,
    path: Path,
    multi_split: set[str],
    cache: Path | None = None,
) -> Path:
    """Figure 1: accuracy vs. total parameters (log x), one panel per subtask, one line per family;
    dense models filled circles, MoE models open diamonds. `cache`: the figure cache (module docstring)."""
    curves = subtask_accuracy.merge(models[["model", "family", "total_params", "moe"]], on="model")
    curves = curves.merge(subtasks[GROUP_KEY], on=GROUP_KEY)
    families = list(dict.fromkeys(models["family"]))
    inputs = [curves, subtasks[GROUP_KEY], families, sorted(multi_split)]
    return _drawn(path, cache, inputs, lambda target: _draw_scaling_curves(curves, families, subtasks, target,
                                                                           multi_split))


def _draw_scaling_curves(curves: pd.DataFrame, families: list[str], subtasks: pd.DataFrame, path: Path,
                         multi_split: set[str]) -> None:
    from matplotlib.figure import Figure
    from matplotlib.ticker import EngFormatter, LogLocator, NullFormatter

    colors = family_colors(families)
    n_panels = max(len(subtasks), 1)
    n_cols = min(4, n_panels)
    n_rows = math.ceil(n_panels / n_cols)
    width, height = 3.6 * n_cols, 3.1 * n_rows + 0.9
    figure = Figure(figsize=(width, height))
    # fixed margins in inches (matplotlib's constrained layout costs more than drawing the figure):
    # y label, title, legend plus x label
    figure.subplots_adjust(left=0.65 / width, right=1 - 0.15 / width, top=1 - 0.55 / height, bottom=1.0 / height,
                           wspace=0.42, hspace=0.62)
    axes = figure.subplots(n_rows, n_cols, squeeze=False).ravel()
    for ax, (_, subtask) in zip(axes, subtasks.iterrows()):
        panel = curves.merge(subtask[GROUP_KEY].to_frame().T, on=GROUP_KEY)
        for family, curve in panel.groupby("family", sort=False):
            curve = curve.sort_values("total_params")
            color = colors[family]
            ax.plot(curve["total_params"], curve["accuracy"], color=color, linewidth=1.4, label=family)
            dense, moe = curve[~curve["moe"].astype(bool)], curve[curve["moe"].astype(bool)]
            ax.scatter(dense["total_params"], dense["accuracy"], color=color, marker="o", s=28, zorder=3)
            ax.scatter(
                moe["total_params"],
                moe["accuracy"],
                facecolors="white",
                edgecolors=color,
                marker="D",
                s=34,
                linewidths=1.4,
                zorder=3,
            )
        ax.set_xscale("log")
        # sizes as 4G / 235G (or 440k for tiny models), at most a few ticks so labels never collide
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=4))
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(_panel_title(subtask, multi_split), fontsize=9)
        ax.set_xlabel("Total parameters")
        ax.set_ylabel("Accuracy (%)")
        ax.grid(alpha=0.3)
    for ax in axes[len(subtasks) :]:
        ax.set_visible(False)
    handles = [
        *[axes[0].plot([], [], color=colors[f], linewidth=1.4)[0] for f in families],
        axes[0].scatter([], [], color="black", marker="o", s=28),
        axes[0].scatter([], [], facecolors="white", edgecolors="black", marker="D", s=34),
    ]
    figure.legend(handles, [*families, "dense", "MoE"], loc="lower center", ncols=len(families) + 2, fontsize=8,
                  bbox_to_anchor=(0.5, 0.01))
    figure.suptitle("Scaling curves of cross-family inverse-scaling subtasks", fontsize=11, y=1 - 0.12 / height)
    figure.savefig(path, dpi=DPI)


def cross_family_bars(
    cases: pd.DataFrame, subtasks: pd.DataFrame, families: list[str], path: Path, multi_split: set[str],
    cache: Path | None = None,
) -> Path:
    """Figure 2: per subtask (rows), one bar per family = number of cases, annotated with the count
    and the strongest Net; right column: total cases and number of families. `cache`: the figure cache."""
    shown = cases[[*GROUP_KEY, "family", "net"]].merge(subtasks[GROUP_KEY], on=GROUP_KEY)
    inputs = [shown, subtasks[[*GROUP_KEY, "cases", "n_families"]], families, sorted(multi_split)]
    return _drawn(path, cache, inputs, lambda target: _draw_cross_family_bars(shown, subtasks, families, target,
                                                                              multi_split))


def _draw_cross_family_bars(cases: pd.DataFrame, subtasks: pd.DataFrame, families: list[str], path: Path,
                            multi_split: set[str]) -> None:
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    colors = family_colors(families)
    n_rows = max(len(subtasks), 1)
    labels = [_panel_title(s, multi_split) for _, s in subtasks.iterrows()]
    label_inches = 0.35 + 0.075 * max(map(len, labels), default=0)  # fontsize-8 tick labels; fixed margins as above
    width, height = 9.5 + label_inches, 0.62 * n_rows + 1.6
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(left=label_inches / width, right=1 - 1.35 / width, top=1 - 0.45 / height,
                           bottom=1.0 / height)
    ax = figure.subplots()
    bar_height = 0.8 / len(families)
    per_family = cases.groupby([*GROUP_KEY, "family"]).agg(count=("net", "size"), max_net=("net", "max"))
    widest = per_family["count"].max() if len(per_family) else 1
    for row, (_, subtask) in enumerate(subtasks.iterrows()):
        key = tuple(subtask[GROUP_KEY])
        for k, family in enumerate(families):
            if (*key, family) not in per_family.index:
                continue
            count, max_net = per_family.loc[(*key, family)]
            y = row + (k - (len(families) - 1) / 2) * bar_height
            ax.barh(y, count, height=bar_height * 0.9, color=colors[family])
            ax.text(count + widest * 0.01, y, f"{count} (Net {max_net})", va="center", fontsize=7)
        ax.text(
            1.01,
            row,
            f"{subtask['cases']} cases, {subtask['n_families']} fam.",
            transform=ax.get_yaxis_transform(),
            va="center",
            fontsize=8,
        )
    ax.set_yticks(range(len(subtasks)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, widest * 1.35)
    ax.set_xlabel("Pairwise inverse-scaling cases")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", alpha=0.3)
    figure.legend([Patch(color=colors[f]) for f in families], families, loc="lower center", ncols=len(families),
                  fontsize=8, bbox_to_anchor=(0.5, 0.01))
    figure.suptitle("Cross-family inverse scaling", fontsize=11, y=1 - 0.1 / height)
    figure.savefig(path, dpi=DPI)
