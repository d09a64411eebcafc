"""Benjamini-Hochberg correction of the McNemar p-values (paper Appendix D).

The same p-values are corrected twice: over the reported cases only (`q_cases`, `bh_cases`) and,
more conservatively, over every eligible comparison the cases were selected from (`q_all`,
`bh_all`). The mirrored test (larger model wins the discordant questions) is corrected over all
eligible comparisons as well (`q_larger_all`, `bh_larger_all`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def benjamini_hochberg(p_values: np.ndarray, fdr: float) -> tuple[np.ndarray, np.ndarray]:
    """(reject, q-values) of the Benjamini-Hochberg procedure at false discovery rate `fdr`.

    The computation of statsmodels' multipletests(method="fdr_bh"), step for step
    (tests/postprocess/test_stats.py checks they agree): importing statsmodels.stats.multitest imports scipy.stats, half a second of a report's run."""
    p_values = np.asarray(p_values, dtype=float)
    m = p_values.size
    if m == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    order = np.argsort(p_values)
    ranked = p_values[order]
    ecdf = np.arange(1, m + 1) / m
    below = np.nonzero(ranked <= ecdf * fdr)[0]
    reject_ranked = np.zeros(m, dtype=bool)
    if below.size:
        reject_ranked[: below[-1] + 1] = True  # step-up: every p-value up to the largest one below its line
    q_ranked = np.minimum(np.minimum.accumulate((ranked / ecdf)[::-1])[::-1], 1.0)
    reject, q_values = np.empty(m, dtype=bool), np.empty(m)
    reject[order], q_values[order] = reject_ranked, q_ranked
    return reject, q_values


def _corrected(frame: pd.DataFrame, within: pd.Series, p_column: str, fdr: float) -> tuple[pd.Series, pd.Series]:
    reject, q_values = benjamini_hochberg(frame.loc[within, p_column].to_numpy(), fdr)
    q = pd.Series(np.nan, index=frame.index)
    q[within] = q_values
    significant = pd.Series(False, index=frame.index)
    significant[within] = reject
    return q, significant


def add_significance(comparisons: pd.DataFrame, fdr: float) -> pd.DataFrame:
    """Copy of `comparisons` (with `eligible` and `case` columns) plus q-values and BH decisions.

    Rows outside a correction family get q = NaN and False.
    """
    frame = comparisons.copy()
    frame["q_cases"], frame["bh_cases"] = _corrected(frame, frame["case"], "p_value", fdr)
    frame["q_all"], frame["bh_all"] = _corrected(frame, frame["eligible"], "p_value", fdr)
    frame["q_larger_all"], frame["bh_larger_all"] = _corrected(frame, frame["eligible"], "p_larger", fdr)
    return frame
