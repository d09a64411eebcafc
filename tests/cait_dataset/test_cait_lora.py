"""cait-lora (cait_dataset/split.py, lora.py, heldout.py): the recorded stratified split, training examples
with the loss on the answer only, LoRA that never touches the vision tower, and the held-out before/after
evaluation through the real lmms-eval CLI, read back as Table 8.

The end-to-end test trains a tiny random-weight Qwen2.5-VL on CPU for a few steps: it shows that the
adapter learns (the training answers' loss falls, the merged model's weights move, the tower's do not)
and that lmms-eval's own qwen2_5_vl wrapper loads the merged folder; a random model's accuracy means
nothing, so Table 8's values are checked on hand-written logs instead.
"""

import json
from collections import Counter

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from logfactory import write_run

from cait_dataset import heldout, lora, split
from cait_dataset.cli import lora_main
from invscale_demo.fixtures import FIXTURE_SCENES, write_cait_fixture
from invscale_demo.tiny_models import ensure_model
from lmms_eval_tasks.benchmarks import BY_TASK
from lmms_eval_tasks import cait
from lmms_eval_tasks.prompts import CAIT_DIRECT
from lmms_eval_tasks.question import DocError
from lmms_eval_tasks.scoring import per_question_record, score
from model_configs import load_registry
from postprocess.logs.ingest import ingest_logs

CATEGORIES = list(cait.CHARACTERISTICS)


def fake_records(counts: dict[str, int]) -> list[dict]:
    return [{"id": f"{category}-{i:03d}", "category": category} for category, n in counts.items() for i in range(n)]


# ---------------------------------------------------------------------------------------------- split
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.fixed_dictionaries({c: st.integers(2, 60) for c in CATEGORIES}), st.integers(0, 10_000))
def test_the_split_is_a_seeded_stratified_partition(counts, seed):
    records = fake_records(counts)
    parts = split.stratified_split(records, 0.6, seed)
    assert set(parts["train"]).isdisjoint(parts["heldout"])
    assert sorted(parts["train"] + parts["heldout"]) == sorted(r["id"] for r in records)
    assert len(parts["train"]) == int(0.6 * len(records))
    category = {r["id"]: r["category"] for r in records}
    trained = Counter(category[i] for i in parts["train"])
    for name, n in counts.items():
        assert 1 <= trained[name] <= n - 1 and abs(trained[name] - 0.6 * n) <= 1  # Table 1's proportions kept
    assert split.stratified_split(records, 0.6, seed) == parts


def test_a_split_that_cannot_be_stratified_says_why():
    with pytest.raises(DocError, match=r"categories \['Bio-StillLife'\] have fewer than 2 scenes"):
        split.stratified_split(fake_records({"Human-Human": 5, "Bio-StillLife": 1}))
    with pytest.raises(DocError, match="cannot split 8 scenes of 4 categories with train fraction 0.9"):
        split.stratified_split(fake_records(dict.fromkeys(CATEGORIES, 2)), 0.9)


def test_the_papers_split_holds_out_160_scenes_as_table_8_implies():
    """Golden (CAIT Table 1, Section 5.2, Table 8): 400 scenes in Table 1's proportions (Human-Human 22.00% +
    14.25%, Human-Animal 22.25% + 14.00%, Animal-Animal 18.00%, Bio-StillLife 9.50%) split 60/40 hold out
    160 scenes, each domain in proportion; every Table 8 accuracy is a whole number of those 160."""
    counts = {"Human-Human": 145, "Human-Animal": 145, "Animal-Animal": 72, "Bio-StillLife": 38}
    assert [round(100 * n / 400, 2) for n in counts.values()] == [22.00 + 14.25, 22.25 + 14.00, 18.00, 9.50]
    records = fake_records(counts)
    heldout = split.stratified_split(records, split.PAPER_TRAIN_FRACTION, seed=0)["heldout"]
    assert len(heldout) == 160
    per_domain = {category: sum(scene.startswith(category) for scene in heldout) for category in counts}
    assert all(abs(per_domain[c] - 0.4 * n) < 1 for c, n in counts.items()), per_domain
    for accuracy in (0.425, 0.575, 0.400, 0.581):  # Qwen2.5-VL 7B, 7B-LoRA, 3B, 3B-LoRA
        assert any(round(right / 160, 3) == accuracy for right in range(161)), accuracy


def test_the_split_is_written_as_two_cait_folders_and_a_prepared_heldout_dataset(tmp_path):
    import datasets

    summary = split.write_split(write_cait_fixture(tmp_path / "cait"), tmp_path / "work", seed=3)
    work = tmp_path / "work"
    assert json.loads((work / "split.json").read_text()) == summary
    assert summary["scenes"] == {"train": 4, "heldout": 4}
    assert all(counts == {"train": 1, "heldout": 1} for counts in summary["per_category"].values())
    for part in split.PARTS:
        assert sorted(r["id"] for r in cait.read_folder(work / part)) == summary[part]
    prepared = datasets.load_from_disk(str(work / "heldout_dataset"))["test"]
    assert sorted(prepared["id"]) == summary["heldout"]


# ---------------------------------------------------------------------------------------------- examples
@pytest.fixture(scope="module")
def tiny_qwen2_5_vl(tmp_path_factory):
    return ensure_model(tmp_path_factory.mktemp("models") / "tiny-qwen2_5_vl", "qwen2_5_vl")


def test_training_examples_are_the_direct_task_prompt_with_loss_on_the_answer_only(tmp_path, tiny_qwen2_5_vl):
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_qwen2_5_vl)
    records = cait.read_folder(write_cait_fixture(tmp_path))
    questions = lora.training_questions(records)
    assert Counter(q.gold for q in questions) == {"A": 4, "B": 4}  # balanced as the task balances them
    for question, record in zip(questions, records):
        example = lora.build_example(processor, question, record["image"])
        answer = example["labels"][0] != lora.IGNORE_INDEX
        assert processor.tokenizer.decode(example["input_ids"][0][answer]) == f"{question.gold}<|im_end|>"
        assert answer.sum() == 2 and answer[-2:].all()  # the letter and the end of the turn, at the end
        prompt = processor.tokenizer.decode(example["input_ids"][0][~answer])
        a, b = question.options
        assert CAIT_DIRECT.format(a=a, b=b) in prompt and "<|image_pad|>" in prompt
        assert example["attention_mask"].shape == example["input_ids"].shape
        assert example["pixel_values"].shape[0] == example["image_grid_thw"].prod()


def test_collate_pads_text_on_the_right_and_joins_image_patches():
    import torch

    short = {"input_ids": torch.tensor([[5, 6]]), "attention_mask": torch.tensor([[1, 1]]),
             "labels": torch.tensor([[-100, 6]]), "pixel_values": torch.ones(4, 3), "image_grid_thw": torch.tensor([[1, 2, 2]])}
    long = {"input_ids": torch.tensor([[5, 6, 7]]), "attention_mask": torch.tensor([[1, 1, 1]]),
            "labels": torch.tensor([[-100, -100, 7]]), "pixel_values": torch.zeros(8, 3),
            "image_grid_thw": torch.tensor([[1, 2, 4]])}
    batch = lora.collate([short, long], pad_token_id=0)
    assert batch["input_ids"].tolist() == [[5, 6, 0], [5, 6, 7]]
    assert batch["attention_mask"].tolist() == [[1, 1, 0], [1, 1, 1]]
    assert batch["labels"].tolist() == [[-100, 6, -100], [-100, -100, 7]]
    assert batch["pixel_values"].shape == (12, 3) and batch["image_grid_thw"].shape == (2, 3)


def test_lora_targets_only_the_language_model_and_refuses_a_trainable_tower(tiny_qwen2_5_vl, monkeypatch):
    from transformers import AutoModelForImageTextToText

    model = lora.lora_model(AutoModelForImageTextToText.from_pretrained(tiny_qwen2_5_vl), lora.LoraSettings())
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name and ".language_model." in name for name in trainable)
    assert {name.split(".lora_")[0].rsplit(".", 1)[1] for name in trainable} == {
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    monkeypatch.setattr(lora, "LORA_TARGETS", r".*\.(qkv|q_proj)")  # the tower's attention too
    with pytest.raises(RuntimeError, match="trainable vision parameters: .*visual"):
        lora.lora_model(AutoModelForImageTextToText.from_pretrained(tiny_qwen2_5_vl), lora.LoraSettings())


# ---------------------------------------------------------------------------------------------- Table 8
def run_records(respond, keep=None) -> list[dict]:
    """The cait task's per_question records for the fixture scenes; respond(question) -> response."""
    rows = []
    for i, (category, characteristic, verb, common, uncommon, style) in enumerate(FIXTURE_SCENES):
        rows.append({"id": f"cait_{i:03d}", "category": category, "characteristic": characteristic, "verb": verb,
                     "common_text": common, "uncommon_text": uncommon, "style": style, "gt_prompt": uncommon})
    questions = [cait.cait(row, i, BY_TASK["cait"]) for i, row in enumerate(rows)]
    cait.balance_answer_positions(questions)
    chosen = [q for i, q in enumerate(questions) if keep is None or i in keep]
    return [{**per_question_record(q, score(q, respond(q))), "response": respond(q)} for q in chosen]


def test_table_8_compares_the_scenes_both_models_answered(tmp_path):
    base = "Qwen/Qwen2.5-VL-3B-Instruct"
    base_key, lora_key, merged, entries = lora.registry_entries(load_registry(), base, tmp_path / "work")
    assert (base_key, lora_key) == ("Qwen2.5-VL-Instruct-3B", "Qwen2.5-VL-Instruct-3B-LoRA")
    assert [m["name"] for m in entries["cait_models"]] == [lora_key]  # the registry knows the base already
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(entries))
    write_run(tmp_path / "runs", base, "cait", run_records(lambda q: "A"))
    write_run(tmp_path / "runs", str(merged.resolve()), "cait", run_records(lambda q: q.gold, keep=range(7)))
    table = ingest_logs([tmp_path / "runs"], load_registry(extra=[tmp_path / "models.yaml"]), workers=1).table
    numbers = heldout.lora_table(table, [(base_key, lora_key)]).iloc[0]

    golds = [r["gold"] for r in run_records(lambda q: "A", keep=range(7))]
    n_a, n_b = golds.count("A"), golds.count("B")
    assert (numbers["questions"], numbers["only_before"], numbers["only_after"]) == (7, 1, 0)
    assert numbers["accuracy_before"] == pytest.approx(n_a / 7)  # "always A" is right on the A scenes
    assert numbers["macro_f1_before"] == pytest.approx(n_a / (2 * n_a + n_b))  # F1(A) = 2a/(2a+b), F1(B) = 0
    assert (numbers["accuracy_after"], numbers["macro_f1_after"]) == (1.0, 1.0)
    assert numbers["accuracy_change"] == pytest.approx(100 * (1 - n_a / 7))
    display = heldout.lora_display(heldout.lora_table(table, [(base_key, lora_key)]))
    assert list(display.frame["Model"]) == [base_key, lora_key]
    assert display.frame["Accuracy"][1] == f"1.000 (↑{100 * (1 - n_a / 7):.1f})"
    assert "Left out: 1 scenes only Qwen2.5-VL-Instruct-3B answered" in display.note
    with pytest.raises(ValueError, match=r"no CAIT direct rows for model 'Other-LoRA' \(after\)"):
        heldout.lora_table(table, [(base_key, "Other-LoRA")])


def test_held_out_runs_use_the_registry_launch_settings_of_a_known_base():
    wrapper, args = heldout.model_arguments("Qwen/Qwen2.5-VL-7B-Instruct", ["Qwen/Qwen2.5-VL-7B-Instruct", "/w/m"],
                                            model_args="device_map=cpu")
    assert wrapper == "qwen2_5_vl"
    assert args == ["pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_pixels=1605632,attn_implementation=sdpa,device_map=cpu",
                    "pretrained=/w/m,max_pixels=1605632,attn_implementation=sdpa,device_map=cpu"]
    with pytest.raises(ValueError, match="name the lmms-eval wrapper"):
        heldout.model_arguments("/local/model", ["/local/model"])


# ---------------------------------------------------------------------------------------------- end to end
def answer_losses(model_path, processor, records) -> list[float]:
    import torch
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(model_path).eval()
    images = {r["id"]: r["image"] for r in records}
    with torch.no_grad():
        return [float(model(**lora.build_example(processor, q, images[q.question_id])).loss)
                for q in lora.training_questions(records)]


@pytest.mark.cli
def test_train_merge_and_evaluate_before_and_after_through_lmms_eval(tmp_path, tiny_qwen2_5_vl):
    from safetensors.torch import load_file
    from transformers import AutoProcessor

    work = tmp_path / "work"
    assert lora_main(["split", str(write_cait_fixture(tmp_path / "cait")), str(work)]) == 0
    assert lora_main(["train", str(work), "--base", str(tiny_qwen2_5_vl), "--max-steps", "24",
                      "--gradient-accumulation", "1", "--learning-rate", "3e-3", "--warmup-ratio", "0"]) == 0
    manifest = lora.read_manifest(work)
    assert (manifest["base_key"], manifest["lora_key"], manifest["global_steps"]) == (
        "tiny-qwen2_5_vl", "tiny-qwen2_5_vl-LoRA", 24)

    adapter = load_file(work / "adapter" / "adapter_model.safetensors")
    assert adapter and not any(lora.is_vision_parameter(name) for name in adapter)
    assert any(tensor.abs().sum() > 0 for name, tensor in adapter.items() if "lora_B" in name)  # B starts at zero
    before = load_file(next(tiny_qwen2_5_vl.glob("*.safetensors")))
    after = load_file(next((work / manifest["lora_key"]).glob("*.safetensors")))
    assert set(before) == set(after)
    vision = [name for name in before if lora.is_vision_parameter(name)]
    assert vision and all((before[name] == after[name]).all() for name in vision)
    assert any(not (before[name] == after[name]).all() for name in before if name.endswith("q_proj.weight"))

    processor = AutoProcessor.from_pretrained(manifest["merged"])
    records = cait.read_folder(work / "train")
    assert sum(answer_losses(manifest["merged"], processor, records)) < sum(
        answer_losses(tiny_qwen2_5_vl, processor, records))  # the adapter learnt the training answers

    assert lora_main(["evaluate", str(work), "--wrapper", "qwen2_5_vl", "--model-args", "device_map=cpu",
                      "--device", "cpu", "--limit", "3", "--gen-kwargs", "max_new_tokens=1"]) == 0
    for key, checkpoint in ((manifest["base_key"], str(tiny_qwen2_5_vl)), (manifest["lora_key"], manifest["merged"])):
        results = json.loads(next((work / "runs" / key).rglob("*_results.json")).read_text())
        assert results["config"]["model"] == "qwen2_5_vl" and f"pretrained={checkpoint}" in results["config"]["model_args"]
        assert results["n-samples"]["cait"]["effective"] == 3
    finished = sorted(p.stat().st_mtime_ns for p in (work / "runs").rglob("*_results.json"))
    assert heldout.evaluate(work, "qwen2_5_vl", "device_map=cpu", device="cpu", limit=3)  # complete: not rerun
    assert sorted(p.stat().st_mtime_ns for p in (work / "runs").rglob("*_results.json")) == finished
    assert lora_main(["report", str(work)]) == 0
    numbers = json.loads(heldout.lora_table(
        ingest_logs([work / "runs"], load_registry(extra=[work / lora.EXTRA_MODELS]), workers=1).table,
        [(manifest["base_key"], manifest["lora_key"])]).to_json(orient="records"))[0]
    assert (numbers["questions"], numbers["only_before"], numbers["only_after"]) == (3, 0, 0)
    heldout_ids = set(json.loads((work / "split.json").read_text())["heldout"])
    scenes = {json.loads(line)["per_question"]["question_id"]
              for line in next((work / "runs" / manifest["lora_key"]).rglob("*_samples_cait.jsonl")).read_text().splitlines()}
    assert scenes <= heldout_ids  # evaluated on held-out scenes only
    assert "paper Table 8" in (work / "table08_lora.md").read_text()
