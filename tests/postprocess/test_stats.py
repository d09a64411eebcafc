"""Benjamini-Hochberg over the cases and over all eligible comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from analysis_factory import constructed_table, models_frame
from postprocess.inverse_scaling.compare import compare
from postprocess.inverse_scaling.stats import add_significance, benjamini_hochberg


def textbook_bh(p: np.ndarray, fdr: float) -> tuple[np.ndarray, np.ndarray]:
    """Step-up BH: reject the k smallest p-values, k the largest rank with p_(k) <= k q / m."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    below = np.nonzero(ranked <= np.arange(1, m + 1) * fdr / m)[0]
    reject = np.zeros(m, dtype=bool)
    if below.size:
        reject[order[: below[-1] + 1]] = True
    adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    q = np.empty(m)
    q[order] = np.minimum(adjusted, 1.0)
    return reject, q


@settings(max_examples=60, deadline=None)
@given(
    p=st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=60),
    fdr=st.sampled_from([0.01, 0.05, 0.1]),
)
def test_bh_agrees_with_statsmodels_and_the_textbook_procedure(p, fdr):
    p = np.array(p)
    reject, q = benjamini_hochberg(p, fdr)
    sm_reject, sm_q, _, _ = multipletests(p, alpha=fdr, method="fdr_bh")
    assert (reject == sm_reject).all()
    np.testing.assert_allclose(q, sm_q)
    tb_reject, tb_q = textbook_bh(p, fdr)
    np.testing.assert_allclose(q, tb_q, rtol=1e-12, atol=1e-15)
    # Decisions can differ from the textbook only on ties at the boundary within float rounding.
    assert (reject == tb_reject).all() or np.isclose(np.sort(p), fdr * np.arange(1, len(p) + 1) / len(p)).any()


def test_empty_input():
    reject, q = benjamini_hochberg(np.array([]), 0.05)
    assert reject.shape == q.shape == (0,)


@pytest.fixture(scope="module")
def significance():
    return add_significance(compare(constructed_table(), models_frame(), variant="direct", min_n=20, min_net=5), fdr=0.05)


def test_corrections_cover_their_own_families(significance):
    cases = significance[significance["case"]]
    eligible = significance[significance["eligible"]]
    reject, q = textbook_bh(cases["p_value"].to_numpy(), 0.05)
    np.testing.assert_allclose(cases["q_cases"], q)
    assert (cases["bh_cases"].to_numpy() == reject).all()
    reject, q = textbook_bh(eligible["p_value"].to_numpy(), 0.05)
    np.testing.assert_allclose(eligible["q_all"], q)
    assert (eligible["bh_all"].to_numpy() == reject).all()
    reject, q = textbook_bh(eligible["p_larger"].to_numpy(), 0.05)
    assert (eligible["bh_larger_all"].to_numpy() == reject).all()
    outside = significance[~significance["case"]]
    assert outside["q_cases"].isna().all() and not outside["bh_cases"].any()
    ineligible = significance[~significance["eligible"]]
    assert ineligible["q_all"].isna().all() and not ineligible["bh_all"].any()


def test_constructed_significance(significance):
    indexed = significance.set_index(["family", "split", "subtask", "small", "large"])
    zigzag = indexed.loc[("Alpha", "dev_val", "Art", "A-4B", "A-16B-A2B")]  # FI 20, FN 0
    assert zigzag["p_value"] == pytest.approx(2.0**-20)
    assert zigzag["bh_cases"] and zigzag["bh_all"]
    weak = indexed.loc[("Gamma", "val", "Jigsaw", "G-3B", "G-7B")]  # FI 6, FN 1: p = 8/128
    assert weak["p_value"] == pytest.approx(8 / 128)
    assert not weak["bh_cases"]
    # The larger model winning all 40 Scene questions is significant under the mirrored test.
    assert indexed.loc[("Gamma", "test", "Scene", "G-3B", "G-7B"), "bh_larger_all"]
