"""The analysis parameters: the paper's thresholds, as defaults in this one place.

The CLI builds a Parameters from its options (its defaults are these) and passes it whole; no function
below it carries a default threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

REPLICATION_FAMILIES = 3  # Section 5.4: a subtask-dataset pair recurring in >= 3 families is "replicated"
NET_BIN_EDGES = (5, 8, 11, 16, 21)  # Table 35's Net ranges: 5-7, 8-10, 11-15, 16-20, >=21
UNSETTLED_TREATMENTS = ("exclude", "wrong", "candidate")  # settlement.py: what an answer nobody settled counts as
COT_VARIANT = "cot"  # the variant read as the chain-of-thought control (Appendix L)


@dataclass(frozen=True)
class Parameters:
    min_n: int = 20  # shared questions for an eligible comparison (Section 3)
    min_net: int = 5  # Net for a case (Section 4)
    fdr: float = 0.05  # Benjamini-Hochberg false discovery rate (Appendix D)
    alpha: float = 0.05  # uncorrected significance level
    variant: str = "direct"  # the prompt variant analysed
    top_k: int = 10  # Table 3's rows
    thresholds: tuple[int, ...] = (5, 10, 15, 20, 25, 30)  # Table 38's Net thresholds
    unsettled: str = "exclude"  # what an answer nobody settled counts as: exclude | wrong | candidate (settlement.py; ours)


@dataclass(frozen=True)
class TaxonomyParameters:
    """The error-taxonomy sample and judging (Section 5.6, Appendix G.1; rules: taxonomy/sample.py)."""

    per_case: int = 10  # flip questions per case, at most
    family_cap: int = 600  # sampled questions per family, at most
    allocation: str = "equal"  # how a family's cap becomes dataset quotas: equal | proportional (the paper: "stratified")
    dataset_quotas: tuple[tuple[str, int], ...] = ()  # (benchmark, at most this many per family)
    seed: int = 0
    sides: str = "paper"  # paper: the correct model is "Model A" (G.1); random: a seeded coin per question

# The credibility verdict of each case (inverse_scaling/credibility.py).
CI_LEVEL = 0.95  # the exact (Clopper-Pearson) bounds of FlipInv / (FlipInv + FlipNorm) and of Net: one-sided, as the
# test is, and two-sided beside it
RERUN_COVERAGE = 0.8  # a re-run or reordered run decides a check only when it shares this part of the case's questions
POWER = 0.8  # the minimum detectable Net is the smallest the McNemar test at `alpha` finds with this probability
REORDERING_VARIANTS = ("reverse", "shift1", "shift2", "shift3")  # option-order runs; "identity" is the noise re-run
NOISE_VARIANT = "identity"  # the unchanged prompt re-run: run-to-run noise (Appendix J)
WEAK_TIERS = ("reading", "judge")  # letters the extraction check removes (the extraction tier contract); "external"
# letters (another harness's reading, no text of ours) make it "not run"
