"""CAIT metrics and tables (postprocess.cait.metrics, postprocess.render.cait_tables) over logs written with the task layer's own records.

Records are produced by the real CAIT adapter, answer balancing, variants and scoring, written as
lmms-eval 0.7.3 sample logs (tests/support/cait_logs.py, with logfactory) and read back with ingest_logs, so
every test goes through the same table the report sees. Expected values are worked out by hand in each test.
"""

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from cait_logs import (GEMMA_4B, INTERN_8B, QWEN_4B, QWEN_8B, always, by_scene, cait_records, describes, ingest, right,
                       scene_questions, write_cait_logs, wrong)
from logfactory import write_run

from model_configs import load_registry
from postprocess.cait import metrics
from postprocess.render import cait_tables as render
from postprocess.render.tables import to_markdown


def markdown(tables) -> str:
    return "\n".join(to_markdown(t) for t in tables)


def cait_tables(table: pd.DataFrame, models: pd.DataFrame, timing: pd.DataFrame | None = None,
                reeval_items: pd.DataFrame | None = None) -> list:
    return render.cait_tables(metrics.cait_numbers(table, models, timing, reeval_items))


def run_timing(ingested) -> pd.DataFrame:
    return metrics.run_timing(ingested.runs, ingested.run_tasks)


def models_frame(groups: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """{registry key: (group, size class)} as the models frame the CAIT functions take."""
    return pd.DataFrame([{"model": key, "name": key, "params": None, "group": group, "size_class": size}
                         for key, (group, size) in groups.items()])


def write_timed_results(path: Path, model_path: str, tasks: dict[str, tuple[int, float]],
                        elapsed: float | None) -> None:
    """A results.json as lmms-eval 0.7.3 writes it with --log_samples, for tasks {task: (effective
    questions, total output tokens)}; elapsed None: the wrapper logged no timing (no `throughput`)."""
    total_tokens = sum(tokens for _, tokens in tasks.values())
    results = {
        "results": {task: {"alias": task, "accuracy,none": 0.5, "accuracy_stderr,none": "N/A",
                           "macro_f1,none": 0.5, "macro_f1_stderr,none": "N/A"} for task in tasks},
        "group_subtasks": {task: [] for task in tasks},
        "configs": {task: {"task": task, "dataset_path": "CAIT-benchmark/CAIT", "test_split": "test",
                           "output_type": "generate_until", "generation_kwargs": {"max_new_tokens": 16}}
                    for task in tasks},
        "versions": {task: "Yaml" for task in tasks},
        "n-shot": {task: 0 for task in tasks},
        "higher_is_better": {task: {"accuracy": True, "macro_f1": True} for task in tasks},
        "n-samples": {task: {"original": n, "effective": n} for task, (n, _) in tasks.items()},
        "config": {"model": "qwen3_vl", "model_args": f"pretrained={model_path},device_map=cuda",
                   "model_backend": "lmms_eval.models.chat.qwen3_vl.Qwen3_VL (chat)", "batch_size": "1",
                   "batch_sizes": [], "device": "cuda", "use_cache": None, "limit": None, "offset": 0,
                   "bootstrap_iters": 100000, "gen_kwargs": "", "random_seed": 0, "numpy_seed": 1234,
                   "torch_seed": 1234, "fewshot_seed": 1234},
        "git_hash": None, "git_branch": None, "lmms_eval_version": "0.7.3",
        "date": path.name.split("_results.json")[0],
        "usage": {},
        "efficiency": {
            "by_task": {task: {"docs": float(n), "docs_with_token_counts": float(n), "total_input_tokens": 812.0 * n,
                               "total_output_tokens": float(tokens), "total_tokens": 812.0 * n + tokens,
                               "total_correct_score": n / 2, "avg_output_tokens_per_sample": tokens / n,
                               "tokens_per_correct_answer": tokens / (n / 2)}
                        for task, (n, tokens) in tasks.items()},
            "overall": {"docs": float(sum(n for n, _ in tasks.values())), "total_output_tokens": float(total_tokens)},
        },
    }
    if elapsed is not None:
        total_requests = sum(n for n, _ in tasks.values())
        results["throughput"] = {"total_gen_tokens": int(total_tokens), "total_elapsed_time": elapsed,
                                 "avg_speed": total_tokens / elapsed, "avg_latency": elapsed / total_requests}
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")


def row(frame: pd.DataFrame, **where) -> pd.Series:
    selected = frame
    for column, value in where.items():
        selected = selected[selected[column] == value]
    assert len(selected) == 1, (where, selected)
    return selected.iloc[0]


# ---------------------------------------------------------------------------------------------- models
def test_models_frame_from_the_registry_cait_list():
    registry = load_registry()
    frame = metrics.cait_models_frame(registry)
    assert frame["model"].is_unique
    assert list(frame["model"][:18]) == list(registry.cait_frame()["key"])  # the paper's 18 first, in its order
    assert row(frame, model="Qwen3-VL-8B")["group"] == "Instruct"  # registry_key of Qwen3-VL-Instruct 8B
    assert row(frame, model="Qwen2.5-VL-Instruct-7B")["size_class"] == "~10B"
    assert row(frame, model="Qwen2.5-VL-Instruct-3B")["size_class"] == "~3B"
    assert row(frame, model="Kimi-VL-A3B-Thinking-16B")[["group", "size_class"]].tolist() == ["Thinking", "~10B"]
    assert row(frame, model="InternVL-3.5-4B")[["group", "size_class"]].tolist() == ["Thinking", "~3B"]
    gemini = row(frame, model="Gemini-2.5-pro")
    assert gemini["group"] == "Proprietary" and pd.isna(gemini["size_class"])
    # any other registry model is grouped by its family, with its size and no paper size class
    gemma = row(frame, model="Gemma-3-27B")
    assert gemma[["group", "params"]].tolist() == ["Gemma 3", "27B"] and pd.isna(gemma["size_class"])


# ---------------------------------------------------------------------------------------------- accuracy, F1
def test_accuracy_and_macro_f1_per_mode_by_hand(tmp_path):
    golds = [q.gold for q in scene_questions()]
    assert golds.count("A") == 4
    a_scenes = [i for i, g in enumerate(golds) if g == "A"]
    b_scenes = [i for i, g in enumerate(golds) if g == "B"]
    # gold A: all answered A. gold B: two right, one answered A, one unparsed.
    direct = by_scene({b_scenes[2]: "A", b_scenes[3]: "unsure"})
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": direct, "cot": always("A"), "structured": right,
                                         "describe": describes("uncommon")}})
    frame = metrics.mode_metrics(ingest(tmp_path).table)
    assert set(frame["variant"]) == {"direct", "cot", "structured"}  # describe is not an answer
    instant = row(frame, model="Qwen3-VL-8B", variant="direct")
    assert instant["mode"] == "instant" and instant["n"] == 8 and instant["unparsed"] == 1
    assert instant["accuracy"] == pytest.approx(6 / 8)
    # A: tp 4, fp 1, fn 0 -> 8/9. B: tp 2, fp 0, fn 2 -> 2/3. Macro: 7/9.
    assert instant["macro_f1"] == pytest.approx((8 / 9 + 2 / 3) / 2)
    cot = row(frame, model="Qwen3-VL-8B", variant="cot")
    assert cot["accuracy"] == pytest.approx(0.5) and cot["macro_f1"] == pytest.approx(1 / 3)  # always "A"
    structured = row(frame, model="Qwen3-VL-8B", variant="structured")
    assert structured["accuracy"] == 1.0 and structured["macro_f1"] == 1.0
    assert a_scenes  # balanced fixture


def test_position_bias_check(tmp_path):
    biased = always("A")
    careful = right
    write_cait_logs(tmp_path, {
        QWEN_8B: {"direct": biased, "swap": biased},
        QWEN_4B: {"direct": careful, "swap": by_scene({0: "unsure"})},
    })
    bias = metrics.position_bias(ingest(tmp_path).table).set_index("model")
    first_letter = bias.loc["Qwen3-VL-8B"]
    assert first_letter[["share_a_direct", "share_a_swap"]].tolist() == [1.0, 1.0]
    assert first_letter[["accuracy_direct", "accuracy_swap"]].tolist() == [0.5, 0.5]
    assert first_letter["same_sentence"] == 0.0  # "A" is the other sentence once the options are swapped
    reader = bias.loc["Qwen3-VL-4B"]
    assert scene_questions()[0].gold == "A"  # so at B when swapped: the unparsed answer removes a B
    assert reader["share_a_direct"] == 0.5 and reader["share_a_swap"] == pytest.approx(4 / 7)
    assert reader["accuracy_swap"] == pytest.approx(7 / 8)
    assert reader["paired_scenes"] == 8 and reader["same_sentence"] == pytest.approx(7 / 8)  # unparsed never agrees


def test_a_scene_unparsed_in_both_orders_is_not_the_same_sentence(tmp_path):
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": by_scene({0: "unsure"}), "swap": by_scene({0: "unsure"})}})
    reader = metrics.position_bias(ingest(tmp_path).table).set_index("model").loc["Qwen3-VL-8B"]
    # both answers to scene 0 are wrong as unparsed, yet neither chose a sentence: 7 of 8, not 8 of 8
    assert reader["paired_scenes"] == 8 and reader["same_sentence"] == pytest.approx(7 / 8)


# ---------------------------------------------------------------------------------------------- domains
def test_domain_accuracy_per_model_and_group(tmp_path):
    # Fixture scenes: 0-1 Human-Human, 2-3 Human-Animal, 4-5 Animal-Animal, 6-7 Bio-StillLife.
    write_cait_logs(tmp_path, {
        QWEN_8B: {"direct": by_scene({1: "wrong", 4: "wrong", 5: "unsure", 7: "wrong"})},
        GEMMA_4B: {"direct": right},
        INTERN_8B: {"direct": wrong},
    })
    table = ingest(tmp_path).table
    domains = metrics.domain_accuracy(table).set_index("model")
    assert list(domains.columns) == ["A-A", "B-S", "H-A", "H-H"]  # Table 16 order
    assert domains.loc["Qwen3-VL-8B"].tolist() == [0.0, 0.5, 1.0, 0.5]
    assert domains.loc["Gemma-3-4B"].tolist() == [1.0] * 4 and domains.loc["InternVL3.5-8B"].tolist() == [0.0] * 4
    models = models_frame({"Qwen3-VL-8B": ("Instruct", "~10B"), "Gemma-3-4B": ("Instruct", "~10B"),
                           "InternVL3.5-8B": ("Thinking", "~10B")})
    groups = metrics.group_domain_accuracy(domains.reset_index(), models)
    instruct = row(groups, group="Instruct")
    assert instruct[["H-H", "H-A", "A-A", "B-S"]].tolist() == [0.75, 1.0, 0.5, 0.75] and instruct["models"] == 2
    assert row(groups, group="Thinking")[["H-H", "H-A", "A-A", "B-S"]].tolist() == [0.0] * 4


def test_structured_prompt_group_summary_against_instant(tmp_path):
    write_cait_logs(tmp_path, {
        QWEN_8B: {"direct": by_scene({0: "wrong", 1: "wrong"}), "structured": right},
        GEMMA_4B: {"direct": right, "structured": by_scene({0: "wrong"})},
    })
    frame = metrics.mode_metrics(ingest(tmp_path).table)
    models = models_frame({"Qwen3-VL-8B": ("Instruct", "~10B"), "Gemma-3-4B": ("Instruct", "~10B")})
    summary = row(metrics.group_mode_summary(frame, models), group="Instruct")
    assert summary["models"] == 2 and summary["accuracy"] == pytest.approx((1 + 7 / 8) / 2)
    assert summary["accuracy_change"] == pytest.approx(((1 - 6 / 8) + (7 / 8 - 1)) / 2 * 100)  # +6.25 points


def test_table_7_group_means_recompute_from_tables_3_and_17():
    """Golden (CAIT Tables 3, 7 and 17): the ~10B Instruct models' structured-prompt accuracy and F1 (Table 17)
    average to Table 7's 0.554 and 0.546. Its arrow (up 4.2%) has no stated baseline: against instant
    (Table 3) the change is +15.2 points, which is what the report prints and its note names."""
    structured = {"Qwen2.5-VL-7B": (0.538, 0.534), "Qwen3-VL-8B": (0.750, 0.750), "Gemma-3-12B": (0.535, 0.538),
                  "LLaMA3.2-11B": (0.458, 0.458), "LLaVA-NeXT-7B": (0.490, 0.450)}
    instant = {"Qwen2.5-VL-7B": (0.420, 0.347), "Qwen3-VL-8B": (0.380, 0.327), "Gemma-3-12B": (0.360, 0.353),
               "LLaMA3.2-11B": (0.375, 0.372), "LLaVA-NeXT-7B": (0.475, 0.349)}
    rows = [{"model": model, "variant": variant, "accuracy": acc, "macro_f1": f1}
            for variant, values in (("structured", structured), ("direct", instant))
            for model, (acc, f1) in values.items()]
    models = models_frame({model: ("Instruct", "~10B") for model in structured})
    summary = row(metrics.group_mode_summary(pd.DataFrame(rows), models), group="Instruct")
    assert (summary["models"], round(summary["accuracy"], 3), round(summary["macro_f1"], 3)) == (5, 0.554, 0.546)
    assert round(summary["accuracy_change"], 1) == 15.2


# ---------------------------------------------------------------------------------------------- timing
def test_seconds_per_question_for_a_single_task_run(tmp_path):
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": right}})
    results = next(tmp_path.rglob("*_results.json"))
    write_timed_results(results, QWEN_8B, {"cait": (8, 8.0)}, elapsed=24.4)
    ingested = ingest(tmp_path)
    timing = run_timing(ingested)
    record = row(timing, task="cait")
    assert record["seconds_per_question"] == pytest.approx(24.4 / 8) and not record["apportioned"]
    frame = metrics.mode_metrics(ingested.table, timing)
    instant = row(frame, model="Qwen3-VL-8B", variant="direct")
    assert instant["seconds_per_question"] == pytest.approx(3.05) and not instant["time_apportioned"]


def test_seconds_per_question_apportioned_in_a_multi_task_run(tmp_path):
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": right, "cot": right}})
    results = next(tmp_path.rglob("*_results.json"))
    # one generate pass over both tasks: 100 s; the CoT answers hold 9 of every 10 output tokens
    write_timed_results(results, QWEN_8B, {"cait": (8, 80.0), "cait_cot": (8, 720.0)}, elapsed=100.0)
    ingested = ingest(tmp_path)
    timing = run_timing(ingested).set_index("task")
    assert timing.loc["cait", "task_elapsed_s"] == pytest.approx(10.0)
    assert timing.loc["cait_cot", "seconds_per_question"] == pytest.approx(90.0 / 8)
    assert timing["apportioned"].all() and "apportioned by output tokens (80 of 800)" in timing.loc["cait", "note"]
    frame = metrics.mode_metrics(ingested.table, run_timing(ingested))
    assert row(frame, variant="direct")["seconds_per_question"] == pytest.approx(1.25)
    assert row(frame, variant="cot")["time_apportioned"]
    section = markdown(cait_tables(ingested.table, models_frame({"Qwen3-VL-8B": ("Instruct", "~10B")}),
                                           timing=run_timing(ingested)))
    assert "1.250†" in section and "11.250†" in section
    # CAIT Tables 3 and 5 time each question on vLLM: the note says how this Time differs and who timed it
    assert "The paper times each question on vLLM" in section and "Backends: qwen3_vl: Qwen3-VL-8B." in section


def test_runs_without_timing_leave_time_empty_and_say_why(tmp_path):
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": right}})
    write_timed_results(next(tmp_path.rglob("*_results.json")), QWEN_8B, {"cait": (8, 8.0)}, elapsed=None)
    ingested = ingest(tmp_path)
    timing = run_timing(ingested)
    assert math.isnan(row(timing, task="cait")["seconds_per_question"])
    per_mode = metrics.seconds_per_question(ingested.table, timing)
    assert "no throughput.total_elapsed_time" in row(per_mode, variant="direct")["timing_note"]


def test_rows_from_two_runs_sum_their_seconds_and_questions(tmp_path):
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": right}}, timestamp="20250101_120000")
    write_cait_logs(tmp_path, {QWEN_8B: {"swap": right}}, timestamp="20250102_120000")
    for results, seconds in zip(sorted(tmp_path.rglob("*_results.json")), (16.0, 40.0)):
        task = json.loads(results.read_text())["configs"].popitem()[0]
        write_timed_results(results, QWEN_8B, {task: (8, 8.0)}, elapsed=seconds)
    ingested = ingest(tmp_path)
    per_mode = metrics.seconds_per_question(ingested.table, run_timing(ingested)).set_index("variant")
    assert per_mode.loc["direct", "seconds_per_question"] == 2.0 and per_mode.loc["swap", "seconds_per_question"] == 5.0


def test_several_runs_of_one_mode_give_total_seconds_over_total_questions(tmp_path):
    """Two direct runs of one model over disjoint scenes: 2 questions in 10 s and 6 in 6 s make 16 s over
    8 questions (2.0 s), not the mean of the per-run ratios (5 and 1: 3.0 s)."""
    records = cait_records("direct", right)
    for timestamp, part, seconds in (("20250101_120000", records[:2], 10.0), ("20250102_120000", records[2:], 6.0)):
        paths = write_run(tmp_path, QWEN_8B, "cait", part, timestamp=timestamp, drop_response=True)
        write_timed_results(paths.results, QWEN_8B, {"cait": (len(part), 2.0 * len(part))}, elapsed=seconds)
    ingested = ingest(tmp_path)
    assert len(ingested.table) == 8
    per_mode = metrics.seconds_per_question(ingested.table, run_timing(ingested))
    assert row(per_mode, model="Qwen3-VL-8B", variant="direct")["seconds_per_question"] == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------------- report
def test_report_section_lays_out_the_paper_tables(tmp_path):
    write_cait_logs(tmp_path, {
        QWEN_8B: {"direct": by_scene({0: "wrong"}), "swap": right, "cot": right, "structured": right},
        GEMMA_4B: {"direct": always("A"), "cot": by_scene({3: "unsure"})},
        INTERN_8B: {"direct": right, "structured": right},
    })
    table = ingest(tmp_path).table
    models = models_frame({"Gemma-3-4B": ("Instruct", "~3B"), "Qwen3-VL-8B": ("Instruct", "~10B"),
                           "InternVL3.5-8B": ("Thinking", "~10B")})
    reeval_items = pd.DataFrame([
        {"judge": judge, "model": model, "scene": f"s{i}", "category": "Human-Human", "source": source,
         "gold": "A" if i % 2 else "B", "answer": "A", "finish_reason": "stop", "prediction": "A",
         "correct": bool(i % 2), "status": "answered"}
        for judge in ("judge-1", "judge-2") for model, source in (("Qwen3-VL-8B", "description"), (None, "gt_prompt"))
        for i in range(4)])
    tables = {t.name: t for t in cait_tables(table, models, reeval_items=reeval_items)}
    assert list(tables) == ["cait_table03_main", "cait_table05_cot", "cait_table17_structured",
                            "cait_table07_structured_groups", "cait_table16_domains", "cait_table06_domain_groups",
                            "cait_table04_judges", "cait_position_bias"]
    main = tables["cait_table03_main"].frame
    assert main["Model"].tolist() == [metrics.GT_PROMPT_LABEL, "Gemma-3-4B", "Qwen3-VL-8B", "InternVL3.5-8B"]
    assert main.set_index("Model").loc["Qwen3-VL-8B", ["Acc", "LLM-re-Eval Acc"]].tolist() == ["0.875", "0.500"]
    bold = tables["cait_table03_main"].bold.set_index(main["Model"])
    assert bold.loc["Qwen3-VL-8B", "Acc"] and not bold.loc["Gemma-3-4B", "Acc"]  # best Instruct model
    assert tables["cait_table04_judges"].frame.columns.tolist() == ["Group", "Model", "judge-1", "judge-2", "Mean"]
    assert "Gemma-3-4B (CoT) 1/8" in tables["cait_table05_cot"].note
    structured_groups = tables["cait_table07_structured_groups"].frame.set_index("Group")
    assert structured_groups.loc["Instruct", "Acc"] == "1.000 (+12.5)"
    section = markdown(tables.values())
    assert section.count("| Model") >= 6 and "**0.875**" in section


def test_models_missing_from_the_models_frame_are_listed_not_dropped(tmp_path):
    write_cait_logs(tmp_path, {QWEN_8B: {"direct": right}, GEMMA_4B: {"direct": right}})
    tables = cait_tables(ingest(tmp_path).table, models_frame({"Qwen3-VL-8B": ("Instruct", "~10B")}))
    main = tables[0].frame
    assert main["Group"].tolist() == ["Instruct", metrics.UNGROUPED]


def test_no_cait_rows_make_no_section(tmp_path):
    from logfactory import make_records

    write_run(tmp_path, QWEN_8B, "mmmu_val", make_records([True, False]))
    assert cait_tables(ingest(tmp_path).table, models_frame({})) == []


def test_a_model_outside_the_cait_paper_is_shown_with_its_family_and_size(tmp_path):
    write_cait_logs(tmp_path, {"Qwen/Qwen3-VL-2B-Instruct": {"direct": right}, QWEN_8B: {"direct": right}})
    tables = cait_tables(ingest(tmp_path).table, metrics.cait_models_frame(load_registry()))
    shown = tables[0].frame[["Group", "Model", "Param"]].values.tolist()
    assert shown == [["Instruct", "Qwen3-VL-Instruct", "8B"], ["Qwen3-VL", "Qwen3-VL-2B", "2B"]]
