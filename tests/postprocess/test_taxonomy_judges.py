"""`python -m postprocess taxonomy` end to end on the bundled fixtures: logs whose questions are the
fixture questions, the questions and images reloaded from the fixture task folder, two judges on the
local OpenAI/Anthropic server (reeval_server.py) answering JSON verdicts (some malformed), the outputs,
a rerun that resumes, failures named, no key written; then `human-export --set taxonomy` on the outputs
and the report's taxonomy section."""

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from explorer_factory import fixture_questions
from logfactory import write_run
from human_examples import annotation_rows
from reeval_server import JudgeServer, TaxonomyJudge

from lmms_eval_tasks.benchmarks import BENCHMARKS
from lmms_eval_tasks.hooks import doc_to_visual, questions_for
from lmms_eval_tasks.question import MCQ, YES_NO, Question
from lmms_eval_tasks.scoring import per_question_record, score
from postprocess.cli import main
from invscale.label_studio import write_annotations
from postprocess.human.task_sets import (
    BAD_ANNOTATION,
    FORMAT_MISMATCH,
    GENUINE,
    UNPARSED,
    VERDICT_COLUMNS,
)
from postprocess.logs.questions import (
    QuestionSourceError,
    dataset_source,
    load_split,
    reload_questions,
)
from invscale.judges.client import image_bytes

OPENAI_KEY, ANTHROPIC_KEY = "sk-test-taxonomy-openai-3e1f", "sk-ant-test-taxonomy-77c2"
SMALL, LARGE = "Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3-VL-8B-Instruct"
# The larger model's wrong answers that the judges (TaxonomyJudge) or the sampler react to.
SPECIAL = {
    ("BLINK", "val_Jigsaw_1"): "MALFORMED {wrong}",  # a fenced verdict every time: unparsed after the retries
    ("MMT-Bench", "1000"): "FLAKY {wrong}",  # a cut-off verdict, then a valid one
    ("MME", "existence/0000.png#0"): "The question is ambiguous: {wrong}",  # both judges: bad annotation
    ("MMBench", "0"): "It is unclear, {wrong}",  # only the second judge counts "unclear" as ambiguous
    ("ScienceQA", "scienceqa-test-0"): "option text: {wrong}",  # format mismatch
    ("AI2D", "2000"): "",  # degenerate: empty
    ("MathVista", "2"): ".",  # a numeric question: degenerate, a single non-letter character
}


def answer(question: Question, right: bool) -> str:
    if question.gold is None:  # MMMU test: no public answers, so no flips either
        return "A"
    if question.kind == MCQ:
        letters = question.letters
        return question.gold if right else letters[(letters.index(question.gold) + 1) % len(letters)]
    if question.kind == YES_NO:
        return question.gold if right else {"Yes": "No", "No": "Yes"}[question.gold]
    gold = question.gold[0] if isinstance(question.gold, list) else question.gold
    return str(gold) if right else "123456"


def write_logs(logs: Path, questions: list[Question]) -> dict[str, int]:
    """The smaller model answers every question right; the larger every third one right and the others
    wrong (SPECIAL responses where given). Returns the flips per benchmark."""
    flips: dict[str, int] = {}
    by_task: dict[str, tuple[list, list]] = {}
    for i, question in enumerate(questions):
        spec = next(s for s in BENCHMARKS if (s.name, s.split) == (question.benchmark, question.split))
        special = SPECIAL.get((question.benchmark, question.question_id))
        large_right = special is None and i % 3 == 2
        small, large = answer(question, True), answer(question, large_right)
        if special is not None:
            large = special.format(wrong=large)
        records = by_task.setdefault(spec.task, ([], []))
        for response, part in ((small, records[0]), (large, records[1])):
            outcome = score(question, response)
            assert question.gold is None or outcome.correct == (response == small or large_right), (question, response)
            part.append({**per_question_record(question, outcome), "response": response})
        if question.gold is not None and not large_right:
            flips[question.benchmark] = flips.get(question.benchmark, 0) + 1
    for task, (small_records, large_records) in by_task.items():
        write_run(logs, SMALL, task, small_records)
        write_run(logs, LARGE, task, large_records)
    return flips


@pytest.fixture(scope="module")
def logs(tmp_path_factory, fixture_tasks):
    folder = tmp_path_factory.mktemp("taxonomy_logs")
    questions = fixture_questions(fixture_tasks)
    return folder, questions, write_logs(folder, questions)


@pytest.fixture
def server():
    with JudgeServer(keys={OPENAI_KEY, ANTHROPIC_KEY}, answer=TaxonomyJudge(),
                     anthropic_answer=TaxonomyJudge(ambiguous_words=("ambiguous", "unclear"))) as running:
        yield running


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("TAXONOMY_OPENAI_KEY", OPENAI_KEY)
    monkeypatch.setenv("TAXONOMY_ANTHROPIC_KEY", ANTHROPIC_KEY)


def judges_file(path: Path, server: JudgeServer, **changes) -> Path:
    """The paper's two judges (model_configs/taxonomy_judges.yaml) pointed at the local server."""
    shipped = yaml.safe_load((Path(__file__).parents[2] / "model_configs" / "taxonomy_judges.yaml").read_text())
    urls = {"openai": server.openai_url, "anthropic": server.anthropic_url}
    env = {"openai": "TAXONOMY_OPENAI_KEY", "anthropic": "TAXONOMY_ANTHROPIC_KEY"}
    for judge in shipped["judges"]:
        judge.update(base_url=urls[judge["provider"]], api_key_env=env[judge["provider"]], requests_per_second=1000,
                     backoff_s=0.01, max_retries=2, **changes)
    path.write_text(yaml.safe_dump(shipped))
    return path


def taxonomy(logs_dir: Path, out: Path, judges: Path, tasks_dir: Path, *extra: str) -> int:
    # --unsettled wrong: the fixture's flips are counted with its withheld letters wrong, as it was built.
    return main(["taxonomy", "--logs", str(logs_dir), "--out", str(out), "--judges", str(judges), "--tasks-dir",
                 str(tasks_dir), "--min-n", "1", "--min-net", "1", "--unsettled", "wrong", *extra])


# ---------------------------------------------------------------------------------------------- reloading
def test_questions_and_images_are_reloaded_as_the_task_showed_them(fixture_tasks, fixture_data):
    spec = next(s for s in BENCHMARKS if s.task == "blink_val")
    dataset = load_split(dataset_source(spec, fixture_tasks), spec.task)
    positions, questions = questions_for(dataset, spec)
    wanted = [(q.benchmark, q.split, q.question_id, variant) for q in questions[:2] for variant in ("direct", "reverse")]
    shown = reload_questions(wanted, fixture_tasks)
    first = shown[("BLINK", "val", questions[0].question_id, "direct")]
    doc = {**dataset[positions[0]], "invscale_question": questions[0].to_json()}
    assert first.images == tuple(image_bytes(image) for image in doc_to_visual(doc)) and len(first.images) >= 2
    assert first.question.options == questions[0].options
    reversed_ = shown[("BLINK", "val", questions[0].question_id, "reverse")].question
    assert reversed_.options == questions[0].options[::-1] and reversed_.variant == "reverse"
    # --data gives the same questions from the data itself, without a task folder
    from_data = reload_questions(wanted[:1], data={"blink_val": fixture_data["blink_val"]})
    assert from_data[wanted[0]].images == first.images


def test_a_question_the_data_lacks_is_named_with_its_source(fixture_tasks, tmp_path):
    with pytest.raises(QuestionSourceError, match=r"MME test \(task invscale_mme_test, data json\).*no question "
                                                  r"'nope#0'.*other data"):
        reload_questions([("MME", "test", "nope#0", "direct")], fixture_tasks)
    with pytest.raises(QuestionSourceError, match="no such task file"):
        reload_questions([("MME", "test", "x", "direct")], tmp_path)
    (tmp_path / "invscale_mme_test.yaml").write_text("task: invscale_mme_test\ndataset_path: json\n"
                                                     "dataset_kwargs: {data_files: {test: [missing.jsonl]}}\n"
                                                     "test_split: test\n")
    with pytest.raises(QuestionSourceError, match=r"cannot load json split test.*missing\.jsonl"):
        reload_questions([("MME", "test", "x", "direct")], tmp_path)


# ---------------------------------------------------------------------------------------------- the command
def test_dry_run_counts_the_calls_and_their_cost_and_asks_nothing(tmp_path, logs, fixture_tasks, server, keys, capsys):
    logs_dir, _, flips = logs
    assert taxonomy(logs_dir, tmp_path / "out", judges_file(tmp_path / "j.yaml", server), fixture_tasks,
                    "--dry-run") == 0
    printed = capsys.readouterr().out
    drawn = sum(flips.values()) - 2  # two degenerate responses left out
    assert f"sample: {drawn} questions" in printed
    # questions whose prompt and images are identical (MMBench's circular copies) are asked once
    distinct = int(re.search(r"gpt-5.4: (\d+) call\(s\) to make \(0 of \1 cached\)", printed).group(1))
    assert drawn - 2 <= distinct < drawn
    assert f"<= {distinct * 200:,} output tokens, about $" in printed  # max_completion_tokens 200 is the limit
    assert f"claude-opus-4-6: {distinct} call(s) to make" in printed
    assert server.requests == []


def test_two_judges_classify_the_flips_with_their_images(tmp_path, logs, fixture_tasks, server, keys, capsys):
    logs_dir, _, flips = logs
    out, judges = tmp_path / "out", judges_file(tmp_path / "j.yaml", server)
    assert taxonomy(logs_dir, out, judges, fixture_tasks) == 0
    printed = capsys.readouterr().out
    drawn = sum(flips.values()) - 2

    verdicts = pd.read_csv(out / "taxonomy_verdicts.csv", dtype={"question_id": str})
    assert list(verdicts.columns[:5]) == VERDICT_COLUMNS and len(verdicts) == 2 * drawn
    by = verdicts.set_index(["benchmark", "question_id", "judge"])
    jigsaw = by.loc[("BLINK", "val_Jigsaw_1", "gpt-5.4")]
    assert jigsaw["label"] == UNPARSED and "not a JSON object" in jigsaw["parse_error"]
    assert jigsaw["asks"] == 3  # the first ask and parse_retries 2
    assert by.loc[("MMT-Bench", "1000", "gpt-5.4"), ["label", "asks"]].tolist() == [GENUINE, 2]
    assert by.loc[("MME", "existence/0000.png#0", "claude-opus-4-6"), "label"] == BAD_ANNOTATION
    assert [by.loc[("MMBench", "0", judge), "label"] for judge in ("gpt-5.4", "claude-opus-4-6")] == \
           [GENUINE, BAD_ANNOTATION]
    assert by.loc[("ScienceQA", "scienceqa-test-0", "gpt-5.4"), "label"] == FORMAT_MISMATCH
    assert (verdicts["correct_label"] == "Model A").all() and (verdicts["model_a"] == "Qwen3-VL-2B").all()
    degenerate = pd.read_csv(out / "taxonomy_degenerate.csv", dtype={"question_id": str})
    assert degenerate[["benchmark", "question_id", "reason"]].values.tolist() == [
        ["AI2D", "2000", "larger model: empty"], ["MathVista", "2", "larger model: single non-letter character"]]
    assert not set(zip(degenerate["benchmark"], degenerate["question_id"])) & set(
        zip(verdicts["benchmark"], verdicts["question_id"]))  # the degenerate responses were not judged

    # every request carried its question's images, as the task gives them to the model
    questions_by_key = {json.loads(line)["question_key"]: json.loads(line)
                        for line in (out / "taxonomy_questions.jsonl").read_text().splitlines()}
    blink = next(record for key, record in questions_by_key.items() if key.startswith("BLINK/val/val_Jigsaw_1:"))
    expected = tuple(hashlib.sha256((out / path).read_bytes()).hexdigest() for path in blink["images"])
    assert len(expected) >= 2
    asked = [r for r in server.answered if "MALFORMED" in r.prompt]
    assert len(asked) == 6 and all(r.images == expected for r in asked)  # 3 asks x 2 judges
    assert all(r.images for r in server.answered) and all(r.authorized for r in server.requests)

    calls = pd.read_csv(out / "taxonomy_calls.csv").set_index("judge")
    distinct = calls.loc["gpt-5.4", "prompts"]
    assert calls.loc["gpt-5.4", ["questions", "made", "unparsed"]].tolist() == [drawn, distinct, 1]
    assert len(server.answered) == 2 * distinct + 2 * (2 + 1)  # + 2 retries of MALFORMED and 1 of FLAKY per judge
    tables = {p.stem for p in (out / "tables").glob("*.md")}
    assert tables == {"taxonomy_sample_strata", "taxonomy_by_family", "taxonomy_by_dataset", "taxonomy_judge_agreement"}
    assert "gpt-5.4 vs. claude-opus-4-6: agree on" in printed

    # nothing the run wrote holds a key
    for path in [*out.rglob("*"), judges]:
        if path.is_file() and path.suffix in (".csv", ".jsonl", ".md", ".tex", ".yaml"):
            text = path.read_text()
            assert OPENAI_KEY not in text and ANTHROPIC_KEY not in text, path

    # a rerun asks nothing again: every answer, the malformed one included, is cached
    before = len(server.requests)
    assert taxonomy(logs_dir, out, judges, fixture_tasks) == 0
    assert len(server.requests) == before
    assert pd.read_csv(out / "taxonomy_verdicts.csv", dtype={"question_id": str}).equals(verdicts)

    # the human check sample is drawn from these outputs
    export = tmp_path / "human"
    assert main(["human-export", "--set", "taxonomy", "--verdicts", str(out / "taxonomy_verdicts.csv"),
                 "--questions", str(out / "taxonomy_questions.jsonl"), "--out", str(export), "--n", "4"]) == 0
    tasks = json.loads((export / "taxonomy_tasks.json").read_text())
    items = pd.read_csv(export / "taxonomy_items.csv")
    assert len(tasks) == 4 and items["flagged"].sum() == 2  # the two questions a judge called bad annotation
    assert all(task["data"]["images"] and task["data"]["images"][0].startswith("data:image/png;base64,")
               for task in tasks)

    # three people label the check sample; the report shows the taxonomy and Table 39 beside the analysis
    labels = {key: {annotator: (GENUINE if (annotator + n) % 4 else BAD_ANNOTATION, 5.0) for annotator in (1, 2, 3)}
              for n, key in enumerate(items["item_key"])}
    write_annotations(annotation_rows(labels), tmp_path / "annotations.csv")
    assert main(["human-stats", "--set", "taxonomy", "--annotations", str(tmp_path / "annotations.csv"), "--items",
                 str(export / "taxonomy_items.csv"), "--out", str(tmp_path / "stats")]) == 0
    report = tmp_path / "report"
    assert main(["report", "--logs", str(logs_dir), "--out", str(report), "--min-n", "1", "--min-net", "1",
                 "--taxonomy", str(out), "--human", str(tmp_path / "stats")]) == 0
    text = (report / "report.md").read_text()
    assert text.index("## Error taxonomy (Section 5.6)") < text.index("## Human annotation") < text.index("## Figures")
    assert "**Section 5.6: agreement of the two taxonomy judges" in text and "**Table 39: human annotation" in text
    table39 = pd.read_csv(report / "tables" / "table39_human_taxonomy.csv").set_index("Rater")
    assert list(table39.index[:4]) == ["Annotator 1", "Annotator 2", "Annotator 3", "Majority vote"]
    assert set(table39.index[4:]) == {"LLM judge gpt-5.4", "LLM judge claude-opus-4-6"}
    assert (table39["Items"] == 4).all()
    by_family = pd.read_csv(report / "tables" / "taxonomy_by_family.csv")
    assert by_family.iloc[-1].tolist()[:4] == ["All", "claude-opus-4-6", drawn, f"30 ({100 * 30 / drawn:.1f}%)"]


def test_sides_are_randomised_and_recorded_on_request(tmp_path, logs, fixture_tasks, server, keys):
    logs_dir, _, _ = logs
    out = tmp_path / "out"
    assert taxonomy(logs_dir, out, judges_file(tmp_path / "j.yaml", server), fixture_tasks, "--sides", "random",
                    "--judge", "claude-opus-4-6") == 0
    verdicts = pd.read_csv(out / "taxonomy_verdicts.csv", dtype={"question_id": str})
    assert set(verdicts["judge"]) == {"claude-opus-4-6"}
    swapped = verdicts["correct_label"] == "Model B"
    assert 0 < swapped.sum() < len(verdicts)
    assert (verdicts.loc[swapped, "model_a"] == "Qwen3-VL-8B").all()
    prompts = [r.prompt for r in server.answered]
    assert sum("Model B answered correctly and Model A" in p for p in prompts) >= swapped.sum()
    # the verdicts do not depend on the label: the judge reads whichever response is marked INCORRECT
    assert verdicts.set_index(["benchmark", "question_id"]).loc[("MMBench", "0"), "label"] == BAD_ANNOTATION


def test_a_failing_judge_is_named_and_a_rerun_resumes(tmp_path, logs, fixture_tasks, server, keys, capsys):
    logs_dir, _, flips = logs
    out, judges = tmp_path / "out", judges_file(tmp_path / "j.yaml", server, concurrency=1)
    assert taxonomy(logs_dir, out, judges, fixture_tasks, "--judge", "gpt-5.4", "--family-cap", "6") == 0  # 6 cached
    server.fail_next(3, 503)  # the next call's first ask and its two transport retries
    assert taxonomy(logs_dir, out, judges, fixture_tasks, "--judge", "gpt-5.4") == 1
    error = capsys.readouterr().err
    assert "judge 'gpt-5.4': request failed (503) after 3 attempt(s)" in error and "rerun to continue" in error
    assert OPENAI_KEY not in error
    assert taxonomy(logs_dir, out, judges, fixture_tasks, "--judge", "gpt-5.4") == 0
    calls = pd.read_csv(out / "taxonomy_calls.csv").iloc[0]
    assert calls["made"] + calls["cached"] == calls["prompts"] and calls["cached"] >= 6
    assert calls["questions"] == sum(flips.values()) - 2
    assert len([r for r in server.requests if r.status == 503]) == 3


def test_a_missing_key_is_named_before_any_call(tmp_path, logs, fixture_tasks, server, monkeypatch, capsys):
    monkeypatch.delenv("TAXONOMY_OPENAI_KEY", raising=False)
    monkeypatch.setenv("TAXONOMY_ANTHROPIC_KEY", ANTHROPIC_KEY)
    assert taxonomy(logs[0], tmp_path / "out", judges_file(tmp_path / "j.yaml", server), fixture_tasks) == 2
    assert "TAXONOMY_OPENAI_KEY is not set" in capsys.readouterr().err
    assert server.requests == []
