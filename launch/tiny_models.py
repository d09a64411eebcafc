"""Tiny random-weight VLMs of the real architectures, built offline from transformers configs with a
locally trained tokenizer. They load through lmms-eval's real model wrappers, so the task layer and
the launchers are exercised end to end without the hub.

Their weights are random, so their answers are noise; the output rows of the answer tokens (option
letters A-D, Yes, No) are rebuilt so that a one-token answer is almost always one of those and depends
on the prompt (see _favour_answer_tokens). Their answers parse, differ between models and questions,
and are right at about chance level, often with a favourite letter: enough for the analysis to find
flips (chance ones, and position-bias ones that the option-order controls expose), and no more.

  python -m launch.tiny_models OUT_DIR [--family qwen3_vl] [--size small]
"""

from __future__ import annotations

import argparse
from pathlib import Path

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                 "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
LLAVA_SPECIALS = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]
TRAINING_TEXT = [
    "You are a helpful assistant. What colour is the square? Answer with one word.",
    "Please select the correct answer from the options above. Respond with only the letter of the correct option.",
    "red green blue yellow black white A B C D E Yes No 0 1 2 3 4 5 6 7 8 9 Answer: The answer is",
    "USER: ASSISTANT: Option stage image choice first second third fourth",
] * 20
QWEN_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in c %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': ' }}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] + ' ' }}{% else %}"
    "{% for c in message['content'] if c['type'] == 'image' %}{{ '<image>\n' }}{% endfor %}"
    "{% for c in message['content'] if c['type'] == 'text' %}{{ c['text'] + ' ' }}{% endfor %}"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)
ANSWER_TOKENS = ["A", "B", "C", "D", "Yes", "No"]
ANSWER_LOGIT_SCALE = 80.0
# hidden size and layers per size label: three sizes so a demo family has pairs to compare
SIZES = {"small": (32, 1), "medium": (64, 2), "large": (96, 3)}


def _bpe_tokenizer(specials: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(TRAINING_TEXT, trainer)
    return tokenizer


def _text_config(vocab: int, size: str) -> dict:
    hidden, layers = SIZES[size]
    return dict(vocab_size=((vocab + 63) // 64) * 64, hidden_size=hidden, intermediate_size=2 * hidden,
                num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)


def build_qwen3_vl(out: Path, size: str = "small", seed: int = 0) -> Path:
    """Qwen3-VL (dense); loads with lmms-eval's `qwen3_vl` wrapper (needs torchvision for the video processor)."""
    import torch
    import transformers as T

    torch.manual_seed(seed)
    tok = T.Qwen2TokenizerFast(tokenizer_object=_bpe_tokenizer(QWEN_SPECIALS), bos_token=None, eos_token="<|im_end|>",
                               pad_token="<|endoftext|>", unk_token=None, additional_special_tokens=QWEN_SPECIALS[1:])
    tok.chat_template = QWEN_CHAT_TEMPLATE
    ids = {t: tok.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}
    processor = T.Qwen3VLProcessor(image_processor=T.Qwen2VLImageProcessor(patch_size=16), tokenizer=tok,
                                   video_processor=T.Qwen3VLVideoProcessor(patch_size=16), chat_template=QWEN_CHAT_TEMPLATE)
    text = _text_config(len(tok), size)
    head_dim = 16
    text.update(bos_token_id=0, eos_token_id=ids["<|im_end|>"], pad_token_id=0, head_dim=head_dim,
                rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True})
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=text["hidden_size"],
                  patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=256,
                  deepstack_visual_indexes=[0])
    config = T.Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                             video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                             vision_end_token_id=ids["<|vision_end|>"])
    model = T.Qwen3VLForConditionalGeneration(config)
    return _save(model, processor, tok, out, eos=ids["<|im_end|>"], pad=ids["<|endoftext|>"])


def build_llava(out: Path, size: str = "small", seed: int = 0) -> Path:
    """LLaVA (CLIP + Llama); loads with lmms-eval's `llava_hf` chat wrapper."""
    import torch
    import transformers as T

    torch.manual_seed(seed)
    tok = T.PreTrainedTokenizerFast(tokenizer_object=_bpe_tokenizer(LLAVA_SPECIALS), bos_token="<s>", eos_token="</s>",
                                    unk_token="<unk>", pad_token="<pad>", extra_special_tokens={"image_token": "<image>"})
    tok.chat_template = LLAVA_CHAT_TEMPLATE
    ids = {t: tok.convert_tokens_to_ids(t) for t in LLAVA_SPECIALS}
    image_processor = T.CLIPImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = T.LlavaProcessor(image_processor=image_processor, tokenizer=tok, patch_size=14, chat_template=LLAVA_CHAT_TEMPLATE,
                                 vision_feature_select_strategy="default", num_additional_image_tokens=1)
    config = T.LlavaConfig(
        vision_config=dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=2, image_size=28, patch_size=14, projection_dim=32),
        text_config=dict(model_type="llama", **_text_config(len(tok), size), bos_token_id=1, eos_token_id=2, pad_token_id=3),
        image_token_index=ids["<image>"], image_seq_length=4)
    model = T.LlavaForConditionalGeneration(config)
    return _save(model, processor, tok, out, eos=ids["</s>"], pad=ids["<pad>"])


CALIBRATION_QUESTIONS = [f"Question {i}: which stage follows stage {i}? A. red B. green C. blue D. yellow" for i in range(16)]


def _favour_answer_tokens(model, tokenizer) -> None:
    """Make the answer tokens win the first generated position, and win it by input.

    A random network's state at the answer position is mostly one shared direction, so scaled-up
    answer rows would give every prompt the same answer. The shared direction is measured on a few
    chat prompts and projected out of the answer rows, which are then set to one large norm: the
    answer is decided by what differs between prompts.
    """
    import torch

    ids = []
    for word in ANSWER_TOKENS:
        encoded = tokenizer.encode(word, add_special_tokens=False)
        if len(encoded) != 1:
            raise ValueError(f"tiny tokenizer splits answer token {word!r} into {encoded}")
        ids.append(encoded[0])
    head = model.get_output_embeddings()
    states = []
    hook = head.register_forward_pre_hook(lambda module, inputs: states.append(inputs[0][0, -1].detach()))
    with torch.no_grad():
        for question in CALIBRATION_QUESTIONS:
            text = tokenizer.apply_chat_template([{"role": "user", "content": question}], tokenize=False,
                                                 add_generation_prompt=True)
            model(input_ids=tokenizer(text, return_tensors="pt").input_ids)
        hook.remove()
        shared = torch.stack(states).mean(0)
        shared = shared / shared.norm()
        rows = head.weight[ids]
        rows = rows - (rows @ shared)[:, None] * shared[None, :]
        head.weight[ids] = rows / rows.norm(dim=1, keepdim=True) * head.weight.norm(dim=1).mean() * ANSWER_LOGIT_SCALE


def _save(model, processor, tokenizer, out: Path, eos: int, pad: int) -> Path:
    out = Path(out)
    _favour_answer_tokens(model, tokenizer)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = eos, pad
    model.eval().save_pretrained(out)
    processor.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


BUILDERS = {"qwen3_vl": build_qwen3_vl, "llava_hf": build_llava}


def ensure_model(out: Path, family: str, size: str = "small", seed: int = 0) -> Path:
    """Build the model unless a complete one is already there (idempotent)."""
    out = Path(out)
    if not (out / "config.json").exists() or not any(out.glob("*.safetensors")):
        BUILDERS[family](out, size=size, seed=seed)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--family", choices=sorted(BUILDERS), default="qwen3_vl")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(ensure_model(args.out, args.family, args.size, args.seed))


if __name__ == "__main__":
    main()
