"""The cheaper of `report`'s two yardsticks: the flip count in a few lines of pandas, from the report's own table.

    python perf/naive_flips.py TABLE.parquet

Not the issue's yardstick: issue 28's "naive per-group pandas script" starts from the lmms-eval logs, as a researcher
without this tool would (perf/naive_logs.py); this one is handed the table the report has already ingested.

It reads the per-question table that `postprocess report --cache-dir` stores (table.parquet), pairs the
models of each family by size, merges each pair's answers on the question and counts FlipInv / FlipNorm
per subtask, then prints how many comparisons have n >= 20 and how many of those have Net >= 5. No
statistics, no tables, no figures: the least any analysis of these logs has to do. perf/bench_report.py
times it against the whole `report` process.
"""

import sys

import pandas as pd

KEY = ["benchmark", "split", "subtask", "question_id"]

table = pd.read_parquet(sys.argv[1])
answers = table[(table["variant"] == "direct") & table["correct"].notna()]
results = []
for family, rows in answers.groupby("family", observed=True):
    sizes = rows[["model", "total_params"]].drop_duplicates().sort_values("total_params")
    models = list(sizes["model"])
    for i, small in enumerate(models):
        for large in models[i + 1:]:
            pair = rows[rows["model"] == small].merge(rows[rows["model"] == large], on=KEY, suffixes=("_s", "_l"))
            pair["flip_inv"] = pair["correct_s"] & ~pair["correct_l"]
            pair["flip_norm"] = ~pair["correct_s"] & pair["correct_l"]
            counts = pair.groupby(KEY[:3], observed=True)[["flip_inv", "flip_norm"]].agg(["sum", "size"])
            counts.columns = ["flip_inv", "n", "flip_norm", "_"]
            counts["family"], counts["small"], counts["large"] = family, small, large
            results.append(counts.drop(columns="_"))
comparisons = pd.concat(results)
comparisons["net"] = comparisons["flip_inv"] - comparisons["flip_norm"]
eligible = comparisons[comparisons["n"] >= 20]
print(f"{len(eligible)} eligible comparisons, {int((eligible['net'] >= 5).sum())} with Net >= 5")
