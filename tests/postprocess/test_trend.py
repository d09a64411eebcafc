"""The family-wide trend test (postprocess/inverse_scaling/trend.py) on constructed families whose trend is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from postprocess.inverse_scaling.compare import build_outcomes
from postprocess.inverse_scaling.trend import PLACEMENTS, family_trends, place_cases

SIZES = {"Tiny": [1, 2, 4, 8], "Pair": [2, 8]}  # billions of parameters; "Pair" has too few sizes for a trend


def models_frame() -> pd.DataFrame:
    return pd.DataFrame([{"model": f"{family}-{b}B", "family": family, "size": f"{b}B", "total_params": b * 10**9}
                         for family, sizes in SIZES.items() for b in sizes])


def table_of(right: dict[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    """Per-question rows from {(family, subtask): bool/NaN array (models, questions)}."""
    models = models_frame()
    rows = []
    for (family, subtask), outcome in right.items():
        for name, answers in zip(models.loc[models["family"] == family, "model"], outcome):
            rows += [{"model": name, "variant": "direct", "benchmark": "B", "split": "test", "subtask": subtask,
                      "question_id": f"{subtask}-{q}", "correct": None if np.isnan(a) else bool(a)}
                     for q, a in enumerate(answers)]
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["correct"].astype("boolean")
    return frame


def trends_of(right, min_n=20):
    models = models_frame()
    outcomes = build_outcomes(table_of(right), list(models["model"]))
    return family_trends(outcomes, models, "direct", min_n=min_n, fdr=0.05, level=0.95)


def staircase(accuracies: list[int], n: int = 100) -> np.ndarray:
    """Model m right on the first accuracies[m] % of n questions: each question's outcomes are monotone in size."""
    return np.array([[q < a * n // 100 for q in range(n)] for a in accuracies], dtype=float)


def test_a_steady_decline_of_ten_points_per_doubling_is_found_with_its_slope():
    trends, points = trends_of({("Tiny", "falls"): staircase([80, 70, 60, 50])})
    row = trends.iloc[0]
    assert row["slope_pp"] == pytest.approx(-10.0)
    assert row["ci_low_pp"] < -10.0 < row["ci_high_pp"] < 0
    assert row["trend"] == "decline" and row["p_decline"] < 1e-6 and row["p_rise"] > 0.999
    assert (row["n"], row["models"], row["sizes"]) == (100, 4, "1B, 2B, 4B, 8B")
    assert list(points["accuracy"]) == pytest.approx([80, 70, 60, 50])


def test_a_rise_is_found_as_a_rise_and_no_change_as_none():
    balanced = np.array([[1, 0, 0, 1], [0, 1, 1, 0]] * 50, dtype=float).T  # every contrast is exactly 0
    trends, _ = trends_of({("Tiny", "rises"): staircase([40, 55, 70, 85]), ("Tiny", "flat"): balanced})
    by_subtask = trends.set_index("subtask")
    assert by_subtask.loc["rises", "trend"] == "rise" and by_subtask.loc["rises", "slope_pp"] == pytest.approx(15.0)
    assert by_subtask.loc["flat", "trend"] == "none" and by_subtask.loc["flat", "slope_pp"] == 0
    assert by_subtask.loc["flat", "p_value"] == 1


def test_a_single_pair_dip_in_a_rising_family_is_no_family_wide_decline():
    # 2B drops 12 points below a family that otherwise rises 5 points per doubling.
    trends, _ = trends_of({("Tiny", "dip"): staircase([60, 53, 70, 75], n=400)})
    assert trends.iloc[0]["trend"] != "decline"


def test_only_questions_every_model_answered_count_and_two_sizes_are_not_tested():
    outcome = staircase([80, 70, 60, 50])
    outcome[2, :10] = np.nan  # the 4B model did not answer ten questions
    trends, _ = trends_of({("Tiny", "falls"): outcome, ("Pair", "falls"): staircase([80, 50])})
    assert list(trends["family"]) == ["Tiny"]
    assert trends.iloc[0]["n"] == 90


def test_a_model_without_the_subtask_leaves_a_test_of_the_others():
    outcome = staircase([80, 70, 60, 50])
    outcome[3] = np.nan  # the 8B model never ran this subtask
    trends, points = trends_of({("Tiny", "falls"): outcome})
    assert (trends.iloc[0]["models"], trends.iloc[0]["sizes"]) == (3, "1B, 2B, 4B")
    assert list(points["model"]) == ["Tiny-1B", "Tiny-2B", "Tiny-4B"]


def test_fewer_shared_questions_than_min_n_are_not_tested():
    trends, _ = trends_of({("Tiny", "small"): staircase([80, 70, 60, 50], n=19)})
    assert trends.empty


@settings(max_examples=40, deadline=None)
@given(arrays(np.bool_, (4, 30)))
def test_slope_is_the_least_squares_slope_of_accuracy_on_log2_size(right):
    trends, points = trends_of({("Tiny", "any"): right.astype(float)})
    expected = np.polyfit(np.log2([1, 2, 4, 8]), 100 * right.mean(axis=1), 1)[0]
    assert trends.iloc[0]["slope_pp"] == pytest.approx(expected, abs=1e-9)


def test_slope_and_standard_error_are_statsmodels_gee_with_question_clusters():
    rng = np.random.default_rng(3)
    difficulty = rng.normal(0, 2, 150)
    right = rng.random((4, 150)) < 1 / (1 + np.exp(difficulty - 0.3 * np.arange(4)[:, None]))
    trends, _ = trends_of({("Tiny", "any"): right.astype(float)})
    long = pd.DataFrame({"y": right.ravel().astype(float), "x": np.repeat(np.log2([1, 2, 4, 8]), 150),
                         "question": np.tile(np.arange(150), 4)})
    gee = sm.GEE(long["y"], sm.add_constant(long["x"]), groups=long["question"], family=sm.families.Gaussian(),
                 cov_struct=sm.cov_struct.Independence()).fit()
    row = trends.iloc[0]
    assert row["slope_pp"] == pytest.approx(100 * gee.params["x"])
    # The robust (sandwich) standard error with the CR1 small-sample factor n / (n - 1).
    se = (row["ci_high_pp"] - row["slope_pp"]) / 100 / 1.976013  # t(0.975, 149)
    assert se == pytest.approx(gee.bse["x"] * np.sqrt(150 / 149), rel=1e-4)


def test_cases_are_placed_against_their_family_trend():
    trends, _ = trends_of({("Tiny", "falls"): staircase([80, 70, 60, 50]),
                           ("Tiny", "rises"): staircase([40, 55, 70, 85]),
                           ("Tiny", "flat"): np.array([[1, 0, 0, 1], [0, 1, 1, 0]] * 50, dtype=float).T})
    cases = pd.DataFrame({"family": ["Tiny", "Tiny", "Tiny", "Pair"], "benchmark": "B", "split": "test",
                          "subtask": ["falls", "rises", "flat", "falls"]})
    placed = place_cases(cases, trends)
    assert list(placed["trend_placement"]) == [PLACEMENTS["with"], PLACEMENTS["against"], PLACEMENTS["single"],
                                               PLACEMENTS["untested"]]
    assert placed["trend_slope_pp"].iloc[0] == pytest.approx(-10.0) and np.isnan(placed["trend_q"].iloc[3])


def test_the_case_page_line_states_the_placement_and_the_slope():
    from postprocess.render.trend_tables import trend_html

    line = trend_html({"trend_placement": PLACEMENTS["with"], "trend_slope_pp": -2.5, "trend_q": 0.001})
    assert "part of a family-wide decline: -2.50 percentage points per doubling" in line and "q = 0.001" in line
    assert trend_html({"trend_placement": PLACEMENTS["untested"], "trend_slope_pp": np.nan}) == (
        '<p class="stats">Family-wide trend: no trend test.</p>')
    assert trend_html({}) == ""  # a comparison that is not a case


def test_the_trend_table_has_one_row_per_test_with_its_interval():
    from postprocess.render.trend_tables import trend_table

    trends, _ = trends_of({("Tiny", "falls"): staircase([80, 70, 60, 50])})
    table = trend_table(trends, 0.05)
    row = table.frame.iloc[0]
    assert (row["pp / doubling"], row["Trend"], row["n"]) == (-10.0, "decline", 100)
    assert row["95% CI"].startswith("[-1") and "1 declines and 0 rises" in table.note
