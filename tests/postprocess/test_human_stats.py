"""Human annotation without a server (postprocess.human): the samplers and task sets, the statistics on
designed examples (tests/support/human_examples.py) whose numbers are worked out by hand below, and reading
Label Studio export files. tests/invscale/test_human_label_studio.py runs the same examples through a real Label
Studio server."""

import json
import math
import re

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from human_examples import (B, CAIT_GOLD, F, G, TAXONOMY_EXAMPLE, annotation_rows, cait_items_and_annotations,
                            failure_rows, taxonomy_items_and_annotations, verdicts_frame)
from invscale_demo.fixtures import drawn_image, write_cait_fixture
from lmms_eval_tasks.cait import read_folder
from postprocess.human import agreement
from invscale.label_studio import (ANNOTATION_COLUMNS, ImageOutput, LabelStudioError, annotations_from_export,
                                            read_annotations, write_annotations, write_task_set)
from postprocess.human.task_sets import (FAILURE_MODES, UNPARSED, cait_answer_key, cait_baseline_task_set,
                                         cait_failure_task_set, sample_cait_failures, sample_taxonomy_check,
                                         taxonomy_task_set)


@pytest.fixture(scope="module")
def cait_records(tmp_path_factory):
    return read_folder(write_cait_fixture(tmp_path_factory.mktemp("cait")))


# ---------------------------------------------------------------------------------------------- taxonomy sample
def test_taxonomy_sample_over_represents_flagged_questions_and_reports_each_stratum():
    # 40 questions: 8 flagged (4 MME, 4 MMMU), 32 not (24 MME, 8 MMMU); ask for 10 at half flagged
    example = {f"q{i:02d}": (G, G, G, B if i < 8 else G, G) for i in range(40)}
    benchmarks = {f"q{i:02d}": "MME" if i < 4 or 8 <= i < 32 else "MMMU" for i in range(40)}
    verdicts = verdicts_frame(example, benchmarks)
    sample = sample_taxonomy_check(verdicts, n=10, flagged_share=0.5, seed=3)
    strata = sample.strata.set_index(["flagged", "benchmark"])
    # flagged: 5 over 4 + 4 -> 2.5 each, remainder to the first cell (MME); others: 5 over 24 + 8 -> 3.75 / 1.25
    assert strata["available"].to_dict() == {(True, "MME"): 4, (True, "MMMU"): 4, (False, "MME"): 24,
                                             (False, "MMMU"): 8}
    assert strata["drawn"].to_dict() == {(True, "MME"): 3, (True, "MMMU"): 2, (False, "MME"): 4, (False, "MMMU"): 1}
    assert strata.loc[(False, "MME"), "weight"] == 6.0
    assert len(sample.items) == 10 and sample.items["flagged"].sum() == 5
    assert set(sample.items.loc[sample.items["flagged"], "flagged_by"]) == {"gpt"}
    assert sample.items.equals(sample_taxonomy_check(verdicts, n=10, flagged_share=0.5, seed=3).items)
    assert not sample.items.equals(sample_taxonomy_check(verdicts, n=10, flagged_share=0.5, seed=4).items)


def test_the_default_flagged_share_fits_the_papers_own_figures():
    """Golden (inverse-scaling paper, Section 5.6 and Appendix H, Table 39): 127 questions, majority vote 107
    genuine and 20 bad annotation, agreeing with GPT-5.4 on 88.2% (112) and with Claude Opus 4.6 on 84.3%
    (107). A flagged question the majority calls genuine is a disagreement with the judge that flagged it, so
    the flagged questions number at most 20 + (127 - 112) + (127 - 107); the default quota stays within it."""
    from postprocess.human.task_sets import PAPER_FLAGGED_SHARE

    n, majority_bad = 127, 20
    agree_gpt, agree_claude = round(0.882 * n), round(0.843 * n)
    assert (agree_gpt, agree_claude, round(0.157 * n)) == (112, 107, majority_bad)
    most_flagged = majority_bad + (n - agree_gpt) + (n - agree_claude)
    assert most_flagged == 55
    assert math.floor(n * PAPER_FLAGGED_SHARE + 0.5) == 51 <= most_flagged < math.floor(n * 0.5 + 0.5)


def test_taxonomy_sample_fills_a_short_class_from_the_other():
    example = {f"q{i:02d}": (G, G, G, B if i < 2 else G, G) for i in range(20)}
    sample = sample_taxonomy_check(verdicts_frame(example), n=10, flagged_share=0.5)
    assert sample.items["flagged"].sum() == 2 and len(sample.items) == 10
    everything = sample_taxonomy_check(verdicts_frame(example), n=50)
    assert len(everything.items) == 20 and everything.strata["drawn"].sum() == 20


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(flags=st.lists(st.tuples(st.booleans(), st.sampled_from(["MME", "MMMU", "BLINK"])), min_size=1, max_size=60),
       n=st.integers(1, 80), share=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_taxonomy_sample_sizes_hold_for_any_verdicts(flags, n, share, seed):
    rows = []
    for i, (flagged, benchmark) in enumerate(flags):
        rows += [{"question_key": f"q{i}", "benchmark": benchmark, "family": "F", "judge": "gpt",
                  "label": B if flagged else G},
                 {"question_key": f"q{i}", "benchmark": benchmark, "family": "F", "judge": "claude", "label": G}]
    sample = sample_taxonomy_check(pd.DataFrame(rows), n=n, flagged_share=share, seed=seed)
    flagged_available = sum(f for f, _ in flags)
    assert len(sample.items) == min(n, len(flags)) == sample.strata["drawn"].sum()
    assert sample.items["question_key"].is_unique
    assert (sample.strata["drawn"] <= sample.strata["available"]).all()
    wanted = min(math.floor(n * share + 0.5), flagged_available)
    assert sample.items["flagged"].sum() == min(flagged_available, max(wanted, n - (len(flags) - flagged_available)))
    drawn = sample.strata[sample.strata["drawn"] > 0]
    assert (drawn["weight"] * drawn["drawn"] == drawn["available"]).all()


@pytest.mark.parametrize("change, message", [
    (lambda f: f.assign(label=f["label"].where(f.index != 3, "Genuine")), "question 'q2' judge 'claude': label 'Genuine'"),
    (lambda f: pd.concat([f, f.iloc[[0]]]), "question 'q1' has 2 verdicts from judge 'gpt'"),
    (lambda f: f.drop(index=5), "question 'q3' has no verdict from judge 'claude'"),
    (lambda f: f.drop(columns="family"), "missing column(s) ['family']"),
    (lambda f: f.assign(benchmark=f["benchmark"].where(f.index != 1, "MMMU")), "question 'q1' has more than one benchmark"),
])
def test_unusable_verdicts_are_named(change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        sample_taxonomy_check(change(verdicts_frame()))


def test_taxonomy_tasks_show_what_the_judges_saw_and_hide_their_verdicts(tmp_path):
    sample = sample_taxonomy_check(verdicts_frame(), n=6)
    questions = pd.DataFrame([{"question_key": key, "question": f"What is shown in {key}?",
                               "options": ["a cat", "a dog"], "answer": "A", "response_correct": "A",
                               "response_incorrect": "B. a dog", "images": [drawn_image(i), drawn_image(i + 1)]}
                              for i, key in enumerate(TAXONOMY_EXAMPLE)])
    task_set = taxonomy_task_set(sample, questions, ImageOutput(tmp_path / "images", "/data/local-files/?d=images/"))
    assert [t["item_key"] for t in task_set.tasks] == [f"taxonomy-{i:04d}" for i in range(1, 7)]
    first = task_set.tasks[0]
    assert first["options"] == "A. a cat\nB. a dog" and first["response_b"] == "B. a dog"
    assert first["images"] == ["/data/local-files/?d=images/taxonomy-0001_0.png",
                               "/data/local-files/?d=images/taxonomy-0001_1.png"]
    assert (tmp_path / "images" / "taxonomy-0001_1.png").is_file()
    assert not any("verdict" in key or "gpt" in json.dumps(task) for task in task_set.tasks for key in task)
    assert set(task_set.items["item_key"]) == {t["item_key"] for t in task_set.tasks}
    assert list(task_set.items.filter(like="verdict_").columns) == ["verdict_claude", "verdict_gpt"]
    with pytest.raises(ValueError, match="no row for sampled question 'q6'"):
        taxonomy_task_set(sample, questions[questions["question_key"] != "q6"])


# ---------------------------------------------------------------------------------------------- CAIT sets
def test_cait_baseline_tasks_use_the_balanced_order_and_keep_the_answer_out(cait_records, tmp_path):
    task_set = cait_baseline_task_set(cait_records, seed=0)
    key = cait_answer_key(cait_records).set_index("scene")
    assert dict(zip(key.index, key["gold"])) == CAIT_GOLD
    assert len(task_set.tasks) == 8 and task_set.annotators_per_task == 5
    for task, item in zip(task_set.tasks, task_set.items.itertuples()):
        assert task["option_a"] == f"Option A: {key.loc[item.scene, 'option_a']}"
        assert task["option_b"] == f"Option B: {key.loc[item.scene, 'option_b']}"
        assert task["image"].startswith("data:image/png;base64,")
        assert set(task) == {"item_key", "image", "option_a", "option_b"}
    paths = write_task_set(task_set, tmp_path)
    assert [t["data"]["item_key"] for t in json.loads(paths["tasks.json"].read_text())] == list(task_set.items["item_key"])
    assert '<Choices name="label" toName="image"' in paths["label_config.xml"].read_text()
    assert pd.read_csv(paths["items.csv"])["gold"].tolist() == task_set.items["gold"].tolist()


def test_failure_sample_draws_structured_errors_and_reports_per_model(cait_records):
    sample = sample_cait_failures(failure_rows(), n=4, seed=1)
    assert len(sample.items) == 4 and set(sample.items["variant"]) == {"structured"}
    assert sample.strata.set_index("model")["available"].to_dict() == {"InternVL3.5-8B": 2, "Qwen3-VL-8B": 3}
    assert sample.strata["drawn"].sum() == 4
    assert len(sample_cait_failures(failure_rows(), n=200).items) == 5
    models = pd.DataFrame({"model": ["Qwen3-VL-8B"], "group": ["Instruct"]})
    task_set = cait_failure_task_set(sample_cait_failures(failure_rows(), n=200), cait_records, models)
    by_scene = dict(zip(task_set.items["scene"], task_set.tasks))
    assert by_scene["cait_004"]["outcome"] == "Right answer: B; no answer could be read from the response."
    assert by_scene["cait_000"]["outcome"] == "Right answer: A; the model answered B."
    assert by_scene["cait_000"]["response"] == "Qwen3-VL-8B on cait_000: ..."
    assert not any("Qwen" in key or "model" in key for task in task_set.tasks for key in task)
    group = dict(zip(task_set.items["model"], task_set.items["group"]))
    assert group["Qwen3-VL-8B"] == "Instruct" and pd.isna(group["InternVL3.5-8B"])


# ---------------------------------------------------------------------------------------------- statistics
def test_taxonomy_tables_match_the_hand_worked_example():
    items, annotations = taxonomy_items_and_annotations()
    tables = agreement.taxonomy_tables(annotations, items)
    # Fleiss: P_i = 1, 1/3, 1/3, 1, 1/3, 0 -> P = 1/2; p = (9, 7, 2)/18 -> P_e = 134/324; kappa = 28/190
    assert tables["fleiss"].iloc[0].to_dict() == {"raters": 3, "items": 6, "fleiss_kappa": pytest.approx(28 / 190)}
    pairs = tables["pairwise"].set_index(["rater_a", "rater_b"])
    assert pairs["agreement"].to_dict() == pytest.approx({(1, 2): 4 / 6, (1, 3): 3 / 6, (2, 3): 2 / 6})
    # e.g. 1-2: p_o = 24/36, p_e = (4*2 + 2*3 + 0*1)/36 = 14/36 -> 10/22
    assert pairs["cohen_kappa"].to_dict() == pytest.approx({(1, 2): 10 / 22, (1, 3): 2 / 20, (2, 3): -1 / 23})
    counts = tables["label_counts"].set_index("rater")
    assert counts.loc[[1, 2, 3, "majority vote", "gpt", "claude"], [G, B, F, UNPARSED]].values.tolist() == [
        [4, 2, 0, 0], [2, 3, 1, 0], [3, 2, 1, 0], [3, 2, 0, 0], [5, 1, 0, 0], [2, 3, 0, 1]]
    assert counts.loc["majority vote", f"{B} share"] == pytest.approx(2 / 5)
    # majority G G B B G (q6: no majority) vs gpt G G G B G and claude G B B B G: 4/5 each;
    # kappa gpt: p_e = (3*4 + 2*1)/25 -> 0.24/0.44; claude: p_e = (3*2 + 2*3)/25 -> 0.32/0.52
    judges = tables["judges"].set_index("judge")
    assert judges["items"].to_dict() == {"gpt": 5, "claude": 5}
    assert judges["agreement"].to_dict() == pytest.approx({"gpt": 0.8, "claude": 0.8})
    assert judges["cohen_kappa"].to_dict() == pytest.approx({"gpt": 0.24 / 0.44, "claude": 0.32 / 0.52})
    assert tables["coverage"].iloc[0].to_dict() == {"items": 6, "rated": 6, "rated_by_all": 6, "no_majority": 1}
    # weights: q2, q3, q4 flagged (claude) and drawn whole (weight 1); the others too (n = 6 takes all)
    estimates = tables["estimates"].set_index(["rater", "label"])
    assert estimates.loc[("majority vote", B), "share"] == pytest.approx(2 / 5)
    assert estimates.loc[("majority vote", B), "weighted_share"] == pytest.approx(2 / 5)


def test_an_unparsed_judge_verdict_counts_against_the_judge_in_kappa():
    """Every annotator agrees, so the majority is each item's label; claude's unparsed verdict on q2 is a
    disagreement, not a missing item: claude G U B B G vs majority G G B B G."""
    example = {"q1": (G,) * 5, "q2": (G, G, G, G, UNPARSED), "q3": (B,) * 5, "q4": (B,) * 5, "q5": (G,) * 5}
    sample = sample_taxonomy_check(verdicts_frame(example), n=5)
    items = sample.items.assign(item_key=sample.items["question_key"])
    annotations = annotation_rows({key: {a + 1: (labels[a], 5.0) for a in range(3)} for key, labels in example.items()})
    judges = agreement.taxonomy_tables(annotations, items)["judges"].set_index("judge")
    # p_o = 4/5; majority G 3, B 2; claude G 2, B 2, unparsed 1: p_e = (3*2 + 2*2)/25 = 2/5 -> kappa 2/3
    # (without the unparsed item: 4 items, all agreeing, kappa 1.0)
    assert judges.loc["claude", ["items", "agreement"]].tolist() == [5, pytest.approx(0.8)]
    assert judges.loc["claude", "cohen_kappa"] == pytest.approx(2 / 3)
    assert judges.loc["gpt", "cohen_kappa"] == pytest.approx(1.0)


def test_sampling_weights_turn_sample_shares_into_population_estimates():
    items, annotations = taxonomy_items_and_annotations()
    items = items.assign(weight=[3.0 if not flagged else 1.0 for flagged in items["flagged"]])
    estimates = agreement.taxonomy_tables(annotations, items)["estimates"].set_index(["rater", "label"])
    # majority B on q3, q4 (weight 1 each) of q1..q5 (weights 3, 1, 1, 1, 3): 2/9
    assert estimates.loc[("majority vote", B), "weighted_share"] == pytest.approx(2 / 9)
    assert estimates.loc[("gpt", B), "weighted_share"] == pytest.approx(1 / 12)


def test_cait_baseline_tables_match_the_hand_worked_example(cait_records):
    items, annotations = cait_items_and_annotations(cait_records)
    tables = agreement.cait_baseline_tables(annotations, items)
    scores = tables["annotators"].set_index("annotator")
    assert scores["items"].tolist() == [8, 8, 8] and scores["skipped"].tolist() == [0, 1, 0]
    assert scores["accuracy"].tolist() == [1.0, 5 / 8, 7 / 8]
    # annotator 2: F1(A) = 6/8 (tp 3, fp 1, fn 1), F1(B) = 4/7 (tp 2, fp 1, fn 2: the skip is a miss)
    # annotator 3: F1(A) = 6/7, F1(B) = 8/9
    assert scores["macro_f1"].tolist() == pytest.approx([1.0, (6 / 8 + 4 / 7) / 2, (6 / 7 + 8 / 9) / 2])
    assert scores["seconds_per_item"].tolist() == [3.5, 6.0, 4.0]  # annotator 2's skip is not timed
    summary = tables["summary"].iloc[0]
    assert summary["accuracy_mean"] == pytest.approx(2.5 / 3)
    assert summary["accuracy_std"] == pytest.approx(math.sqrt(((1 / 6) ** 2 + (5 / 24) ** 2 + (1 / 24) ** 2) / 2))
    assert (summary["seconds_per_item_mean"], summary["seconds_per_item_std"]) == pytest.approx((4.5, math.sqrt(1.75)))
    # Fleiss over the 7 items all three answered: P = 17/21, p = (11, 10)/21 -> (357 - 221) / 220 = 136/220
    assert (summary["fleiss_kappa"], summary["fleiss_items"]) == (pytest.approx(136 / 220), 7)
    baseline = tables["baseline"].iloc[0].to_dict()
    assert {k: baseline[k] for k in ("model", "variant", "mode", "n", "unparsed")} == {
        "model": "Human", "variant": "direct", "mode": "instant", "n": 8, "unparsed": 1}
    assert baseline["accuracy"] == pytest.approx(2.5 / 3) and baseline["seconds_per_question"] == pytest.approx(4.5)
    pairs = tables["pairwise"].set_index(["rater_a", "rater_b"])
    assert pairs.loc[(1, 2)].tolist() == [7, pytest.approx(5 / 7), pytest.approx(10 / 24)]


def test_table_12_mean_and_std_of_the_papers_five_annotators(cait_records):
    """Golden (CAIT Table 12): the five annotators' average times 3.7, 3.3, 3.4, 4.1, 4.2 s give Mean 3.740 and
    Std 0.404, the standard deviation with n - 1 (with n it would be 0.361)."""
    items = cait_items_and_annotations(cait_records)[0]
    times = {1: 3.7, 2: 3.3, 3: 3.4, 4: 4.1, 5: 4.2}
    annotations = annotation_rows({key: {a: (gold, t) for a, t in times.items()}
                                   for key, gold in zip(items["item_key"], items["gold"])})
    summary = agreement.cait_baseline_tables(annotations, items)["summary"].iloc[0]
    assert round(summary["seconds_per_item_mean"], 3) == 3.740
    assert round(summary["seconds_per_item_std"], 3) == 0.404


def test_the_human_row_counts_only_the_scenes_someone_annotated(cait_records):
    items, annotations = cait_items_and_annotations(cait_records)
    nobody = items["item_key"].iloc[-1]
    tables = agreement.cait_baseline_tables(annotations[annotations["item_key"] != nobody], items)
    baseline = tables["baseline"].iloc[0]
    assert baseline["n"] == 7  # the accuracies are over the 7 annotated scenes, not the set's 8
    summary = tables["summary"].iloc[0]
    assert (summary["items"], summary["unannotated"]) == (7, 1)  # the summary counts as the baseline does
    assert "1 item(s) of the set have no annotation" in baseline["timing_note"]


def test_baseline_row_has_the_columns_of_the_model_rows():
    # the columns of postprocess.cait.metrics.mode_metrics(table, timing)
    scores = pd.DataFrame({"accuracy": [0.9], "macro_f1": [0.9], "skipped": [0], "seconds_per_item": [3.0]})
    assert list(agreement.baseline_row(scores, 10).columns) == [
        "model", "variant", "mode", "n", "accuracy", "macro_f1", "unparsed", "seconds_per_question", "time_apportioned",
        "timing_note"]


def test_failure_mode_distribution_uses_each_items_majority():
    items = pd.DataFrame({"item_key": [f"f{i}" for i in range(6)],
                          "group": ["Instruct", "Instruct", "Instruct", "Thinking", "Thinking", None]})
    S, L, SB, A = FAILURE_MODES
    annotations = annotation_rows({"f0": {1: (S, 1), 2: (S, 1)}, "f1": {1: (S, 1), 2: (SB, 1)}, "f2": {1: (SB, 1)},
                                   "f3": {1: (L, 1), 2: (L, 1)}, "f4": {1: (A, 1), 2: (None, 1)}})
    tables = agreement.failure_mode_tables(annotations, items)
    counts = tables["distribution"].set_index(["group", "mode"])["count"]
    assert counts["Instruct"].to_dict() == {S: 1, L: 0, SB: 1, A: 0}  # f1 has no majority
    assert counts["Thinking"].to_dict() == {S: 0, L: 1, SB: 0, A: 1}
    assert counts["All"].sum() == 4
    assert tables["distribution"].set_index(["group", "mode"]).loc[("Thinking", L), "share"] == 0.5
    coverage = tables["coverage"].set_index("group")
    assert coverage.loc["Instruct"].tolist() == [3, 2, 1, 0]
    assert coverage.loc["Ungrouped"].tolist() == [1, 0, 0, 1]
    assert tables["fleiss"].iloc[0]["items"] == 3  # f0, f1 and f3: both annotators rated (f4 was skipped once)


@pytest.mark.parametrize("rows, message", [
    ({"nope": {1: (G, 1)}}, "item_key 'nope' is not in the items file"),
    ({"q1": {1: ("Fine", 1)}}, "item 'q1' annotator 1: label 'Fine' is not one of"),
])
def test_unusable_annotations_are_named(rows, message):
    items, _ = taxonomy_items_and_annotations()
    with pytest.raises(ValueError, match=message):
        agreement.taxonomy_tables(annotation_rows(rows), items)
    twice = pd.concat([annotation_rows({"q1": {1: (G, 1)}})] * 2)
    with pytest.raises(ValueError, match="annotator 1 annotated item 'q1' more than once"):
        agreement.taxonomy_tables(twice, items)


# ---------------------------------------------------------------------------------------------- export files
def export_task(task_id, key, annotations):
    return {"id": task_id, "data": {"item_key": key, "image": "data:image/png;base64,AAAA"}, "project": 7,
            "annotations": annotations, "drafts": [{"result": []}], "predictions": []}


def export_annotation(annotation_id, user, choice, lead_time=3.25, cancelled=False):
    return {"id": annotation_id, "completed_by": user, "was_cancelled": cancelled, "lead_time": lead_time,
            "created_at": "2026-12-01T01:00:57.209742Z", "project": 7,
            "result": [] if cancelled else [{"from_name": "label", "to_name": "image", "type": "choices",
                                              "value": {"choices": [choice]}}]}


def test_export_file_becomes_the_annotations_frame(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps([
        export_task(1, "cait-baseline-0001", [export_annotation(10, 2, "A"),
                                              export_annotation(11, {"id": 3, "email": "c@example.com"}, "B", 7.5)]),
        export_task(2, "cait-baseline-0002", [export_annotation(12, 2, None, 1.0, cancelled=True)]),
        export_task(3, "cait-baseline-0003", []),
    ]))
    frame = annotations_from_export(path)
    assert list(frame.columns) == ANNOTATION_COLUMNS
    assert frame[["task_id", "annotation_id", "item_key", "annotator", "annotator_email", "skipped",
                  "lead_time"]].values.tolist() == [
        [1, 10, "cait-baseline-0001", 2, "", False, 3.25],
        [1, 11, "cait-baseline-0001", 3, "c@example.com", False, 7.5],
        [2, 12, "cait-baseline-0002", 2, "", True, 1.0]]
    assert frame["label"].tolist()[:2] == ["A", "B"] and pd.isna(frame["label"].iloc[2])
    assert (frame["project"] == 7).all() and str(frame["created_at"].dt.tz) == "UTC"
    round_trip = read_annotations(write_annotations(frame, tmp_path / "annotations.csv"))
    pd.testing.assert_frame_equal(round_trip, frame, check_dtype=False)


@pytest.mark.parametrize("tasks, message", [
    ([export_task(1, "k", [{**export_annotation(5, 2, "A"), "result": []}])], "task 1 annotation 5: 0 results"),
    ([export_task(1, "k", [export_annotation(5, "someone", "A")])], "task 1 annotation 5: 'completed_by' is 'someone'"),
    ([export_task(1, "k", [export_annotation(5, 2, "A", lead_time=-1)])], "task 1 annotation 5: 'lead_time' is -1"),
    ([export_task(1, "k", []), export_task(2, "k", [])], "task 2: item_key 'k' is also the key of task 1"),
    ([{"id": 1, "data": {"image": "x"}, "annotations": []}], "task 1: its data has no 'item_key'"),
    ({"tasks": []}, "a Label Studio JSON export is a list of tasks"),
    ([export_task(1, "k", ["A"])], "task 1: annotation 1 is str, not an object"),
    ([export_task(1, "k", {"id": 5})], "task 1: 'annotations' is dict, not a list"),
    ([export_task(1, "k", [{**export_annotation(5, 2, "A"), "created_at": "yesterday"}])],
     "task 1 annotation 5: 'created_at' is 'yesterday', not a date and time"),
    ([export_task(1, "k", []), export_task(1, "k2", [])], "task 1: record 2 repeats the id of an earlier task"),
])
def test_unusable_export_files_are_named(tmp_path, tasks, message):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    with pytest.raises(LabelStudioError, match=re.escape(f"{path}: ") + ".*" + re.escape(message)):
        annotations_from_export(path)


def test_an_export_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / "export.json"
    path.write_text('[\n{"id": 1,\n')
    with pytest.raises(LabelStudioError, match=r"export.json: not valid JSON \(line 3"):
        annotations_from_export(path)


def test_an_export_that_is_not_utf8_names_the_file_and_byte(tmp_path):
    path = tmp_path / "export.json"
    path.write_bytes(json.dumps([export_task(1, "k", [])]).encode().replace(b'"k"', b'"k\xff"'))
    with pytest.raises(LabelStudioError, match=re.escape(f"{path}: byte 0xff at offset ") + r"\d+ is not UTF-8"):
        annotations_from_export(path)


def test_an_annotations_csv_with_a_bad_date_names_the_line(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps([export_task(1, "k", [export_annotation(5, 2, "A"), export_annotation(6, 3, "B")])]))
    csv = write_annotations(annotations_from_export(path), tmp_path / "annotations.csv")
    csv.write_text(csv.read_text().replace("2026-12-01 01:00:57.209742+00:00", "soon", 1))
    with pytest.raises(LabelStudioError, match=re.escape(f"{csv}: line 2: created_at 'soon' is not a date and time")):
        read_annotations(csv)
    csv.write_bytes(b"\xff\xfe" + csv.read_bytes())
    with pytest.raises(LabelStudioError, match=re.escape(f"{csv}: not a readable annotations CSV")):
        read_annotations(csv)


# ---------------------------------------------------------------------------------------------- commands
def test_taxonomy_export_command_writes_tasks_items_and_strata(tmp_path, capsys):
    from postprocess.cli import main

    verdicts_frame().to_csv(tmp_path / "verdicts.csv", index=False)
    (tmp_path / "images").mkdir()
    for i in range(2):
        drawn_image(i).save(tmp_path / "images" / f"{i}.png")
    pd.DataFrame([{"question_key": key, "question": "Which?", "options": ["x", "y"], "answer": "A",
                   "response_correct": "A", "response_incorrect": "B", "images": ["images/0.png", "images/1.png"]}
                  for key in TAXONOMY_EXAMPLE]).to_json(tmp_path / "questions.jsonl", orient="records", lines=True)
    out = tmp_path / "out"
    assert main(["human-export", "--set", "taxonomy", "--verdicts", str(tmp_path / "verdicts.csv"), "--questions",
                 str(tmp_path / "questions.jsonl"), "--n", "4", "--out", str(out)]) == 0
    assert "taxonomy: drew 4 of 6 (asked for 4)" in capsys.readouterr().out
    tasks = json.loads((out / "taxonomy_tasks.json").read_text())
    assert len(tasks) == 4 and all(len(t["data"]["images"]) == 2 for t in tasks)
    assert tasks[0]["data"]["images"][0].startswith("data:image/png;base64,")
    strata = pd.read_csv(out / "taxonomy_strata.csv")
    assert strata.groupby("flagged")["drawn"].sum().to_dict() == {False: 2, True: 2}  # q2 q3 q4 flagged by claude
    items = pd.read_csv(out / "taxonomy_items.csv")
    assert list(items.columns) == ["item_key", "question_key", "benchmark", "family", "flagged", "flagged_by",
                                   "verdict_claude", "verdict_gpt", "weight"]
    assert main(["human-export", "--set", "taxonomy", "--verdicts", str(tmp_path / "verdicts.csv"),
                 "--out", str(out)]) == 2
    assert "human-export --set taxonomy needs --questions" in capsys.readouterr().err


def test_cait_failures_export_command_reads_the_logs(tmp_path, cait_records):
    from cait_logs import GEMMA_4B, QWEN_8B, by_scene, write_cait_logs

    from postprocess.cli import main

    logs, out = tmp_path / "logs", tmp_path / "out"
    write_cait_logs(logs, {QWEN_8B: {"structured": by_scene({0: "wrong", 1: "unsure"}), "direct": by_scene({2: "wrong"})},
                           GEMMA_4B: {"structured": by_scene({3: "wrong"})}})
    folder = str(tmp_path / "cait")
    write_cait_fixture(tmp_path / "cait")
    assert main(["human-export", "--set", "cait-failures", "--cait-folder", folder, "--logs", str(logs),
                 "--out", str(out)]) == 0
    items = pd.read_csv(out / "cait-failures_items.csv")
    assert sorted(zip(items["model"], items["group"], items["scene"])) == [
        ("Gemma-3-4B", "Instruct", "cait_003"), ("Qwen3-VL-8B", "Instruct", "cait_000"),
        ("Qwen3-VL-8B", "Instruct", "cait_001")]
    tasks = {t["data"]["item_key"]: t["data"] for t in json.loads((out / "cait-failures_tasks.json").read_text())}
    unsure = tasks[items.loc[items["scene"] == "cait_001", "item_key"].iloc[0]]
    assert unsure["response"] == "I am not sure which one."
    assert unsure["outcome"] == "Right answer: B; no answer could be read from the response."
