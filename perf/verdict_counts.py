"""The credibility verdict's counts at paper scale (docs/flip_explorer.md, docs/performance.md).

    .venv/bin/python perf/verdict_counts.py [--weak 0.03] [--seed 1]

The synthetic paper-scale table of perf/synthetic.py (19 registry models, 29,386 questions each) with an
extraction tier drawn for every answer (a `--weak` share of them `reading` or `judge`, 5 to 1, the rest `strict`)
and control runs drawn from the main run by flipping each answer with a fixed chance (2% for the identity re-run,
8% for a reordering), under three sets of runs: the main run only; an identity re-run of everything and `reverse`
on BLINK; the paper's controls (identity and reverse, shift1-3 on BLINK only). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from synthetic import per_question_table  # noqa: E402

from postprocess.inverse_scaling.analysis import run_analysis  # noqa: E402
from postprocess.inverse_scaling.parameters import Parameters  # noqa: E402

IDENTITY_CHURN, REORDER_CHURN = 0.02, 0.08


def rerun(part: pd.DataFrame, variant: str, churn: float, rng: np.random.Generator) -> pd.DataFrame:
    """`part` run again as `variant`: each answer's correctness flipped with chance `churn`."""
    again = part.copy()
    correct = again["correct"].to_numpy(dtype=bool) ^ (rng.random(len(again)) < churn)
    again["correct"] = pd.array(correct, dtype="boolean")
    again["prediction"] = again["response"] = np.where(correct, "A", "B")
    again["variant"] = variant
    return again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weak", type=float, default=0.03, help="share of answers with a weak extraction tier")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    table, models = per_question_table(1, 0, categorical=False)
    rng = np.random.default_rng(args.seed)
    weak = args.weak
    table["extraction_tier"] = pd.array(rng.choice(["strict", "reading", "judge"], size=len(table),
                                                   p=[1 - weak, weak * 5 / 6, weak / 6]), dtype="string")
    blink = table[table["benchmark"] == "BLINK"]
    scenarios = {
        "the main run only": table,
        "identity re-run of everything, reverse on BLINK": pd.concat(
            [table, rerun(table, "identity", IDENTITY_CHURN, rng), rerun(blink, "reverse", REORDER_CHURN, rng)],
            ignore_index=True),
        "identity and reverse, shift1-3 on BLINK only": pd.concat(
            [table, rerun(blink, "identity", IDENTITY_CHURN, rng),
             *(rerun(blink, v, REORDER_CHURN, rng) for v in ("reverse", "shift1", "shift2", "shift3"))],
            ignore_index=True),
    }
    print("| runs | cases | fully checked, pass | fail | none failed, k not run | order pass/fail/not run | "
          "noise pass/fail/not run | extraction pass/fail/not run | noise p95 \\|change\\| (comparisons) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, data in scenarios.items():
        numbers = run_analysis(data, models, Parameters()).summary["credibility"]
        checks = [" / ".join(str(numbers[c][s]) for s in ("pass", "fail", "not run"))
                  for c in ("order_check", "noise_check", "extraction_check")]
        noise = numbers["noise_change"]
        spread = f"{noise['p95_abs_net_change']:g} ({noise['comparisons']:,})" if noise["comparisons"] else "–"
        print(f"| {name} | {numbers['cases']} | {numbers['pass_all_checks']} | {numbers['fail']} | "
              f"{numbers['partly_checked']} | {' | '.join(checks)} | {spread} |")


if __name__ == "__main__":
    main()
