"""Answer adjudication: the judge's prompt and strict verdict, the adjudicator inside scoring (the seam),
`python -m postprocess adjudicate` over logs made of the bundled fixture questions against the local
OpenAI-compatible server (tests/support/reeval_server.py: AdjudicationJudge, some verdicts malformed or off-list),
the merge by ingestion, the report's with/without section, a killed run that resumes, and no key written
anywhere. The lmms-eval run with the adjudicator is in test_lmms_eval_cli.py."""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given
from explorer_factory import fixture_questions
from hypothesis import strategies as st
from logfactory import make_record, write_run
from reeval_server import NUMBER_WORDS, ORDINALS, AdjudicationJudge, JudgeServer

from lmms_eval_tasks import scoring
from lmms_eval_tasks.benchmarks import BENCHMARKS
from lmms_eval_tasks.catalog import TASKS
from lmms_eval_tasks.hooks import (
    PROMPT_COLUMN,
    doc_to_visual,
    prepare_docs,
    process_results,
    question_of,
)
from lmms_eval_tasks.prompts import build_prompt, shown_prompt
from lmms_eval_tasks.question import LETTERS, MCQ, NUMERIC, OPEN, YES_NO, Question
from lmms_eval_tasks.record import validate_record
from lmms_eval_tasks.scoring import per_question_record, score
from lmms_eval_tasks.variants import VARIANTS, apply_variant
from model_configs import load_registry
from postprocess.adjudication import is_judged, live
from postprocess.adjudication.prompt import prompt_for, verdict_parser
from postprocess.cli import main
from invscale.judges.client import image_bytes
from postprocess.logs.adjudications import (
    ADJUDICATION_FIELDS,
    apply_adjudications,
    merge_adjudications,
    read_adjudications,
    response_sha256,
    rules_only,
)
from postprocess.logs.ingest import ingest_logs
from postprocess.logs.questions import dataset_source, load_split

KEY = "sk-test-adjudication-5d0e"
SMALL, LARGE = "Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3-VL-8B-Instruct"
REFUSAL = "I cannot determine the answer from the image. [pick:{word}]"  # the rules abstain (refusal)


# ---------------------------------------------------------------------------------------------- the verdict
def mcq(n: int, **changes) -> Question:
    return Question(benchmark="MMMU", split="dev_val", subtask="Art", question_id="q1", kind=MCQ, text="Which?",
                    image_fields=["image_1"], options=[f"option {i}" for i in range(n)], gold="A", **changes)


@given(st.integers(2, 10), st.data())
def test_an_option_letter_or_none_is_a_verdict_and_anything_else_is_asked_again(n, data):
    parse = verdict_parser(mcq(n))
    letter = data.draw(st.sampled_from(LETTERS[:n]))
    assert parse(f" {letter}\n") == letter
    assert parse(data.draw(st.sampled_from(["NONE", "none", " None "]))) is None
    off_list = data.draw(st.sampled_from(LETTERS[n:]))
    with pytest.raises(ValueError, match=f"'{off_list}' is not one of the options {LETTERS[:n]}"):
        parse(off_list)
    bad = data.draw(st.sampled_from([f"({letter})", f"{letter}.", letter.lower(), f"The answer is {letter}",
                                     f"{letter}\n{letter}", "", "Yes"]))
    with pytest.raises(ValueError):
        parse(bad)


def test_each_question_kind_has_its_verdict_form():
    yes_no = verdict_parser(replace(mcq(2), kind=YES_NO, options=[], gold="Yes"))
    assert (yes_no("yes"), yes_no("No"), yes_no("NONE")) == ("Yes", "No", None)
    with pytest.raises(ValueError, match="not Yes, No or NONE"):
        yes_no("A")
    number = verdict_parser(replace(mcq(2), kind=NUMERIC, options=[], gold="3", answer_type="integer"))
    assert (number("-12"), number("1,200"), number("0.5")) == ("-12", "1,200", "0.5")
    with pytest.raises(ValueError, match="not a single number"):
        number("12 apples")
    numbers = verdict_parser(replace(mcq(2), kind=NUMERIC, options=[], gold="[1, 2]", answer_type="list"))
    assert numbers("[1, 2.5]") == "[1, 2.5]"
    with pytest.raises(ValueError, match="not a list of numbers"):
        numbers("1, 2")
    open_ = verdict_parser(replace(mcq(2), kind=OPEN, options=[], gold=["tree"]))
    assert open_(" an oak tree ") == "an oak tree"
    with pytest.raises(ValueError, match="at most 200"):
        open_("x" * 201)


def test_the_prompt_is_what_the_model_was_sent_and_never_shows_the_gold(fixture_tasks):
    """shown_prompt rebuilds, from the question alone, exactly the prompt every task stored for it."""
    checked = 0
    for task, entry in TASKS.items():
        spec = entry.spec
        docs = prepare_docs(load_split(dataset_source(spec, fixture_tasks), spec.task), task)
        for doc in docs.select_columns(["invscale_question", PROMPT_COLUMN]):
            question = question_of(doc)
            assert shown_prompt(question) == doc[PROMPT_COLUMN], (task, question.question_id)
            checked += 1
    assert checked > 300
    question = replace(mcq(4), variant="reverse", permutation=[3, 2, 1, 0])
    prompt = prompt_for(question, "It is the third one.")
    assert "A. option 0\nB. option 1" in prompt and "<response>\nIt is the third one.\n</response>" in prompt
    assert prompt_for(replace(question, gold="C"), "It is the third one.") == prompt  # the gold is never shown
    assert "(one of A, B, C, D), or NONE" in prompt


@pytest.mark.parametrize("variant, shown_order", [("shift1", "6345"), ("shift2", "5634"), ("shift3", "4563"),
                                                  ("reverse", "6543")])
def test_embedded_choices_are_rebuilt_in_the_order_the_model_saw_them(variant, shown_order):
    """A MathVista-style prompt lists its choices itself; the judge must see them as the variant showed them.
    shift1 and shift3 are each other's inverse, so an inverted permutation swaps them (reverse and shift2 are
    their own inverses and would hide it)."""
    dataset = replace(mcq(4), prompt_style="embedded_choices", options=["3", "4", "5", "6"],
                      text="How many? Choices:\n(A) 3\n(B) 4\n(C) 5\n(D) 6")
    shown = apply_variant(dataset, VARIANTS[variant])
    expected = "How many? Choices:\n" + "\n".join(f"({letter}) {n}" for letter, n in zip("ABCD", shown_order))
    assert shown_prompt(shown) == expected == build_prompt(shown, original_options=dataset.options)


# ---------------------------------------------------------------------------------------------- the merge
def _records(**shared):
    rows = [  # question_id, gold, response, prediction, correct, match
        ("settled-right", "B", "Maybe (B) or (C)."),
        ("settled-wrong", "A", "Maybe (B) or (C)."),
        ("no-answer", "A", "No idea."),
        ("unparsed", "A", "Hmm."),
        ("re-extracted", "A", "(A)"),
        ("stale", "A", "Hmm, now I say something else."),
        ("twice", "C", "Hmm."),
    ]
    records = []
    for qid, gold, response in rows:
        matched = qid == "re-extracted"
        records.append(make_record(question_id=qid, gold=gold, response=response, prediction="A" if matched else None,
                                   correct=matched, match="letter" if matched else "none",
                                   abstain_reason=None if matched else "hedge", **shared))
    return records


def adjudication(qid: str, status: str, prediction: str | None, response: str, **changes) -> dict:
    record = {"model": "Qwen3-VL-2B", "benchmark": "MMMU", "split": "dev_val", "variant": "direct", "question_id": qid,
              "response_sha256": response_sha256(response), "kind": "mcq", "answer_type": None, "precision": None,
              "judge": "gpt-5.4", "judge_model": "gpt-5.4", "judge_verdict": prediction or "NONE",
              "judge_status": status, "judge_error": None, "prediction": prediction, "at": "2026-01-01T00:00:00+00:00"}
    return {**record, **changes}


def test_ingestion_merges_the_adjudications_and_counts_what_it_ignores(tmp_path):
    paths = write_run(tmp_path, SMALL, "invscale_mmmu_dev_val", _records())
    table = ingest_logs([tmp_path], load_registry()).table
    before = table.copy()
    lines = [
        adjudication("settled-right", "settled", "B", "Maybe (B) or (C)."),
        adjudication("settled-wrong", "settled", "C", "Maybe (B) or (C)."),
        adjudication("no-answer", "no_answer", None, "No idea."),
        adjudication("unparsed", "unparsed", None, "Hmm.", judge_verdict="It is B", judge_error="not an option letter"),
        adjudication("re-extracted", "settled", "B", "(A)"),
        adjudication("stale", "settled", "B", "Hmm."),  # judged another response
        adjudication("elsewhere", "settled", "B", "Hmm."),  # no such row
        adjudication("twice", "settled", "B", "Hmm.", at="2026-01-01T00:00:00+00:00"),
        adjudication("twice", "settled", "C", "Hmm.", at="2026-01-02T00:00:00+00:00"),  # the newer one counts
    ]
    file = paths.samples.with_name(paths.samples.name.replace("_samples_", "_adjudications_"))
    file.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"model": "cut short\n')
    merged = apply_adjudications(table, [tmp_path])

    assert before.equals(table)  # the merge is a pure function of its inputs
    rows = merged.table.set_index("question_id")
    assert rows.loc["settled-right", ["prediction", "correct", "match"]].tolist() == ["B", True, "judge"]
    assert rows.loc["settled-wrong", ["prediction", "correct", "match"]].tolist() == ["C", False, "judge"]
    assert rows.loc["twice", ["prediction", "correct", "match"]].tolist() == ["C", True, "judge"]
    assert rows.loc["settled-right", "extraction_tier"] == "judge" and pd.isna(rows.loc["no-answer", "extraction_tier"])
    for qid in ("no-answer", "unparsed", "stale"):
        assert rows.loc[qid, "match"] == "none" and pd.isna(rows.loc[qid, "prediction"])
    assert rows.loc["re-extracted", ["prediction", "match"]].tolist() == ["A", "letter"]
    extra = json.loads(rows.loc["unparsed", "extra"])
    assert (extra["judge_status"], extra["judge_verdict"], extra["abstain_reason"]) == ("unparsed", "It is B", "hedge")
    assert json.loads(rows.loc["settled-right", "extra"])["adjudications_file"] == str(file)
    assert merged.counts() == {"settled": 3, "no_answer": 1, "unparsed": 1, "not_unparsed": 1, "stale_response": 1,
                               "no_row": 1, "duplicate": 1, "malformed": 1}
    malformed = merged.outcomes[merged.outcomes["outcome"] == "malformed"].iloc[0]
    assert (malformed["file"], malformed["line"]) == (str(file), 10)

    # as the rules alone score it, every settled answer is unparsed and wrong again
    unjudged = rules_only(merged.table).set_index("question_id")
    assert unjudged.loc["settled-right", ["match", "correct"]].tolist() == ["none", False]
    assert pd.isna(unjudged.loc["settled-right", "prediction"]) and pd.isna(unjudged.loc["settled-right", "extraction_tier"])
    assert rules_only(merged.table)["match"].value_counts()["none"] == (table["match"] == "none").sum()


def test_a_judged_answer_is_scored_by_the_projects_own_matching(tmp_path):
    mathvista = make_record(benchmark="MathVista", split="testmini", subtask="FQA", question_id="7", gold="3",
                            kind="numeric", options=[], permutation=None, response="Hmm.", prediction=None,
                            correct=False, match="none")
    mmmu_open = make_record(question_id="open-1", gold=["Paris", "paris, france"], kind="open", options=[],
                            permutation=None, response="Hmm.", prediction=None, correct=False, match="none")
    write_run(tmp_path, SMALL, "invscale_mathvista_testmini", [mathvista])
    write_run(tmp_path, SMALL, "invscale_mmmu_dev_val", [mmmu_open])
    table = ingest_logs([tmp_path], load_registry()).table
    adjudications = pd.DataFrame([
        # MathVista's integer answers are compared as its official scorer does: int(float(x)), so 3.7 is 3
        adjudication("7", "settled", "3.7", "Hmm.", benchmark="MathVista", split="testmini", kind="numeric",
                     answer_type="integer", precision=None, file="f", line=1),
        adjudication("open-1", "settled", "the city of Paris", "Hmm.", kind="open", file="f", line=2),
    ])
    rows = merge_adjudications(table, adjudications).table.set_index("question_id")
    assert rows.loc["7", ["correct", "match"]].tolist() == [True, "judge"]
    assert rows.loc["open-1", ["correct", "match"]].tolist() == [True, "judge"]
    float_answer = adjudications.iloc[:1].assign(answer_type="float", precision=1)
    assert not merge_adjudications(table, float_answer).table.set_index("question_id").loc["7", "correct"]


# ---------------------------------------------------------------------------------------------- during the run
def judges_file(path: Path, server: JudgeServer, **changes) -> Path:
    """The shipped adjudication judge pointed at the local server."""
    shipped = yaml.safe_load((Path(__file__).parents[2] / "model_configs" / "adjudication_judges.yaml").read_text())
    judge = shipped["judges"][0]
    judge.update(base_url=server.openai_url, api_key_env="ADJUDICATION_TEST_KEY", requests_per_second=1000,
                 backoff_s=0.01, max_retries=2, **changes)
    path.write_text(yaml.safe_dump(shipped))
    return path


@pytest.fixture
def server():
    with JudgeServer(keys={KEY}, answer=AdjudicationJudge(), lifetime_s=120) as running:
        yield running


@pytest.fixture
def live_judge(tmp_path, server, monkeypatch):
    """The live adjudicator registered at the seam, its judge on the local server, a fresh session."""
    monkeypatch.setenv("ADJUDICATION_TEST_KEY", KEY)
    monkeypatch.setenv(live.JUDGES_ENV, str(judges_file(tmp_path / "judges.yaml", server)))
    monkeypatch.setenv(live.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(live, "_session", None)
    scoring.set_adjudicator(live.adjudicate)
    yield server
    scoring.set_adjudicator(None)


def blink_docs(fixture_tasks):
    spec = next(s for s in BENCHMARKS if s.task == "blink_val")
    return prepare_docs(load_split(dataset_source(spec, fixture_tasks), spec.task), "blink_val_reverse")


def test_the_seam_asks_the_judge_with_the_models_images(fixture_tasks, live_judge, tmp_path):
    doc = blink_docs(fixture_tasks)[0]
    question = question_of(doc)
    gold_word = ORDINALS[question.letters.index(question.gold)]
    record = validate_record(process_results(doc, [REFUSAL.format(word=gold_word)])["per_question"])
    assert (record["match"], record["prediction"], record["correct"]) == ("judge", question.gold, True)
    assert (record["judge"], record["judge_model"], record["judge_verdict"], record["judge_status"]) == \
           ("gpt-5.4", "gpt-5.4", question.gold, "settled")
    assert record["abstain_reason"] == "refusal" and record["judge_error"] is None
    images = tuple(hashlib.sha256(image_bytes(image)).hexdigest() for image in doc_to_visual(doc))
    assert len(images) >= 2 and [r.images for r in live_judge.answered] == [images]
    assert "<prompt>\n" + doc[PROMPT_COLUMN] + "\n</prompt>" in live_judge.answered[0].prompt  # reordered options

    # the same response again is answered from the cache; an answer the rules settle is never sent
    process_results(doc, [REFUSAL.format(word=gold_word)])
    process_results(doc, [question.gold])
    assert len(live_judge.requests) == 1
    assert not any(KEY in path.read_text() for path in tmp_path.rglob("*") if path.is_file())


def test_malformed_off_list_and_failed_verdicts_leave_the_answer_unparsed_and_named(fixture_tasks, live_judge):
    doc = blink_docs(fixture_tasks)[0]
    malformed = validate_record(process_results(doc, [REFUSAL.format(word="malformed")])["per_question"])
    assert (malformed["match"], malformed["judge_status"], malformed["prediction"]) == ("none", "unparsed", None)
    assert "not an option letter" in malformed["judge_error"] and malformed["correct"] is False
    off_list = validate_record(process_results(doc, [REFUSAL.format(word="offlist")])["per_question"])
    assert off_list["judge_status"] == "unparsed" and "'Z' is not one of the options" in off_list["judge_error"]
    assert len(live_judge.answered) == 6  # each asked three times: the first ask and parse_retries 2
    flaky = validate_record(process_results(doc, [REFUSAL.format(word="flaky")])["per_question"])
    assert (flaky["judge_status"], flaky["prediction"]) == ("settled", "B")
    nothing = validate_record(process_results(doc, [REFUSAL.format(word="nothing")])["per_question"])
    assert (nothing["judge_status"], nothing["judge_verdict"], nothing["match"]) == ("no_answer", "NONE", "none")

    live_judge.fail_next(3, 503)  # the first attempt and the judge's two transport retries
    failed = validate_record(process_results(doc, [REFUSAL.format(word="first")])["per_question"])
    assert (failed["match"], failed["judge_status"], failed["judge_verdict"]) == ("none", "failed", None)
    assert "request failed (503) after 3 attempt(s)" in failed["judge_error"] and KEY not in failed["judge_error"]


def test_a_run_that_drops_the_images_before_scoring_is_named(fixture_tasks, live_judge):
    """lmms-eval scores docs without their image columns unless it runs with --process_with_media."""
    doc = blink_docs(fixture_tasks)[0]
    stripped = {name: value for name, value in doc.items() if not name.startswith("image_")}
    record = validate_record(process_results(stripped, [REFUSAL.format(word="first")])["per_question"])
    assert (record["judge_status"], record["match"]) == ("failed", "none")
    assert "--process_with_media" in record["judge_error"] and live_judge.requests == []


def test_a_judge_that_cannot_be_used_is_named_in_every_record(fixture_tasks, live_judge, monkeypatch):
    monkeypatch.delenv("ADJUDICATION_TEST_KEY")
    record = validate_record(process_results(blink_docs(fixture_tasks)[0], ["Hmm."])["per_question"])
    assert (record["judge_status"], record["match"]) == ("failed", "none")
    assert "ADJUDICATION_TEST_KEY is not set" in record["judge_error"] and live_judge.requests == []


def test_answers_without_gold_and_cait_answers_are_not_judged(live_judge):
    assert not is_judged("CAIT", "A") and not is_judged("MMMU", None) and is_judged("BLINK", "A")
    unanswered = replace(mcq(4), split="test", gold=None)
    assert validate_record(per_question_record(unanswered, score(unanswered, "Hmm.")))["match"] == "none"
    cait = replace(mcq(2), benchmark="CAIT", split="test", prompt_style="cait")
    assert "judge_status" not in per_question_record(cait, score(cait, "Hmm."))
    assert live_judge.requests == []


# ---------------------------------------------------------------------------------------------- afterwards
SPECIAL = {  # (model, benchmark, question_id) -> the marker word of the refusal
    (LARGE, "BLINK", "val_Jigsaw_1"): "malformed",
    (LARGE, "MMBench", "0"): "flaky",
    (LARGE, "ScienceQA", "scienceqa-test-0"): "offlist",
}


def gold_word(question: Question) -> str:
    """The marker that makes the local judge read the gold answer ("nothing" where no word says it)."""
    if question.kind == MCQ:
        return ORDINALS[question.letters.index(question.gold)]
    if question.kind == YES_NO:
        return question.gold.lower()
    gold = question.gold[0] if isinstance(question.gold, list) else str(question.gold)
    if question.kind == NUMERIC:
        return NUMBER_WORDS[int(gold)] if gold in {str(n) for n in range(10)} else "nothing"
    return gold if re.fullmatch(r"[A-Za-z]+", gold) else "nothing"


def clean_answer(question: Question) -> str:
    if question.kind == MCQ:
        return question.gold or "A"
    if question.kind == YES_NO:
        return question.gold
    return str(question.gold[0] if isinstance(question.gold, list) else question.gold)


def write_logs(folder: Path, questions: list[Question]) -> tuple[dict[tuple, str], dict[tuple, str]]:
    """Two models' logs. The smaller answers cleanly, but every fourth answer is a refusal whose marker
    makes the judge read the gold; the larger: every third answer clean, then alternately a refusal read as
    the gold and one read as no answer (SPECIAL where given). Returns the expected judge status per
    (model, benchmark, question_id): "settled", "no_answer", "unparsed", or "not asked"; and the responses."""
    expected, responses, by_task = {}, {}, {}
    for i, question in enumerate(questions):
        spec = next(s for s in BENCHMARKS if (s.name, s.split) == (question.benchmark, question.split))
        for model in (SMALL, LARGE):
            key = (model, question.benchmark, question.question_id)
            if model == SMALL:
                word = gold_word(question) if i % 4 == 1 and question.gold is not None else None
            else:
                word = SPECIAL.get(key) or ([None, "gold", "nothing"][i % 3])
                word = gold_word(question) if word == "gold" and question.gold is not None else word
            if question.gold is None:  # MMMU test: no gold, never asked even when the rules abstain
                word = "first" if i % 2 else None
            response = clean_answer(question) if word is None else REFUSAL.format(word=word)
            responses[key] = response
            outcome = score(question, response)
            assert (outcome.match == "none") == (word is not None), (question, response, outcome)
            expected[key] = ("not asked" if word is None or question.gold is None else
                             "unparsed" if word in ("malformed", "offlist") else
                             "no_answer" if word == "nothing" else "settled")
            by_task.setdefault((model, spec.task), []).append({**per_question_record(question, outcome), "response": response})
    for (model, task), records in by_task.items():
        write_run(folder, model, task, records)
    return expected, responses


@pytest.fixture(scope="module")
def logs(tmp_path_factory, fixture_tasks):
    folder = tmp_path_factory.mktemp("adjudication_logs")
    return folder, *write_logs(folder, fixture_questions(fixture_tasks))


def adjudicate(logs_dir: Path, out: Path, judges: Path, tasks_dir: Path, *extra: str) -> int:
    return main(["adjudicate", "--logs", str(logs_dir), "--out", str(out), "--judges", str(judges), "--tasks-dir",
                 str(tasks_dir), *extra])


def copy_logs(source: Path, target: Path) -> Path:
    """A fresh copy of the logs (the command writes beside them)."""
    for path in source.rglob("*"):
        if path.is_file() and "_adjudications_" not in path.name:
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            (target / path.relative_to(source)).write_bytes(path.read_bytes())
    return target


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ADJUDICATION_TEST_KEY", KEY)


def test_dry_run_counts_the_answers_and_calls_and_asks_nothing(tmp_path, logs, fixture_tasks, server, key, capsys):
    logs_dir, expected, responses = copy_logs(logs[0], tmp_path / "logs"), logs[1], logs[2]
    asked = sum(status != "not asked" for status in expected.values())
    assert adjudicate(logs_dir, tmp_path / "out", judges_file(tmp_path / "j.yaml", server), fixture_tasks,
                      "--dry-run") == 0
    printed = capsys.readouterr().out
    assert f"{asked} answers the rules left unparsed (" in printed
    distinct = int(re.search(r"gpt-5.4: (\d+) call\(s\) to make \(0 of \1 cached\)", printed).group(1))
    # a response both models gave to one question is asked once (so are MMBench's circular copies, which
    # show the same prompt and image)
    pairs = {(b, q, responses[(m, b, q)]) for (m, b, q), status in expected.items() if status != "not asked"}
    mmbench = sum(b == "MMBench" for b, _, _ in pairs)
    assert len(pairs) - mmbench <= distinct <= len(pairs) < asked
    assert f"<= {distinct * 64:,} output tokens, about $" in printed  # max_completion_tokens 64 is the limit
    assert server.requests == [] and not list(logs_dir.rglob("*_adjudications_*"))


def test_the_judge_settles_the_logs_answers_beside_them_and_the_report_shows_the_difference(
        tmp_path, logs, fixture_tasks, server, key, capsys):
    logs_dir, expected = copy_logs(logs[0], tmp_path / "logs"), logs[1]
    out, judges = tmp_path / "out", judges_file(tmp_path / "j.yaml", server)
    assert adjudicate(logs_dir, out, judges, fixture_tasks) == 0
    printed = capsys.readouterr().out

    adjudications = pd.read_csv(out / "adjudications.csv", dtype={"question_id": str, "prediction": str})
    model_path = {"Qwen3-VL-2B": SMALL, "Qwen3-VL-8B": LARGE}
    got = {(model_path[m], b, q): s for m, b, q, s in adjudications[["model", "benchmark", "question_id",
                                                                     "judge_status"]].itertuples(index=False)}
    assert got == {key: status for key, status in expected.items() if status != "not asked"}
    by_key = adjudications.set_index(["model", "benchmark", "question_id"])
    assert "not an option letter" in by_key.loc[("Qwen3-VL-8B", "BLINK", "val_Jigsaw_1"), "judge_error"]
    assert "'Z' is not one of the options" in by_key.loc[("Qwen3-VL-8B", "ScienceQA", "scienceqa-test-0"),
                                                         "judge_error"]
    counts = adjudications["judge_status"].value_counts()
    assert f"{counts['settled']} settled, {counts['no_answer']} commit to no answer, 2 verdicts unparsed" in printed

    # each request carried its question's images as the task gives them to the model
    spec = next(s for s in BENCHMARKS if s.task == "blink_val")
    docs = prepare_docs(load_split(dataset_source(spec, fixture_tasks), spec.task), "blink_val")
    jigsaw = next(doc for doc in docs if question_of(doc).question_id == "val_Jigsaw_1")
    images = tuple(hashlib.sha256(image_bytes(image)).hexdigest() for image in doc_to_visual(jigsaw))
    asked = [r for r in server.answered if "[pick:malformed]" in r.prompt]
    assert len(asked) == 3 and all(r.images == images for r in asked) and len(images) >= 2
    assert all(r.images for r in server.answered) and all(r.authorized for r in server.requests)

    # beside each samples file with answers to judge, its adjudications; ingestion merges them
    files = sorted(logs_dir.rglob("*_adjudications_*.jsonl"))
    assert {path.name.replace("_adjudications_", "_samples_") for path in files} == \
           {Path(f).name for f in adjudications["adjudications_file"].str.replace("_adjudications_", "_samples_")}
    lines = [json.loads(line) for path in files for line in path.read_text().splitlines()]
    assert len(lines) == len(adjudications) and all(list(line) == ADJUDICATION_FIELDS for line in lines)
    table = ingest_logs([logs_dir], load_registry()).table
    merged = apply_adjudications(table, [logs_dir])
    assert merged.counts()["settled"] == counts["settled"] and sum(merged.counts().values()) == len(adjudications)
    judged = merged.table[merged.table["match"] == "judge"]
    assert len(judged) == counts["settled"]
    wrong = judged[~judged["correct"]]  # every marker named the gold but "flaky", whose verdict is the second option
    assert wrong[["model", "benchmark", "question_id", "prediction"]].astype(str).values.tolist() == [
        ["Qwen3-VL-8B", "MMBench", "0", "B"]]
    extra = json.loads(judged["extra"].iloc[0])
    assert extra["judge_status"] == "settled" and extra["judge_error"] is None and extra["judge_verdict"]

    # a rerun asks nothing again, and writes the same adjudications
    before = len(server.requests)
    assert adjudicate(logs_dir, out, judges, fixture_tasks) == 0
    assert len(server.requests) == before
    assert pd.read_csv(out / "adjudications.csv", dtype={"question_id": str, "prediction": str}).drop(
        columns="at").equals(adjudications.drop(columns="at"))

    # the report, with the judge and without it
    for name, extra in (("with", ()), ("without", ("--no-judge",))):
        assert main(["report", "--logs", str(logs_dir), "--out", str(tmp_path / name), "--min-n", "1", "--min-net",
                     "1", *extra]) == 0
    text = (tmp_path / "with" / "report.md").read_text()
    assert "## Answer adjudication" in text and "## Answer adjudication" not in (tmp_path / "without" / "report.md").read_text()
    overview = pd.read_csv(tmp_path / "with" / "tables" / "adjudication_overview.csv").set_index("Item")["Value"]
    assert int(overview["settled by the judge"]) == counts["settled"]
    assert int(overview["unparsed by the rules"]) == sum(status != "not asked" for status in expected.values())
    with_cases = len(pd.read_csv(tmp_path / "with" / "tables" / "appendixC_all_cases.csv"))
    without_cases = len(pd.read_csv(tmp_path / "without" / "tables" / "appendixC_all_cases.csv"))
    assert int(overview["cases with the judge"]) == with_cases and int(overview["cases without the judge"]) == without_cases
    assert re.search(rf"The judge settled {counts['settled']} of the \d+ answers the extraction rules left unparsed",
                     text)
    by_model = pd.read_csv(tmp_path / "with" / "tables" / "adjudication_by_model.csv")
    assert (by_model["Change (points)"] > 0).any()

    # nothing the runs wrote holds the key
    for path in [*out.rglob("*"), *logs_dir.rglob("*"), judges]:
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_a_failing_judge_is_named_and_a_rerun_resumes(tmp_path, logs, fixture_tasks, server, key, capsys):
    logs_dir = copy_logs(logs[0], tmp_path / "logs")
    out, judges = tmp_path / "out", judges_file(tmp_path / "j.yaml", server, concurrency=1)
    server.fail_next(3, 503)
    assert adjudicate(logs_dir, out, judges, fixture_tasks) == 1
    error = capsys.readouterr().err
    assert "judge 'gpt-5.4': request failed (503) after 3 attempt(s)" in error and "rerun to continue" in error
    assert KEY not in error and not list(logs_dir.rglob("*_adjudications_*"))
    assert adjudicate(logs_dir, out, judges, fixture_tasks) == 0
    assert list(logs_dir.rglob("*_adjudications_*"))


def test_a_missing_key_is_named_before_any_call(tmp_path, logs, fixture_tasks, server, monkeypatch, capsys):
    monkeypatch.delenv("ADJUDICATION_TEST_KEY", raising=False)
    assert adjudicate(copy_logs(logs[0], tmp_path / "logs"), tmp_path / "out",
                      judges_file(tmp_path / "j.yaml", server), fixture_tasks) == 2
    assert "ADJUDICATION_TEST_KEY is not set" in capsys.readouterr().err and server.requests == []


def test_logs_made_from_other_data_are_named(tmp_path, fixture_tasks, server, key, capsys):
    question = next(q for q in fixture_questions(fixture_tasks) if q.benchmark == "BLINK")
    response = REFUSAL.format(word="first")
    record = {**per_question_record(question, score(question, response)), "response": response}
    write_run(tmp_path / "logs", SMALL, "blink_val", [{**record, "options": list(reversed(record["options"]))}])
    assert adjudicate(tmp_path / "logs", tmp_path / "out", judges_file(tmp_path / "j.yaml", server),
                      fixture_tasks) == 2
    assert "options" in capsys.readouterr().err and server.requests == []


class Gate:
    """Answers the first `open_for` requests, then holds each until released (a run to kill mid-way)."""

    def __init__(self, answer, open_for: int):
        self.answer, self.open_for = answer, open_for
        self.arrived = 0
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.arrived += 1
            held = self.arrived > self.open_for
        if held:
            self.release.wait(timeout=60)
        return self.answer(prompt)


def test_a_killed_run_resumes_with_the_calls_not_yet_made(tmp_path, logs, fixture_tasks, key):
    logs_dir, out = copy_logs(logs[0], tmp_path / "logs"), tmp_path / "out"
    gate = Gate(AdjudicationJudge(), open_for=5)
    with JudgeServer(keys={KEY}, answer=gate, lifetime_s=120) as server:
        judges = judges_file(tmp_path / "j.yaml", server, concurrency=1)
        command = [sys.executable, "-m", "postprocess", "adjudicate", "--logs", str(logs_dir), "--out", str(out),
                   "--judges", str(judges), "--tasks-dir", str(fixture_tasks)]
        process = subprocess.Popen(command, env={**os.environ, "ADJUDICATION_TEST_KEY": KEY},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while gate.arrived <= gate.open_for and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it was killed"
        process.send_signal(signal.SIGKILL)
        process.wait()
        gate.release.set()
        cached = [json.loads(line) for line in (out / "judge_cache" / "gpt-5.4.jsonl").read_text().splitlines()]
        assert 1 <= len(cached) <= 5 and not list(logs_dir.rglob("*_adjudications_*"))
        before = len(server.requests)
        assert adjudicate(logs_dir, out, judges, fixture_tasks) == 0
        calls = pd.read_csv(out / "adjudication_calls.csv").iloc[0]
        assert calls["cached"] == len(cached) and calls["made"] == calls["requests"] - len(cached)
        assert len(server.requests) - before >= calls["made"]  # retries of malformed verdicts come on top
        assert read_adjudications([logs_dir])[0]["judge_status"].notna().all()
