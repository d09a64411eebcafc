"""The pairwise flip analysis against flips known by construction and an independent pandas
implementation (perf/reference.py)."""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from analysis_factory import (
    CONSTRUCTED,
    EXPECTED_BY_FAMILY,
    EXPECTED_CASES,
    EXPECTED_ELIGIBLE,
    constructed_table,
    expand,
    models_frame,
    random_table,
)
from postprocess.inverse_scaling.compare import build_outcomes, family_pairs, mcnemar_greater
from postprocess.inverse_scaling.compare import compare as compare_table
from postprocess.inverse_scaling.parameters import Parameters

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "perf"))
from reference import compare_reference  # noqa: E402

KEY = ["family", "benchmark", "split", "subtask", "small", "large"]
PAPER = Parameters()


def compare(table: pd.DataFrame, models: pd.DataFrame, **thresholds) -> pd.DataFrame:
    """The comparison at the paper's thresholds unless overridden."""
    return compare_table(table, models, **{"variant": PAPER.variant, "min_n": PAPER.min_n, "min_net": PAPER.min_net,
                                          **thresholds})


def expected_from_blocks() -> pd.DataFrame:
    """n, FI, FN straight from the block patterns, pair by pair."""
    models = models_frame()
    rows = []
    for (benchmark, split, subtask), families in CONSTRUCTED.items():
        for family, blocks in families.items():
            names = models.loc[models["family"] == family, "model"].tolist()
            patterns = expand(blocks)
            for i, j in combinations(range(len(names)), 2):
                shared = [p for p in patterns if p[i] in "01" and p[j] in "01"]
                if shared:
                    rows.append(
                        {
                            "family": family, "benchmark": benchmark, "split": split, "subtask": subtask,
                            "small": names[i], "large": names[j], "n": len(shared),
                            "flip_inv": sum(p[i] == "1" and p[j] == "0" for p in shared),
                            "flip_norm": sum(p[i] == "0" and p[j] == "1" for p in shared),
                        }
                    )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def comparisons() -> pd.DataFrame:
    return compare(constructed_table(), models_frame())


def test_flip_counts_match_the_construction(comparisons):
    got = comparisons[[*KEY, "n", "flip_inv", "flip_norm"]]
    expected = expected_from_blocks()
    merged = expected.merge(got, on=KEY, how="outer", suffixes=("_expected", ""), indicator=True)
    assert (merged["_merge"] == "both").all()
    for column in ["n", "flip_inv", "flip_norm"]:
        assert (merged[column] == merged[f"{column}_expected"]).all(), column


def test_hand_checked_case(comparisons):
    row = comparisons.set_index(KEY).loc[("Alpha", "BLINK", "val", "Jigsaw", "A-1B", "A-16B-A2B")]
    assert (row["n"], row["flip_inv"], row["flip_norm"], row["net"]) == (30, 10, 2, 8)
    assert row["acc_small"] == pytest.approx(100 * 25 / 30)
    assert row["acc_large"] == pytest.approx(100 * 17 / 30)
    assert row["acc_delta"] == pytest.approx(100 * 8 / 30)
    assert row["p_value"] == pytest.approx(79 / 4096)  # P(Bin(12, 1/2) >= 10)
    assert row["p_larger"] == pytest.approx(4083 / 4096)  # P(Bin(12, 1/2) >= 2)
    assert row["eligible"] and row["case"]


def test_case_and_eligibility_counts(comparisons):
    assert comparisons["eligible"].sum() == EXPECTED_ELIGIBLE
    assert comparisons["case"].sum() == EXPECTED_CASES
    assert comparisons[comparisons["case"]].groupby("family").size().to_dict() == EXPECTED_BY_FAMILY


def test_missing_gold_and_missing_rows_are_not_shared(comparisons):
    indexed = comparisons.set_index(KEY)
    assert indexed.loc[("Alpha", "MMMU", "test", "Art", "A-1B", "A-24B"), "n"] == 20  # 5 without gold
    assert indexed.loc[("Beta", "MME", "test", "Scene", "B-2B", "B-12B"), "n"] == 30  # 10 rows absent
    assert indexed.loc[("Beta", "MME", "test", "Scene", "B-2B", "B-8B"), "n"] == 40


def test_threshold_edges(comparisons):
    indexed = comparisons.set_index(KEY)
    tiny = indexed.loc[("Alpha", "BLINK", "val", "Tiny", "A-1B", "A-4B")]
    assert tiny["net"] == 8 and not tiny["eligible"] and not tiny["case"]  # n = 10
    at_edges = indexed.loc[("Beta", "MMMU", "dev_val", "Art", "B-8B", "B-12B")]
    assert (at_edges["n"], at_edges["net"], at_edges["case"]) == (20, 5, True)  # n = min_n, Net = min_net


def test_thresholds_are_parameters():
    stricter = compare(constructed_table(), models_frame(), min_n=25, min_net=8)
    assert stricter["eligible"].sum() == 20  # only Jigsaw (n = 30) and Scene (n >= 30) remain
    assert set(stricter.loc[stricter["case"], "net"]) == {8}


def test_pairs_are_within_family_smaller_first():
    pairs = family_pairs(models_frame())
    assert len(pairs) == 6 + 3 + 1
    totals = models_frame().set_index("model")["total_params"]
    assert (totals[pairs["small"]].to_numpy() < totals[pairs["large"]].to_numpy()).all()
    flags = pairs.set_index(["small", "large"])
    assert not flags.loc[("A-4B", "A-16B-A2B"), "twofold_active"]  # 2B active < 2 x 4B
    assert flags.loc[("A-1B", "A-16B-A2B"), "twofold_active"]
    assert not flags.loc[("A-16B-A2B", "A-24B"), "twofold_total"]
    assert not flags.loc[("A-1B", "A-16B-A2B"), "dense"]
    assert not flags.loc[("A-1B", "A-24B"), "same_encoder_tier"]
    assert flags.loc[("A-1B", "A-24B"), "extreme"] and not flags.loc[("A-1B", "A-4B"), "extreme"]
    assert flags["adjacent"].sum() == 3 + 2 + 1


def test_unknown_encoder_tiers_are_not_the_same_tier():
    models = models_frame()
    models.loc[models["family"] == "Beta", "encoder_tier"] = None
    pairs = family_pairs(models)
    assert not pairs.loc[pairs["family"] == "Beta", "same_encoder_tier"].any()


def test_family_rank_decides_order_over_total_params():
    models = models_frame().assign(family_rank=lambda m: m.groupby("family").cumcount())
    models.loc[models["model"] == "A-24B", "family_rank"] = -1  # declared smallest
    pairs = family_pairs(models)
    assert ("A-24B", "A-1B") in set(zip(pairs["small"], pairs["large"]))


@pytest.mark.parametrize("categorical", [False, True])
def test_agrees_with_reference(categorical):
    table = constructed_table(with_controls=True, categorical=categorical)
    ours = compare(table, models_frame())
    reference = compare_reference(table, models_frame())
    merged = ours.merge(reference, on=KEY, suffixes=("", "_ref"))
    assert len(merged) == len(ours) == len(reference)
    for column in ["n", "flip_inv", "flip_norm", "net", "eligible", "case"]:
        assert (merged[column] == merged[f"{column}_ref"]).all(), column
    for column in ["acc_small", "acc_large", "acc_delta", "p_value"]:
        np.testing.assert_allclose(merged[column], merged[f"{column}_ref"], rtol=1e-12)


def test_other_variant_is_compared_on_its_own_rows():
    cot = compare(constructed_table(with_controls=True), models_frame(), variant="cot")
    row = cot.set_index(KEY).loc[("Gamma", "BLINK", "val", "Jigsaw", "G-3B", "G-7B")]
    assert (row["flip_inv"], row["flip_norm"], row["net"]) == (1, 6, -5)
    assert set(cot["subtask"]) == {"Jigsaw"}


def test_duplicated_answers_are_rejected():
    table = constructed_table()
    with pytest.raises(ValueError, match="more than once"):
        build_outcomes(pd.concat([table, table.iloc[:1]]), models_frame()["model"].tolist())


def test_unknown_model_is_rejected():
    table = constructed_table()
    table.loc[0, "model"] = "Z-1B"
    with pytest.raises(ValueError, match="Z-1B"):
        build_outcomes(table, models_frame()["model"].tolist())


def test_mcnemar_without_discordant_questions_is_one():
    assert mcnemar_greater(np.array([0, 0]), np.array([0, 3])).tolist() == [1.0, 1.0]


def test_a_family_whose_models_share_no_question_has_no_comparisons():
    """Hypothesis once drew this shape (2 models, 5 questions, 1 subtask): both implementations return nothing."""
    table, models = random_table(np.random.default_rng(0), 2, 5, 1)
    first, second = models["model"]
    table = table[(table["model"] == first) == table["question_id"].isin(["q0", "q1", "q2"])]
    assert set(table.loc[table["model"] == second, "question_id"]) <= {"q3", "q4"}
    assert compare(table, models, min_n=1).empty
    assert compare_reference(table, models, min_n=1).empty


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_models=st.integers(2, 4),
    n_questions=st.integers(5, 80),
    n_subtasks=st.integers(1, 4),
    min_n=st.integers(1, 10),
)
def test_properties_on_random_tables(seed, n_models, n_questions, n_subtasks, min_n):
    table, models = random_table(np.random.default_rng(seed), n_models, n_questions, n_subtasks)
    ours = compare(table, models, min_n=min_n, min_net=1)
    reference = compare_reference(table, models, min_n=min_n, min_net=1)
    assert len(ours) == len(reference)
    merged = ours.merge(reference, on=KEY, suffixes=("", "_ref"))
    assert len(merged) == len(ours)
    assert (merged[["n", "flip_inv", "flip_norm", "case"]].to_numpy() ==
            merged[["n_ref", "flip_inv_ref", "flip_norm_ref", "case_ref"]].to_numpy()).all()  # fmt: skip
    assert (ours["flip_inv"] + ours["flip_norm"] <= ours["n"]).all()

    # Net is the difference of the two models' correct counts on the shared questions.
    known = table[table["correct"].notna()]

    def right(model: str, subtask: str) -> pd.Series:
        rows = known[(known["model"] == model) & (known["subtask"] == subtask)]
        return rows.set_index("question_id")["correct"].astype(bool)

    for row in ours.itertuples():
        small, large = right(row.small, row.subtask), right(row.large, row.subtask)
        shared = small.index.intersection(large.index)
        assert len(shared) == row.n
        assert int(small[shared].sum()) - int(large[shared].sum()) == row.net
        discordant = row.flip_inv + row.flip_norm
        expected_p = binomtest(row.flip_inv, discordant, alternative="greater").pvalue if discordant else 1.0
        assert row.p_value == pytest.approx(expected_p, rel=1e-9)
