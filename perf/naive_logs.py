"""Issue 28's yardstick: the naive per-group pandas script a researcher without this tool would write.

    python perf/naive_logs.py LOGS_DIR [--out COUNTS.csv]

From the lmms-eval logs themselves (each run's *_results.json names the model, its *_samples_*.jsonl hold the
answers): every samples file read with pandas, lmms-eval's own `accuracy` field taken as whether the answer is
right, the question's benchmark/split/subtask/id from its `per_question` record; the models of each family paired
by size (family and size parsed from the model's name), and FlipInv / FlipNorm counted per (pair, benchmark,
split, subtask) group in a loop over the groups. Prints how many comparisons have n >= 20 and how many of those
Net >= 5; --out writes every group's counts (perf/bench_report.py checks them against the report's
comparisons.csv). perf/naive_flips.py is the other, cheaper yardstick: it starts from the report's own cached
table and merges each pair vectorised.
"""

import glob, itertools, json, re, sys  # noqa: E401

import pandas as pd

KEY = ["benchmark", "split", "subtask"]
frames = []
for results in sorted(glob.glob(f"{sys.argv[1]}/*/*_results.json")):
    with open(results) as handle:
        hf_id = re.search(r"pretrained=([^,]+)", json.load(handle)["config"]["model_args"]).group(1)
    model = hf_id.split("/")[-1]  # Qwen3-VL-30B-A3B-Instruct: family Qwen3-VL-Instruct, 30 (billion)
    family, size, rest = re.match(r"^(.*?)-(\d+)[bB](?:-A\d+B)?(.*)$", model).groups()
    for samples in glob.glob(results.replace("_results.json", "_samples_*.jsonl")):
        logged = pd.read_json(samples, lines=True)
        answers = pd.DataFrame(list(logged["per_question"]))[[*KEY, "question_id"]]
        answers["correct"] = logged["accuracy"].astype(bool)  # lmms-eval's metric: is the answer right
        answers["model"], answers["family"], answers["size"] = model, family + rest, int(size)
        frames.append(answers)
answers = pd.concat(frames, ignore_index=True)
rows = []
for family, members in answers.groupby("family"):
    models = members[["model", "size"]].drop_duplicates().sort_values("size")["model"]
    for small, large in itertools.combinations(models, 2):
        pair = members[members["model"] == small].merge(members[members["model"] == large],
                                                         on=[*KEY, "question_id"], suffixes=("_s", "_l"))
        for group, shared in pair.groupby(KEY):
            flip_inv = int((shared["correct_s"] & ~shared["correct_l"]).sum())
            flip_norm = int((~shared["correct_s"] & shared["correct_l"]).sum())
            rows.append((family, small, large, *group, len(shared), flip_inv, flip_norm))
counts = pd.DataFrame(rows, columns=["family", "small", "large", *KEY, "n", "flip_inv", "flip_norm"])
counts["net"] = counts["flip_inv"] - counts["flip_norm"]
eligible = counts[counts["n"] >= 20]
print(f"{len(eligible)} eligible comparisons, {int((eligible['net'] >= 5).sum())} with Net >= 5")
if "--out" in sys.argv:
    counts.to_csv(sys.argv[sys.argv.index("--out") + 1], index=False)
