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
from postprocess.inverse_scaling.credibility import min_detectable_net, share_interval
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


def test_option_order_passes_when_every_reordered_run_keeps_net_positive_and_fails_otherwise(controlled):
    # Alpha's reversed Jigsaw run recovers 2 of the 10 losses: Net 8 -> 6.
    kept = case(controlled, "Jigsaw", "A-1B", "A-24B")
    assert (kept["order_check"], kept["order_nets"]) == ("pass", "reverse +6")
    # No reordered run of Beta: the check is not made, and says so.
    assert case(controlled, "Jigsaw", "B-2B", "B-12B")["order_check"] == "not run"
    # Options reversed, Alpha's larger models now win 10 of 12: Net -8.
    flipped = {JIGSAW: {"Alpha": [(2, "1100"), (10, "0011"), (15, "1111"), (3, "0000")]}}
    turned = case(analysed(with_rows(constructed_table(), flipped, "reverse")), "Jigsaw", "A-1B", "A-24B")
    assert (turned["order_check"], turned["order_nets"]) == ("fail", "reverse -8")
    assert turned["verdict"] == "fail" and "option order" in turned["failed_checks"]


def test_the_noise_threshold_counts_the_answers_the_identity_rerun_changed(controlled):
    # The identity re-run changes one Jigsaw question for Alpha's two larger models (wrong -> right).
    assert case(controlled, "Jigsaw", "A-1B", "A-24B")["noise_threshold"] == 1  # only 24B's answer changed
    assert case(controlled, "Jigsaw", "A-1B", "A-24B")["noise_check"] == "pass"
    assert case(controlled, "Jigsaw", "B-2B", "B-12B")["noise_check"] == "not run"  # no re-run of Beta
    # A re-run in which 1B gets 6 of its Jigsaw wins wrong and 24B 3 of its losses right: 9 changed answers, more
    # than Net 8.
    noisy = {JIGSAW: {"Alpha": [(6, "0100"), (3, "1101"), (1, "1100"), (2, "0011"), (15, "1111"), (3, "0000")]}}
    shaky = case(analysed(with_rows(constructed_table(), noisy, "identity")), "Jigsaw", "A-1B", "A-24B")
    assert (shaky["noise_threshold"], shaky["noise_check"], shaky["verdict"]) == (9, "fail", "fail")


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
    assert numbers["pass_checks_run"] == 0 and numbers["not_checked"] == len(analysis.cases)


def test_the_headline_count_is_the_cases_with_no_failed_check_and_one_run(controlled):
    numbers = controlled.summary["credibility"]
    verdicts = controlled.cases["verdict"]
    # 4 pass the option-order check, the only one the constructed runs allow (replication is no check: issue 26)
    assert numbers["pass_checks_run"] == int(verdicts.str.startswith("pass").sum()) == 4
    assert numbers["fail"] + numbers["pass_checks_run"] + numbers["not_checked"] == numbers["cases"] == 20


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_share_interval_is_scipys_exact_clopper_pearson(wins_trials):
    wins, trials = wins_trials
    low, high = share_interval(np.array([wins]), np.array([trials]))
    expected = stats.binomtest(wins, trials).proportion_ci(confidence_level=0.95, method="exact")
    assert low[0] == pytest.approx(expected.low, abs=1e-9) and high[0] == pytest.approx(expected.high, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(8, 600), st.sampled_from([0.05, 0.01]))
def test_the_minimum_detectable_net_is_where_the_exact_test_reaches_80_percent_power(discordant, alpha):
    net = min_detectable_net(np.array([discordant]), alpha)[0]
    critical = next(k for k in range(discordant + 1) if stats.binom.sf(k - 1, discordant, 0.5) <= alpha)
    pi = (net / discordant + 1) / 2
    assert stats.binom.sf(critical - 1, discordant, pi) == pytest.approx(0.8, abs=1e-6)
    assert stats.binom.sf(critical - 1, discordant, pi - 0.01) < 0.8


def test_too_few_discordant_questions_can_detect_no_net():
    # 4 discordant questions: even 4 of 4 has p = 1/16 > 0.05.
    assert np.isnan(min_detectable_net(np.array([4, 0]), 0.05)).all()
    assert not np.isnan(min_detectable_net(np.array([5]), 0.05)[0])
