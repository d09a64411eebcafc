"""Unsettled answers (postprocess/inverse_scaling/settlement.py) never decide a case silently: a letter the rules
withheld and no judge settled takes no side by default, each comparison carries its Net under every treatment and
its range over every resolution, and the extraction check is a worst case over every weak answer of a case."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from analysis_factory import constructed_table, models_frame
from hypothesis import given, settings
from hypothesis import strategies as st

from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.inverse_scaling.settlement import resolve, settled_by, withheld
from postprocess.logs.adjudications import rules_only

WITHHELD = json.dumps({"abstain_reason": "inconclusive"})


def analysed(table: pd.DataFrame, **overrides):
    return run_analysis(table, models_frame(), Parameters(**overrides))


def case(analysis, subtask: str, small: str, large: str) -> pd.Series | None:
    frame = analysis.comparisons
    found = frame[(frame["subtask"] == subtask) & (frame["small"] == small) & (frame["large"] == large)]
    return found.iloc[0] if len(found) else None


def with_tiers(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(extraction_tier=pd.array(["strict"] * len(table), dtype="string"),
                        candidate=pd.array([None] * len(table), dtype="string"),
                        extra=pd.array([None] * len(table), dtype="string"))


def withhold(table: pd.DataFrame, rows, candidate: str | None, judge_status: str | None = None) -> pd.DataFrame:
    """The rows' letters withheld by the rules (scored wrong, as scoring.score does), `candidate` kept."""
    table = table.copy()
    table.loc[rows, ["prediction", "extraction_tier"]] = pd.NA
    table.loc[rows, "correct"] = pd.Series(False, index=rows, dtype="boolean").mask(table.loc[rows, "gold"].isna())
    table.loc[rows, "match"] = "none"
    table.loc[rows, "candidate"] = candidate
    fields = {"abstain_reason": "inconclusive", **({"judge_status": judge_status} if judge_status else {})}
    table.loc[rows, "extra"] = json.dumps(fields)
    return table


def jigsaw_rows(table, model, correct: bool, count: int):
    rows = table.index[(table["model"] == model) & (table["subtask"] == "Jigsaw") & table["gold"].notna()
                       & (table["correct"] == correct)]
    return rows[:count]


# -- who settled an answer ------------------------------------------------------------------------------------

def test_a_withheld_letter_is_unsettled_until_a_judge_settles_it():
    table = with_tiers(constructed_table())
    rows = table.index[:4]
    base = withhold(table, rows, "A")
    assert withheld(base).loc[rows].all() and not withheld(base).drop(rows).any()
    # A judge's "no answer" settles it (wrong, as the paper counts a non-answer); a failed or unparsed call does not.
    assert not withheld(withhold(table, rows, "A", "no_answer")).loc[rows].any()
    assert withheld(withhold(table, rows, "A", "failed")).loc[rows].all()
    assert withheld(withhold(table, rows, "A", "unparsed")).loc[rows].all()
    assert list(settled_by(withhold(table, rows, "A", "no_answer")).loc[rows]) == ["judge"] * 4
    # A real non-answer of the rules stays wrong and settled.
    refused = base.copy()
    refused.loc[rows, "extra"] = json.dumps({"abstain_reason": "refusal"})
    assert not withheld(refused).any() and (settled_by(refused).loc[rows] == "rules").all()


def test_rules_only_makes_a_judge_settled_answer_unsettled_again():
    table = with_tiers(constructed_table())
    rows = table.index[:3]
    judged = table.copy()
    judged.loc[rows, "match"] = "judge"
    judged.loc[rows, "extraction_tier"] = "judge"
    judged.loc[rows, "extra"] = json.dumps({"abstain_reason": "inconclusive", "judge_status": "settled"})
    no_answer = withhold(table, table.index[3:5], "A", "no_answer")
    assert not withheld(judged).any() and not withheld(no_answer).any()
    assert withheld(rules_only(judged)).loc[rows].all()
    assert withheld(rules_only(no_answer)).loc[table.index[3:5]].all()


def test_resolve_scores_unsettled_answers_as_each_treatment_says():
    table = with_tiers(constructed_table())
    right = jigsaw_rows(table, "A-24B", True, 2)
    table = withhold(table, right, "A")  # the candidate is the gold ("A")
    assert resolve(table, "wrong").loc[right, "correct"].eq(False).all()
    assert resolve(table, "exclude").loc[right, "correct"].isna().all()
    assert resolve(table, "candidate").loc[right, "correct"].eq(True).all()
    assert list(resolve(table, "exclude").loc[right, "unsettled"]) == [2, 2]
    with pytest.raises(ValueError, match="unknown treatment"):
        resolve(table, "coin")


# -- what the comparisons carry -------------------------------------------------------------------------------

def test_the_larger_models_withheld_right_answers_make_no_case_by_default():
    # Alpha 1B vs 24B on Jigsaw: Net 8 by construction. 24B's withheld letters on 6 questions it answered right:
    # scored wrong (before), they make 6 more FlipInv flips on the questions 1B also got right.
    table = with_tiers(constructed_table())
    both_right = table.index[(table["subtask"] == "Jigsaw") & (table["model"] == "A-24B") & table["correct"].eq(True)]
    small_right = set(table.loc[(table["subtask"] == "Jigsaw") & (table["model"] == "A-1B") & table["correct"].eq(True),
                                "question_id"])
    rows = [i for i in both_right if table.at[i, "question_id"] in small_right][:6]
    table = withhold(table, pd.Index(rows), "A")
    wrong = case(analysed(table, unsettled="wrong"), "Jigsaw", "A-1B", "A-24B")
    default = case(analysed(table), "Jigsaw", "A-1B", "A-24B")
    candidate = case(analysed(table, unsettled="candidate"), "Jigsaw", "A-1B", "A-24B")
    assert wrong["net"] == 14 and default["net"] == 8 and candidate["net"] == 8
    assert default["n"] == wrong["n"] - 6
    for row in (wrong, default, candidate):
        assert (row["net_if_unsettled_wrong"], row["net_if_unsettled_candidate"], row["net_if_unsettled_excluded"]) == (
            14, 8, 8)
        assert (row["net_unsettled_min"], row["net_unsettled_max"]) == (8, 14)
        assert (row["unsettled_small"], row["unsettled_large"]) == (0, 6)


def test_report_summary_counts_unsettled_answers_and_how_they_were_treated():
    table = with_tiers(constructed_table())
    table = withhold(table, jigsaw_rows(table, "A-24B", True, 3), "A")
    summary = analysed(table).summary["unsettled"]
    assert (summary["treatment"], summary["unsettled"], summary["with_candidate"], summary["candidate_is_gold"]) == (
        "exclude", 3, 3, 3)
    counts = analysed(table).unsettled
    row = counts[(counts["model"] == "A-24B") & (counts["benchmark"] == "BLINK")].iloc[0]
    assert row["unsettled"] == 3


@st.composite
def pair_tables(draw):
    """Two models of family Gamma on one subtask, each answer right, wrong or unsettled (candidate right or not)."""
    n = draw(st.integers(1, 40))
    states = draw(st.lists(st.tuples(st.sampled_from("rwRW."), st.sampled_from("rwRW.")), min_size=n, max_size=n))
    models = models_frame()
    gamma = models[models["family"] == "Gamma"].reset_index(drop=True)
    rows = []
    for q, pair in enumerate(states):
        for position, state in enumerate(pair):
            if state == ".":
                continue
            unsettled = state in "RW"
            rows.append({**gamma.iloc[position].to_dict(), "benchmark": "BLINK", "split": "val", "subtask": "Jigsaw",
                         "question_id": f"q{q}", "variant": "direct", "gold": "A",
                         "prediction": None if unsettled else ("A" if state == "r" else "B"),
                         "correct": state == "r", "match": "none" if unsettled else "letter",
                         "extraction_tier": None if unsettled else "strict",
                         "candidate": {"R": "A", "W": "B"}.get(state),
                         "extra": WITHHELD if unsettled else None})
    table = pd.DataFrame(rows)
    if table.empty:
        return table, states
    table["correct"] = table["correct"].astype("boolean")
    return table, states


def _net_of(states, resolution) -> tuple[int, int]:
    """(n, Net) of the pair when answer (question, side) in state s takes resolution(s, question, side)'s value
    (None: excluded)."""
    n = net = 0
    for q, (small, large) in enumerate(states):
        a, b = resolution(small, q, 0), resolution(large, q, 1)
        if a is None or b is None:
            continue
        n += 1
        net += int(a) - int(b)
    return n, net


SETTLED = {"r": True, "w": False, ".": None}


@settings(max_examples=150, deadline=None)
@given(pair_tables(), st.randoms(use_true_random=False), st.sampled_from(["exclude", "wrong", "candidate"]))
def test_resolving_unsettled_answers_moves_net_only_inside_its_range(drawn, rng, treatment):
    table, states = drawn
    if table.empty:
        return
    comparisons = analysed(table, min_n=1, min_net=1, unsettled=treatment).comparisons
    if comparisons.empty:
        return
    row = comparisons.iloc[0]
    # Every resolution (each unsettled answer right or wrong at random) lies in the stated range, and both ends
    # are reached.
    for _ in range(20):
        picks = {(q, side): rng.random() < .5 for q in range(len(states)) for side in (0, 1)}
        _, net = _net_of(states, lambda s, q, side: SETTLED[s] if s in SETTLED else picks[q, side])
        assert row["net_unsettled_min"] <= net <= row["net_unsettled_max"]
    best = _net_of(states, lambda s, q, side: SETTLED[s] if s in SETTLED else side == 0)[1]
    worst = _net_of(states, lambda s, q, side: SETTLED[s] if s in SETTLED else side == 1)[1]
    assert (row["net_unsettled_min"], row["net_unsettled_max"]) == (worst, best)
    expected = {"excluded": lambda s, q, side: SETTLED[s] if s in SETTLED else None,
                "wrong": lambda s, q, side: SETTLED[s] if s in SETTLED else False,
                "candidate": lambda s, q, side: SETTLED[s] if s in SETTLED else s == "R"}
    for name, resolution in expected.items():
        assert row[f"net_if_unsettled_{name}"] == _net_of(states, resolution)[1]
    n, net = _net_of(states, expected["excluded" if treatment == "exclude" else treatment])
    assert (row["n"], row["net"]) == (n, net)
    assert row["net_unsettled_min"] <= row["net"] <= row["net_unsettled_max"]


@settings(max_examples=100, deadline=None)
@given(pair_tables())
def test_exclude_never_creates_a_flip(drawn):
    table, _ = drawn
    if table.empty:
        return
    excluded = analysed(table, min_n=1, min_net=1).comparisons
    for other in ("wrong", "candidate"):
        compared = analysed(table, min_n=1, min_net=1, unsettled=other).comparisons
        if excluded.empty:
            continue
        assert (excluded["flip_inv"].to_numpy() <= compared["flip_inv"].to_numpy()).all()
        assert (excluded["flip_norm"].to_numpy() <= compared["flip_norm"].to_numpy()).all()


@settings(max_examples=100, deadline=None)
@given(pair_tables(), st.integers(1, 6), st.integers(1, 10))
def test_a_case_that_depends_on_the_unsettled_answers_is_marked(drawn, min_net, min_n):
    table, _ = drawn
    if table.empty:
        return
    found = {t: analysed(table, min_n=min_n, min_net=min_net, unsettled=t).comparisons
             for t in ("exclude", "wrong", "candidate")}
    keys = {t: set(frame.loc[frame["case"], CASE_KEY].itertuples(index=False, name=None)) for t, frame in found.items()}
    marked = set(found["exclude"].loc[found["exclude"]["unsettled_decides"], CASE_KEY].itertuples(index=False,
                                                                                                   name=None))
    for other in ("wrong", "candidate"):
        assert keys[other] ^ keys["exclude"] <= marked


# -- the extraction check -------------------------------------------------------------------------------------

def verdict(table, **overrides) -> pd.Series:
    cases = analysed(table, **overrides).cases
    found = cases[(cases["subtask"] == "Jigsaw") & (cases["small"] == "A-1B") & (cases["large"] == "A-24B")]
    return found.iloc[0]


def flip_rows(table, direction: str, side: str, count: int):
    """Rows of one side of the FlipInv / FlipNorm flips of Alpha 1B vs 24B on Jigsaw."""
    jig = table[(table["subtask"] == "Jigsaw") & table["gold"].notna()]
    small = jig[jig["model"] == "A-1B"].set_index("question_id")["correct"]
    large = jig[jig["model"] == "A-24B"].set_index("question_id")["correct"]
    shared = small.index.intersection(large.index)
    wanted = (small[shared] & ~large[shared]) if direction == "FlipInv" else (~small[shared] & large[shared])
    questions = list(shared[wanted.to_numpy(dtype=bool)])[:count]
    model = "A-1B" if side == "small" else "A-24B"
    return table.index[(table["model"] == model) & (table["subtask"] == "Jigsaw") & table["question_id"].isin(questions)]


def test_a_weak_letter_on_the_smaller_models_side_of_a_flipinv_lowers_the_worst_case():
    table = with_tiers(constructed_table())
    assert verdict(table)["worst_case_net"] == 8
    table.loc[flip_rows(table, "FlipInv", "small", 2), "extraction_tier"] = "reading"
    assert verdict(table)["worst_case_net"] == 6


def test_weak_flipnorm_flips_leave_the_worst_case_unchanged():
    table = with_tiers(constructed_table())
    table.loc[flip_rows(table, "FlipNorm", "small", 2), "extraction_tier"] = "reading"
    table.loc[flip_rows(table, "FlipNorm", "large", 2), "extraction_tier"] = "reading"
    assert verdict(table)["worst_case_net"] == 8


def test_a_worst_case_of_exactly_min_net_passes():
    table = with_tiers(constructed_table())
    table.loc[flip_rows(table, "FlipInv", "large", 3), "extraction_tier"] = "reading"
    row = verdict(table)
    assert (row["worst_case_net"], row["extraction_check"]) == (5, "pass")
    table.loc[flip_rows(table, "FlipInv", "large", 4), "extraction_tier"] = "reading"
    assert (verdict(table)["worst_case_net"], verdict(table)["extraction_check"]) == (4, "fail")


def test_agreeing_questions_whose_weak_letter_could_make_a_flipnorm_count_against_the_case():
    table = with_tiers(constructed_table())
    jig = table[(table["subtask"] == "Jigsaw") & table["gold"].notna()]
    small = jig[jig["model"] == "A-1B"].set_index("question_id")["correct"]
    large = jig[jig["model"] == "A-24B"].set_index("question_id")["correct"]
    shared = small.index.intersection(large.index)
    both_right = list(shared[(small[shared] & large[shared]).to_numpy(dtype=bool)])[:2]
    # Both right: the smaller model's weak letter could be wrong, which makes a FlipNorm.
    table.loc[(table["model"] == "A-1B") & table["question_id"].isin(both_right), "extraction_tier"] = "reading"
    assert verdict(table)["worst_case_net"] == 6
    # The larger model's weak letter on a question both got right could only make a FlipInv: unchanged.
    other = with_tiers(constructed_table())
    other.loc[(other["model"] == "A-24B") & other["question_id"].isin(both_right) & (other["subtask"] == "Jigsaw"),
              "extraction_tier"] = "reading"
    assert verdict(other)["worst_case_net"] == 8


def test_an_unsettled_answer_on_either_side_of_a_flipinv_is_removed_under_wrong():
    table = with_tiers(constructed_table())
    table = withhold(table, flip_rows(table, "FlipInv", "large", 2), "B")
    row = verdict(table, unsettled="wrong")
    assert (row["net"], row["worst_case_net"]) == (8, 6)


def test_excluded_unsettled_questions_that_could_be_flipnorm_lower_the_worst_case():
    # 24B's withheld letters on two questions 1B got wrong: excluded, each could be a FlipNorm.
    table = with_tiers(constructed_table())
    jig = table[(table["subtask"] == "Jigsaw") & table["gold"].notna()]
    small = jig[jig["model"] == "A-1B"].set_index("question_id")["correct"]
    wrong_small = set(small.index[~small.to_numpy(dtype=bool)])
    rows = table.index[(table["model"] == "A-24B") & (table["subtask"] == "Jigsaw")
                       & table["question_id"].isin(wrong_small) & table["correct"].eq(False)][:2]
    table = withhold(table, rows, "A")
    row = verdict(table)
    assert row["net"] == 8 and row["net_unsettled_min"] == 6 and row["worst_case_net"] == 6


def test_letters_read_by_another_harness_make_the_extraction_check_not_run():
    table = with_tiers(constructed_table())
    table.loc[(table["model"] == "A-24B") & (table["subtask"] == "Jigsaw"), "extraction_tier"] = "external"
    row = verdict(table)
    assert row["extraction_check"] == "not run" and np.isnan(row["worst_case_net"])


def test_answers_parquet_lists_every_answer_with_who_settled_it_and_how_it_counts():
    from postprocess.inverse_scaling.settlement import ANSWER_COLUMNS, answers_table

    table = with_tiers(constructed_table())
    rows = jigsaw_rows(table, "A-24B", True, 2)
    table = withhold(table, rows, "A")
    answers = answers_table(table, "exclude")
    assert list(answers.columns) == ANSWER_COLUMNS and len(answers) == len(table)
    withheld_rows = answers.iloc[[table.index.get_loc(i) for i in rows]]
    assert list(withheld_rows["settled_by"]) == ["unsettled", "unsettled"]
    assert withheld_rows["correct"].isna().all() and not withheld_rows["correct_as_read"].any()
    assert list(withheld_rows["candidate"]) == ["A", "A"] and list(withheld_rows["abstain_reason"]) == ["inconclusive"] * 2
    assert answers_table(table, "candidate").iloc[[table.index.get_loc(i) for i in rows]]["correct"].all()
