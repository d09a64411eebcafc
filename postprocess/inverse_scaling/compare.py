"""Within-family pairwise flip analysis (paper Section 3; case selection as in Section 4).

Per-question outcomes are packed once into an int8 cube (variant x model x question) aligned on one
global question index. Each within-family pair is then compared on every subtask at once with a
single `np.bincount` over (subtask, joint outcome) codes, which is what keeps the whole analysis far
below a second at paper scale (a per-pair pandas merge is orders of magnitude slower).

Units: `acc_small`, `acc_large` are percentages (0-100) over the n shared questions and `acc_delta`
is `acc_small - acc_large` in percentage points. `p_value` is the one-sided exact McNemar test that
the smaller model wins the discordant questions, P(Binomial(FI + FN, 1/2) >= FI); `p_larger` is the
mirrored test, P(Binomial(FI + FN, 1/2) >= FN). Both are 1 when there is no discordant question.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.special import bdtrc  # binom.sf's function, without scipy.stats' 0.5 s import

from postprocess.order import sort_key

MISSING, WRONG, RIGHT = -1, 0, 1
QUESTION_KEY = ["benchmark", "split", "subtask", "question_id"]
GROUP_KEY = ["benchmark", "split", "subtask"]
# Columns `build_outcomes` reads: a cache loader can read just these from a wide Parquet table.
OUTCOME_COLUMNS = ["model", "variant", *QUESTION_KEY, "correct"]
UNSETTLED_COLUMN = "unsettled"  # settlement.resolve's states; optional (a table without it has none unsettled)
PAIR_COLUMNS = [
    "small_size",
    "large_size",
    "adjacent",
    "extreme",
    "twofold_total",
    "twofold_active",
    "dense",
    "same_encoder_tier",
    "family_models",
]

# Joint outcome of a (small, large) pair on one question: 3 * state(small) + state(large), where
# state = value + 1 (0 = missing, 1 = wrong, 2 = right).
BOTH_KNOWN = [4, 5, 7, 8]
INVERSE = 7  # small right, large wrong
NORMAL = 5  # small wrong, large right
SMALL_RIGHT = [7, 8]
LARGE_RIGHT = [5, 8]
# pair_cells' finer states, which keep unsettled answers apart: 0 missing, 1 wrong, 2 right, 3 unsettled with a
# wrong (or no) candidate, 4 unsettled with the gold as candidate; joint code 5 * state(small) + state(large).
STATES = 5
_AS_EXCLUDED = np.array([0, 1, 2, 0, 0])  # finer state -> compare state under each treatment
_AS_WRONG = np.array([0, 1, 2, 1, 1])
_AS_CANDIDATE = np.array([0, 1, 2, 1, 2])
_TREATED = {"exclude": _AS_EXCLUDED, "wrong": _AS_WRONG, "candidate": _AS_CANDIDATE}


@dataclass(frozen=True)
class Outcomes:
    """Correctness of every model on every question, per prompt variant.

    values[v, m, q] is 1 (right), 0 (wrong) or -1 (not answered, or no known gold, or an unsettled answer
    excluded) for variant `variants[v]`, model `models[m]` and question q, whose subtask is
    `groups.iloc[question_group[q]]`. Groups (benchmark, split, subtask) are numbered in display order.
    unsettled[v, m, q] is the answer's settlement state (settlement.UNSETTLED_STATES: 0 settled), or None when
    no answer is unsettled; `treatment` is how `values` scores the unsettled ones.
    """

    variants: tuple[str, ...]
    models: tuple[str, ...]
    groups: pd.DataFrame
    question_group: np.ndarray
    values: np.ndarray
    unsettled: np.ndarray | None = None
    treatment: str = "wrong"

    def variant_index(self, variant: str) -> int:
        if variant not in self.variants:
            raise ValueError(f"variant {variant!r} not in the table (variants: {', '.join(self.variants)})")
        return self.variants.index(variant)

    def model_index(self, model: str) -> int:
        return self.models.index(model)

    def models_with_answers(self, variant: str) -> list[str]:
        index = self.variant_index(variant)
        answered = self.values[index] != MISSING
        if self.unsettled is not None:  # an excluded unsettled answer is still an answer of the model
            answered |= self.unsettled[index] > 0
        answered = answered.any(axis=1)
        return [m for m, keep in zip(self.models, answered) if keep]


def _factorize(series: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(series, sort=False)
    if (codes < 0).any():
        raise ValueError(f"column '{name}' has missing values")
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def _correct_values(correct: pd.Series) -> np.ndarray:
    known = correct.notna().to_numpy()
    right = correct.fillna(False).to_numpy(dtype=bool)
    return np.where(known, right.astype(np.int8), np.int8(MISSING))


def build_outcomes(table: pd.DataFrame, models: list[str], treatment: str = "wrong") -> Outcomes:
    """Pack the per-question table into an `Outcomes` cube; `models` fixes the model axis order; `treatment`
    names how the table's `correct` scores its unsettled answers (settlement.resolve; "wrong" is the table as
    the rules scored it).

    Raises ValueError on a model missing from `models`, on missing key values, and on a question
    answered twice by one model under one variant (ingestion must resolve duplicated runs).
    """
    missing_columns = [c for c in OUTCOME_COLUMNS if c not in table.columns]
    if missing_columns:
        raise ValueError(f"per-question table lacks columns {missing_columns}")
    table_model_codes, table_models = _factorize(table["model"], "model")
    unknown = sorted(set(map(str, table_models)) - set(models))
    if unknown:
        raise ValueError(f"models not in the registry: {unknown}")
    position = {model: i for i, model in enumerate(models)}
    model_codes = np.array([position[m] for m in table_models], dtype=np.int64)[table_model_codes]
    variant_codes, variants = _factorize(table["variant"], "variant")

    # Mixed-radix integer keys avoid hashing tuples of strings row by row.
    parts = [_factorize(table[c], c) for c in QUESTION_KEY]
    group_key = np.zeros(len(table), dtype=np.int64)
    for codes, uniques in parts[:-1]:
        group_key = group_key * len(uniques) + codes
    group_codes, group_uniques = pd.factorize(group_key, sort=False)
    qid_codes, qid_uniques = parts[-1]
    question_codes, question_uniques = pd.factorize(group_codes * len(qid_uniques) + qid_codes, sort=False)
    question_group = question_uniques // len(qid_uniques)

    # Decode the group keys back into labels, then renumber groups in display order.
    remainder = np.asarray(group_uniques)
    labels = {}
    for column, (_, uniques) in reversed(list(zip(GROUP_KEY, parts[:-1]))):
        labels[column] = uniques[remainder % len(uniques)]
        remainder = remainder // len(uniques)
    # object dtype: these small label frames are sliced many times downstream, and Arrow-backed
    # strings make each slice markedly slower.
    groups = pd.DataFrame({c: labels[c].astype(str) for c in GROUP_KEY}, dtype=object)
    groups = groups.sort_values(GROUP_KEY, key=sort_key, kind="stable")
    renumber = np.empty(len(groups), dtype=np.int64)
    renumber[groups.index.to_numpy()] = np.arange(len(groups))
    groups = groups.reset_index(drop=True)

    n_variants, n_models, n_questions = len(variants), len(models), len(question_uniques)
    flat = (variant_codes * n_models + model_codes) * n_questions + question_codes
    if np.bincount(flat, minlength=n_variants * n_models * n_questions).max(initial=0) > 1:
        duplicated = table.loc[pd.Series(flat).duplicated(keep=False).to_numpy(), OUTCOME_COLUMNS[:-1]]
        raise ValueError(
            f"{len(duplicated)} rows answer a question more than once for the same model and variant, "
            f"e.g. {duplicated.iloc[0].to_dict()}"
        )
    values = np.full(n_variants * n_models * n_questions, MISSING, dtype=np.int8)
    values[flat] = _correct_values(table["correct"])
    shape = (n_variants, n_models, n_questions)
    unsettled = None
    if UNSETTLED_COLUMN in table.columns and (states := table[UNSETTLED_COLUMN].to_numpy(dtype=np.int8)).any():
        unsettled = np.zeros(n_variants * n_models * n_questions, dtype=np.int8)
        unsettled[flat] = states
        unsettled = unsettled.reshape(shape)
    return Outcomes(
        variants=tuple(str(v) for v in variants),
        models=tuple(models),
        groups=groups,
        question_group=renumber[question_group],
        values=values.reshape(shape),
        unsettled=unsettled,
        treatment=treatment,
    )


def family_order_models(models: pd.DataFrame) -> pd.DataFrame:
    """Models frame sorted by family (registry order), then by size within family.

    Size order is `family_rank` where present, else total then active parameters.
    """
    frame = models.copy()
    family_position = {f: i for i, f in enumerate(dict.fromkeys(frame["family"]))}
    frame["_family_position"] = frame["family"].map(family_position)
    size_columns = ["family_rank"] if "family_rank" in frame.columns else ["total_params", "active_params"]
    return (
        frame.sort_values(["_family_position", *size_columns, "model"], kind="stable")
        .drop(columns="_family_position")
        .reset_index(drop=True)
    )


def _same_tier(small: object, large: object) -> bool:
    """Equal encoder tiers; an unknown tier (None / NaN) never counts as the same."""
    return not (pd.isna(small) or pd.isna(large)) and small == large


def family_pairs(models: pd.DataFrame) -> pd.DataFrame:
    """Every within-family (smaller, larger) pair, smaller first, never both orders.

    Columns used by the restricted analyses: `adjacent` (consecutive sizes), `extreme` (smallest vs
    largest of a family of three or more models, as in the paper's Section 5.5), `twofold_total` / `twofold_active` (larger has >= 2x the nominal total /
    active parameters), `dense` (neither is MoE), `same_encoder_tier` and `family_models` (how many
    models the family has).
    """
    ordered = family_order_models(models)
    rows = []
    for family, members in ordered.groupby("family", sort=False):
        specs = members.to_dict("records")
        last = len(specs) - 1
        for i, j in combinations(range(last + 1), 2):
            small, large = specs[i], specs[j]
            rows.append(
                {
                    "family": family,
                    "small": small["model"],
                    "large": large["model"],
                    "small_size": small["size"],
                    "large_size": large["size"],
                    "adjacent": j == i + 1,
                    "extreme": i == 0 and j == last and last >= 2,  # a two-model family's one pair is no size gap
                    "twofold_total": large["total_params"] >= 2 * small["total_params"],
                    "twofold_active": large["active_params"] >= 2 * small["active_params"],
                    "dense": not (bool(small["moe"]) or bool(large["moe"])),
                    "same_encoder_tier": _same_tier(small["encoder_tier"], large["encoder_tier"]),
                    "family_models": last + 1,
                }
            )
    columns = ["family", "small", "large", *PAIR_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns)
    text = ["family", "small", "large", "small_size", "large_size"]
    return frame.astype({c: object for c in text})


def mcnemar_greater(wins: np.ndarray, discordant: np.ndarray) -> np.ndarray:
    """One-sided exact McNemar p-value P(Binomial(discordant, 1/2) >= wins); 1 when wins == 0."""
    return bdtrc(np.asarray(wins) - 1, np.asarray(discordant), 0.5)


def _states(outcomes: Outcomes, variant: int, model: int) -> np.ndarray:
    """The finer states (STATES) of one model's answers."""
    state = outcomes.values[variant, model].astype(np.int64) + 1
    if outcomes.unsettled is None:
        return state
    unsettled = outcomes.unsettled[variant, model]
    return np.where(unsettled > 0, 2 + unsettled.astype(np.int64), state)


def pair_cells(outcomes: Outcomes, variant: str, small: str, large: str) -> np.ndarray:
    """Counts of the STATES x STATES joint outcomes of (small, large) per group: shape (n_groups, 25)."""
    v = outcomes.variant_index(variant)
    codes = (outcomes.question_group * STATES ** 2 + _states(outcomes, v, outcomes.model_index(small)) * STATES
             + _states(outcomes, v, outcomes.model_index(large)))
    return np.bincount(codes, minlength=len(outcomes.groups) * STATES ** 2).reshape(-1, STATES ** 2)


def treated_cells(cells: np.ndarray, treatment: str) -> np.ndarray:
    """pair_cells' counts (..., 25) as `treatment` scores the unsettled answers: the 9 joint outcomes (..., 9)."""
    as_treated = _TREATED[treatment]
    target = (as_treated[:, None] * 3 + as_treated[None, :]).ravel()
    out = np.zeros((*cells.shape[:-1], 9), dtype=cells.dtype)
    for code in range(STATES ** 2):
        out[..., target[code]] += cells[..., code]
    return out


def _net_range(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(least, greatest) change of Net over every way of settling the unsettled answers of the questions that
    have one, from pair_cells' counts (the questions both settled are the caller's)."""
    low = np.zeros(cells.shape[:-1], dtype=np.int64)
    high = np.zeros(cells.shape[:-1], dtype=np.int64)
    for s in range(1, STATES):
        for l in range(1, STATES):
            if s < 3 and l < 3:
                continue  # both settled: their Net is the excluded treatment's, added by the caller
            small_values = [s - 1] if s in (1, 2) else [0, 1]
            large_values = [l - 1] if l in (1, 2) else [0, 1]
            contributions = [a - b for a in small_values for b in large_values]
            count = cells[..., s * STATES + l]
            low += count * min(contributions)
            high += count * max(contributions)
    return low, high


def compare_pairs(
    outcomes: Outcomes,
    pairs: pd.DataFrame,
    *,
    variant: str,
    min_n: int,
    min_net: int,
) -> pd.DataFrame:
    """Flip statistics of every pair in `pairs` on every subtask where both answered a question
    with known gold (n > 0, or, when the unsettled answers decide the case, n = 0 with every shared
    question excluded: its accuracies are then NaN). `eligible` is n >= min_n; `case` is eligible and
    net >= min_net; the unsettled-answer columns are the module docstring's.

    Rows are ordered by family, benchmark, split, subtask, then pair order. `family_index` and
    `group` (the subtask's index in `outcomes.groups`, display order) are integer keys for fast
    grouping downstream.
    """
    cells = np.zeros((len(pairs), len(outcomes.groups), STATES ** 2), dtype=np.int64)
    for p, (small, large) in enumerate(zip(pairs["small"], pairs["large"])):
        cells[p] = pair_cells(outcomes, variant, small, large)
    return _frame_from_counts(outcomes, pairs, cells, min_n, min_net)


def _net(cells: np.ndarray) -> np.ndarray:
    return cells[..., INVERSE] - cells[..., NORMAL]


def _frame_from_counts(
    outcomes: Outcomes, pairs: pd.DataFrame, fine: np.ndarray, min_n: int, min_net: int
) -> pd.DataFrame:
    cells = treated_cells(fine, outcomes.treatment)
    n = cells[..., BOTH_KNOWN].sum(axis=-1)
    excluded, counted = treated_cells(fine, "exclude"), treated_cells(fine, "wrong")
    n_excluded, n_counted = excluded[..., BOTH_KNOWN].sum(axis=-1), counted[..., BOTH_KNOWN].sum(axis=-1)
    low, high = _net_range(fine)
    low, high = low + _net(excluded), high + _net(excluded)
    case_always = (n_counted >= min_n) & (low >= min_net) & (n_excluded >= min_n) & (_net(excluded) >= min_net)
    case_sometimes = ((n_counted >= min_n) & (high >= min_net)) | ((n_excluded >= min_n) & (_net(excluded) >= min_net))
    decides = case_sometimes & ~case_always
    pair_idx, group_idx = np.nonzero((n > 0) | decides)
    family_idx = pd.factorize(pairs["family"], sort=False)[0][pair_idx]
    order = np.lexsort((pair_idx, group_idx, family_idx))
    pair_idx, group_idx = pair_idx[order], group_idx[order]
    at = (pair_idx, group_idx)
    selected = cells[at]
    n = n[at]
    flip_inv = selected[:, INVERSE]
    flip_norm = selected[:, NORMAL]
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_small = np.where(n > 0, 100.0 * selected[:, SMALL_RIGHT].sum(axis=1) / n, np.nan)
        acc_large = np.where(n > 0, 100.0 * selected[:, LARGE_RIGHT].sum(axis=1) / n, np.nan)
    # Unsettled answers of one model on questions the other model answered (settled or not).
    shared = fine[at].reshape(-1, STATES, STATES)
    pair_rows = pairs.iloc[pair_idx].reset_index(drop=True)
    group_rows = outcomes.groups.iloc[group_idx].reset_index(drop=True)
    frame = pd.DataFrame(
        {
            "family": pair_rows["family"],
            "family_index": family_idx[order],
            "benchmark": group_rows["benchmark"],
            "split": group_rows["split"],
            "subtask": group_rows["subtask"],
            "group": group_idx,
            "small": pair_rows["small"],
            "large": pair_rows["large"],
            "n": n,
            "flip_inv": flip_inv,
            "flip_norm": flip_norm,
            "net": flip_inv - flip_norm,
            "acc_small": acc_small,
            "acc_large": acc_large,
            "acc_delta": acc_small - acc_large,
            "p_value": mcnemar_greater(flip_inv, flip_inv + flip_norm),
            "p_larger": mcnemar_greater(flip_norm, flip_inv + flip_norm),
            "unsettled_small": shared[:, 3:, 1:].sum(axis=(1, 2)),
            "unsettled_large": shared[:, 1:, 3:].sum(axis=(1, 2)),
            "net_if_unsettled_excluded": _net(excluded[at]),
            "net_if_unsettled_wrong": _net(counted[at]),
            "net_if_unsettled_candidate": _net(treated_cells(fine[at], "candidate")),
            "net_unsettled_min": low[at],
            "net_unsettled_max": high[at],
            "unsettled_decides": decides[at],
        }
    )
    frame["eligible"] = frame["n"] >= min_n
    frame["case"] = frame["eligible"] & (frame["net"] >= min_net)
    for column in PAIR_COLUMNS:
        frame[column] = pair_rows[column].to_numpy()
    return frame


def compare(
    table: pd.DataFrame,
    models: pd.DataFrame,
    *,
    variant: str,
    min_n: int,
    min_net: int,
) -> pd.DataFrame:
    """Convenience: `compare_pairs` straight from the per-question table and the models frame."""
    ordered = family_order_models(models)
    outcomes = build_outcomes(table, list(ordered["model"]))  # the table's `correct` as it is
    present = ordered[ordered["model"].isin(outcomes.models_with_answers(variant))]
    return compare_pairs(outcomes, family_pairs(present), variant=variant, min_n=min_n, min_net=min_net)
