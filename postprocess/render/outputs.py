"""Every output file of `report`: cases.csv, comparisons.parquet, summary.json, tables/ (CSV, Markdown,
LaTeX), figures/ and report.md / report.html; and `written_whole`, which makes a folder of outputs
appear whole or not at all.

`written_whole(OUT)` hands out a staging folder beside OUT (`.OUT.partial-*`); when the block ends
without an error, a list of the files in it (MANIFEST) is added and it is renamed to OUT. OUT must be
new, empty or a previous report's (check_output_folder). A previous OUT is renamed aside first
(`.OUT.previous-*`; if the process dies right then, the previous report is there) and removed once
the new one is in place; files in it that the previous report did not write (not in its MANIFEST;
before manifests: anything but the known output names) are the user's: they are moved into the new
OUT, except where the new outputs hold a file of the same name (then the user's file is replaced).
Both lists are on the WrittenFolder for the command to say. On an error nothing changes in OUT and the
staging folder is removed; every OSError becomes an OutputError naming OUT.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.analysis import CASE_COLUMNS, Analysis
from postprocess.inverse_scaling.credibility import CREDIBILITY_COLUMNS, FLIP_COLUMNS
from postprocess.inverse_scaling.trend import CASE_TREND_COLUMNS
from postprocess.render.explorer import ExplorerInput, write_explorer
from postprocess.render.labels import multi_split_benchmarks
from postprocess.render.paper_tables import inverse_scaling_tables
from postprocess.render import trend_tables
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
    figure_cache: Path | None = None,
    explorer: ExplorerInput | None = None,
) -> dict[str, Path]:
    """Write every output file under `out_dir`; return the main paths by name. `explorer` writes the flip
    explorer (render/explorer.py) beside report.html, linked from it. `extra_sections`
    ((heading, tables), e.g. CAIT's) are written with the other tables and added to the report;
    `figure_subtasks` chooses Figure 1's panels (default: the most replicated subtasks); `figure_cache`
    keeps drawn figures for a rerun on the same data (render/figures.py). Without any pair
    of one family to compare (report.has_pairs), only the accuracy tables are written, and no figures."""
    from postprocess.render import figures, report

    pairs = report.has_pairs(analysis)
    # The family-wide trend (ours, render/trend_tables.py): its table as a section of its own, its figure below.
    if pairs and analysis.trends is not None:
        extra_sections = [*extra_sections, (trend_tables.SECTION, [trend_tables.trend_table(
            analysis.trends, analysis.parameters.fdr)])]
    if pairs:
        figure1, figure2 = figures.figure_subtasks(analysis.replication, analysis.subtask_accuracy, figure_subtasks)
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = {"cases": out / "cases.csv", "comparisons": out / "comparisons.parquet", "summary": out / "summary.json",
             "flips": out / "flips.parquet"}
    analysis.cases[[*CASE_COLUMNS, *CREDIBILITY_COLUMNS, *CASE_TREND_COLUMNS]].to_csv(paths["cases"], index=False)
    flips_frame(analysis).to_parquet(paths["flips"], index=False)
    eligible = analysis.comparisons[analysis.comparisons["eligible"]]
    eligible[CASE_COLUMNS].reset_index(drop=True).to_parquet(paths["comparisons"], index=False)
    paths["summary"].write_text(json.dumps(analysis.summary, indent=2, default=_json_default) + "\n", encoding="utf-8")
    tables = inverse_scaling_tables(analysis)
    if not pairs:  # nothing was compared: the pairwise tables would be empty
        tables = {name: t for name, t in tables.items() if name.startswith(report.ACCURACY_TABLES)}
    extra_tables = [t for _, section in extra_sections for t in section]
    for table in [*tables.values(), *extra_tables, *report.quality_tables(quality or {})]:
        write_table(table, out / "tables")
    paths["tables"] = out / "tables"
    if pairs:
        multi_split = multi_split_benchmarks(analysis.comparisons)
        paths["figure1"] = figures.scaling_curves(analysis.subtask_accuracy, analysis.models, figure1,
                                                  out / "figures" / "figure1_scaling_curves.png", multi_split,
                                                  figure_cache)
        paths["figure2"] = figures.cross_family_bars(analysis.cases, figure2, analysis.families,
                                                     out / "figures" / "figure2_cross_family.png", multi_split,
                                                     figure_cache)
        trend_figure = trend_tables.trend_figure(analysis.trends, analysis.trend_points,
                                                 out / "figures" / "figure_trend.png", figure_cache)
        if trend_figure is not None:
            paths["figure_trend"] = trend_figure
    figure_paths = [paths[name] for name in ("figure1", "figure2", "figure_trend") if name in paths]
    links = None
    if explorer is not None and pairs:
        links = write_explorer(analysis, explorer, out)
        paths["explorer"] = out / "explorer" / "index.html"
    paths.update(report.write_report(analysis, tables, out, figure_paths, quality, list(extra_sections), links))
    return paths


def flips_frame(analysis: Analysis) -> pd.DataFrame:
    """flips.parquet: one row per flipped question of a case (credibility.FLIP_COLUMNS), text as Arrow strings."""
    flips = analysis.flips if analysis.flips is not None else pd.DataFrame(columns=FLIP_COLUMNS)
    correct = [c for c in FLIP_COLUMNS if c.endswith("_correct")]
    return flips[FLIP_COLUMNS].astype({c: "boolean" if c in correct else "string" for c in FLIP_COLUMNS})


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


MANIFEST = ".report_files.json"
# What `report` wrote before it kept a manifest: a previous OUT holding summary.json or report.md is ours there.
OUTPUT_NAMES = ("cases.csv", "comparisons.parquet", "summary.json", "report.md", "report.html", "problems.csv",
                "tables", "figures")


class OutputError(OSError):
    """OUT cannot be written; the message names it and says what became of it."""


@dataclass
class WrittenFolder:
    path: Path  # OUT
    staging: Path  # where to write until the block ends
    kept: list[str] = field(default_factory=list)  # the user's files moved from the previous OUT
    replaced: list[str] = field(default_factory=list)  # the user's files an output of the same name replaced


def check_output_folder(out: Path) -> None:
    """Fail early (OutputError) when `out` is a file, lies under one, or is a folder of other files than a
    report's (`--out .` in a project must not move the project aside)."""
    out = Path(out)
    for path in (out, *out.parents):
        if path.exists():
            if not path.is_dir():
                what = "is" if path == out else f"lies under {path}, which is"
                raise OutputError(f"output folder {out} {what} a file, not a folder")
            break
    if out.is_dir() and not _previous_outputs(out):
        held = sorted(os.listdir(out))
        if held:
            raise OutputError(f"output folder {out} holds files that report did not write ({', '.join(held[:3])}"
                              f"{', ...' if len(held) > 3 else ''}); give a new or empty folder, or a previous "
                              "report's")


def _files(folder: Path) -> set[str]:
    """Relative paths of the files (and of links, which are moved as they are) under `folder`. One scandir per
    folder and names joined as text (the explorer's 19,000 files at paper scale: os.walk with os.path.relpath
    per file took 0.2-0.5 s); a folder that cannot be read is skipped, as os.walk does."""
    found: set[str] = set()

    def walk(path: str, prefix: str) -> None:
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                walk(entry.path, prefix + entry.name + os.sep)
            else:
                found.add(prefix + entry.name)

    walk(os.fspath(folder), "")
    return found


def _previous_outputs(out: Path) -> set[str]:
    """The files of `out` that a previous report wrote."""
    try:
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        if isinstance(listed, list):
            return {str(name) for name in listed} | {MANIFEST}
    except (OSError, ValueError):
        pass
    if not ((out / "summary.json").exists() or (out / "report.md").exists()):
        return set()
    return {name for name in _files(out) if name.split(os.sep, 1)[0] in OUTPUT_NAMES}


def _swap(folder: WrittenFolder) -> None:
    out, staging = folder.path, folder.staging
    new_files = _files(staging)
    (staging / MANIFEST).write_text(json.dumps(sorted(new_files), indent=0), encoding="utf-8")
    if not out.exists():
        os.rename(staging, out)
        return
    ours = _previous_outputs(out)
    previous = out.parent / f".{out.name}.previous-{os.getpid()}-{time.time_ns()}"
    os.rename(out, previous)
    try:
        os.rename(staging, out)
    except OSError:
        os.rename(previous, out)
        raise
    try:
        for name in sorted(_files(previous) - ours):
            if name in new_files or name == MANIFEST:
                folder.replaced.append(name)
                continue
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.rename(previous / name, out / name)
            folder.kept.append(name)
        shutil.rmtree(previous)
    except OSError as error:
        raise OutputError(f"the new outputs are in {out}, but moving your other files from the previous one "
                          f"failed ({error}); they are in {previous}") from error


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def written_whole(out: Path | str) -> Iterator[WrittenFolder]:
    """A staging folder that becomes `out` when the block ends without an error (module docstring)."""
    out = Path(out)
    out = out.resolve() if out.is_symlink() else out
    check_output_folder(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp's folder is private; OUT gets the usual permissions
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error}") from error
    folder = WrittenFolder(out, staging)
    try:
        yield folder
        _swap(folder)
    except OutputError:
        raise
    except OSError as error:
        raise OutputError(f"cannot write {out}: {error}; {out} was left as it was") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
