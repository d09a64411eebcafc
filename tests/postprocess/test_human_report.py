"""The human annotations in `report`: the CAIT human baseline as the first row of CAIT Table 3 (as the paper
prints it, above the models), Table 12 and the failure modes in the human-annotation section, from
annotations + items files or from a `human-stats` folder."""

import pandas as pd
import pytest
from cait_logs import GEMMA_4B, QWEN_8B, right, write_cait_logs, wrong
from human_examples import cait_items_and_annotations

from invscale_demo.fixtures import write_cait_fixture
from lmms_eval_tasks.cait import read_folder
from postprocess.cli import main
from invscale.label_studio import write_annotations
from postprocess.human.stats_files import (
    read_statistics,
    set_statistics,
    write_statistics,
)


@pytest.fixture
def human_files(tmp_path):
    items, annotations = cait_items_and_annotations(read_folder(write_cait_fixture(tmp_path / "cait")))
    items.to_csv(tmp_path / "items.csv", index=False)
    write_annotations(annotations, tmp_path / "annotations.csv")
    return tmp_path / "annotations.csv", tmp_path / "items.csv", items, annotations


def test_the_human_baseline_is_the_first_row_of_cait_table_3(tmp_path, human_files, capsys):
    write_cait_logs(tmp_path / "logs", {QWEN_8B: {"direct": right}, GEMMA_4B: {"direct": wrong}})
    annotations, items, *_ = human_files
    assert main(["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "report"),
                 "--human-annotations", "cait-baseline", str(annotations), str(items)]) == 0
    table3 = pd.read_csv(tmp_path / "report" / "tables" / "cait_table03_main.csv", dtype=str)
    first = table3.iloc[0]
    # the three annotators of test_human_stats: accuracy 1, 5/8, 7/8 (mean 0.833), 4.5 s per item on average
    assert (first["Group"], first["Model"], first["Acc"], first["Time (s)"]) == \
           ("Upper bound", "Human annotators", "0.833", "4.500")
    assert table3["Model"].tolist()[1:] == ["Qwen3-VL-Instruct", "Gemma-3-it"]
    table12 = pd.read_csv(tmp_path / "report" / "tables" / "cait_table12_annotators.csv", dtype=str)
    assert table12["Annotator"].tolist() == ["A1", "A2", "A3", "Mean", "Std", "Inter-annotator agreement (Fleiss' κ)"]
    assert table12.iloc[0][["Acc", "Avg Time (s)"]].tolist() == ["1.000", "3.5"]
    text = (tmp_path / "report" / "report.md").read_text()
    assert text.index("## Human annotation") < text.index("## CAIT (Seeing vs. Believing)")
    assert "Human annotators: mean over 3 annotators of Label Studio's lead_time" in text


def test_table_12_has_the_papers_age_and_description_columns(tmp_path, human_files, capsys):
    """CAIT Table 12: Annotator, Age, Description, Acc, F1, Avg Time (s); Label Studio records no age or
    description, so they come from --annotator-profiles and are "–" without it."""
    write_cait_logs(tmp_path / "logs", {QWEN_8B: {"direct": right}})
    annotations, items, *_ = human_files
    base = ["report", "--logs", str(tmp_path / "logs"), "--human-annotations", "cait-baseline", str(annotations),
            str(items)]
    assert main([*base, "--out", str(tmp_path / "plain")]) == 0
    plain = pd.read_csv(tmp_path / "plain" / "tables" / "cait_table12_annotators.csv", dtype=str)
    assert list(plain.columns[:3]) == ["Annotator", "Age", "Description"] and plain["Age"].iloc[0] == "–"
    profiles = tmp_path / "profiles.csv"
    profiles.write_text("annotator,age,description\n1,15,Undergraduate student\n2,21,Master student\n3,,\n")
    assert main([*base, "--out", str(tmp_path / "profiled"), "--annotator-profiles", str(profiles)]) == 0
    table12 = pd.read_csv(tmp_path / "profiled" / "tables" / "cait_table12_annotators.csv", dtype=str)
    assert table12[["Age", "Description"]].values.tolist()[:3] == [
        ["15", "Undergraduate student"], ["21", "Master student"], ["–", "–"]]
    profiles.write_text("annotator,age,description\n1,fifteen,x\n")
    assert main([*base, "--out", str(tmp_path / "bad"), "--annotator-profiles", str(profiles)]) == 2
    assert f"{profiles}: line 2: age 'fifteen' is not a whole number" in capsys.readouterr().err


def test_statistics_read_back_from_a_human_stats_folder_equal_the_computed_ones(tmp_path, human_files):
    _, _, items, annotations = human_files
    computed = set_statistics("cait-baseline", annotations, items)
    write_statistics("cait-baseline", computed, tmp_path / "stats")
    read = read_statistics(tmp_path / "stats")
    assert list(read) == ["cait-baseline"] and set(read["cait-baseline"]) == set(computed)
    pd.testing.assert_frame_equal(read["cait-baseline"]["annotators"], computed["annotators"], check_dtype=False)


def test_human_inputs_that_cannot_be_read_are_named(tmp_path, human_files, capsys):
    write_cait_logs(tmp_path / "logs", {QWEN_8B: {"direct": right}})
    annotations, items, *_ = human_files
    base = ["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "report")]
    (tmp_path / "empty").mkdir()
    assert main([*base, "--human", str(tmp_path / "empty")]) == 2
    assert "not a `human-stats` output folder" in capsys.readouterr().err
    assert main([*base, "--human-annotations", "cait", str(annotations), str(items)]) == 2
    assert "unknown task set 'cait'" in capsys.readouterr().err
    write_statistics("cait-baseline", set_statistics("cait-baseline", *map(pd.read_csv, (annotations, items))),
                     tmp_path / "stats")
    assert main([*base, "--human", str(tmp_path / "stats"), "--human-annotations", "cait-baseline", str(annotations),
                 str(items)]) == 2
    assert "'cait-baseline' is given twice" in capsys.readouterr().err
    assert main([*base, "--taxonomy", str(tmp_path / "empty")]) == 2
    assert "no taxonomy_verdicts.csv" in capsys.readouterr().err


def test_failure_modes_are_laid_out_per_group_with_the_unlabelled_errors():
    from human_examples import annotation_rows

    from postprocess.human import agreement
    from postprocess.human.task_sets import FAILURE_MODES
    from postprocess.render.human_tables import human_tables

    items = pd.DataFrame({"item_key": [f"f{i}" for i in range(6)],
                          "group": ["Instruct", "Instruct", "Instruct", "Thinking", "Thinking", None]})
    S, L, SB, A = FAILURE_MODES
    annotations = annotation_rows({"f0": {1: (S, 1), 2: (S, 1)}, "f1": {1: (S, 1), 2: (SB, 1)}, "f2": {1: (SB, 1)},
                                   "f3": {1: (L, 1), 2: (L, 1)}, "f4": {1: (A, 1), 2: (None, 1)}})
    [table] = human_tables({"cait-failures": agreement.failure_mode_tables(annotations, items)})
    frame = table.frame.set_index("Group")
    assert list(frame.index) == ["Instruct", "Thinking", "Ungrouped", "All"]
    assert frame.loc["Instruct", [S, SB, "No majority", "Unrated"]].tolist() == ["1 (50.0%)", "1 (50.0%)", 1, 0]
    assert frame.loc["All", ["Errors labelled", L]].tolist() == [4, "1 (25.0%)"]
    assert frame.loc["Ungrouped", "Unrated"] == 1
