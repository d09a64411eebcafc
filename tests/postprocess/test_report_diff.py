"""`diff REPORT_A REPORT_B`: cases added, removed and changed between two reports, with the causes their files show."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis_factory import constructed_table, models_frame
from postprocess.cli import main
from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.outputs import write_outputs


def runs_of(table: pd.DataFrame, replaced: str | None = None) -> pd.DataFrame:
    """The runs-found frame: one run per model; `replaced` got a new results file and timestamp."""
    models = sorted(table["model"].unique())
    return pd.DataFrame({"model": models,
                         "results_file": [f"{m}/{'2' if m == replaced else '1'}_results.json" for m in models],
                         "timestamp": ["20250102" if m == replaced else "20250101" for m in models],
                         "n_rows": [int((table["model"] == m).sum()) for m in models]})


def write_report(folder: Path, table: pd.DataFrame, runs: pd.DataFrame, **parameters) -> Path:
    analysis = run_analysis(table, models_frame(), Parameters(**parameters))
    write_outputs(analysis, folder, quality={"Runs found": runs})
    return folder


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[pd.DataFrame, Path]:
    table = constructed_table()
    return table, write_report(tmp_path_factory.mktemp("a"), table, runs_of(table))


def diff_of(a: Path, b: Path, capsys) -> tuple[int, pd.DataFrame, str]:
    status = main(["diff", str(a), str(b)])
    return status, pd.read_csv(b / "diff" / "cases_diff.csv"), capsys.readouterr().out


def test_the_same_report_twice_is_no_change_and_exits_0(base, tmp_path, capsys):
    table, a = base
    b = write_report(tmp_path / "b", table, runs_of(table))
    status, diff, out = diff_of(a, b, capsys)
    assert status == 0 and diff.empty and out.startswith("0 added, 0 removed, 0 changed")
    assert "Nothing changed." in (b / "diff" / "index.html").read_text()


def test_a_replaced_run_names_the_model_and_exits_1(base, tmp_path, capsys):
    table, a = base
    cases = pd.read_csv(a / "cases.csv")
    first = cases.iloc[0]
    # The larger model's new run answers right every question of the first case's subtask: the case goes.
    rerun = table.copy()
    on_subtask = (rerun["model"] == first["large"]) & (rerun["subtask"] == first["subtask"])
    rerun.loc[on_subtask, "correct"] = True
    b = write_report(tmp_path / "b", rerun, runs_of(rerun, replaced=first["large"]))
    status, diff, _ = diff_of(a, b, capsys)
    assert status == 1
    removed = diff[(diff["change"] == "removed") & (diff["subtask"] == first["subtask"])
                   & (diff["large"] == first["large"])]
    assert len(removed) >= 1
    assert all(f"a model's run replaced ({first['large']})" in c for c in removed["causes"])
    assert (diff["causes"].str.contains("run replaced")).all()  # nothing else changed, so nothing else is blamed


def test_changed_parameters_are_a_cause(base, tmp_path, capsys):
    table, a = base
    b = write_report(tmp_path / "b", table, runs_of(table), min_net=8)
    status, diff, _ = diff_of(a, b, capsys)
    # A higher --min-net removes the cases below it and moves verdicts that read it (the extraction check).
    assert status == 1 and "removed" in set(diff["change"]) and "added" not in set(diff["change"])
    assert diff["causes"].str.startswith("parameters changed").all()


def test_dropped_questions_are_a_cause(base, tmp_path, capsys):
    table, a = base
    first = pd.read_csv(a / "cases.csv").iloc[0]
    kept = table[~((table["subtask"] == first["subtask"]) & table["question_id"].isin(
        table.loc[table["subtask"] == first["subtask"], "question_id"].unique()[:3]))]
    b = write_report(tmp_path / "b", kept, runs_of(kept))
    status, diff, _ = diff_of(a, b, capsys)
    row = diff[(diff["subtask"] == first["subtask"]) & (diff["small"] == first["small"])
               & (diff["large"] == first["large"])].iloc[0]
    assert status == 1 and "questions added or dropped" in row["causes"]


def test_a_folder_that_is_no_report_is_an_error_naming_the_file(base, tmp_path, capsys):
    _, a = base
    assert main(["diff", str(a), str(tmp_path)]) == 2
    assert f"{tmp_path / 'summary.json'}" in capsys.readouterr().err
