r"""Tiny random-weight VLMs of the real architectures, built offline from transformers configs with a
locally trained tokenizer. They load through lmms-eval's real model wrappers, so the task layer and
the launchers are exercised end to end without the hub.

BUILDERS is keyed by the `--model` name of the lmms-eval wrapper that runs the model:

  key          builder                   model class                              wrapper
  qwen3_vl     build_qwen3_vl            Qwen3VLForConditionalGeneration          lmms-eval qwen3_vl (chat)
               (folder matching A\d+B)   Qwen3VLMoeForConditionalGeneration       lmms-eval qwen3_vl (chat)
  qwen2_5_vl   build_qwen2_5_vl          Qwen2_5_VLForConditionalGeneration       lmms-eval qwen2_5_vl (chat; the CAIT
                                                                                  LoRA study's base model)
  internvl_hf  build_internvl            InternVLForConditionalGeneration         lmms-eval internvl_hf (chat)
  gemma3       build_gemma3              Gemma3ForConditionalGeneration           lmms-eval gemma3 (simple)
  molmo2       build_molmo2              Molmo2ForConditionalGeneration           lmms_eval_models.molmo2 (chat,
                                                                                  our entry point)
  llava_hf     build_llava               LlavaForConditionalGeneration            lmms-eval llava_hf (chat)

lmms-eval's qwen3_vl wrapper loads the MoE class exactly when the model path matches `A\d+B`, so the
qwen3_vl builder applies the same rule to its output path: name the folder like `tiny-qwen3-vl-30B-A3B`
to get the MoE model. Every family builds at every size in SIZES (the text model's width and depth; the
vision towers stay minimal).

Their weights are random, so their answers are noise; the output rows of the answer tokens (option
letters A-D, Yes, No) are rebuilt so that a one-token answer is almost always one of those and depends
on the prompt (see _favour_answer_tokens), for every family. Their answers parse, differ between models
and questions, and are right at about chance level, often with a favourite letter: enough for the
analysis to find flips (chance ones, and position-bias ones that the option-order controls expose), and
no more.

  python -m invscale_demo.tiny_models OUT_DIR [--family qwen3_vl] [--size small]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                 "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
LLAVA_SPECIALS = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]
INTERNVL_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
GEMMA3_SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
                   "<end_of_image>", "<image_soft_token>"]
# Molmo2Processor looks every one of these up by name
MOLMO2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|image|>", "<|video|>", "<im_start>", "<im_end>",
                   "<im_patch>", "<im_col>", "<low_res_im_start>", "<frame_start>", "<frame_end>", "<im_low>"]
TRAINING_TEXT = [
    "You are a helpful assistant. What colour is the square? Answer with one word.",
    "Please select the correct answer from the options above. Respond with only the letter of the correct option.",
    "red green blue yellow black white A B C D E Yes No 0 1 2 3 4 5 6 7 8 9 Answer: The answer is",
    "USER: ASSISTANT: Option stage image choice first second third fourth",
] * 20


def _chatml_template(image: str, video: str) -> str:
    """A ChatML template (Qwen and InternVL) that renders each image or video item as the given placeholder."""
    return (
        "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
        "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
        "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}"
        f"{{% for c in message['content'] %}}{{% if c['type'] == 'image' %}}{image}"
        f"{{% elif c['type'] == 'video' %}}{video}"
        "{% elif 'text' in c %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


QWEN_CHAT_TEMPLATE = _chatml_template("<|vision_start|><|image_pad|><|vision_end|>",
                                      "<|vision_start|><|video_pad|><|vision_end|>")
INTERNVL_CHAT_TEMPLATE = _chatml_template("<IMG_CONTEXT>\n", "<video>\n")
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': ' }}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] + ' ' }}{% else %}"
    "{% for c in message['content'] if c['type'] == 'image' %}{{ '<image>\n' }}{% endfor %}"
    "{% for c in message['content'] if c['type'] == 'text' %}{{ c['text'] + ' ' }}{% endfor %}"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)
# Gemma 3's layout: no system turn (a system message opens the first user turn), the assistant is `model`.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}{% set ns = namespace(system='') %}"
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{% set ns.system = (message['content'] if message['content'] is string else message['content'][0]['text']) + '\n\n' %}"
    "{% else %}<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['role'] == 'user' %}{{ ns.system }}{% set ns.system = '' %}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'image' %}<start_of_image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
# Molmo2's layout: every image first (numbered when there are several), then user/assistant turns and
# no system turn; the processor prepends the BOS token and expands each <|image|>.
MOLMO2_CHAT_TEMPLATE = (
    "{% set ns = namespace(images=0) %}{% for message in messages %}{% if message['content'] is not string %}"
    "{% for c in message['content'] if c['type'] == 'image' %}{% set ns.images = ns.images + 1 %}{% endfor %}"
    "{% endif %}{% endfor %}"
    "{% if ns.images == 1 %}<|image|>{% else %}{% for i in range(ns.images) %}Image {{ i + 1 }}<|image|>{% endfor %}{% endif %}"
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{{ message['content'] | selectattr('type', 'equalto', 'text') | map(attribute='text') | join(' ') }}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
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
    r"""Qwen3-VL for lmms-eval's `qwen3_vl` wrapper (needs torchvision for the video processor): the MoE model
    when the output path matches the wrapper's `A\d+B` rule, else the dense one."""
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
    tokens = dict(image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                  vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    if is_qwen3_vl_moe_path(out):
        text.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=text["hidden_size"], decoder_sparse_step=1)
        model = T.Qwen3VLMoeForConditionalGeneration(T.Qwen3VLMoeConfig(text_config=text, vision_config=vision, **tokens))
    else:
        model = T.Qwen3VLForConditionalGeneration(T.Qwen3VLConfig(text_config=text, vision_config=vision, **tokens))
    return _save(model, processor, tok, out, eos=ids["<|im_end|>"], pad=ids["<|endoftext|>"])


def build_qwen2_5_vl(out: Path, size: str = "small", seed: int = 0) -> Path:
    """Qwen2.5-VL (window-attention ViT + Qwen2 text) for lmms-eval's `qwen2_5_vl` wrapper (needs torchvision)."""
    import torch
    import transformers as T

    torch.manual_seed(seed)
    tok = T.Qwen2TokenizerFast(tokenizer_object=_bpe_tokenizer(QWEN_SPECIALS), bos_token=None, eos_token="<|im_end|>",
                               pad_token="<|endoftext|>", unk_token=None, additional_special_tokens=QWEN_SPECIALS[1:])
    tok.chat_template = QWEN_CHAT_TEMPLATE
    ids = {t: tok.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}
    processor = T.Qwen2_5_VLProcessor(image_processor=T.Qwen2VLImageProcessor(patch_size=14), tokenizer=tok,
                                      video_processor=T.Qwen2VLVideoProcessor(patch_size=14),
                                      chat_template=QWEN_CHAT_TEMPLATE)
    text = _text_config(len(tok), size)
    head_dim = text["hidden_size"] // text["num_attention_heads"]
    half = head_dim // 2  # mrope sections (temporal, height, width) split half the head dimension
    text.update(bos_token_id=0, eos_token_id=ids["<|im_end|>"], pad_token_id=0,
                rope_scaling={"type": "mrope", "mrope_section": [half - 2 * (half // 3), half // 3, half // 3]})
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=text["hidden_size"],
                  patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112, fullatt_block_indexes=[1])
    config = T.Qwen2_5_VLConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                                video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                                vision_end_token_id=ids["<|vision_end|>"])
    model = T.Qwen2_5_VLForConditionalGeneration(config)
    return _save(model, processor, tok, out, eos=ids["<|im_end|>"], pad=ids["<|endoftext|>"])


def is_qwen3_vl_moe_path(path: Path | str) -> bool:
    """lmms-eval's qwen3_vl wrapper loads Qwen3VLMoeForConditionalGeneration exactly when this holds."""
    return bool(re.search(r"A\d+B", str(path)))


def build_internvl(out: Path, size: str = "small", seed: int = 0) -> Path:
    """InternVL 3.5 in the transformers-native `internvl` format (InternViT + Qwen3) for lmms-eval's `internvl_hf`."""
    import torch
    import transformers as T

    torch.manual_seed(seed)
    tok = T.Qwen2TokenizerFast(tokenizer_object=_bpe_tokenizer(INTERNVL_SPECIALS), bos_token=None, eos_token="<|im_end|>",
                               pad_token="<|endoftext|>", unk_token=None,
                               extra_special_tokens={"start_image_token": "<img>", "end_image_token": "</img>",
                                                     "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"})
    tok.chat_template = INTERNVL_CHAT_TEMPLATE
    ids = {t: tok.convert_tokens_to_ids(t) for t in INTERNVL_SPECIALS}
    tile, patch, downsample = 28, 14, 0.5
    image_seq_length = int((tile // patch) ** 2 * downsample**2)  # tokens per tile after the pixel shuffle
    processor = T.InternVLProcessor(
        image_processor=T.GotOcr2ImageProcessor(size={"height": tile, "width": tile}, crop_to_patches=True, max_patches=2),
        tokenizer=tok, video_processor=T.InternVLVideoProcessor(size={"height": tile, "width": tile}),
        image_seq_length=image_seq_length, chat_template=INTERNVL_CHAT_TEMPLATE)
    text = _text_config(len(tok), size)
    text.update(model_type="qwen3", head_dim=text["hidden_size"] // text["num_attention_heads"],
                bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  image_size=[tile, tile], patch_size=[patch, patch])
    config = T.InternVLConfig(vision_config=vision, text_config=text, image_token_id=ids["<IMG_CONTEXT>"],
                              image_seq_length=image_seq_length, downsample_ratio=downsample)
    model = T.InternVLForConditionalGeneration(config)
    return _save(model, processor, tok, out, eos=ids["<|im_end|>"], pad=ids["<|endoftext|>"])


def build_gemma3(out: Path, size: str = "small", seed: int = 0) -> Path:
    """Gemma 3 (SigLIP + Gemma 3 text) for lmms-eval's `gemma3` wrapper."""
    import torch
    import transformers as T

    torch.manual_seed(seed)
    tok = T.PreTrainedTokenizerFast(tokenizer_object=_bpe_tokenizer(GEMMA3_SPECIALS), bos_token="<bos>",
                                    eos_token="<end_of_turn>", unk_token="<unk>", pad_token="<pad>",
                                    extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                                                          "image_token": "<image_soft_token>"})
    tok.chat_template = GEMMA3_CHAT_TEMPLATE
    ids = {t: tok.convert_tokens_to_ids(t) for t in GEMMA3_SPECIALS}
    image_size, patch, tokens_per_image = 28, 14, 4  # the projector average-pools the patch grid to 2x2 tokens
    processor = T.Gemma3Processor(image_processor=T.Gemma3ImageProcessor(size={"height": image_size, "width": image_size}),
                                  tokenizer=tok, chat_template=GEMMA3_CHAT_TEMPLATE, image_seq_length=tokens_per_image)
    text = _text_config(len(tok), size)
    head_dim = text["hidden_size"] // text["num_attention_heads"]
    text.update(head_dim=head_dim, query_pre_attn_scalar=head_dim, sliding_window=64,
                bos_token_id=ids["<bos>"], eos_token_id=ids["<end_of_turn>"], pad_token_id=ids["<pad>"])
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  image_size=image_size, patch_size=patch)
    config = T.Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=tokens_per_image,
                            boi_token_index=ids["<start_of_image>"], eoi_token_index=ids["<end_of_image>"],
                            image_token_index=ids["<image_soft_token>"])
    model = T.Gemma3ForConditionalGeneration(config)
    return _save(model, processor, tok, out, eos=ids["<end_of_turn>"], pad=ids["<pad>"])


def build_molmo2(out: Path, size: str = "small", seed: int = 0) -> Path:
    """Molmo2 (SigLIP-style ViT + pooling adapter + Qwen3-style text) for our `molmo2` wrapper (lmms_eval_models)."""
    import torch
    import transformers as T

    torch.manual_seed(seed)
    tok = T.Qwen2TokenizerFast(tokenizer_object=_bpe_tokenizer(MOLMO2_SPECIALS), bos_token=None, eos_token="<|im_end|>",
                               pad_token="<|endoftext|>", unk_token=None,
                               extra_special_tokens={"image_token": "<|image|>", "video_token": "<|video|>"})
    tok.chat_template = MOLMO2_CHAT_TEMPLATE
    ids = {t: tok.convert_tokens_to_ids(t) for t in MOLMO2_SPECIALS}
    crop, patch = 56, 14  # one crop is a 4x4 patch grid, pooled 2x2 into 2x2 tokens
    image_processor = T.Molmo2ImageProcessor(size={"height": crop, "width": crop}, patch_size=patch, max_crops=2,
                                             overlap_margins=[1, 1], pooling_size=[2, 2])
    video_processor = T.Molmo2VideoProcessor(size={"height": crop, "width": crop}, patch_size=patch, pooling_size=[2, 2])
    processor = T.Molmo2Processor(image_processor=image_processor, video_processor=video_processor, tokenizer=tok,
                                  chat_template=MOLMO2_CHAT_TEMPLATE)
    text = _text_config(len(tok), size)
    text.update(head_dim=text["hidden_size"] // text["num_attention_heads"], additional_vocab_size=0,
                bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                  head_dim=16, image_size=[crop, crop], patch_size=patch)
    adapter = dict(vision_feature_layer=[-1, 0], hidden_size=32, num_attention_heads=2, num_key_value_heads=2, head_dim=16,
                   intermediate_size=64, text_hidden_size=text["hidden_size"])
    config = T.Molmo2Config(vision_config=vision, adapter_config=adapter, text_config=text,
                            image_start_token_id=ids["<im_start>"], low_res_image_start_token_id=ids["<low_res_im_start>"],
                            image_end_token_id=ids["<im_end>"], image_patch_id=ids["<im_patch>"],
                            frame_start_token_id=ids["<frame_start>"], frame_end_token_id=ids["<frame_end>"])
    model = T.Molmo2ForConditionalGeneration(config)
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
    model.eval()  # calibration runs inference; Molmo2 refuses a training-mode forward without mm_token_type_ids
    _favour_answer_tokens(model, tokenizer)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = eos, pad
    model.save_pretrained(out)
    processor.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


# key: the lmms-eval `--model` name of the wrapper that runs the builder's models (table in the module docstring)
BUILDERS = {"qwen3_vl": build_qwen3_vl, "qwen2_5_vl": build_qwen2_5_vl, "internvl_hf": build_internvl, "gemma3": build_gemma3, "molmo2": build_molmo2,
            "llava_hf": build_llava}


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
