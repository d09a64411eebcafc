"""LoRA fine-tuning on CAIT's training part with the vision tower frozen (CAIT paper, Section 5.2, Table 8).

What is trained: LoRA adapters (peft) on the language model's attention and MLP projections
(q/k/v/o, gate/up/down) and nothing else; every parameter of the vision tower (for Qwen2.5-VL
`model.visual`, its patch merger included) stays frozen, which `train` asserts before training.

Examples are the questions the `cait` task asks: the direct prompt (lmms_eval_tasks.prompts.CAIT_DIRECT)
with the answer positions balanced as the task balances them (balance_answer_positions over the
training part), the image before the text in one user turn, rendered by the checkpoint's chat template,
and images resized by qwen_vl_utils with the processor's pixel budget, as lmms-eval's qwen2_5_vl wrapper
does. The target is the assistant turn: the answer letter and the template's end-of-turn token (so the
model learns to stop after the letter); the loss covers only those tokens.

Hyper-parameters: the paper names only LoRA and the frozen vision encoder. Ours (all options):
rank 16, alpha 32, dropout 0.05, learning rate 1e-4 with cosine decay after a 10% warm-up, 3 epochs,
batch 1 with 8 accumulation steps (effective 8), AdamW without weight decay, seed 0; bfloat16 on a GPU,
float32 on CPU. Training uses the standard Hugging Face Trainer.

Outputs under the work folder (after `cait-lora split`):
  adapter/         the LoRA adapter (peft format) and the processor
  <LoRA key>/      the merged model and processor, loadable by lmms-eval's qwen2_5_vl wrapper
  lora.json        base model, keys, settings, the trainer's log, parameter counts
  models.yaml      registry entries (postprocess --extra-models) for the merged model, and for the base
                   when the registry does not know it, so the held-out runs can be ingested
Supported: Qwen2.5-VL checkpoints (tested on a tiny random-weight one). Other image-text models whose
language model sits under `language_model` load the same way, but the image resizing and the evaluation
wrapper are Qwen's; they are untested.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from lmms_eval_tasks import cait
from lmms_eval_tasks.prompts import build_prompt
from lmms_eval_tasks.question import Question

from .split import read_split

DEFAULT_BASE = "Qwen/Qwen2.5-VL-3B-Instruct"
VISION_MODULES = ("visual", "vision_tower", "vision_model")  # Qwen-VL, InternVL / LLaVA, SigLIP-style names
LORA_TARGETS = r".*\blanguage_model\b.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"
IGNORE_INDEX = -100
MANIFEST = "lora.json"
EXTRA_MODELS = "models.yaml"
# lmms-eval qwen2_5_vl wrapper's image budget (its defaults, and the registry's max_pixels for Qwen2.5-VL)
WRAPPER_MIN_PIXELS = 256 * 28 * 28
WRAPPER_MAX_PIXELS = 1605632


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    learning_rate: float = 1e-4
    epochs: float = 3.0
    max_steps: int = -1  # > 0 overrides epochs
    batch_size: int = 1
    gradient_accumulation: int = 8
    warmup_ratio: float = 0.1
    scheduler: str = "cosine"
    weight_decay: float = 0.0
    seed: int = 0
    min_pixels: int = WRAPPER_MIN_PIXELS
    max_pixels: int = WRAPPER_MAX_PIXELS
    gradient_checkpointing: bool = False
    device: str | None = None  # cpu or cuda; None: cuda when available


def is_vision_parameter(name: str) -> bool:
    return any(part in VISION_MODULES for part in name.split("."))


# ---------------------------------------------------------------------------------------------- examples
def training_questions(records: list[dict]) -> list[Question]:
    """The cait task's direct questions for these records, answer positions balanced as the task does."""
    from dataclasses import replace

    from lmms_eval_tasks.benchmarks import BY_TASK

    spec = replace(BY_TASK["cait"], split="train")
    questions = [cait.cait(record, position, spec) for position, record in enumerate(records)]
    cait.balance_answer_positions(questions)
    return questions


def build_example(processor, question: Question, image_path: str) -> dict:
    """Model inputs for one question with labels on the assistant answer only (module docstring).

    Prompt and answer are tokenized apart and joined, so the boundary is exact whatever the tokenizer."""
    import torch
    from PIL import Image
    from qwen_vl_utils import process_vision_info

    image = Image.open(image_path).convert("RGB")
    user = {"role": "user", "content": [{"type": "image", "image": image},
                                        {"type": "text", "text": build_prompt(question, "direct")}]}
    prompt = processor.apply_chat_template([user], tokenize=False, add_generation_prompt=True)
    conversation = processor.apply_chat_template(
        [user, {"role": "assistant", "content": [{"type": "text", "text": question.gold}]}], tokenize=False)
    if not conversation.startswith(prompt):
        raise ValueError("the chat template renders the conversation so that the prompt is not its prefix; "
                         "the answer tokens cannot be located")
    answer = conversation[len(prompt):].rstrip()  # the letter and the end-of-turn token, not the turn separator
    images, _ = process_vision_info([[user]])
    inputs = processor(text=[prompt], images=images, return_tensors="pt")
    answer_ids = torch.tensor([processor.tokenizer(answer, add_special_tokens=False)["input_ids"]])
    length = inputs["input_ids"].shape[1]
    example = {}
    for key, value in inputs.items():
        if torch.is_tensor(value) and value.dim() == 2 and value.shape == (1, length):  # per-token fields
            tail = answer_ids if key == "input_ids" else (torch.ones_like(answer_ids) if key == "attention_mask"
                                                          else torch.zeros_like(answer_ids))
            example[key] = torch.cat([value, tail.to(value.dtype)], dim=1)
        else:
            example[key] = value
    example["labels"] = torch.cat([torch.full((1, length), IGNORE_INDEX), answer_ids], dim=1)
    return example


class CaitTrainingSet:
    """A torch-style dataset of training examples, built when read (images stay on disk)."""

    def __init__(self, processor, records: list[dict]):
        self.processor = processor
        self.questions = training_questions(records)
        self.images = {record["id"]: record["image"] for record in records}

    def __len__(self) -> int:
        return len(self.questions)

    def __getitem__(self, index: int) -> dict:
        question = self.questions[index]
        return build_example(self.processor, question, self.images[question.question_id])


def collate(examples: list[dict], pad_token_id: int) -> dict:
    """Right-pad the per-token fields (labels with IGNORE_INDEX, the mask with 0) and join the image fields
    along their first axis (Qwen's flattened patches and grid rows; other models' image batches)."""
    import torch

    width = max(example["input_ids"].shape[1] for example in examples)
    pad_values = {"input_ids": pad_token_id, "labels": IGNORE_INDEX}
    batch = {}
    for key in examples[0]:
        values = [example[key] for example in examples]
        if all(v.dim() == 2 and v.shape == example["input_ids"].shape for v, example in zip(values, examples)):
            batch[key] = torch.cat([torch.nn.functional.pad(v, (0, width - v.shape[1]), value=pad_values.get(key, 0))
                                    for v in values])
        else:
            batch[key] = torch.cat(values)
    return batch


# ---------------------------------------------------------------------------------------------- training
def _device_and_dtype(settings: LoraSettings):
    import torch

    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    return device, (torch.bfloat16 if device.startswith("cuda") else torch.float32)


def lora_model(base, settings: LoraSettings):
    """The base model with LoRA adapters on the language model only; raises if any vision parameter trains."""
    from peft import LoraConfig, get_peft_model

    base.requires_grad_(False)
    config = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                        target_modules=LORA_TARGETS, bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(base, config)
    trainable = [name for name, parameter in model.named_parameters() if parameter.requires_grad]
    vision = [name for name in trainable if is_vision_parameter(name)]
    if vision or not trainable:
        raise RuntimeError(f"LoRA must train only language-model adapters; trainable vision parameters: {vision[:5]}"
                           if vision else f"no module matched the LoRA targets {LORA_TARGETS}")
    return model


def registry_entries(registry, base: str, work: Path) -> tuple[str, str, Path, dict]:
    """(base key, LoRA key, merged model folder, extra-models YAML content). The merged model is a CAIT
    Instruct model "<base key>-LoRA" in WORK/<LoRA key>, resolved by that folder; the base is the registry's
    model when the registry resolves it, else it gets an entry named after its folder."""
    spec = registry.resolve(base)
    models = []
    if spec is None:
        base_key = Path(base).name
        models.append({"name": base_key, "group": "open_instruct", "params": None, "hf_id": None,
                       "aliases": [str(Path(base).resolve()) if Path(base).exists() else base]})
    else:
        base_key = spec.key
    lora_key = f"{base_key}-LoRA"
    merged = Path(work) / lora_key
    models.append({"name": lora_key, "group": "open_instruct", "params": None, "hf_id": None,
                   "aliases": [str(merged.resolve())]})
    return base_key, lora_key, merged, {"cait_models": models}


def train(work: Path, base: str = DEFAULT_BASE, settings: LoraSettings = LoraSettings()) -> dict:
    """Train on WORK/train, save the adapter, merge it, register the models; returns the manifest."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor, Trainer, TrainingArguments

    from model_configs import load_registry

    work = Path(work)
    if not 0 <= settings.warmup_ratio < 1:  # the Trainer reads 1 and more as a number of steps
        raise ValueError(f"warmup ratio must be in [0, 1), got {settings.warmup_ratio}")
    read_split(work)
    records = cait.read_folder(work / "train")
    device, dtype = _device_and_dtype(settings)
    processor = AutoProcessor.from_pretrained(base, min_pixels=settings.min_pixels, max_pixels=settings.max_pixels)
    base_model = AutoModelForImageTextToText.from_pretrained(base, dtype=dtype)
    model = lora_model(base_model, settings)
    if settings.gradient_checkpointing:
        model.enable_input_require_grads()
    frozen_vision = {name: p.detach().to("cpu", copy=True) for name, p in model.named_parameters()
                     if is_vision_parameter(name)}
    pad_token_id = processor.tokenizer.pad_token_id
    if pad_token_id is None:
        pad_token_id = processor.tokenizer.eos_token_id
    arguments = TrainingArguments(
        output_dir=str(work / "trainer"), per_device_train_batch_size=settings.batch_size,
        gradient_accumulation_steps=settings.gradient_accumulation, num_train_epochs=settings.epochs,
        max_steps=settings.max_steps, learning_rate=settings.learning_rate, lr_scheduler_type=settings.scheduler,
        warmup_steps=settings.warmup_ratio, weight_decay=settings.weight_decay, seed=settings.seed,
        logging_steps=1, save_strategy="no", report_to=[], remove_unused_columns=False,
        bf16=dtype == torch.bfloat16, use_cpu=device == "cpu", dataloader_num_workers=0,
        **({"gradient_checkpointing": True} if settings.gradient_checkpointing else {}))
    trainer = Trainer(model=model, args=arguments, train_dataset=CaitTrainingSet(processor, records),
                      data_collator=lambda examples: collate(examples, pad_token_id))
    result = trainer.train()
    moved = [name for name, p in model.named_parameters() if name in frozen_vision
             and not torch.equal(p.detach().cpu(), frozen_vision[name].cpu())]
    if moved:
        raise RuntimeError(f"vision parameters changed during training: {moved[:5]}")

    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    model.save_pretrained(work / "adapter")
    processor.save_pretrained(work / "adapter")
    base_key, lora_key, merged_path, entries = registry_entries(load_registry(), base, work)
    model.merge_and_unload().save_pretrained(merged_path)
    processor.save_pretrained(merged_path)
    (work / EXTRA_MODELS).write_text("# written by `cait-lora train`: pass to postprocess as --extra-models\n"
                                     + yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
    manifest = {
        "base": base, "base_key": base_key, "merged": str(merged_path.resolve()), "lora_key": lora_key,
        "adapter": str((work / "adapter").resolve()), "settings": asdict(settings), "device": device,
        "dtype": str(dtype).removeprefix("torch."), "train_examples": len(records), "trainable_parameters": trainable,
        "frozen_vision_parameters": sum(p.numel() for p in frozen_vision.values()),
        "global_steps": result.global_step, "train_loss": result.training_loss,
        "log_history": trainer.state.log_history,
    }
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def read_manifest(work: Path) -> dict:
    path = Path(work) / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"{path}: no trained model here; run `cait-lora train {work}` first")
    return json.loads(path.read_text(encoding="utf-8"))


__all__ = ["DEFAULT_BASE", "LORA_TARGETS", "LoraSettings", "build_example", "collate", "is_vision_parameter",
           "lora_model", "read_manifest", "registry_entries", "train", "training_questions"]
