"""Whether a case holds: its flipped questions, and a credibility verdict from the runs the logs hold.

    flips = comparison_flips(table, analysis.cases, variant)   # one row per flipped question of each case
    verdicts = case_verdicts(cases, comparisons, controls, run_to_run_noise(outcomes, cases, variant), flips, ...)

Each check is "pass", "fail" or "not run" (the logs cannot make it); a check never passes silently.
- option order (`order_check`): Net > 0 in every reordered run of the case's two models the logs hold
  (REORDERING_VARIANTS: reverse, shift1-3); `order_nets` lists them ("reverse -19; shift1 +4"). Not run
  without a reordered run of the case.
- run-to-run noise (`noise_check`): Net > `noise_threshold`, the number of answers of the two models, on the
  case's questions answered with a known gold in both runs, whose correctness differs between the analysed
  run and the identity re-run (the unchanged prompt run again). Each such answer moves Net by at most one, so
  a Net above the threshold is more than the re-run's own variation could make. Not run without an identity
  re-run of both models on the subtask.
- extraction (`extraction_check`): `worst_case_net` >= min_net, where worst_case_net is Net less the FlipInv
  flips that rest on a weak letter: either model's `extraction_tier` is "reading" or "judge", or unknown
  (null while a prediction exists). Removing weak FlipNorm flips could only raise Net, so they stay. Not run
  when no prediction of the table has an `extraction_tier` (logs written before the tier was recorded).
Replication is not a check: the paper calls the three-family criterion "a reporting choice ... not part of the
underlying pairwise case definition" (Section 5.4). `replication_families` ("k of m") says beside the verdict in how
many of the m families with an eligible comparison on the subtask it has cases, and `replicated` whether k >=
REPLICATION_FAMILIES.
Statistics printed beside the case (not checks):
- `share_ci_low`, `share_ci_high`: the exact (Clopper-Pearson) interval at CI_LEVEL of FlipInv / D, D = FlipInv +
  FlipNorm, the share of the discordant questions the smaller model wins;
- `net_ci_low`, `net_ci_high`: D (2 share - 1) at those bounds: Net's exact interval given its D discordant
  questions;
- `min_detectable_net`: with D held at the case's, the smallest Net = D (2 pi - 1) that the one-sided exact
  McNemar test at level alpha detects with probability POWER: pi solves P(Binomial(D, pi) >= k) = POWER, k the
  test's critical count (the least k with P(Binomial(D, 1/2) >= k) <= alpha). NaN when D is too small for the
  test to reject at all.
`verdict` (is the case an artefact of option order, run-to-run noise or the reading of answers?): "fail" when a
check failed; "pass" when all three ran and passed; "pass, k not run" when none failed and some ran; "not checked"
when none could run. `failed_checks` names the failed ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import bdtrc, bdtri, betaincinv

from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.compare import (
    GROUP_KEY,
    MISSING,
    QUESTION_KEY,
    Outcomes,
)
from postprocess.inverse_scaling.settlement import settled_by
from postprocess.logs.extra import extra_fields
from postprocess.inverse_scaling.parameters import (
    CI_LEVEL,
    NOISE_VARIANT,
    POWER,
    REORDERING_VARIANTS,
    REPLICATION_FAMILIES,
    WEAK_TIERS,
)

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"
CHECKS = {"order_check": "option order", "noise_check": "run-to-run noise", "extraction_check": "extraction"}
CREDIBILITY_COLUMNS = [
    "verdict", "failed_checks", "order_check", "order_nets", "noise_check", "noise_threshold", "extraction_check",
    "worst_case_net", "replicated", "replication_families", "share_ci_low", "share_ci_high", "net_ci_low",
    "net_ci_high", "min_detectable_net",
]  # fmt: skip
FLIP_INV, FLIP_NORM = "FlipInv", "FlipNorm"
# What each side of a flip carries: its letter and how it was obtained (the record's fields, `extra`'s), the letter
# the rules withheld (`candidate`) and who settled the answer (settlement.SETTLED_BY).
SIDE_FIELDS = ["prediction", "correct", "match", "rule", "extraction_tier", "abstain_reason", "judge_status",
               "judge_verdict", "candidate", "settled_by"]
EXTRA_FIELDS = ("abstain_reason", "judge_status", "judge_verdict")
FLIP_COLUMNS = [*CASE_KEY, "question_id", "direction", "gold",
                *(f"{side}_{name}" for side in ("small", "large") for name in SIDE_FIELDS)]
_TABLE_FIELDS = ("gold", "prediction", "match", "rule", "extraction_tier", "candidate", "extra")


def _answers(table: pd.DataFrame, variant: str, comparisons: pd.DataFrame) -> pd.DataFrame:
    """The answers of `variant` with a known right or wrong of each model on the subtasks where `comparisons`
    (CASE_KEY rows) compare it, in the table's order: only those rows are decoded, not the whole table."""
    sides = [comparisons[[side, *GROUP_KEY]].set_axis(["model", *GROUP_KEY], axis=1) for side in ("small", "large")]
    wanted = pd.concat(sides).drop_duplicates().astype({c: table[c].dtype for c in ["model", *GROUP_KEY]})
    keep = (table["variant"] == variant).to_numpy(dtype=bool) & table["correct"].notna().to_numpy(dtype=bool)
    # a merge on the table's own (categorical) dtypes: it matches codes, not half a million tuples
    candidates = table.loc[keep, ["model", *GROUP_KEY]].assign(_row=np.flatnonzero(keep))
    keep[:] = False
    keep[candidates.merge(wanted, on=["model", *GROUP_KEY])["_row"].to_numpy()] = True
    present = [c for c in _TABLE_FIELDS if c in table.columns]
    rows = table.loc[keep, ["model", *QUESTION_KEY, "correct", *present]]
    settled = settled_by(table.loc[keep, [c for c in ("match", "extra", "extraction_tier") if c in table.columns]])
    settled = settled.astype(object)
    for name in _TABLE_FIELDS:
        if name not in rows.columns:
            rows[name] = None
    rows = pd.concat([rows.drop(columns="extra"), extra_fields(rows["extra"], EXTRA_FIELDS)], axis=1)
    rows["candidate"] = rows["candidate"].astype(object)
    rows["settled_by"] = settled
    return rows


def shared_answers(table: pd.DataFrame, comparisons: pd.DataFrame, variant: str) -> pd.DataFrame:
    """For each comparison (CASE_KEY rows), both models' answers of every question they share on its subtask, one
    row a question: the answers' fields suffixed _small and _large, CASE_KEY and the comparison's `_order`, in the
    comparisons' order and within one in the table's. Both comparison_flips and extraction_exposure read it; the
    analysis builds it once for both."""
    # keys in the table's own (categorical) dtypes: the merges match codes; the result's keys are plain text
    typed = {"small": table["model"].dtype, "large": table["model"].dtype, **{c: table[c].dtype for c in GROUP_KEY}}
    keys = comparisons[CASE_KEY].astype(typed).assign(_order=np.arange(len(comparisons)))
    answers = _answers(table, variant, keys)
    fields = [c for c in answers.columns if c not in ("model", *QUESTION_KEY)]
    # one merge per side over all comparisons, then one on (comparison, question): no loop over pairs
    small = answers.rename(columns={"model": "small", **{f: f"{f}_small" for f in fields}}).merge(
        keys, on=["small", *GROUP_KEY])
    large = answers.drop(columns="gold").rename(columns={"model": "large", **{f: f"{f}_large" for f in fields
                                                                            if f != "gold"}})
    large = large.merge(keys[["large", *GROUP_KEY, "_order"]], on=["large", *GROUP_KEY])
    joined = small.merge(large.drop(columns=["large", *GROUP_KEY]), on=["_order", "question_id"])
    joined = joined.rename(columns={"gold_small": "gold"}).astype({c: object for c in [*CASE_KEY, "question_id"]})
    return joined.sort_values("_order", kind="stable").reset_index(drop=True)


def comparison_flips(table: pd.DataFrame, comparisons: pd.DataFrame, variant: str,
                     shared: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per flipped question (both answers known, one right) of each comparison (CASE_KEY rows: the cases,
    or every eligible comparison), in the comparisons' order, FlipInv first: FLIP_COLUMNS. Fields the table
    lacks (rule, extraction_tier, ...) are null. `shared`: shared_answers of the same arguments, when built."""
    if comparisons.empty:
        return pd.DataFrame(columns=FLIP_COLUMNS)
    if shared is None:
        shared = shared_answers(table, comparisons, variant)
    flips = shared[shared["correct_small"] != shared["correct_large"]].copy()
    if flips.empty:
        return pd.DataFrame(columns=FLIP_COLUMNS)
    flips["direction"] = np.where(flips["correct_small"].astype(bool), FLIP_INV, FLIP_NORM)
    flips = flips.rename(columns={f"{name}_{side}": f"{side}_{name}" for side in ("small", "large")
                                  for name in SIDE_FIELDS})
    flips = flips.sort_values(["_order", "direction"], ascending=[True, True], kind="stable")
    return flips[FLIP_COLUMNS].reset_index(drop=True)


def records_tiers(table: pd.DataFrame) -> bool:
    """Whether the logs record extraction tiers: some prediction has one. Logs written before the field give
    every prediction an unknown tier, and then the extraction check is not run rather than failed."""
    return "extraction_tier" in table.columns and bool(table["extraction_tier"].notna().any())


def _weak(tier: pd.Series, prediction: pd.Series, settled: pd.Series) -> pd.Series:
    """Whether answers are weak: a letter of a WEAK_TIERS rule, or of unknown tier (null while a prediction
    exists: the extraction tier contract), an unsettled answer, or one a judge settled."""
    return (tier.isin(WEAK_TIERS) | (tier.isna() & prediction.notna()) | settled.isin(("judge", "unsettled"))).fillna(
        False).astype(bool)


def rests_on_weak_letter(flips: pd.DataFrame) -> pd.Series:
    """Whether either side of each flip (FLIP_COLUMNS) is weak (_weak)."""
    return pd.concat([_weak(flips[f"{side}_extraction_tier"], flips[f"{side}_prediction"], flips[f"{side}_settled_by"])
                      for side in ("small", "large")], axis=1).any(axis=1)


def extraction_exposure(table: pd.DataFrame, cases: pd.DataFrame, variant: str,
                        shared: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per case (CASE_KEY): weak_flip_inv, its FlipInv flips with a weak answer on either side; weak_agreeing, the
    questions both models answered alike where a weak answer could make a FlipNorm (both right and the smaller
    model's answer weak, or both wrong and the larger model's weak); external, whether an answer of its questions
    is another harness's reading (tier external: no text of ours to judge). `shared`: shared_answers of the same
    arguments, when built."""
    columns = [*CASE_KEY, "weak_flip_inv", "weak_agreeing", "external"]
    if shared is None:
        shared = shared_answers(table, cases, variant)
    if shared.empty:
        return pd.DataFrame(columns=columns)
    small_right, large_right = shared["correct_small"].astype(bool), shared["correct_large"].astype(bool)
    weak_small, weak_large = (_weak(shared[f"extraction_tier_{side}"], shared[f"prediction_{side}"],
                                    shared[f"settled_by_{side}"]) for side in ("small", "large"))
    external = (shared["extraction_tier_small"] == "external") | (shared["extraction_tier_large"] == "external")
    frame = shared.assign(
        weak_flip_inv=small_right & ~large_right & (weak_small | weak_large),
        weak_agreeing=(small_right & large_right & weak_small) | (~small_right & ~large_right & weak_large),
        external=external.fillna(False))
    exposure = frame.groupby(["_order", *CASE_KEY], sort=True)[["weak_flip_inv", "weak_agreeing", "external"]].agg(
        {"weak_flip_inv": "sum", "weak_agreeing": "sum", "external": "any"}).reset_index()
    return exposure[columns]


def run_to_run_noise(outcomes: Outcomes, cases: pd.DataFrame, base_variant: str) -> pd.DataFrame:
    """Per case (CASE_KEY): noise_n, its questions answered with known gold by both models in both the analysed
    run and the identity re-run, and noise_threshold, how many of those 2 x noise_n answers changed correctness
    between the two runs (NaN without a re-run of both models on the subtask)."""
    columns = [*CASE_KEY, "noise_n", "noise_threshold"]
    if NOISE_VARIANT not in outcomes.variants or cases.empty:
        return pd.DataFrame(columns=columns)
    base, again = outcomes.values[outcomes.variant_index(base_variant)], outcomes.values[
        outcomes.variant_index(NOISE_VARIANT)]
    groups = len(outcomes.groups)
    rows = []
    for (small, large), part in cases.groupby(["small", "large"], sort=False):
        s, m = outcomes.model_index(small), outcomes.model_index(large)
        shared = (base[s] != MISSING) & (base[m] != MISSING) & (again[s] != MISSING) & (again[m] != MISSING)
        changed = (base[s] != again[s]).astype(np.int64) + (base[m] != again[m])
        group = outcomes.question_group[shared]
        n = np.bincount(group, minlength=groups)
        churn = np.bincount(group, weights=changed[shared], minlength=groups)
        at = part["group"].to_numpy()
        rows.append(part[CASE_KEY].assign(noise_n=n[at], noise_threshold=np.where(n[at] > 0, churn[at], np.nan)))
    return pd.concat(rows, ignore_index=True)[columns]


def share_interval(wins: np.ndarray, trials: np.ndarray, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson interval of wins / trials (NaN where trials is 0)."""
    wins, trials = np.asarray(wins, dtype=float), np.asarray(trials, dtype=float)
    tail = (1 - level) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(wins > 0, betaincinv(wins, trials - wins + 1, tail), 0.0)
        high = np.where(wins < trials, betaincinv(wins + 1, trials - wins, 1 - tail), 1.0)
    empty = trials == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def min_detectable_net(discordant: np.ndarray, alpha: float, power: float = POWER) -> np.ndarray:
    """The smallest Net the one-sided exact McNemar test at `alpha` detects with probability `power`, given D
    discordant questions (module docstring); NaN where no outcome of D questions is significant."""
    result = np.full(len(discordant), np.nan)
    for d in np.unique(discordant):
        d = int(d)
        wins = np.arange(d + 1)
        significant = wins[bdtrc(wins - 1, d, 0.5) <= alpha]
        if d == 0 or not len(significant):
            continue
        pi = bdtri(significant[0] - 1, d, 1 - power)  # P(X <= k - 1) = 1 - power, i.e. P(X >= k) = power
        result[np.asarray(discordant) == d] = d * (2 * pi - 1)
    return result


def _order_checks(cases: pd.DataFrame, controls: dict[str, pd.DataFrame]) -> tuple[list[str], list[str]]:
    """(order_check, order_nets) per case, from the reordered runs in `controls` (variant -> control_flips)."""
    runs: dict[tuple, list[tuple[str, int]]] = {}
    for variant in (v for v in REORDERING_VARIANTS if v in controls):
        for row in controls[variant][[*CASE_KEY, "net"]].itertuples(index=False):
            runs.setdefault(tuple(row[:-1]), []).append((variant, int(row[-1])))
    checks, nets = [], []
    for key in cases[CASE_KEY].itertuples(index=False):
        found = runs.get(tuple(key), [])
        checks.append(NOT_RUN if not found else PASS if all(net > 0 for _, net in found) else FAIL)
        nets.append("; ".join(f"{variant} {net:+d}" for variant, net in found))
    return checks, nets


def _replication(cases: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
    """replicated and replication_families per case (the module docstring): an attribute, never a check."""
    eligible = comparisons[comparisons["eligible"]]
    compared = eligible.groupby("group")["family_index"].nunique()
    with_cases = cases.groupby("group")["family_index"].nunique()
    groups = cases["group"]
    n_compared = groups.map(compared).fillna(0).astype(int).to_numpy()
    n_cases = groups.map(with_cases).fillna(0).astype(int).to_numpy()
    return pd.DataFrame({"replicated": n_cases >= REPLICATION_FAMILIES,
                         "replication_families": [f"{c} of {n}" for c, n in zip(n_cases, n_compared)]},
                        index=cases.index)


def _verdict(checks: pd.DataFrame) -> tuple[list[str], list[str]]:
    verdicts, failures = [], []
    for row in checks.itertuples(index=False):
        states = dict(zip(CHECKS, row))
        failed = [CHECKS[c] for c, state in states.items() if state == FAIL]
        not_run = sum(state == NOT_RUN for state in states.values())
        failures.append(", ".join(failed))
        if failed:
            verdicts.append(FAIL)
        elif not_run == len(CHECKS):
            verdicts.append("not checked")
        else:
            verdicts.append(PASS if not not_run else f"pass, {not_run} not run")
    return verdicts, failures


def case_verdicts(cases: pd.DataFrame, comparisons: pd.DataFrame, controls: dict[str, pd.DataFrame],
                  noise: pd.DataFrame, exposure: pd.DataFrame, *, has_tiers: bool, min_net: int,
                  alpha: float, treatment: str) -> pd.DataFrame:
    """The cases (their rows, in their order) with CREDIBILITY_COLUMNS added (module docstring)."""
    frame = cases.copy()
    frame["order_check"], frame["order_nets"] = _order_checks(cases, controls)

    keys = cases[CASE_KEY].astype(object)
    noise = keys.merge(noise.astype({c: object for c in CASE_KEY}), on=CASE_KEY, how="left")
    threshold = noise["noise_threshold"].astype(float).to_numpy()
    frame["noise_threshold"] = threshold
    frame["noise_check"] = np.where(np.isnan(threshold), NOT_RUN, np.where(cases["net"] > threshold, PASS, FAIL))

    exposure = keys.merge(exposure.astype({c: object for c in CASE_KEY}), on=CASE_KEY, how="left")
    weak = (exposure["weak_flip_inv"].fillna(0) + exposure["weak_agreeing"].fillna(0)).astype(int).to_numpy()
    # Excluded unsettled questions could each be a FlipNorm: Net's least value over their resolutions.
    excluded = np.minimum(0, cases["net_unsettled_min"] - cases["net_if_unsettled_excluded"]).to_numpy() if (
        treatment == "exclude") else 0
    external = exposure["external"].fillna(False).astype(bool).to_numpy()
    frame["worst_case_net"] = cases["net"].to_numpy() - weak + excluded if has_tiers else np.nan
    frame["extraction_check"] = np.where(external | (not has_tiers), NOT_RUN,
                                         np.where(frame["worst_case_net"] >= min_net, PASS, FAIL))
    frame.loc[external, "worst_case_net"] = np.nan

    frame = frame.join(_replication(cases, comparisons))
    discordant = (cases["flip_inv"] + cases["flip_norm"]).to_numpy()
    low, high = share_interval(cases["flip_inv"].to_numpy(), discordant)
    frame["share_ci_low"], frame["share_ci_high"] = low, high
    frame["net_ci_low"], frame["net_ci_high"] = discordant * (2 * low - 1), discordant * (2 * high - 1)
    frame["min_detectable_net"] = min_detectable_net(discordant, alpha)
    frame["verdict"], frame["failed_checks"] = _verdict(frame[list(CHECKS)])
    return frame


def verdict_summary(cases: pd.DataFrame) -> dict:
    """summary.json's credibility numbers: the headline count (no check failed and at least one ran) and how
    each check came out."""
    verdict = cases["verdict"] if len(cases) else pd.Series(dtype=object)
    passing = verdict.str.startswith(PASS)
    return {
        "cases": len(cases),
        "pass_checks_run": int(passing.sum()),
        "pass_all_checks": int((verdict == PASS).sum()),
        "fail": int((verdict == FAIL).sum()),
        "not_checked": int((verdict == "not checked").sum()),
        **{column: {state: int((cases[column] == state).sum()) for state in (PASS, FAIL, NOT_RUN)}
           for column in CHECKS},
    }
