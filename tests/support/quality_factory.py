"""What the cait-quality tests need and the hub would otherwise supply, built offline.

- Images: seeded synthetic scenes (smooth fields at three scales plus flat rectangles) and their noisy or
  blurred copies.
- NIQE parameters: the multivariate Gaussian of pyiqa's own NIQE patch features over clean scenes (the
  published model is the same fit over a pristine photo set, which cannot be downloaded here).
- BRISQUE parameters: a scikit-learn RBF SVR (pyiqa's gamma 0.05) on pyiqa's BRISQUE features, trained to
  score clean scenes low and noisy ones high (the published SVR is trained on LIVE opinion scores).
- A tiny random-weight CLIP with a locally trained tokenizer that, like CLIP's, brackets each text with
  start and end markers.
So the tests verify the plumbing and the direction of the scores, not the published models' values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

SIZE = 288  # NIQE works on 96-pixel blocks: three per side


def scene(seed: int, size: int = SIZE) -> Image.Image:
    rng = np.random.default_rng(seed)
    field = np.zeros((size, size, 3))
    for scale in (4, 16, 64):
        coarse = (rng.random((size // scale + 1, size // scale + 1, 3)) * 255).astype(np.uint8)
        field += np.asarray(Image.fromarray(coarse).resize((size, size), Image.BICUBIC)) / 3
    image = Image.fromarray(field.clip(0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x, y = (int(v) for v in rng.integers(0, size - 40, 2))
        draw.rectangle([x, y, x + int(rng.integers(20, 80)), y + int(rng.integers(20, 80))],
                       fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
    return image


def noisy(image: Image.Image, seed: int, sigma: float = 40.0) -> Image.Image:
    pixels = np.asarray(image).astype(float)
    pixels = pixels + np.random.default_rng(seed).normal(0, sigma, pixels.shape)
    return Image.fromarray(pixels.clip(0, 255).astype(np.uint8))


def _tensor(image: Image.Image):
    import torch

    return torch.from_numpy(np.asarray(image.convert("RGB")).astype(np.float32) / 255).permute(2, 0, 1)[None]


def _niqe_features(image: Image.Image):
    """pyiqa's NIQE patch features of one image (the steps of pyiqa.archs.niqe_arch.niqe before the fit)."""
    import torch
    from pyiqa.archs.func_util import diff_round, normalize_img_with_gauss
    from pyiqa.archs.niqe_arch import compute_feature
    from pyiqa.matlab_utils import blockproc, imresize
    from pyiqa.utils.color_util import to_y_channel

    luma = diff_round(to_y_channel(_tensor(image), 255, "yiq")).double()
    features = []
    for scale in (1, 2):
        features.append(blockproc(normalize_img_with_gauss(luma, padding="replicate"), [96 // scale, 96 // scale],
                                  fun=compute_feature))
        if scale == 1:
            luma = imresize(luma / 255.0, scale=0.5, antialiasing=True) * 255.0
    return torch.cat(features, -1)[0]


def fit_niqe_params(clean: list[Image.Image], path: Path) -> Path:
    import scipy.io
    import torch

    features = torch.cat([_niqe_features(image) for image in clean]).numpy()
    scipy.io.savemat(path, {"mu_prisparam": features.mean(0)[None], "cov_prisparam": np.cov(features, rowvar=False)})
    return path


def _brisque_features(image: Image.Image):
    import torch
    from pyiqa.archs.brisque_arch import natural_scene_statistics, scale_features
    from pyiqa.matlab_utils import imresize
    from pyiqa.utils.color_util import to_y_channel

    luma = to_y_channel(_tensor(image), 255.0)
    features = []
    for _ in range(2):
        features.append(natural_scene_statistics(luma))
        luma = imresize(luma, scale=0.5, antialiasing=True)
    return scale_features(torch.cat(features, -1))[0]


def fit_brisque_params(clean: list[Image.Image], path: Path) -> Path:
    """pyiqa's BRISQUE file: (support-vector coefficients, support vectors)."""
    import torch
    from sklearn.svm import SVR

    distorted = [noisy(image, i, sigma) for sigma in (20, 40) for i, image in enumerate(clean)]
    features = torch.stack([_brisque_features(image) for image in clean + distorted]).numpy()
    targets = np.array([10.0] * len(clean) + [50.0] * len(clean) + [80.0] * len(clean))
    svr = SVR(kernel="rbf", gamma=0.05, C=100).fit(features, targets)
    torch.save((torch.tensor(svr.dual_coef_[0]), torch.tensor(svr.support_vectors_)), path)
    return path


def tiny_clip(out: Path, seed: int = 0) -> Path:
    """A random-weight CLIPModel and its processor (byte-level BPE tokenizer trained here)."""
    import torch
    import transformers as T
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    torch.manual_seed(seed)
    tokenizer = Tokenizer(models.BPE(unk_token="<|endoftext|>"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    text = ["a teacher scolds a student", "a dog walks a man on a leash", "a book reads a girl"] * 10
    tokenizer.train_from_iterator(text, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|startoftext|>", "<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    # as CLIP's tokenizer: start and end markers around every text (CLIP pools the end marker's state)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<|startoftext|> $A <|endoftext|>",
        special_tokens=[(t, tokenizer.token_to_id(t)) for t in ("<|startoftext|>", "<|endoftext|>")])
    tok = T.PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|startoftext|>", eos_token="<|endoftext|>",
                                    pad_token="<|endoftext|>", unk_token="<|endoftext|>", model_max_length=77)
    config = T.CLIPConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=77, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=32, patch_size=8),
        projection_dim=16)
    processor = T.CLIPProcessor(image_processor=T.CLIPImageProcessor(size={"shortest_edge": 32},
                                                                     crop_size={"height": 32, "width": 32}),
                                tokenizer=tok)
    T.CLIPModel(config).save_pretrained(out)
    processor.save_pretrained(out)
    return Path(out)
