"""The error taxonomy (inverse-scaling paper, Section 5.6, Appendix G.1): the judge prompt, the strict
verdict, the sample, the judges' numbers and tables, without a judge. test_taxonomy_judges.py runs it
against the local OpenAI/Anthropic server."""

import json
from dataclasses import replace

import pandas as pd
import pytest
from analysis_factory import constructed_table, models_frame
from hypothesis import given, settings
from hypothesis import strategies as st

from lmms_eval_tasks.question import MCQ, NUMERIC, OPEN, YES_NO, Question
from postprocess.human.task_sets import (
    BAD_ANNOTATION,
    FORMAT_MISMATCH,
    GENUINE,
    UNPARSED,
    sample_taxonomy_check,
)
from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.parameters import Parameters, TaxonomyParameters
from postprocess.inverse_scaling.taxonomy import numbers
from postprocess.inverse_scaling.taxonomy.judging import assign_sides
from postprocess.inverse_scaling.taxonomy.prompt import (
    JUDGE_PROMPT,
    parse_verdict,
    prompt_for,
)
from postprocess.inverse_scaling.taxonomy.sample import (
    FLIP_COLUMNS,
    degenerate_reason,
    equal_allocation,
    flip_questions,
    sample_flips,
)
from postprocess.render.taxonomy_tables import taxonomy_tables

G, B, F = GENUINE, BAD_ANNOTATION, FORMAT_MISMATCH


def mcq(**changes) -> Question:
    question = Question(benchmark="MMBench", split="dev_en", subtask="logic_reasoning", question_id="7", kind=MCQ,
                        text="Which shape comes next?", image_fields=["image"],
                        options=["a circle", "a square", "a star"], gold="B", hint="Look at the sequence.")
    return replace(question, **changes)


# ---------------------------------------------------------------------------------------------- the prompt
def test_the_prompt_is_appendix_g1_as_printed():
    lines = JUDGE_PROMPT.splitlines()
    assert len(lines) == 47
    assert lines[:5] == ["You are analyzing VLM (Vision-Language Model)", "benchmark results. Two models answered this",
                         "question. Model A answered correctly and Model B", "answered incorrectly. Your job is to figure out",
                         "why Model B failed."]
    assert lines[6:15] == ["Question: {question}", "Options: {options}", "Correct Answer: {answer}", "",
                           "Model A response: {response_small}", "  -> CORRECT", "", "Model B response: {response_large}",
                           "  -> INCORRECT"]
    assert "1. GENUINE_ERROR - Model B made a clear mistake --" in lines
    assert "2. FORMAT_MISMATCH - Model B effectively gives the" in lines
    assert "3. BAD_ANNOTATION_OR_AMBIGUOUS - Use this only when" in lines
    assert "   because Model B’s answer seems plausible; if the" in lines
    assert lines[-4:] == ['{"category": "CATEGORY_NAME",', ' "confidence": "high/medium/low",',
                          ' "explanation": "One concise sentence', '  explaining why."}']


def test_the_prompt_is_filled_with_the_question_as_the_models_saw_it():
    prompt = prompt_for(mcq(), "B", "The answer is {answer} C.")
    assert prompt.splitlines()[6:16] == [
        "Question: Look at the sequence.", "Which shape comes next?", "Options: A. a circle", "B. a square",
        "C. a star", "Correct Answer: B", "", "Model A response: B", "  -> CORRECT", ""]
    assert "Model B response: The answer is {answer} C.\n  -> INCORRECT" in prompt  # filled text is not re-read
    assert prompt.count("{") == JUDGE_PROMPT.count("{") - 5 + 1  # the JSON braces stay; one came with the response


@pytest.mark.parametrize("kind, gold, options, answer", [
    (YES_NO, "No", "Yes / No", "No"),
    (OPEN, ["6", "six"], "None (free-form answer)", "6 / six"),
    (NUMERIC, "3.5", "None (free-form answer)", "3.5"),
])
def test_questions_without_lettered_options(kind, gold, options, answer):
    prompt = prompt_for(mcq(kind=kind, options=[], gold=gold, hint=None), "x", "y")
    assert f"Options: {options}\nCorrect Answer: {answer}\n" in prompt


def test_a_question_without_gold_has_no_flip_to_judge():
    with pytest.raises(ValueError, match="no gold answer"):
        prompt_for(mcq(gold=None), "A", "B")


def test_swapped_sides_rename_the_labels_and_nothing_else():
    paper = prompt_for(mcq(), "B", "C")
    swapped = prompt_for(mcq(), "B", "C", correct_label="Model B")
    assert swapped == paper.replace("Model A", "\0").replace("Model B", "Model A").replace("\0", "Model B")
    assert "Model B response: B\n  -> CORRECT\n\nModel A response: C\n  -> INCORRECT" in swapped
    assert "why Model A failed." in swapped
    with pytest.raises(ValueError, match="correct_label"):
        prompt_for(mcq(), "B", "C", correct_label="Model C")


def test_sides_follow_the_paper_unless_randomised():
    items = pd.DataFrame({"small": [f"S{i}" for i in range(40)], "large": [f"L{i}" for i in range(40)]})
    paper = assign_sides(items, TaxonomyParameters())
    assert (paper["correct_label"] == "Model A").all() and paper["model_a"].equals(items["small"])
    randomised = assign_sides(items, TaxonomyParameters(sides="random", seed=3))
    swapped = randomised["correct_label"] == "Model B"
    assert 0 < swapped.sum() < 40
    assert (randomised.loc[swapped, "model_a"] == items.loc[swapped, "large"]).all()
    assert (randomised.loc[~swapped, "model_a"] == items.loc[~swapped, "small"]).all()
    assert randomised.equals(assign_sides(items, TaxonomyParameters(sides="random", seed=3)))
    with pytest.raises(ValueError, match="sides"):
        assign_sides(items, TaxonomyParameters(sides="both"))


# ---------------------------------------------------------------------------------------------- the verdict
def test_a_verdict_in_the_asked_form_parses():
    verdict = parse_verdict(' {"category": "BAD_ANNOTATION_OR_AMBIGUOUS", "confidence": "low",\n'
                            ' "explanation": "Two options fit."}\n')
    assert (verdict.label, verdict.confidence, verdict.explanation) == (B, "low", "Two options fit.")
    assert parse_verdict('{"category": "FORMAT_MISMATCH", "confidence": "high", "explanation": "x"}').label == F


VALID = {"category": "GENUINE_ERROR", "confidence": "medium", "explanation": "It misread the chart."}


@pytest.mark.parametrize("answer, reason", [
    (f"```json\n{json.dumps(VALID)}\n```", "not a JSON object"),
    (f"Here is my verdict: {json.dumps(VALID)}", "not a JSON object"),
    (json.dumps(VALID)[:30], "not a JSON object"),
    (json.dumps([VALID]), "not a JSON object but a list"),
    (json.dumps({**VALID, "reason": "x"}), r"unexpected \['reason'\]"),
    (json.dumps({k: v for k, v in VALID.items() if k != "confidence"}), r"missing \['confidence'\]"),
    (json.dumps({**VALID, "category": "Genuine Error"}), "category 'Genuine Error' is not one of"),
    (json.dumps({**VALID, "confidence": "High"}), "confidence 'High'"),
    (json.dumps({**VALID, "explanation": " "}), "explanation must be a non-empty string"),
])
def test_anything_else_is_refused_with_the_reason(answer, reason):
    with pytest.raises(ValueError, match=reason):
        parse_verdict(answer)


@settings(deadline=None)  # no timed assertions: a loaded machine must not fail it
@given(category=st.sampled_from(["GENUINE_ERROR", "FORMAT_MISMATCH", "BAD_ANNOTATION_OR_AMBIGUOUS"]),
       confidence=st.sampled_from(["high", "medium", "low"]), explanation=st.text(min_size=1).filter(str.strip),
       indent=st.none() | st.integers(0, 4), around=st.sampled_from(["", " ", "\n", "\t\n "]),
       extra=st.text(min_size=1).filter(lambda t: t.strip() and t.strip()[0] not in "]}"))
def test_valid_verdicts_parse_in_any_json_layout_and_trailing_text_never_does(category, confidence, explanation,
                                                                             indent, around, extra):
    text = json.dumps({"category": category, "confidence": confidence, "explanation": explanation}, indent=indent)
    assert parse_verdict(around + text + around).explanation == explanation
    with pytest.raises(ValueError):
        parse_verdict(text + around + extra)


# ---------------------------------------------------------------------------------------------- flips
def test_the_flips_of_each_case_are_its_flip_inv_questions():
    table = constructed_table()
    analysis = run_analysis(table, models_frame(), Parameters())
    flips = flip_questions(table, analysis.cases, "direct")
    assert list(flips.columns) == FLIP_COLUMNS and flips["question_key"].is_unique
    per_case = flips.groupby(["family", "benchmark", "split", "subtask", "small", "large"]).size()
    expected = analysis.cases.set_index(["family", "benchmark", "split", "subtask", "small", "large"])["flip_inv"]
    assert per_case.to_dict() == expected.to_dict()
    alpha = flips[(flips["small"] == "A-1B") & (flips["large"] == "A-16B-A2B") & (flips["subtask"] == "Jigsaw")]
    assert alpha["question_id"].tolist() == sorted(f"Jigsaw-{q}" for q in range(10))
    assert (alpha["response_small"] == "A").all() and (alpha["response_large"] == "B").all()
    assert alpha["question_key"].iloc[0] == "BLINK/val/Jigsaw-0:A-1B>A-16B-A2B"


@pytest.mark.parametrize("response, reason", [("", "empty"), ("  \n", "empty"), (".", "single non-letter character"),
                                              (" 5 ", "single non-letter character"), ("A", None), ("é", None),
                                              ("B.", None), ("No", None)])
def test_degenerate_responses_are_empty_or_one_non_letter(response, reason):
    assert degenerate_reason(response) == reason


def flips_frame(layout: dict[tuple[str, str], list[int]], degenerate: dict[tuple[str, str], int] | None = None
                ) -> pd.DataFrame:
    """Flips of made-up cases: {(family, benchmark): [flips of each case]}; `degenerate` makes the first n
    flips of the first case of a cell have an empty larger-model response."""
    rows = []
    for (family, benchmark), cases in layout.items():
        for c, count in enumerate(cases):
            for q in range(count):
                bad = q < (degenerate or {}).get((family, benchmark), 0) and c == 0
                rows.append({"family": family, "benchmark": benchmark, "split": "test", "subtask": f"s{c}",
                             "small": f"{family}-S", "large": f"{family}-L", "question_id": f"{c}-{q}",
                             "question_key": f"{family}/{benchmark}/{c}-{q}", "gold": "A", "response_small": "A",
                             "response_large": "" if bad else "B", "prediction_small": "A", "prediction_large": "B"})
    return pd.DataFrame(rows, columns=FLIP_COLUMNS)


def test_the_sample_caps_cases_and_families_and_spreads_the_cap_over_datasets():
    # Qwen: MME 30 cases of 12 (300 candidates at 10 a case), BLINK 5 of 10 (50), MMMU 40 of 10 (400): 750 > 600.
    # Gemma: 3 cases of 4 in MME, with 2 degenerate flips in its first case: 10 of 12 drawn.
    flips = flips_frame({("Qwen", "MME"): [12] * 30, ("Qwen", "BLINK"): [10] * 5, ("Qwen", "MMMU"): [10] * 40,
                         ("Gemma", "MME"): [4] * 3}, degenerate={("Gemma", "MME"): 2})
    sample = sample_flips(flips, TaxonomyParameters(), families=["Qwen", "Gemma"])
    strata = sample.strata.set_index(["family", "benchmark"])
    # equal shares of 600: 200 each, BLINK has 50, its 150 spread over MME and MMMU: 275 each
    assert strata["drawn"].to_dict() == {("Qwen", "MME"): 275, ("Qwen", "BLINK"): 50, ("Qwen", "MMMU"): 275,
                                         ("Gemma", "MME"): 10}
    assert strata.loc[("Qwen", "MME"), ["cases", "flips", "candidates", "capacity"]].tolist() == [30, 360, 300, 300]
    assert strata.loc[("Gemma", "MME"), ["flips", "degenerate", "candidates"]].tolist() == [12, 2, 10]
    assert sample.degenerate["reason"].tolist() == ["larger model: empty"] * 2
    assert len(sample.items) == 610 and (sample.items["response_large"] != "").all()
    per_case = sample.items.groupby(["family", "benchmark", "subtask"]).size()
    assert per_case.max() <= 10
    # round robin: within a cut stratum the cases differ by at most one question
    mme = per_case.loc[("Qwen", "MME")]
    assert mme.max() - mme.min() <= 1 and len(mme) == 30
    assert sample.items["family"].tolist()[0] == "Qwen" and sample.items["family"].tolist()[-1] == "Gemma"
    assert sample.items.equals(sample_flips(flips, TaxonomyParameters(), ["Qwen", "Gemma"]).items)
    assert not sample.items.equals(sample_flips(flips, TaxonomyParameters(seed=1), ["Qwen", "Gemma"]).items)


def test_proportional_allocation_and_dataset_quotas():
    flips = flips_frame({("Qwen", "MME"): [10] * 30, ("Qwen", "BLINK"): [10] * 5, ("Qwen", "MMMU"): [10] * 40})
    proportional = sample_flips(flips, TaxonomyParameters(allocation="proportional")).strata
    assert proportional["benchmark"].tolist() == ["MMMU", "MME", "BLINK"]  # the paper's dataset order
    assert proportional["drawn"].tolist() == [320, 240, 40]  # 600 x 400/750, 300/750, 50/750
    quota = sample_flips(flips, TaxonomyParameters(dataset_quotas=(("MME", 100),))).strata.set_index("benchmark")
    assert quota["capacity"].to_dict() == {"MME": 100, "BLINK": 50, "MMMU": 400}
    assert quota["drawn"].to_dict() == {"MME": 100, "BLINK": 50, "MMMU": 400}  # 550 <= 600: all of the capacity
    small_cap = sample_flips(flips, TaxonomyParameters(per_case=2, family_cap=1000)).strata
    assert small_cap["drawn"].sum() == 150 and (small_cap["drawn"] == small_cap["candidates"]).all()
    with pytest.raises(ValueError, match="allocation"):
        sample_flips(flips, TaxonomyParameters(allocation="random"))
    with pytest.raises(ValueError, match="quotas"):
        sample_flips(flips, TaxonomyParameters(dataset_quotas=(("MME", -1),)))


@settings(deadline=None)
@given(capacity=st.lists(st.integers(0, 50), min_size=1, max_size=8), total=st.integers(0, 400))
def test_equal_allocation_fills_equally_up_to_capacity(capacity, total):
    capacity = pd.Series(capacity, index=[f"d{i}" for i in range(len(capacity))])
    allocation = equal_allocation(capacity, total)
    assert allocation.sum() == min(total, capacity.sum()) and (allocation <= capacity).all()
    short = allocation[allocation < capacity]  # cells not full got at least as much as any other, less one
    assert short.empty or short.min() >= allocation.max() - 1


@settings(max_examples=60, deadline=None)
@given(layout=st.lists(st.tuples(st.sampled_from(["F1", "F2"]), st.sampled_from(["MME", "BLINK", "MMMU"]),
                                 st.lists(st.integers(1, 15), min_size=1, max_size=6)), min_size=1, max_size=5,
                       unique_by=lambda t: t[:2]),
       per_case=st.integers(1, 12), cap=st.integers(1, 60), allocation=st.sampled_from(["equal", "proportional"]),
       seed=st.integers(0, 100))
def test_sample_invariants_hold_for_any_cases(layout, per_case, cap, allocation, seed):
    flips = flips_frame({(family, benchmark): cases for family, benchmark, cases in layout})
    sample = sample_flips(flips, TaxonomyParameters(per_case=per_case, family_cap=cap, allocation=allocation, seed=seed))
    items, strata = sample.items, sample.strata
    assert items["question_key"].is_unique and set(items["question_key"]) <= set(flips["question_key"])
    assert items.groupby(["family", "benchmark", "subtask"]).size().max() <= per_case
    assert (items.groupby("family").size() <= cap).all()
    assert strata["drawn"].sum() == len(items) and (strata["drawn"] <= strata["capacity"]).all()
    for family, cells in strata.groupby("family"):
        assert cells["drawn"].sum() == min(cap, cells["capacity"].sum())


# ---------------------------------------------------------------------------------------------- numbers and tables
def judged(labels: dict[str, list[str]], benchmarks: list[str], families: list[str]) -> pd.DataFrame:
    return pd.DataFrame([{"question_key": f"q{i}", "benchmark": benchmarks[i], "family": families[i], "judge": judge,
                          "label": label} for judge, given in labels.items() for i, label in enumerate(given)])


# 11 questions: gpt says B on q0, q1; claude says B on q0, q1, q2 and gives no valid verdict on q10.
GPT = [B, B] + [G] * 9
CLAUDE = [B, B, B] + [G] * 7 + [UNPARSED]
BENCHMARKS = ["MME"] * 6 + ["BLINK"] * 5
FAMILIES = ["Qwen3-VL"] * 8 + ["Gemma 3"] * 3


def test_label_counts_and_agreement_as_section_5_6_reports_them():
    verdicts = judged({"gpt-5.4": GPT, "claude-opus-4-6": CLAUDE}, BENCHMARKS, FAMILIES)
    figures = numbers.taxonomy_numbers(verdicts, ["Qwen3-VL", "Gemma 3"])
    by_family = figures["by_family"].set_index(["family", "judge"])
    assert by_family.loc[("All", "gpt-5.4"), ["questions", G, B, F, UNPARSED]].tolist() == [11, 9, 2, 0, 0]
    assert by_family.loc[("All", "claude-opus-4-6"), [G, B, UNPARSED]].tolist() == [7, 3, 1]
    assert by_family.loc[("Gemma 3", "claude-opus-4-6"), [G, UNPARSED]].tolist() == [2, 1]
    assert figures["by_dataset"]["benchmark"].drop_duplicates().tolist() == ["MME", "BLINK", "All"]  # paper order
    agreement = figures["agreement"].iloc[0]
    # 10 labelled by both, 9 agree; kappa = (0.9 - (0.8 x 0.7 + 0.2 x 0.3)) / (1 - 0.62)
    assert (agreement["judge_a"], agreement["judge_b"], agreement["questions"], agreement["labelled_by_both"]) == \
           ("gpt-5.4", "claude-opus-4-6", 11, 10)
    assert agreement["agreement"] == pytest.approx(0.9)
    assert agreement["cohen_kappa"] == pytest.approx((0.9 - 0.62) / 0.38)
    gemma = figures["agreement_by_family"].set_index("family").loc["Gemma 3"]
    assert gemma["labelled_by_both"] == 2 and pd.isna(gemma["cohen_kappa"])  # both said Genuine Error throughout

    tables = {t.name: t.frame for t in taxonomy_tables(figures, None)}
    row = tables["taxonomy_by_family"].set_index(["Family", "Judge"]).loc[("All", "claude-opus-4-6")]
    assert row[["Questions", "Genuine Error", "Bad Annot.", "Format Mis.", "Unparsed"]].tolist() == \
           [11, "7 (63.6%)", "3 (27.3%)", "0", "1 (9.1%)"]
    overall = tables["taxonomy_judge_agreement"].iloc[0]
    assert overall[["Scope", "Judges", "Agreement", "Cohen's κ"]].tolist() == \
           ["All", "gpt-5.4 vs. claude-opus-4-6", "90.0%", "0.74"]


def test_verdicts_feed_the_human_check_sample():
    verdicts = judged({"gpt-5.4": GPT, "claude-opus-4-6": CLAUDE}, BENCHMARKS, FAMILIES)
    sample = sample_taxonomy_check(verdicts, n=4, flagged_share=0.5)
    assert sample.items["flagged"].sum() == 2 and len(sample.items) == 4
    with pytest.raises(ValueError, match="label 'Genuine'"):
        numbers.label_counts(verdicts.assign(label="Genuine"))


def test_the_default_judges_are_the_papers():
    """Appendix G.1: GPT-5.4 (gpt-5.4, OpenAI) and Claude Opus 4.6 (claude-opus-4-6, Anthropic), temperature 0,
    at most 200 output tokens (GPT-5 models take the limit as max_completion_tokens)."""
    from postprocess.cli.taxonomy import DEFAULT_JUDGES
    from invscale.judges import load_judges

    judges = {judge.name: judge for judge in load_judges(DEFAULT_JUDGES)}
    assert [(j.provider, j.model, j.temperature) for j in judges.values()] == [("openai", "gpt-5.4", 0),
                                                                            ("anthropic", "claude-opus-4-6", 0)]
    assert judges["gpt-5.4"].params["max_completion_tokens"] == 200 and judges["claude-opus-4-6"].max_tokens == 200
    assert all(j.api_key_env and j.price_input_per_mtok for j in judges.values())
