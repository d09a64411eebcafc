"""Family-wide trend of correctness in model size, per family x subtask (ours: the paper compares pairs only).

The model: the linear-probability GEE of correctness on log2 total parameters with question clusters and an
independence working correlation,

    correct[q, m] = a + b * log2(total_params[m]) + e[q, m],   Var(b) by the cluster-robust sandwich,

fitted on the questions every model of the family answered with a known gold (so each question is its own
control, as McNemar's pairing is). `b` is the change in accuracy per doubling of size, in the reader's units.
On such a balanced design b and its sandwich variance have a closed form: with x_m centred, the per-question
contrast c_q = sum_m x_m * correct[q, m] gives b = mean(c) / Sxx and Var(b) = var(c) / (n * Sxx^2), so the
test is the one-sample t-test of the contrasts (the repeated-measures linear-trend contrast). We use its
small-sample form (variance with n - 1, Student t with n - 1 df: the sandwich times n / (n - 1), the usual
CR1 correction); tests/postprocess/test_trend.py checks b and the standard error against statsmodels' GEE.
It is computed for every family x subtask at once with bincounts, which keeps it a few tens of milliseconds
at paper scale. Calibration and power: perf/trend_calibration.py, docs/analysis.md.

Both directions are tested: `p_value` is two-sided, corrected by Benjamini-Hochberg over every tested family x
subtask (`q_value`); `trend` is "decline" or "rise" where q <= fdr (by the sign of b), else "none".
`p_decline` and `p_rise` are the one-sided p-values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import stdtr, stdtrit

from postprocess.inverse_scaling.compare import GROUP_KEY, MISSING, Outcomes
from postprocess.inverse_scaling.stats import benjamini_hochberg

MIN_SIZES = 3  # distinct sizes for a trend: two sizes are one pair, which McNemar already tests
TREND_COLUMNS = [
    "family", *GROUP_KEY, "models", "sizes", "n", "slope_pp", "ci_low_pp", "ci_high_pp",
    "p_value", "p_decline", "p_rise", "q_value", "trend",
]  # fmt: skip
POINT_COLUMNS = ["family", *GROUP_KEY, "model", "log2_params", "accuracy"]
CASE_TREND_COLUMNS = ["trend_slope_pp", "trend_q", "trend_placement"]
DECLINE, RISE, NONE = "decline", "rise", "none"
PLACEMENTS = {
    "with": "part of a family-wide decline",
    "single": "a single pair",
    "against": "against the family's trend",
    "untested": "no trend test",
}


def _fit(contrasts: np.ndarray, codes: np.ndarray, n_groups: int, sxx: float, level: float) -> dict:
    """Slope, CI and p-values per group from the per-question contrasts of one set of models."""
    n = np.bincount(codes, minlength=n_groups).astype(float)
    total = np.bincount(codes, weights=contrasts, minlength=n_groups)
    squares = np.bincount(codes, weights=contrasts**2, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        variance = np.maximum(squares - n * mean**2, 0.0) / (n - 1)
        slope = mean / sxx
        se = np.sqrt(variance / n) / sxx
        t = slope / se
    df = np.maximum(n - 1, 1)
    # No spread in the contrasts: every question moves alike, so the slope is certain (0: no trend at all).
    exact = se == 0
    t = np.where(exact, 0.0, t)
    p_decline = np.where(exact, np.where(slope < 0, 0.0, 1.0), stdtr(df, t))
    p_rise = np.where(exact, np.where(slope > 0, 0.0, 1.0), stdtr(df, -t))
    half = stdtrit(df, 0.5 + level / 2) * np.where(exact, 0.0, se)
    return {"n": n, "slope": slope, "low": slope - half, "high": slope + half, "p_decline": p_decline,
            "p_rise": p_rise}


def family_trends(outcomes: Outcomes, models: pd.DataFrame, variant: str, *, min_n: int, fdr: float,
                  level: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trends, points): one TREND_COLUMNS row per family x subtask with >= MIN_SIZES distinct sizes among the
    family's models that answered it and >= min_n questions all of them answered; points: each such model's
    accuracy (%) on those shared questions (POINT_COLUMNS), for the figure. `models`: family then size order."""
    values = outcomes.values[outcomes.variant_index(variant)]
    n_groups = len(outcomes.groups)
    group = outcomes.question_group
    rows, points = [], []
    for family, members in models.groupby("family", sort=False):
        index = np.array([outcomes.model_index(m) for m in members["model"]])
        sizes = np.log2(members["total_params"].to_numpy(dtype=float))
        family_values = values[index]
        answered = np.stack([np.bincount(group, weights=v != MISSING, minlength=n_groups) > 0
                             for v in family_values])  # (models, groups)
        # Groups answered by the same models share one fit; nearly always that is the whole family.
        patterns, pattern_of_group = np.unique(answered.T, axis=0, return_inverse=True)
        pattern_of_group = pattern_of_group.ravel()
        for p, pattern in enumerate(patterns):
            if len(np.unique(sizes[pattern])) < MIN_SIZES:
                continue
            in_pattern = pattern_of_group[group] == p
            chosen = family_values[pattern][:, in_pattern]
            shared = (chosen != MISSING).all(axis=0)
            right = chosen[:, shared].astype(float)
            x = sizes[pattern] - sizes[pattern].mean()
            codes = group[in_pattern][shared]
            fit = _fit(x @ right, codes, n_groups, float(x @ x), level)
            tested = np.nonzero((pattern_of_group == p) & (fit["n"] >= max(min_n, 2)))[0]
            correct = np.stack([np.bincount(codes, weights=r, minlength=n_groups) for r in right])[:, tested]
            names = members["model"].to_numpy()[pattern]
            rows.append(pd.DataFrame({"family": family, "group": tested, "models": len(names),
                                      "sizes": ", ".join(map(str, members["size"].to_numpy()[pattern])),
                                      **{k: v[tested] for k, v in fit.items()}}))
            points.append(pd.DataFrame({"family": family, "group": np.repeat(tested, len(names)),
                                        "model": np.tile(names, len(tested)),
                                        "log2_params": np.tile(sizes[pattern], len(tested)),
                                        "accuracy": (100.0 * correct / fit["n"][tested]).T.ravel()}))
    points = pd.concat(points, ignore_index=True) if points else pd.DataFrame()
    return _trend_frame(rows, outcomes.groups, fdr), _with_groups(points, outcomes.groups, POINT_COLUMNS)


def _with_groups(frame: pd.DataFrame, groups: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=columns)
    labels = groups.iloc[frame["group"].to_numpy()].reset_index(drop=True)
    frame = frame.reset_index(drop=True)
    for column in GROUP_KEY:
        frame[column] = labels[column]
    return frame.sort_values(["family", "group"], kind="stable", key=_family_key(frame))[columns].reset_index(drop=True)


def _family_key(frame: pd.DataFrame):
    order = {f: i for i, f in enumerate(dict.fromkeys(frame["family"]))}
    return lambda column: column.map(order) if column.name == "family" else column


def _trend_frame(rows: list[pd.DataFrame], groups: pd.DataFrame, fdr: float) -> pd.DataFrame:
    frame = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame(columns=TREND_COLUMNS)
    frame["n"] = frame["n"].astype(int)
    for name, column in (("slope", "slope_pp"), ("low", "ci_low_pp"), ("high", "ci_high_pp")):
        frame[column] = 100.0 * frame[name]
    frame["p_value"] = np.minimum(1.0, 2.0 * np.minimum(frame["p_decline"], frame["p_rise"]))
    reject, frame["q_value"] = benjamini_hochberg(frame["p_value"].to_numpy(), fdr)
    frame["trend"] = np.where(reject, np.where(frame["slope"] < 0, DECLINE, RISE), NONE)
    return _with_groups(frame, groups, TREND_COLUMNS)


def place_cases(cases: pd.DataFrame, trends: pd.DataFrame) -> pd.DataFrame:
    """`cases` plus CASE_TREND_COLUMNS: its family x subtask's slope and q, and where the case stands against
    the trend. A case (the larger model worse) in a declining family x subtask is "part of a family-wide
    decline"; in a rising one, "against the family's trend"; with no significant trend, "a single pair";
    without a test (fewer than MIN_SIZES sizes or min_n shared questions), "no trend test"."""
    key = ["family", *GROUP_KEY]
    found = cases[key].merge(trends[[*key, "slope_pp", "q_value", "trend"]], on=key, how="left")
    placement = found["trend"].map({DECLINE: PLACEMENTS["with"], RISE: PLACEMENTS["against"],
                                    NONE: PLACEMENTS["single"]}).fillna(PLACEMENTS["untested"])
    return cases.assign(trend_slope_pp=found["slope_pp"].to_numpy(dtype=float),
                        trend_q=found["q_value"].to_numpy(dtype=float), trend_placement=placement.to_numpy())


def trend_summary(trends: pd.DataFrame, cases: pd.DataFrame) -> dict:
    """summary.json's trend numbers: tests, declines and rises after BH, and the cases by placement."""
    return {"tests": len(trends), "declines": int((trends["trend"] == DECLINE).sum()),
            "rises": int((trends["trend"] == RISE).sum()),
            "cases_by_placement": {p: int((cases["trend_placement"] == p).sum()) for p in PLACEMENTS.values()}}
