"""Whether a case holds: its flipped questions, and a credibility verdict from the runs the logs hold.

    flips = comparison_flips(table, analysis.cases, variant)   # one row per flipped question of each case
    noise = run_to_run_noise(outcomes, eligible_comparisons, variant)
    verdicts = case_verdicts(cases, comparisons, controls, noise, exposure, ...)

Each check is "pass", "fail" or "not run" (the logs cannot make it); a check never passes silently. A re-run or
reordered run decides a check only when it covers at least RERUN_COVERAGE (80%) of the case's n questions (it
shares k of them: both models answered them with a known gold in both runs); one that covers fewer leaves the check
"not run (re-run covers k of n)". Both run checks ask what the case definition asks of the main run, Net >= min_net;
the definition's other part, n >= min_n, is replaced by the coverage rule (a re-run is read on the case's own
questions, not as a new comparison).
- option order (`order_check`): Net >= min_net in every reordered run of the case's two models the logs hold
  (REORDERING_VARIANTS: reverse, shift1-3) that covers the case; one such run below fails it (Net 0 or +3 with
  min_net 5 too). Not run without a covering reordered run. `order_n_<variant>` and `order_net_<variant>` carry
  each reordered run's shared questions and Net (null without one), `order_nets` says them in words.
- run-to-run noise (`noise_check`): the paper's measure (Appendix J: the identity replays "differ from the
  main-evaluation values in Table 3 by up to 11 Net points in either direction"): the case's Net in the identity
  re-run (the unchanged prompt run again), `noise_net`, on its `noise_n` shared questions; passes when
  noise_net >= min_net. `noise_net_change` is noise_net less the main run's Net on the same questions (the main Net
  itself when the re-run covers them all). Not run without a covering re-run of both models.
  `run_to_run_noise` measures the change over every eligible comparison with a covering re-run, which one re-run of
  one case cannot give: `noise_change_percentile` places the case's |change| in that distribution (the share of
  those comparisons whose |change| is at most the case's), and verdict_summary prints its 95th percentile.
- extraction (`extraction_check`): `worst_case_net` >= min_net, where worst_case_net is Net less the FlipInv
  flips that rest on a weak letter: either model's `extraction_tier` is "reading" or "judge", or unknown
  (null while a prediction exists). Removing weak FlipNorm flips could only raise Net, so they stay. Not run
  when no prediction of the table has an `extraction_tier` (logs written before the tier was recorded).
Replication is not a check: the paper calls the three-family criterion "a reporting choice ... not part of the
underlying pairwise case definition" (Section 5.4). `replication_families` ("k of m") says beside the verdict in how
many of the m families with an eligible comparison on the subtask it has cases, and `replicated` whether k >=
REPLICATION_FAMILIES.
Statistics printed beside the case (not checks), all given the case's D = FlipInv + FlipNorm discordant questions
(Net = D (2 share - 1), share = FlipInv / D the share of them the smaller model wins):
- `share_lower_bound`, `net_lower_bound`: the one-sided exact (Clopper-Pearson) lower bound at CI_LEVEL, the
  interval that matches the one-sided McNemar test: p_value <= 1 - CI_LEVEL exactly when net_lower_bound >= 0;
- `share_ci_low`, `share_ci_high`, `net_ci_low`, `net_ci_high`: the two-sided exact interval at CI_LEVEL;
- `min_detectable_share`, `min_detectable_net`: a property of the design, not of the observed Net: with D
  discordant questions, a true share of min_detectable_share (Net D (2 share - 1)) would be detected POWER (80%)
  of the time by the one-sided exact test at level alpha: the share solves P(Binomial(D, share) >= k) = POWER, k
  the test's critical count (the least k with P(Binomial(D, 1/2) >= k) <= alpha). NaN when D is too small for
  the test to reject at all. `min_detectable_share_bh`, `min_detectable_net_bh`: the same at the level BH
  applied over all eligible comparisons (`bh_level`: fdr R / m, R of the m eligible comparisons rejected; fdr / m
  when none was).
`verdict` (is the case an artefact of option order, run-to-run noise or the reading of answers?): "fail" when a
check failed; "pass" when all three ran and passed (fully checked); "none failed, k not run" when none failed and
some ran (not a pass); "not checked" when none could run. `failed_checks` names the failed ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import bdtrc, bdtri, betaincinv

from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.compare import GROUP_KEY, QUESTION_KEY, Outcomes
from postprocess.inverse_scaling.controls import control_flips
from postprocess.inverse_scaling.settlement import settled_by
from postprocess.logs.extra import extra_fields
from postprocess.inverse_scaling.parameters import (
    CI_LEVEL,
    NOISE_VARIANT,
    POWER,
    REORDERING_VARIANTS,
    REPLICATION_FAMILIES,
    RERUN_COVERAGE,
    WEAK_TIERS,
)

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"
NOT_CHECKED = "not checked"
CHECKS = {"order_check": "option order", "noise_check": "run-to-run noise", "extraction_check": "extraction"}
CREDIBILITY_COLUMNS = [
    "verdict", "failed_checks", "order_check", "order_nets",
    *(f"order_{field}_{variant}" for variant in REORDERING_VARIANTS for field in ("n", "net")),
    "noise_check", "noise_n", "noise_net", "noise_net_change", "noise_change_percentile", "extraction_check",
    "worst_case_net", "replicated", "replication_families", "share_lower_bound", "net_lower_bound", "share_ci_low",
    "share_ci_high", "net_ci_low", "net_ci_high", "min_detectable_share", "min_detectable_net",
    "min_detectable_share_bh", "min_detectable_net_bh",
]  # fmt: skip
NOISE_COLUMNS = [*CASE_KEY, "n", "noise_n", "noise_net", "noise_net_change", "covered"]
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


def run_to_run_noise(outcomes: Outcomes, comparisons: pd.DataFrame, base_variant: str) -> pd.DataFrame:
    """Per comparison (CASE_KEY rows, with `group` and `n`: the eligible comparisons, say) that the identity re-run
    shares a question with: NOISE_COLUMNS. noise_n, the questions answered with a known gold by both models in
    both runs; noise_net, Net in the re-run on them; noise_net_change, noise_net less the main run's Net on the
    same questions; covered, whether noise_n >= RERUN_COVERAGE n. Empty without a re-run."""
    if NOISE_VARIANT not in outcomes.variants or comparisons.empty:
        return pd.DataFrame(columns=NOISE_COLUMNS)
    again = control_flips(outcomes, comparisons, base_variant=base_variant, variant=NOISE_VARIANT)
    frame = again[CASE_KEY].merge(comparisons[[*CASE_KEY, "n"]], on=CASE_KEY, how="left")
    frame["noise_n"] = again["n"].to_numpy()
    frame["noise_net"] = again["net"].to_numpy()
    frame["noise_net_change"] = (again["net"] - (again["base_flip_inv"] - again["base_flip_norm"])).to_numpy()
    frame["covered"] = frame["noise_n"] >= RERUN_COVERAGE * frame["n"]
    return frame[NOISE_COLUMNS]


def covered_changes(noise: pd.DataFrame) -> np.ndarray:
    """|noise_net_change| of the comparisons whose re-run covers them (run_to_run_noise), sorted."""
    return np.sort(noise.loc[noise["covered"].astype(bool), "noise_net_change"].abs().to_numpy(dtype=float))


def share_interval(wins: np.ndarray, trials: np.ndarray, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper-Pearson interval of wins / trials at `level` (NaN where trials is 0)."""
    tail = (1 - level) / 2
    return share_lower_bound(wins, trials, 1 - tail), _share_upper_bound(wins, trials, 1 - tail)


def share_lower_bound(wins: np.ndarray, trials: np.ndarray, level: float = CI_LEVEL) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound of wins / trials at `level`: the beta quantile of the exact binomial
    interval (scipy's; NaN where trials is 0)."""
    wins, trials = np.asarray(wins, dtype=float), np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(wins > 0, betaincinv(wins, trials - wins + 1, 1 - level), 0.0)
    return np.where(trials == 0, np.nan, low)


def _share_upper_bound(wins: np.ndarray, trials: np.ndarray, level: float) -> np.ndarray:
    wins, trials = np.asarray(wins, dtype=float), np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        high = np.where(wins < trials, betaincinv(wins + 1, trials - wins, level), 1.0)
    return np.where(trials == 0, np.nan, high)


def min_detectable_share(discordant: np.ndarray, alpha: float, power: float = POWER) -> np.ndarray:
    """The true share of the D discordant questions won by the smaller model that the one-sided exact McNemar test
    at `alpha` detects with probability `power` (module docstring); NaN where no outcome of D questions is
    significant. Its Net is D (2 share - 1)."""
    result = np.full(len(discordant), np.nan)
    for d in np.unique(discordant):
        d = int(d)
        wins = np.arange(d + 1)
        significant = wins[bdtrc(wins - 1, d, 0.5) <= alpha]
        if d == 0 or not len(significant):
            continue
        # P(X <= k - 1) = 1 - power, i.e. P(X >= k) = power
        result[np.asarray(discordant) == d] = bdtri(significant[0] - 1, d, 1 - power)
    return result


def bh_level(comparisons: pd.DataFrame, fdr: float) -> float:
    """The level BH applied over all eligible comparisons: a p-value is rejected exactly when it is at most
    fdr R / m, R of the m comparisons rejected; fdr / m (what the smallest would need) when none was."""
    eligible = comparisons[comparisons["eligible"]]
    return fdr * max(int(eligible["bh_all"].sum()), 1) / max(len(eligible), 1)


def _covers(n: float, case_n: float) -> bool:
    return n >= RERUN_COVERAGE * case_n


def _order_checks(cases: pd.DataFrame, controls: dict[str, pd.DataFrame], min_net: int) -> pd.DataFrame:
    """order_check, order_nets and order_n_/order_net_<variant> per case, from the reordered runs in `controls`
    (variant -> control_flips)."""
    frame = pd.DataFrame(index=cases.index)
    keys = cases[CASE_KEY].astype(object)
    for variant in REORDERING_VARIANTS:
        runs = controls.get(variant, pd.DataFrame(columns=[*CASE_KEY, "n", "net"]))
        found = keys.merge(runs[[*CASE_KEY, "n", "net"]].astype({c: object for c in CASE_KEY}), on=CASE_KEY,
                           how="left")
        frame[f"order_n_{variant}"] = pd.array(found["n"].to_numpy(dtype=float), dtype="Int64")
        frame[f"order_net_{variant}"] = pd.array(found["net"].to_numpy(dtype=float), dtype="Int64")
    checks, words = [], []
    for case_n, row in zip(cases["n"], frame.itertuples(index=False)):
        runs = [(variant, n, net) for variant, n, net in zip(REORDERING_VARIANTS, row[::2], row[1::2])
                if not pd.isna(n)]
        counted = [net for _, n, net in runs if _covers(n, case_n)]
        checks.append(NOT_RUN if not counted else PASS if all(net >= min_net for net in counted) else FAIL)
        words.append("; ".join(f"{variant} {net:+d} on {n} of {case_n}"
                               + ("" if _covers(n, case_n) else f" (under {RERUN_COVERAGE:.0%}: not counted)")
                               for variant, n, net in runs))
    frame.insert(0, "order_check", checks)
    frame.insert(1, "order_nets", words)
    return frame


def replication_of(cases: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
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


def partly_checked(not_run: int) -> str:
    """The verdict of a case none of whose checks failed and `not_run` of them could not run: not a pass."""
    return f"none failed, {not_run} not run"


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
            verdicts.append(NOT_CHECKED)
        else:
            verdicts.append(PASS if not not_run else partly_checked(not_run))
    return verdicts, failures


def _noise_columns(cases: pd.DataFrame, noise: pd.DataFrame, min_net: int) -> pd.DataFrame:
    """noise_check, noise_n, noise_net, noise_net_change and noise_change_percentile per case (module docstring)."""
    keys = cases[CASE_KEY].astype(object)
    found = keys.merge(noise.astype({c: object for c in CASE_KEY}), on=CASE_KEY, how="left")
    covered = found["covered"].fillna(False).astype(bool).to_numpy()
    net = found["noise_net"].to_numpy(dtype=float)
    change = found["noise_net_change"].to_numpy(dtype=float)
    changes = covered_changes(noise)
    at_most = np.searchsorted(changes, np.abs(change), side="right")
    frame = pd.DataFrame({
        "noise_check": np.where(~covered, NOT_RUN, np.where(net >= min_net, PASS, FAIL)),
        "noise_n": pd.array(found["noise_n"].to_numpy(dtype=float), dtype="Int64"),
        "noise_net": pd.array(net, dtype="Int64"),
        "noise_net_change": pd.array(change, dtype="Int64"),
        "noise_change_percentile": np.where(covered, 100.0 * at_most / max(len(changes), 1), np.nan),
    }, index=cases.index)
    return frame


def case_verdicts(cases: pd.DataFrame, comparisons: pd.DataFrame, controls: dict[str, pd.DataFrame],
                  noise: pd.DataFrame, exposure: pd.DataFrame, *, has_tiers: bool, min_net: int,
                  alpha: float, fdr: float, treatment: str) -> pd.DataFrame:
    """The cases (their rows, in their order) with CREDIBILITY_COLUMNS added (module docstring); `noise` is
    run_to_run_noise over the eligible comparisons."""
    frame = cases.copy()
    frame = frame.join(_order_checks(cases, controls, min_net))
    frame = frame.join(_noise_columns(cases, noise, min_net))

    keys = cases[CASE_KEY].astype(object)
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

    frame = frame.join(replication_of(cases, comparisons))
    discordant = (cases["flip_inv"] + cases["flip_norm"]).to_numpy()
    wins = cases["flip_inv"].to_numpy()
    frame["share_lower_bound"] = share_lower_bound(wins, discordant)
    frame["net_lower_bound"] = discordant * (2 * frame["share_lower_bound"] - 1)
    low, high = share_interval(wins, discordant)
    frame["share_ci_low"], frame["share_ci_high"] = low, high
    frame["net_ci_low"], frame["net_ci_high"] = discordant * (2 * low - 1), discordant * (2 * high - 1)
    for suffix, level in (("", alpha), ("_bh", bh_level(comparisons, fdr))):
        share = min_detectable_share(discordant, level)
        frame[f"min_detectable_share{suffix}"] = share
        frame[f"min_detectable_net{suffix}"] = discordant * (2 * share - 1)
    frame["verdict"], frame["failed_checks"] = _verdict(frame[list(CHECKS)])
    return frame


def verdict_summary(cases: pd.DataFrame, noise: pd.DataFrame, comparisons: pd.DataFrame, fdr: float) -> dict:
    """summary.json's credibility numbers: the headline counts (fully checked and passing, partly checked, ...),
    how each check came out, the distribution of the re-run's Net change and the BH level of the _bh MDE."""
    verdict = cases["verdict"] if len(cases) else pd.Series(dtype=object)
    changes = covered_changes(noise)
    return {
        "cases": len(cases),
        "pass_all_checks": int((verdict == PASS).sum()),
        "partly_checked": int((~verdict.isin([PASS, FAIL, NOT_CHECKED])).sum()),
        "fail": int((verdict == FAIL).sum()),
        "not_checked": int((verdict == NOT_CHECKED).sum()),
        **{column: {state: int((cases[column] == state).sum()) for state in (PASS, FAIL, NOT_RUN)}
           for column in CHECKS},
        "noise_change": {
            "comparisons": len(changes),
            "p95_abs_net_change": float(np.percentile(changes, 95)) if len(changes) else None,
            "max_abs_net_change": int(changes.max()) if len(changes) else None,
        },
        "bh_level": bh_level(comparisons, fdr),
    }
