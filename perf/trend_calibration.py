"""Calibration and power of the family-wide trend test (postprocess/inverse_scaling/trend.py), by simulation.

    .venv/bin/python perf/trend_calibration.py [--replicates 4000] [--power-replicates 1000] [--seed 0]
                                               [--figure docs/trend_power.png]

Families of the registry's sizes (Qwen3-VL, 6 sizes; Gemma 3, 3 sizes) answer subtasks of paper sizes (20 to 2,000
questions). Each question has a difficulty drawn as in perf/synthetic.py (normal, sd 4.5 on the logit scale, so
most questions are right or wrong for every size, as real ones are); model m answers it right with probability
sigmoid(ability_m - difficulty). Three worlds:
  no trend     every size has the same ability: the rate of p < 0.05 is the false-positive rate, checked against
               the binomial error of 5% (two binomial standard errors of --replicates tests; the script exits 1 when
               one lies above it; at 20 questions it lies below: few questions differ between sizes there);
  linear       ability falls by delta logits per doubling: power against the true change in accuracy per doubling;
  single pair  one middle size (Qwen3-VL-8B, Gemma-3-12B) alone drops by delta: how often that reads as a
               family-wide decline (p < 0.05 and slope < 0), against how often its pair with the next size finds it
               (one-sided exact McNemar at 0.05, as the pairwise analysis tests it).
Each replicate is one subtask of one Outcomes cube, so one call of family_trends tests them all. Prints Markdown
tables and draws the power curves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from postprocess.inverse_scaling.compare import Outcomes, mcnemar_greater  # noqa: E402
from postprocess.inverse_scaling.trend import family_trends  # noqa: E402

FAMILIES = {"Qwen3-VL": [2, 4, 8, 30, 32, 235], "Gemma 3": [4, 12, 27]}  # billions of total parameters
DIPPED = {"Qwen3-VL": 2, "Gemma 3": 1}  # the middle size that dips alone in the single-pair world
SUBTASK_SIZES = [20, 50, 200, 1000, 2000]
DELTAS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5]  # logits per doubling (linear) or of the dip (x 10, single pair)
ALPHA = 0.05


def simulate(sizes: list[int], abilities: np.ndarray, n: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """bool (models, replicates * n): the answers of each size to `replicates` subtasks of n questions."""
    difficulty = rng.normal(-0.5, 4.5, replicates * n)
    logits = abilities[:, None] - difficulty[None, :]
    return rng.random((len(sizes), replicates * n)) < 1.0 / (1.0 + np.exp(-logits))


def trend_p(sizes: list[int], right: np.ndarray, n: int, replicates: int) -> pd.DataFrame:
    """family_trends on one cube holding each replicate as a subtask: slope_pp and p_value per replicate."""
    names = [f"m{b}B" for b in sizes]
    models = pd.DataFrame({"model": names, "family": "F", "size": [f"{b}B" for b in sizes],
                           "total_params": [b * 10**9 for b in sizes]})
    groups = pd.DataFrame({"benchmark": "sim", "split": "test", "subtask": [f"r{r:05d}" for r in range(replicates)]})
    outcomes = Outcomes(variants=("direct",), models=tuple(names), groups=groups,
                        question_group=np.repeat(np.arange(replicates), n), values=right[None].astype(np.int8))
    trends, _ = family_trends(outcomes, models, "direct", min_n=1, fdr=ALPHA, level=0.95)
    # A replicate whose questions are all right (or all wrong) for every size is still a test: p = 1.
    full = trends.set_index("subtask").reindex(groups["subtask"])
    return full.fillna({"p_value": 1.0, "slope_pp": 0.0})


def true_slope_pp(sizes: list[int], abilities: np.ndarray, rng: np.random.Generator) -> float:
    """The population change in accuracy per doubling: least squares over sizes of the expected accuracy."""
    difficulty = rng.normal(-0.5, 4.5, 400_000)
    accuracy = (1.0 / (1.0 + np.exp(-(abilities[:, None] - difficulty[None, :])))).mean(axis=1)
    return 100.0 * np.polyfit(np.log2(sizes), accuracy, 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=4000, help="subtasks per (family, n) with no trend")
    parser.add_argument("--power-replicates", type=int, default=1000, help="subtasks per (family, n, world, delta)")
    parser.add_argument("--figure", type=Path, default=REPO / "docs" / "trend_power.png")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    bound = 2 * np.sqrt(ALPHA * (1 - ALPHA) / args.replicates)
    rows = []
    for family, sizes in FAMILIES.items():
        x = np.log2(sizes) - np.log2(sizes).mean()
        for world in ("no trend", "linear", "single pair"):
            for delta in (DELTAS[:1] if world == "no trend" else DELTAS[1:]):
                if world == "linear":
                    abilities = -delta * x
                else:
                    abilities = np.zeros(len(sizes))
                    abilities[DIPPED[family]] = -10 * delta if world == "single pair" else 0.0
                truth = true_slope_pp(sizes, abilities, rng)
                reps = args.replicates if world == "no trend" else args.power_replicates
                for n in SUBTASK_SIZES:
                    right = simulate(sizes, abilities, n, reps, rng)
                    found = trend_p(sizes, right, n, reps)
                    significant = found["p_value"].to_numpy() < ALPHA
                    row = {"family": family, "world": world, "delta": delta, "true_slope_pp": truth, "n": n,
                           "rejected": significant.mean(),
                           "decline": (significant & (found["slope_pp"].to_numpy() < 0)).mean()}
                    if world == "single pair":
                        d = DIPPED[family]
                        small, large = right[d - 1].reshape(reps, n), right[d].reshape(reps, n)
                        inverse, normal = (small & ~large).sum(axis=1), (~small & large).sum(axis=1)
                        row["pair_found"] = (mcnemar_greater(inverse, inverse + normal) < ALPHA).mean()
                    rows.append(row)
    frame = pd.DataFrame(rows)
    null = frame[frame["world"] == "no trend"]
    print(f"False-positive rate at alpha {ALPHA} ({args.replicates} subtasks each; binomial error 2 SE = +-{100 * bound:.2f} "
          "points around 5%):\n")
    print("| family | n | p < 0.05 | within 5% +- 2 SE |\n|---|---|---|---|")
    for r in null.itertuples():
        verdict = ("yes" if abs(r.rejected - ALPHA) <= bound else "below: conservative" if r.rejected < ALPHA
                   else "ABOVE")
        print(f"| {r.family} | {r.n} | {100 * r.rejected:.2f}% | {verdict} |")
    for world, column in (("linear", "rejected"), ("single pair", "decline")):
        part = frame[frame["world"] == world]
        print(f"\n{world}: share of subtasks with {'p < 0.05' if column == 'rejected' else 'a family-wide decline'}"
              " by n (rows: true change in accuracy per doubling, pp)\n")
        for family, rows_f in part.groupby("family", sort=False):
            wide = rows_f.pivot_table(index=["delta", "true_slope_pp"], columns="n", values=column)
            print(f"{family}:\n")
            step = "dip (logits)" if world == "single pair" else "delta (logits per doubling)"
            print(f"| {step} | slope pp/doubling | " + " | ".join(f"n={n}" for n in wide.columns) + " |")
            print("|---|---|" + "---|" * len(wide.columns))
            for (delta, slope), values in wide.iterrows():
                shown = 10 * delta if world == "single pair" else delta
                print(f"| {shown:g} | {slope:.2f} | " + " | ".join(f"{100 * v:.0f}%" for v in values) + " |")
            if world == "single pair":
                pair = rows_f.pivot_table(index="delta", columns="n", values="pair_found")
                print("\nthe dipped pair's McNemar test finds it:\n")
                print("| delta (dip, logits) | " + " | ".join(f"n={n}" for n in pair.columns) + " |")
                print("|---|" + "---|" * len(pair.columns))
                for delta, values in pair.iterrows():
                    print(f"| {10 * delta:g} | " + " | ".join(f"{100 * v:.0f}%" for v in values) + " |")
            print()
    draw(frame, args.figure)
    print(f"figure: {args.figure}")
    # Discrete data make a small subtask's test conservative (few questions differ between sizes); above 5% would
    # be the failure that matters: more false declines than the level promises.
    if (null["rejected"] > ALPHA + bound).any():
        sys.exit("a false-positive rate lies above the binomial error of 5%")


def draw(frame: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(FAMILIES), figsize=(11, 4), sharey=True)
    for axis, family in zip(axes, FAMILIES):
        part = frame[(frame["family"] == family) & (frame["world"] != "single pair")]
        for n, rows in part.groupby("n"):
            rows = rows.sort_values("true_slope_pp", key=abs)
            axis.plot(-rows["true_slope_pp"], 100 * rows["rejected"], marker="o", label=f"n = {n}")
        axis.axhline(100 * ALPHA, color="grey", linestyle=":", linewidth=1)
        axis.set_title(f"{family} ({len(FAMILIES[family])} sizes)")
        axis.set_xlabel("true decline in accuracy per doubling (pp)")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("subtasks with p < 0.05 (%)")
    axes[-1].legend(title="questions")
    figure.suptitle("Family-wide trend test: power (0 = no trend: the false-positive rate, dotted 5%)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    main()
