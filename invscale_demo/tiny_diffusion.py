"""A tiny random-weight Stable Diffusion pipeline, built offline: a real diffusers StableDiffusionPipeline
(UNet2DConditionModel, AutoencoderKL with the usual 8x latent scale, CLIPTextModel, a byte-level CLIP
tokenizer with no merges, DDIM scheduler) small enough to make a 512x512 image on a CPU in seconds.
Its images are noise; it exercises `cait-build`'s local diffusers generator end to end.

  python -m invscale_demo.tiny_diffusion OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

MAX_TOKENS = 77  # CLIP's context length


def _byte_vocabulary() -> dict[str, int]:
    """The byte-level alphabet (CLIP's), each symbol alone and word-final, and the two specials."""
    from tokenizers.pre_tokenizers import ByteLevel

    symbols = sorted(ByteLevel.alphabet())
    tokens = [*symbols, *(f"{symbol}</w>" for symbol in symbols), "<|startoftext|>", "<|endoftext|>"]
    return {token: index for index, token in enumerate(tokens)}


def build_tiny_diffusion(path: Path, seed: int = 0) -> Path:
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    path = Path(path)
    torch.manual_seed(seed)
    vocabulary = _byte_vocabulary()
    tokenizer = CLIPTokenizer(vocab=vocabulary, merges=[], model_max_length=MAX_TOKENS)
    text_encoder = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(vocabulary), hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
        max_position_embeddings=MAX_TOKENS, bos_token_id=vocabulary["<|startoftext|>"],
        eos_token_id=vocabulary["<|endoftext|>"], pad_token_id=vocabulary["<|endoftext|>"]))
    unet = UNet2DConditionModel(  # cross-attention at the lowest resolution only: fast on a CPU
        sample_size=64, in_channels=4, out_channels=4, block_out_channels=(16, 16, 32), layers_per_block=1,
        down_block_types=("DownBlock2D", "DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D", "UpBlock2D"), cross_attention_dim=32, attention_head_dim=8,
        norm_num_groups=8)
    vae = AutoencoderKL(  # four blocks: latents are 1/8 of the image side, as in Stable Diffusion
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 8, 8, 8), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4, norm_num_groups=4)
    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1)
    pipeline = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                                       scheduler=scheduler, safety_checker=None, feature_extractor=None,
                                       requires_safety_checker=False)
    pipeline.save_pretrained(str(path))
    return path


def ensure_tiny_diffusion(path: Path, seed: int = 0) -> Path:
    """The pipeline at `path`, built there first when absent."""
    path = Path(path)
    return path if (path / "model_index.json").exists() else build_tiny_diffusion(path, seed)


if __name__ == "__main__":
    print(build_tiny_diffusion(Path(sys.argv[1])))
