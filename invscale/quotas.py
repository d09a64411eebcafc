"""Whole-number quotas from shares: the human task sets' strata, the error-taxonomy sample's datasets and
cait-build's Table 1 category counts all split a total this one way."""

from __future__ import annotations

import numpy as np
import pandas as pd


def largest_remainder(sizes: pd.Series, total: int) -> pd.Series:
    """`total` spread over cells in proportion to `sizes` (Hamilton's method; ties go to the earlier
    cell). Never more than a cell holds, as total <= sizes.sum()."""
    if sizes.empty:
        return sizes
    exact = sizes * total / sizes.sum()
    allocation = np.floor(exact).astype(int)
    remainder = (exact - allocation).sort_values(ascending=False, kind="stable")
    for key in remainder.index[: total - int(allocation.sum())]:
        allocation[key] += 1
    return allocation
