"""How each answer was settled, and what the analysis does with the answers nobody settled.

An answer is right, wrong or *unsettled*. Unsettled: the extraction rules withheld a letter (`abstain_reason`
"inconclusive", with or without a `candidate`) and no judge settled it (no judge was asked, or its verdict did not
parse, or its call failed). A judge's "no answer" settles it as wrong, as the paper counts a response that commits
to no answer; so do the rules' own non-answers (refusal, hedge, several answers, truncated, none fits, ...).

The paper sends every inconclusive answer to its judge (0.4% of responses); without that judge, scoring a withheld
letter as wrong leans one way (a longer, wordier model loses more), so the default leans neither way (ours):

    exclude    the question leaves the shared questions of every pair that includes that answer (the default)
    wrong      the answer counts as wrong (the behaviour before this option; a withheld letter is not an answer)
    candidate  the withheld letter counts as the answer (right when it is the gold; wrong without a candidate)

`resolve(table, treatment)` returns the table with `correct` set by the treatment and an int8 column `unsettled`
(UNSETTLED_STATES) that compare.py turns into each comparison's range of Net over every resolution.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postprocess.inverse_scaling.parameters import UNSETTLED_TREATMENTS as TREATMENTS
from postprocess.logs.extra import extra_fields

# `unsettled` column: 0 settled (or no gold), 1 unsettled and its candidate is not the gold (or it has none),
# 2 unsettled and its candidate is the gold.
SETTLED, UNSETTLED_CANDIDATE_WRONG, UNSETTLED_CANDIDATE_RIGHT = 0, 1, 2
UNSETTLED_STATES = (SETTLED, UNSETTLED_CANDIDATE_WRONG, UNSETTLED_CANDIDATE_RIGHT)
# How an answer was settled (`settled_by`): the extraction rules (their letter, or a non-answer they recognised),
# a judge (its answer or its "no answer"), another harness's extraction (tier external), or nobody.
SETTLED_BY = ("rules", "judge", "external", "unsettled")
_JUDGE_SETTLES = ("no_answer",)  # judge_status of a match-"none" answer that a judge settled (as wrong)


def _is(column: pd.Series, value: str) -> np.ndarray:
    """column == value as a plain bool array (a missing value is not equal)."""
    return (column == value).fillna(False).to_numpy(dtype=bool)


def _withheld_fields(table: pd.DataFrame) -> tuple[np.ndarray, list, list]:
    """(rows of match "none", their abstain_reason, their judge_status): `extra` parsed once, for those rows only."""
    if "match" not in table.columns or table.empty:
        return np.zeros(len(table), dtype=bool), [], []
    none = _is(table["match"], "none")
    if not none.any() or "extra" not in table.columns:
        return none, [None] * int(none.sum()), [None] * int(none.sum())
    fields = extra_fields(table["extra"][none], ("abstain_reason", "judge_status"))
    return none, list(fields["abstain_reason"]), list(fields["judge_status"])


def _withheld_mask(none: np.ndarray, reasons: list, statuses: list) -> np.ndarray:
    result = np.zeros(len(none), dtype=bool)
    result[np.flatnonzero(none)] = [r == "inconclusive" and s not in _JUDGE_SETTLES for r, s in zip(reasons, statuses)]
    return result


def withheld(table: pd.DataFrame) -> pd.Series:
    """Whether each answer is unsettled (module docstring), whatever its gold. A table without `match` (built by
    hand, not from logs) has none; a judge's reverted answer (adjudications.rules_only) is unsettled again."""
    return pd.Series(_withheld_mask(*_withheld_fields(table)), index=table.index)


def unsettled_states(table: pd.DataFrame) -> np.ndarray:
    """UNSETTLED_STATES per row: only answers with a known gold are unsettled (without one nothing is scored)."""
    unsettled = withheld(table).to_numpy() & table["gold"].notna().to_numpy() if "gold" in table.columns else (
        np.zeros(len(table), dtype=bool))
    states = np.zeros(len(table), dtype=np.int8)
    if unsettled.any():
        candidate = (table["candidate"].astype(object).to_numpy()[unsettled] if "candidate" in table.columns
                     else np.full(int(unsettled.sum()), None, dtype=object))
        gold = table["gold"].astype(object).to_numpy()[unsettled]
        right = np.array([isinstance(c, str) and c == g for c, g in zip(candidate, gold)], dtype=bool)
        states[unsettled] = np.where(right, UNSETTLED_CANDIDATE_RIGHT, UNSETTLED_CANDIDATE_WRONG)
    return states


def resolve(table: pd.DataFrame, treatment: str) -> pd.DataFrame:
    """The table with `correct` as `treatment` scores the unsettled answers and their `unsettled` state (module
    docstring); the table itself is not changed."""
    if treatment not in TREATMENTS:
        raise ValueError(f"unknown treatment of unsettled answers {treatment!r}; one of {', '.join(TREATMENTS)}")
    states = unsettled_states(table)
    resolved = table.assign(unsettled=states)
    if not states.any() or treatment == "wrong":
        return resolved  # the rules score a withheld letter wrong (scoring.score)
    unsettled = states != SETTLED
    correct = resolved["correct"].astype("boolean").copy()
    if treatment == "exclude":
        correct[unsettled] = pd.NA
    else:
        correct[unsettled] = states[unsettled] == UNSETTLED_CANDIDATE_RIGHT
    resolved["correct"] = correct
    return resolved


def settled_by(table: pd.DataFrame, withheld: tuple[np.ndarray, list, list] | None = None) -> pd.Series:
    """SETTLED_BY per row: who decided the answer (rules, judge, external) or nobody (unsettled). `withheld`: the
    table's _withheld_fields, when the caller has them."""
    none, reasons, statuses = _withheld_fields(table) if withheld is None else withheld
    # the categories' codes, not half a million strings to encode again
    rules, judge, external, unsettled = range(len(SETTLED_BY))
    result = np.full(len(table), rules, dtype=np.int8)
    if "match" in table.columns:
        result[_is(table["match"], "judge")] = judge
        result[np.flatnonzero(none)[np.isin(np.array(statuses, dtype=object), _JUDGE_SETTLES)]] = judge
    if "extraction_tier" in table.columns:
        result[_is(table["extraction_tier"], "external")] = external
    result[_withheld_mask(none, reasons, statuses)] = unsettled
    return pd.Series(pd.Categorical.from_codes(result, categories=SETTLED_BY), index=table.index, name="settled_by")


def unsettled_counts(table: pd.DataFrame, variant: str) -> pd.DataFrame:
    """Per model x benchmark of the variant's answers with a known gold: answers, unsettled (withheld letters no
    judge settled), of them with a candidate and with the gold as candidate, and their share (%)."""
    known = table["gold"].notna() if "gold" in table.columns else table["correct"].notna()
    # only the columns read here: a row selection of the whole table would copy every response
    needed = [c for c in ("model", "benchmark", "gold", "correct", "match", "extra", "extraction_tier", "candidate",
                          "unsettled") if c in table.columns]
    rows = table.loc[(table["variant"] == variant) & known, needed] if len(table) else table
    # resolve's states when the table has them (the analysis' table): `extra` is not parsed again
    states = rows["unsettled"].to_numpy() if "unsettled" in rows.columns else unsettled_states(rows)
    return _counts_by_model_benchmark(rows, states)


def _counts_by_model_benchmark(rows: pd.DataFrame, states: np.ndarray) -> pd.DataFrame:
    """unsettled_counts' frame for rows: the model x benchmark pairs in the order they first appear, counted on the
    columns' codes (a grouping of half a million rows as Python strings took a tenth of a second)."""
    model_codes, models = pd.factorize(rows["model"], sort=False)
    benchmark_codes, benchmarks = pd.factorize(rows["benchmark"], sort=False)
    width = max(len(benchmarks), 1)  # no rows: no benchmark, and no pair
    pair_codes, pairs = pd.factorize(model_codes.astype(np.int64) * width + benchmark_codes, sort=False)
    unsettled = states != SETTLED
    candidate = rows["candidate"].notna().to_numpy() if "candidate" in rows.columns else False
    tallies = {"answers": None, "unsettled": unsettled, "with_candidate": unsettled & candidate,
               "candidate_is_gold": states == UNSETTLED_CANDIDATE_RIGHT}
    counts = pd.DataFrame({"model": np.asarray(models, dtype=object)[pairs // width],
                           "benchmark": np.asarray(benchmarks, dtype=object)[pairs % width]})
    for name, mask in tallies.items():
        counts[name] = np.bincount(pair_codes, weights=mask, minlength=len(pairs)).astype(np.int64)
    counts["unsettled_percent"] = 100.0 * counts["unsettled"] / counts["answers"].clip(lower=1)
    return counts


ANSWER_COLUMNS = ["model", "benchmark", "split", "subtask", "question_id", "variant", "gold", "prediction",
                  "candidate", "match", "rule", "extraction_tier", "abstain_reason", "settled_by", "correct",
                  "correct_as_read", "source_file", "source_line"]


def answers_table(table: pd.DataFrame, treatment: str, resolved: pd.DataFrame | None = None) -> pd.DataFrame:
    """answers.parquet: every answer of the table with where it came from (source_file, source_line: a log line or
    an imported file's row), its letter, the withheld candidate, match, rule, tier, why the rules abstained, who
    settled it (SETTLED_BY), `correct` as the analysis counts it under `treatment` (null: excluded, or no gold) and
    `correct_as_read` as the logs or the import scored it. `resolved`: resolve(table, treatment), when the caller
    has it (the analysis' scored table)."""
    if resolved is None:
        resolved = resolve(table, treatment)
    frame = pd.DataFrame(index=table.index)
    for name in ANSWER_COLUMNS:
        if name in table.columns:
            frame[name] = table[name]
    withheld = _withheld_fields(table)  # decoded once for the reasons and settled_by
    none, reasons_of_none, _ = withheld
    reasons = np.full(len(table), None, dtype=object)
    reasons[none] = reasons_of_none
    frame["abstain_reason"] = pd.array(reasons, dtype="string")
    frame["settled_by"] = settled_by(table, withheld)
    frame["correct"] = resolved["correct"].astype("boolean")
    frame["correct_as_read"] = table["correct"].astype("boolean")
    for name in ANSWER_COLUMNS:
        if name not in frame.columns:
            frame[name] = pd.array([None] * len(table), dtype="string")
    return frame[ANSWER_COLUMNS].reset_index(drop=True)
