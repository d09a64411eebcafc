"""The extraction tier and the withheld letter reach the per-question table (both line parsers), and a record
written before them gets the tier its rule and match give (extraction.tier_of)."""

import json

import pytest

from postprocess.logs.lines import parse_samples_file, rows_frame

BASE = {"benchmark": "BLINK", "split": "val", "subtask": "Counting", "question_id": "q1", "variant": "direct",
        "gold": "B", "kind": "mcq"}
RECORDS = [
    {**BASE, "prediction": "B", "correct": True, "match": "letter", "rule": "whole", "abstain_reason": None,
     "extraction_tier": "strict", "candidate": None},
    {**BASE, "question_id": "q2", "prediction": None, "correct": False, "match": "none", "rule": "conclusion_text",
     "abstain_reason": "inconclusive", "extraction_tier": None, "candidate": "B"},
    {**BASE, "question_id": "q3", "prediction": "A", "correct": False, "match": "letter", "rule": "answer_statement",
     "abstain_reason": None},  # written before the tier
    {**BASE, "question_id": "q4", "prediction": "A", "correct": False, "match": "letter", "rule": "a_rule_of_old"},
    {**BASE, "question_id": "q5", "prediction": "B", "correct": True, "match": "judge", "rule": "mention",
     "abstain_reason": "inconclusive", "extraction_tier": "judge", "candidate": "B", "judge": "local",
     "judge_model": "m", "judge_verdict": "B", "judge_status": "settled", "judge_error": None},
]


@pytest.mark.parametrize("fast", [True, False])
def test_the_tier_and_the_candidate_are_columns(tmp_path, fast):
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "per_question": r, "filtered_resps": ["x"]}) + "\n"
                            for i, r in enumerate(RECORDS)))
    parsed = parse_samples_file(path, fast=fast)
    assert parsed.problems == []
    table = rows_frame(parsed.rows).set_index("question_id")
    assert table.extraction_tier.astype(object).where(table.extraction_tier.notna(), None).to_dict() == \
        {"q1": "strict", "q2": None, "q3": "reading", "q4": None, "q5": "judge"}
    assert table.candidate.astype(object).where(table.candidate.notna(), None).to_dict() == \
        {"q1": None, "q2": "B", "q3": None, "q4": None, "q5": "B"}
    assert "extraction_tier" not in (table.extra.loc["q1"] or "")


@pytest.mark.parametrize("fast", [True, False])
def test_a_tier_that_breaks_the_contract_is_named(tmp_path, fast):
    bad = [{**RECORDS[0], "extraction_tier": None}, {**RECORDS[1], "extraction_tier": "strict"},
           {**RECORDS[0], "question_id": "q9", "extraction_tier": "guess"}]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "per_question": r, "filtered_resps": ["x"]}) + "\n"
                            for i, r in enumerate(bad)))
    problems = parse_samples_file(path, fast=fast).problems
    assert [(kind, line, field) for kind, line, field, _, _ in problems] == \
        [("invalid_record", n, "per_question.extraction_tier") for n in (1, 2, 3)]


def test_answers_per_tier_per_model_and_benchmark(tmp_path):
    from pathlib import Path

    import pandas as pd

    from postprocess.logs.quality import tiers_frame

    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "per_question": r, "filtered_resps": ["x"]}) + "\n"
                            for i, r in enumerate(RECORDS)))
    table = rows_frame(parse_samples_file(path).rows).assign(model=pd.Categorical(["m-1B"] * len(RECORDS)),
                                                             family=pd.Categorical(["m"] * len(RECORDS)))
    golden = Path(__file__).parent / "golden_quality" / "answers_per_extraction_tier.csv"
    assert tiers_frame(table).to_csv(index=False) == golden.read_text()
