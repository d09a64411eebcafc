"""The flip questions of the cases and the error-taxonomy sample (inverse-scaling paper, Section 5.6):
"up to 10 flip questions per pairwise case with stratified dataset quotas and a per-family cap of 600
... after filtering degenerate responses (empty or single non-letter characters)".

A flip question of a case is one the smaller model answered right and the larger model wrong under the
analysed variant (FlipInv). The paper gives the rule, not its arithmetic; ours, every step seeded:
1. degenerate: a flip whose smaller or larger model's response, stripped, is empty or one character
   that is not a letter is left out (a judge cannot say why such an answer failed); counted per stratum.
2. per case: the remaining flips in a random order; the first `per_case` are the case's candidates.
3. per family: the family's `family_cap` is spread over its datasets (benchmarks, splits pooled: the
   strata) as quotas. "equal" (default): every dataset the same share, a dataset with fewer
   candidates giving its surplus to the others (water-filling; a remainder goes one each to the
   datasets with most candidates left, ties in benchmark order); "proportional": in proportion to
   the candidates (largest remainder). `dataset_quotas` ({benchmark: n}) caps a dataset per family
   before the spreading. A family with fewer candidates than its cap keeps them all (within quotas).
4. per stratum: its quota taken round-robin over its cases (every case's first candidate, then every
   case's second, ...; cases in a random order), so no case crowds out the others.
The numbers per stratum (family x dataset) are reported: cases, flips, degenerate, candidates,
capacity (candidates within the dataset quota), drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from invscale.quotas import largest_remainder
from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.compare import QUESTION_KEY
from postprocess.inverse_scaling.parameters import TaxonomyParameters
from postprocess.order import sort_frame

ALLOCATIONS = ("equal", "proportional")
FLIP_COLUMNS = [*CASE_KEY, "question_id", "question_key", "gold", "response_small", "response_large",
                "prediction_small", "prediction_large"]
STRATA_COLUMNS = ["family", "benchmark", "cases", "flips", "degenerate", "candidates", "capacity", "drawn"]


@dataclass(frozen=True)
class TaxonomySample:
    items: pd.DataFrame  # the drawn flips (FLIP_COLUMNS), family / dataset / case order
    strata: pd.DataFrame  # STRATA_COLUMNS, one row per family x dataset with flips
    degenerate: pd.DataFrame  # the flips left out (FLIP_COLUMNS + reason)


def question_key(family: str, benchmark: str, split: str, question_id: str, small: str, large: str) -> str:
    """One flip of one case: the question and the pair (a question may be a flip of several pairs)."""
    return f"{benchmark}/{split}/{question_id}:{small}>{large}"


def flip_questions(table: pd.DataFrame, cases: pd.DataFrame, variant: str) -> pd.DataFrame:
    """Every flip question (smaller right, larger wrong) of every case, under `variant`, in the cases'
    order then question id (FLIP_COLUMNS)."""
    columns = ["model", *QUESTION_KEY, "gold", "response", "prediction", "correct"]
    rows = table.loc[table["variant"].astype(object) == variant, columns]
    rows = rows.assign(**{c: rows[c].astype(object) for c in ["model", *QUESTION_KEY, "gold", "response", "prediction"]})
    parts = []
    for (small, large), pair_cases in cases.groupby(["small", "large"], sort=False, observed=True):
        pair = rows[rows["model"] == small].merge(rows[rows["model"] == large], on=QUESTION_KEY,
                                                  suffixes=("_small", "_large"))
        flips = pair[(pair["correct_small"] == True) & (pair["correct_large"] == False)]
        keys = pair_cases[CASE_KEY].astype(object).assign(_case=pair_cases.index)
        parts.append(flips.merge(keys, on=["benchmark", "split", "subtask"]))
    if not parts:
        return pd.DataFrame(columns=FLIP_COLUMNS)
    flips = pd.concat(parts, ignore_index=True).sort_values(["_case", "question_id"], kind="stable")
    flips["gold"] = flips["gold_small"]
    flips["question_key"] = [question_key(*key) for key in
                             zip(flips["family"], flips["benchmark"], flips["split"], flips["question_id"],
                                 flips["small"], flips["large"])]
    flips["response_small"] = flips["response_small"].fillna("")
    flips["response_large"] = flips["response_large"].fillna("")
    return flips[FLIP_COLUMNS].reset_index(drop=True)


def degenerate_reason(response: str) -> str | None:
    """Why a response cannot be judged (the paper's filter), or None."""
    text = response.strip()
    if not text:
        return "empty"
    if len(text) == 1 and not text.isalpha():
        return "single non-letter character"
    return None


def equal_allocation(capacity: pd.Series, total: int) -> pd.Series:
    """`total` (at most capacity.sum()) spread equally over the cells, none above its capacity
    (water-filling); the indivisible remainder goes one each to the cells with most capacity left, ties
    in index order."""
    allocation = pd.Series(0, index=capacity.index, dtype=int)
    remaining = min(total, int(capacity.sum()))
    while remaining > 0:
        open_cells = capacity.index[allocation < capacity]
        share = remaining // len(open_cells)
        if share == 0:
            room = (capacity - allocation)[open_cells].sort_values(ascending=False, kind="stable")
            allocation[room.index[:remaining]] += 1
            break
        add = np.minimum(share, (capacity - allocation)[open_cells])
        allocation[open_cells] += add
        remaining -= int(add.sum())
    return allocation


def sample_flips(flips: pd.DataFrame, params: TaxonomyParameters, families: list[str] | None = None) -> TaxonomySample:
    """The taxonomy sample of `flips` (flip_questions), by the steps of the module docstring; families
    (strata, rows) in `families` order."""
    if params.allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, got {params.allocation!r}")
    if params.per_case < 1 or params.family_cap < 1:
        raise ValueError(f"per_case and family_cap must be positive, got {params.per_case} and {params.family_cap}")
    quotas = dict(params.dataset_quotas)
    bad = {benchmark: n for benchmark, n in quotas.items() if not isinstance(n, int) or n < 0}
    if bad:
        raise ValueError(f"dataset quotas must be non-negative whole numbers, got {bad}")
    per_case, family_cap = params.per_case, params.family_cap
    rng = np.random.default_rng(params.seed)
    flips = flips.reset_index(drop=True)
    reasons = [degenerate_reason(s) or degenerate_reason(l) for s, l in zip(flips["response_small"], flips["response_large"])]
    which = ["smaller" if degenerate_reason(s) else "larger" for s in flips["response_small"]]
    degenerate = flips.assign(reason=[None if r is None else f"{w} model: {r}" for r, w in zip(reasons, which)])
    degenerate = degenerate[degenerate["reason"].notna()].reset_index(drop=True)
    kept = flips[[r is None for r in reasons]].copy()

    case_key = kept[CASE_KEY].astype(str).agg("|".join, axis=1)
    kept["_order"] = rng.random(len(kept))
    case_order = {case: rng.random() for case in dict.fromkeys(case_key)}
    kept["_case_order"] = case_key.map(case_order)
    kept["_rank"] = kept.assign(_case=case_key).groupby("_case", sort=False)["_order"].rank(method="first") - 1
    candidates = kept[kept["_rank"] < per_case]

    order = families or list(dict.fromkeys(flips["family"]))
    drawn = []
    strata = sort_frame(_strata_counts(flips, degenerate, candidates), ["family", "benchmark"], order)
    strata["capacity"] = [min(c, quotas.get(b, c)) for b, c in zip(strata["benchmark"], strata["candidates"])]
    strata["drawn"] = 0
    for family, cells in strata.groupby("family", sort=False):
        capacity = cells.set_index("benchmark")["capacity"]
        total = min(family_cap, int(capacity.sum()))
        share = equal_allocation(capacity, total) if params.allocation == "equal" else largest_remainder(capacity, total)
        for benchmark, take in share.items():
            strata.loc[(strata["family"] == family) & (strata["benchmark"] == benchmark), "drawn"] = int(take)
            cell = candidates[(candidates["family"] == family) & (candidates["benchmark"] == benchmark)]
            drawn.append(cell.sort_values(["_rank", "_case_order"], kind="stable").head(int(take)))
    items = pd.concat(drawn, ignore_index=True) if drawn else candidates.iloc[:0]
    items = sort_frame(items.sort_values(["_case_order", "_rank"], kind="stable"), ["family", "benchmark"], order)
    return TaxonomySample(items[FLIP_COLUMNS].reset_index(drop=True), strata[STRATA_COLUMNS].reset_index(drop=True),
                          degenerate[[*FLIP_COLUMNS, "reason"]])


def _strata_counts(flips: pd.DataFrame, degenerate: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    keys = ["family", "benchmark"]
    counts = pd.DataFrame({
        "cases": flips.drop_duplicates(CASE_KEY).groupby(keys, sort=False).size(),
        "flips": flips.groupby(keys, sort=False).size(),
        "degenerate": degenerate.groupby(keys, sort=False).size(),
        "candidates": candidates.groupby(keys, sort=False).size(),
    }).fillna(0).astype(int)
    return counts.reset_index()
