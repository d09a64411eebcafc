"""What changed between two reports (ours): cases added, removed and changed, each with the causes the two
reports' own files show.

A report folder holds what is needed: cases.csv (the cases and their verdicts), comparisons.parquet (every eligible
comparison's n and Net), flips.parquet (each flipped question's two answers: prediction, how it was read, the
judge's verdict), summary.json (the parameters) and tables/quality_runs_found.csv (the runs read, with their
results files and timestamps). Causes, in this order, every one that applies:
  parameters changed            summary.json's parameters differ (every case is then measured differently);
  a model's run replaced        the smaller or the larger model's runs (results file, timestamp) differ;
  questions added or dropped    the comparison's n (questions both answered) differs, or it is eligible in one
                                report only although both models ran in both;
  judge verdicts added          a flipped question of the case has a judge verdict in one report only;
  answers read differently      a flipped question present in both has another prediction, match, rule or tier;
  other families' cases ...     the replication check's count of families with a case on the subtask differs.
A change none of them explains says "not shown by the inputs".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.cases import CASE_KEY

RUNS_FILE = Path("tables") / "quality_runs_found.csv"
RUN_FIELDS = ["results_file", "timestamp"]  # a run is replaced when its file or time differs
CASE_FIELDS = ["n", "net", "p_value", "verdict"]  # what "changed" compares
REPLICATION = "replication_families"  # the replication check counts other families' cases
READ_FIELDS = ["prediction", "match", "rule", "extraction_tier"]
DIFF_COLUMNS = ["change", *CASE_KEY, *(f"{f}_{s}" for f in CASE_FIELDS for s in ("a", "b")), "causes"]
NOT_SHOWN = "not shown by the inputs"


@dataclass(frozen=True)
class ReportFiles:
    """The files of one report folder that the diff reads."""

    folder: Path
    cases: pd.DataFrame
    comparisons: pd.DataFrame
    flips: pd.DataFrame
    runs: pd.DataFrame
    parameters: dict


def _read(path: Path, reader, required: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise ValueError(f"{path}: not found: is {path.parent if path.parent.name != 'tables' else path.parent.parent} "
                         "a report folder (written by `invscale report`)?")
    try:
        frame = reader(path)
    except (ValueError, OSError) as error:
        raise ValueError(f"{path}: not readable: {str(error).strip()}") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: lacks the columns {missing}")
    return frame


def read_report(folder: Path) -> ReportFiles:
    """A report folder's files; a missing or unreadable one is a ValueError naming it."""
    folder = Path(folder)
    summary_path = folder / "summary.json"
    try:
        parameters = json.loads(summary_path.read_text(encoding="utf-8"))["parameters"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{summary_path}: no report summary with parameters ({error})") from None
    side = [f"{s}_{f}" for s in ("small", "large") for f in READ_FIELDS]
    return ReportFiles(
        folder=folder,
        cases=_read(folder / "cases.csv", pd.read_csv, [*CASE_KEY, *CASE_FIELDS]),
        comparisons=_read(folder / "comparisons.parquet", pd.read_parquet, [*CASE_KEY, "n", "net"]),
        flips=_read(folder / "flips.parquet", pd.read_parquet, [*CASE_KEY, "question_id", *side]),
        runs=_read(folder / RUNS_FILE, pd.read_csv, ["model", *RUN_FIELDS]),
        parameters=parameters,
    )


def _text(frame: pd.DataFrame) -> pd.DataFrame:
    """Key columns as text, so a CSV's and a Parquet file's values compare equal."""
    return frame.astype({c: str for c in CASE_KEY})


def _run_signature(runs: pd.DataFrame) -> dict[str, frozenset]:
    fields = runs[["model", *RUN_FIELDS]].astype(str)
    return {model: frozenset(map(tuple, rows[RUN_FIELDS].to_numpy())) for model, rows in fields.groupby("model")}


def _flip_causes(a: pd.DataFrame, b: pd.DataFrame) -> dict[tuple, list[str]]:
    """Per case key: "judge verdicts added" and / or "answers read differently" from the flipped questions."""
    key = [*CASE_KEY, "question_id"]
    read = [f"{s}_{f}" for s in ("small", "large") for f in READ_FIELDS]
    judged = [f"{s}_judge_verdict" for s in ("small", "large") if f"{s}_judge_verdict" in a and f"{s}_judge_verdict" in b]
    joined = _text(a)[key + read + judged].merge(_text(b)[key + read + judged], on=key, how="outer",
                                                 suffixes=("_a", "_b"), indicator=True)
    causes: dict[tuple, list[str]] = {}

    def text(columns: list[str]) -> np.ndarray:  # missing as "", so that two missing values are equal
        frame = joined[columns].astype(object)
        return frame.where(frame.notna(), "").astype(str).to_numpy()

    def differs(columns: list[str]) -> np.ndarray:
        return (text([f"{c}_a" for c in columns]) != text([f"{c}_b" for c in columns])).any(axis=1)

    both = (joined["_merge"] == "both").to_numpy()
    if judged:
        verdict_a = joined[[f"{c}_a" for c in judged]].notna().any(axis=1).to_numpy()
        verdict_b = joined[[f"{c}_b" for c in judged]].notna().any(axis=1).to_numpy()
        for row in joined.loc[verdict_a != verdict_b, CASE_KEY].drop_duplicates().itertuples(index=False):
            causes.setdefault(tuple(row), []).append("judge verdicts added")
    for row in joined.loc[both & differs(read), CASE_KEY].drop_duplicates().itertuples(index=False):
        causes.setdefault(tuple(row), []).append("answers read differently")
    return causes


def diff_reports(a: ReportFiles, b: ReportFiles) -> pd.DataFrame:
    """DIFF_COLUMNS: one row per case added (in B only), removed (in A only) or changed (n, Net, p or verdict
    differ), in B's case order then A's; empty when the cases are the same."""
    cases_a, cases_b = _text(a.cases), _text(b.cases)
    fields = [*CASE_FIELDS, *(["replication_families"] if all(REPLICATION in c for c in (cases_a, cases_b)) else [])]
    joined = cases_b[[*CASE_KEY, *fields]].merge(cases_a[[*CASE_KEY, *fields]], on=CASE_KEY, how="outer",
                                                 suffixes=("_b", "_a"), indicator=True, sort=False)
    p_equal = np.isclose(joined["p_value_a"], joined["p_value_b"], rtol=1e-9, atol=0)
    same = ((joined[["n_a", "net_a"]].to_numpy() == joined[["n_b", "net_b"]].to_numpy()).all(axis=1) & p_equal
            & (joined["verdict_a"].astype(str) == joined["verdict_b"].astype(str)).to_numpy())
    replicated = ("replication_families_a" in joined and
                  ((joined["_merge"] == "both") & (joined["replication_families_a"]
                                                   != joined["replication_families_b"])).to_numpy())
    joined["change"] = joined["_merge"].map({"left_only": "added", "right_only": "removed", "both": "changed"})
    kept = ~((joined["_merge"] == "both").to_numpy() & same)
    joined = joined[kept].reset_index(drop=True)
    replicated = replicated[kept] if isinstance(replicated, np.ndarray) else np.zeros(len(joined), dtype=bool)
    # n of a case that is in one report only: its comparison in the other, where it was eligible there.
    comparisons_a, comparisons_b = (_text(c.comparisons).set_index(CASE_KEY)["n"] for c in (a, b))
    keys = list(map(tuple, joined[CASE_KEY].to_numpy()))
    n_a = comparisons_a.reindex(keys).to_numpy(dtype=float)
    n_b = comparisons_b.reindex(keys).to_numpy(dtype=float)
    runs_a, runs_b = _run_signature(a.runs), _run_signature(b.runs)
    flip_causes = _flip_causes(a.flips, b.flips)
    parameters_changed = a.parameters != b.parameters
    causes = []
    for key, row_n_a, row_n_b, other_families in zip(keys, n_a, n_b, replicated):
        found = ["parameters changed"] if parameters_changed else []
        family, benchmark, split, subtask, small, large = key
        replaced = [m for m in (small, large) if runs_a.get(m) != runs_b.get(m)]
        found += [f"a model's run replaced ({m})" for m in replaced]
        if not (np.isnan(row_n_a) or np.isnan(row_n_b)) and row_n_a != row_n_b:
            found.append(f"questions added or dropped (n {int(row_n_a)} -> {int(row_n_b)})")
        elif np.isnan(row_n_a) != np.isnan(row_n_b) and all(m in runs_a and m in runs_b for m in (small, large)):
            # comparisons.parquet holds eligible comparisons only: both models ran, so n crossed --min-n.
            found.append(f"questions added or dropped (not eligible in {'A' if np.isnan(row_n_a) else 'B'})")
        found += flip_causes.get(key, [])
        if other_families:
            found.append("other families' cases on this subtask changed (the replication check)")
        causes.append("; ".join(found) or NOT_SHOWN)
    joined["causes"] = causes
    order = {"added": 0, "changed": 0, "removed": 1}
    joined = joined.sort_values("change", key=lambda c: c.map(order), kind="stable")
    return joined[DIFF_COLUMNS].reset_index(drop=True)
