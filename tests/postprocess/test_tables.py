"""Case analyses, paper tables and controls on the constructed data; tables compared to golden files.

Regenerate the golden files after an intended change with:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/postprocess/test_tables.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from analysis_factory import (
    EXPECTED_CASES,
    EXPECTED_ELIGIBLE,
    EXPECTED_RESTRICTED,
    EXPECTED_SMALLEST_VS_LARGEST,
    constructed_table,
    models_frame,
)
from postprocess.inverse_scaling.analysis import CASE_COLUMNS, UnusableInput
from postprocess.inverse_scaling.analysis import run_analysis as run_analysis_with
from postprocess.inverse_scaling.cases import net_bins, restriction_summary
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.paper_tables import inverse_scaling_tables, net_bin_label
from postprocess.render.tables import Table, to_latex, to_markdown

GOLDEN = Path(__file__).with_name("golden")
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def run_analysis(table: pd.DataFrame, models: pd.DataFrame, **overrides):
    """The analysis at the paper's parameters unless overridden."""
    return run_analysis_with(table, models, Parameters(**overrides))


@pytest.fixture(scope="module")
def analysis():
    return run_analysis(constructed_table(with_controls=True, categorical=True), models_frame())


@pytest.fixture(scope="module")
def tables(analysis):
    return inverse_scaling_tables(analysis)


def cell(table: Table, row_label: str, column: str) -> object:
    frame = table.frame
    return frame.loc[frame.iloc[:, 0] == row_label, column].item()


def test_summary_counts(analysis):
    summary = analysis.summary
    assert summary["eligible_comparisons"] == EXPECTED_ELIGIBLE
    assert summary["cases"] == EXPECTED_CASES
    for restriction, expected in EXPECTED_RESTRICTED.items():
        assert summary[f"{restriction}_cases"] == expected, restriction
    assert summary["smallest_vs_largest_cases"] == EXPECTED_SMALLEST_VS_LARGEST
    assert [(r["benchmark"], r["subtask"], r["families"]) for r in summary["replicated_subtasks"]] == [
        ("BLINK", "Jigsaw", ["Alpha", "Beta", "Gamma"])
    ]
    assert summary["two_family_subtasks"] == 3  # Counting, MMMU dev_val Art, MMMU test Art
    assert summary["subtask_dataset_pairs"] == 5
    assert summary["family_subtask_pairs"] == 10
    # Only Alpha's MMMU dev_val Art curve (0, 100, 0, 100 %) is non-monotonic.
    assert summary["nonmonotonic_family_subtasks"] == 1
    for key in ["eligible_comparisons", "cases", "significant_uncorrected", "significant_bh_cases",
                "significant_bh_all", "dense_only_cases", "twofold_total_cases", "twofold_active_cases",
                "adjacent_cases", "same_encoder_tier_cases"]:  # fmt: skip
        assert isinstance(summary[key], int), key
    json.dumps(summary)


def test_cases_are_sorted_by_net_then_accuracy_gap(analysis):
    cases = analysis.cases
    assert set(CASE_COLUMNS) <= set(cases.columns)
    keys = list(zip(-cases["net"], -cases["acc_delta"]))
    assert keys == sorted(keys)
    top = cases.iloc[0]
    assert (top["family"], top["subtask"], top["small"], top["large"], top["net"]) == (
        "Alpha",
        "Art",
        "A-4B",
        "A-16B-A2B",
        20,
    )


def test_table2_pools_mmmu_splits(analysis, tables):
    table = tables["table02_cases_by_family"]
    assert list(table.frame["Dataset"]) == ["MMMU (dev_val+test)", "MME", "BLINK", "Total"]
    assert cell(table, "BLINK", "Alpha") == "7/12"  # Jigsaw 4 + Counting 3 over 6 + 6 eligible
    assert cell(table, "MMMU (dev_val+test)", "Alpha") == "4/12"
    assert cell(table, "Total", "Total") == f"{EXPECTED_CASES}/{EXPECTED_ELIGIBLE}"
    dense = tables["table04_dense_only"]
    assert cell(dense, "Total", "Total") == EXPECTED_RESTRICTED["dense_only"]


def test_significance_bins(analysis, tables):
    assert [net_bin_label(*bin) for bin in net_bins(5)] == ["5–7", "8–10", "11–15", "16–20", "≥21"]
    assert [net_bin_label(*bin) for bin in net_bins(10)] == ["10", "11–15", "16–20", "≥21"]
    table = tables["table35_significance_by_net"].frame
    assert table["Cases"].tolist() == [11, 7, 0, 2, 0, EXPECTED_CASES]


def test_replication_tables(analysis, tables):
    replicated = tables["table36_replicated"].frame
    assert replicated[["Dataset", "Subtask", "Families", "Max Net", "Cases"]].values.tolist() == [
        ["BLINK", "Jigsaw", 3, 8, 7]
    ]
    two = tables["table37_two_families"].frame
    assert two[["Dataset", "Subtask", "Family names", "Max Net"]].values.tolist() == [
        ["MMMU test", "Art", "Alpha, Gamma", 20],  # ties on Max Net: more cases first
        ["MMMU dev_val", "Art", "Alpha, Beta", 20],
        ["BLINK", "Counting", "Alpha, Gamma", 6],
    ]


def test_thresholds_table(analysis, tables):
    frame = tables["table38_thresholds"].frame.set_index("Net threshold")
    assert frame.loc["Pairwise cases"].tolist() == [20, 2, 2, 2, 0, 0]
    assert frame.loc["Cross-family (≥3 families)"].tolist() == [1, 0, 0, 0, 0, 0]


def test_restrictions_table(analysis, tables):
    frame = tables["table42_restrictions"].frame.set_index("Pairs kept")
    assert frame.loc["All pairs", "Cases"] == EXPECTED_CASES
    assert frame.loc["Active parameters ≥ 2×", "Cases"] == EXPECTED_RESTRICTED["twofold_active"]
    # Gamma's larger model wins all 40 Scene questions; Alpha's zig-zag gives Net -20 three times.
    assert frame.loc["All pairs", "Larger ahead"] == "4 (8.0%)"


def test_larger_ahead_counts_net_exactly_minus_min_net():
    """Both thresholds are inclusive: Net = -min_net is "larger ahead" as Net = min_net is a case."""
    nets = [-6, -5, -4, 4, 5]
    comparisons = pd.DataFrame({
        "net": nets, "eligible": True, "case": [n >= 5 for n in nets], "group": range(len(nets)), "family_index": 0,
        "bh_larger_all": False, **{flag: True for flag in ("twofold_total", "twofold_active", "dense",
                                                          "same_encoder_tier", "adjacent", "extreme")}})
    summary = restriction_summary(comparisons, min_net=5).set_index("restriction")
    assert summary.loc["all", "larger_ahead"] == 2 and summary.loc["all", "cases"] == 1


def test_cot_outcome_at_exactly_min_net_persists_and_at_minus_min_net_reverses():
    """Appendix L: a case persists under CoT with Net >= 5 and reverses with Net <= -5 (both inclusive)."""
    from postprocess.inverse_scaling.cases import CASE_KEY
    from postprocess.inverse_scaling.controls import cot_outcomes

    nets = [5, 4, 0, -4, -5, 6]
    keys = pd.DataFrame([{column: f"{column}{i}" for column in CASE_KEY} for i in range(len(nets))])
    control = keys.assign(net=nets, p_value=0.5)
    cases = keys.assign(net=10)
    outcomes = cot_outcomes(control, cases, min_net=5, fdr=0.05)
    assert outcomes["outcome"].tolist() == ["persist", "dissolve", "dissolve", "dissolve", "reverse", "persist"]
    assert outcomes["base_net"].tolist() == [10] * len(nets)


def test_cot_control(analysis, tables):
    cot = analysis.controls["cot"].set_index(["family", "small", "large"])
    assert len(cot) == 7  # the Jigsaw cases; the others have no CoT rows
    alpha = cot.loc[("Alpha", "A-1B", "A-16B-A2B")]
    assert (alpha["net"], alpha["outcome"], alpha["recovered"], alpha["base_flip_inv"]) == (3, "dissolve", 5, 10)
    assert cot.loc[("Beta", "B-2B", "B-12B"), "outcome"] == "persist"
    gamma = cot.loc[("Gamma", "G-3B", "G-7B")]
    assert (gamma["net"], gamma["outcome"], gamma["recovered"]) == (-5, "reverse", 6)
    summary = analysis.summary["cot"]
    assert (summary["persist"], summary["dissolve"], summary["reverse"]) == (2, 4, 1)
    assert summary["recovery_percent"] == pytest.approx(100 * 26 / 60, abs=0.01)
    by_family = tables["table45_cot_by_family"].frame.set_index("Family")
    assert by_family.loc["All", "Recovery"] == "43.3%"
    assert by_family.loc["Alpha", "Median Net CoT"] == "+3"


def test_cot_accuracy_change_of_each_model(analysis, tables):
    """Appendix L's -3.9 / +5.2 pp, on the constructed Jigsaw re-runs: Alpha's larger models gain 5 of 30
    questions (+16.7 pp) and its smaller ones keep theirs; Beta is unchanged; Gamma's 3B loses 5 and 7B gains 5."""
    change = analysis.cot_accuracy_change.set_index("family")
    assert change.loc["Alpha", ["cases", "smaller_decreased", "larger_increased"]].tolist() == [4, 0, 4]
    assert change.loc["Alpha", "larger_mean_change"] == pytest.approx(100 * 5 / 30)
    assert change.loc["Beta", ["smaller_mean_change", "larger_mean_change"]].tolist() == [0, 0]
    assert change.loc["All", ["cases", "smaller_decreased", "larger_increased"]].tolist() == [7, 1, 5]
    assert change.loc["All", "smaller_mean_change"] == pytest.approx(-100 * 5 / 30 / 7)
    assert change.loc["All", "larger_mean_change"] == pytest.approx(100 * 5 / 30 * 5 / 7)
    summary = analysis.summary["cot"]
    assert (summary["smaller_mean_change_pp"], summary["larger_mean_change_pp"]) == (-2.38, 11.9)
    assert (summary["smaller_accuracy_decreased"], summary["larger_accuracy_increased"]) == (1, 5)
    row = tables["appendixL_cot_accuracy_change"].frame.set_index("Family").loc["All"]
    assert (row["Smaller: accuracy down"], row["Smaller: mean Δ (pp)"], row["Larger: mean Δ (pp)"]) == \
           ("1 (14.3%)", "-2.4", "+11.9")
    by_model = analysis.cot_accuracy_by_model.set_index(["model", "role"])
    assert by_model.loc[("G-3B", "smaller"), ["cases", "acc_direct", "acc_cot", "decreased"]].tolist() == \
           [1, pytest.approx(100 * 29 / 30), pytest.approx(100 * 24 / 30), 1]
    assert by_model.loc[("A-24B", "larger"), "cases"] == 2 and by_model.loc[("A-1B", "smaller"), "cases"] == 2


def test_option_order_control(analysis, tables):
    table = tables["table43_option_order_extended"].frame
    assert set(table["Family"]) == {"Alpha"}
    first = table[table["Pair"] == "1B vs. 16B-A2B"]
    assert first[["Ordering", "FI", "FN", "Net"]].values.tolist() == [
        ["direct (main run)", 10, 2, "+8"], ["identity", 9, 2, "+7"], ["reversal", 8, 2, "+6"]]
    # the paper's table (Appendix J): the BLINK cases among Table 3's ten, re-run rows only
    paper = tables["table43_option_order"]
    ranks = analysis.option_order
    expected = ranks[(ranks["rank"] <= 10) & (ranks["benchmark"] == "BLINK") & (ranks["ordering"] != "direct")]
    assert len(paper.frame) == len(expected) > 0 and "(main run)" not in " ".join(paper.frame["Ordering"])
    assert paper.note.startswith(f"{expected['rank'].nunique()} case(s), {len(expected)} re-run(s)")
    order = analysis.summary["option_order"]
    assert order["variants"] == ["identity", "reverse"]
    assert (order["identity_runs"], order["identity_max_net_change"]) == (4, 1)
    # the identity replays are no reordered runs: the 4 reversed runs are
    assert (order["runs"], order["runs_with_positive_net"], order["runs_with_min_net"]) == (4, 4, 4)


def test_controls_absent_without_their_variants():
    analysis = run_analysis(constructed_table(), models_frame())
    assert not analysis.controls
    assert not {"table43_option_order", "table43_option_order_extended", "table45_cot_by_family"} & set(
        inverse_scaling_tables(analysis))
    assert "cot" not in analysis.summary


def test_accuracy_tables_flag_best_and_largest(analysis, tables):
    table = tables["appendixB_accuracy_alpha"]
    assert list(table.frame.columns) == ["Dataset", "1B", "4B", "16B-A2B", "24B"]
    blink = table.frame["Dataset"] == "BLINK"
    assert table.frame.loc[blink, "1B"].item() == pytest.approx(100 * 57 / 64, abs=0.05)  # 25 + 24 + 8 right of 64
    assert table.bold.loc[blink, "1B"].item() and table.underline.loc[blink, "24B"].item()


def test_unusable_inputs_raise():
    with pytest.raises(UnusableInput, match="empty"):
        run_analysis(constructed_table().iloc[:0], models_frame())
    with pytest.raises(UnusableInput, match="variant 'cot'"):
        run_analysis(constructed_table(), models_frame(), variant="cot")


def test_rendering_escapes_and_marks():
    frame = pd.DataFrame({"Sub_task": ["a & b", "x|y"], "Acc": [12.345, 7.0]})
    bold = pd.DataFrame({"Sub_task": [False, False], "Acc": [True, False]})
    table = Table(name="t", title="T ≥ 5", frame=frame, bold=bold)
    latex = to_latex(table)
    assert r"a \& b" in latex and r"Sub\_task" in latex and r"\textbf{12.3}" in latex and r"$\geq$" in latex
    markdown = to_markdown(table)
    assert r"x\|y" in markdown and "**12.3**" in markdown and "| 7.0 " in markdown


def _golden_texts(analysis, tables) -> dict[str, str]:
    texts = {f"{name}.md": to_markdown(table) for name, table in tables.items()}
    texts["cases.csv"] = analysis.cases[CASE_COLUMNS].to_csv(index=False, float_format="%.6g")
    texts["summary.json"] = json.dumps(analysis.summary, indent=2, default=str) + "\n"
    return texts


def test_golden_files(analysis, tables):
    texts = _golden_texts(analysis, tables)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        for stale in GOLDEN.iterdir():
            stale.unlink()
        for name, text in texts.items():
            (GOLDEN / name).write_text(text, encoding="utf-8")
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(texts), "golden set changed: rerun with UPDATE_GOLDEN=1"
    for name, text in texts.items():
        assert (GOLDEN / name).read_text(encoding="utf-8") == text, f"{name} differs from tests/postprocess/golden/{name}"
