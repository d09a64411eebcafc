"""The credibility verdict of each case (postprocess/inverse_scaling/credibility.py) on the constructed data of
analysis_factory, whose flips are known by construction: each check passes, fails or says "not run", never
passes silently; the intervals are scipy's exact ones and the minimum detectable Net has the stated power."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analysis_factory import constructed_table, models_frame, rows_for
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.compare import mcnemar_greater
from postprocess.inverse_scaling.credibility import (min_detectable_share, replication_of, share_interval,
                                                     share_lower_bound)
from postprocess.inverse_scaling.parameters import Parameters

JIGSAW = ("BLINK", "val", "Jigsaw")


def analysed(table: pd.DataFrame, **overrides):
    return run_analysis(table, models_frame(), Parameters(**overrides))


def case(analysis, subtask: str, small: str, large: str) -> pd.Series:
    cases = analysis.cases
    found = cases[(cases["subtask"] == subtask) & (cases["small"] == small) & (cases["large"] == large)]
    assert len(found) == 1, (subtask, small, large)
    return found.iloc[0]


def with_rows(table: pd.DataFrame, spec: dict, variant: str) -> pd.DataFrame:
    extra = pd.DataFrame(rows_for(spec, variant))
    extra["correct"] = extra["correct"].astype("boolean")
    return pd.concat([table, extra], ignore_index=True)


@pytest.fixture(scope="module")
def controlled():
    return analysed(constructed_table(with_controls=True))


def test_the_flips_of_a_case_are_its_discordant_questions(controlled):
    flips = controlled.flips
    for row in controlled.cases.itertuples():
        mine = flips[(flips["small"] == row.small) & (flips["large"] == row.large) & (flips["subtask"] == row.subtask)
                     & (flips["benchmark"] == row.benchmark) & (flips["split"] == row.split)]
        assert (mine["direction"] == "FlipInv").sum() == row.flip_inv
        assert (mine["direction"] == "FlipNorm").sum() == row.flip_norm
        assert not mine["question_id"].duplicated().any()
        inverse = mine[mine["direction"] == "FlipInv"]
        assert inverse["small_correct"].all() and not inverse["large_correct"].any()


def alpha_jigsaw(blocks, variant: str, table: pd.DataFrame | None = None) -> pd.Series:
    """The case A-1B vs A-24B on Jigsaw (n = 30, Net 8) with a `variant` run of Alpha's Jigsaw laid out as
    `blocks` (analysis_factory's; '.' leaves a model's row out)."""
    base = constructed_table() if table is None else table
    return case(analysed(with_rows(base, {JIGSAW: {"Alpha": blocks}}, variant)), "Jigsaw", "A-1B", "A-24B")


# Alpha's Jigsaw runs with 1B vs 24B at Net 6, 5, 4 and 0 on all 30 questions.
NET_6 = [(8, "1100"), (2, "1111"), (2, "0011"), (15, "1111"), (3, "0000")]
NET_5 = [(7, "1100"), (2, "0011"), (18, "1111"), (3, "0000")]
NET_4 = [(6, "1100"), (2, "0011"), (19, "1111"), (3, "0000")]
NET_0 = [(5, "1100"), (5, "0011"), (17, "1111"), (3, "0000")]


def test_option_order_passes_when_every_reordered_run_keeps_the_case_definitions_net(controlled):
    # Alpha's reversed Jigsaw run recovers 2 of the 10 losses: Net 8 -> 6 on all 30 questions.
    kept = case(controlled, "Jigsaw", "A-1B", "A-24B")
    assert (kept["order_check"], kept["order_nets"]) == ("pass", "reverse +6 on 30 of 30")
    assert (kept["order_n_reverse"], kept["order_net_reverse"]) == (30, 6)
    assert pd.isna(kept["order_n_shift1"]) and pd.isna(kept["order_net_shift1"])
    # No reordered run of Beta: the check is not made, and says so.
    assert case(controlled, "Jigsaw", "B-2B", "B-12B")["order_check"] == "not run"
    # Options reversed, Alpha's larger models now win 10 of 12: Net -8.
    flipped = [(2, "1100"), (10, "0011"), (15, "1111"), (3, "0000")]
    turned = alpha_jigsaw(flipped, "reverse")
    assert (turned["order_check"], turned["order_nets"]) == ("fail", "reverse -8 on 30 of 30")
    assert turned["verdict"] == "fail" and "option order" in turned["failed_checks"]


def test_option_order_fails_when_one_reordered_run_falls_below_min_net():
    # Reverse keeps Net +6, shift1 brings it to 0: one run of two is enough to fail.
    both = with_rows(constructed_table(), {JIGSAW: {"Alpha": NET_6}}, "reverse")
    mixed = alpha_jigsaw(NET_0, "shift1", both)
    assert (mixed["order_check"], mixed["order_nets"]) == ("fail", "reverse +6 on 30 of 30; shift1 +0 on 30 of 30")
    # The boundary is the case definition's Net >= min_net (5): exactly 5 passes, 4 (still > 0) fails, 0 fails.
    assert alpha_jigsaw(NET_5, "reverse")["order_check"] == "pass"
    assert alpha_jigsaw(NET_4, "reverse")["order_check"] == "fail"
    assert alpha_jigsaw(NET_0, "reverse")["order_check"] == "fail"


def test_a_reordered_run_covering_under_80_percent_of_the_questions_does_not_decide():
    # A reversed run of the first 24 of the 30 questions (80%, Net 8 there) decides; of the first 23, it does not.
    of_24 = alpha_jigsaw([(10, "1100"), (2, "0011"), (12, "1111")], "reverse")
    assert (of_24["order_check"], of_24["order_n_reverse"], of_24["order_net_reverse"]) == ("pass", 24, 8)
    of_23 = alpha_jigsaw([(2, "1100"), (2, "0011"), (19, "1111")], "reverse")
    assert (of_23["order_check"], of_23["order_n_reverse"], of_23["order_net_reverse"]) == ("not run", 23, 0)
    assert of_23["order_nets"] == "reverse +0 on 23 of 30 (under 80%: not counted)"
    # Beside a covering run that passes, an uncovering one that would fail is not counted either.
    covering = with_rows(constructed_table(), {JIGSAW: {"Alpha": NET_6}}, "reverse")
    assert alpha_jigsaw([(2, "1100"), (2, "0011"), (19, "1111")], "shift1", covering)["order_check"] == "pass"


def test_the_noise_check_reads_the_cases_net_in_the_identity_rerun(controlled):
    # The identity re-run changes one Jigsaw question for Alpha's two larger models (wrong -> right): Net 8 -> 7.
    rerun = case(controlled, "Jigsaw", "A-1B", "A-24B")
    assert (rerun["noise_check"], rerun["noise_n"], rerun["noise_net"], rerun["noise_net_change"]) == (
        "pass", 30, 7, -1)
    assert case(controlled, "Jigsaw", "B-2B", "B-12B")["noise_check"] == "not run"  # no re-run of Beta
    # The boundary is the case definition's: a re-run Net of exactly min_net (5) passes, min_net - 1 fails.
    at_five = alpha_jigsaw(NET_5, "identity")
    assert (at_five["noise_net"], at_five["noise_net_change"], at_five["noise_check"]) == (5, -3, "pass")
    below = alpha_jigsaw(NET_4, "identity")
    assert (below["noise_net"], below["noise_check"], below["verdict"]) == (4, "fail", "fail")
    assert "run-to-run noise" in below["failed_checks"]


def test_a_rerun_whose_changes_cancel_keeps_its_net_and_passes():
    # 5 of the 10 FlipInv questions come out right for both, 5 of the agreeing ones become FlipInv: 10 answers
    # changed, Net still 8.
    cancelled = [(5, "1111"), (5, "1100"), (2, "0011"), (5, "1100"), (10, "1111"), (3, "0000")]
    assert alpha_jigsaw(cancelled, "identity")[["noise_check", "noise_net", "noise_net_change"]].tolist() == [
        "pass", 8, 0]


def test_a_question_both_models_changed_moves_net_by_two():
    # One FlipInv question turns into a FlipNorm (1B right -> wrong, 24B wrong -> right): Net 8 -> 6.
    swapped = [(9, "1100"), (1, "0011"), (2, "0011"), (15, "1111"), (3, "0000")]
    assert alpha_jigsaw(swapped, "identity")[["noise_net", "noise_net_change"]].tolist() == [6, -2]


def test_a_rerun_covering_under_80_percent_of_the_questions_is_not_run():
    # A re-run of 3 of the 30 questions (all FlipInv): Net 3 there, but the check is not run, not failed.
    few = alpha_jigsaw([(3, "1100")], "identity")
    assert (few["noise_check"], few["noise_n"], few["noise_net"], few["noise_net_change"]) == ("not run", 3, 3, 0)
    assert np.isnan(few["noise_change_percentile"])
    # 27 of 30 (90%) decide; the change is against the main run's Net on the same 27 questions (5), not its 8.
    most = alpha_jigsaw([(3, "...."), (7, "1100"), (2, "0011"), (15, "1111"), (3, "0000")], "identity")
    assert (most["noise_check"], most["noise_n"], most["noise_net"], most["noise_net_change"]) == (
        "pass", 27, 5, 0)


def test_questions_missing_from_the_larger_models_rerun_leave_the_shared_questions():
    # 24B has no re-run row for 7 of the 30 questions (23 < 80% of 30); the other Alpha models answer all of them.
    blocks = [(7, "111."), (3, "1100"), (2, "0011"), (15, "1111"), (3, "0000")]
    table = with_rows(constructed_table(), {JIGSAW: {"Alpha": blocks}}, "identity")
    analysis = analysed(table)
    short = case(analysis, "Jigsaw", "A-1B", "A-24B")
    assert (short["noise_n"], short["noise_check"]) == (23, "not run")
    assert case(analysis, "Jigsaw", "A-1B", "A-16B-A2B")["noise_n"] == 30


def test_the_noise_distribution_covers_every_eligible_comparison_with_a_rerun(controlled):
    # The identity re-run covers Alpha's 6 Jigsaw comparisons; it moves Net by 1 where 16B-A2B or 24B is the
    # larger model against 1B or 4B (4 comparisons), by 0 in 1B vs 4B and 16B-A2B vs 24B.
    noise = controlled.summary["credibility"]["noise_change"]
    assert noise == {"comparisons": 6, "p95_abs_net_change": 1.0, "max_abs_net_change": 1}
    assert case(controlled, "Jigsaw", "A-1B", "A-24B")["noise_change_percentile"] == 100.0


def tiered(table: pd.DataFrame, tier: str | None) -> pd.DataFrame:
    return table.assign(extraction_tier=pd.array([tier] * len(table), dtype="string"))


def test_extraction_is_not_run_without_tiers_and_removes_weak_inverse_flips_with_them():
    table = constructed_table()
    assert case(analysed(table), "Jigsaw", "A-1B", "A-24B")["extraction_check"] == "not run"
    strict = case(analysed(tiered(table, "strict")), "Jigsaw", "A-1B", "A-24B")
    assert (strict["extraction_check"], strict["worst_case_net"]) == ("pass", 8)
    # 24B's letters on four of its ten Jigsaw losses come from a reading rule or the judge, or their tier is
    # unknown: the worst case drops those flips, Net 8 -> 4 < 5.
    weak = tiered(table, "strict")
    losses = weak.index[(weak["model"] == "A-24B") & (weak["subtask"] == "Jigsaw")][:4]
    weak.loc[losses, "extraction_tier"] = ["reading", "judge", pd.NA, "reading"]
    dropped = case(analysed(weak), "Jigsaw", "A-1B", "A-24B")
    assert (dropped["extraction_check"], dropped["worst_case_net"]) == ("fail", 4)
    # An answer without a prediction has no letter to doubt (null tier, null prediction): nothing is removed.
    unparsed = tiered(table, "strict")
    rows = unparsed.index[(unparsed["model"] == "A-24B") & (unparsed["subtask"] == "Jigsaw")][:4]
    unparsed.loc[rows, ["prediction", "extraction_tier"]] = pd.NA
    assert case(analysed(unparsed), "Jigsaw", "A-1B", "A-24B")["worst_case_net"] == 8


def test_replication_is_an_attribute_counting_the_families_with_cases_among_those_compared(controlled):
    assert case(controlled, "Jigsaw", "A-1B", "A-24B")[["replicated", "replication_families"]].tolist() == [
        True, "3 of 3"]
    counting = case(controlled, "Counting", "A-1B", "A-24B")
    assert counting[["replicated", "replication_families"]].tolist() == [False, "2 of 3"]
    # Not replicated is no failure: the paper calls the criterion a reporting choice (Section 5.4).
    assert "replication" not in counting["failed_checks"]
    two = constructed_table()
    two = two[two["family"] != "Beta"]
    only_two = case(analysed(two), "Jigsaw", "A-1B", "A-24B")
    assert (only_two["replicated"], only_two["replication_families"]) == (False, "2 of 2")


def test_a_case_no_check_could_run_is_not_checked_and_not_counted_as_passing():
    table = constructed_table()
    alpha = table[table["family"] == "Alpha"]  # one family, no reordered run, no re-run, no tiers
    analysis = analysed(alpha)
    assert set(analysis.cases["verdict"]) == {"not checked"}
    numbers = analysis.summary["credibility"]
    assert numbers["pass_all_checks"] == numbers["partly_checked"] == 0
    assert numbers["not_checked"] == len(analysis.cases)


def test_only_a_case_whose_three_checks_ran_and_passed_is_a_pass():
    analysis = analysed(tiered(constructed_table(with_controls=True), "strict"))
    # Alpha's Jigsaw cases have a reversed run, an identity re-run and tiers: fully checked.
    assert case(analysis, "Jigsaw", "A-1B", "A-24B")["verdict"] == "pass"
    # Beta's have only tiers: none failed, but two checks could not run, and that is no pass.
    partial = case(analysis, "Jigsaw", "B-2B", "B-12B")
    assert (partial["verdict"], partial["failed_checks"]) == ("none failed, 2 not run", "")
    numbers = analysis.summary["credibility"]
    assert numbers["pass_all_checks"] == 4 and numbers["partly_checked"] == 16
    assert numbers["pass_all_checks"] + numbers["partly_checked"] + numbers["fail"] + numbers["not_checked"] == 20


def test_the_headline_counts_add_up_to_the_cases(controlled):
    numbers = controlled.summary["credibility"]
    verdicts = controlled.cases["verdict"]
    # Without tiers no case is fully checked; Alpha's 4 Jigsaw cases pass both run checks, the rest none ran.
    assert numbers["pass_all_checks"] == 0
    assert numbers["partly_checked"] == int((verdicts == "none failed, 1 not run").sum()) == 4
    assert numbers["fail"] + numbers["partly_checked"] + numbers["not_checked"] == numbers["cases"] == 20


def comparison_rows(rows: list[tuple[int, int, bool]]) -> pd.DataFrame:
    """(group, family_index, eligible) per comparison; the cases among them are the eligible ones with Net >= 5."""
    return pd.DataFrame(rows, columns=["group", "family_index", "eligible"])


def test_three_families_with_cases_of_four_compared_is_replicated():
    compared = comparison_rows([(0, 0, True), (0, 1, True), (0, 2, True), (0, 3, True)])
    cases = compared.iloc[:3]  # families 0-2 have a case, family 3 only a comparison
    assert replication_of(cases, compared).values.tolist() == [[True, "3 of 4"]] * 3
    assert replication_of(cases.iloc[:2], compared).values.tolist() == [[False, "2 of 4"]] * 2


def test_a_family_with_only_ineligible_comparisons_does_not_count_as_compared():
    compared = comparison_rows([(0, 0, True), (0, 1, True), (0, 2, True), (0, 3, False), (0, 3, False),
                                (1, 3, True)])  # family 3 is compared on another subtask only
    assert replication_of(compared.iloc[:3], compared).values.tolist() == [[True, "3 of 3"]] * 3


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_share_interval_is_scipys_exact_clopper_pearson(wins_trials):
    wins, trials = wins_trials
    low, high = share_interval(np.array([wins]), np.array([trials]))
    expected = stats.binomtest(wins, trials).proportion_ci(confidence_level=0.95, method="exact")
    assert low[0] == pytest.approx(expected.low, abs=1e-9) and high[0] == pytest.approx(expected.high, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(8, 600), st.sampled_from([0.05, 0.01]))
def test_the_minimum_detectable_share_is_where_the_exact_test_reaches_80_percent_power(discordant, alpha):
    pi = min_detectable_share(np.array([discordant]), alpha)[0]
    critical = next(k for k in range(discordant + 1) if stats.binom.sf(k - 1, discordant, 0.5) <= alpha)
    assert stats.binom.sf(critical - 1, discordant, pi) == pytest.approx(0.8, abs=1e-6)
    assert stats.binom.sf(critical - 1, discordant, pi - 0.01) < 0.8


def test_too_few_discordant_questions_can_detect_no_net():
    # 4 discordant questions: even 4 of 4 has p = 1/16 > 0.05.
    assert np.isnan(min_detectable_share(np.array([4, 0]), 0.05)).all()
    assert not np.isnan(min_detectable_share(np.array([5]), 0.05)[0])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_lower_bound_is_scipys_one_sided_exact_bound_and_agrees_with_the_test(wins_trials):
    wins, trials = wins_trials
    low = share_lower_bound(np.array([wins]), np.array([trials]))[0]
    expected = stats.binomtest(wins, trials, alternative="greater").proportion_ci(confidence_level=0.95,
                                                                                 method="exact")
    assert low == pytest.approx(expected.low, abs=1e-9)
    # The one-sided test at 5% rejects exactly when the one-sided 95% bound of Net is at least 0 (share >= 1/2).
    assert (mcnemar_greater(wins, trials) <= 0.05) == (low >= 0.5)


def test_the_bounds_and_the_design_mde_of_a_case(controlled):
    # 1B vs 24B on Jigsaw: FlipInv 10, FlipNorm 2, D = 12.
    row = case(controlled, "Jigsaw", "A-1B", "A-24B")
    one_sided = stats.binomtest(10, 12, alternative="greater").proportion_ci(0.95, method="exact").low
    two_sided = stats.binomtest(10, 12).proportion_ci(0.95, method="exact")
    assert row["share_lower_bound"] == pytest.approx(one_sided)
    assert row["net_lower_bound"] == pytest.approx(12 * (2 * one_sided - 1))
    assert (row["share_ci_low"], row["share_ci_high"]) == (pytest.approx(two_sided.low), pytest.approx(
        two_sided.high))
    assert row["net_lower_bound"] > row["net_ci_low"]  # one-sided: the tighter lower bound
    # The MDE depends on D and the level only: at BH's level over all eligible comparisons, it is larger.
    level = controlled.summary["credibility"]["bh_level"]
    assert row["min_detectable_share"] == pytest.approx(min_detectable_share(np.array([12]), 0.05)[0])
    assert row["min_detectable_share_bh"] == pytest.approx(min_detectable_share(np.array([12]), level)[0])
    assert row["min_detectable_net_bh"] >= row["min_detectable_net"]


def test_the_bh_level_is_the_largest_p_value_bh_could_reject(controlled):
    eligible = controlled.comparisons[controlled.comparisons["eligible"]]
    level = controlled.summary["credibility"]["bh_level"]
    rejected = int(eligible["bh_all"].sum())
    assert level == pytest.approx(0.05 * max(rejected, 1) / len(eligible))
    assert (eligible["p_value"] <= level).sum() == rejected
