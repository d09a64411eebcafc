"""Human annotation end to end against a real Label Studio server (tests/support/label_studio_server.py): create
the projects, import the tasks, annotate as several users (with the time each took), read the
annotations back from the server and from an export file, and compute the tables. The annotations are
the designed examples of tests/support/human_examples.py; the expected numbers are the ones worked out by
hand there. A server that cannot start fails these tests with the reason; it is never skipped."""

import json
import math
import re

import pandas as pd
import pytest
from label_studio_server import LabelStudioUnavailable, start
from human_examples import (CAIT_EXAMPLE, TAXONOMY_EXAMPLE, B, G, failure_rows, verdicts_frame)

from invscale_demo.fixtures import drawn_image, write_cait_fixture
from lmms_eval_tasks.cait import read_folder
from postprocess.cli import main
from postprocess.human import agreement
from invscale.label_studio import (CONTROL, KEY_VARIABLE, URL_VARIABLE, LabelStudioError, annotations_from_export,
                                            annotations_from_server, client_from_environment, create_project)
from postprocess.human.task_sets import (FAILURE_MODES, cait_failure_task_set, sample_cait_failures,
                                         sample_taxonomy_check, taxonomy_task_set)

# one server per test process; with `-n N --dist loadgroup` the tests also share one worker
pytestmark = [pytest.mark.label_studio, pytest.mark.xdist_group("label_studio")]
ANNOTATORS = ["ann1@example.com", "ann2@example.com", "ann3@example.com"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    try:
        running = start(tmp_path_factory.mktemp("label-studio"), ANNOTATORS)
    except LabelStudioUnavailable as error:
        reason = str(error)
    else:
        yield running
        running.stop()
        return
    pytest.fail(f"the Label Studio server did not start: {reason}", pytrace=False)


@pytest.fixture
def as_owner(server, monkeypatch):
    """The environment the human-* commands read, set to the server's owner."""
    monkeypatch.setenv(URL_VARIABLE, server.url)
    monkeypatch.setenv(KEY_VARIABLE, server.admin_token)
    return client_from_environment()


@pytest.fixture(scope="module")
def cait_folder(tmp_path_factory):
    return write_cait_fixture(tmp_path_factory.mktemp("cait"))


def annotate(server, project: int, answers: dict[str, dict[int, tuple]], to_name: str = "image") -> None:
    """Post each annotator's answers as that user: {item_key: {annotator number: (label or None, seconds)}}."""
    from label_studio_sdk import LabelStudio

    owner = LabelStudio(base_url=server.url, api_key=server.admin_token)
    task_of = {task.data["item_key"]: task.id for task in owner.tasks.list(project=project)}
    for number, email in enumerate(ANNOTATORS, 1):
        annotator = LabelStudio(base_url=server.url, api_key=server.annotator_tokens[email])
        for key, by_annotator in answers.items():
            if number not in by_annotator:
                continue
            label, seconds = by_annotator[number]
            result = [] if label is None else [{"from_name": CONTROL, "to_name": to_name, "type": "choices",
                                                "value": {"choices": [label]}}]
            annotator.annotations.create(id=task_of[key], result=result, lead_time=seconds,
                                         was_cancelled=label is None)


def by_email(frame: pd.DataFrame, annotations: pd.DataFrame, column: str = "annotator") -> pd.DataFrame:
    emails = dict(zip(annotations["annotator"], annotations["annotator_email"]))
    return frame.assign(**{column: frame[column].map(emails)}).set_index(column).loc[ANNOTATORS]


def test_cait_baseline_from_export_to_table_12_through_the_commands(server, as_owner, cait_folder, tmp_path, capsys):
    out = tmp_path / "export"
    assert main(["human-export", "--set", "cait-baseline", "--cait-folder", str(cait_folder), "--out", str(out),
                 "--annotators", "3", "--server"]) == 0
    project = int(re.search(r"Label Studio project (\d+)", capsys.readouterr().out).group(1))
    created = as_owner.projects.get(project)
    assert created.maximum_annotations == 3 and created.task_number == 8
    assert created.label_config == (out / "cait-baseline_label_config.xml").read_text().strip()

    items = pd.read_csv(out / "cait-baseline_items.csv")
    key_of = dict(zip(items["scene"], items["item_key"]))
    answers = {}
    for number, by_scene in CAIT_EXAMPLE.items():
        for scene, answer in by_scene.items():
            answers.setdefault(key_of[scene], {})[number] = answer
    annotate(server, project, answers)

    annotations_csv = tmp_path / "annotations.csv"
    assert main(["human-import", "--project", str(project), "--out", str(annotations_csv)]) == 0
    assert main(["human-stats", "--set", "cait-baseline", "--annotations", str(annotations_csv), "--items",
                 str(out / "cait-baseline_items.csv"), "--out", str(tmp_path / "stats")]) == 0
    annotations = pd.read_csv(annotations_csv)
    assert len(annotations) == 24 and annotations["skipped"].sum() == 1
    assert set(annotations["annotator_email"]) == set(ANNOTATORS)

    scores = by_email(pd.read_csv(tmp_path / "stats" / "human_cait_baseline_annotators.csv"), annotations)
    assert scores["accuracy"].tolist() == [1.0, 5 / 8, 7 / 8]
    assert scores["macro_f1"].tolist() == pytest.approx([1.0, (6 / 8 + 4 / 7) / 2, (6 / 7 + 8 / 9) / 2])
    assert scores["seconds_per_item"].tolist() == [3.5, 6.0, 4.0]  # Label Studio's lead_time, as posted
    summary = pd.read_csv(tmp_path / "stats" / "human_cait_baseline_summary.csv").iloc[0]
    assert (summary["fleiss_kappa"], summary["fleiss_items"]) == (pytest.approx(136 / 220), 7)
    assert (summary["seconds_per_item_mean"], summary["seconds_per_item_std"]) == pytest.approx((4.5, math.sqrt(1.75)))
    baseline = pd.read_csv(tmp_path / "stats" / "human_cait_baseline_baseline.csv").iloc[0]
    assert (baseline["model"], baseline["n"], baseline["unparsed"]) == ("Human", 8, 1)
    assert (baseline["accuracy"], baseline["seconds_per_question"]) == pytest.approx((2.5 / 3, 4.5))

    # the same annotations through Label Studio's own JSON export
    export_file = tmp_path / "label_studio_export.json"
    export_file.write_text(json.dumps(as_owner.projects.exports.as_json(project)))
    from_file = annotations_from_export(export_file)
    from_server = annotations_from_server(as_owner, project)
    columns = ["task_id", "annotation_id", "item_key", "annotator", "label", "skipped", "lead_time", "created_at"]
    pd.testing.assert_frame_equal(from_file.sort_values("annotation_id")[columns].reset_index(drop=True),
                                  from_server.sort_values("annotation_id")[columns].reset_index(drop=True))


def test_taxonomy_check_through_the_server_gives_table_39(server, as_owner):
    sample = sample_taxonomy_check(verdicts_frame(), n=6)
    questions = pd.DataFrame([{"question_key": key, "question": f"What is in {key}?", "options": ["a cat", "a dog"],
                               "answer": "A", "response_correct": "A", "response_incorrect": "B",
                               "images": [drawn_image(i)]} for i, key in enumerate(TAXONOMY_EXAMPLE)])
    task_set = taxonomy_task_set(sample, questions, annotators=3)
    project = create_project(as_owner, task_set)
    key_of = dict(zip(task_set.items["question_key"], task_set.items["item_key"]))
    annotate(server, project, {key_of[q]: {a + 1: (labels[a], 10.0 + a) for a in range(3)}
                               for q, labels in TAXONOMY_EXAMPLE.items()}, to_name="question")
    stored = {task.data["item_key"]: task.data for task in as_owner.tasks.list(project=project)}
    assert stored[key_of["q1"]]["images"][0].startswith("data:image/png;base64,")

    annotations = annotations_from_server(as_owner, project)
    tables = agreement.taxonomy_tables(annotations, task_set.items)
    assert tables["fleiss"].iloc[0].to_dict() == {"raters": 3, "items": 6, "fleiss_kappa": pytest.approx(28 / 190)}
    pairs = tables["pairwise"].assign(pair=lambda f: [tuple(sorted(p)) for p in zip(
        f["rater_a"].map(dict(zip(annotations["annotator"], annotations["annotator_email"]))),
        f["rater_b"].map(dict(zip(annotations["annotator"], annotations["annotator_email"]))))]).set_index("pair")
    assert pairs.loc[[tuple(ANNOTATORS[:2]), (ANNOTATORS[0], ANNOTATORS[2]), tuple(ANNOTATORS[1:])],
                     "cohen_kappa"].tolist() == pytest.approx([10 / 22, 2 / 20, -1 / 23])
    judges = tables["judges"].set_index("judge")
    assert judges["agreement"].to_dict() == pytest.approx({"gpt": 0.8, "claude": 0.8})
    assert judges["cohen_kappa"].to_dict() == pytest.approx({"gpt": 0.24 / 0.44, "claude": 0.32 / 0.52})
    majority = tables["label_counts"].set_index("rater").loc["majority vote"]
    assert (majority[G], majority[B], majority["items"]) == (3, 2, 5)


def test_failure_modes_through_the_server(server, as_owner, cait_folder):
    records = read_folder(cait_folder)
    models = pd.DataFrame({"model": ["Qwen3-VL-8B", "InternVL3.5-8B"], "group": ["Instruct", "Thinking"]})
    task_set = cait_failure_task_set(sample_cait_failures(failure_rows(), n=200), records, models, annotators=1)
    project = create_project(as_owner, task_set)
    modes = dict(zip(task_set.items["item_key"], FAILURE_MODES + FAILURE_MODES[:1]))  # 5 items: S L SB A S
    annotate(server, project, {key: {1: (mode, 20.0)} for key, mode in modes.items()})
    tables = agreement.failure_mode_tables(annotations_from_server(as_owner, project), task_set.items)
    counts = tables["distribution"].set_index(["group", "mode"])["count"]
    assert counts["All"].to_dict() == {FAILURE_MODES[0]: 2, FAILURE_MODES[1]: 1, FAILURE_MODES[2]: 1,
                                       FAILURE_MODES[3]: 1}
    group_of = dict(zip(task_set.items["item_key"], task_set.items["group"]))
    expected_instruct = pd.Series([modes[k] for k in modes if group_of[k] == "Instruct"]).value_counts()
    assert counts["Instruct"][counts["Instruct"] > 0].to_dict() == expected_instruct.to_dict()


def test_server_problems_are_named(server, as_owner, monkeypatch):
    with pytest.raises(LabelStudioError, match="project 999999: .*Label Studio answered 404"):
        annotations_from_server(as_owner, 999999)
    monkeypatch.setenv(KEY_VARIABLE, "not-a-token")
    with pytest.raises(LabelStudioError, match="project 1: listing users: Label Studio answered 401"):
        annotations_from_server(client_from_environment(), 1)
    monkeypatch.delenv(URL_VARIABLE)
    with pytest.raises(LabelStudioError, match=f"set {URL_VARIABLE} to reach a Label Studio server"):
        client_from_environment()


def test_cait_construction_review_and_filtering_projects_through_the_server(server, as_owner, tmp_path):
    """cait-build's two task sets: Label Studio accepts their configs (the review's further controls shown
    on keep), and a review annotated on the server fills review.csv."""
    from label_studio_sdk import LabelStudio

    from cait_dataset.construction import filtering, review
    from invscale_demo.cait_build_demo import SCENE_BANK
    from invscale.label_studio import ImageOutput, TaskSet

    work = tmp_path / "work"
    work.mkdir()
    (work / "scenes.jsonl").write_text("".join(json.dumps({
        "scene_id": f"{scene.verb}-0-{i:02d}", "verb": scene.verb, "sample": 0, "common_text": scene.common,
        "uncommon_text": scene.uncommon}) + "\n" for i, scene in enumerate(SCENE_BANK[:2], 1)))
    task_set = review.export_review(work).task_set
    project = create_project(as_owner, task_set)
    annotator = LabelStudio(base_url=server.url, api_key=server.annotator_tokens[ANNOTATORS[0]])
    task_of = {task.data["item_key"]: task.id for task in as_owner.tasks.list(project=project)}
    choices = {"chase-0-01": {CONTROL: "keep", "anthropomorphize": "normal", "style": "realistic",
                              "characteristic": "Animal-Animal: Transposition of traditional predator and prey roles"},
               "chase-0-02": {CONTROL: "reject"}}
    for key, answers in choices.items():
        annotator.annotations.create(id=task_of[key], lead_time=4.0, result=[
            {"from_name": name, "to_name": "uncommon", "type": "choices", "value": {"choices": [choice]}}
            for name, choice in answers.items()])
    result = review.import_review(work, annotations_from_server(as_owner, project, review.CONTROLS))
    assert (result.decided, result.kept, result.undecided) == (2, 1, 0)
    decided = review.read_review(work).set_index("scene_id")
    assert decided.loc["chase-0-01", ["keep", "anthropomorphize", "style", "category"]].tolist() == [
        "yes", "no", "realistic", "Animal-Animal"]
    assert decided.loc["chase-0-02", "keep"] == "no"

    image = ImageOutput().reference(drawn_image(0), "x", "filter image")
    filter_set = TaskSet(filtering.SET_NAME, "CAIT construction: image filtering", filtering.LABEL_CONFIG,
                         ("keep", "reject"), [{"item_key": "chase-0-01-0-abc", "image": image,
                                               "uncommon_text": "A rabbit chases a tiger.",
                                               "common_text": "A tiger chases a rabbit.", "details": "Domain: ..."}],
                         pd.DataFrame({"item_key": ["chase-0-01-0-abc"]}), 1)
    project = create_project(as_owner, filter_set)
    annotate(server, project, {"chase-0-01-0-abc": {1: ("keep", 2.0)}})
    assert annotations_from_server(as_owner, project)["label"].tolist() == ["keep"]
