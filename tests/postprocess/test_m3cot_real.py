"""The report on real model answers: the M3CoT authors' saved outputs of two same-family size pairs (LLaVA-1.5
7B/13B, InstructBLIP 7B/13B; ../shared/data/m3cot), turned into a per-question table by examples/m3cot_to_table.py
and read by `report`. The flip counts of each pair and topic are recomputed here from the raw files, with plain
pandas and the scoring core's own extraction, and must equal the report's."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lmms_eval_tasks.question import MCQ, Question
from lmms_eval_tasks.scoring import score
from postprocess.cli import main

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "m3cot"
PAIRS = {"LLaVA-1.5": ("llava-7b", "llava-13b"), "InstructBLIP": ("instruct-blip-7b", "instruct-blip-13b")}
KEYS = {"llava-7b": "LLaVA-1.5-7B", "llava-13b": "LLaVA-1.5-13B", "instruct-blip-7b": "InstructBLIP-7B",
        "instruct-blip-13b": "InstructBLIP-13B"}
MIN_N, MIN_NET = 20, 5  # the paper's thresholds, report's defaults

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"the real M3CoT outputs are not at {DATA} "
                                                          "(<repo>/../shared/data/m3cot; CI has them)")


def correct_answers(model: str) -> pd.DataFrame:
    """id, topic, correct of one model's direct answers: its last turn scored by lmms_eval_tasks.scoring."""
    rows = []
    with gzip.open(DATA / f"{model}__direct.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            question = Question("M3CoT", "test", item["topic"], item["id"], MCQ, "", [], options=item["choices"],
                                gold=item["answer"])
            outcome = score(question, item["messages"][-1].removesuffix("</s>"))
            rows.append((item["id"], item["topic"], outcome.correct))
    return pd.DataFrame(rows, columns=["id", "topic", "correct"])


def expected_flips() -> pd.DataFrame:
    """Per pair and topic: n, flip_inv (small right, large wrong), flip_norm (small wrong, large right)."""
    parts = []
    for family, (small, large) in PAIRS.items():
        both = correct_answers(small).merge(correct_answers(large), on=["id", "topic"], suffixes=("_s", "_l"))
        both["flip_inv"] = both["correct_s"] & ~both["correct_l"]
        both["flip_norm"] = ~both["correct_s"] & both["correct_l"]
        counts = both.groupby("topic").agg(n=("id", "size"), flip_inv=("flip_inv", "sum"),
                                           flip_norm=("flip_norm", "sum")).reset_index()
        parts.append(counts.assign(family=family, small=KEYS[small], large=KEYS[large]))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("m3cot")
    table = work / "m3cot.parquet"
    subprocess.run([sys.executable, str(REPO / "examples" / "m3cot_to_table.py"), "--data", str(DATA), "--out",
                    str(table), "--styles", "direct"], check=True, capture_output=True)
    out = work / "report"
    # --unsettled wrong: the raw answers' correctness as the rules score them (a withheld letter wrong), which is
    # what the independent computation below counts.
    assert main(["report", "--table", str(table), "--extra-models", str(REPO / "examples" / "m3cot_models.yaml"),
                 "--out", str(out), "--unsettled", "wrong"]) == 0
    return out


def test_the_reports_flip_counts_are_those_of_the_raw_answers(report):
    expected = expected_flips()
    expected = expected[expected["n"] >= MIN_N].rename(columns={"topic": "subtask"})
    got = pd.read_parquet(report / "comparisons.parquet")
    columns = ["family", "small", "large", "subtask", "n", "flip_inv", "flip_norm"]
    got = got.astype({"family": str, "small": str, "large": str, "subtask": str})[columns]
    key = ["family", "subtask"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  expected[columns].sort_values(key).reset_index(drop=True), check_dtype=False)


def test_the_cases_are_the_comparisons_with_net_of_five_or_more(report):
    expected = expected_flips()
    net = expected["flip_inv"] - expected["flip_norm"]
    cases = expected[(expected["n"] >= MIN_N) & (net >= MIN_NET)]
    got = pd.read_csv(report / "cases.csv")
    assert sorted(zip(got["family"], got["subtask"])) == sorted(zip(cases["family"], cases["topic"]))
    summary = json.loads((report / "summary.json").read_text())
    assert summary["models"] == 4 and summary["questions"] == 2318 and summary["cases"] == len(cases)
    assert pd.read_csv(report / "problems.csv").empty
