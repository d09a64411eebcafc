"""Tiny random-weight VLMs of the real architectures, built offline from transformers configs with a
locally trained tokenizer. They load through lmms-eval's real model wrappers, so the task layer and
the launchers are exercised end to end without the hub.

Their weights are random, so their answers are noise; the output rows of the answer tokens (option
letters A-D, Yes, No) are scaled up so that a one-token answer is almost always one of those. A random
network barely tells its inputs apart at the answer position, so each model mostly repeats the token
its seed favours: its accuracy is that of a position-biased guesser, and the flips between two tiny
models come from their different favourite letters -- exactly the artefact the option-order controls
of the analysis are there to expose.

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
ANSWER_LOGIT_SCALE = 40.0
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


def _favour_answer_tokens(model, tokenizer) -> None:
    import torch

    ids = []
    for word in ANSWER_TOKENS:
        encoded = tokenizer.encode(word, add_special_tokens=False)
        if len(encoded) != 1:
            raise ValueError(f"tiny tokenizer splits answer token {word!r} into {encoded}")
        ids.append(encoded[0])
    with torch.no_grad():
        model.get_output_embeddings().weight[ids] *= ANSWER_LOGIT_SCALE


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
